"""A model server's host memory: the larger of what its engine needs and its GPUs' share of the node, counted in
the replicas a node holds, the pool at maxSize and the team's quota; a replica no node holds is refused."""
import math

import pytest

from gpu_platform.decisions.serving import plans
from gpu_platform.decisions.serving_memory import host_need_gib
from gpu_platform.facts import serving
from tests.support.stacks import only_spec_problem, spec_of, spec_problems, stack_platform


def test_replicas_the_gpus_hold_but_the_nodes_memory_does_not_are_refused():
    platform = stack_platform("dev")
    platform["quotaOvercommitRatio"] = 2
    research = platform["teams"][0]
    research["quota"]["gpus"] = 16
    research["services"][0]["replicas"] = {"min": 0, "max": 16}  # 4 time-sliced replicas a node by GPU, 2 by memory
    problem = only_spec_problem(platform, "teams[0].services[0].replicas.max")
    assert "(8 replicas of this shape, 5.0 GiB of host memory each)" in problem


def test_a_server_gets_host_memory_for_its_engine_not_only_its_gpus_share():
    [dev] = plans(spec_of("dev"))  # a quarter of a g5.xlarge: 3 GiB share, under what vLLM needs
    need = serving.SERVER_HOST_BASE_GIB + serving.SERVER_HOST_PER_GPU_GIB + dev.weights_gib
    assert dev.host_memory_mib == math.ceil(need) * 1024 == 5 * 1024
    assert dev.replicas_per_node == 2  # g5.xlarge leaves 12.4 GiB for GPU pods
    [prod] = plans(spec_of("prod"))  # a 3g.40gb slice's share of a p5 node is more than the server needs
    assert prod.host_memory_mib == 115 * 1024 and prod.replicas_per_node == 8


def test_weights_are_staged_one_checkpoint_file_at_a_time():
    big = spec_of("prod", lambda p: p["teams"][0]["services"][0]["model"].update(parameterCount=None,
                                                                                  weightsGiB=30))
    [p] = plans(big)
    assert host_need_gib(p.service) == pytest.approx(4 + 5e9 / 2**30)


def test_a_services_host_memory_over_the_teams_quota_is_refused():
    platform = stack_platform("dev")
    platform["teams"][0]["quota"]["memory"] = "8Gi"
    problem = only_spec_problem(platform, "teams[0].services[0].replicas.max")
    assert "10.0 GiB of host memory" in problem and "teams[0].quota.memory (8Gi)" in problem


def test_a_replica_over_a_nodes_memory_is_refused(monkeypatch):
    monkeypatch.setattr(serving, "SERVER_HOST_BASE_GIB", 64.0)  # more than a g5.xlarge leaves for GPU pods
    platform = stack_platform("dev")
    platform["teams"][0]["quota"]["memory"] = "1Ti"
    platform["teams"][0]["services"][0]["replicas"] = {"min": 0, "max": 1}
    found = [p for p in spec_problems(platform) if p.startswith("teams[0].services[0].gpu.pool: ")]
    assert len(found) == 1 and "leaves 12.4 GiB for GPU pods" in found[0], spec_problems(platform)
