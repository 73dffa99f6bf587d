"""check-preview: the gate on a real `pulumi preview --json` digest (fixture shaped like Pulumi's PreviewDigest:
config, steps[op, urn, provider, oldState, newState, diffReasons, replaceReasons, detailedDiff], diagnostics,
duration, changeSummary)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from gpu_platform.planner.cli import main
from gpu_platform.planner.errors import PlannerError
from gpu_platform.planner.preview_gate import check, urn_type
from tests.planner.planner_fixtures import NODE_GROUP, digest_of

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


def test_replacing_the_datasets_file_system_fails_naming_the_input(digest):
    digest = without_replacement(digest)
    fsx = ("urn:pulumi:prod::gpu-platform::gpu-platform:platform:GpuPlatform$gpu-platform:datasets:Datasets"
           "$aws:fsx/lustreFileSystem:LustreFileSystem::datasets")
    digest["steps"].append({"op": "replace", "urn": fsx, "replaceReasons": ["deploymentType"],
                            "detailedDiff": {"deploymentType": {"kind": "updateReplace", "inputDiff": True}}})
    (finding,), _ = check(digest)
    assert (finding.type, finding.name, finding.reasons) == (
        "aws:fsx/lustreFileSystem:LustreFileSystem", "datasets", ("deploymentType (updateReplace)",))


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


# --- disruption: real preview steps classified like `gpu-platform diff`, approved through the lock ---

def _plan(tmp_path_factory, name, edit):
    from tests.support.stacks import AS_OF, stack_platform, write_stack

    folder = tmp_path_factory.mktemp(name)
    platform = stack_platform("prod")
    edit(platform)
    path = folder / "plan.json"
    assert main(["plan", "--config", str(write_stack(folder / "Pulumi.prod.yaml", platform)),
                 "--json", str(path), "--as-of", AS_OF]) in (0, 1)
    return path


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    def bigger_disk(p):
        next(x for x in p["nodePools"] if x["name"] == "a100-train")["diskSizeGiB"] = 800

    return {"base": _plan(tmp_path_factory, "base", lambda p: None), "head": _plan(tmp_path_factory, "head", bigger_disk)}


@pytest.fixture
def node_roll(plans, tmp_path):
    digest = digest_of(json.loads(plans["base"].read_text()), json.loads(plans["head"].read_text()))
    return write(tmp_path, digest)



def test_an_unapproved_node_roll_fails_the_gate_in_prod(node_roll, capsys):
    assert main(["check-preview", node_roll]) == 1  # held to stacks/Pulumi.prod.lock.json
    out = capsys.readouterr().out
    assert ("a100-train: node-roll of 2 node(s), 16 GPU(s): launch template: blockDeviceMappings[0].ebs.volumeSize "
            "500 -> 800 (NOT approved by the lock)") in out
    assert "gpu-platform lock --stack prod" in out


def test_the_same_node_roll_passes_once_the_lock_records_it(node_roll, plans, tmp_path, capsys):
    lock = tmp_path / "Pulumi.prod.lock.json"
    assert main(["lock", "--plan", str(plans["head"]), "--out", str(lock)]) == 0
    assert main(["check-preview", node_roll, "--lock", str(lock)]) == 0
    assert "(approved by the lock)" in capsys.readouterr().out


def test_outside_prod_an_unapproved_node_roll_is_reported_not_refused(node_roll, capsys):
    assert main(["check-preview", node_roll, "--environment", "dev"]) == 0
    assert "advisory here" in capsys.readouterr().out


def test_the_environment_comes_from_the_aws_provider_in_the_preview(node_roll):
    from gpu_platform.planner.preview_gate import environment_of

    assert environment_of(json.loads(Path(node_roll).read_text())) == "prod"


def test_an_in_place_preview_needs_no_approval(plans, tmp_path):
    base = json.loads(plans["base"].read_text())
    head = copy.deepcopy(base)
    group = next(r for r in head["resources"] if r["type"] == NODE_GROUP and r["name"] == "a100-train")
    group["inputs"]["scalingConfig"]["maxSize"] = 3
    assert main(["check-preview", write(tmp_path, digest_of(base, head))]) == 0


def test_a_missing_lock_file_is_an_input_error(node_roll, tmp_path):
    assert main(["check-preview", node_roll, "--lock", str(tmp_path / "none.json")]) == 2


def test_the_policy_config_names_the_environment_and_the_lock(node_roll, plans, tmp_path, capsys):
    """With the config `pulumi preview` ran with, the gate reads what the pack reads (planner/lock_config.py)."""
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"disruption-approved": {"environment": "dev"}}))
    assert main(["check-preview", node_roll, "--policy-config", str(config)]) == 0
    assert "environment dev" in capsys.readouterr().out
    approved = tmp_path / "approved.json"
    assert main(["lock", "--plan", str(plans["head"]), "--policy-config", str(approved)]) == 0
    capsys.readouterr()
    assert main(["check-preview", node_roll, "--policy-config", str(approved)]) == 0
    assert "lock the policy config's `lock`" in capsys.readouterr().out
