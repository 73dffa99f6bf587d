"""Node acceptance, decided from the spec: which pools gate new nodes, on which checks, how long it takes.

A pool's `acceptance` (or, unset, its environment's default: prod DCGM level 2, staging level 1, dev none)
gives its nodes the startup taint `readiness.k8s.io/gpu-acceptance=pending:NoSchedule` at registration
(managed node groups: the node group's taints; Karpenter: the NodePool's `startupTaints`). The checker runs
the pool's checks on each new node and sets the node's `GpuAcceptance` condition; the node readiness
controller lifts the taint once it is True (bootstrap only: a node that took work is never tainted again).
The Cluster Autoscaler is told the taint is a startup taint, so an empty pool's template never carries it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional
from collections.abc import Sequence

from gpu_platform.facts import acceptance as facts
from gpu_platform.facts import names
from gpu_platform.facts.karpenter import KARPENTER, REPAIR_MAX_UNHEALTHY_PERCENT
from gpu_platform.decisions.node_repair import repair_config
from gpu_platform.spec.acceptance import hardware_checks
from gpu_platform.spec.pool_context import PoolContext

if TYPE_CHECKING:
    from gpu_platform.spec.acceptance import AcceptanceSpec
    from gpu_platform.spec.models import NodePoolSpec, PlatformSpec

# The level a pool runs when its acceptance is unset; environments not listed run none.
DEFAULT_LEVELS = {"prod": 2, "staging": 1}
# Hours between passive re-checks of idle nodes when the pool does not say; environments not listed run none.
DEFAULT_RECHECK_HOURS = {"prod": 24}


@dataclass(frozen=True)
class PoolAcceptance:
    """What a pool's new nodes must pass before they take work."""

    pool: str
    level: int
    checks: tuple[str, ...]
    timeout_minutes: int  # the whole run: the node stays tainted, and alerts, past it
    nccl_floor_gbps: Optional[float]  # None without the nccl check
    efa_interfaces: int  # EFA devices each node must show (the pool's smallest instance type)
    gpus: int
    replace_via: str = ""  # how a failed node is replaced: nodeclaim (Karpenter), "" (not replaced)
    max_failed_nodes: Optional[int] = None  # replace only while this many of the pool's nodes failed, or
    max_failed_percent: Optional[int] = None  # this share of its nodes (at least one node)
    recheck_hours: Optional[int] = None  # passive health re-checks of idle accepted nodes every so many hours

    @property
    def expected_seconds(self) -> int:
        """The time the checks add before a new node is schedulable: image pulls, DCGM, then the others."""
        run = facts.DCGM_LEVELS[self.level].expected_seconds + sum(facts.CHECK_SECONDS[c] for c in self.checks
                                                                    if c != "dcgm")
        pulls = max(facts.PULL_SECONDS[c] for c in self.checks)  # the kubelet pulls the images in parallel
        return run + pulls


def pool_acceptance(ctx: PoolContext, pool: "NodePoolSpec") -> Optional[PoolAcceptance]:
    """The pool's gate, or None when its nodes take work as soon as their GPUs are advertised."""
    spec = pool.acceptance
    if spec is not None and not spec.enabled:
        return None
    level = spec.level if spec is not None else DEFAULT_LEVELS.get(ctx.environment) if ctx.acceptance_defaults else None
    if level is None:
        return None
    checks = tuple(c for c in facts.CHECKS if c in (spec.checks if spec and spec.checks else hardware_checks(pool)))
    timeout = (spec.timeout_minutes if spec and spec.timeout_minutes else
               facts.DCGM_LEVELS[level].default_timeout_minutes
               + sum(facts.CHECK_TIMEOUT_MINUTES[c] for c in checks if c != "dcgm"))
    floor = None
    if "nccl" in checks:
        floor = (spec.nccl_bus_bandwidth_gbps if spec and spec.nccl_bus_bandwidth_gbps else
                 min(facts.nccl_floor_gbps(it.gpu, it.gpu_count) or 0 for it in pool.instances))
    efa = min(it.efa_interfaces for it in pool.instances) if "efa" in checks else 0
    return PoolAcceptance(pool.name, level, checks, timeout, floor, efa, pool.gpus_per_node,
                          *replacement(ctx, pool), recheck_hours=recheck_hours(ctx, spec))


def recheck_hours(ctx: PoolContext, spec: Optional["AcceptanceSpec"]) -> Optional[int]:
    """Hours between passive re-checks of the pool's idle accepted nodes, or None for none (0 in the file)."""
    hours = spec.recheck_hours if spec is not None and spec.recheck_hours is not None else (
        DEFAULT_RECHECK_HOURS.get(ctx.environment) if ctx.acceptance_defaults else None)
    return hours or None


def replacement(ctx: PoolContext, pool: "NodePoolSpec") -> tuple[str, Optional[int], Optional[int]]:
    """How the pool's failed nodes are replaced, within its repair limits: (via, max nodes, max percent).

    Karpenter pools: the checker deletes the failed node's NodeClaim and Karpenter launches another, while no
    more than Karpenter's own repair limit of the pool's nodes failed. Managed node groups: the checker
    terminates the instance in its Auto Scaling group (the group keeps its size), within the pool's EKS repair
    thresholds (`maxUnhealthyNodes` or `maxUnhealthyPercent`; without either, one node at a time). A pool whose
    repair is off is never replaced.
    """
    if not pool.repair.enabled:
        return "", None, None
    if pool.provisioner == KARPENTER:
        return "nodeclaim", None, REPAIR_MAX_UNHEALTHY_PERCENT
    config = repair_config(ctx, pool)
    return "asg", config.get("maxUnhealthyNodeThresholdCount"), config.get("maxUnhealthyNodeThresholdPercentage")


def replaces_instances(gates: Sequence[PoolAcceptance]) -> bool:
    """Some pool's failed nodes are terminated in their Auto Scaling group: the checker needs an AWS identity."""
    return any(g.replace_via == "asg" for g in gates)


def startup_taints(ctx: PoolContext, pool: "NodePoolSpec") -> list[tuple[str, str, str]]:
    """(key, value, Kubernetes effect) the pool's nodes register with and lose once accepted."""
    if pool_acceptance(ctx, pool) is None:
        return []
    return [(names.ACCEPTANCE_TAINT_KEY, names.ACCEPTANCE_TAINT_VALUE, names.ACCEPTANCE_TAINT_EFFECT)]


def accepted_pools(spec: "PlatformSpec") -> list[tuple["NodePoolSpec", PoolAcceptance]]:
    out = []
    for pool in spec.node_pools:
        gate = pool_acceptance(PoolContext.of(spec, pool), pool)
        if gate is not None:
            out.append((pool, gate))
    return out


def scale_up_cost_usd(gate: PoolAcceptance, usd_per_hour: float) -> float:
    """What the checks' time costs per node each time the pool scales up, at the node's hourly price."""
    return round(gate.expected_seconds / 3600 * usd_per_hour, 2)
