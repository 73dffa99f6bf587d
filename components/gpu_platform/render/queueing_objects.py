"""Kueue's objects, its chart values and the admission policy that keeps GPU pods queued, as plain manifests.

Pure, like team_objects: each function builds a complete object from validated settings and the numbers
in decisions/queueing.py; `kueue.py` registers them unchanged, so the object the CRD schema check and
kubernetes-validate see is the object the program sends.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any
from collections.abc import Mapping, Sequence

import yaml

from gpu_platform.decisions.queueing import (FAIR_SHARING_STRATEGIES, FlavorQuota, GpuFlavor, LocalQueueShare,
                                             SubTeamQueue, TeamQueue, by_topology, format_quantity, local_queues,
                                             sub_team_queues, team_cohort_limits, whole_team_limits)
from gpu_platform.decisions.runtime import debug_ceiling_seconds, tier_ceilings_seconds
from gpu_platform.decisions.topology import TOPOLOGY_LEVELS
from gpu_platform.facts import catalog, names
from gpu_platform.render.admission import API_VERSION, ASKS_FOR_GPUS, binding, team_namespaces
from gpu_platform.render.team_objects import PRIORITY_TIERS, _meta, _team_meta

if TYPE_CHECKING:
    from gpu_platform.spec.models import FairSharingSpec, QueueingSpec, TeamSpec

ADMISSION_API_VERSION = API_VERSION
METRICS_PORT = 8443  # the chart's metrics Service targets this port: the manager must bind it
WEBHOOK_PORT = 9443  # the chart's webhook Service targets this port
HEALTH_PORT = 8081  # the chart's probes
LEADER_ELECTION_ID = "c1f6bfd2.kueue.x-k8s.io"  # the chart's default lease name: replicas share one lease


def _kueue(kind: str, metadata: dict[str, Any], **fields: Any) -> dict[str, Any]:
    return {"apiVersion": catalog.KUEUE_API_VERSION, "kind": kind, "metadata": metadata, **fields}


def _gpu_toleration() -> dict[str, Any]:
    return {"key": names.GPU_TAINT_KEY, "operator": "Equal", "value": names.GPU_TAINT_VALUE, "effect": "NoSchedule"}


def resource_flavor(flavor: GpuFlavor) -> dict[str, Any]:
    """One pool's GPUs of one resource. Admitted pods get the pool's node selector and the GPU toleration;
    a pool's own taints stay taints, so only workloads tolerating them (selecting the pool) get its flavor."""
    labels = {names.POOL_LABEL: flavor.pool, names.GPU_MODEL_LABEL: flavor.gpu,
              names.CAPACITY_TYPE_LABEL: flavor.capacity_type}
    if flavor.mig_profile:
        labels[names.MIG_PROFILE_LABEL] = flavor.mig_profile.replace("+", ".")
    spec: dict[str, Any] = {"nodeLabels": {names.POOL_LABEL: flavor.pool}}
    if flavor.taints:
        spec["nodeTaints"] = [{"key": k, "value": v, "effect": e} for k, v, e in flavor.taints]
    spec["tolerations"] = [_gpu_toleration()]
    if flavor.topology:  # Kueue places pod sets asking for topology within the Topology's domains on this pool
        spec["topologyName"] = names.KUEUE_TOPOLOGY
    return _kueue("ResourceFlavor", _meta(flavor.name, labels=labels), spec=spec)


def topology() -> dict[str, Any]:
    """The AWS network layers, top first, then the node: the domains a pod set may ask to fit in."""
    return _kueue("Topology", _meta(names.KUEUE_TOPOLOGY),
                  spec={"levels": [{"nodeLabel": label} for label in TOPOLOGY_LEVELS]})


def cpu_memory_flavor() -> dict[str, Any]:
    """CPU and memory are counted once per team, on whichever node a pod lands: no node labels."""
    return _kueue("ResourceFlavor", _meta(names.KUEUE_CPU_MEMORY_FLAVOR), spec={})


def cohort() -> dict[str, Any]:
    return _kueue("Cohort", _meta(names.KUEUE_COHORT), spec={})


def workload_priority_class(tier: str) -> dict[str, Any]:
    """The tier's priority for Kueue's ordering and preemption, equal to its PriorityClass value."""
    t = PRIORITY_TIERS[tier]
    return _kueue("WorkloadPriorityClass", _meta(names.priority_class(tier), labels={names.PRIORITY_TIER_LABEL: tier}),
                  value=t.value, description=t.description)


def _weight(weight: float) -> int | str:
    return int(weight) if float(weight).is_integer() else repr(float(weight))


def _resource_groups(queue: TeamQueue, quotas: Mapping[tuple[str, str], FlavorQuota]) -> list[dict[str, Any]]:
    """The queue's resource groups with the given quota on each flavor and resource."""
    groups = []
    for covered, flavors in queue.groups:
        entries = []
        for flavor in flavors:
            resources = []
            for resource in covered:
                q = quotas[(flavor, resource)]
                resources.append({"name": resource, "nominalQuota": format_quantity(resource, q.nominal),
                                  "borrowingLimit": format_quantity(resource, q.borrowing_limit),
                                  "lendingLimit": format_quantity(resource, q.lending_limit)})
            entries.append({"name": flavor, "resources": resources})
        groups.append({"coveredResources": list(covered), "flavors": entries})
    return groups


def cluster_queue(team: "TeamSpec", queue: TeamQueue, fair: bool = False) -> dict[str, Any]:
    """The team's queue; with `fair` (queueing.fairSharing), workloads of its LocalQueues are admitted in the
    order of each queue's recent use per share (Kueue's admission fair sharing). With sub-teams it sits in the
    team's cohort with no nominal quota of its own (its `team-queue` and `debug` run on what they leave idle)."""
    split = bool(team.queue.sub_teams)
    quotas = whole_team_limits(queue) if split else queue.quotas
    cohort = names.team_cohort(team.name) if split else names.KUEUE_COHORT
    weight = 1 if split else queue.weight  # inside the team cohort; the cohort carries the team's weight
    return _queue(team, names.cluster_queue(team.name), cohort, queue, quotas, weight, fair)


def sub_team_cluster_queue(team: "TeamSpec", queue: TeamQueue, sub: SubTeamQueue, fair: bool = False) -> dict[str, Any]:
    """A sub-team's queue in the team's cohort: its share of the team's nominal quota, lent inside the team
    first; its fair-sharing weight there is its share."""
    q = _queue(team, sub.cluster_queue, names.team_cohort(team.name), queue, sub.quotas, float(sub.share), fair)
    q["metadata"]["labels"][names.SUB_TEAM_LABEL] = sub.name
    return q


def _queue(team: "TeamSpec", name: str, cohort: str, queue: TeamQueue, quotas: Mapping[tuple[str, str], FlavorQuota],
           weight: float, fair: bool) -> dict[str, Any]:
    spec = {
        "cohortName": cohort,
        "namespaceSelector": {"matchLabels": {names.NAMESPACE_NAME_LABEL: names.team_namespace(team.name)}},
        "queueingStrategy": "BestEffortFIFO",
        # Use the team's own quota on any flavor before borrowing on one.
        "flavorFungibility": {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"},
        "preemption": {"withinClusterQueue": queue.tier.within_cluster_queue,
                       "reclaimWithinCohort": queue.tier.reclaim_within_cohort},
        "fairSharing": {"weight": _weight(weight)},
        "resourceGroups": _resource_groups(queue, quotas),
    }
    if fair:
        spec["admissionScope"] = {"admissionMode": "UsageBasedAdmissionFairSharing"}
    labels = {names.TEAM_LABEL: team.name, names.PRIORITY_TIER_LABEL: team.priority_tier}
    return _kueue("ClusterQueue", _meta(name, labels=labels), spec=spec)


def team_cohort(team: "TeamSpec", queue: TeamQueue) -> dict[str, Any]:
    """A team with sub-teams as a Cohort under the platform's: its sub-teams lend and borrow inside it first, and
    its limits (the team's borrowing and lending limits, no nominal quota of its own) bound the whole team
    against the other teams as its one ClusterQueue did; its fair-sharing weight is the team's."""
    spec = {"parentName": names.KUEUE_COHORT, "fairSharing": {"weight": _weight(queue.weight)},
            "resourceGroups": _resource_groups(queue, team_cohort_limits(queue))}
    labels = {names.TEAM_LABEL: team.name, names.PRIORITY_TIER_LABEL: team.priority_tier}
    return _kueue("Cohort", _meta(names.team_cohort(team.name), labels=labels), spec=spec)


def local_queue(team: "TeamSpec", share: LocalQueueShare | None = None, fair: bool = False) -> dict[str, Any]:
    """One of the team's LocalQueues (its own by default); with `fair`, its weight in admission fair sharing."""
    share = share or LocalQueueShare(names.TEAM_LOCAL_QUEUE, 1)
    spec: dict[str, Any] = {"clusterQueue": share.cluster_queue or names.cluster_queue(team.name)}
    if fair:
        spec["fairSharing"] = {"weight": share.weight}
    return _kueue("LocalQueue", _team_meta(team, share.name), spec=spec)


# --- the admission policy: no GPU pod outside the queue in a team namespace ---

# CEL over the pod being created (ASKS_FOR_GPUS: render/admission.py, shared with the team policies).
IS_QUEUED = (f"has(object.metadata.labels) && '{names.KUEUE_QUEUE_NAME_LABEL}' in object.metadata.labels && "
             f"object.metadata.labels['{names.KUEUE_QUEUE_NAME_LABEL}'] != ''")


def queued_gpu_pods_policy() -> dict[str, Any]:
    """Refuse a pod that asks for any nvidia.com/ resource or claims DRA devices in a team namespace unless it
    names a queue: such a pod would hold GPUs Kueue never counted. CPU-only pods are not matched."""
    return {"apiVersion": ADMISSION_API_VERSION, "kind": "ValidatingAdmissionPolicy",
            "metadata": _meta(names.QUEUED_GPU_PODS_POLICY),
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                        "operations": ["CREATE"], "resources": ["pods"]}]},
                "matchConditions": [{"name": "asks-for-gpus", "expression": ASKS_FOR_GPUS}],
                "validations": [{
                    "expression": IS_QUEUED, "reason": "Forbidden",
                    "message": (f"GPU pods in team namespaces must wait in the team's queue: label the pod (or the "
                                f"Job's pod template) {names.KUEUE_QUEUE_NAME_LABEL}: {names.TEAM_LOCAL_QUEUE}; "
                                "gpu_platform.render.workloads.gpu_pod_metadata and gpu_job do"),
                }],
            }}


def queued_gpu_pods_binding() -> dict[str, Any]:
    return binding(queued_gpu_pods_policy())


# --- the admission policy: a GPU Job carries its runtime ceiling, and no more than its tier's ---

# The same test over a Job's pod template as ASKS_FOR_GPUS is over a pod.
JOB_ASKS_FOR_GPUS = ASKS_FOR_GPUS.replace("object.spec.", "object.spec.template.spec.")
_LABELS = "has(object.metadata.labels)"


def _label(key: str) -> str:
    return f"{_LABELS} && '{key}' in object.metadata.labels ? object.metadata.labels['{key}'] : ''"


def _ceiling(queueing: "QueueingSpec") -> str:
    """CEL: the seconds a GPU Job may run in its namespace's tier and its queue (0: no ceiling)."""
    tiers = tier_ceilings_seconds(queueing)
    by_tier = "{" + ", ".join(f"'{t}': {s}" for t, s in sorted(tiers.items())) + "}"
    expr = f"variables.tier in {by_tier} ? {by_tier}[variables.tier] : 0" if tiers else "0"
    debug = debug_ceiling_seconds(queueing)
    if debug is not None:
        expr = f"variables.queue == '{names.DEBUG_LOCAL_QUEUE}' ? {debug} : ({expr})"
    return expr


def job_ceilings_policy(queueing: "QueueingSpec") -> dict[str, Any]:
    """Refuse a GPU Job in a team namespace that leaves out Kueue's maximum execution time label, or sets it above
    its ceiling: the tier's (queueing.runtimeCeilingHours, the namespace's tier label), or the debug queue's.
    Kueue enforces the label it is given and none when it is missing, so the policy makes every Job carry one."""
    label = names.KUEUE_MAX_EXEC_TIME_LABEL
    tier = (f"has(namespaceObject.metadata.labels) && '{names.PRIORITY_TIER_LABEL}' in namespaceObject.metadata.labels"
            f" ? namespaceObject.metadata.labels['{names.PRIORITY_TIER_LABEL}'] : ''")
    variables = [("queue", _label(names.KUEUE_QUEUE_NAME_LABEL)), ("tier", tier), ("ceiling", _ceiling(queueing)),
                 ("limit", _label(label))]
    where = (f"the team's tier ({', '.join(f'{t}: {h}h' for t, h in sorted(queueing.runtime_ceiling_hours.items()))})"
             if queueing.runtime_ceiling_hours else "")
    if queueing.debug_queue is not None:
        where += ("; " if where else "") + (f"the {names.DEBUG_LOCAL_QUEUE} queue: "
                                            f"{queueing.debug_queue.runtime_ceiling_minutes}m")
    bounded = "variables.limit.matches('^[0-9]{1,9}$') && int(variables.limit) > 0 && int(variables.limit) <= variables.ceiling"
    return {"apiVersion": ADMISSION_API_VERSION, "kind": "ValidatingAdmissionPolicy",
            "metadata": _meta(names.JOB_CEILINGS_POLICY),
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {"resourceRules": [{"apiGroups": ["batch"], "apiVersions": ["v1"],
                                                        "operations": ["CREATE"], "resources": ["jobs"]}]},
                "matchConditions": [{"name": "asks-for-gpus", "expression": JOB_ASKS_FOR_GPUS}],
                "variables": [{"name": n, "expression": e} for n, e in variables],
                "validations": [{
                    "expression": f"variables.ceiling == 0 || ({bounded})", "reason": "Forbidden",
                    "message": (f"a GPU Job here runs for a limited time ({where}): label the Job {label}: <seconds, "
                                f"from 1 to the ceiling>; gpu_platform.render.workloads.gpu_job does"),
                }],
            }}


# --- the controller: its Configuration and the chart values ---

def manager_config(dra: bool = False, fair_sharing: "FairSharingSpec | None" = None,
                   weights: Mapping[str, float] | None = None) -> dict[str, Any]:
    """The controller's Configuration (config.kueue.x-k8s.io/v1beta2). The chart takes it whole, so the
    listeners its Services and probes expect are set here too. With DRA pools, GPUs claimed through the
    driver's DeviceClass count as nvidia.com/gpu (Kueue 0.19 deviceClassMappings, read at start-up): one
    quota per team covers both allocation modes, and a claim of an unmapped class is inadmissible."""
    resources: dict[str, Any] = {"excludeResourcePrefixes": list(catalog.KUEUE_EXCLUDED_RESOURCE_PREFIXES)}
    if dra:
        resources["deviceClassMappings"] = [{"name": names.GPU_RESOURCE, "deviceClassNames": [names.DRA_GPU_CLASS]}]
    config: dict[str, Any] = {
        "apiVersion": catalog.KUEUE_CONFIG_API_VERSION, "kind": "Configuration",
        "health": {"healthProbeBindAddress": f":{HEALTH_PORT}"},
        "metrics": {"bindAddress": f":{METRICS_PORT}", "enableClusterQueueResources": True},
        "webhook": {"port": WEBHOOK_PORT},
        "leaderElection": {"leaderElect": True, "resourceName": LEADER_ELECTION_ID},
        # Only team namespaces: Kueue manages pods there and its pod webhooks ignore every other namespace.
        "managedJobsNamespaceSelector": team_namespaces(),
        # Unlabelled Jobs are not suspended forever; an unqueued GPU pod is refused by the admission policy.
        "manageJobsWithoutQueueName": False,
        "integrations": {"frameworks": list(catalog.KUEUE_FRAMEWORKS)},
        "fairSharing": {"preemptionStrategies": list(FAIR_SHARING_STRATEGIES)},
        "resources": resources,
    }
    if fair_sharing is not None:  # AdmissionFairSharing is a beta gate on by default from Kueue 0.15
        config["admissionFairSharing"] = {"usageHalfLifeTime": fair_sharing.usage_half_life,
                                          "usageSamplingInterval": fair_sharing.usage_sampling_interval,
                                          "resourceWeights": dict(weights or {})}
    return config


def chart_values(prod: bool, system_node_selector: Mapping[str, str], prometheus_namespace: str | None,
                 dra: bool = False, fair_sharing: "FairSharingSpec | None" = None,
                 weights: Mapping[str, float] | None = None) -> dict[str, Any]:
    """Kueue chart values (every key checked against the chart: tests/render/test_queueing_objects.py)."""
    manager: dict[str, Any] = {"replicas": 2 if prod else 1,  # leader election keeps one active; both serve webhooks
                     "nodeSelector": dict(system_node_selector)}
    if prod:
        manager["podDisruptionBudget"] = {"enabled": True, "minAvailable": 1}
    values: dict[str, Any] = {
        "controllerManager": manager,
        "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(
            manager_config(dra, fair_sharing, weights), sort_keys=False)},
        "enablePrometheus": prometheus_namespace is not None,
    }
    if prometheus_namespace is not None:
        values["metrics"] = {"prometheusNamespace": prometheus_namespace}
    return values


def queueing_manifests(teams: Sequence["TeamSpec"], queues: dict[str, TeamQueue], flavors: list[GpuFlavor],
                       queueing: "QueueingSpec | None" = None) -> dict[str, dict[str, Any]]:
    """Every Kueue object and the admission policies, keyed by a stable logical name."""
    fair = queueing is not None and queueing.fair_sharing is not None
    out = {f"flavor-{names.KUEUE_CPU_MEMORY_FLAVOR}": cpu_memory_flavor()}
    if by_topology(flavors):
        out["topology"] = topology()
    out.update({f"flavor-{f.name}": resource_flavor(f) for f in flavors})
    out["cohort"] = cohort()
    out.update({f"priority-{tier}": workload_priority_class(tier) for tier in PRIORITY_TIERS})
    for team in teams:
        queue = queues[team.name]
        if team.queue.sub_teams:
            out[f"cohort-{team.name}"] = team_cohort(team, queue)
        out[f"queue-{team.name}"] = cluster_queue(team, queue, fair)
        for sub in sub_team_queues(team, queue):
            out[f"queue-{team.name}-{sub.name}"] = sub_team_cluster_queue(team, queue, sub, fair)
        for share in local_queues(queueing, team) if queueing is not None else [None]:
            out[local_queue_key(team, share)] = local_queue(team, share, fair)
    out["policy"] = queued_gpu_pods_policy()
    out["policy-binding"] = queued_gpu_pods_binding()
    if queueing is not None and (queueing.runtime_ceiling_hours or queueing.debug_queue is not None):
        out["ceilings-policy"] = job_ceilings_policy(queueing)
        out["ceilings-policy-binding"] = binding(out["ceilings-policy"])
    return out


def local_queue_key(team: "TeamSpec", share: LocalQueueShare | None) -> str:
    """The team's own LocalQueue keeps the key it always had; the others add their name."""
    if share is None or share.name == names.TEAM_LOCAL_QUEUE:
        return f"local-queue-{team.name}"
    return f"local-queue-{team.name}-{share.name}"

