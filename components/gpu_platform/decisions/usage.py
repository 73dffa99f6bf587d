"""What one unit of GPU allocation is worth, pool by pool: the facts the usage recording rules multiply by.

A unit is what a pod is given: a whole GPU, a MIG slice, a time-sliced replica, or a GPU allocated through a
DRA claim. Each unit counts as a share of a GPU (its GPU-equivalent) and costs the cost section's unit price
(decisions/cost.pool_unit_costs at the pool's own billed rate), so a month of a team's quota in use prices
exactly as the plan's team figure: a whole GPU is one GPU at the node-hour over the node's GPUs; a MIG slice
is its compute share of a GPU (3g of 7 slices: 3/7); a time-sliced replica is 1/replicas of a GPU.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from collections.abc import Iterator
from typing import TYPE_CHECKING, Optional

from gpu_platform.decisions.capacity import node_resources
from gpu_platform.decisions.cost import Pricing, estimate_pool, pool_facts, pool_unit_costs
from gpu_platform.decisions.dra import is_dra
from gpu_platform.facts import catalog, names
from gpu_platform.spec.field_path import FieldPath, Problem

if TYPE_CHECKING:
    from gpu_platform.spec.models import MonitoringSpec, NodePoolSpec, PlatformSpec

WHOLE, MIG, TIME_SLICED, DRA_DEVICE = "whole", "mig", "time-sliced", "dra"
KINDS = (WHOLE, MIG, TIME_SLICED, DRA_DEVICE)
DRA_RESOURCE = "dra"  # the resource label of GPUs allocated through DRA claims (they request no extended resource)


@dataclass(frozen=True)
class UsageUnit:
    """One allocatable resource of one pool: what a unit of it counts as, and costs."""

    pool: str
    resource: str  # the Kubernetes resource name (nvidia.com/gpu, nvidia.com/mig-1g.10gb), or `dra`
    kind: str  # whole | mig | time-sliced | dra
    gpu_share: float  # the GPUs one unit counts as
    usd_per_hour: Optional[float]  # one unit for an hour at the pool's billed rate; None: the pool has no price
    gpu_model: str = ""  # the pool's GPU as NVML names it (dcgm-exporter's modelName)


@dataclass(frozen=True)
class PoolRate:
    """A pool's price per GPU-hour at its billed rate (what used GPU time is priced at)."""

    pool: str
    gpu_usd_per_hour: Optional[float]


def _kind(pool: "NodePoolSpec") -> str:
    if is_dra(pool):
        return DRA_DEVICE
    return {"mig": MIG, "time-slicing": TIME_SLICED}.get(pool.sharing.mode, WHOLE)


def _gpu_share(pool: "NodePoolSpec", resource: str, mig_strategy: str) -> float:
    """The GPUs one unit of `resource` counts as on this pool."""
    mode = pool.sharing.mode
    if mode == "time-slicing":
        return 1 / (pool.sharing.replicas or 1)
    if mode == "mig":
        layout = {p: n for p, n in (pool.sharing.layout or {}).items() if n}
        profile = next(iter(layout)) if mig_strategy == "single" else resource.removeprefix(names.MIG_RESOURCE_PREFIX)
        return catalog.mig_compute_share(pool.gpu, profile)
    return 1.0


def node_usd_per_hour(pool: "NodePoolSpec", pricing: Pricing, as_of: date) -> Optional[float]:
    """One node-hour at the rate the pool is billed (spot discount, block or reservation quote)."""
    return estimate_pool(pool_facts(pool, as_of), pricing).usd_per_node_hour


def pool_units(pool: "NodePoolSpec", mig_strategy: str, pricing: Pricing, as_of: date) -> list[UsageUnit]:
    rate = node_usd_per_hour(pool, pricing, as_of)
    kind = _kind(pool)
    if kind == DRA_DEVICE:
        return [UsageUnit(pool.name, DRA_RESOURCE, kind, 1.0, None if rate is None else rate / pool.gpus_per_node,
                          pool.gpu.nvml_name)]
    costs = pool_unit_costs(pool, mig_strategy, rate) if rate is not None else {}
    return [UsageUnit(pool.name, resource, kind, _gpu_share(pool, resource, mig_strategy), costs.get(resource),
                      pool.gpu.nvml_name) for resource in sorted(node_resources(pool, mig_strategy))]


def usage_units(spec: "PlatformSpec", as_of: Optional[date] = None) -> list[UsageUnit]:
    """Every pool's allocatable units, in the stack file's pool order."""
    pricing = Pricing.from_spec(spec.pricing)
    day = as_of or date.today()
    return [u for p in spec.node_pools for u in pool_units(p, spec.mig_strategy, pricing, day)]


def pool_rates(spec: "PlatformSpec", as_of: Optional[date] = None) -> list[PoolRate]:
    pricing = Pricing.from_spec(spec.pricing)
    day = as_of or date.today()
    out = []
    for pool in spec.node_pools:
        rate = node_usd_per_hour(pool, pricing, day)
        out.append(PoolRate(pool.name, None if rate is None else rate / pool.gpus_per_node))
    return out


def team_namespaces(spec: "PlatformSpec") -> dict[str, str]:
    """Namespace -> team: usage is recorded per namespace and reported per team."""
    return {names.team_namespace(t.name): t.name for t in spec.teams}


@dataclass(frozen=True)
class ReportPlan:
    """Where and when the monthly usage report runs and writes."""

    schedule: str  # cron, UTC
    bucket_name: Optional[str]  # the stack file's bucket; None: the stack creates one named from `bucket_prefix`
    bucket_prefix: str
    prefix: str  # the key prefix the job may write under (no trailing slash)
    retention_days: int
    prometheus_url: str
    namespace: str  # where the CronJob runs: Prometheus' namespace


def report_plan(monitoring: "MonitoringSpec", cluster: str) -> Optional[ReportPlan]:
    """The report's plan, None when it is off (the spec rules refuse it without a Prometheus)."""
    report, prom = monitoring.usage_report, monitoring.prometheus
    if not report.enabled or not monitoring.enabled or prom.mode == "none":
        return None
    url = report.prometheus_url or f"http://{names.PROMETHEUS_OPERATED_SERVICE}.{prom.namespace}.svc:9090"
    return ReportPlan(report.schedule, report.bucket_name, names.usage_bucket_prefix(cluster), report.prefix,
                      report.retention_days, url, prom.namespace)


REPORT_LOOKBACK_HOURS = 31 * 24 + 24  # the longest month, and a day for the job's start after it ends


def usage_report_rules(monitoring: "MonitoringSpec") -> Iterator[Problem]:
    """An installed Prometheus must keep the whole month the report reads."""
    from gpu_platform.decisions.metrics_storage import retention_seconds

    prom = monitoring.prometheus
    if not monitoring.usage_report.enabled or prom.mode != "install":
        return
    if retention_seconds(prom.retention) < REPORT_LOOKBACK_HOURS * 3600:
        yield (FieldPath.of("monitoring.prometheus.retention"), f"must keep at least {REPORT_LOOKBACK_HOURS // 24}d with "
               f"monitoring.usageReport on, not {prom.retention}: the report reads the whole previous month")


@dataclass(frozen=True)
class Unplaced:
    """MIG slices the pools offer at max size that no team's quota reaches: paid for, never held by a team."""

    resource: str
    capacity_at_max: int
    quota_total: int
    usd_per_month: Optional[float]  # the slices left over for a month at the on-demand unit price

    @property
    def count(self) -> int:
        return self.capacity_at_max - self.quota_total


def unplaced_mig_slices(spec: "PlatformSpec") -> list[Unplaced]:
    """Per MIG resource, the slices beyond the sum of the teams' quotas (capacity at max size)."""
    from gpu_platform.decisions.cost import unit_prices

    prices = unit_prices(spec)
    out = []
    for resource, price in prices.items():
        if not resource.startswith(names.MIG_RESOURCE_PREFIX):
            continue
        profile = resource.removeprefix(names.MIG_RESOURCE_PREFIX)
        quota = sum(t.quota.mig_slices.get(profile, 0) for t in spec.teams)
        if price.capacity_at_max > quota:
            rate = price.on_demand_usd_per_hour
            left = price.capacity_at_max - quota
            out.append(Unplaced(resource, price.capacity_at_max, quota,
                                None if rate is None else left * rate * catalog.HOURS_PER_MONTH))
    return out
