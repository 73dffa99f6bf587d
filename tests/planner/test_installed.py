"""`gpu-platform` from a pip install, in a user's own Pulumi project (issue 21): plan, lock, a replacement
and the preview gate behave exactly as they do from the checkout.

The project lives outside the checkout: its own Pulumi.yaml (project `acme-gpu`), its own `components/`
folder with an unrelated module, the repository's `__main__.py`, and the prod stack file under the
project's own keys. gpu-platform comes from this checkout's wheel, installed with its dependencies into a
fresh virtualenv.
"""
from __future__ import annotations

import json
import re
import shutil

import pytest

from gpu_platform.planner.cli import main
from tests.support.installed import ROOT, fresh_venv, run
from tests.support.stacks import AS_OF

pytestmark = pytest.mark.installs

PROJECT = "acme-gpu"
PREVIEW = ROOT / "tests" / "planner" / "fixtures" / "preview" / "prod-replace-node-group.json"
SECTIONS = {"capacity", "cost", "lifecycle", "training", "health", "queueing"}
GUARD = "node-group-replacement-guard"


@pytest.fixture(scope="module")
def bin_dir(wheel, tmp_path_factory):
    return fresh_venv(tmp_path_factory.mktemp("user-venv") / "venv", f"{wheel}[program]")


def own_keys(text: str) -> str:
    """A stack file under the user's project name: `gpu-platform:<key>` -> `acme-gpu:<key>`."""
    return re.sub(r"^(\s*)gpu-platform:", rf"\g<1>{PROJECT}:", text, flags=re.M)


def as_checkout(text: str) -> str:
    """Plan JSON of the user's project as the checkout's project would name it (URNs carry the project)."""
    return text.replace(f"::{PROJECT}::", "::gpu-platform::").replace(f"{PROJECT}-prod", "gpu-platform-prod") \
        .replace(f'"project": "{PROJECT}"', '"project": "gpu-platform"')


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    path = tmp_path_factory.mktemp("acme")
    assert not path.resolve().is_relative_to(ROOT)
    (path / "Pulumi.yaml").write_text(f"name: {PROJECT}\nruntime: python\nstackConfigDir: stacks\n")
    (path / "components").mkdir()
    (path / "components" / "naming.py").write_text('def team_prefix(team: str) -> str:\n    return f"acme-{team}"\n')
    shutil.copy(ROOT / "__main__.py", path / "__main__.py")
    (path / "stacks").mkdir()
    (path / "stacks" / "Pulumi.prod.yaml").write_text(own_keys((ROOT / "stacks" / "Pulumi.prod.yaml").read_text()))
    return path


@pytest.fixture(scope="module")
def runs(bin_dir, project):
    """plan, lock, plan after a replacement-forcing edit and check-preview, in that order, in the project."""
    out = {"plan": run(bin_dir, "gpu-platform", "plan", "--stack", "prod", "--as-of", AS_OF, "--json", "plan.json",
                       cwd=project)}
    out["lock"] = run(bin_dir, "gpu-platform", "lock", "--stack", "prod", cwd=project)
    stack = project / "stacks" / "Pulumi.prod.yaml"
    stack.write_text(stack.read_text().replace("instanceTypes: [p4d.24xlarge]", "instanceTypes: [p4de.24xlarge]"))
    out["replaced"] = run(bin_dir, "gpu-platform", "plan", "--stack", "prod", "--as-of", AS_OF, "--json",
                          "replaced.json", cwd=project)
    out["preview"] = run(bin_dir, "gpu-platform", "check-preview", str(PREVIEW), cwd=project)
    return out


def test_the_command_comes_from_the_virtualenv_not_the_checkout(bin_dir, project):
    done = run(bin_dir, "python", "-c", "import gpu_platform; print(gpu_platform.__file__)", cwd=project)
    assert done.returncode == 0 and "site-packages" in done.stdout and str(ROOT) not in done.stdout


def test_plan_computes_every_section_and_matches_the_checkout_s(runs, project):
    assert runs["plan"].returncode == 0, runs["plan"].stderr
    assert "note:" not in runs["plan"].stderr
    doc = json.loads((project / "plan.json").read_text())
    assert SECTIONS <= set(doc)
    checkout = (ROOT / "tests" / "planner" / "fixtures" / "plans" / "prod.json").read_text()
    assert as_checkout((project / "plan.json").read_text()) == checkout


def test_lock_writes_beside_the_project_s_stack_files_what_the_checkout_commits(runs, project):
    assert runs["lock"].returncode == 0, runs["lock"].stderr
    assert "stacks/Pulumi.prod.lock.json" in runs["lock"].stdout
    written = json.loads((project / "stacks" / "Pulumi.prod.lock.json").read_text())
    assert written == json.loads((ROOT / "stacks" / "Pulumi.prod.lock.json").read_text())


def test_a_replacement_forcing_change_exits_1_naming_the_node_group_as_from_the_checkout(runs, project, tmp_path):
    assert runs["replaced"].returncode == 1, runs["replaced"].stderr
    mine = json.loads(as_checkout((project / "replaced.json").read_text()))["policy"]["violations"]
    assert [v["urn"].rsplit("::", 1)[-1] for v in mine if v["policy"] == GUARD] == ["a100-train"]
    edited = tmp_path / "Pulumi.prod.yaml"
    edited.write_text((ROOT / "stacks" / "Pulumi.prod.yaml").read_text().replace(
        "instanceTypes: [p4d.24xlarge]", "instanceTypes: [p4de.24xlarge]"))
    out = tmp_path / "checkout.json"
    assert main(["plan", "--project-dir", str(ROOT), "--config", str(edited), "--as-of", AS_OF, "--json", str(out)]) == 1
    # A copied stack file's lock advice names that file; the project's names the stack.
    theirs = out.read_text().replace(f"--config {edited}", "--stack prod")
    assert mine == json.loads(theirs)["policy"]["violations"]


def test_check_preview_gates_a_recorded_preview_as_from_the_checkout(runs, capsys):
    assert main(["check-preview", str(PREVIEW)]) == 1
    assert (runs["preview"].returncode, runs["preview"].stdout) == (1, capsys.readouterr().out)
