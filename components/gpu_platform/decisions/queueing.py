"""Fair GPU sharing with Kueue, as numbers: flavors, nominal quotas, borrowing and lending limits, ceilings.

Pure: everything is computed from the validated pools, teams and queueing settings (a stack file's
PlatformSpec, or a `Fleet` a KueueQueueing builds from its own arguments), so the plan, the Kueue objects
and the team ResourceQuotas cannot disagree (docs/queueing.md).

- A GPU flavor is one pool's supply of one GPU resource: `nvidia.com/gpu` (whole, time-sliced or MIG-single
  GPUs) or one `nvidia.com/mig-<profile>` (MIG mixed). It lands pods on that pool by its pool label.
- A team's quota of a GPU resource is its nominal quota, placed on the flavors of `teams[].queue.pools`
  (default: every pool offering it, in stack-file order). Teams are placed in stack-file order, each filling
  a flavor up to what the teams above it left, so nominal quotas never exceed capacity at max size.
- CPU and memory quota sit on one flavor matching any node (`cpu-memory`).
- Borrowing and lending limits are percentages of each nominal quota (rounded down); the defaults come
  from the team's priority tier. The team's ResourceQuota becomes the ceiling: nominal + borrowing limit.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING, Optional, Protocol
from collections.abc import Iterator, Sequence

from gpu_platform.decisions.capacity import node_resources
from gpu_platform.decisions.topology import schedules_by_topology
from gpu_platform.facts import catalog, names
from gpu_platform.facts.syntax import quantity_fraction
from gpu_platform.spec.field_path import NODE_POOLS, TEAMS, FieldPath, Problem

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec, QueueingSpec, QueuePoolSpec, TeamSpec

CPU, MEMORY = "cpu", "memory"
CPU_MEMORY = (CPU, MEMORY)
MAX_RESOURCE_GROUPS = 16  # Kueue: a ClusterQueue holds at most 16 resource groups
MAX_FLAVOR_TAINTS = 8  # Kueue: ResourceFlavor.spec.nodeTaints holds at most 8 taints
FAIR_SHARING_STRATEGIES = ("LessThanOrEqualToFinalShare", "LessThanInitialShare")  # Kueue's default order


@dataclass(frozen=True)
class TierQueue:
    """How a priority tier queues: default limits, and whom its workloads may preempt."""

    borrowing_limit: str  # default `teams[].queue.borrowingLimit`
    lending_limit: str  # default `teams[].queue.lendingLimit`
    within_cluster_queue: str  # preempt the team's own lower-priority workloads
    reclaim_within_cohort: str  # take lent quota back from other teams' borrowing workloads
    on_spot: bool  # True: spot flavors first; False: never a spot flavor (its pods can be taken back any time)


# Critical inference runs on its own nominal quota (it never borrows by default, so no other team ever has
# a claim on its pods) and takes back anything it lent at once. Standard teams borrow up to their nominal
# quota again and reclaim theirs from any borrower. Batch never preempts anyone: it reclaims only from
# workloads of lower priority than its own, and its borrowed capacity is the first to be taken back.
# Only batch, which is preemptible anyway, runs on spot, and there first; the higher tiers' queues hold no
# spot flavor, so Kueue never admits their work to one (docs/queueing.md).
TIER_QUEUES = {
    "critical-inference": TierQueue("0%", "100%", "LowerPriority", "Any", on_spot=False),
    "standard": TierQueue("100%", "100%", "LowerPriority", "Any", on_spot=False),
    "preemptible-batch": TierQueue("100%", "100%", "Never", "LowerPriority", on_spot=True),
}
SPOT = "spot"


class QueueScope(Protocol):
    """What queueing reads of a platform. A stack file's PlatformSpec is one; a `Fleet` is the other."""

    @property
    def node_pools(self) -> Sequence[NodePoolSpec | QueuePoolSpec]: ...
    @property
    def teams(self) -> Sequence[TeamSpec]: ...
    @property
    def queueing(self) -> QueueingSpec: ...
    @property
    def mig_strategy(self) -> str: ...


@dataclass(frozen=True)
class Fleet:
    """GPU pools, teams and queueing settings given to a KueueQueueing on its own."""

    node_pools: Sequence[NodePoolSpec | QueuePoolSpec]
    teams: Sequence[TeamSpec]
    queueing: QueueingSpec
    mig_strategy: str


# --- quantities (exact: a ceiling must never be off by a rounding error) ---

def quantity(text: str) -> Fraction:
    """A Kubernetes quantity as an exact number: `1.5` -> 3/2, `2Ti` -> 2**41, `128e9`, `250m` -> 1/4."""
    return quantity_fraction(text)


def percent(text: str) -> Fraction:
    return Fraction(int(text.rstrip("%")), 100)


_SUFFIXES = ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki", "E", "P", "T", "G", "M", "k")


def format_quantity(resource: str, value: Fraction) -> str:
    """GPUs as counts, CPU in cores or millicores, memory in the shortest exact unit (`2Ti`, `500G`)."""
    if resource == CPU:
        return str(value.numerator) if value.denominator == 1 else f"{math.floor(value * 1000)}m"
    whole = math.floor(value)
    if resource != MEMORY or whole == 0:
        return str(whole)
    exact = [f"{whole // int(quantity('1' + s))}{s}" for s in _SUFFIXES if whole % int(quantity("1" + s)) == 0]
    return min(exact + [str(whole)], key=len)


def floor_to_unit(resource: str, value: Fraction) -> Fraction:
    """Round down to what Kubernetes can hold: whole GPUs and bytes, millicores."""
    unit = Fraction(1, 1000) if resource == CPU else Fraction(1)
    return math.floor(value / unit) * unit


# --- flavors ---

@dataclass(frozen=True)
class GpuFlavor:
    name: str
    pool: str
    resource: str
    gpu: str  # catalog GPU key
    mig_profile: Optional[str]  # the slice this flavor's unit is (MIG mixed, or the single strategy's profile)
    capacity_type: str  # spot | on-demand
    capacity: int  # units of `resource` the pool schedules at max size
    taints: tuple[tuple[str, str, str], ...]  # the pool's own taints (key, value, effect); the GPU taint is not here
    topology: bool = False  # the pool schedules by topology: the flavor names Kueue's Topology
    cpu_per_unit: Fraction = Fraction(0)  # the node's vCPUs per unit of `resource` (its share of the node)
    memory_per_unit: Fraction = Fraction(0)  # the node's memory in bytes per unit of `resource`


def _mig_profile(pool: NodePoolSpec | QueuePoolSpec, resource: str) -> Optional[str]:
    if resource.startswith(names.MIG_RESOURCE_PREFIX):
        return resource.removeprefix(names.MIG_RESOURCE_PREFIX)
    if pool.sharing.mode == "mig":  # single strategy: every slice is an nvidia.com/gpu of the one profile
        return next((p for p, n in (pool.sharing.layout or {}).items() if n), None)
    return None


def gpu_flavors(spec: "QueueScope") -> list[GpuFlavor]:
    """Every pool's GPU resources as flavors, in stack-file order (pools), then resource order."""
    out = []
    for pool in spec.node_pools:
        for resource, per_node in node_resources(pool, spec.mig_strategy).items():
            profile = _mig_profile(pool, resource)
            named = profile if resource.startswith(names.MIG_RESOURCE_PREFIX) else None
            node = pool.instances[0]
            out.append(GpuFlavor(names.gpu_flavor(pool.name, named), pool.name, resource, pool.gpu.key, profile,
                                 pool.capacity_type, per_node * pool.max_size,
                                 tuple((t.key, t.value, t.effect) for t in pool.taints),
                                 schedules_by_topology(pool, spec.queueing), Fraction(node.vcpu, per_node),
                                 Fraction(node.memory_gib * 2**30, per_node)))
    return out


def gpu_resources(spec: "QueueScope") -> list[str]:
    """GPU resources any pool offers: `nvidia.com/gpu` first, then MIG profiles by name."""
    offered = {f.resource for f in gpu_flavors(spec)}
    return sorted(offered, key=lambda r: (r != names.GPU_RESOURCE, r))


def team_quota(team: "TeamSpec", resource: str) -> Fraction:
    """The team's stack-file quota of one queued resource."""
    q = team.quota
    if resource == names.GPU_RESOURCE:
        return Fraction(q.gpus)
    if resource.startswith(names.MIG_RESOURCE_PREFIX):
        return Fraction(q.mig_slices.get(resource.removeprefix(names.MIG_RESOURCE_PREFIX), 0))
    return quantity(q.cpu if resource == CPU else q.memory)


# --- nominal quota placement ---

@dataclass(frozen=True)
class Placement:
    nominal: dict[tuple[str, str], int]  # (team, flavor) -> nominal quota of the flavor's resource
    left: dict[str, int]  # flavor -> capacity at max size no team's nominal quota holds
    problems: list[Problem]  # quotas that do not fit their pools


def _quota_field(i: int, resource: str) -> FieldPath:
    if resource == names.GPU_RESOURCE:
        return TEAMS.index(i) / "quota.gpus"
    return (TEAMS.index(i) / "quota.migSlices").key(resource.removeprefix(names.MIG_RESOURCE_PREFIX))


def tier_flavors(team: "TeamSpec", flavors: list[GpuFlavor]) -> list[GpuFlavor]:
    """The flavors the team's tier may use, in its order: spot first for a tier on spot (stable, so the
    team's own order holds within spot and within the rest), no spot flavor for the others."""
    if TIER_QUEUES[team.priority_tier].on_spot:
        return sorted(flavors, key=lambda f: f.capacity_type != SPOT)
    return [f for f in flavors if f.capacity_type != SPOT]


def _listed(team: "TeamSpec", flavors: list[GpuFlavor]) -> list[GpuFlavor]:
    """The flavors of `teams[].queue.pools` in that order (every flavor when it lists none)."""
    if not team.queue.pools:
        return flavors
    order = {p: i for i, p in enumerate(team.queue.pools)}
    return sorted((f for f in flavors if f.pool in order), key=lambda f: order[f.pool])


def _candidates(team: "TeamSpec", flavors: list[GpuFlavor]) -> list[GpuFlavor]:
    """The team's flavors for one resource in the order its nominal quota fills them."""
    return tier_flavors(team, _listed(team, flavors))


def placement(spec: "QueueScope") -> Placement:
    flavors = gpu_flavors(spec)
    left = {f.name: f.capacity for f in flavors}
    nominal: dict[tuple[str, str], int] = {}
    problems: list[Problem] = []
    for i, team in enumerate(spec.teams):
        for resource in gpu_resources(spec):
            need = int(team_quota(team, resource))
            offering = [f for f in flavors if f.resource == resource]
            mine = _candidates(team, offering)
            for f in mine:
                take = min(need, left[f.name])
                if take:
                    nominal[(team.name, f.name)] = take
                    left[f.name] -= take
                    need -= take
            if not need:
                continue
            if not mine and _listed(team, offering):  # listed, but spot only
                problems.append((TEAMS.index(i) / "quota", (
                    f"a {team.priority_tier} team never runs on spot, and only spot pools offer {resource} "
                    f"({', '.join(sorted({f.pool for f in offering}))}): set its quota of it to 0, add an on-demand "
                    "pool, or make the team's priorityTier preemptible-batch")))
                continue
            if not mine:
                problems.append((TEAMS.index(i) / "queue.pools", f"none of the listed pools offers {resource}; "
                                 f"offered by {', '.join(sorted({f.pool for f in offering}))}"))
                continue
            room = ", ".join(f"{f.pool} {left[f.name]}" for f in mine)
            problems.append((_quota_field(i, resource), (
                f"with queueing.mode kueue a quota is a guaranteed nominal quota and must fit its pools at max size: "
                f"{need} {resource} do not fit (left on {room} after the teams above; quotaOvercommitRatio does not "
                f"apply); lower the quota, raise a pool's maxSize or list other pools in "
                f"{TEAMS.index(i) / 'queue.pools'}")))
    return Placement(nominal, left, problems)


# --- a team's queue ---

@dataclass(frozen=True)
class FlavorQuota:
    flavor: str
    resource: str
    nominal: Fraction
    borrowing_limit: Fraction
    lending_limit: Fraction


@dataclass(frozen=True)
class ResourceTotals:
    resource: str
    nominal: Fraction
    borrowable: Fraction  # the sum of the borrowing limits
    lendable: Fraction  # the sum of the lending limits

    @property
    def ceiling(self) -> Fraction:
        return self.nominal + self.borrowable


@dataclass(frozen=True)
class TeamQueue:
    team: str
    tier: TierQueue
    weight: float
    borrowing_limit: str  # the percentages in force (given or the tier's default)
    lending_limit: str
    groups: list[tuple[tuple[str, ...], list[str]]]  # Kueue resource groups: covered resources, flavors in order
    quotas: dict[tuple[str, str], FlavorQuota]  # (flavor, resource) -> quota

    def totals(self) -> list[ResourceTotals]:
        out = []
        for covered, _ in self.groups:
            for resource in covered:
                qs = [q for q in self.quotas.values() if q.resource == resource]
                out.append(ResourceTotals(resource, sum((q.nominal for q in qs), Fraction(0)),
                                          sum((q.borrowing_limit for q in qs), Fraction(0)),
                                          sum((q.lending_limit for q in qs), Fraction(0))))
        return out


def _limits(resource: str, nominal: Fraction, borrow: Fraction, lend: Fraction) -> tuple[Fraction, Fraction]:
    return floor_to_unit(resource, nominal * borrow), floor_to_unit(resource, nominal * lend)


def team_queue(spec: "QueueScope", team: "TeamSpec", placed: Optional[Placement] = None) -> TeamQueue:
    """The team's ClusterQueue in numbers. Every GPU resource the cluster offers is covered (at 0 where the
    team has none), as the ResourceQuota bounds it: a team never uses a GPU no one gave it."""
    placed = placed or placement(spec)
    tier = TIER_QUEUES[team.priority_tier]
    borrow_text = team.queue.borrowing_limit or tier.borrowing_limit
    lend_text = team.queue.lending_limit or tier.lending_limit
    borrow, lend = percent(borrow_text), percent(lend_text)
    quotas: dict[tuple[str, str], FlavorQuota] = {}
    offered = gpu_resources(spec)
    flavors = gpu_flavors(spec)
    merged = by_topology(flavors)
    # The LimitRange gives every container an nvidia.com/gpu request of 0, and a queue refuses any resource
    # it does not cover: without a pool offering whole GPUs it is covered here, at 0. With pools that schedule
    # by topology, whole GPUs share the group: a pod set asking for topology takes all it requests from one
    # flavor naming the Topology (Kueue's flavor assigner), so whole-GPU flavors carry CPU and memory too.
    first = CPU_MEMORY + ((names.GPU_RESOURCE,) if merged or names.GPU_RESOURCE not in offered else ())
    groups: list[tuple[tuple[str, ...], list[str]]] = [(first, [names.KUEUE_CPU_MEMORY_FLAVOR])]
    for resource in first:
        nominal = Fraction(0) if merged and resource == names.GPU_RESOURCE else team_quota(team, resource)
        quotas[(names.KUEUE_CPU_MEMORY_FLAVOR, resource)] = FlavorQuota(
            names.KUEUE_CPU_MEMORY_FLAVOR, resource, nominal, *_limits(resource, nominal, borrow, lend))
    for resource in offered:
        offering = [f for f in flavors if f.resource == resource]
        mine = _candidates(team, offering)
        # Its own pools first (Kueue tries flavors in order), spot first for batch, no spot for higher tiers.
        ordered = tier_flavors(team, mine + [f for f in offering if f not in mine])
        for f in ordered:
            nominal = Fraction(placed.nominal.get((team.name, f.name), 0))
            quotas[(f.name, resource)] = FlavorQuota(f.name, resource, nominal,
                                                     *_limits(resource, nominal, borrow, lend))
        if not ordered:  # only spot offers it: covered at 0 with nothing to borrow, so never admitted
            ordered = offering
            quotas.update({(f.name, resource): FlavorQuota(f.name, resource, Fraction(0), Fraction(0), Fraction(0))
                           for f in offering})
        if merged and resource == names.GPU_RESOURCE:
            for f in ordered:
                quotas.update(_node_share(f, quotas[(f.name, resource)].nominal, borrow, lend))
            groups[0][1].extend(f.name for f in ordered)
            continue
        groups.append(((resource,), [f.name for f in ordered]))
    return TeamQueue(team.name, tier, team.queue.weight, borrow_text, lend_text, groups, quotas)


def by_topology(flavors: Sequence[GpuFlavor]) -> bool:
    """Some whole-GPU flavor names the Topology: CPU and memory then share a resource group with whole GPUs."""
    return any(f.topology and f.resource == names.GPU_RESOURCE for f in flavors)


def _node_share(f: GpuFlavor, gpus: Fraction, borrow: Fraction, lend: Fraction) -> dict[tuple[str, str], FlavorQuota]:
    """CPU and memory quota on a whole-GPU flavor: the share of its nodes the team's nominal GPUs there are, so a
    pod's CPU and memory come with its GPUs, as the node holds them (its limits are the tier's percentages)."""
    out = {}
    for resource, per_unit in ((CPU, f.cpu_per_unit), (MEMORY, f.memory_per_unit)):
        nominal = floor_to_unit(resource, gpus * per_unit)
        out[(f.name, resource)] = FlavorQuota(f.name, resource, nominal, *_limits(resource, nominal, borrow, lend))
    return out


def topology_pools(spec: "QueueScope") -> list[str]:
    """The pools Kueue places by topology, in stack-file order."""
    return [p.name for p in spec.node_pools if schedules_by_topology(p, spec.queueing)]


def quota_ceiling(spec: "QueueScope", team: "TeamSpec") -> dict[str, str]:
    """ResourceQuota `hard` entries when queueing is on: nominal + borrowing limit per queued resource, so
    the quota never refuses a pod Kueue admitted on borrowed capacity."""
    return {names.quota_key(t.resource): format_quantity(t.resource, t.ceiling)
            for t in team_queue(spec, team).totals()}


# --- stack-file rules (spec_rules calls these once every pool is valid) ---

def queueing_rules(spec: "QueueScope") -> Iterator[Problem]:
    q = spec.queueing
    if not q.enabled:
        for i, team in enumerate(spec.teams):
            if team.queue.model_fields_set:
                yield TEAMS.index(i) / "queue", "applies when queueing.mode is kueue"
        for field in ("fairSharing", "debugQueue"):
            if getattr(q, _snake(field)) is not None:
                yield FieldPath.of(f"queueing.{field}"), "applies when queueing.mode is kueue"
        return
    if q.chart_version is None or q.chart_version not in catalog.KUEUE_RELEASES:
        yield (FieldPath.of("queueing.chartVersion"),
               f"pin a Kueue chart version: one of {', '.join(catalog.KUEUE_RELEASES)}")
    pools = [p.name for p in spec.node_pools]
    for i, pool in enumerate(spec.node_pools):
        if pool.name == names.KUEUE_CPU_MEMORY_FLAVOR:
            yield (NODE_POOLS.index(i) / "name",
                   f"{pool.name!r} is the name of the CPU and memory flavor; choose another")
        if len(pool.taints) > MAX_FLAVOR_TAINTS:
            yield NODE_POOLS.index(i) / "taints", f"a Kueue flavor carries at most {MAX_FLAVOR_TAINTS} taints"
    groups = 1 + len(gpu_resources(spec))
    if groups > MAX_RESOURCE_GROUPS:
        yield NODE_POOLS, (f"Kueue allows {MAX_RESOURCE_GROUPS} resource groups per queue: CPU and memory plus one per "
                            f"GPU resource; the pools offer {groups - 1} GPU resources")
    for i, team in enumerate(spec.teams):
        if names.team_namespace(team.name) == q.namespace:
            yield TEAMS.index(i) / "name", f"{team.name!r} is Kueue's namespace (queueing.namespace); choose another"
        if team.queue.lending_limit is not None and percent(team.queue.lending_limit) > 1:
            yield (TEAMS.index(i) / "queue.lendingLimit",
                   "must be at most 100%: a team cannot lend more than its nominal quota")
        for j, listed in enumerate(team.queue.pools):
            if listed not in pools:
                yield (TEAMS.index(i) / "queue.pools").index(j), f"unknown pool {listed!r}; pools: {', '.join(pools)}"
        if len(set(team.queue.pools)) != len(team.queue.pools):
            yield TEAMS.index(i) / "queue.pools", "lists a pool twice"
        yield from sub_team_rules(q, i, team)
    yield from _queue_name_rules(spec)
    if all(p in pools for t in spec.teams for p in t.queue.pools):
        placed = placement(spec)
        yield from placed.problems
        if not placed.problems and all(sum(percent(s.share) for s in t.queue.sub_teams) in (0, 1) for t in spec.teams):
            for i, team in enumerate(spec.teams):
                yield from sub_team_share_rules(spec, i, team, placed)


def _queue_name_rules(spec: "QueueScope") -> Iterator[Problem]:
    """A sub-team's ClusterQueue (`team-<team>-<sub-team>`) must not be another team's (`team-<team>`)."""
    teams = {names.cluster_queue(t.name) for t in spec.teams}
    for i, team in enumerate(spec.teams):
        for j, sub in enumerate(team.queue.sub_teams):
            if names.sub_team_cluster_queue(team.name, sub.name) in teams:
                yield ((TEAMS.index(i) / "queue.subTeams").index(j) / "name",
                       f"its ClusterQueue {names.sub_team_cluster_queue(team.name, sub.name)!r} would be another "
                       "team's; choose another name")


# --- a team's LocalQueues: its own, its sub-teams', the debug queue ---

WHOLE_TEAM = 100  # the weight of a queue the whole team shares, in percent of the team: sub-team shares add up to it


@dataclass(frozen=True)
class LocalQueueShare:
    name: str
    weight: int  # admission fair sharing: a queue's recent use is divided by it before queues are ordered
    cluster_queue: str = ""  # the ClusterQueue it feeds: a sub-team's own, or (empty) the team's


def local_queues(queueing: "QueueingSpec", team: "TeamSpec") -> list[LocalQueueShare]:
    """The team's LocalQueues: its own and the debug queue feed the team's ClusterQueue, each sub-team's feeds the
    sub-team's ClusterQueue in the team cohort. Admission fair sharing orders each ClusterQueue's workloads by
    their LocalQueue's use over the last half-lives per weight."""
    out = [LocalQueueShare(names.TEAM_LOCAL_QUEUE, WHOLE_TEAM)]
    if queueing.debug_queue is not None:
        out.append(LocalQueueShare(names.DEBUG_LOCAL_QUEUE, WHOLE_TEAM))
    out.extend(LocalQueueShare(s.name, WHOLE_TEAM, names.sub_team_cluster_queue(team.name, s.name))
               for s in team.queue.sub_teams)
    return out


def usage_weights(spec: "QueueScope") -> dict[str, float]:
    """Admission fair sharing's resourceWeights: GPU time decides. Kueue weighs an unlisted resource 1 and
    counts memory in bytes, so CPU and memory weigh 0; a whole GPU weighs 1 and a MIG slice its share of the
    GPU's compute, as the cost section counts it."""
    out: dict[str, float] = {CPU: 0.0, MEMORY: 0.0}
    for pool in spec.node_pools:
        for resource in node_resources(pool, spec.mig_strategy):
            if resource.startswith(names.MIG_RESOURCE_PREFIX):
                share = catalog.mig_compute_share(pool.gpu, resource.removeprefix(names.MIG_RESOURCE_PREFIX))
                out.setdefault(resource, round(share, 4))
            else:
                out[resource] = 1.0
    return out


# --- sub-teams: the team a Cohort, each sub-team a ClusterQueue holding its share of the team's quota ---

@dataclass(frozen=True)
class SubTeamQueue:
    """A sub-team's ClusterQueue in the team's cohort. It may borrow up to the team's whole ceiling (the other
    sub-teams' idle share first, then what the team cohort may borrow) and lends all its nominal quota inside
    the team: the team cohort's limits decide what leaves or enters the team."""

    name: str  # the sub-team (its LocalQueue)
    cluster_queue: str
    share: Fraction
    quotas: dict[tuple[str, str], FlavorQuota]  # (flavor, resource) -> quota, in the team queue's order


def _unit(resource: str) -> Fraction:
    return Fraction(1, 1000) if resource == CPU else Fraction(1)


def split(total: Fraction, shares: Sequence[Fraction], unit: Fraction) -> list[Fraction]:
    """`total` split by `shares` (adding up to 1) in whole units, rounded so the parts add up to `total` exactly:
    each part rounded down, the units left over to the largest remainders (ties: the earlier part)."""
    units = total / unit
    exact = [units * s for s in shares]
    parts = [math.floor(e) for e in exact]
    left = int(units) - sum(parts)
    order = sorted(range(len(shares)), key=lambda k: (-(exact[k] - parts[k]), k))
    for k in order[:max(left, 0)]:
        parts[k] += 1
    return [p * unit for p in parts]


def sub_team_queues(team: "TeamSpec", queue: TeamQueue) -> list[SubTeamQueue]:
    """Each sub-team's share of every resource of the team's queue: the team's total split by shares (exact
    sum), then laid on the team's flavors in its order, sub-teams in order, so each flavor's nominal quota is
    the team's exactly and capacity still holds. Empty without sub-teams."""
    subs = team.queue.sub_teams
    if not subs:
        return []
    shares = [percent(s.share) for s in subs]
    parts: list[dict[tuple[str, str], Fraction]] = [{} for _ in subs]
    for total in queue.totals():
        on = [q for q in queue.quotas.values() if q.resource == total.resource]
        if total.resource in CPU_MEMORY:  # split on each flavor: it comes with the GPUs there (topology pools)
            for q in on:
                for k, part in enumerate(split(q.nominal, shares, _unit(q.resource))):
                    parts[k][(q.flavor, q.resource)] = part
            continue
        left = {q.flavor: q.nominal for q in on}
        for k, part in enumerate(split(total.nominal, shares, _unit(total.resource))):
            for q in on:
                take = min(part, left[q.flavor])
                left[q.flavor] -= take
                part -= take
                parts[k][(q.flavor, q.resource)] = take
    # Alone a sub-team may use the team's whole ceiling on a flavor; it lends all it holds inside the team.
    quotas = [{key: FlavorQuota(q.flavor, q.resource, mine[key], q.nominal - mine[key] + q.borrowing_limit, mine[key])
               for key, q in queue.quotas.items()} for mine in parts]
    return [SubTeamQueue(s.name, names.sub_team_cluster_queue(team.name, s.name), shares[k], quotas[k])
            for k, s in enumerate(subs)]


def sub_team_totals(sub: SubTeamQueue, resource: str) -> Fraction:
    return sum((q.nominal for q in sub.quotas.values() if q.resource == resource), Fraction(0))


def team_cohort_limits(queue: TeamQueue) -> dict[tuple[str, str], FlavorQuota]:
    """The team cohort's own quotas: no nominal of its own (its sub-teams hold it), and the team's borrowing and
    lending limits, which bound the whole team against the platform's cohort as its one ClusterQueue did."""
    return {k: FlavorQuota(q.flavor, q.resource, Fraction(0), q.borrowing_limit, q.lending_limit)
            for k, q in queue.quotas.items()}


def whole_team_limits(queue: TeamQueue) -> dict[tuple[str, str], FlavorQuota]:
    """The team's own ClusterQueue when it has sub-teams: `team-queue` and `debug` feed it, it holds no nominal
    quota and runs on what the sub-teams leave idle, up to the team's ceiling; it lends nothing."""
    return {k: FlavorQuota(q.flavor, q.resource, Fraction(0), q.nominal + q.borrowing_limit, Fraction(0))
            for k, q in queue.quotas.items()}


def sub_team_share_rules(spec: "QueueScope", i: int, team: "TeamSpec", placed: Placement) -> Iterator[Problem]:
    """A sub-team whose share gives it none of a GPU resource the team holds would have no guarantee of it: its
    work there runs only on borrowed quota, which any other sub-team may take back. Refused, naming the share."""
    queue = team_queue(spec, team, placed)
    for j, sub in enumerate(sub_team_queues(team, queue)):
        empty = [t.resource for t in queue.totals()
                 if t.resource not in CPU_MEMORY and t.nominal and not sub_team_totals(sub, t.resource)]
        if empty:
            yield ((TEAMS.index(i) / "queue.subTeams").index(j) / "share",
                   f"{team.queue.sub_teams[j].share} of the team's quota is less than one of {', '.join(empty)}: the "
                   "sub-team would hold no guarantee of it; raise its share, raise the team's quota, or merge sub-teams")


def sub_team_rules(queueing: "QueueingSpec", i: int, team: "TeamSpec") -> Iterator[Problem]:
    subs = team.queue.sub_teams
    if not subs:
        return
    field = TEAMS.index(i) / "queue.subTeams"
    if queueing.fair_sharing is None:
        yield field, ("sub-teams come with admission fair sharing in each of the team's queues: set "
                      "queueing.fairSharing (e.g. {usageHalfLife: 168h})")
    total = sum(percent(s.share) for s in subs)
    if total != 1:
        yield field, f"the shares add up to {float(total) * 100:g}%; they split the team's quota, so they add up to 100%"
    reserved = {names.TEAM_LOCAL_QUEUE, names.DEBUG_LOCAL_QUEUE}
    seen: set[str] = set()
    for j, sub in enumerate(subs):
        if sub.name in reserved or sub.name in seen:
            yield (field.index(j) / "name",
                   f"{sub.name!r} names another queue of the team; names other than {', '.join(sorted(reserved | seen))}")
        if percent(sub.share) == 0:
            yield field.index(j) / "share", "a sub-team's share is above 0%"
        seen.add(sub.name)


def _snake(camel: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in camel)


def queue_labels(spec: "QueueScope", team: "TeamSpec") -> dict[str, str]:
    """Labels that queue a workload of `team` (none when queueing is off): its LocalQueue, and the
    WorkloadPriorityClass of its tier. They go on the Job (or Deployment) and on its pod template."""
    if not spec.queueing.enabled:
        return {}
    return {names.KUEUE_QUEUE_NAME_LABEL: names.TEAM_LOCAL_QUEUE,
            names.KUEUE_PRIORITY_CLASS_LABEL: names.priority_class(team.priority_tier)}
