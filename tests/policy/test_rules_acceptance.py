"""gpu-pool-acceptance-gated: in prod (the stack's environment, from its AWS provider), every GPU node group and
GPU NodePool gates new nodes with the startup taint."""
from __future__ import annotations

import copy

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import names
from gpu_platform.facts.karpenter import NODE_POOL
from gpu_platform.render.karpenter import node_pool_object
from gpu_platform.spec.pool_context import PoolContext
from tests.policy.harness import NODE_GROUP, gpu_node_group, run_stack, stack_resource, system_node_group, with_provider
from tests.support.stacks import stack_platform

RULE = "gpu-pool-acceptance-gated"
GPU = {"effect": "NO_SCHEDULE", "key": names.GPU_TAINT_KEY, "value": names.GPU_TAINT_VALUE}
STARTUP = {"effect": "NO_SCHEDULE", "key": names.ACCEPTANCE_TAINT_KEY, "value": names.ACCEPTANCE_TAINT_VALUE}


def found(*resources, environment="prod", config=None) -> list[str]:
    stack = [stack_resource(t, props, name) for t, props, name in resources]
    return [m for m, _ in run_stack(RULE, with_provider(stack, environment) if environment else stack, config)]


def test_gated_node_group_passes():
    assert found((NODE_GROUP, gpu_node_group(taints=[GPU, STARTUP]), "a10g")) == []


def test_prod_node_group_without_the_gate_is_refused():
    (message,) = found((NODE_GROUP, gpu_node_group(taints=[GPU]), "a10g"))
    assert "no acceptance gate in prod" in message and names.ACCEPTANCE_TAINT_KEY in message


def test_a_startup_taint_with_another_effect_does_not_gate():
    assert found((NODE_GROUP, gpu_node_group(taints=[GPU, {**STARTUP, "effect": "PREFER_NO_SCHEDULE"}]), "a10g"))


def test_dev_and_system_nodes_need_no_gate():
    assert found((NODE_GROUP, gpu_node_group(taints=[GPU]), "a10g"), environment="dev") == []
    assert found((NODE_GROUP, system_node_group(), "system")) == []


def test_environments_come_from_config_and_an_unknown_one_is_prod():
    assert found((NODE_GROUP, gpu_node_group(taints=[GPU]), "a10g"), environment="staging",
                 config={"environments": ["staging", "prod"]})
    assert found((NODE_GROUP, gpu_node_group(taints=[GPU]), "a10g"), environment=None)


def _node_pool(enabled: bool, environment: str = "prod") -> dict:
    platform = stack_platform("karpenter")
    platform["environment"] = environment
    for pool in platform["nodePools"]:
        pool["acceptance"] = {"enabled": enabled}
    spec = parse_platform(platform)
    pool = spec.node_pools[0]
    return copy.deepcopy(node_pool_object(PoolContext.of(spec, pool), pool))


def test_rendered_karpenter_pool_passes_and_ungated_one_is_refused():
    assert found((NODE_POOL, _node_pool(True), "l4")) == []
    (message,) = found((NODE_POOL, _node_pool(False), "l4"))
    assert "startupTaints" in message


def test_a_dev_stacks_node_pool_needs_no_gate():
    assert found((NODE_POOL, _node_pool(False), "l4"), environment="dev") == []


def test_a_startup_taint_among_ordinary_taints_does_not_gate_a_node_pool():
    props = _node_pool(False)
    props["spec"]["template"]["spec"]["taints"].append({"key": names.ACCEPTANCE_TAINT_KEY, "effect": "NoSchedule"})
    assert found((NODE_POOL, props, "l4"))
