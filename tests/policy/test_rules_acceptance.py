"""gpu-pool-acceptance-gated: a GPU node group or NodePool in prod gates new nodes with the startup taint."""
from __future__ import annotations

import copy

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import names
from gpu_platform.facts.karpenter import NODE_POOL
from gpu_platform.render.karpenter import node_pool_object
from gpu_platform.spec.pool_context import PoolContext
from tests.policy.harness import NODE_GROUP, gpu_node_group, run_resource, system_node_group
from tests.support.stacks import stack_platform

RULE = "gpu-pool-acceptance-gated"
GPU = {"effect": "NO_SCHEDULE", "key": names.GPU_TAINT_KEY, "value": names.GPU_TAINT_VALUE}
STARTUP = {"effect": "NO_SCHEDULE", "key": names.ACCEPTANCE_TAINT_KEY, "value": names.ACCEPTANCE_TAINT_VALUE}


def test_gated_node_group_passes():
    assert run_resource(RULE, NODE_GROUP, gpu_node_group(taints=[GPU, STARTUP])) == []


def test_prod_node_group_without_the_gate_is_refused():
    (message,) = run_resource(RULE, NODE_GROUP, gpu_node_group(taints=[GPU]), name="a10g")
    assert "no acceptance gate in prod" in message and names.ACCEPTANCE_TAINT_KEY in message


def test_a_startup_taint_with_another_effect_does_not_gate():
    assert run_resource(RULE, NODE_GROUP, gpu_node_group(taints=[GPU, {**STARTUP, "effect": "PREFER_NO_SCHEDULE"}]))


def test_dev_and_system_nodes_need_no_gate():
    assert run_resource(RULE, NODE_GROUP, gpu_node_group(taints=[GPU]), environment="dev") == []
    assert run_resource(RULE, NODE_GROUP, system_node_group()) == []


def test_environments_come_from_config():
    assert run_resource(RULE, NODE_GROUP, gpu_node_group(taints=[GPU]), environment="staging",
                        config={"environments": ["staging", "prod"]})


def _node_pool(enabled: bool) -> dict:
    platform = stack_platform("karpenter")
    if not enabled:
        for pool in platform["nodePools"]:
            pool["acceptance"] = {"enabled": False}
    spec = parse_platform(platform)
    pool = spec.node_pools[0]
    return copy.deepcopy(node_pool_object(PoolContext.of(spec, pool), pool))


def test_rendered_karpenter_pool_passes_and_ungated_one_is_refused():
    assert run_resource(RULE, NODE_POOL, _node_pool(True)) == []
    (message,) = run_resource(RULE, NODE_POOL, _node_pool(False))
    assert "startupTaints" in message


def test_a_startup_taint_among_ordinary_taints_does_not_gate_a_node_pool():
    props = _node_pool(False)
    props["spec"]["template"]["spec"]["taints"].append({"key": names.ACCEPTANCE_TAINT_KEY, "effect": "NoSchedule"})
    assert run_resource(RULE, NODE_POOL, props)
