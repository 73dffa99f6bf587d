"""GPU monitoring: a Prometheus stack (installed or existing), the GPU alert rules and the GPU dashboard.

What goes into them is rendered in render/monitoring.py (mode, rule groups, chart values), render/alerts.py
and render/dashboard.py; `GpuMonitoring` only turns it into resources.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping, Optional, Sequence

import pulumi

from gpu_platform.facts import catalog, names
from gpu_platform.render.dashboard import FILE_NAME as DASHBOARD_FILE
from gpu_platform.render.dashboard import dashboard
from gpu_platform.render.monitoring import DASHBOARD_LABEL_VALUE, PROMETHEUS_RULE_API, gpu_rule_groups, prometheus_mode, stack_values

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec

# node-exporter mounts the host's /, /proc and /sys and uses the host network and PID namespace.
POD_SECURITY_LEVEL = "privileged"
# Operator, CRDs, Prometheus, Alertmanager and Grafana on fresh system nodes.
RELEASE_TIMEOUT_SECONDS = 900


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
