"""GPU monitoring: a Prometheus stack (installed or existing), the GPU alert rules and the GPU dashboard.

What is decided here is pure (`prometheus_mode`, `gpu_rule_groups`, `stack_values`); `GpuMonitoring` only
turns it into resources. The dcgm-exporter's metrics CSV and ServiceMonitor are not created here: the GPU
Operator's chart renders both from `dcgmExporter` values (components/dcgm_metrics.py, operator_values.py),
and turns the ServiceMonitor on under the same condition as `prometheus_mode(spec) != "none"`.

Modes (`monitoring.prometheus.mode`):
  install   a pinned kube-prometheus-stack release in its own namespace; the rules and dashboard wait for it
  existing  no release; the rules and dashboard carry the labels the existing stack selects
  none      nothing in the cluster (no Prometheus operator CRDs); the planner still writes the rules file
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping, Optional, Sequence

import pulumi

from . import catalog, names
from .alert_routing import alertmanager_values
from .alerts import rule_groups
from .dashboard import FILE_NAME as DASHBOARD_FILE, dashboard

if TYPE_CHECKING:
    from .spec import PlatformSpec

PROMETHEUS_RULE_API = ("monitoring.coreos.com/v1", "PrometheusRule")
DASHBOARD_LABEL_VALUE = "1"  # the value the Grafana sidecar matches on its label (kube-prometheus-stack default)
# node-exporter mounts the host's /, /proc and /sys and uses the host network and PID namespace.
POD_SECURITY_LEVEL = "privileged"
# Operator, CRDs, Prometheus, Alertmanager and Grafana on fresh system nodes.
RELEASE_TIMEOUT_SECONDS = 900
# Node labels kube-state-metrics exports (as kube_node_labels): lets GpuNotDetected see GPU nodes that are
# not tainted for GPUs (docs/monitoring.md, KSM requirements).
KSM_NODE_LABELS = (names.GPU_PRESENT_LABEL,)


def prometheus_mode(spec: "PlatformSpec") -> str:
    """`install`, `existing` or `none`; a disabled monitoring block counts as `none`."""
    return spec.monitoring.prometheus.mode if spec.monitoring.enabled else "none"


def gpu_rule_groups(spec: "PlatformSpec") -> list[dict]:
    """The rule groups for this stack: its thresholds and the hourly price of each of its GPU models."""
    from .cost import gpu_hourly_cost_by_model

    return rule_groups(spec.monitoring.alerts, gpu_hourly_cost_by_model(spec))


def stack_values(spec: "PlatformSpec") -> dict:
    """kube-prometheus-stack chart values (every key checked against the chart: tests/components/test_monitoring.py).

    Selection: Prometheus selects every PrometheusRule and ServiceMonitor in every namespace (the
    `*NilUsesHelmValues: false` switches leave the empty default selectors as "match all"), so the
    GPU Operator's ServiceMonitor, the chart's own monitors and the platform's rules are picked up
    whatever labels they carry. The platform's objects still carry `selectorLabels` for `existing` mode.
    """
    prom = spec.monitoring.prometheus
    system = {names.ROLE_LABEL: names.SYSTEM_ROLE}
    delivery = alertmanager_values(spec)
    return {
        "prometheus": {"prometheusSpec": {
            "nodeSelector": dict(system),
            "ruleSelectorNilUsesHelmValues": False,
            "serviceMonitorSelectorNilUsesHelmValues": False,
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


@dataclass
class GpuMonitoringArgs:
    spec: "PlatformSpec"
    k8s_provider: pulumi.ProviderResource
    depends_on: Sequence[pulumi.Resource] = field(default_factory=list)  # system nodes and core add-ons
    alert_secrets: Mapping[str, pulumi.Input[str]] = field(default_factory=dict)  # config key -> secret value


class GpuMonitoring(pulumi.ComponentResource):
    """Prometheus stack (mode install), PrometheusRule with the GPU alerts, and the dashboard ConfigMap."""

    def __init__(self, name: str, args: GpuMonitoringArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpu-platform:monitoring:GpuMonitoring", name, None, opts)
        spec, prom = args.spec, args.spec.monitoring.prometheus
        self.mode = prometheus_mode(spec)
        self._k8s = pulumi.ResourceOptions(parent=self, provider=args.k8s_provider)
        self.namespace = self.release = self.rules = self.dashboard = self.receiver_secrets = None
        if self.mode == "install":
            self._install_stack(name, spec, args.depends_on, args.alert_secrets)
        # What must exist before anything creates Prometheus operator objects (ServiceMonitor, PrometheusRule).
        self.crds_ready: list[pulumi.Resource] = [self.release] if self.release is not None else []
        if self.mode != "none":
            # The CRDs come with the release; an existing stack already has them.
            after = pulumi.ResourceOptions(depends_on=self.crds_ready or list(args.depends_on))
            self.rules = self._prometheus_rule(name, spec, after)
            self.dashboard = self._dashboard(name, spec, after)
        self.outputs = {"prometheus": self.mode}
        if self.mode != "none":
            self.outputs.update(namespace=prom.namespace, alertRules=names.GPU_RULES_NAME,
                                dashboard=names.GPU_DASHBOARD_CONFIGMAP)
        if self.release is not None:
            self.outputs["chartVersion"] = prom.chart_version
        self.register_outputs(self.outputs)

    def _install_stack(self, name: str, spec: "PlatformSpec", depends_on: Sequence[pulumi.Resource],
                       alert_secrets: Mapping[str, pulumi.Input[str]]) -> None:
        from pulumi_kubernetes.core.v1 import Namespace, Secret
        from pulumi_kubernetes.helm.v3 import Release, RepositoryOptsArgs
        from pulumi_kubernetes.meta.v1 import ObjectMetaArgs

        prom = spec.monitoring.prometheus
        repo, chart = catalog.KUBE_PROMETHEUS_STACK_CHART
        self.namespace = Namespace(
            f"{name}-namespace",
            metadata=ObjectMetaArgs(name=prom.namespace, labels={
                **names.pod_security_labels(POD_SECURITY_LEVEL), names.MANAGED_BY_LABEL: names.MANAGED_BY}),
            opts=self._k8s,
        )
        # Receivers read their secrets from files in this Secret: Alertmanager mounts it before it starts.
        self.receiver_secrets = Secret(
            f"{name}-receiver-secrets",
            metadata=ObjectMetaArgs(name=names.ALERT_RECEIVERS_SECRET, namespace=self.namespace.metadata.name,
                                    labels={names.MANAGED_BY_LABEL: names.MANAGED_BY}),
            type="Opaque", string_data=dict(alert_secrets), opts=self._k8s,
        ) if alert_secrets else None
        self.release = Release(
            f"{name}-stack",
            name=names.KUBE_PROMETHEUS_STACK_RELEASE,
            chart=chart,
            version=prom.chart_version,
            repository_opts=RepositoryOptsArgs(repo=repo),
            namespace=self.namespace.metadata.name,
            create_namespace=False,
            values=stack_values(spec),
            skip_await=False,
            timeout=RELEASE_TIMEOUT_SECONDS,
            opts=pulumi.ResourceOptions.merge(
                self._k8s, pulumi.ResourceOptions(depends_on=[
                    self.namespace, *([self.receiver_secrets] if self.receiver_secrets else []), *depends_on])),
        )

    def _prometheus_rule(self, name: str, spec: "PlatformSpec", after: pulumi.ResourceOptions):
        from pulumi_kubernetes.apiextensions import CustomResource
        from pulumi_kubernetes.meta.v1 import ObjectMetaArgs

        prom = spec.monitoring.prometheus
        api_version, kind = PROMETHEUS_RULE_API
        return CustomResource(
            f"{name}-rules",
            api_version=api_version,
            kind=kind,
            metadata=ObjectMetaArgs(name=names.GPU_RULES_NAME, namespace=prom.namespace, labels={
                **prom.selector_labels, names.MANAGED_BY_LABEL: names.MANAGED_BY}),
            spec={"groups": gpu_rule_groups(spec)},
            opts=pulumi.ResourceOptions.merge(self._k8s, after),
        )

    def _dashboard(self, name: str, spec: "PlatformSpec", after: pulumi.ResourceOptions):
        from pulumi_kubernetes.core.v1 import ConfigMap
        from pulumi_kubernetes.meta.v1 import ObjectMetaArgs

        prom = spec.monitoring.prometheus
        return ConfigMap(
            f"{name}-dashboard",
            metadata=ObjectMetaArgs(name=names.GPU_DASHBOARD_CONFIGMAP, namespace=prom.namespace, labels={
                prom.grafana_dashboard_label: DASHBOARD_LABEL_VALUE, names.MANAGED_BY_LABEL: names.MANAGED_BY}),
            data={DASHBOARD_FILE: json.dumps(dashboard(spec.monitoring.alerts), separators=(",", ":"))},
            opts=pulumi.ResourceOptions.merge(self._k8s, after),
        )
