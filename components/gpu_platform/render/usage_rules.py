"""GPU usage recording rules: allocated and used GPU time per namespace and pool, by allocation kind, in GPUs
and in dollars per hour, from what kube-state-metrics and dcgm-exporter emit.

The prices and GPU shares are the cost section's (decisions/usage.py), recorded as constant series, so the
PromQL only counts units and multiplies. What each series reads:
- Allocated units (whole GPUs, MIG slices, time-sliced replicas): kube-state-metrics'
  `kube_pod_container_resource_requests{resource="nvidia_com_gpu"|"nvidia_com_mig_<profile>"}` of pods whose
  `kube_pod_status_phase{phase="Running"}` is 1 (extended resources are requested and limited alike), on the
  node's pool from `kube_node_labels{label_gpu_platform_io_pool}` (the node label is in KSM's allowlist):
  https://github.com/kubernetes/kube-state-metrics/blob/v2.17.0/docs/metrics/workload/pod-metrics.md
- DRA devices: kube-state-metrics exports no ResourceClaim allocation, so a GPU allocated by a claim is one
  dcgm-exporter attributes to a pod through the kubelet's PodResources API (with KUBERNETES_ENABLE_DRA the
  exporter adds `dra_driver_name`, `dra_claim_name`, ... beside `namespace` and `pod`): the example in
  https://kubernetes.io/docs/reference/command-line-tools-reference/feature-gates/ (KubeletPodResourcesDynamicResources).
- Used GPU time: dcgm-exporter's DCGM_FI_PROF_GR_ENGINE_ACTIVE (0-1) of each GPU or MIG instance with the
  pod's `namespace` and `pod` (the ServiceMonitor honours them, render/dcgm_metrics.py) and `node`; a MIG
  instance's activity counts at its compute share of the GPU, and a GPU reported for several pods (time-
  slicing) is split evenly among them, so no GPU is ever counted as more than itself.
"""
from __future__ import annotations

from typing import Any, Optional
from collections.abc import Mapping, Sequence

from gpu_platform.decisions.usage import DRA_RESOURCE, MIG, PoolRate, UsageUnit
from gpu_platform.facts import catalog, names
from gpu_platform.render.alert_rule import GPU_RESOURCES_RE, ksm_name

USAGE_GROUP = "gpu-platform.usage"
UNIT_SHARE = "gpu_platform:usage_unit_gpu_share"  # {pool, resource, kind}: GPUs one unit counts as
UNIT_PRICE = "gpu_platform:usage_unit_usd_per_hour"  # {pool, resource, kind}: one unit for an hour
POOL_PRICE = "gpu_platform:pool_price_per_gpu_hour_usd"  # {pool}: one GPU-hour at the pool's billed rate
MIG_SHARE = "gpu_platform:mig_profile_gpu_share"  # {modelName, GPU_I_PROFILE}: a MIG instance's compute share
TEAM_INFO = "gpu_platform:team_namespace_info"  # {namespace, team}: 1
NODE_POOL = "gpu_platform:node_pool_info"  # {node, pool}: 1 for every node of a platform pool
ALLOCATED_UNITS = "gpu_platform:gpu_units_allocated:namespace_pool"  # {namespace, pool, resource, kind}
ALLOCATED_GPUS = "gpu_platform:gpus_allocated:namespace_pool"  # GPU-equivalents {namespace, pool, resource, kind}
ALLOCATED_USD = "gpu_platform:gpu_allocated_usd_per_hour:namespace_pool"  # {namespace, pool, resource, kind}
USED_GPUS = "gpu_platform:gpus_used:namespace_pool"  # GPU-equivalents busy {namespace, pool}
USED_USD = "gpu_platform:gpu_used_usd_per_hour:namespace_pool"  # {namespace, pool}
RECORDED = frozenset({UNIT_SHARE, UNIT_PRICE, POOL_PRICE, MIG_SHARE, TEAM_INFO, NODE_POOL, ALLOCATED_UNITS,
                      ALLOCATED_GPUS, ALLOCATED_USD, USED_GPUS, USED_USD})
KSM_METRICS = frozenset({"kube_pod_container_resource_requests", "kube_pod_status_phase", "kube_node_labels"})
DCGM_METRICS = frozenset({"DCGM_FI_PROF_GR_ENGINE_ACTIVE", "DCGM_FI_DEV_GPU_TEMP"})

POOL_KSM_LABEL = f"label_{ksm_name(names.POOL_LABEL)}"
GPU_KEY = "node, UUID"  # one physical GPU (dcgm-exporter's UUID, on the node the ServiceMonitor names)
WORKLOAD = "namespace, pod"


def _static(record: str, value: float, labels: Mapping[str, str]) -> dict[str, Any]:
    return {"record": record, "expr": f"vector({float(value)!r})", "labels": dict(labels)}


def static_rules(units: Sequence[UsageUnit], rates: Sequence[PoolRate], teams: Mapping[str, str]) -> list[dict[str, Any]]:
    """The stack's constant facts: each unit's GPU share and price, each pool's GPU-hour price, each GPU
    model's MIG shares, and which team each namespace is."""
    out = []
    for u in units:
        labels = {"pool": u.pool, "resource": ksm_name(u.resource), "kind": u.kind}
        out.append(_static(UNIT_SHARE, u.gpu_share, labels))
        if u.usd_per_hour is not None:
            out.append(_static(UNIT_PRICE, u.usd_per_hour, labels))
    out += [_static(POOL_PRICE, r.gpu_usd_per_hour, {"pool": r.pool}) for r in rates if r.gpu_usd_per_hour is not None]
    out += _mig_shares({x.gpu_model for x in units if x.kind == MIG})
    out += [_static(TEAM_INFO, 1, {"namespace": ns, "team": team}) for ns, team in sorted(teams.items())]
    return out


def _mig_shares(models: set[str]) -> list[dict[str, Any]]:
    """Every MIG profile's compute share of each GPU model the stack slices (dcgm-exporter labels a MIG instance
    with its modelName and GPU_I_PROFILE)."""
    rules = []
    for gpu in sorted((g for g in catalog.GPU_MODELS.values() if g.nvml_name in models), key=lambda g: g.nvml_name):
        for profile in sorted(gpu.mig_profiles):
            rules.append(_static(MIG_SHARE, catalog.mig_compute_share(gpu, profile),
                                 {"modelName": gpu.nvml_name, "GPU_I_PROFILE": profile}))
    return rules


def node_pool() -> str:
    return (f'max by (node, pool) (label_replace(kube_node_labels{{{POOL_KSM_LABEL}!=""}}, "pool", "$1", '
            f'"{POOL_KSM_LABEL}", "(.+)"))')


def allocated_units() -> str:
    """Units of GPU resources held by running pods, per namespace, pool and resource, with the unit's kind."""
    requests = (f"max by ({WORKLOAD}, container, node, resource) "
                f'(kube_pod_container_resource_requests{{resource=~"{GPU_RESOURCES_RE}"}} > 0)')
    running = f'max by ({WORKLOAD}) (kube_pod_status_phase{{phase="Running"}} == 1)'
    plugin = (f"sum by (namespace, pool, resource) ({requests} * on ({WORKLOAD}) group_left () ({running})"
              f" * on (node) group_left (pool) {NODE_POOL})")
    claimed = (f'count by (namespace, node) (max by (namespace, {GPU_KEY}) '
               f'(DCGM_FI_DEV_GPU_TEMP{{dra_driver_name="{names.DRA_GPU_DRIVER}", pod!=""}}))')
    dra = (f'sum by (namespace, pool, resource) (label_replace({claimed}, "resource", "{DRA_RESOURCE}", "", "")'
           f" * on (node) group_left (pool) {NODE_POOL})")
    return f"(({plugin}) or ({dra})) * on (pool, resource) group_left (kind) (0 * {UNIT_SHARE} + 1)"


def used_gpus() -> str:
    """Busy GPU-equivalents per namespace and pool: each GPU's or MIG instance's activity at its share of the
    GPU, split among the pods the exporter names on it."""
    whole = 'DCGM_FI_PROF_GR_ENGINE_ACTIVE{pod!="", GPU_I_PROFILE=""}'
    mig = 'DCGM_FI_PROF_GR_ENGINE_ACTIVE{pod!="", GPU_I_PROFILE!=""}'
    instance = f"{GPU_KEY}, GPU_I_ID"
    whole_split = f"{whole} / on ({GPU_KEY}) group_left () count by ({GPU_KEY}) ({whole})"
    mig_split = (f"{mig} / on ({instance}) group_left () count by ({instance}) ({mig})"
                 f" * on (modelName, GPU_I_PROFILE) group_left () {MIG_SHARE}")
    per_pod = f"max by ({WORKLOAD}, {GPU_KEY}, GPU_I_ID) (({whole_split}) or ({mig_split}))"
    return f"sum by (namespace, pool) ({per_pod} * on (node) group_left (pool) {NODE_POOL})"


def usage_rules(units: Sequence[UsageUnit], rates: Sequence[PoolRate], teams: Mapping[str, str]) -> list[dict[str, Any]]:
    """Constants first: rules in a group run in order, so each evaluation multiplies by this round's prices."""
    by = "pool, resource, kind"
    return [
        *static_rules(units, rates, teams),
        {"record": NODE_POOL, "expr": node_pool()},
        {"record": ALLOCATED_UNITS, "expr": allocated_units()},
        {"record": ALLOCATED_GPUS, "expr": f"{ALLOCATED_UNITS} * on ({by}) group_left () {UNIT_SHARE}"},
        {"record": ALLOCATED_USD, "expr": f"{ALLOCATED_UNITS} * on ({by}) group_left () {UNIT_PRICE}"},
        {"record": USED_GPUS, "expr": used_gpus()},
        {"record": USED_USD, "expr": f"{USED_GPUS} * on (pool) group_left () {POOL_PRICE}"},
    ]


def usage_groups(units: Sequence[UsageUnit], rates: Sequence[PoolRate], teams: Mapping[str, str],
                 interval: Optional[str] = None) -> list[dict[str, Any]]:
    """The usage rule group (none for a stack without GPU pools)."""
    if not units:
        return []
    group: dict[str, Any] = {"name": USAGE_GROUP, "rules": usage_rules(units, rates, teams)}
    if interval:
        group["interval"] = interval
    return [group]
