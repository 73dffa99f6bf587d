"""`nodePools[].repair`: managed node group auto repair of a GPU pool, as the stack file states it.

The fields map one to one onto the EKS `nodeRepairConfig` (botocore eks NodeRepairConfig, pulumi_aws
`eks.NodeGroupNodeRepairConfigArgs`); what is left unset gets the environment's default
(decisions/node_repair.py). On Karpenter pools only `enabled` applies: it turns Karpenter's node repair on
(one feature gate for the controller, fixed policies: facts/karpenter.py). Cross-field rules are in `repair_rules`.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from typing import TYPE_CHECKING, Optional

from pydantic import Field
from pydantic.alias_generators import to_snake

from gpu_platform.facts import catalog
from gpu_platform.facts.karpenter import KARPENTER, REPAIR_MAX_UNHEALTHY_PERCENT, REPAIR_POLICIES
from gpu_platform.spec.field_path import NODE_POOLS, FieldPath, Problem
from gpu_platform.spec.strict import StrictModel

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec


class RepairOverrideSpec(StrictModel):
    """What EKS does for one (condition, reason) the node monitoring agent reports."""

    condition: str  # nodeMonitoringCondition, e.g. AcceleratedHardwareReady
    reason: str  # nodeUnhealthyReason, e.g. NvidiaXID31Error
    wait_minutes: int = Field(ge=1)  # minRepairWaitTimeMins: how long the condition must last
    action: catalog.NodeRepairAction


class NodeRepairSpec(StrictModel):
    """Node repair: EKS replaces a node whose GPU reports a fault."""

    enabled: bool = True
    # Repair stops while more nodes than this are unhealthy (count or percentage of the group, not both).
    max_unhealthy_nodes: Optional[int] = Field(None, ge=1)
    max_unhealthy_percent: Optional[int] = Field(None, ge=1, le=100)
    # How many unhealthy nodes are repaired at the same time (count or percentage, not both).
    max_parallel_repairs: Optional[int] = Field(None, ge=1)
    max_parallel_percent: Optional[int] = Field(None, ge=1, le=100)
    overrides: Optional[list[RepairOverrideSpec]] = None  # None: the environment's defaults

    def thresholds_set(self) -> list[str]:
        return [alias for alias, value in (
            ("maxUnhealthyNodes", self.max_unhealthy_nodes), ("maxUnhealthyPercent", self.max_unhealthy_percent),
            ("maxParallelRepairs", self.max_parallel_repairs), ("maxParallelPercent", self.max_parallel_percent),
            ("overrides", self.overrides)) if value is not None]


def known_reason(condition: str, reason: str) -> bool:
    """The agent sets `condition` with this reason (Event-only reasons never trigger a repair)."""
    pattern = catalog.NODE_REPAIR_REASON_PATTERNS.get(condition)
    return reason in catalog.NODE_REPAIR_REASONS.get(condition, ()) or bool(pattern and re.fullmatch(pattern, reason))


def repair_rules(spec: "PlatformSpec") -> Iterator[Problem]:
    for i, pool in enumerate(spec.node_pools):
        at = NODE_POOLS.index(i) / "repair"
        yield from (karpenter_repair_rules(at, pool.repair) if pool.provisioner == KARPENTER
                    else pool_repair_rules(at, pool.repair))
    yield from _karpenter_switch_rules(spec)
    yield from _agent_rules(spec)


def karpenter_policies_text() -> str:
    """Karpenter's repair policies in words, for messages and the plan."""
    tolerations: dict[int, list[str]] = {}
    for condition, status, minutes in REPAIR_POLICIES:
        tolerations.setdefault(minutes, []).append(f"{condition}={status}")
    held = "; ".join(f"{', '.join(c)} for {m} minutes" for m, c in sorted(tolerations.items()))
    return f"replaces a node after {held}; none in a NodePool while more than {REPAIR_MAX_UNHEALTHY_PERCENT}% of its nodes are unhealthy"


def karpenter_repair_rules(at: FieldPath, repair: NodeRepairSpec) -> Iterator[Problem]:
    """A Karpenter pool takes `enabled` only: the thresholds and overrides are EKS node group settings."""
    for field in repair.thresholds_set():
        yield (at.field(field), "applies to managed node groups only: Karpenter's node repair has fixed policies "
               f"({karpenter_policies_text()}); remove it, repair.enabled turns Karpenter's repair on or off")


def _karpenter_switch_rules(spec: "PlatformSpec") -> Iterator[Problem]:
    """Karpenter's repair is one feature gate for every NodePool: its pools must agree on `enabled`."""
    pools = [(i, p) for i, p in enumerate(spec.node_pools) if p.provisioner == KARPENTER]
    on = [str(NODE_POOLS.index(i)) for i, p in pools if p.repair.enabled]
    if on and len(on) < len(pools):
        for i, pool in pools:
            if not pool.repair.enabled:
                yield (NODE_POOLS.index(i) / "repair.enabled", "Karpenter's node repair is one switch for every "
                       f"Karpenter pool (the controller's NodeRepair feature gate), and {', '.join(on)} turn it on: "
                       "set repair.enabled the same on every pool with provisioner: karpenter")


def pool_repair_rules(at: FieldPath, repair: NodeRepairSpec) -> Iterator[Problem]:
    if not repair.enabled:
        for field in repair.thresholds_set():
            yield at.field(field), "applies only with enabled: true"
        return
    for count, percent in (("maxUnhealthyNodes", "maxUnhealthyPercent"), ("maxParallelRepairs", "maxParallelPercent")):
        if getattr(repair, to_snake(count)) is not None and getattr(repair, to_snake(percent)) is not None:
            yield at.field(percent), f"set {count} or {percent}, not both (EKS accepts one of them)"
    seen: dict[tuple[str, str], int] = {}
    for j, o in enumerate(repair.overrides or []):
        where = at.field("overrides").index(j)
        if o.condition not in catalog.NODE_REPAIR_CONDITIONS:
            yield where / "condition", f"unknown node condition; known: {', '.join(catalog.NODE_REPAIR_CONDITIONS)}"
        elif not known_reason(o.condition, o.reason):
            reasons = catalog.NODE_REPAIR_REASONS[o.condition]
            coded = ", DCGMHealthCode<code>" if o.condition in catalog.NODE_REPAIR_REASON_PATTERNS else ""
            yield (where / "reason", f"{o.reason!r} never sets {o.condition} (only these do: "
                   f"{', '.join(reasons) or 'none'}{coded}); an override for it would never apply")
        key = (o.condition, o.reason)
        if key in seen:
            yield where, f"repeats {o.condition}/{o.reason} (also {FieldPath.of('overrides').index(seen[key])})"
        seen.setdefault(key, j)


def _agent_rules(spec: "PlatformSpec") -> Iterator[Problem]:
    """In prod, GPU faults must reach repair: pin the node monitoring agent on clusters the stack creates."""
    create = spec.cluster.create
    if not spec.prod or create is None or catalog.NODE_MONITORING_AGENT_ADDON in create.addons:
        return
    if any(p.repair.enabled for p in spec.node_pools):
        yield (FieldPath.of("cluster.create.addons"), f"pin {catalog.NODE_MONITORING_AGENT_ADDON} (e.g. "
               "v1.6.6-eksbuild.1): without it node repair only sees the kubelet's Ready condition, never a GPU "
               "fault; or set nodePools[].repair.enabled: false")

