"""The lock the planner holds a plan to comes from the user's project and policy config, resolved exactly as
the pack resolves it under the Pulumi CLI (issue 21: locks were read beside the library's own install)."""
from __future__ import annotations

import json
import shutil

import pytest
import yaml

from gpu_platform.planner.cli import main
from tests.support.stacks import AS_OF, ROOT, stack_platform, write_stack

LOCK_POLICIES = ("node-group-replacement-guard", "locked-node-groups-present", "disruption-approved",
                 "disruption-advisory")
GUARD = "node-group-replacement-guard"


@pytest.fixture
def project(tmp_path):
    """A user's project `acme-gpu` (stack files in `config/`) with the repository's program and the prod
    stack; no lock yet."""
    (tmp_path / "Pulumi.yaml").write_text("name: acme-gpu\nruntime: python\nstackConfigDir: config\n")
    shutil.copy(ROOT / "__main__.py", tmp_path / "__main__.py")
    (tmp_path / "config").mkdir()
    stack = write_stack(tmp_path / "config" / "Pulumi.prod.yaml", stack_platform("prod"))
    data = yaml.safe_load(stack.read_text())
    data["config"] = {k.replace("gpu-platform:", "acme-gpu:"): v for k, v in data["config"].items()}
    stack.write_text(yaml.safe_dump(data))
    return tmp_path


def replaced(project):
    """The prod stack with a locked pool's instance type changed (a replacement)."""
    path = project / "config" / "Pulumi.prod.yaml"
    data = yaml.safe_load(path.read_text())
    data["config"]["acme-gpu:platform"]["nodePools"][1]["instanceTypes"] = ["p4de.24xlarge"]
    path.write_text(yaml.safe_dump(data))


def plan(project, *args) -> tuple[int, dict]:
    out = project / "plan.json"
    code = main(["plan", "--stack", "prod", "--json", str(out), "--as-of", AS_OF, *args])
    return code, json.loads(out.read_text())


def guard_hits(doc) -> list[dict]:
    return [v for v in doc["policy"]["violations"] if v["policy"] == GUARD]


def test_the_lock_goes_beside_the_project_s_stack_files_and_holds_the_next_plan(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    assert main(["lock", "--stack", "prod"]) == 0
    lock = project / "config" / "Pulumi.prod.lock.json"
    assert json.loads(lock.read_text()) == json.loads((ROOT / "stacks" / "Pulumi.prod.lock.json").read_text())
    replaced(project)
    code, doc = plan(project)
    assert code == 1 and [v["urn"].rsplit("::", 1)[-1] for v in guard_hits(doc)] == ["a100-train"]


def test_without_a_lock_the_user_s_prod_stack_is_not_held_to_the_example_one(project, monkeypatch):
    monkeypatch.chdir(project)
    replaced(project)
    code, doc = plan(project)
    assert code == 0 and guard_hits(doc) == []


def test_lock_writes_inline_into_the_policy_config_and_plan_reads_it(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    config = project / "policy.json"
    config.write_text(json.dumps({"all": "mandatory", GUARD: "advisory",
                                  "disruption-approved": {"lockFile": "old.json", "environments": ["prod"]}}))
    assert main(["lock", "--stack", "prod", "--policy-config", str(config)]) == 0
    assert "policy.json (inline)" in capsys.readouterr().out
    assert not (project / "config" / "Pulumi.prod.lock.json").exists()  # the config holds it instead
    data = json.loads(config.read_text())
    assert data["all"] == "mandatory" and data[GUARD]["enforcementLevel"] == "advisory"
    assert data["disruption-approved"] == {"environments": ["prod"], "lock": data[GUARD]["lock"]}
    assert all(data[name]["lock"]["stack"] == "prod" for name in LOCK_POLICIES)
    replaced(project)
    code, doc = plan(project, "--policy-config", str(config))
    assert [v["level"] for v in guard_hits(doc)] == ["advisory"]


def test_a_relative_lock_file_starts_at_the_policy_pack_s_folder(project, monkeypatch):
    monkeypatch.chdir(project)
    (project / "policies" / "locks").mkdir(parents=True)
    assert main(["lock", "--stack", "prod", "--out", str(project / "policies" / "locks" / "prod.json")]) == 0
    config = project / "policy.json"
    config.write_text(json.dumps({GUARD: {"lockFile": "locks/{stack}.json"}}))
    replaced(project)
    code, doc = plan(project, "--policy-config", str(config))
    assert code == 1 and len(guard_hits(doc)) == 1
    (project / "policies").rename(project / "pack")
    code, doc = plan(project, "--policy-config", str(config), "--policy-pack", str(project / "pack"))
    assert code == 1 and len(guard_hits(doc)) == 1


def test_a_config_naming_no_lock_warns_that_the_cli_would_hold_the_stack_to_none(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    assert main(["lock", "--stack", "prod"]) == 0
    config = project / "policy.json"
    config.write_text(json.dumps({"all": "mandatory"}))
    capsys.readouterr()
    plan(project, "--policy-config", str(config))
    assert "names no lock (`lock` or `lockFile`), so `pulumi preview` with it holds the stack to none" in \
        capsys.readouterr().err


def test_check_preview_reads_the_lock_the_policy_config_names(project, monkeypatch, capsys):
    monkeypatch.chdir(project)
    preview = ROOT / "tests" / "planner" / "fixtures" / "preview" / "prod-replace-node-group.json"
    config = project / "policy.json"
    config.write_text(json.dumps({"disruption-approved": {"lock": {"nodeGroups": []}}}))
    assert main(["check-preview", str(preview), "--policy-config", str(config)]) == 2
    assert "the policy config's `lock` is not a node-group lock" in capsys.readouterr().err
