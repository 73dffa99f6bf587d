"""check-preview: the gate on a real `pulumi preview --json` digest (fixture shaped like Pulumi's PreviewDigest:
config, steps[op, urn, provider, oldState, newState, diffReasons, replaceReasons, detailedDiff], diagnostics,
duration, changeSummary)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from planner.cli import main
from planner.errors import PlannerError
from planner.preview_gate import check, urn_type

FIXTURE = Path(__file__).parent / "fixtures" / "preview" / "prod-replace-node-group.json"
NG_URN = ("urn:pulumi:prod::gpu-platform::gpu-platform:platform:GpuPlatform$gpu-platform:node_pool:GpuNodePool"
          "$aws:eks/nodeGroup:NodeGroup::a100-train")


@pytest.fixture
def digest():
    return json.loads(FIXTURE.read_text())


def without_replacement(digest):
    digest["steps"] = [s for s in digest["steps"] if s["urn"] != NG_URN]
    return digest


def write(tmp_path, digest):
    path = tmp_path / "preview.json"
    path.write_text(json.dumps(digest))
    return str(path)


def test_urn_type_is_the_last_type_of_the_chain():
    assert urn_type(NG_URN) == "aws:eks/nodeGroup:NodeGroup"


def test_replacement_is_one_finding_with_its_replace_reasons(digest):
    findings, errors = check(digest)
    assert errors == [] and len(findings) == 1
    assert findings[0].op == "replace" and findings[0].name == "a100-train"
    assert findings[0].reasons == ("instanceTypes[0] (updateReplace)",)


def test_cli_fails_and_prints_the_reason(digest, tmp_path, capsys):
    assert main(["check-preview", write(tmp_path, digest)]) == 1
    out = capsys.readouterr().out
    assert "replace aws:eks/nodeGroup:NodeGroup a100-train: instanceTypes[0] (updateReplace)" in out


def test_updates_and_same_steps_pass(digest, tmp_path, capsys):
    assert main(["check-preview", write(tmp_path, without_replacement(digest))]) == 0
    assert "Preview gate: passed (3 steps" in capsys.readouterr().out


def test_replace_reasons_stand_in_when_there_is_no_detailed_diff(digest):
    for step in digest["steps"]:
        step["detailedDiff"] = None
    assert check(digest)[0][0].reasons == ("instanceTypes",)


def test_delete_of_a_guarded_resource_fails(digest):
    digest = without_replacement(digest)
    efs = "urn:pulumi:prod::gpu-platform::gpu-platform:model_cache:ModelCache$aws:efs/fileSystem:FileSystem::model-cache"
    digest["steps"].append({"op": "delete", "urn": efs, "oldState": {"urn": efs, "type": "aws:efs/fileSystem:FileSystem"}})
    findings, _ = check(digest)
    assert [(f.op, f.type) for f in findings] == [("delete", "aws:efs/fileSystem:FileSystem")]


def test_replacing_an_unguarded_resource_passes(digest):
    for step in digest["steps"]:
        step["urn"] = step["urn"].replace("aws:eks/nodeGroup:NodeGroup", "aws:autoscaling/tag:Tag")
    assert check(digest)[0] == []


def test_extra_guarded_types_from_the_command_line(digest, tmp_path):
    for step in digest["steps"]:
        step["urn"] = step["urn"].replace("aws:eks/nodeGroup:NodeGroup", "aws:ec2/launchTemplate:LaunchTemplate")
    path = write(tmp_path, digest)
    assert main(["check-preview", path]) == 0
    assert main(["check-preview", path, "--guard-type", "aws:ec2/launchTemplate:LaunchTemplate"]) == 1


def test_dropping_protect_from_a_guarded_resource_fails(digest):
    digest = without_replacement(digest)
    cluster = copy.deepcopy(digest["steps"][1])
    cluster["op"] = "update"
    cluster["newState"]["protect"] = False
    digest["steps"][1] = cluster
    findings, _ = check(digest)
    assert [f.op for f in findings] == ["unprotect"] and "protect removed" in findings[0].reasons[0]


def test_preview_errors_fail_closed(digest, tmp_path, capsys):
    digest = without_replacement(digest)
    digest["diagnostics"].append({"message": "aws:eks:NodeGroup failed: AccessDenied", "severity": "error"})
    assert main(["check-preview", write(tmp_path, digest)]) == 1
    assert "cannot prove" in capsys.readouterr().out


def test_not_json_is_an_input_error(tmp_path, capsys):
    path = tmp_path / "preview.json"
    path.write_text("Previewing update (prod)\n")
    assert main(["check-preview", str(path)]) == 2
    assert "pulumi preview --json" in capsys.readouterr().err


def test_not_a_digest_is_an_input_error():
    with pytest.raises(PlannerError):
        check({"steps": "none"})
