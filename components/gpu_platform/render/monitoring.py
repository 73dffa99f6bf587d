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

from gpu_platform.decisions.cost import gpu_hourly_cost_by_model
from gpu_platform.facts import names
from gpu_platform.render.alert_routing import alertmanager_values
from gpu_platform.render.alerts import rule_groups

if TYPE_CHECKING:
    from gpu_platform.spec.alerting import SeverityRoutesSpec
    from gpu_platform.spec.models import MonitoringSpec, PlatformSpec

PROMETHEUS_RULE_API = ("monitoring.coreos.com/v1", "PrometheusRule")
DASHBOARD_LABEL_VALUE = "1"  # the value the Grafana sidecar matches on its label (kube-prometheus-stack default)

# Node labels kube-state-metrics exports (as kube_node_labels): GpuNotDetected sees GPU nodes that are not
# tainted for GPUs, and tells DRA pools' nodes (no allocatable GPU by design) from device-plugin ones
# (docs/monitoring.md, KSM requirements).
KSM_NODE_LABELS = (names.GPU_PRESENT_LABEL, names.GPU_ALLOCATION_LABEL)


@dataclass(frozen=True)
class MonitoringSettings:
    monitoring: "MonitoringSpec"  # Prometheus, alert thresholds, alert delivery
    cluster_name: str = ""  # alert titles name the cluster
    team_routes: Mapping[str, "SeverityRoutesSpec"] = field(default_factory=dict)  # team -> its own receivers
    gpu_prices: Mapping[str, float] = field(default_factory=dict)  # USD per GPU-hour by NVML model (idle cost)
    system_node_selector: Mapping[str, str] = field(default_factory=lambda: dict(names.SYSTEM_NODE_SELECTOR))

    @classmethod
    def of(cls, spec: "PlatformSpec") -> "MonitoringSettings":
        return cls(spec.monitoring, spec.cluster.name, {t.name: t.alerting for t in spec.teams if t.alerting},
                   gpu_hourly_cost_by_model(spec), dict(spec.cluster.system_node_selector))


def prometheus_mode(monitoring: "MonitoringSpec") -> str:
    """`install`, `existing` or `none`; a disabled monitoring block counts as `none`."""
    return monitoring.prometheus.mode if monitoring.enabled else "none"


def scraping_namespace(monitoring: "MonitoringSpec") -> Optional[str]:
    """The namespace Prometheus scrapes from (None: no Prometheus in the cluster)."""
    return monitoring.prometheus.namespace if prometheus_mode(monitoring) != "none" else None


def gpu_rule_groups(settings: MonitoringSettings) -> list[dict[str, Any]]:
    """The rule groups for this stack: its thresholds and the hourly price of each of its GPU models."""
    return rule_groups(settings.monitoring.alerts, settings.gpu_prices)


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
    return {
        "prometheus": {"prometheusSpec": {
            "nodeSelector": dict(system),
            "ruleSelectorNilUsesHelmValues": False,
            "serviceMonitorSelectorNilUsesHelmValues": False,
            "podMonitorSelectorNilUsesHelmValues": False,
            "serviceMonitorNamespaceSelector": dict(scraped),
            "podMonitorNamespaceSelector": dict(scraped),
        }},
        "alertmanager": {**delivery, "alertmanagerSpec": {"nodeSelector": dict(system),
                                                          **delivery.get("alertmanagerSpec", {})}},
        "prometheusOperator": {
            "nodeSelector": dict(system),
            "admissionWebhooks": {"patch": {"nodeSelector": dict(system)}},  # the certificate Job
        },
        "grafana": {
            "nodeSelector": dict(system),
            "sidecar": {"dashboards": {"enabled": True, "label": prom.grafana_dashboard_label,
                                       "labelValue": DASHBOARD_LABEL_VALUE, "searchNamespace": "ALL"}},
        },
        "kube-state-metrics": {
            "nodeSelector": dict(system),
            "metricLabelsAllowlist": [f"nodes=[{','.join(KSM_NODE_LABELS)}]"],
        },
        # Node metrics from every node, GPU nodes included: tolerate every taint.
        "prometheus-node-exporter": {"tolerations": [{"operator": "Exists"}]},
    }
