"""disruption-approved / disruption-advisory: evictions and node rolls are approved through the lock."""
from __future__ import annotations

import copy
import json

import pytest

from gpu_platform.decisions import disruption
from gpu_platform.policy.replacement import new_lock
from tests.policy.harness import (
    HELM_RELEASE,
    LAUNCH_TEMPLATE,
    NODE_GROUP,
    UNKNOWN,
    gpu_node_group,
    launch_template,
    operator_release,
    run_stack,
    stack_resource,
    system_node_group,
    with_provider,
)

STRICT, ADVISORY = "disruption-approved", "disruption-advisory"
OPERATOR_DRIVER = {"enabled": True, "version": "580.173.02", "kernelModuleType": "auto"}


def parts(**edits):
    """The stack's pool resources as plain inputs: one GPU pool, the system pool, the operator."""
    out = {
        "ng": gpu_node_group(), "lt": launch_template(),
        "system": system_node_group(), "system-lt": launch_template("gpu-test-system"),
        "release": operator_release(driver=dict(OPERATOR_DRIVER)),
    }
    out.update(copy.deepcopy(edits))
    return out


def resources(p):
    return [(NODE_GROUP, "a10g", p["ng"]), (LAUNCH_TEMPLATE, "a10g", p["lt"]),
            (NODE_GROUP, "cluster-system", p["system"]), (LAUNCH_TEMPLATE, "cluster-system", p["system-lt"]),
            (HELM_RELEASE, "gpu-operator", p["release"])]


@pytest.fixture
def lock_file(tmp_path):
    """The lock `gpu-platform lock` writes for the unchanged stack."""
    pools = disruption.pools_of(resources(parts()))
    doc = new_lock("prod", {}, {n: disruption.lock_entry(p) for n, p in pools.items()})
    path = tmp_path / "lock.json"
    path.write_text(json.dumps(doc))
    return path


def run(policy, lock, environment="prod", **edits):
    stack = [stack_resource(t, props, name) for t, name, props in resources(parts(**edits))]
    config = {"lockFile": str(lock)} if lock is not None else {}
    return run_stack(policy, with_provider(stack, environment) if environment else stack, config)


def bumped_driver():
    return operator_release(driver={**OPERATOR_DRIVER, "version": "595.91.07"})


def test_a_head_equal_to_the_lock_passes(lock_file):
    assert run(STRICT, lock_file) == [] and run(ADVISORY, lock_file, "dev") == []


def test_an_unapproved_driver_upgrade_is_refused_in_prod(lock_file):
    (found,) = run(STRICT, lock_file, release=bumped_driver())
    message, urn = found
    assert message.startswith("pool a10g: gpu-pod-eviction of 4 node(s) and 4 GPU(s)")
    assert "GPU driver (operator-owned): version 580.173.02 -> 595.91.07" in message
    assert "gpu-platform lock --stack prod" in message and urn.endswith("::a10g")


def test_an_unapproved_node_roll_is_refused_and_names_its_cause(lock_file):
    (found,) = run(STRICT, lock_file, lt=launch_template(size=800))
    assert "node-roll" in found[0] and "blockDeviceMappings[0].ebs.volumeSize 200 -> 800" in found[0]


def test_the_system_pool_is_held_to_the_lock_too(lock_file):
    (found,) = run(STRICT, lock_file, system=system_node_group(releaseVersion="1.33.5-20260105"))
    assert found[0].startswith("pool system: node-roll") and "AMI release" in found[0]


def test_outside_prod_the_same_change_is_advisory(lock_file):
    assert run(STRICT, lock_file, "dev", release=bumped_driver()) == []
    assert len(run(ADVISORY, lock_file, "dev", release=bumped_driver())) == 1
    assert run(ADVISORY, lock_file, "prod", release=bumped_driver()) == []


def test_an_unknown_environment_is_held_to_prod(lock_file):
    assert len(run(STRICT, lock_file, None, release=bumped_driver())) == 1


def test_strict_environments_are_configurable(lock_file):
    stack = [stack_resource(t, props, name) for t, name, props in resources(parts(release=bumped_driver()))]
    config = {"lockFile": str(lock_file), "environments": ["prod", "staging"]}
    assert len(run_stack(STRICT, with_provider(stack, "staging"), config)) == 1


@pytest.mark.parametrize("edits", [
    {"ng": gpu_node_group(max_size=9)},  # in place
    {"release": {**operator_release(driver=dict(OPERATOR_DRIVER)), "values": {
        **operator_release(driver=dict(OPERATOR_DRIVER))["values"], "dcgmExporter": {"enabled": True}}}},  # operands
    {"ng": gpu_node_group(instance_types=("g5.2xlarge",))},  # replace-forcing: the replacement guard's
])
def test_restarts_in_place_changes_and_replacements_need_no_approval_here(lock_file, edits):
    assert run(STRICT, lock_file, **edits) == []


def test_a_value_unknown_during_preview_fails_closed(lock_file):
    (found,) = run(STRICT, lock_file, lt=launch_template(imageId=UNKNOWN))
    assert "node-roll" in found[0] and "cannot be proven unchanged" in found[0]


def test_a_new_pool_needs_no_approval(lock_file):
    stack = [stack_resource(t, props, name) for t, name, props in resources(parts())]
    new = gpu_node_group("l4", instance_types=("g6.xlarge",))
    stack.append(stack_resource(NODE_GROUP, new, "l4"))
    assert run_stack(STRICT, with_provider(stack), {"lockFile": str(lock_file)}) == []


def test_a_lock_without_pool_fingerprints_must_be_regenerated(lock_file):
    doc = json.loads(lock_file.read_text())
    doc.pop("pools")
    doc["version"] = 1
    lock_file.write_text(json.dumps(doc))
    (found,) = run(STRICT, lock_file)
    assert "predates the disruption gate" in found[0] and "gpu-platform lock --stack prod" in found[0]


def test_no_lock_approves_and_refuses_nothing():
    assert run(STRICT, None, release=bumped_driver()) == []


def test_a_named_lock_file_that_is_missing_is_refused_not_taken_for_no_lock(tmp_path):
    found = run(ADVISORY, tmp_path / "none.json", "dev", release=bumped_driver())
    assert found and all("none.json: no such file" in message for message, _ in found)
