"""Karpenter's API as the platform uses it: kinds, type tokens, disruption reasons, and how a registered
NodePool reads (karpenter.sh v1.14 NodePools, NodeClasses, Disruption).

The read-back helpers take a NodePool's inputs as registered (plain camelCase dicts), so the cost model,
the disruption model and the policy pack read Karpenter pools the way they read managed node groups.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Mapping

from gpu_platform.facts import names

KARPENTER = "karpenter"  # nodePools[].provisioner of pools Karpenter launches
NODE_POOL_API = ("karpenter.sh/v1", "NodePool")
NODE_CLASS_API = ("karpenter.k8s.aws/v1", "EC2NodeClass")
NODE_POOL = f"kubernetes:{NODE_POOL_API[0]}:{NODE_POOL_API[1]}"
NODE_CLASS = f"kubernetes:{NODE_CLASS_API[0]}:{NODE_CLASS_API[1]}"
RESERVED = "reserved"  # Karpenter's capacity type of ODCRs and Capacity Blocks (ReservedCapacity feature)
CAPACITY_BLOCK = "capacity-block"  # karpenter.k8s.aws/capacity-reservation-type of a Capacity Block
# The ReservedCapacity feature gate's chart value (charts/karpenter values.yaml @v1.14.1: beta, on by default).
RESERVED_CAPACITY_GATE = "reservedCapacity"
# Reasons Karpenter may voluntarily disrupt a node for; a window holds back the two that evict pods.
POD_EVICTING_REASONS = ("Drifted", "Underutilized")
EMPTY_REASON = "Empty"
# Node auto repair (karpenter.sh v1.14, Disruption: Node Auto Repair; the AWS provider's RepairPolicies in
# pkg/cloudprovider/cloudprovider.go): behind the NodeRepair feature gate (alpha, off by default; the chart's
# settings.featureGates.nodeRepair), Karpenter force-terminates a node whose condition has held for its
# toleration, and repairs nothing in a NodePool while more than 20% of its nodes are unhealthy. One switch for
# the controller: the policies are the provider's, not a NodePool's.
NODE_REPAIR_GATE = "nodeRepair"
REPAIR_POLICIES = (  # (node condition, status, minutes it must hold)
    ("Ready", "False", 30), ("Ready", "Unknown", 30), ("AcceleratedHardwareReady", "False", 10),
    ("StorageReady", "False", 30), ("NetworkingReady", "False", 30), ("KernelReady", "False", 30),
    ("ContainerRuntimeReady", "False", 30),
)
REPAIR_MAX_UNHEALTHY_PERCENT = 20


# --- reading a NodePool back (cost, capacity, disruption and policies see what was registered) ---

def requirement_values(node_pool: Mapping[str, Any], key: str) -> list[str]:
    """The `In` values of one requirement of a NodePool's inputs ([] without one)."""
    reqs = (((node_pool.get("spec") or {}).get("template") or {}).get("spec") or {}).get("requirements") or []
    for req in reqs:
        if isinstance(req, Mapping) and req.get("key") == key and req.get("operator") == "In":
            return list(req.get("values") or [])
    return []


def max_nodes(node_pool: Mapping[str, Any]) -> int:
    """limits.nodes (0 when absent or not a whole number)."""
    value = ((node_pool.get("spec") or {}).get("limits") or {}).get("nodes")
    try:
        return int(str(value))
    except ValueError:
        return 0


def node_group_view(node_pool: Mapping[str, Any]) -> dict[str, Any]:
    """A NodePool's inputs in a managed node group's terms (instanceTypes, capacityType, scalingConfig,
    labels, taints in the EKS API's spelling), so the cost model and the pack's pool rules read both."""
    template = (node_pool.get("spec") or {}).get("template") or {}
    labels = dict((template.get("metadata") or {}).get("labels") or {})
    return {
        "instanceTypes": requirement_values(node_pool, names.INSTANCE_TYPE_LABEL),
        "capacityType": capacity_type(node_pool),
        "scalingConfig": {"minSize": 0, "maxSize": max_nodes(node_pool)},
        "labels": labels,
        "taints": [{"key": t.get("key"), "value": t.get("value", ""), "effect": _eks_effect(t.get("effect"))}
                   for t in (template.get("spec") or {}).get("taints") or [] if isinstance(t, Mapping)],
        "nodeGroupName": (node_pool.get("metadata") or {}).get("name"),
    }


def _eks_effect(effect: Any) -> Any:
    """A taint effect in the EKS API's spelling (NO_SCHEDULE); anything else is passed on for rules to refuse."""
    return names.TAINT_EFFECTS.get(effect, effect) if isinstance(effect, str) else effect


def capacity_type(node_pool: Mapping[str, Any]) -> str:
    """A NodePool's capacity in a node group's terms: SPOT, ON_DEMAND (reserved capacity of an ODCR is billed as
    on-demand, and a pool allowing on-demand falls back to it), CAPACITY_BLOCK (reserved capacity of type
    capacity-block only), or MIXED (spot with anything else)."""
    capacity = set(requirement_values(node_pool, names.KARPENTER_CAPACITY_TYPE_LABEL))
    if capacity == {"spot"}:
        return "SPOT"
    if capacity == {RESERVED} and requirement_values(node_pool, names.KARPENTER_RESERVATION_TYPE_LABEL) == [CAPACITY_BLOCK]:
        return "CAPACITY_BLOCK"
    return "ON_DEMAND" if capacity and capacity <= {"on-demand", RESERVED} else "MIXED"
