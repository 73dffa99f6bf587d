"""The acceptance gate: in prod (configurable) every GPU pool's new nodes prove themselves before they take work.

A GPU node group must carry the startup taint `readiness.k8s.io/gpu-acceptance` (NoSchedule) among its taints,
and a GPU Karpenter NodePool must list it under `spec.template.spec.startupTaints` (not `taints`, which Karpenter
would keep on the node forever). The rule reads the registered resources only: a pool built without a stack file
is held to it too (docs/acceptance.md).
"""
from __future__ import annotations

from typing import Any, Optional
from collections.abc import Iterator, Mapping

from pulumi_policy import PolicyConfigSchema, Severity, StackValidationArgs

from gpu_platform.facts import names
from gpu_platform.policy.common import (
    K8S_EFFECTS, NODE_GROUP, NODE_POOL, applies_in, environment_phrase, environment_properties, get,
    is_gpu_node_group, node_group_label, of_type, stack_environment, stack_policy,
)
from gpu_platform.policy.pools import node_pool_view

Finding = Iterator[tuple[str, Optional[str]]]
TAINT = f"{names.ACCEPTANCE_TAINT_KEY}={names.ACCEPTANCE_TAINT_VALUE}:{names.ACCEPTANCE_TAINT_EFFECT}"


def _carries(taints: Any) -> bool:
    """A startup taint with the gate's key and effect (EKS API or Kubernetes spelling) among these taints."""
    for t in taints or []:
        effect = str(t.get("effect")) if isinstance(t, Mapping) else ""
        if isinstance(t, Mapping) and t.get("key") == names.ACCEPTANCE_TAINT_KEY \
                and K8S_EFFECTS.get(effect, effect) == names.ACCEPTANCE_TAINT_EFFECT:
            return True
    return False


def gated(args: StackValidationArgs, config: Mapping[str, Any]) -> Finding:
    """Every GPU node group and NodePool of a stack in a configured environment (the stack's, as its AWS
    provider is tagged: a NodePool's own provider is the cluster's) gates new nodes."""
    env = stack_environment(args, config)
    if not applies_in(env, config.get("environments", ["prod"])):
        return
    for r in of_type(args, NODE_GROUP):
        if is_gpu_node_group(r.props) and not _carries(get(r.props, "taints", [])):
            yield _message(node_group_label(r.name, r.props), env, f"add the taint {TAINT} to this node group"), r.urn
    for r in of_type(args, NODE_POOL):
        if is_gpu_node_group(node_pool_view(r).props) and not _carries(get(r.props, "spec.template.spec.startupTaints", [])):
            yield _message(f"NodePool {get(r.props, 'metadata.name', r.name)!r}", env,
                           f"list {TAINT} under spec.template.spec.startupTaints"), r.urn


def _message(where: str, env: Any, fix: str) -> str:
    return (f"{where} has no acceptance gate {environment_phrase(env)}: a new GPU node takes work before it passes "
            f"its checks; {fix} and install the checker (stack file: remove `acceptance: {{enabled: false}}` from the "
            "pool, or set nodePools[].acceptance; docs/acceptance.md)")


SCHEMA = PolicyConfigSchema({**environment_properties("Environments where every GPU pool must gate new nodes.")})

POLICIES = [
    stack_policy(
        "gpu-pool-acceptance-gated", "GPU pools gate new nodes on their acceptance checks (mandatory in the "
        "configured environments).", gated, severity=Severity.HIGH, schema=SCHEMA,
        remediation="Set nodePools[].acceptance (prod turns it on by default) so new nodes register with the "
                    f"{names.ACCEPTANCE_TAINT_KEY} startup taint."),
]
