"""GPU monitoring: a Prometheus stack (installed or existing), the GPU alert rules and the GPU dashboard.

What goes into them is rendered in render/monitoring.py (mode, rule groups, chart values), render/alerts.py
and render/dashboard.py; `GpuMonitoring` only turns it into resources. It takes its own arguments (the
stack file's `monitoring` block, in the schema's terms), so it serves any cluster.
"""
import json
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Optional

import pulumi
import pulumi_kubernetes

from gpu_platform.decisions.metrics_storage import metrics_storage
from gpu_platform.facts import catalog, component_types, names
from gpu_platform.render.dashboard import FILE_NAME as DASHBOARD_FILE
from gpu_platform.render.dashboard import dashboard
from gpu_platform.render.reservation_alerts import ReservationEnd
from gpu_platform.decisions.usage import PoolRate, UsageUnit
from gpu_platform.render.monitoring import (
    DASHBOARD_LABEL_VALUE, PROMETHEUS_RULE_API, MonitoringSettings, gpu_rule_groups, metrics_storage_class,
    prometheus_mode, stack_values,
)
from gpu_platform.render.iam import pod_identity_trust_policy
from gpu_platform.render.data_feeding import read_policy
from gpu_platform.resources import options
from gpu_platform.resources.options import named
from gpu_platform.resources.typed_args import ArgumentsError, TypedDict, argument_problems, as_arguments
from gpu_platform.spec.alerting import SeverityRoutesSpec, monitoring_rules
from gpu_platform.spec.errors import SpecError
from gpu_platform.spec.field_path import FieldPath
from gpu_platform.spec.models import MonitoringSpec
from gpu_platform.spec.parse import read_part

if TYPE_CHECKING:
    from pulumi_kubernetes.apiextensions import CustomResource
    from pulumi_kubernetes.core.v1 import ConfigMap, Namespace, Secret
    from pulumi_kubernetes.helm.v3 import Release

# node-exporter mounts the host's /, /proc and /sys and uses the host network and PID namespace.
POD_SECURITY_LEVEL = "privileged"
# Operator, CRDs, Prometheus, Alertmanager and Grafana on fresh system nodes.
RELEASE_TIMEOUT_SECONDS = 900


class PrometheusArgs(TypedDict, total=False):
    """Where Prometheus comes from."""

    mode: str
    """install (a pinned kube-prometheus-stack, default), existing (rules and dashboard only) or none."""
    chart_version: str
    """The kube-prometheus-stack chart, pinned (install mode)."""
    namespace: str
    """The namespace Prometheus runs in (or, for an existing one, where the rules go)."""
    selector_labels: dict[str, str]
    """Labels the rules and dashboard carry for an existing Prometheus to select them."""
    grafana_dashboard_label: str
    """The label the Grafana sidecar finds dashboards by (default grafana_dashboard)."""
    retention: str
    """How long Prometheus keeps samples: whole h, d, w or y (default 10d, the chart's)."""
    storage_gi: int
    """The Prometheus volume in GiB (default: sized from the retention, docs/monitoring.md)."""
    ebs_csi_addon_version: str
    """The aws-ebs-csi-driver add-on, pinned: installed with its role, it puts Prometheus and Alertmanager on
    encrypted gp3 volumes; without it both keep their data in the pod (lost when it moves)."""


class AlertThresholdsArgs(TypedDict, total=False):
    """When the GPU alerts fire (the stack file's monitoring.alerts; every field has a default)."""

    memory_used_percent: float
    """GpuMemoryNearLimit (warning) fires when a GPU's framebuffer is fuller than this percentage."""
    memory_critical_percent: float
    """GpuMemoryNearLimit turns critical above this percentage."""
    memory_for_minutes: int
    """How long the memory condition must hold before GpuMemoryNearLimit fires."""
    temperature_celsius: float
    """GpuTemperatureHigh (warning) fires above this GPU temperature."""
    temperature_critical_celsius: float
    """GpuTemperatureHigh turns critical above this GPU temperature."""
    temperature_for_minutes: int
    """How long the temperature condition must hold before GpuTemperatureHigh fires."""
    idle_utilization_percent: float
    """GpuIdle (info) fires for a GPU or MIG slice busy less than this percentage."""
    idle_minutes: int
    """How long a GPU must stay under the idle threshold before GpuIdle fires."""
    exporter_down_minutes: int
    """How long dcgm-exporter may be down before DcgmExporterDown fires."""
    not_detected_minutes: int
    """How long a GPU node may show no GPU before GpuNotDetected fires."""
    gpu_unhealthy_minutes: int
    """How long GPUs may stay unhealthy before GpuDevicesUnhealthy and GpuNodeHardwareUnhealthy fire."""
    pending_minutes: int
    """How long a GPU pod may stay unschedulable before GpuPodPending fires."""
    reservation_warning_hours: int
    """GpuReservationEnding (warning) fires this many hours before a reservation's nodes go."""
    reservation_critical_hours: int
    """GpuReservationEnding turns critical this many hours before (below the warning)."""


class SeverityRoutesArgs(TypedDict, total=False):
    """Receiver per severity; `default` takes every severity not listed."""

    critical: str
    """The receiver of critical alerts."""
    high: str
    """The receiver of high alerts."""
    warning: str
    """The receiver of warning alerts."""
    info: str
    """The receiver of info alerts."""
    default: str
    """The receiver of every severity not named here."""


class ReceiverArgs(TypedDict, total=False):
    """One receiver: exactly one of slack, pagerduty, webhook, sns. Secrets are named by config key and given in
    `receiver_secrets`."""

    name: str
    """The receiver's name, as routes name it."""
    slack: dict[str, str]
    """{webhookUrlSecret, channel}."""
    pagerduty: dict[str, str]
    """{routingKeySecret}."""
    webhook: dict[str, str]
    """{url, bearerTokenSecret}."""
    sns: dict[str, str]
    """{topicArn}."""


class AlertingArgs(TypedDict, total=False):
    """Who gets which alert: receivers, the platform's routes and Alertmanager's grouping."""

    receivers: list[ReceiverArgs]
    """Where alerts can go: Slack, PagerDuty, a webhook or SNS, each by name."""
    platform: SeverityRoutesArgs
    """The receiver of the platform's own alerts, per severity."""
    group_by: list[str]
    """Labels Alertmanager groups alerts by into one notification."""
    group_wait: str
    """How long Alertmanager waits to batch a new group's first notification (e.g. 30s)."""
    group_interval: str
    """How long it waits before notifying about alerts added to a group already notified."""
    repeat_interval: str
    """How often a still-firing alert is sent again."""
    critical_repeat_interval: str
    """How often a still-firing critical alert is sent again."""


class ReservationEndArgs(TypedDict, total=False):
    """A reserved pool's end, alerted at run time (GpuReservationEnding)."""

    pool: str
    """The reserved pool's name."""
    reservation: str
    """The reservation's id (cr-...)."""
    kind: str
    """capacity-block or odcr."""
    drain: str
    """When the pool's nodes go, ISO 8601 in UTC (a Capacity Block: 40 minutes before its end)."""
    end: str
    """When the reservation ends, ISO 8601 in UTC."""


class UsageUnitArgs(TypedDict, total=False):
    """One allocatable resource of one pool, as the usage records count and price it (docs/usage.md)."""

    pool: str
    """The pool the resource belongs to."""
    resource: str
    """nvidia.com/gpu, nvidia.com/mig-<profile>, or dra (GPUs allocated by ResourceClaims)."""
    kind: str
    """whole, mig, time-sliced or dra."""
    gpu_share: float
    """The GPUs one unit counts as (a 3g slice of 7: 3/7; a replica of 4: 0.25)."""
    usd_per_hour: float
    """One unit for an hour (omit when the pool has no price)."""
    gpu_model: str
    """The pool's GPU as NVML names it (dcgm-exporter's modelName); needed for MIG units."""


class PoolMemoryArgs(TypedDict):
    """A pool's own GPU memory thresholds (percent of each GPU's memory)."""

    memory_used_percent: float
    """Warning above this."""
    memory_critical_percent: float
    """Critical above this."""


class GpuMonitoringArgs(TypedDict, total=False):
    """Prometheus, the GPU alert rules and dashboard, and where alerts go."""

    k8s_provider: pulumi_kubernetes.Provider
    """The cluster's Kubernetes provider (default: the provider the resource options give)."""
    enabled: bool
    """False: nothing in the cluster (default true)."""
    prometheus: PrometheusArgs
    """The Prometheus that scrapes DCGM: installed here, or one the cluster runs."""
    alerts: AlertThresholdsArgs
    """Thresholds of the GPU alerts (temperature, memory, idle GPUs, XID errors...)."""
    alerting: AlertingArgs
    """Alert delivery through the installed Alertmanager (mode install)."""
    team_routes: dict[str, SeverityRoutesArgs]
    """Team name -> its receivers: alerts from the team's namespace go there."""
    receiver_secrets: dict[str, pulumi.Input[str]]
    """Config key named by a receiver -> the secret (a webhook URL, routing key or token)."""
    gpu_prices: dict[str, float]
    """USD per GPU-hour by NVIDIA model name (dcgm-exporter's modelName): what idle GPUs cost, in alerts."""
    cluster_name: str
    """Named in alert titles."""
    system_node_selector: dict[str, str]
    """Where the Prometheus stack runs (default gpu-platform.io/role=system)."""
    environment: str
    """prod requires alert delivery when the stack is installed."""
    nodes_at_max: int
    """Nodes of the cluster at max size: sizes the Prometheus volume with the retention (default 0)."""
    gpus_at_max: int
    """GPUs (or MIG slices) at max size: sizes the Prometheus volume with the retention (default 0)."""
    reservation_ends: list[ReservationEndArgs]
    """Reserved pools whose end alerts at run time (default: none)."""
    usage_units: list[UsageUnitArgs]
    """Each pool's allocatable units: GPU usage is recorded per namespace and pool at these shares and prices
    (default: none, no usage records)."""
    pool_gpu_prices: dict[str, float]
    """Pool name -> USD per GPU-hour: what used GPU time is priced at."""
    team_namespaces: dict[str, str]
    """Namespace -> team, recorded beside the usage."""
    pool_memory: dict[str, PoolMemoryArgs]
    """Pool name -> the GPU memory thresholds of its nodes, where they differ from `alerts` (default: none)."""
    acceptance_timeouts: dict[str, int]
    """Gated pool name -> its acceptance checks' timeout in minutes: a node still waiting for a verdict past it
    (plus a margin) alerts (default: none)."""


class GpuMonitoring(pulumi.ComponentResource):
    """Prometheus stack (mode install), PrometheusRule with the GPU alerts, and the dashboard ConfigMap."""

    mode: pulumi.Output[str]
    """install, existing or none."""

    def __init__(self, name: str, args: GpuMonitoringArgs, opts: Optional[pulumi.ResourceOptions] = None):
        self._build(name, monitoring_settings(name, args), args.get("receiver_secrets") or {},
                    args.get("k8s_provider"), opts)

    @classmethod
    def of(cls, name: str, settings: MonitoringSettings, receiver_secrets: Mapping[str, pulumi.Input[str]],
           k8s_provider: Optional[pulumi.ProviderResource] = None,
           opts: Optional[pulumi.ResourceOptions] = None) -> "GpuMonitoring":
        """Monitoring the stack file's rules already validated (GpuPlatform's), built as it is: not checked again."""
        component = cls.__new__(cls)
        component._build(name, settings, receiver_secrets, k8s_provider, opts)
        return component

    def _build(self, name: str, settings: MonitoringSettings, receiver_secrets: Mapping[str, pulumi.Input[str]],
               k8s_provider: Optional[pulumi.ProviderResource], opts: Optional[pulumi.ResourceOptions]) -> None:
        super().__init__(component_types.public("GpuMonitoring"), name, None,
                         options.formerly(opts, "GpuMonitoring"))
        prom = settings.monitoring.prometheus
        mode = prometheus_mode(settings.monitoring)
        self.mode = pulumi.Output.from_input(mode)
        provider = options.kubernetes({"k8s_provider": k8s_provider})
        # not `_provider`: pulumi.Resource keeps the provider of the resource's methods under that name
        self._k8s, self._opts, self._k8s_provider = options.child(self, opts, **provider), opts, provider
        self.namespace: Optional["Namespace"] = None
        self.release: Optional["Release"] = None
        self.rules: Optional["CustomResource"] = None
        self.dashboard: Optional["ConfigMap"] = None
        self.receiver_secrets: Optional["Secret"] = None
        if mode == "install":
            self._install_stack(name, settings, receiver_secrets)
        # What must exist before anything creates Prometheus operator objects (ServiceMonitor, PrometheusRule).
        self.crds_ready: list[pulumi.Resource] = [self.release] if self.release is not None else []
        if mode != "none":
            # The CRDs come with the release; an existing stack already has them.
            after = options.child(self, opts, depends_on=self.crds_ready, **provider)
            self.rules = self._prometheus_rule(name, settings, after)
            self.dashboard = self._dashboard(name, settings, after)
        self.outputs = {"prometheus": mode}
        if mode != "none":
            self.outputs.update(namespace=prom.namespace, alertRules=names.GPU_RULES_NAME,
                                dashboard=names.GPU_DASHBOARD_CONFIGMAP)
        if self.release is not None:
            self.outputs["chartVersion"] = prom.chart_version
        self.register_outputs(self.outputs)

    def _install_stack(self, name: str, settings: MonitoringSettings,
                       alert_secrets: Mapping[str, pulumi.Input[str]]) -> None:
        from pulumi_kubernetes.core.v1 import Namespace, Secret
        from pulumi_kubernetes.helm.v3 import Release, RepositoryOptsArgs

        prom = settings.monitoring.prometheus
        repo, chart = catalog.KUBE_PROMETHEUS_STACK_CHART
        self.namespace = Namespace(
            f"{name}-namespace",
            metadata={"name": prom.namespace, "labels": names.platform_namespace_labels(POD_SECURITY_LEVEL)},
            opts=self._k8s,
        )
        # Receivers read their secrets from files in this Secret: Alertmanager mounts it before it starts.
        self.receiver_secrets = Secret(
            f"{name}-receiver-secrets",
            metadata={"name": names.ALERT_RECEIVERS_SECRET, "namespace": self.namespace.metadata.name,
                      "labels": {names.MANAGED_BY_LABEL: names.MANAGED_BY}},
            type="Opaque", string_data=dict(alert_secrets), opts=self._k8s,
        ) if alert_secrets else None
        volumes = [*self._volumes(name, settings), *self._grafana_cloudwatch(name, settings)]
        self.release = Release(
            f"{name}-stack",
            name=names.KUBE_PROMETHEUS_STACK_RELEASE,
            chart=chart,
            version=prom.chart_version,
            repository_opts=RepositoryOptsArgs(repo=repo),
            namespace=self.namespace.metadata.name,
            create_namespace=False,
            values=stack_values(settings),
            skip_await=False,
            timeout=RELEASE_TIMEOUT_SECONDS,
            opts=options.child(self, self._opts, depends_on=[
                self.namespace, *([self.receiver_secrets] if self.receiver_secrets else []), *volumes],
                **self._k8s_provider),
        )

    def _volumes(self, name: str, settings: MonitoringSettings) -> list[pulumi.Resource]:
        """The EBS CSI add-on with its Pod Identity role and the gp3 StorageClass, when the volumes persist: the
        release waits for them, or its claims would stay Pending."""
        if settings.storage is None or not settings.storage.persistent:
            return []
        from pulumi_aws import eks, iam
        from pulumi_kubernetes.storage.v1 import StorageClass

        version = settings.monitoring.prometheus.ebs_csi_addon_version
        child = options.child(self, self._opts)
        role = iam.Role(f"{name}-ebs-csi", name=named(settings.cluster_name, lambda c: names.role_name(c, "ebs-csi")),
                        assume_role_policy=pod_identity_trust_policy(),
                        description="EBS CSI controller: creates, attaches and deletes volumes", opts=child)
        attachment = iam.RolePolicyAttachment(
            f"{name}-ebs-csi", role=role.name,
            policy_arn=f"{catalog.AWS_MANAGED_POLICY_PREFIX}{catalog.EBS_CSI_MANAGED_POLICY}", opts=child)
        self.ebs_csi_addon = eks.Addon(
            f"{name}-ebs-csi", cluster_name=settings.cluster_name, addon_name=catalog.EBS_CSI_ADDON,
            addon_version=version,
            pod_identity_associations=[eks.AddonPodIdentityAssociationArgs(
                role_arn=role.arn, service_account=catalog.EBS_CSI_CONTROLLER_SERVICE_ACCOUNT)],
            resolve_conflicts_on_create="OVERWRITE", resolve_conflicts_on_update="OVERWRITE",
            opts=options.child(self, self._opts, depends_on=[attachment]))
        manifest = metrics_storage_class()
        self.storage_class = StorageClass(
            f"{name}-gp3", metadata=manifest["metadata"], provisioner=manifest["provisioner"],
            parameters=manifest["parameters"], reclaim_policy=manifest["reclaimPolicy"],
            volume_binding_mode=manifest["volumeBindingMode"], allow_volume_expansion=True, opts=self._k8s)
        return [self.ebs_csi_addon, self.storage_class]

    def _grafana_cloudwatch(self, name: str, settings: MonitoringSettings) -> list[pulumi.Resource]:
        """A read-only CloudWatch role for Grafana's service account, when Grafana shows the file systems'
        throughput: the release waits for the association (credentials are injected when the pod starts)."""
        if not settings.cloudwatch_region:
            return []
        from pulumi_aws import eks, iam

        child = options.child(self, self._opts)
        self.grafana_role = iam.Role(
            f"{name}-grafana-cloudwatch",
            name=named(settings.cluster_name, lambda c: names.role_name(c, "grafana-cloudwatch")),
            assume_role_policy=pod_identity_trust_policy(),
            description="Grafana: read CloudWatch metrics of the platform's file systems", opts=child)
        policy = iam.RolePolicy(f"{name}-grafana-cloudwatch", role=self.grafana_role.name, policy=read_policy(),
                                opts=child)
        association = eks.PodIdentityAssociation(
            f"{name}-grafana-cloudwatch", cluster_name=settings.cluster_name,
            namespace=settings.monitoring.prometheus.namespace, service_account=names.GRAFANA_SERVICE_ACCOUNT,
            role_arn=self.grafana_role.arn, opts=options.child(self, self._opts, depends_on=[policy]))
        return [association]

    def _prometheus_rule(self, name: str, settings: MonitoringSettings,
                         after: pulumi.ResourceOptions) -> "CustomResource":
        from pulumi_kubernetes.apiextensions import CustomResource

        prom = settings.monitoring.prometheus
        api_version, kind = PROMETHEUS_RULE_API
        return CustomResource(
            f"{name}-rules",
            api_version=api_version,
            kind=kind,
            metadata={"name": names.GPU_RULES_NAME, "namespace": prom.namespace, "labels": {
                **prom.selector_labels, names.MANAGED_BY_LABEL: names.MANAGED_BY}},
            spec={"groups": gpu_rule_groups(settings)},
            opts=after,
        )

    def _dashboard(self, name: str, settings: MonitoringSettings, after: pulumi.ResourceOptions) -> "ConfigMap":
        from pulumi_kubernetes.core.v1 import ConfigMap

        prom = settings.monitoring.prometheus
        return ConfigMap(
            f"{name}-dashboard",
            metadata={"name": names.GPU_DASHBOARD_CONFIGMAP, "namespace": prom.namespace, "labels": {
                prom.grafana_dashboard_label: DASHBOARD_LABEL_VALUE, names.MANAGED_BY_LABEL: names.MANAGED_BY}},
            data={DASHBOARD_FILE: json.dumps(dashboard(settings.monitoring.alerts, settings.efa), separators=(",", ":"))},
            opts=after,
        )


def monitoring_settings(name: str, args: Mapping[str, Any]) -> MonitoringSettings:
    """The monitoring settings from the component's arguments, checked with the stack file's monitoring rules."""
    where = f"GpuMonitoring {name!r}: "
    args = as_arguments("GpuMonitoring", name, args, GpuMonitoringArgs)
    problems = argument_problems(args, GpuMonitoringArgs, required=False)
    fields = {k: args[k] for k in ("enabled", "prometheus", "alerts", "alerting") if args.get(k) is not None}
    try:
        monitoring = read_part(MonitoringSpec, fields)
        teams = {team: read_part(SeverityRoutesSpec, routes, FieldPath.of("teamRoutes") / team)
                 for team, routes in (args.get("team_routes") or {}).items()}
    except SpecError as err:
        raise ArgumentsError(where, [*problems, *err.problems]) from None
    found = monitoring_rules(monitoring, [(FieldPath.of("teamRoutes") / t, r) for t, r in teams.items()],
                             args.get("environment") == "prod", at=FieldPath())
    problems += [f"{path}: {message}" for path, message in found]
    if monitoring.prometheus.ebs_csi_addon_version is not None and not args.get("cluster_name"):
        problems.append("prometheus.ebsCsiAddonVersion: also give cluster_name, the cluster the add-on goes to")
    ends, bad = _reservation_ends(args.get("reservation_ends") or [])
    problems += bad
    pool_memory = {pool: (float(v["memory_used_percent"]), float(v["memory_critical_percent"]))
                   for pool, v in (args.get("pool_memory") or {}).items()}
    problems += [f"poolMemory.{pool}: memoryUsedPercent ({w:g}) must be below memoryCriticalPercent ({c:g}), both "
                 "between 0 and 100" for pool, (w, c) in pool_memory.items() if not 0 < w < c < 100]
    timeouts = dict(args.get("acceptance_timeouts") or {})
    problems += [f"acceptanceTimeouts.{pool}: {minutes} must be a whole number of minutes, at least 1"
                 for pool, minutes in timeouts.items() if not isinstance(minutes, int) or minutes < 1]
    if problems:
        raise ArgumentsError(where, problems)
    storage = (metrics_storage(monitoring, args.get("nodes_at_max") or 0, args.get("gpus_at_max") or 0)
               if prometheus_mode(monitoring) == "install" else None)
    units = tuple(UsageUnit(str(u.get("pool")), str(u.get("resource")), str(u.get("kind")),
                            float(u.get("gpu_share") or 1.0),
                            None if u.get("usd_per_hour") is None else float(u["usd_per_hour"]),
                            str(u.get("gpu_model") or "")) for u in args.get("usage_units") or [])
    rates = tuple(PoolRate(p, float(v)) for p, v in (args.get("pool_gpu_prices") or {}).items())
    return MonitoringSettings(monitoring, args.get("cluster_name") or "", teams, dict(args.get("gpu_prices") or {}),
                              dict(args.get("system_node_selector") or names.SYSTEM_NODE_SELECTOR), storage, ends,
                              units, rates, dict(args.get("team_namespaces") or {}), pool_memory, timeouts)


def _reservation_ends(given: list[Mapping[str, str]]) -> tuple[tuple[ReservationEnd, ...], list[str]]:
    ends, problems = [], []
    for i, r in enumerate(given):
        try:
            moments = [datetime.fromisoformat(str(r.get(k))) for k in ("drain", "end")]
            ends.append(ReservationEnd(str(r.get("pool")), str(r.get("reservation")), str(r.get("kind")), *moments))
        except ValueError:
            problems.append(f"reservation_ends[{i}]: drain and end must be ISO 8601 times in UTC such as "
                            f"2026-12-07T11:30:00+00:00, not {r.get('drain')!r} and {r.get('end')!r}")
    return tuple(ends), problems
