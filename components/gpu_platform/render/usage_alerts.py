"""An alert for GPUs starved by their own pod: the GPUs mostly idle while the pod's CPU is saturated, the sign of
a data loader, tokenizer or decoder that cannot feed them. It names the pod's namespace, so it reaches the team.

CPU figures are the kubelet's cAdvisor series the Prometheus stack scrapes (`container_cpu_usage_seconds_total`,
`container_cpu_cfs_throttled_periods_total`, `container_cpu_cfs_periods_total`, labelled namespace, pod and
container) against kube-state-metrics' `kube_pod_container_resource_limits{resource="cpu"}`; GPU activity is
dcgm-exporter's DCGM_FI_PROF_GR_ENGINE_ACTIVE of the pod's GPUs or MIG instances. Idle threshold and duration
are the GPU idle alert's (monitoring.alerts.idleUtilizationPercent, idleMinutes).
"""
from __future__ import annotations

from typing import Any

from gpu_platform.render.alert_rule import alerting_rule

CPU_RATE_WINDOW = "5m"
CPU_SATURATED_PERCENT = 90  # CPU used against the pod's CPU limit
CPU_THROTTLED_PERCENT = 25  # CFS periods in which the pod's containers were throttled
CADVISOR_METRICS = frozenset({"container_cpu_usage_seconds_total", "container_cpu_cfs_throttled_periods_total",
                              "container_cpu_cfs_periods_total"})
KSM_METRICS = frozenset({"kube_pod_container_resource_limits"})
POD = "namespace, pod"


def _per_pod_rate(metric: str) -> str:
    return f'sum by ({POD}) (rate({metric}{{container!="", container!="POD"}}[{CPU_RATE_WINDOW}]))'


def cpu_saturated() -> str:
    """Pods using at least CPU_SATURATED_PERCENT of their CPU limit, or throttled in CPU_THROTTLED_PERCENT of
    their CFS periods (a limit set per container trips the second first)."""
    limit = f'sum by ({POD}) (kube_pod_container_resource_limits{{resource="cpu"}})'
    used = f"100 * {_per_pod_rate('container_cpu_usage_seconds_total')} / {limit} >= {CPU_SATURATED_PERCENT}"
    throttled = (f"100 * {_per_pod_rate('container_cpu_cfs_throttled_periods_total')} / "
                 f"{_per_pod_rate('container_cpu_cfs_periods_total')} >= {CPU_THROTTLED_PERCENT}")
    return f"({used}) or ({throttled})"


def gpu_starved(t: Any) -> dict[str, Any]:
    threshold = f"{t.idle_utilization_percent:g}"
    busiest = f'100 * max by ({POD}) (DCGM_FI_PROF_GR_ENGINE_ACTIVE{{pod!=""}})'
    return alerting_rule(
        "GpuStarvedByCpu", f"({busiest} < {threshold}) and on ({POD}) ({cpu_saturated()})", t.idle_minutes, "warning",
        f"Pod {{{{ $labels.namespace }}}}/{{{{ $labels.pod }}}}: its GPUs are under {threshold}% busy (busiest "
        f"{{{{ $value | humanize }}}}%) while its CPU is saturated, for {t.idle_minutes}m.",
        "The GPUs wait for the CPU: the input pipeline (data loading, decoding, tokenising, augmentation) or the "
        f"host-side work between steps cannot keep up. The pod uses {CPU_SATURATED_PERCENT}% of its CPU limit or "
        f"is throttled in {CPU_THROTTLED_PERCENT}% of its CPU periods. Raise its CPU limit (or drop it and keep "
        "the request), add data-loader workers with pinned memory and prefetching, move decoding to the GPU, "
        "or pre-process the data set. The usage dashboard shows the pod's GPU activity beside its CPU "
        "throttling, network, EFA and file-system throughput. Threshold: monitoring.alerts.idleUtilizationPercent "
        "/ idleMinutes.",
    )


def usage_alerts(t: Any) -> list[dict[str, Any]]:
    return [gpu_starved(t)]
