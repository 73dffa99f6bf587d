"""Components alone take the stack file's CUDA minimums: a pool's `min_cuda` is checked against its driver, a
team's `min_cuda` is recorded on its namespace with the pools held to it."""
from __future__ import annotations

import pytest

from gpu_platform.decisions.cuda import shortfall_problems
from gpu_platform.decisions.cuda_drivers import PoolCuda
from gpu_platform.facts import names
from gpu_platform.render.team_objects import namespace
from gpu_platform.resources.node_pool import GpuNodePoolArgs
from gpu_platform.resources.pool_args import pool_from_args
from gpu_platform.resources.team import team_settings
from gpu_platform.spec.errors import SpecError

R570, R580 = "1.33.5-20250901", "1.33.5-20251120"


def pool_args(release: str, **changes) -> dict:
    args = {"cluster_name": "gpu-dev", "instance_types": ["g5.xlarge"], "capacity_type": "spot", "max_size": 2,
            "kubernetes_version": "1.33", "ami": {"type": "AL2023_x86_64_NVIDIA", "release_version": release}}
    args.update(changes)
    return args


def test_a_pool_whose_ami_branch_runs_its_minimum_is_built():
    pool, _ = pool_from_args(GpuNodePoolArgs, "p", pool_args(R580, min_cuda="13.0"), "managed-node-group")
    assert pool.min_cuda == "13.0"


def test_a_pool_whose_ami_branch_cannot_run_its_minimum_is_refused_naming_the_argument():
    with pytest.raises(SpecError) as err:
        pool_from_args(GpuNodePoolArgs, "p", pool_args(R570, min_cuda="13.0"), "managed-node-group")
    (problem,) = err.value.problems
    assert problem.startswith("GpuNodePool 'p': min_cuda: pool p needs CUDA 13.0, but pool p runs driver branch R570")


def test_a_driver_the_ami_only_may_pick_is_named_as_such():
    (path, message), = shortfall_problems("teams[0].minCuda", "team a", "13.0",
                                          [PoolCuda("mixed", (("580", True), ("570", False)))], None)
    assert path == "teams[0].minCuda"
    assert "pool mixed may run (the AMI picks per instance) driver branch R570" in message


def team_args(**changes) -> dict:
    args = {"team": "research", "kubernetes_version": "1.35",
            "quota": {"gpus": 4, "cpu": "32", "memory": "256Gi"}}
    args.update(changes)
    return args


def _team_and_context(name: str, args: dict) -> tuple:
    settings = team_settings(name, args)
    return settings.team, settings.context


def test_a_team_records_its_minimum_and_pools_on_its_namespace():
    team, ctx = _team_and_context("research", team_args(min_cuda="12.8", cuda_pools=["a100-train"]))
    notes = namespace(ctx, team)["metadata"]["annotations"]
    assert notes == {names.MIN_CUDA_ANNOTATION: "12.8", names.MIN_CUDA_POOLS_ANNOTATION: "a100-train"}
    team, ctx = _team_and_context("research", team_args(min_cuda="12.8"))
    assert namespace(ctx, team)["metadata"]["annotations"] == {names.MIN_CUDA_ANNOTATION: "12.8"}
    team, ctx = _team_and_context("research", team_args())
    assert "annotations" not in namespace(ctx, team)["metadata"]


def test_a_team_minimum_that_is_not_a_version_is_refused_naming_the_argument():
    with pytest.raises(SpecError) as err:
        team_settings("research", team_args(min_cuda="12"))
    assert any("min_cuda" in p and "write major.minor" in p for p in err.value.problems), err.value.problems
