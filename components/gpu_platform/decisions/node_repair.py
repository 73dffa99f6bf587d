"""GPU node health, decided from the spec: each pool's node repair settings and the node monitoring agent.

Node repair acts on node conditions: EKS's for managed node groups (pool by pool, the thresholds and
overrides below), Karpenter's NodeRepair feature gate for Karpenter pools (fixed policies,
facts/karpenter.py). The kubelet's `Ready` is always there; GPU faults (XID errors, double-bit ECC,
NVLink, DCGM health) become the `AcceleratedHardwareReady` condition only where the EKS node monitoring
agent runs, with its bundled DCGM host engine on the GPU nodes.

Defaults: every pool repairs. Prod repairs one node at a time, stops while more than two nodes of a
group are unhealthy (a bad AMI, driver or zone is not a reason to replace a whole pool), and overrides
the XIDs AWS reboots for but that are usually the application's (13, 31: no action, the alert tells the
team) and the row-remapping failure it reboots for but that a reboot cannot fix (64: replace).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any
from collections.abc import Iterable

from gpu_platform.decisions.tolerations import startup_toleration, toleration
from gpu_platform.facts import catalog, names
from gpu_platform.facts.karpenter import KARPENTER

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec, PlatformSpec, TaintSpec
    from gpu_platform.spec.pool_context import PoolContext

GPU_CONDITION = "AcceleratedHardwareReady"
# (spec field, EKS nodeRepairConfig field) for the thresholds.
THRESHOLDS = (
    ("max_unhealthy_nodes", "maxUnhealthyNodeThresholdCount"),
    ("max_unhealthy_percent", "maxUnhealthyNodeThresholdPercentage"),
    ("max_parallel_repairs", "maxParallelNodesRepairedCount"),
    ("max_parallel_percent", "maxParallelNodesRepairedPercentage"),
)
# Prod defaults, applied per pair only when the pool sets neither the count nor the percentage.
PROD_THRESHOLDS = {"maxUnhealthyNodeThresholdCount": 2, "maxParallelNodesRepairedCount": 1}
PROD_OVERRIDES = (
    (GPU_CONDITION, "NvidiaXID13Error", 10, "NoAction"),  # graphics engine exception: usually the application
    (GPU_CONDITION, "NvidiaXID31Error", 10, "NoAction"),  # memory page fault: usually the application
    (GPU_CONDITION, "NvidiaXID64Error", 10, "Replace"),  # row remapping failed: the GPU's memory is bad
)


def repair_config(ctx: "PoolContext", pool: "NodePoolSpec") -> dict[str, Any]:
    """The pool's `nodeRepairConfig` in EKS API terms (botocore eks NodeRepairConfig)."""
    repair = pool.repair
    if not repair.enabled:
        return {"enabled": False}
    config: dict[str, Any] = {"enabled": True}
    for field, api in THRESHOLDS:
        value = getattr(repair, field)
        if value is not None:
            config[api] = value
    if ctx.prod:
        for api, value in PROD_THRESHOLDS.items():
            pair = api.replace("Count", "Percentage")
            if api not in config and pair not in config:
                config[api] = value
    overrides = ([(o.condition, o.reason, o.wait_minutes, o.action) for o in repair.overrides]
                 if repair.overrides is not None else list(PROD_OVERRIDES if ctx.prod else ()))
    if overrides:
        config["nodeRepairConfigOverrides"] = [
            {"nodeMonitoringCondition": c, "nodeUnhealthyReason": r, "minRepairWaitTimeMins": w, "repairAction": a}
            for c, r, w, a in overrides]
    return config


def karpenter_repairs(spec: "PlatformSpec") -> bool:
    """Karpenter's NodeRepair feature gate: on when the stack's Karpenter pools repair (the spec holds them
    to one setting; managed node groups repair through EKS, pool by pool)."""
    return any(p.provisioner == KARPENTER and p.repair.enabled for p in spec.node_pools)


def agent_installed(spec: "PlatformSpec") -> bool:
    create = spec.cluster.create
    return create is not None and catalog.NODE_MONITORING_AGENT_ADDON in create.addons


def gpu_taints(spec: "PlatformSpec") -> list["TaintSpec"]:
    """Every extra taint of the stack's GPU pools, in pool order."""
    return [taint for pool in spec.node_pools for taint in pool.taints]


def agent_configuration(taints: Iterable["TaintSpec"]) -> dict[str, Any]:
    """The node monitoring agent add-on's configuration values (its configuration schema, copied in
    facts/upstream/): the agent on every node, and its DCGM host engine (dcgm-server, which the
    agent's chart places on NVIDIA instance types only and gives no tolerations) on every GPU pool."""
    return {
        "nodeAgent": {"tolerations": [{"operator": "Exists"}]},
        "dcgmAgent": {"tolerations": gpu_pool_tolerations(taints)},
    }


def gpu_pool_tolerations(taints: Iterable["TaintSpec"]) -> list[dict[str, str]]:
    """Tolerations for the GPU taint and each of the GPU pools' extra taints, each once."""
    out = [{"key": names.GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}, startup_toleration()]
    for taint in taints:
        if toleration(taint) not in out:
            out.append(toleration(taint))
    return out
