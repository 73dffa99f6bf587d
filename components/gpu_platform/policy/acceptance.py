"""The acceptance gate: in prod (configurable) every GPU pool's new nodes prove themselves before they take work.

A GPU node group must carry the startup taint `readiness.k8s.io/gpu-acceptance` (NoSchedule) among its taints,
and a GPU Karpenter NodePool must list it under `spec.template.spec.startupTaints` (not `taints`, which Karpenter
would keep on the node forever). The rule reads the registered resources only: a pool built without a stack file
is held to it too (docs/acceptance.md).
"""
from __future__ import annotations

from typing import Any
from collections.abc import Iterator, Mapping

from pulumi_policy import PolicyConfigSchema, ResourceValidationArgs, Severity

from gpu_platform.facts import names
from gpu_platform.policy.common import (
    K8S_EFFECTS, NODE_GROUP, NODE_POOL, applies_in, environment_phrase, environment_properties, get,
    is_gpu_node_group, node_group_label, resource_environment, resource_policy,
)
from gpu_platform.policy.pools import node_pool_view

TAINT = f"{names.ACCEPTANCE_TAINT_KEY}={names.ACCEPTANCE_TAINT_VALUE}:{names.ACCEPTANCE_TAINT_EFFECT}"


def _carries(taints: Any) -> bool:
    return any(isinstance(t, Mapping) and t.get("key") == names.ACCEPTANCE_TAINT_KEY
               and K8S_EFFECTS.get(t.get("effect"), t.get("effect")) == names.ACCEPTANCE_TAINT_EFFECT
               for t in taints or [])


def gated(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    env = resource_environment(args, config)
    if not applies_in(env, config.get("environments", ["prod"])):
        return
    if args.resource_type == NODE_POOL:
        view = node_pool_view(args)
        if not is_gpu_node_group(view.props):
            return
        if _carries(get(args.props, "spec.template.spec.startupTaints", [])):
            return
        where, fix = (f"NodePool {get(args.props, 'metadata.name', args.name)!r}",
                      f"list {TAINT} under spec.template.spec.startupTaints")
    else:
        if not is_gpu_node_group(args.props) or _carries(get(args.props, "taints", [])):
            return
        where, fix = node_group_label(args.name, args.props), f"add the taint {TAINT} to this node group"
    yield (f"{where} has no acceptance gate {environment_phrase(env)}: a new GPU node takes work before it passes "
           f"its checks; {fix} and install the checker (stack file: remove `acceptance: {{enabled: false}}` from the "
           "pool, or set nodePools[].acceptance; docs/acceptance.md)")


SCHEMA = PolicyConfigSchema({**environment_properties("Environments where every GPU pool must gate new nodes.")})

POLICIES = [
    resource_policy(
        "gpu-pool-acceptance-gated", "GPU pools gate new nodes on their acceptance checks (mandatory in the "
        "configured environments).", [NODE_GROUP, NODE_POOL], gated, severity=Severity.HIGH, schema=SCHEMA,
        remediation="Set nodePools[].acceptance (prod turns it on by default) so new nodes register with the "
                    f"{names.ACCEPTANCE_TAINT_KEY} startup taint."),
]
