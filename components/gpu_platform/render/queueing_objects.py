"""Kueue's objects, its chart values and the admission policy that keeps GPU pods queued, as plain manifests.

Pure, like team_objects: each function builds a complete object from validated settings and the numbers
in decisions/queueing.py; `kueue.py` registers them unchanged, so the object the CRD schema check and
kubernetes-validate see is the object the program sends.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any
from collections.abc import Mapping, Sequence

import yaml

from gpu_platform.decisions.queueing import (FAIR_SHARING_STRATEGIES, GpuFlavor, TeamQueue, by_topology,
                                             format_quantity)
from gpu_platform.decisions.topology import TOPOLOGY_LEVELS
from gpu_platform.facts import catalog, names
from gpu_platform.render.admission import API_VERSION, ASKS_FOR_GPUS, binding, team_namespaces
from gpu_platform.render.team_objects import PRIORITY_TIERS, _meta, _team_meta

if TYPE_CHECKING:
    from gpu_platform.spec.models import TeamSpec

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


def cluster_queue(team: "TeamSpec", queue: TeamQueue) -> dict[str, Any]:
    groups = []
    for covered, flavors in queue.groups:
        entries = []
        for flavor in flavors:
            resources = []
            for resource in covered:
                q = queue.quotas[(flavor, resource)]
                resources.append({"name": resource, "nominalQuota": format_quantity(resource, q.nominal),
                                  "borrowingLimit": format_quantity(resource, q.borrowing_limit),
                                  "lendingLimit": format_quantity(resource, q.lending_limit)})
            entries.append({"name": flavor, "resources": resources})
        groups.append({"coveredResources": list(covered), "flavors": entries})
    spec = {
        "cohortName": names.KUEUE_COHORT,
        "namespaceSelector": {"matchLabels": {names.NAMESPACE_NAME_LABEL: names.team_namespace(team.name)}},
        "queueingStrategy": "BestEffortFIFO",
        # Use the team's own quota on any flavor before borrowing on one.
        "flavorFungibility": {"whenCanBorrow": "TryNextFlavor", "whenCanPreempt": "TryNextFlavor"},
        "preemption": {"withinClusterQueue": queue.tier.within_cluster_queue,
                       "reclaimWithinCohort": queue.tier.reclaim_within_cohort},
        "fairSharing": {"weight": _weight(queue.weight)},
        "resourceGroups": groups,
    }
    labels = {names.TEAM_LABEL: team.name, names.PRIORITY_TIER_LABEL: team.priority_tier}
    return _kueue("ClusterQueue", _meta(names.cluster_queue(team.name), labels=labels), spec=spec)


def local_queue(team: "TeamSpec") -> dict[str, Any]:
    return _kueue("LocalQueue", _team_meta(team, names.TEAM_LOCAL_QUEUE),
                  spec={"clusterQueue": names.cluster_queue(team.name)})


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


# --- the controller: its Configuration and the chart values ---

def manager_config(dra: bool = False) -> dict[str, Any]:
    """The controller's Configuration (config.kueue.x-k8s.io/v1beta2). The chart takes it whole, so the
    listeners its Services and probes expect are set here too. With DRA pools, GPUs claimed through the
    driver's DeviceClass count as nvidia.com/gpu (Kueue 0.19 deviceClassMappings, read at start-up): one
    quota per team covers both allocation modes, and a claim of an unmapped class is inadmissible."""
    resources: dict[str, Any] = {"excludeResourcePrefixes": list(catalog.KUEUE_EXCLUDED_RESOURCE_PREFIXES)}
    if dra:
        resources["deviceClassMappings"] = [{"name": names.GPU_RESOURCE, "deviceClassNames": [names.DRA_GPU_CLASS]}]
    return {
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


def chart_values(prod: bool, system_node_selector: Mapping[str, str], prometheus_namespace: str | None,
                 dra: bool = False) -> dict[str, Any]:
    """Kueue chart values (every key checked against the chart: tests/render/test_queueing_objects.py)."""
    manager: dict[str, Any] = {"replicas": 2 if prod else 1,  # leader election keeps one active; both serve webhooks
                     "nodeSelector": dict(system_node_selector)}
    if prod:
        manager["podDisruptionBudget"] = {"enabled": True, "minAvailable": 1}
    values: dict[str, Any] = {
        "controllerManager": manager,
        "managerConfig": {"controllerManagerConfigYaml": yaml.safe_dump(manager_config(dra), sort_keys=False)},
        "enablePrometheus": prometheus_namespace is not None,
    }
    if prometheus_namespace is not None:
        values["metrics"] = {"prometheusNamespace": prometheus_namespace}
    return values


def queueing_manifests(teams: Sequence["TeamSpec"], queues: dict[str, TeamQueue], flavors: list[GpuFlavor]) -> dict[str, dict[str, Any]]:
    """Every Kueue object and the admission policy, keyed by a stable logical name."""
    out = {f"flavor-{names.KUEUE_CPU_MEMORY_FLAVOR}": cpu_memory_flavor()}
    if by_topology(flavors):
        out["topology"] = topology()
    out.update({f"flavor-{f.name}": resource_flavor(f) for f in flavors})
    out["cohort"] = cohort()
    out.update({f"priority-{tier}": workload_priority_class(tier) for tier in PRIORITY_TIERS})
    for team in teams:
        out[f"queue-{team.name}"] = cluster_queue(team, queues[team.name])
        out[f"local-queue-{team.name}"] = local_queue(team)
    out["policy"] = queued_gpu_pods_policy()
    out["policy-binding"] = queued_gpu_pods_binding()
    return out

