"""GPU alert rules as plain data: a PrometheusRule's `spec.groups`, or a rules file for promtool.

Every DCGM-based alert carries a `node` label taken from the exporter's `Hostname` label (`hostname`
in exporter builds after May 2026), so summaries and routing work with either spelling. Thresholds and
`for:` durations come from the stack file's `monitoring.alerts`; nothing here is tuned twice.
"""
from __future__ import annotations

from types import MappingProxyType
from typing import Any
from collections.abc import Mapping, Sequence

import yaml

from gpu_platform.decisions.dra import DRA
from gpu_platform.facts import names
from gpu_platform.render.acceptance_alerts import rules as acceptance_rules
from gpu_platform.render.alert_rule import GPU_RESOURCES_RE, ksm_name
from gpu_platform.render.alert_rule import alerting_rule as _alert
from gpu_platform.render.capacity_alerts import capacity_rules
from gpu_platform.render.reservation_alerts import RECORDED as RESERVATION_RECORDS
from gpu_platform.render.reservation_alerts import ReservationEnd, ending_alerts, recording_rules
from gpu_platform.render.usage_alerts import usage_alerts

ALERT_GROUP = "gpu-platform.gpu-alerts"
HOURLY_COST = "gpu_platform:gpu_hourly_cost_usd"  # recorded per modelName from the price catalog
MIG_SLICE_COST = "gpu_platform:mig_slice_hourly_cost_usd"  # per modelName and MIG profile: its compute share
COST_LABEL = "hourly_cost_usd"  # the same price as a label, carried into GpuIdle
COST_UNKNOWN = "unknown"
EXPORTER_JOB = ".*dcgm-exporter.*"
OOM_WINDOW = "10m"  # how long GpuCudaOom stays active after the restart
HEALTH_WINDOW = "10m"  # ECC and NVLink error counters: a rise within this window alerts
GPU_CONDITION = "AcceleratedHardwareReady"  # the node condition the EKS node monitoring agent sets
# Alerts about a GPU's hardware, not its workload: they carry the namespace of the pod holding the GPU, yet
# the platform repairs the GPU (alert routing sends them to the platform's receivers as well).
HARDWARE_ALERTS = ("GpuXidError", "GpuEccUncorrectable", "GpuRowRemapFailure", "GpuNvlinkErrors", "GpuClockThrottled",
                   "GpuPowerBrake")

# kube-state-metrics series the rules read (besides `up` and the DCGM fields).
KSM_METRICS = frozenset({
    "kube_node_spec_taint", "kube_node_labels", "kube_node_status_allocatable", "kube_node_status_capacity",
    "kube_node_status_condition",
    "kube_pod_container_status_last_terminated_reason", "kube_pod_container_status_restarts_total",
    "kube_pod_container_resource_requests",
    "kube_pod_status_unschedulable", "kube_pod_status_phase", "kube_pod_tolerations", "kube_pod_owner",
})
RECORDED_METRICS = frozenset({HOURLY_COST, MIG_SLICE_COST, *RESERVATION_RECORDS})


GPU_PRESENT_KSM_LABEL = f"label_{ksm_name(names.GPU_PRESENT_LABEL)}"
GPU_ALLOCATION_KSM_LABEL = f"label_{ksm_name(names.GPU_ALLOCATION_LABEL)}"


def _num(value: float) -> str:
    return f"{value:g}"


def _with_node(expr: str) -> str:
    """Add a `node` label from either spelling of the exporter's host label."""
    inner = f'label_replace({expr}, "node", "$1", "Hostname", "(.+)")'
    return f'label_replace({inner}, "node", "$1", "hostname", "(.+)")'


def gpu_nodes() -> str:
    """Nodes meant to have GPUs: tainted for GPUs (always visible to kube-state-metrics) or labelled
    `nvidia.com/gpu.present=true` (visible only with KSM's node-label allowlist)."""
    return (f'max by (node) (kube_node_spec_taint{{key="{names.GPU_TAINT_KEY}"}})'
            f' or max by (node) (kube_node_labels{{{GPU_PRESENT_KSM_LABEL}="true"}})')


def dra_nodes() -> str:
    """Nodes of DRA pools (`gpu-platform.io/gpu-allocation: dra`, visible with KSM's node-label allowlist).

    They advertise no GPU resource by design: their GPUs are the DRA driver's ResourceSlice devices, which
    kube-state-metrics does not export (ResourceSlice metrics are an open proposal upstream:
    https://github.com/kubernetes/kube-state-metrics/pull/3020), so their GPUs are counted from DCGM.
    """
    return f'max by (node) (kube_node_labels{{{GPU_ALLOCATION_KSM_LABEL}="{DRA}"}})'


_GPU = "GPU {{ $labels.gpu }} ({{ $labels.modelName }}, {{ $labels.UUID }}) on node {{ $labels.node }}"
_WORKLOAD = "{{ with $labels.pod }}, used by pod {{ $labels.namespace }}/{{ . }}{{ end }}"


def _tiers(warning: float, critical: float) -> list[tuple[str, float]]:
    return [("warning", warning), ("critical", critical)]


POOL_KSM_LABEL = f"label_{ksm_name(names.POOL_LABEL)}"


def _pool_nodes(pools: Sequence[str]) -> str:
    """The nodes of these pools (the pool label, visible with KSM's node-label allowlist)."""
    return f'max by (node) (kube_node_labels{{{POOL_KSM_LABEL}=~"{"|".join(pools)}"}})'


def memory_near_limit(t: Any, pools: Mapping[str, tuple[float, float]] = MappingProxyType({})) -> list[dict[str, Any]]:
    """Warning and critical tiers; while both fire, Alertmanager inhibits the warning (same GPU). Pools with their
    own thresholds (nodePools[].alerts) get rules of their own, labelled with the pool; the stack's skip them."""
    used = "100 * DCGM_FI_DEV_FB_USED / (DCGM_FI_DEV_FB_USED + DCGM_FI_DEV_FB_FREE)"
    own = f" unless on (node) {_pool_nodes(sorted(pools))}" if pools else ""
    rules = [_memory_rule(f"{_with_node(used)} > {_num(limit)}{own}", t, severity, limit)
             for severity, limit in _tiers(t.memory_used_percent, t.memory_critical_percent)]
    for pool, (warning, critical) in sorted(pools.items()):
        rules += [_memory_rule(f"{_with_node(used)} > {_num(limit)} and on (node) {_pool_nodes([pool])}", t, severity,
                               limit, pool) for severity, limit in _tiers(warning, critical)]
    return rules


def _memory_rule(expr: str, t: Any, severity: str, limit: float, pool: str = "") -> dict[str, Any]:
    rule = _alert(
        "GpuMemoryNearLimit", expr, t.memory_for_minutes, severity,
        f"{_GPU} has {{{{ $value | humanize }}}}% of its memory in use (limit {_num(limit)}%){_WORKLOAD}.",
        "The next allocation on this GPU is likely to fail with CUDA out of memory. Check the workload's "
        "batch size, sequence length and KV-cache settings; move it to a larger-memory GPU or a larger MIG "
        "profile; on a time-sliced GPU, check that the pods sharing it fit together (time-slicing does "
        "not partition memory). Thresholds: monitoring.alerts.memoryUsedPercent (warning), "
        "memoryCriticalPercent (critical), memoryForMinutes; a pool's own in nodePools[].alerts.",
    )
    if pool:
        rule["labels"]["pool"] = pool
    return rule


def temperature_high(t: Any) -> list[dict[str, Any]]:
    """Warning where clocks start to drop, critical close to where the GPU's firmware slows it hard."""
    return [_alert(
        "GpuTemperatureHigh", f"{_with_node('DCGM_FI_DEV_GPU_TEMP')} > {_num(limit)}",
        t.temperature_for_minutes, severity,
        f"{_GPU} is at {{{{ $value | humanize }}}} C, above {_num(limit)} C"
        f" for {t.temperature_for_minutes}m{_WORKLOAD}.",
        "A hot GPU throttles its clocks and loses 20-40% of its speed. Compare DCGM_FI_DEV_SM_CLOCK with "
        "the GPU's maximum; if other GPUs on the node are hot too, the instance's cooling is at fault: "
        "cordon and drain the node and let the node group replace it. If only this GPU is hot under "
        "normal load, drain the node and report the instance to AWS. Thresholds: "
        "monitoring.alerts.temperatureCelsius (warning), temperatureCriticalCelsius (critical), "
        "temperatureForMinutes.",
    ) for severity, limit in _tiers(t.temperature_celsius, t.temperature_critical_celsius)]


def _priced(low: str, cost_series: str, keys: str) -> str:
    """`low` with the matching price as a label, or `unknown` where no price series matches."""
    priced = f"({low}) + on ({keys}) group_left ({COST_LABEL}) (0 * {cost_series})"
    unpriced = f'label_replace(({low}) unless on ({keys}) {cost_series}, "{COST_LABEL}", "{COST_UNKNOWN}", "", "")'
    return _with_node(f"({priced}) or ({unpriced})")


_COST = (f'{{{{ if eq $labels.{COST_LABEL} "{COST_UNKNOWN}" }}}}cost unknown (no price for this model)'
         f"{{{{ else }}}}estimated ${{{{ $labels.{COST_LABEL} }}}}/h{{{{ end }}}}")


def idle(t: Any) -> list[dict[str, Any]]:
    """Idle whole (or time-sliced) GPUs and idle MIG slices, with their price as a label (or `unknown`).

    A time-sliced GPU is one physical GPU to DCGM: its utilisation is what all the pods sharing it use
    together, so it alerts once per physical GPU, only when every sharer is idle. MIG instances report
    no GPU utilisation; each slice is its own allocatable device (often a different team's), so each idle
    slice alerts on its own, from its graphics-engine activity, priced at its share of the GPU.
    """
    threshold = _num(t.idle_utilization_percent)
    whole = f"DCGM_FI_DEV_GPU_UTIL < {threshold}"
    mig = f'100 * DCGM_FI_PROF_GR_ENGINE_ACTIVE{{GPU_I_ID!=""}} < {threshold}'
    advice = ("If a pod holds it, ask its team to release it (scale the deployment down, end the notebook) or "
              "move the workload to a smaller share (time-sliced pool, smaller MIG profile). If no pod holds it, "
              "check why the cluster autoscaler keeps the node (scale-down disabled, pods without a "
              "PodDisruptionBudget margin, minSize of the pool). "
              "Threshold: monitoring.alerts.idleUtilizationPercent / idleMinutes.")
    return [
        _alert("GpuIdle", _priced(whole, HOURLY_COST, "modelName"), t.idle_minutes, "info",
               f"{_GPU} has been below {threshold}% utilisation for {t.idle_minutes}m"
               f" (now {{{{ $value | humanize }}}}%){_WORKLOAD}: {_COST}.",
               "The GPU is paid for but barely used (on a time-sliced GPU: by all the pods sharing it "
               "together). " + advice),
        _alert("GpuIdle", _priced(mig, MIG_SLICE_COST, "modelName, GPU_I_PROFILE"), t.idle_minutes, "info",
               f"MIG slice {{{{ $labels.GPU_I_PROFILE }}}} (instance {{{{ $labels.GPU_I_ID }}}}) of {_GPU} has "
               f"been below {threshold}% activity for {t.idle_minutes}m (now {{{{ $value | humanize }}}}%)"
               f"{_WORKLOAD}: {_COST}.",
               "The MIG slice is paid for but barely used (graphics-engine activity; MIG instances report no "
               "GPU utilisation). The price is the slice's compute share of the GPU (a 3g slice is 3 of 7 "
               "compute slices; on an RTX PRO 6000 a 2g slice is 2 of 4). " + advice,
               {"scope": "mig-slice"}),
    ]


def xid_error(_t: Any) -> dict[str, Any]:
    return _alert(
        "GpuXidError", f"{_with_node('DCGM_FI_DEV_XID_ERRORS')} != 0", 0, "critical",
        f"{_GPU} reported XID {{{{ $value | printf \"%.0f\" }}}}{_WORKLOAD}.",
        "The driver reported an XID error (the value is the last XID code seen). Common codes: 13 graphics "
        "engine exception and 31 memory page fault (usually the application: check its logs for illegal "
        "memory access, restart it; if they repeat across workloads, treat as hardware); 48 double-bit ECC "
        "error and 79 GPU has fallen off the bus (hardware: cordon and drain the node now, then terminate "
        "the instance so the node group replaces it). Run `kubectl debug node/<node>` and read `dmesg | "
        "grep -i xid` for the full history. The value stays set until the exporter restarts.",
    )


def cuda_oom(_t: Any) -> dict[str, Any]:
    target = "namespace, pod, container"
    oom = (f'kube_pod_container_status_last_terminated_reason{{reason="OOMKilled"}} == 1'
           f" and on ({target}) increase(kube_pod_container_status_restarts_total[{OOM_WINDOW}]) > 0")
    gpu_request = (f"max by ({target}, node) "
                   f'(kube_pod_container_resource_requests{{resource=~"{GPU_RESOURCES_RE}"}} > 0)')
    return _alert(
        "GpuCudaOom", f"({oom}) * on ({target}) group_left (node) {gpu_request}", 0, "high",
        "GPU pod {{ $labels.namespace }}/{{ $labels.pod }} (container {{ $labels.container }}) on node "
        "{{ $labels.node }} was OOMKilled and restarted.",
        "A container holding a GPU ran out of memory and was restarted: its GPU work since the last "
        "checkpoint is lost. OOMKilled is the container memory limit (host RAM), often hit while loading "
        "model weights or pinned buffers; raise the container's memory limit or load weights "
        "incrementally. A CUDA out-of-memory error in the logs means GPU memory instead: see "
        "GpuMemoryNearLimit and reduce batch size or use a larger GPU or MIG profile.",
    )


def not_detected(t: Any) -> list[dict[str, Any]]:
    """A GPU node whose GPUs are not there: by the device plugin's allocatable count on device-plugin pools,
    by dcgm-exporter's GPUs on DRA pools (where nothing is allocatable by design)."""
    advertised = f'sum by (node) (kube_node_status_allocatable{{resource=~"{GPU_RESOURCES_RE}"}}) > 0'
    reporting = f"count by (node) ({_with_node('DCGM_FI_DEV_GPU_TEMP')})"
    what_to_do = (
        "Check the GPU Operator's pods on the node (driver, device plugin or DRA kubelet plugin, dcgm-exporter) "
        "and `kubectl describe node`; a node that lost its GPU (XID 79, fell off the bus) does not recover: "
        "cordon, drain and terminate it so the node group replaces it. "
        "Delay: monitoring.alerts.notDetectedMinutes.")
    return [
        _alert(
            "GpuNotDetected", f"({gpu_nodes()}) unless on (node) ({dra_nodes()}) unless on (node) ({advertised})",
            t.not_detected_minutes, "critical",
            "GPU node {{ $labels.node }} advertises no allocatable GPU.",
            "Pods asking for GPUs cannot schedule on this node, yet it is billed as a GPU instance. "
            + what_to_do, {"cause": "no-allocatable-gpu"}),
        _alert(
            "GpuNotDetected", f"({gpu_nodes()}) and on (node) ({advertised}) unless on (node) {reporting}",
            t.not_detected_minutes, "critical",
            "GPU node {{ $labels.node }} advertises GPUs but dcgm-exporter reports none.",
            "The GPUs on this node are unmonitored: the exporter is down or DCGM cannot see the devices. "
            + what_to_do, {"cause": "no-exporter-series"}),
        _alert(
            "GpuNotDetected", f"({dra_nodes()}) unless on (node) {reporting}", t.not_detected_minutes, "critical",
            "DRA GPU node {{ $labels.node }}: dcgm-exporter reports no GPU.",
            "On a DRA pool a node's GPUs are the DRA driver's devices, not an allocatable count, so they are "
            "counted from DCGM: none reported means the GPUs are gone (claims cannot be allocated here) or the "
            "exporter cannot see them (DcgmExporterDown fires too when it is down). " + what_to_do,
            {"cause": "no-dra-gpu"}),
    ]


def exporter_down(t: Any) -> dict[str, Any]:
    up = f'up{{job=~"{EXPORTER_JOB}"}}'
    return _alert(
        "DcgmExporterDown", f"{up} == 0 or (absent({up}) and on () count({gpu_nodes()}) > 0)",
        t.exporter_down_minutes, "critical",
        "dcgm-exporter target {{ with $labels.instance }}{{ . }}{{ else }}(none found){{ end }}"
        "{{ with $labels.node }} on node {{ . }}{{ end }} is down.",
        "GPU metrics are missing, so the other GPU alerts cannot fire. Check the nvidia-dcgm-exporter "
        "pods in the GPU Operator's namespace (`kubectl get pods -l app=nvidia-dcgm-exporter`) and their "
        "logs; a crash right after start usually means the metrics CSV asks for a field a GPU lacks. "
        "With no target at all, check that the ServiceMonitor exists and carries the labels the "
        "Prometheus selects. Delay: monitoring.alerts.exporterDownMinutes.",
    )


def devices_unhealthy(t: Any) -> dict[str, Any]:
    """GPUs the device plugin took out of the node's allocatable count (its health check failed)."""
    def per_node(metric: str) -> str:
        return f'sum by (node, resource) ({metric}{{resource=~"{GPU_RESOURCES_RE}"}})'

    return _alert(
        "GpuDevicesUnhealthy", f"{per_node('kube_node_status_capacity')} - {per_node('kube_node_status_allocatable')}"
        " > 0", t.gpu_unhealthy_minutes, "critical",
        "Node {{ $labels.node }} has {{ $value }} {{ $labels.resource }} out of its allocatable count: the "
        "NVIDIA device plugin marked GPUs unhealthy.",
        "The device plugin's health check (NVML critical XID events) reported a GPU unhealthy, so the "
        "kubelet no longer offers it: pods asking for GPUs schedule elsewhere, and pods already on it have "
        "probably failed. Check `kubectl describe node` and the device plugin's logs for the XID; the node "
        "monitoring agent usually reports the same fault as AcceleratedHardwareReady=False, on which node "
        "repair acts. Without repair, cordon, drain and terminate the instance. "
        "Delay: monitoring.alerts.gpuUnhealthyMinutes.",
    )


def node_hardware_unhealthy(t: Any) -> dict[str, Any]:
    """The EKS node monitoring agent's GPU fault condition, as kube-state-metrics exports node conditions."""
    return _alert(
        "GpuNodeHardwareUnhealthy",
        f'max by (node) (kube_node_status_condition{{condition="{GPU_CONDITION}",status="false"}}) == 1',
        t.gpu_unhealthy_minutes, "critical",
        f"Node {{{{ $labels.node }}}} reports {GPU_CONDITION}=False: the EKS node monitoring agent found a GPU fault.",
        "The node monitoring agent turned a GPU fault (a critical XID, a double-bit ECC error, NVLink errors, "
        "a failed DCGM health check) into this node condition; `kubectl describe node` shows the reason "
        "(e.g. NvidiaXID79Error). With node repair on, EKS reboots or replaces the node after the pool's wait "
        "(see the plan's node health section) and its pods are evicted; with repair off, cordon, drain and "
        "terminate it yourself. Delay: monitoring.alerts.gpuUnhealthyMinutes.",
    )


def row_remap_failure(_t: Any) -> dict[str, Any]:
    return _alert(
        "GpuRowRemapFailure", f"{_with_node('DCGM_FI_DEV_ROW_REMAP_FAILURE')} > 0", 0, "critical",
        f"{_GPU} failed to remap a faulty memory row{_WORKLOAD}.",
        "The GPU ran out of spare memory rows (HBM GPUs remap rows with uncorrectable errors at reset): its "
        "memory is failing and a reboot will not fix it. Drain the node and replace the instance (node "
        "repair does so for XID 64 in prod); report the instance to AWS if it recurs.",
    )


def ecc_uncorrectable(_t: Any) -> dict[str, Any]:
    errors = f"increase(DCGM_FI_DEV_ECC_DBE_VOL_TOTAL[{HEALTH_WINDOW}])"
    return _alert(
        "GpuEccUncorrectable", f"{_with_node(errors)} > 0", 0, "critical",
        f"{_GPU} had uncorrectable (double-bit) ECC errors in the last {HEALTH_WINDOW}{_WORKLOAD}.",
        "An uncorrectable memory error corrupts the data of the process that hit it (XID 48 in the logs); the "
        "workload should be restarted from its last checkpoint. On HBM GPUs a reset remaps the row: drain and "
        "reboot the node (node repair reboots on XID 48). Repeated errors, or GpuRowRemapFailure: replace it.",
    )


def nvlink_errors(_t: Any) -> dict[str, Any]:
    recoveries = f"increase(DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL[{HEALTH_WINDOW}])"
    return _alert(
        "GpuNvlinkErrors", f"{_with_node(recoveries)} > 0", 0, "warning",
        f"{_GPU}: an NVLink link went down and recovered in the last {HEALTH_WINDOW}{_WORKLOAD}.",
        "NVLink recoveries slow multi-GPU collectives and precede link failures (XID 74). Watch the replay "
        "and CRC counters (DCGM_FI_DEV_NVLINK_*_ERROR_COUNT_TOTAL); if recoveries repeat, drain the node and "
        "replace the instance (the node monitoring agent reports NvidiaNVLinkError, on which repair replaces).",
    )


def cost_rules(gpu_hourly_cost: Mapping[str, float]) -> list[dict[str, Any]]:
    """One constant series per priced GPU model, keyed like the exporter's `modelName` label, and one per
    MIG profile of each priced MIG-capable model, at its share of the GPU (its compute slices of the GPU's)."""
    from gpu_platform.facts.catalog import GPU_MODELS, mig_compute_share

    whole = [{"record": HOURLY_COST, "expr": f"vector({round(usd, 6)!r})",
              "labels": {"modelName": model, COST_LABEL: f"{usd:.2f}"}}
             for model, usd in sorted(gpu_hourly_cost.items())]
    slices = []
    for model, usd in sorted(gpu_hourly_cost.items()):
        gpu = next((g for g in GPU_MODELS.values() if g.nvml_name == model), None)
        if gpu is None:
            continue
        for profile in sorted(gpu.mig_profiles):
            share = usd * mig_compute_share(gpu, profile)
            slices.append({"record": MIG_SLICE_COST, "expr": f"vector({round(share, 6)!r})",
                           "labels": {"modelName": model, "GPU_I_PROFILE": profile, COST_LABEL: f"{share:.2f}"}})
    return whole + slices


def alert_rules(thresholds: Any, pool_memory: Mapping[str, tuple[float, float]] = MappingProxyType({}),
                acceptance_timeouts: Mapping[str, int] = MappingProxyType({})) -> list[dict[str, Any]]:
    t = thresholds
    return [
        *memory_near_limit(t, pool_memory), *temperature_high(t), *idle(t), xid_error(t), cuda_oom(t), *not_detected(t),
        exporter_down(t), devices_unhealthy(t), node_hardware_unhealthy(t), row_remap_failure(t),
        ecc_uncorrectable(t), nvlink_errors(t), *acceptance_rules(t, acceptance_timeouts), *capacity_rules(t.pending_minutes),
        *ending_alerts(t), *usage_alerts(t),
    ]


def rule_groups(thresholds: Any, gpu_hourly_cost: Mapping[str, float],
                reservation_ends: Sequence[ReservationEnd] = (),
                pool_memory: Mapping[str, tuple[float, float]] = MappingProxyType({}),
                acceptance_timeouts: Mapping[str, int] = MappingProxyType({})) -> list[dict[str, Any]]:
    """Prometheus rule groups: usable as a PrometheusRule's `spec.groups` and as a rules file.

    The price series are recorded at the head of the alert group: rules in one group run in order, while
    separate groups run independently, so a GPU idle since start-up would first alert as unpriced and
    then restart its `for:` timer once priced. Each reservation's end and drain are recorded there too.
    """
    records = [*cost_rules(gpu_hourly_cost), *recording_rules(reservation_ends)]
    return [{"name": ALERT_GROUP, "rules": [*records, *alert_rules(thresholds, pool_memory, acceptance_timeouts)]}]


def rules_file(thresholds: Any, gpu_hourly_cost: Mapping[str, float],
               reservation_ends: Sequence[ReservationEnd] = (),
               pool_memory: Mapping[str, tuple[float, float]] = MappingProxyType({}),
               acceptance_timeouts: Mapping[str, int] = MappingProxyType({})) -> str:
    """The rule groups as a YAML rules file (`groups:` document)."""
    groups = rule_groups(thresholds, gpu_hourly_cost, reservation_ends, pool_memory, acceptance_timeouts)
    return yaml.safe_dump({"groups": groups}, sort_keys=False, width=120)
