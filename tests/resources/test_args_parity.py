"""One description per capability: each public component's Args (the TypedDicts Pulumi's component provider
reads to publish the schema) and the stack file's part for it (the pydantic models in spec/models.py, the one
source of fields and rules) name the same fields, recursively through nested Args, by the same snake_case
name (camelCase alias in the stack file and the schema). Every difference is listed in DIFFERENCES, once,
with why it is one: an argument the stack file gives from elsewhere (the cluster's wiring), or a field the
platform maps onto a component some other way."""
from __future__ import annotations

import typing
from typing import Any
from collections.abc import Iterator

import pytest
from pydantic import BaseModel

import gpu_platform
from gpu_platform.spec import models as m


def _part(*models: type[BaseModel], without: tuple[str, ...] = ()) -> dict[str, Any]:
    """The fields of a stack-file part: the models' fields merged (a Cluster's create block is flat in its
    Args), less `without`."""
    return {k: f.annotation for model in models for k, f in model.model_fields.items() if k not in without}


# Each public component and the stack-file part it builds (a dict is a part of several models' fields).
_TEAM_ACCESS = {"name": str, **_part(m.TeamAccessSpec)}
_QUEUED_TEAM = {k: v for k, v in _part(m.TeamSpec).items() if k in ("name", "quota", "priority_tier", "queue")}
PARTS: dict[str, dict[str, Any]] = {
    "GpuPlatform": {"platform": dict},  # the whole object: its one argument is the stack file's `platform`
    "Cluster": _part(m.ClusterSpec, m.CreateClusterSpec, without=("create", "existing")),
    "AdoptedCluster": _part(m.ClusterSpec, m.ExistingClusterSpec, without=("create", "existing")),
    "GpuNodePool": _part(m.NodePoolSpec),
    "KarpenterNodePool": _part(m.NodePoolSpec),
    "GpuOperator": {**_part(m.GpuOperatorSpec), "pools": list[m.OperatorPoolSpec]},
    "GpuMonitoring": _part(m.MonitoringSpec),
    "ModelCache": _part(m.ModelCacheSpec),
    "Datasets": _part(m.DatasetsSpec),
    "TeamNamespace": _part(m.TeamSpec),
    "PriorityTiers": {},
    "TeamAdmission": {},
    "TeamAccess": {"teams": _TEAM_ACCESS},
    "KueueQueueing": {**_part(m.QueueingSpec), "node_pools": list[m.QueuePoolSpec], "teams": _QUEUED_TEAM},
}

WIRING = "the cluster's wiring: no stack-file field, the platform passes what the cluster component made"
CONTEXT = "elsewhere in the stack file (cluster, environment, tags, operator, other parts): the platform passes it"
NAMED = "the component's name is the part's name (the `name` argument of the constructor)"
OPTION = "a resource option (`protect`), which the platform sets from it"
PROVISIONER = "which component builds the pool (GpuNodePool or KarpenterNodePool)"
MANAGED_ONLY = "refused on Karpenter pools by the stack file's rules (spec/rules_karpenter.py): a managed node group's only"
KARPENTER_ONLY = "refused on managed node groups by the stack file's rules (spec/rules_karpenter.py): Karpenter's only"

# The one table of differences: "Component.path" (or "*.argument" for every component) -> why the component's
# Args and the stack file's part differ there.
DIFFERENCES: dict[str, str] = {
    # the cluster's wiring and the context, wherever a component takes them
    **{f"*.{k}": WIRING for k in (
        "k8s_provider", "cluster_name", "node_role_arn", "node_role", "subnet_ids", "subnet_zones", "subnet_id",
        "subnet_count", "vpc_id", "node_security_group_id", "security_group_ids", "cluster_endpoint",
        "cluster_certificate_authority", "service_cidr")},
    **{f"*.{k}": CONTEXT for k in (
        "environment", "kubernetes_version", "tags", "region", "system_node_selector", "mig_strategy",
        "driver_source", "driver_version", "lustre_client", "disruption_window", "prometheus_namespace")},
    "GpuPlatform.region": "the stack's `aws:region`, outside the platform object",
    "GpuPlatform.alert_secrets": "the receivers' secrets are Pulumi secrets (`pulumi config set --secret`), never in the file",
    "Cluster.name": "the stack file's cluster.name is the cluster_name argument",
    "Cluster.gpu_taints": "the GPU pools' taints (nodePools[].taints and repair), which the cluster's add-ons tolerate",
    "Cluster.karpenter_discovery": "on when a pool has provisioner: karpenter",
    "AdoptedCluster.name": "the stack file's cluster.name is the cluster_name argument",
    "AdoptedCluster.admin_role_arns": "an adopted cluster's access entries stay its owner's: refused with existing",
    "AdoptedCluster.kubernetes_version": "read by the components on the cluster (pools, teams), not by the adoption",
    "GpuNodePool.name": NAMED, "KarpenterNodePool.name": NAMED,
    "GpuNodePool.protect": OPTION, "KarpenterNodePool.protect": OPTION,
    "GpuNodePool.provisioner": PROVISIONER, "KarpenterNodePool.provisioner": PROVISIONER,
    "GpuNodePool.max_unavailable_percent": "the stack file's maxUnavailable takes a count or a percentage string;"
                                           " the schema's arguments are typed, so a percentage is its own argument",
    "KarpenterNodePool.max_unavailable_percent": "as GpuNodePool's",
    "GpuNodePool.karpenter": KARPENTER_ONLY,
    "KarpenterNodePool.efa": MANAGED_ONLY, "KarpenterNodePool.update_strategy": MANAGED_ONLY,
    "KarpenterNodePool.zones": MANAGED_ONLY,
    "GpuOperator.service_monitor": "on when monitoring installs or uses a Prometheus (monitoring.prometheus.mode)",
    "GpuOperator.service_monitor_labels": "monitoring.prometheus.selectorLabels",
    "GpuMonitoring.gpu_prices": "the pools' instance prices (catalog and pricing), for the cost dashboard",
    "GpuMonitoring.receiver_secrets": "the receivers' secrets are Pulumi secrets, never in the file",
    "GpuMonitoring.team_routes": "teams[].alerting, the teams' own routes",
    "GpuMonitoring.nodes_at_max": "the pools' nodes at max size (nodePools), which size the Prometheus volume",
    "GpuMonitoring.reservation_ends": "the reserved pools' ends and drains (nodePools[].reservation)",
    "GpuMonitoring.usage_units": "each pool's units, GPU shares and prices (nodePools, pricing), for usage records",
    "GpuMonitoring.pool_gpu_prices": "each pool's GPU-hour price (nodePools, pricing), for used GPU time",
    "GpuMonitoring.team_namespaces": "teams[].name: the namespace each team's usage is recorded under",
    "GpuMonitoring.usage_report": "the monthly usage report (a bucket, a role and a CronJob beside Prometheus) is "
                                  "built by GpuPlatform from monitoring.usageReport, not by this component",
    "GpuMonitoring.pool_memory": "nodePools[].alerts: each pool's own GPU memory thresholds",
    "GpuMonitoring.acceptance_timeouts": "nodePools[].acceptance: each gated pool's timeout, for the stuck-gate alert",
    "GpuMonitoring.gpus_at_max": "the pools' GPUs at max size (nodePools), which size the Prometheus volume",
    "ModelCache.enabled": "whether the platform builds the component at all",
    "ModelCache.pvc_size": "the teams' claims on the cache (TeamNamespace.model_cache.size)",
    "ModelCache.storage_gib_estimate": "read by the plan's cost section only: the file system grows as it is used",
    "Datasets.fsx_lustre.protect": OPTION,
    "Datasets.fsx_lustre.teams": "which teams get a claim, resolved by the platform into team_namespaces",
    "Datasets.team_namespaces": "fsxLustre.teams resolved to the TeamNamespaces the platform built",
    "TeamNamespace.name": "the stack file's teams[].name is the team argument",
    "TeamNamespace.team": "the stack file's teams[].name",
    "TeamNamespace.access": "TeamAccess's: one EKS access entry per role holds every team's groups",
    "TeamNamespace.alerting": "GpuMonitoring's team_routes",
    "TeamNamespace.queue": "KueueQueueing's teams",
    "TeamNamespace.quota_ceiling": "what the team's Kueue queue admits (decided from queueing and the pools)",
    "TeamNamespace.mig_profiles": "the MIG profiles the pools offer",
    "TeamNamespace.dra": "on when a pool allocates GPUs by DRA",
    "TeamNamespace.cuda_pools": "the pools the team reaches (its queue's, with Kueue), held to its minCuda",
    "TeamNamespace.gpu_claims": "the DRA pools' GPUs (nodePools[].gpuAllocation: dra)",
    "TeamNamespace.compute_domains": "the UltraServer pools' node counts",
    "TeamNamespace.model_cache": "modelCache (its StorageClass and pvcSize)",
    "TeamNamespace.services": "the platform's ModelServing component: each service is checked against the pool it "
                              "names and built after the team's namespace, quota and cache claim",
    "KueueQueueing.mode": "kueue is the one mode a KueueQueueing builds",
    "KueueQueueing.teams.namespace": "the team's namespace, from its TeamNamespace",
}


def explained(component: str, path: str) -> bool:
    return f"{component}.{path}" in DIFFERENCES or f"*.{path.rsplit('.', 1)[-1]}" in DIFFERENCES


def _unwrap(annotation: Any) -> Any:
    """The TypedDict, model or part (dict) inside Required/Optional/list/dict/Input, else None."""
    if isinstance(annotation, dict):
        return annotation
    if isinstance(annotation, type) and (issubclass(annotation, BaseModel) or typing.is_typeddict(annotation)):
        return annotation
    for arg in typing.get_args(annotation):
        found = _unwrap(arg)
        if found is not None:
            return found
    return None


def _fields(kind: Any) -> dict[str, Any]:
    if isinstance(kind, dict):
        return kind
    if typing.is_typeddict(kind):
        return dict(kind.__annotations__)
    return {k: f.annotation for k, f in kind.model_fields.items()}


def differences(args: dict[str, Any], part: dict[str, Any], at: str = "") -> Iterator[tuple[str, str]]:
    """(path, which side lacks it) for every field one side has and the other lacks, recursively."""
    for key in sorted(set(args) | set(part)):
        path = f"{at}{key}"
        if key not in part:
            yield path, "args only"
        elif key not in args:
            yield path, "stack file only"
        else:
            inner_args, inner_part = _unwrap(args[key]), _unwrap(part[key])
            if inner_args is not None and inner_part is not None:
                yield from differences(_fields(inner_args), _fields(inner_part), f"{path}.")


def args_of(name: str) -> dict[str, Any]:
    component = getattr(gpu_platform, name)
    return _fields(typing.get_type_hints(component.__init__)["args"])


def test_every_public_component_has_its_part():
    assert set(PARTS) == set(gpu_platform.COMPONENTS)


@pytest.mark.parametrize("name", gpu_platform.COMPONENTS)
def test_args_and_the_stack_files_part_name_the_same_fields(name):
    unexplained = [f"{path} ({side})" for path, side in differences(args_of(name), PARTS[name])
                   if not explained(name, path)]
    assert unexplained == [], f"{name}: fields on one side only, with no reason in DIFFERENCES"


def test_every_listed_difference_is_still_one():
    found = [(name, path) for name in gpu_platform.COMPONENTS for path, _ in differences(args_of(name), PARTS[name])]
    used = {f"{n}.{p}" for n, p in found} | {f"*.{p.rsplit('.', 1)[-1]}" for _, p in found}
    assert sorted(set(DIFFERENCES) - used) == []
