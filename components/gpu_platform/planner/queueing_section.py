"""The plan's `queueing` section: per team, what Kueue guarantees (nominal), what it may borrow, and the
ceiling its ResourceQuota holds; per flavor, capacity at max size beside the nominal quotas placed on it.

Computed from the validated spec of the stack being planned (decisions/queueing.py does the numbers the
program renders), only when `queueing.mode` is kueue. Quantities are Kubernetes quantity strings. JSON
shape in docs/queueing.md; `VERSION` changes only when a field changes meaning.
"""
from __future__ import annotations

from typing import Any, Optional

from gpu_platform.decisions.queueing import (CPU_MEMORY, SPOT, TeamQueue, format_quantity, gpu_flavors, local_queues,
                                             placement, sub_team_queues, sub_team_totals, team_queue, topology_pools,
                                             usage_weights)
from gpu_platform.decisions.topology import DEFAULT_TOPOLOGY_LEVEL, TOPOLOGY_LEVELS
from gpu_platform.facts import names
from gpu_platform.planner.capacity_section import short
from gpu_platform.planner.sections import PlanContext, Section, register
from gpu_platform.planner.tables import md_table, text_table
from gpu_platform.spec.models import PlatformSpec, TeamSpec

NAME = "queueing"
TITLE = "Fair sharing (Kueue): nominal, borrowable and ceiling per team"
VERSION = 1


def build(ctx: PlanContext) -> Optional[dict[str, Any]]:
    if ctx.spec is None or not ctx.spec.queueing.enabled:
        return None
    return from_spec(ctx.spec)


def from_spec(spec: PlatformSpec) -> dict[str, Any]:
    placed = placement(spec)
    spot = {f.name for f in gpu_flavors(spec) if f.capacity_type == SPOT}  # covered at 0 for tiers never on spot
    teams = []
    for team in spec.teams:
        queue = team_queue(spec, team, placed)
        teams.append({
            "name": team.name, "tier": team.priority_tier, "weight": queue.weight,
            "clusterQueue": names.cluster_queue(team.name), "localQueue": names.TEAM_LOCAL_QUEUE,
            # Every LocalQueue feeding the team's ClusterQueue, with its admission fair sharing weight.
            "localQueues": [{"name": lq.name, "weight": lq.weight} for lq in local_queues(spec.queueing, team)],
            # With sub-teams the team is a Cohort under the platform's, each sub-team a ClusterQueue in it.
            "teamCohort": names.team_cohort(team.name) if team.queue.sub_teams else None,
            "subTeams": _sub_teams(team, queue),
            "borrowingLimit": queue.borrowing_limit, "lendingLimit": queue.lending_limit,
            "preemption": {"withinClusterQueue": queue.tier.within_cluster_queue,
                           "reclaimWithinCohort": queue.tier.reclaim_within_cohort},
            "spot": "first" if queue.tier.on_spot else "never",
            # The order Kueue tries flavors in, per GPU resource: the only flavors the team's work may land on.
            "flavorOrder": [{"resource": resource, "flavors": [f for f in flavors if queue.tier.on_spot or f not in spot]}
                            for resource, flavors in _gpu_flavor_order(queue.groups)],
            "resources": [{"resource": t.resource, "nominal": format_quantity(t.resource, t.nominal),
                           "borrowable": format_quantity(t.resource, t.borrowable),
                           "lendable": format_quantity(t.resource, t.lendable),
                           "ceiling": format_quantity(t.resource, t.ceiling)} for t in queue.totals()],
            "flavors": [{"flavor": q.flavor, "resource": q.resource, "nominal": format_quantity(q.resource, q.nominal),
                         "borrowingLimit": format_quantity(q.resource, q.borrowing_limit),
                         "lendingLimit": format_quantity(q.resource, q.lending_limit)}
                        for q in queue.quotas.values()],
        })
    flavors = [{"name": f.name, "pool": f.pool, "resource": f.resource, "gpu": f.gpu, "migProfile": f.mig_profile,
                "capacityType": f.capacity_type, "capacityAtMax": f.capacity,
                "nominal": f.capacity - placed.left[f.name], "unplaced": placed.left[f.name],
                **({"topology": names.KUEUE_TOPOLOGY} if f.topology else {})}
               for f in gpu_flavors(spec)]
    by_topology = topology_pools(spec)
    topology = {"name": names.KUEUE_TOPOLOGY, "levels": list(TOPOLOGY_LEVELS), "pools": by_topology,
                "defaultLevel": DEFAULT_TOPOLOGY_LEVEL} if by_topology else None
    return {"version": VERSION, "mode": spec.queueing.mode, "chartVersion": spec.queueing.chart_version,
            "cohort": names.KUEUE_COHORT, "flavors": flavors, "teams": teams, "topology": topology,
            "runtimeCeilingHours": dict(spec.queueing.runtime_ceiling_hours), "fairSharing": _fair_sharing(spec),
            "debugQueue": _debug_queue(spec)}


def _sub_teams(team: TeamSpec, queue: TeamQueue) -> list[dict[str, Any]]:
    """Each sub-team's ClusterQueue and its nominal quota per resource (its share of the team's, exact sum)."""
    out = []
    for spec_sub, sub in zip(team.queue.sub_teams, sub_team_queues(team, queue), strict=True):
        nominal = [{"resource": t.resource, "nominal": format_quantity(t.resource, sub_team_totals(sub, t.resource))}
                   for t in queue.totals() if t.nominal]
        out.append({"name": sub.name, "share": spec_sub.share, "clusterQueue": sub.cluster_queue, "nominal": nominal})
    return out


def _fair_sharing(spec: PlatformSpec) -> Optional[dict[str, Any]]:
    fair = spec.queueing.fair_sharing
    if fair is None:
        return None
    return {"mode": "UsageBasedAdmissionFairSharing", "usageHalfLife": fair.usage_half_life,
            "usageSamplingInterval": fair.usage_sampling_interval, "resourceWeights": usage_weights(spec)}


def _debug_queue(spec: PlatformSpec) -> Optional[dict[str, Any]]:
    debug = spec.queueing.debug_queue
    if debug is None:
        return None
    return {"localQueue": names.DEBUG_LOCAL_QUEUE, "runtimeCeilingMinutes": debug.runtime_ceiling_minutes}


def _gpu_flavor_order(groups: list[tuple[tuple[str, ...], list[str]]]) -> list[tuple[str, list[str]]]:
    """Each GPU resource and the GPU flavors Kueue tries for it, in order (CPU and memory's flavor left out: it
    carries no GPUs, also where whole GPUs share its group)."""
    out = []
    for covered, flavors in groups:
        gpu_flavors_ = [f for f in flavors if f != names.KUEUE_CPU_MEMORY_FLAVOR]
        out += [(r, gpu_flavors_) for r in covered if r not in CPU_MEMORY and gpu_flavors_]
    return out


def _topology_line(section: dict[str, Any]) -> str:
    t = section.get("topology")
    if not t:
        return "No pool schedules by topology (Kueue's topology-aware scheduling: EFA pools of whole GPUs on described types)."
    return (f"Topology-aware: {', '.join(t['pools'])} schedule by Topology {t['name']} "
            f"({' > '.join(label.rsplit('/', 1)[-1] for label in t['levels'])}); their flavors admit only pod sets "
            f"asking for topology, and carry their nodes' CPU and memory with the GPU quota; multi-node gpu_job "
            f"prefers one {t['defaultLevel'].rsplit('/', 1)[-1]} domain.")


def _ceilings(section: dict[str, Any]) -> str:
    """The runtime ceilings per tier, as Kueue's maximum execution time of each job the helper writes."""
    given = section.get("runtimeCeilingHours") or {}
    if not given:
        return "Runtime ceilings: none (queueing.runtimeCeilingHours)."
    tiers = ", ".join(f"{tier} {hours}h" for tier, hours in sorted(given.items()))
    return f"Runtime ceilings (Kueue maximum execution time of each GPU job): {tiers}."


def _sharing(section: dict[str, Any]) -> list[str]:
    """Admission fair sharing, the debug queue and each team's sub-teams, one line each."""
    fair, debug = section.get("fairSharing"), section.get("debugQueue")
    if fair is None:
        out = ["Admission fair sharing: off (queueing.fairSharing); each team's queue admits in priority, then FIFO order."]
    else:
        gpu = ", ".join(f"{short(r)} {w:g}" for r, w in fair["resourceWeights"].items() if w)
        out = [f"Admission fair sharing: within each team's queue, its LocalQueues' workloads go in the order of their "
               f"GPU time over recent weeks per weight (use counts half after {fair['usageHalfLife']}, sampled every "
               f"{fair['usageSamplingInterval']}; weights {gpu}; CPU and memory 0)."]
    if debug is not None:
        out.append(f"Debug queue: LocalQueue {debug['localQueue']} in every team namespace, GPU jobs of at most "
                   f"{debug['runtimeCeilingMinutes']} minutes (held by admission policy).")
    for team in section["teams"]:
        subs = team.get("subTeams") or []
        if subs:
            out.append(f"Sub-teams of {team['name']}: cohort {team['teamCohort']} under {section['cohort']}; "
                       + "; ".join(f"{s['name']} {s['share']} (ClusterQueue {s['clusterQueue']}, nominal "
                                   + ", ".join(f"{short(n['resource'])} {n['nominal']}" for n in s["nominal"]
                                               if n["resource"] not in CPU_MEMORY) + ")"
                                   for s in subs)
                       + f". Idle sub-team quota is lent inside the team first; {team['localQueue']} and the debug "
                       f"queue feed {team['clusterQueue']}, which holds no nominal quota of its own.")
    return out


def _held(team: dict[str, Any], resource: str) -> str:
    """Where the team's nominal quota of a resource sits: `a100-train 12, l4-inference 2`."""
    return ", ".join(f"{f['flavor']} {f['nominal']}" for f in team["flavors"]
                     if f["resource"] == resource and f["nominal"] != "0")


def _team_rows(section: dict[str, Any]) -> list[list[str]]:
    rows = []
    for team in section["teams"]:
        used = [r for r in team["resources"] if r["ceiling"] != "0"]  # a resource the team has none of stays at 0
        for i, r in enumerate(used):
            head = [team["name"], f"{team['tier']} (weight {team['weight']:g})"] if i == 0 else ["", ""]
            rows.append([*head, short(r["resource"]), r["nominal"], r["borrowable"], r["ceiling"], r["lendable"],
                         _held(team, r["resource"]) or "-"])
    return rows


def _order_rows(section: dict[str, Any]) -> list[list[str]]:
    """Per team and GPU resource, the flavors its work may use, in the order Kueue tries them."""
    rows = []
    for team in section["teams"]:
        for i, group in enumerate(team["flavorOrder"]):
            head = [team["name"], f"{team['tier']} (spot {team['spot']})"] if i == 0 else ["", ""]
            rows.append([*head, short(group["resource"]), " > ".join(group["flavors"]) or "none (only spot offers it)"])
    return rows


def _flavor_rows(section: dict[str, Any]) -> list[list[str]]:
    return [[f["name"], f["pool"], short(f["resource"]), f["capacityType"], str(f["capacityAtMax"]), str(f["nominal"]),
             str(f["unplaced"])] for f in section["flavors"]]


TEAM_HEADERS = ["Team", "Tier", "Resource", "Nominal", "Borrowable", "Ceiling", "Lendable", "Nominal on flavors"]
ORDER_HEADERS = ["Team", "Tier", "Resource", "Flavors it may use, in order"]
FLAVOR_HEADERS = ["Flavor", "Pool", "Resource", "Capacity type", "At max", "Nominal", "Unplaced"]


def text(section: dict[str, Any]) -> str:
    lines = text_table(TEAM_HEADERS, _team_rows(section), right=(3, 4, 5, 6))
    lines.append("")
    lines += text_table(ORDER_HEADERS, _order_rows(section))
    lines.append("")
    lines += text_table(FLAVOR_HEADERS, _flavor_rows(section), right=(4, 5, 6))
    lines.append(f"  Kueue {section['chartVersion']}, cohort {section['cohort']}. Ceiling = nominal + borrowable "
                 "(the team's ResourceQuota); nominal quotas fit capacity at max size.")
    lines.append(f"  {_topology_line(section)}")
    lines.append(f"  {_ceilings(section)}")
    lines += [f"  {line}" for line in _sharing(section)]
    return "\n".join(lines)


def markdown(section: dict[str, Any]) -> str:
    lines = [*md_table(TEAM_HEADERS, _team_rows(section), right=(3, 4, 5, 6)), "",
             *md_table(ORDER_HEADERS, _order_rows(section)), "",
             "<details><summary>Flavors: capacity at max size and the nominal quota placed on it</summary>", "",
             *md_table(FLAVOR_HEADERS, _flavor_rows(section), right=(4, 5, 6)), "", "</details>", "",
             _topology_line(section), "", _ceilings(section), *(f"\n{line}" for line in _sharing(section))]
    return "\n".join(lines)


SECTION = register(Section(NAME, TITLE, build, text, markdown, needs_platform=True))
