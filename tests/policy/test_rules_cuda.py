"""cuda-minimum-met: a pool's driver never drops below the CUDA minimum of a team the lock holds it to, even
when the lock approves the driver change."""
from __future__ import annotations

import json

import pytest

from gpu_platform.decisions import disruption
from gpu_platform.policy.locks import LockError, checked
from gpu_platform.policy.replacement import new_lock
from tests.policy.harness import (
    HELM_RELEASE, LAUNCH_TEMPLATE, NODE_GROUP, gpu_node_group, launch_template, operator_release, run_stack,
    stack_resource,
)

RULE = "cuda-minimum-met"
R570, R580 = "1.33.5-20250901", "1.33.5-20251120"  # AMI releases of the R570 and R580 eras


def resources(release: str = R580, operator: dict | None = None, custom: bool = False):
    ng = gpu_node_group(ami_type=None if custom else "AL2023_x86_64_NVIDIA", release=None if custom else release)
    return [(NODE_GROUP, "a10g", ng), (LAUNCH_TEMPLATE, "a10g", launch_template()),
            (HELM_RELEASE, "gpu-operator", operator_release(driver=operator or {"enabled": False}))]


def lock_for(found, teams: dict, tmp_path):
    """The lock `gpu-platform lock` writes for `found`: it approves exactly these pools, with the teams' minimums."""
    pools = disruption.pools_of(found)
    doc = new_lock("prod", {}, {n: disruption.lock_entry(p) for n, p in pools.items()})
    doc["teams"] = teams
    path = tmp_path / "lock.json"
    path.write_text(json.dumps(doc))
    return path


def run(found, lock):
    return run_stack(RULE, [stack_resource(t, props, name) for t, name, props in found], {"lockFile": str(lock)})


def test_a_lock_approving_a_driver_branch_below_a_teams_minimum_is_refused(tmp_path):
    head = resources(R570)  # the AMI release moved back to the R570 era, and the lock approves it
    (message, urn), = run(head, lock_for(head, {"research": {"minCuda": "13.0"}}, tmp_path))
    assert "team research needs CUDA 13.0" in message and "pool a10g runs driver branch R570" in message
    assert "12.8 (12.x with minor-version compatibility)" in message and urn.endswith("::a10g")


def test_a_branch_that_runs_the_minimum_passes(tmp_path):
    head = resources(R580)
    assert run(head, lock_for(head, {"research": {"minCuda": "13.0"}}, tmp_path)) == []
    assert run(head, lock_for(head, {"research": {"minCuda": "13.1"}}, tmp_path)) == []  # minor-version compatibility


def test_a_team_not_held_to_the_pool_does_not_count(tmp_path):
    head = resources(R570)
    assert run(head, lock_for(head, {"research": {"minCuda": "13.0", "pools": ["h100"]}}, tmp_path)) == []
    assert run(head, lock_for(head, {"research": {"minCuda": "13.0", "pools": ["a10g"]}}, tmp_path)) != []


def test_an_operator_driver_below_the_minimum_is_refused(tmp_path):
    head = resources(operator={"enabled": True, "version": "535.309.01"}, custom=True)
    assert run(head, lock_for(head, {"batch": {"minCuda": "12.9"}}, tmp_path)) == []  # minor-version compatibility
    (message, _), = run(head, lock_for(head, {"batch": {"minCuda": "13.0"}}, tmp_path))
    assert "team batch needs CUDA 13.0" in message and "pool a10g runs driver 535.309.01" in message


def test_without_teams_in_the_lock_nothing_is_checked(tmp_path):
    head = resources(R570)
    assert run(head, lock_for(head, {}, tmp_path)) == []


@pytest.mark.parametrize("entry", [{"pools": ["a"]}, {"minCuda": 13}, {"minCuda": "13.0", "pools": "a"}, "13.0"])
def test_a_malformed_teams_entry_is_refused_as_a_lock(entry):
    with pytest.raises(LockError, match="teams.research"):
        checked({"version": 2, "stack": "prod", "nodeGroups": {}, "teams": {"research": entry}}, "the lock")
