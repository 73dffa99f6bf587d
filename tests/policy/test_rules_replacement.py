"""The replacement guard: node-group-replacement-guard and locked-node-groups-present, against lock files."""
from __future__ import annotations

import json

import pytest

from gpu_platform.policy import replacement
from tests.policy.harness import NODE_GROUP, UNKNOWN, gpu_node_group, options, run_resource, run_stack, stack_resource

GUARD, PRESENT = "node-group-replacement-guard", "locked-node-groups-present"


@pytest.fixture
def lock_file(tmp_path):
    """A lock holding the default GPU pool as node group `a10g`; returns its path."""
    path = tmp_path / "Pulumi.prod.lock.json"
    props = gpu_node_group()
    path.write_text(json.dumps(replacement.new_lock("prod", {"a10g": props})))
    return path


def guard(props, lock_file, name="a10g"):
    return run_resource(GUARD, NODE_GROUP, props, name=name, config={"lockFile": str(lock_file)},
                        opts=options(protect=True))


def test_lock_holds_every_declared_replace_forcing_input(lock_file):
    locked = json.loads(lock_file.read_text())["nodeGroups"]["a10g"]
    assert set(locked) == set(replacement.LOCKED_INPUTS)
    assert locked["instanceTypes"] == ["g5.xlarge"] and locked["launchTemplate.name"] == "gpu-test-a10g"


def test_unchanged_locked_group_passes(lock_file):
    assert guard(gpu_node_group(), lock_file) == []


def test_in_place_changes_pass(lock_file):
    props = gpu_node_group(max_size=9, release="1.33.6-20260101", labels={"workload": "x"})
    assert guard(props, lock_file) == []


def test_changed_instance_types_are_refused(lock_file):
    found = guard(gpu_node_group(instance_types=("g5.2xlarge",)), lock_file)
    assert len(found) == 1
    assert "instanceTypes would change from [\"g5.xlarge\"] to [\"g5.2xlarge\"]" in found[0]
    assert "gpu-platform lock" in found[0]


def test_changed_capacity_type_is_refused(lock_file):
    assert guard(gpu_node_group(capacity="SPOT"), lock_file)


def test_renamed_launch_template_is_refused(lock_file):
    props = gpu_node_group()
    props["launchTemplate"]["name"] = "gpu-test-a10g-v2"
    found = guard(props, lock_file)
    assert len(found) == 1 and "launchTemplate.name" in found[0]


def test_unknown_locked_input_fails_closed(lock_file):
    found = guard(gpu_node_group(clusterName=UNKNOWN), lock_file)
    assert len(found) == 1 and "clusterName is computed" in found[0] and "fails closed" in found[0]


def test_unknown_reference_input_fails_closed(lock_file):
    found = guard(gpu_node_group(subnetIds=UNKNOWN), lock_file)
    assert len(found) == 1 and "subnetIds is computed" in found[0]


def test_unlocked_group_is_not_guarded(lock_file):
    assert guard(gpu_node_group("new", instance_types=("p5.48xlarge",), clusterName=UNKNOWN), lock_file, name="new") == []


def test_a_named_lock_file_that_is_missing_is_a_violation_not_no_lock(tmp_path):
    """A `lockFile` naming no file would otherwise turn the guard off without a word."""
    found = guard(gpu_node_group(instance_types=("g5.2xlarge",)), tmp_path / "none.json")
    assert len(found) == 1 and "none.json: no such file" in found[0] and "gpu-platform lock" in found[0]


def test_unreadable_lock_is_a_violation(tmp_path):
    bad = tmp_path / "lock.json"
    bad.write_text("{not json")
    found = guard(gpu_node_group(), bad)
    assert len(found) == 1 and "gpu-platform lock" in found[0]


def test_locked_group_still_declared_passes(lock_file):
    res = [stack_resource(NODE_GROUP, gpu_node_group(), "a10g")]
    assert run_stack(PRESENT, res, config={"lockFile": str(lock_file)}) == []


def test_locked_group_gone_is_refused(lock_file):
    res = [stack_resource(NODE_GROUP, gpu_node_group("renamed"), "renamed")]
    found = run_stack(PRESENT, res, config={"lockFile": str(lock_file)})
    assert len(found) == 1 and "'a10g' is no longer declared" in found[0][0] and "aliases" in found[0][0]


def test_required_lock_missing_is_refused():
    res = [stack_resource(NODE_GROUP, gpu_node_group(), "a10g")]
    found = run_stack(PRESENT, res, config={"requireLock": True})
    assert len(found) == 1 and "gpu-platform lock --stack prod" in found[0][0]


def test_optional_lock_missing_passes():
    res = [stack_resource(NODE_GROUP, gpu_node_group(), "a10g")]
    assert run_stack(PRESENT, res, config={}) == []


@pytest.mark.parametrize("name", ["none.json", "."])
def test_a_named_lock_file_missing_or_a_directory_is_refused_even_when_optional(tmp_path, name):
    res = [stack_resource(NODE_GROUP, gpu_node_group(), "a10g")]
    found = run_stack(PRESENT, res, config={"lockFile": str(tmp_path / name)})
    assert len(found) == 1 and "the policy config's `lockFile`" in found[0][0]
