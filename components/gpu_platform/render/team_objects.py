"""The Kubernetes objects of a team's namespace, and the cluster's priority tiers, as plain manifests.

Pure: every function builds a complete manifest (apiVersion, kind, metadata, spec) from a validated team
and what it reads of the cluster around it (`TeamContext`: from the stack file, or from a TeamNamespace's
own arguments). `team.py` hands these dicts to the typed pulumi_kubernetes classes unchanged, so the object
the Kubernetes schema check validates is the object the program registers.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional
from collections.abc import Iterable, Mapping

from gpu_platform.decisions.capacity import largest_gpu_request, platform_capacity
from gpu_platform.decisions.cuda import team_min_cuda
from gpu_platform.decisions.dra import (ClaimShape, DomainShape, dra_pools, team_claim_shapes, team_domain_shapes,
                                        ultraserver_pools)
from gpu_platform.facts import catalog, names
from gpu_platform.render.monitoring import scraping_namespace

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec, TeamAccessSpec, TeamSpec

RBAC_API = "rbac.authorization.k8s.io"
KUEUE_API = "kueue.x-k8s.io"
MONITORING_API = "monitoring.coreos.com"
RBAC_API_VERSION = f"{RBAC_API}/v1"
READ = ("get", "list", "watch")
WRITE = (*READ, "create", "update", "patch", "delete")


@dataclass(frozen=True)
class PriorityTier:
    value: int
    preemption_policy: str
    description: str


# Values sit far below the system classes (2000000000+). Batch never preempts anyone and, being the
# lowest tier, is what the scheduler evicts first when critical inference needs room.
PRIORITY_TIERS: dict[str, PriorityTier] = {
    "critical-inference": PriorityTier(100000, "PreemptLowerPriority",
                                       "Latency-critical inference: preempts standard and batch pods."),
    "standard": PriorityTier(10000, "PreemptLowerPriority", "Default tier for team workloads."),
    "preemptible-batch": PriorityTier(100, "Never",
                                      "Batch and experiments: never preempts, evicted first under pressure."),
}


@dataclass(frozen=True)
class TeamContext:
    """What a team's namespace reads of the cluster around it."""

    kubernetes_version: str  # the cluster's minor: Pod Security labels pin it
    mig_resources: tuple[str, ...] = ()  # MIG resources the cluster offers: each is bounded in the quota
    largest_gpu_request: int = 0  # the most GPUs one pod can get on any node (the default per-pod maximum)
    scraping_namespace: Optional[str] = None  # Prometheus's namespace, let through the ingress policy
    quota_ceiling: Mapping[str, str] = field(default_factory=dict)  # `hard` entries Kueue's queues set
    storage_class: Optional[str] = None  # the model cache's StorageClass; None: no cache claim
    claim_size: str = "1Ti"  # the model-cache claim's request
    dra: bool = False  # the cluster has DRA pools: claimed GPUs are bounded in every team's quota
    claim_shapes: tuple[ClaimShape, ...] = ()  # the team's ResourceClaimTemplates (the DRA pools it may use)
    domain_shapes: tuple[DomainShape, ...] = ()  # the team's ComputeDomains (the UltraServer pools it may use)
    cuda_pools: Optional[tuple[str, ...]] = None  # the pools held to the team's minCuda; None: every pool

    @classmethod
    def of(cls, spec: "PlatformSpec", team: "TeamSpec", storage_class: Optional[str] = None) -> "TeamContext":
        """The context the stack file gives a team: its pools' GPUs, Prometheus, Kueue and the model cache."""
        return cls.of_teams(spec, [team], storage_class)[0]

    @classmethod
    def of_teams(cls, spec: "PlatformSpec", teams: Iterable["TeamSpec"],
                 storage_class: Optional[str] = None) -> list["TeamContext"]:
        """`of` for each of `teams`: what every team reads alike of the cluster is worked out once, so
        the work grows with pools plus teams, not with their product."""
        offered = platform_capacity(spec).total
        shared = (spec.cluster.kubernetes_version, tuple(r for r in offered if r.startswith(names.MIG_RESOURCE_PREFIX)),
                  largest_gpu_request(spec), scraping_namespace(spec.monitoring))
        dras, ultraservers = dra_pools(spec.node_pools), ultraserver_pools(spec.node_pools)  # each team reads these few
        return [cls(*shared, _quota_ceiling(spec, team), storage_class, spec.model_cache.pvc_size, bool(dras),
                    tuple(team_claim_shapes(dras, team)), tuple(team_domain_shapes(ultraservers, team)),
                    _cuda_pools(spec, team))
                for team in teams]

    def max_gpus_per_pod(self, team: "TeamSpec") -> int:
        return team.max_gpus_per_pod if team.max_gpus_per_pod is not None else self.largest_gpu_request


def _quota_ceiling(spec: "PlatformSpec", team: "TeamSpec") -> dict[str, str]:
    """Kueue admits up to nominal + borrowing limit: with queueing, the quota is that ceiling."""
    if not spec.queueing.enabled:
        return {}
    from gpu_platform.decisions.queueing import quota_ceiling

    return quota_ceiling(spec, team)


def _cuda_pools(spec: "PlatformSpec", team: "TeamSpec") -> Optional[tuple[str, ...]]:
    found = team_min_cuda(spec, team)
    return tuple(found[1]) if found else None


def _meta(name: str, namespace: str | None = None, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if namespace is not None:
        meta["namespace"] = namespace
    meta["labels"] = {names.MANAGED_BY_LABEL: names.MANAGED_BY, **(labels or {})}
    return meta


def _team_meta(team: "TeamSpec", name: str) -> dict[str, Any]:
    return _meta(name, names.team_namespace(team.name), {names.TEAM_LABEL: team.name})


# --- cluster-wide ---

def priority_class(tier: str) -> dict[str, Any]:
    t = PRIORITY_TIERS[tier]
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": _meta(names.priority_class(tier), labels={names.PRIORITY_TIER_LABEL: tier}),
            "value": t.value, "globalDefault": False, "preemptionPolicy": t.preemption_policy,
            "description": t.description}


# --- per team ---

def namespace(ctx: TeamContext, team: "TeamSpec") -> dict[str, Any]:
    """Baseline Pod Security enforced, restricted warned and audited, pinned to the cluster's minor; the
    team and tier labels the admission policies read, and the label the platform's Prometheus selects
    monitors by."""
    version = f"v{ctx.kubernetes_version}"
    psa = {}
    for mode, level in (("enforce", "baseline"), ("warn", "restricted"), ("audit", "restricted")):
        psa[names.pod_security_label(mode)] = level
        psa[names.pod_security_label(f"{mode}-version")] = version
    labels = {names.TEAM_LABEL: team.name, names.PRIORITY_TIER_LABEL: team.priority_tier,
              names.SCRAPE_LABEL: names.SCRAPE_VALUE, **psa}
    meta = _meta(names.team_namespace(team.name), labels=labels)
    if team.min_cuda:  # read back by `gpu-platform lock` for the pack's cuda gate (docs/cuda.md)
        meta["annotations"] = {names.MIN_CUDA_ANNOTATION: team.min_cuda}
        if ctx.cuda_pools is not None:
            meta["annotations"][names.MIN_CUDA_POOLS_ANNOTATION] = ",".join(ctx.cuda_pools)
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": meta}


def quota_hard(ctx: TeamContext, team: "TeamSpec") -> dict[str, str]:
    """Requests only (extended resources can only be quota'd on requests). Every GPU resource the cluster
    offers is bounded, at 0 when the team has no quota for it, so no team can use an unquoted GPU. With
    queueing on, GPUs, CPU and memory are bounded at the team's ceiling (decisions/queueing.py)."""
    q = team.quota
    hard = {names.quota_key(names.GPU_RESOURCE): str(q.gpus)}
    for res in sorted({*ctx.mig_resources, *(names.mig_resource(p) for p in q.mig_slices)}):
        hard[names.quota_key(res)] = str(q.mig_slices.get(res.removeprefix(names.MIG_RESOURCE_PREFIX), 0))
    hard.update({"requests.cpu": q.cpu, "requests.memory": q.memory, "pods": str(q.pods),
                 "persistentvolumeclaims": str(q.persistent_volume_claims), "requests.storage": q.storage})
    hard.update(ctx.quota_ceiling)
    if ctx.dra:  # claimed GPUs: as many as the team's GPUs (Kueue's ceiling with queueing), 0 without a DRA pool
        gpus = hard[names.quota_key(names.GPU_RESOURCE)] if ctx.claim_shapes else "0"
        hard[names.dra_devices_quota_key(names.DRA_GPU_CLASS)] = gpus
    return hard


def resource_claim_template(team: "TeamSpec", shape: ClaimShape) -> dict[str, Any]:
    """`count` whole GPUs of one model on one node, for a pod's `resourceClaims` (resource.k8s.io/v1)."""
    request = {"name": "gpus", "exactly": {
        "deviceClassName": names.DRA_GPU_CLASS, "allocationMode": "ExactCount", "count": shape.count,
        "selectors": [{"cel": {"expression": shape.selector}}]}}
    return {"apiVersion": catalog.RESOURCE_API_VERSION, "kind": "ResourceClaimTemplate",
            "metadata": _team_meta(team, shape.name), "spec": {"spec": {"devices": {"requests": [request]}}}}


def compute_domain(team: "TeamSpec", shape: DomainShape) -> dict[str, Any]:
    """A ComputeDomain for a job over `nodes` UltraServer nodes; the driver generates the channel's
    ResourceClaimTemplate, which each pod of the job claims. `numNodes` only reports readiness with the
    driver's default IMEXDaemonsWithDNSNames (the CRD's description); one IMEX channel per pod."""
    return {"apiVersion": catalog.COMPUTE_DOMAIN_API_VERSION, "kind": "ComputeDomain",
            "metadata": _team_meta(team, shape.name),
            "spec": {"numNodes": shape.nodes,
                     "channel": {"resourceClaimTemplate": {"name": shape.channel_template}, "allocationMode": "Single"}}}


def resource_quota(ctx: TeamContext, team: "TeamSpec") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": _team_meta(team, names.TEAM_QUOTA),
            "spec": {"hard": quota_hard(ctx, team)}}


def limit_range(ctx: TeamContext, team: "TeamSpec") -> dict[str, Any]:
    """Default CPU and memory requests so every container counts against the quota; a GPU maximum
    per container and per pod. The LimitRanger refuses a maximum on a resource a container has no
    limit for, so containers without one get a GPU limit (and request) of 0."""
    gpu, most = names.GPU_RESOURCE, str(ctx.max_gpus_per_pod(team))
    defaults = team.container_defaults
    container = {"type": "Container",
                 "default": {gpu: "0"},
                 "defaultRequest": {"cpu": defaults.cpu, "memory": defaults.memory, gpu: "0"},
                 "max": {gpu: most}}
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": _team_meta(team, names.TEAM_LIMITS),
            "spec": {"limits": [container, {"type": "Pod", "max": {gpu: most}}]}}


def _rule(groups: tuple[str, ...], resources: tuple[str, ...], verbs: tuple[str, ...]) -> dict[str, Any]:
    return {"apiGroups": list(groups), "resources": list(resources), "verbs": list(verbs)}


# What both roles share: why a job waits (its Kueue Workload and its conditions, the LocalQueue's status and
# its pending workloads in order: Kueue's own workload, localqueue and pending-workloads viewer roles) and the
# team's own metrics (ServiceMonitors and PodMonitors, picked up by the platform's Prometheus in team
# namespaces only).
def _queue_and_monitor_rules() -> list[dict[str, Any]]:
    return [
        _rule((KUEUE_API,), ("workloads", "workloads/status", "localqueues", "localqueues/status"), READ),
        _rule((f"visibility.{KUEUE_API}",), ("localqueues/pendingworkloads",), READ),
        _rule((MONITORING_API,), ("servicemonitors", "podmonitors"), WRITE),
    ]


def developer_rules() -> list[dict[str, Any]]:
    """Run and debug workloads, see why they wait, scrape them. No Secrets (admins manage them), no RBAC, no
    quota or policy edits."""
    return [
        _rule(("",), ("pods", "services", "configmaps", "persistentvolumeclaims"), WRITE),
        _rule(("",), ("pods/log",), READ),
        _rule(("",), ("pods/exec", "pods/attach", "pods/portforward"), ("get", "create")),
        _rule(("",), ("events", "endpoints", "serviceaccounts", "resourcequotas", "limitranges"), READ),
        _rule(("apps",), ("deployments", "statefulsets"), WRITE),
        _rule(("apps",), ("deployments/scale", "statefulsets/scale"), ("get", "update", "patch")),
        _rule(("apps",), ("replicasets",), READ),
        _rule(("batch",), ("jobs", "cronjobs"), WRITE),
        _rule(("autoscaling",), ("horizontalpodautoscalers",), WRITE),
        _rule(("events.k8s.io",), ("events",), READ),
        _rule(("networking.k8s.io",), ("networkpolicies",), READ),
        *_queue_and_monitor_rules(),
        *dra_read_rules(),
    ]


def dra_read_rules() -> list[dict[str, Any]]:
    """DRA objects are read-only for a team: the platform writes the claim templates and ComputeDomains, and the
    scheduler makes each pod's claims from them (a team writing claims could claim GPUs around its queue)."""
    return [_rule((names.RESOURCE_API_GROUP,), ("resourceclaims", "resourceclaimtemplates"), READ),
            _rule((names.COMPUTE_DOMAIN_API_GROUP,), ("computedomains",), READ)]


def admin_rules() -> list[dict[str, Any]]:
    """Everything a namespace owner needs, listed explicitly: RBAC has no deny, so `*` on all
    resources would include the quota and limits the platform sets. Those stay read-only."""
    return [
        _rule(("",), ("pods", "pods/log", "pods/exec", "pods/attach", "pods/portforward", "pods/eviction",
                      "services", "endpoints", "configmaps", "secrets", "persistentvolumeclaims",
                      "serviceaccounts"), ("*",)),
        _rule(("",), ("events", "resourcequotas", "limitranges"), READ),
        _rule(("apps", "batch", "autoscaling", "policy"), ("*",), ("*",)),
        _rule(("networking.k8s.io",), ("ingresses", "networkpolicies"), ("*",)),
        # Without `escalate` and `bind` the API server lets an admin grant only what the admin holds,
        # so no one in the namespace can hand themselves quota or limit edits.
        _rule((RBAC_API,), ("roles", "rolebindings"), WRITE),
        _rule(("events.k8s.io",), ("events",), READ),
        *_queue_and_monitor_rules(),
        *dra_read_rules(),
    ]


ROLE_RULES = {"developers": developer_rules, "admins": admin_rules}


def role(team: "TeamSpec", role_name: str) -> dict[str, Any]:
    return {"apiVersion": RBAC_API_VERSION, "kind": "Role", "metadata": _team_meta(team, names.team_role(role_name)),
            "rules": ROLE_RULES[role_name]()}


def role_binding(team: "TeamSpec", role_name: str) -> dict[str, Any]:
    return {"apiVersion": RBAC_API_VERSION, "kind": "RoleBinding",
            "metadata": _team_meta(team, names.team_role(role_name)),
            "roleRef": {"apiGroup": RBAC_API, "kind": "Role", "name": names.team_role(role_name)},
            "subjects": [{"apiGroup": RBAC_API, "kind": "Group", "name": names.team_group(team.name, role_name)}]}


def network_policy(ctx: TeamContext, team: "TeamSpec") -> dict[str, Any]:
    """Ingress from the team's own pods and from Prometheus only; egress is left open."""
    peers: list[dict[str, Any]] = [{"podSelector": {}}]
    if ctx.scraping_namespace is not None:
        peers.append({"namespaceSelector": {"matchLabels": {names.NAMESPACE_NAME_LABEL: ctx.scraping_namespace}}})
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": _team_meta(team, names.TEAM_INGRESS_POLICY),
            "spec": {"podSelector": {}, "policyTypes": ["Ingress"], "ingress": [{"from": peers}]}}


def model_cache_claim(team: "TeamSpec", storage_class: str, size: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": _team_meta(team, names.MODEL_CACHE_PVC),
            "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": storage_class,
                     "resources": {"requests": {"storage": size}}}}


def team_manifests(ctx: TeamContext, team: "TeamSpec") -> dict[str, dict[str, Any]]:
    """Every namespaced object of one team, keyed by a short stable role in the unit."""
    out = {"namespace": namespace(ctx, team), "quota": resource_quota(ctx, team),
           "limits": limit_range(ctx, team), "ingress": network_policy(ctx, team)}
    for r in names.TEAM_ROLES:
        out[f"role-{r}"] = role(team, r)
        out[f"binding-{r}"] = role_binding(team, r)
    if ctx.storage_class is not None:
        out["model-cache"] = model_cache_claim(team, ctx.storage_class, ctx.claim_size)
    for shape in ctx.claim_shapes:
        out[f"claim-{shape.name}"] = resource_claim_template(team, shape)
    for domain in ctx.domain_shapes:
        out[f"domain-{domain.name}"] = compute_domain(team, domain)
    return out


def access_entries(teams: Iterable[tuple[str, "TeamAccessSpec"]]) -> dict[str, list[str]]:
    """IAM role ARN -> the Kubernetes groups it maps to, from each team's name and access. EKS allows one
    access entry per principal per cluster, so a role listed by several teams (or as developer and admin)
    gets one entry, all groups."""
    entries: dict[str, set[str]] = {}
    for name, access in teams:
        for r, arns in zip(names.TEAM_ROLES, (access.developer_role_arns, access.admin_role_arns), strict=True):
            for arn in arns:
                entries.setdefault(arn, set()).add(names.team_group(name, r))
    return {arn: sorted(groups) for arn, groups in sorted(entries.items())}
