"""GPU monitoring as plain data: the Prometheus mode, the GPU alert rule groups priced for this stack, and
the kube-prometheus-stack chart's values (the resources are in resources/monitoring.py).

Modes (`monitoring.prometheus.mode`):
  install   a pinned kube-prometheus-stack release in its own namespace; the rules and dashboard wait for it
  existing  no release; the rules and dashboard carry the labels the existing stack selects
  none      nothing in the cluster (no Prometheus operator CRDs); the planner still writes the rules file

The dcgm-exporter's metrics CSV and ServiceMonitor are not created here: the GPU Operator's chart renders
both from `dcgmExporter` values (render/dcgm_metrics.py, render/operator_values.py), and turns the
ServiceMonitor on under the same condition as `prometheus_mode(spec) != "none"`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional
from collections.abc import Mapping

from gpu_platform.decisions.acceptance import accepted_pools
from gpu_platform.decisions.cost import gpu_hourly_cost_by_model
from gpu_platform.decisions.efa import efa_pools
from gpu_platform.decisions.metrics_storage import MetricsStorage, stack_metrics_storage
from gpu_platform.decisions.usage import PoolRate, UsageUnit, pool_rates, team_namespaces, usage_units
from gpu_platform.facts import catalog, names
from gpu_platform.render.alert_routing import alertmanager_values
from gpu_platform.render.alerts import rule_groups
from gpu_platform.render.data_feeding import cloudwatch_datasource, data_feeding_wanted
from gpu_platform.render.reservation_alerts import ReservationEnd, reservation_ends
from gpu_platform.render.usage_rules import usage_groups

if TYPE_CHECKING:
    from gpu_platform.spec.alerting import SeverityRoutesSpec
    from gpu_platform.spec.models import MonitoringSpec, PlatformSpec

PROMETHEUS_RULE_API = ("monitoring.coreos.com/v1", "PrometheusRule")
DASHBOARD_LABEL_VALUE = "1"  # the value the Grafana sidecar matches on its label (kube-prometheus-stack default)

# Node labels kube-state-metrics exports (as kube_node_labels): GpuNotDetected sees GPU nodes that are not
# tainted for GPUs, and tells DRA pools' nodes (no allocatable GPU by design) from device-plugin ones
# (docs/monitoring.md, KSM requirements); usage is recorded per pool from the pool label (docs/usage.md).
KSM_NODE_LABELS = (names.GPU_PRESENT_LABEL, names.GPU_ALLOCATION_LABEL, names.POOL_LABEL)


@dataclass(frozen=True)
class MonitoringSettings:
    monitoring: "MonitoringSpec"  # Prometheus, alert thresholds, alert delivery
    cluster_name: str = ""  # alert titles name the cluster
    team_routes: Mapping[str, "SeverityRoutesSpec"] = field(default_factory=dict)  # team -> its own receivers
    gpu_prices: Mapping[str, float] = field(default_factory=dict)  # USD per GPU-hour by NVML model (idle cost)
    system_node_selector: Mapping[str, str] = field(default_factory=lambda: dict(names.SYSTEM_NODE_SELECTOR))
    storage: Optional[MetricsStorage] = None  # retention and volumes of an installed stack
    reservation_ends: tuple[ReservationEnd, ...] = ()  # reserved pools' ends and drains (run-time alerts)
    usage_units: tuple[UsageUnit, ...] = ()  # each pool's allocatable units: GPU share and price (usage rules)
    pool_rates: tuple[PoolRate, ...] = ()  # each pool's price per GPU-hour (used GPU time in dollars)
    team_namespaces: Mapping[str, str] = field(default_factory=dict)  # namespace -> team
    pool_memory: Mapping[str, tuple[float, float]] = field(default_factory=dict)  # pool -> its memory thresholds
    acceptance_timeouts: Mapping[str, int] = field(default_factory=dict)  # gated pool -> its checks' timeout (min)
    cloudwatch_region: str = ""  # Grafana reads the file systems' CloudWatch metrics in this region ("": it does not)
    efa: bool = False  # the EFA collector runs (efa_metrics_wanted): the dashboard's EFA panels

    @classmethod
    def of(cls, spec: "PlatformSpec", region: str = "") -> "MonitoringSettings":
        """`region`: the stack's; Grafana gets a CloudWatch data source in it when the stack wants one."""
        return cls(spec.monitoring, spec.cluster.name, {t.name: t.alerting for t in spec.teams if t.alerting},
                   gpu_hourly_cost_by_model(spec), dict(spec.cluster.system_node_selector),
                   stack_metrics_storage(spec), reservation_ends(spec), tuple(usage_units(spec)),
                   tuple(pool_rates(spec)), team_namespaces(spec), spec.pool_memory_limits(),
                   {gate.pool: gate.timeout_minutes for _, gate in accepted_pools(spec)},
                   region if region and data_feeding_wanted(spec) else "", efa_metrics_wanted(spec))


def prometheus_mode(monitoring: "MonitoringSpec") -> str:
    """`install`, `existing` or `none`; a disabled monitoring block counts as `none`."""
    return monitoring.prometheus.mode if monitoring.enabled else "none"


def scraping_namespace(monitoring: "MonitoringSpec") -> Optional[str]:
    """The namespace Prometheus scrapes from (None: no Prometheus in the cluster)."""
    return monitoring.prometheus.namespace if prometheus_mode(monitoring) != "none" else None


def efa_metrics_wanted(spec: "PlatformSpec") -> bool:
    """The platform's EFA collector runs (render/efa_metrics.py), and the dashboards show EFA throughput: the stack
    has EFA pools to watch and a Prometheus (installed or existing) to scrape them."""
    return bool(efa_pools(spec)) and scraping_namespace(spec.monitoring) is not None


def metrics_storage_class() -> dict[str, Any]:
    """Encrypted gp3 volumes from the EBS CSI driver, made in the zone where the pod lands (WaitForFirstConsumer)
    and kept when the claim goes (a reinstall finds its history). Parameters: the driver's documentation,
    https://github.com/kubernetes-sigs/aws-ebs-csi-driver/blob/master/docs/parameters.md"""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": names.METRICS_STORAGE_CLASS},
            "provisioner": catalog.EBS_CSI_PROVISIONER, "parameters": {"type": "gp3", "encrypted": "true"},
            "reclaimPolicy": "Retain", "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": True}


def _claim_template(gib: int) -> dict[str, Any]:
    return {"volumeClaimTemplate": {"spec": {"storageClassName": names.METRICS_STORAGE_CLASS,
                                             "accessModes": ["ReadWriteOnce"],
                                             "resources": {"requests": {"storage": f"{gib}Gi"}}}}}


def _storage_values(storage: Optional[MetricsStorage]) -> tuple[dict[str, Any], dict[str, Any]]:
    """prometheusSpec and alertmanagerSpec entries: the retention, and the volumes when they persist."""
    if storage is None:
        return {}, {}
    prom: dict[str, Any] = {"retention": storage.retention}
    if not storage.persistent:
        return prom, {}
    prom.update({"retentionSize": storage.retention_size, "storageSpec": _claim_template(storage.prometheus_gib)})
    return prom, {"storage": _claim_template(storage.alertmanager_gib)}


def gpu_rule_groups(settings: MonitoringSettings) -> list[dict[str, Any]]:
    """The rule groups for this stack: its thresholds (stack-wide and per pool) and the hourly price of each of
    its GPU models, then its usage records (GPU time allocated and used, in GPUs and dollars)."""
    return [*rule_groups(settings.monitoring.alerts, settings.gpu_prices, settings.reservation_ends,
                         settings.pool_memory, settings.acceptance_timeouts),
            *usage_groups(settings.usage_units, settings.pool_rates, settings.team_namespaces)]


def _cloudwatch_values(region: str) -> dict[str, Any]:
    """Grafana's CloudWatch data source, and the service account name its Pod Identity association names."""
    if not region:
        return {}
    return {"additionalDataSources": [cloudwatch_datasource(region)],
            "serviceAccount": {"name": names.GRAFANA_SERVICE_ACCOUNT}}


def stack_values(settings: MonitoringSettings) -> dict[str, Any]:
    """kube-prometheus-stack chart values (every key checked against the chart: tests/resources/test_monitoring.py).

    Selection: Prometheus selects every PrometheusRule, and every ServiceMonitor and PodMonitor whatever
    its labels (the `*NilUsesHelmValues: false` switches leave the empty default selectors as "match all"),
    but monitors only in namespaces labelled `gpu-platform.io/scrape: "true"`: the platform's own (the
    chart's monitors, the GPU Operator's, Kueue's) and the team namespaces, where teams manage theirs. The
    platform's objects still carry `selectorLabels` for `existing` mode.
    """
    prom = settings.monitoring.prometheus
    system = dict(settings.system_node_selector)
    delivery = alertmanager_values(settings)
    scraped = {"matchLabels": {names.SCRAPE_LABEL: names.SCRAPE_VALUE}}
    prom_storage, alertmanager_storage = _storage_values(settings.storage)
    return {
        "prometheus": {"prometheusSpec": {
            "nodeSelector": dict(system),
            "ruleSelectorNilUsesHelmValues": False,
            "serviceMonitorSelectorNilUsesHelmValues": False,
            "podMonitorSelectorNilUsesHelmValues": False,
            "serviceMonitorNamespaceSelector": dict(scraped),
            "podMonitorNamespaceSelector": dict(scraped),
            **prom_storage,
        }},
        "alertmanager": {**delivery, "alertmanagerSpec": {"nodeSelector": dict(system), **alertmanager_storage,
                                                          **delivery.get("alertmanagerSpec", {})}},
        "prometheusOperator": {
            "nodeSelector": dict(system),
            "admissionWebhooks": {"patch": {"nodeSelector": dict(system)}},  # the certificate Job
        },
        "grafana": {
            "nodeSelector": dict(system),
            "sidecar": {"dashboards": {"enabled": True, "label": prom.grafana_dashboard_label,
                                       "labelValue": DASHBOARD_LABEL_VALUE, "searchNamespace": "ALL"}},
            **_cloudwatch_values(settings.cloudwatch_region),
        },
        "kube-state-metrics": {
            "nodeSelector": dict(system),
            # Nodes: their pool and GPU labels; Jobs: the Kueue queue they waited in (the job history's queue).
            "metricLabelsAllowlist": [f"nodes=[{','.join(KSM_NODE_LABELS)}]", f"jobs=[{names.KUEUE_QUEUE_NAME_LABEL}]"],
        },
        # Node metrics from every node, GPU nodes included: tolerate every taint.
        "prometheus-node-exporter": {"tolerations": [{"operator": "Exists"}]},
    }
