"""Where the lock-reading rules find the lock: only in their policy config (inline `lock` or `lockFile`),
never beside the library's own code (issue 21: a user's stack `prod` was held to the example prod lock)."""
from __future__ import annotations

import json

import pytest

from gpu_platform.policy import replacement
from gpu_platform.policy.locks import LockError, lock_file_path, resolve
from tests.policy.harness import NODE_GROUP, ROOT, gpu_node_group, options, run_resource, run_stack, stack_resource

GUARD, PRESENT = "node-group-replacement-guard", "locked-node-groups-present"


def prod_lock(stack: str = "prod") -> dict:
    return replacement.new_lock(stack, {"a10g": gpu_node_group()})


def guard(config: dict, *, stack: str = "prod", **props) -> list[str]:
    return run_resource(GUARD, NODE_GROUP, gpu_node_group(**props), name="a10g", config=config,
                        opts=options(protect=True), stack=stack)


def test_without_a_configured_lock_nothing_is_read_from_the_library_s_checkout():
    """The checkout holds stacks/Pulumi.prod.lock.json; a user's prod stack must not be held to it."""
    committed = json.loads((ROOT / "stacks" / "Pulumi.prod.lock.json").read_text())
    name, locked = next(iter(committed["nodeGroups"].items()))
    changed = gpu_node_group(instance_types=("g6.xlarge",), capacity="SPOT")
    assert locked["instanceTypes"] != changed["instanceTypes"]
    assert run_resource(GUARD, NODE_GROUP, changed, name=name, config={}, opts=options(protect=True)) == []


def test_an_inline_lock_blocks_a_replacement():
    found = guard({"lock": prod_lock()}, capacity="SPOT")
    assert len(found) == 1 and "capacityType would change" in found[0]


def test_an_inline_lock_passed_as_protobuf_numbers_reads_like_the_file():
    """The CLI sends config through a protobuf Struct: every number arrives as a float."""
    doc = json.loads(json.dumps(prod_lock()), parse_int=float)
    assert guard({"lock": doc}) == []


def test_a_relative_lock_file_is_read_from_the_pack_s_folder(tmp_path, monkeypatch):
    """The Pulumi CLI starts a Python pack in its own folder, so that is where a relative lockFile starts."""
    (tmp_path / "locks").mkdir()
    (tmp_path / "locks" / "Pulumi.prod.lock.json").write_text(json.dumps(prod_lock()))
    monkeypatch.chdir(tmp_path)
    found = guard({"lockFile": "locks/Pulumi.{stack}.lock.json"}, capacity="SPOT")
    assert len(found) == 1 and "capacityType" in found[0]


def test_lock_file_takes_the_stack_name_and_keeps_absolute_paths(tmp_path):
    pack = tmp_path / "policies"
    assert lock_file_path("../stacks/Pulumi.{stack}.lock.json", "dev", pack) == pack / ".." / "stacks" / "Pulumi.dev.lock.json"
    assert lock_file_path(str(tmp_path / "prod.json"), "dev", pack) == tmp_path / "prod.json"


def test_another_stack_s_lock_is_refused_not_compared():
    found = guard({"lock": prod_lock()}, stack="dev")
    assert len(found) == 1 and "lock of stack 'prod', not of stack 'dev'" in found[0]


def test_lock_and_lock_file_together_are_refused(tmp_path):
    with pytest.raises(LockError, match="both"):
        resolve({"lock": prod_lock(), "lockFile": str(tmp_path / "x.json")}, "prod")


def test_an_inline_lock_that_is_not_a_lock_is_refused():
    found = guard({"lock": {"nodeGroups": []}})
    assert len(found) == 1 and "is not a node-group lock" in found[0]


def test_required_lock_names_the_config_when_none_is_set():
    res = [stack_resource(NODE_GROUP, gpu_node_group(), "a10g")]
    ((message, _),) = run_stack(PRESENT, res, config={"requireLock": True})
    assert "neither `lock` nor `lockFile`" in message and "--policy-config" in message


def test_an_inline_lock_notices_a_dropped_group():
    res = [stack_resource(NODE_GROUP, gpu_node_group("renamed"), "renamed")]
    ((message, _),) = run_stack(PRESENT, res, config={"lock": prod_lock()})
    assert "'a10g' is no longer declared" in message


@pytest.mark.parametrize("section, entry, words", [
    ("nodeGroups", 5, "`nodeGroups.a10g` must be an object (the node group's locked inputs), not int"),
    ("nodeGroups", "a10g", "`nodeGroups.a10g` must be an object (the node group's locked inputs), not str"),
    ("pools", {"nodeGroup": 5}, "`pools.a10g` must hold a `nodeGroup` name and a `fingerprint` object"),
    ("nodePools", ["x"], "`nodePools.a10g` must be an object (the NodePool's locked inputs), not list"),
])
def test_a_lock_entry_of_the_wrong_shape_fails_closed_instead_of_crashing_the_pack(section, entry, words):
    lock = prod_lock()
    lock.setdefault(section, {})["a10g"] = entry
    found = guard({"lock": lock})
    assert found == [f"the policy config's `lock`: {words}; regenerate it with `gpu-platform lock`"]
    ((message, _),) = run_stack(PRESENT, [stack_resource(NODE_GROUP, gpu_node_group(), "a10g")], config={"lock": lock})
    assert words in message


def test_a_lock_file_that_is_not_a_path_is_refused():
    with pytest.raises(LockError, match="`lockFile` must be a path \\(a string\\), not list"):
        resolve({"lockFile": ["Pulumi.prod.lock.json"]}, "prod")


def test_a_lock_file_is_read_within_the_input_limits(tmp_path):
    path = tmp_path / "lock.json"
    path.write_bytes(b'{"version": 2, "nodeGroups": {}, "x": ' + b"9" * 5000 + b"}")
    with pytest.raises(LockError, match="does not fit 64 bits; regenerate it"):
        resolve({"lockFile": str(path)}, "prod")
