"""gpu-platform lock: the node-group lock the replacement guard reads, written from a plan."""
from __future__ import annotations

import copy
import json

import pytest

from gpu_platform.planner.cli import main
from gpu_platform.planner.errors import PlannerError
from gpu_platform.planner.lock import changes, lock_from_plan
from gpu_platform.planner.verdict import UNKNOWN_MARK, load_pack
from tests.support.stacks import AS_OF, ROOT

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    out = {}
    for stack in ("dev", "prod"):
        path = tmp_path_factory.mktemp("plans") / f"{stack}.json"
        assert main(["plan", "--stack", stack, "--json", str(path), "--as-of", AS_OF]) == 0
        out[stack] = path
    return out


def locked_inputs():
    load_pack()
    from gpu_platform.policy.replacement import LOCKED_INPUTS

    return set(LOCKED_INPUTS)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_committed_lock_matches_the_stack(plans, stack):
    """stacks/Pulumi.<stack>.lock.json is what `gpu-platform lock --stack <stack>` writes today."""
    committed = json.loads((ROOT / "stacks" / f"Pulumi.{stack}.lock.json").read_text())
    assert lock_from_plan(json.loads(plans[stack].read_text())) == committed


def test_lock_from_plan_holds_every_node_group_and_locked_input(plans):
    plan = json.loads(plans["prod"].read_text())
    lock = lock_from_plan(plan)
    assert lock["version"] == 2 and lock["stack"] == "prod"
    assert set(lock["pools"]) == {"system", "h100-mig", "a100-train", "l4-inference"}
    assert {entry["nodeGroup"] for entry in lock["pools"].values()} == set(lock["nodeGroups"])
    assert set(lock["nodeGroups"]) == {r["name"] for r in plan["resources"] if r["type"] == NODE_GROUP}
    assert all(set(inputs) == locked_inputs() for inputs in lock["nodeGroups"].values())


def test_lock_command_writes_the_file_and_reports_changes(plans, tmp_path, capsys):
    out = tmp_path / "lock.json"
    assert main(["lock", "--plan", str(plans["dev"]), "--out", str(out)]) == 0
    first = out.read_text()
    assert json.loads(first)["stack"] == "dev" and first.endswith("\n")
    assert "(no previous lock)" in capsys.readouterr().out
    assert main(["lock", "--plan", str(plans["dev"]), "--out", str(out)]) == 0
    assert "(unchanged)" in capsys.readouterr().out and out.read_text() == first


def test_lock_command_from_a_stack_file(tmp_path):
    out = tmp_path / "lock.json"
    assert main(["lock", "--stack", "dev", "--out", str(out)]) == 0
    assert set(json.loads(out.read_text())["nodeGroups"]) == {"a10g-spot", "cluster-system"}


def test_changes_name_each_replace_forcing_difference(plans):
    old = lock_from_plan(json.loads(plans["dev"].read_text()))
    new = copy.deepcopy(old)
    new["nodeGroups"]["a10g-spot"]["instanceTypes"] = ["g6.xlarge"]
    new["nodeGroups"]["extra"] = new["nodeGroups"].pop("cluster-system")
    lines = changes(old, new)
    assert '~ a10g-spot.instanceTypes: ["g5.xlarge", "g5.2xlarge"] -> ["g6.xlarge"] (replaces the node group)' in lines
    assert "+ extra: newly locked" in lines and any(line.startswith("- cluster-system") for line in lines)


def test_unknown_value_in_the_plan_cannot_be_locked(plans):
    plan = json.loads(plans["dev"].read_text())
    next(r for r in plan["resources"] if r["type"] == NODE_GROUP)["inputs"]["clusterName"] = UNKNOWN_MARK
    with pytest.raises(PlannerError, match="clusterName"):
        lock_from_plan(plan)


def test_not_a_plan_is_an_input_error(tmp_path, capsys):
    bad = tmp_path / "x.json"
    bad.write_text("[]")
    assert main(["lock", "--plan", str(bad), "--out", str(tmp_path / "out.json")]) == 2
    assert "not a plan" in capsys.readouterr().err


def test_lock_from_a_plan_outside_a_project_needs_a_destination(plans, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["lock", "--plan", str(plans["dev"])]) == 2
    assert "pass --out FILE, --policy-config FILE or --project-dir DIR" in capsys.readouterr().err
