"""GpuPlatform: every capability of one stack file, each built by its own component from Args mapped here
from the validated description, in dependency order.

cluster (created or adopted) -> monitoring (its CRDs first) -> GPU operator -> GPU node pools (managed node
groups, or Karpenter's controller and NodePools; the EFA device plugin) -> autoscaler -> model cache ->
teams (tiers, admission policies, namespaces, access) -> datasets (each team's claim) -> queueing. Children
are parented here and get explicit providers; nothing reads global config.

GPU node groups wait for the GPU Operator's release, not the other way round: the release carries the
sharing configs (MIG layouts, time-slicing) nodes select by label, so on an update the configs change
before any node boots with, or is relabelled to, a config that needs them.
"""
from typing import Any, Mapping, Optional

import pulumi

from gpu_platform.decisions.dra import compute_domains_on, driver_pools
from gpu_platform.decisions.efa import efa_pools
from gpu_platform.decisions.karpenter import karpenter_pools
from gpu_platform.facts import names
from gpu_platform.facts.karpenter import KARPENTER
from gpu_platform.render.monitoring import MonitoringSettings
from gpu_platform.resources import options
from gpu_platform.resources.alert_sns import build_alert_publishing
from gpu_platform.resources.autoscaler import ClusterAutoscaler
from gpu_platform.resources.cluster import build_cluster
from gpu_platform.resources.datasets import build_datasets
from gpu_platform.resources.efa import EfaDevicePlugin
from gpu_platform.resources.gpu_operator import GpuOperator, GpuOperatorArgs, OperatorPoolArgs
from gpu_platform.resources.karpenter_pool import build_karpenter
from gpu_platform.resources.model_cache import build_model_cache
from gpu_platform.resources.monitoring import GpuMonitoring, GpuMonitoringArgs
from gpu_platform.resources.node_pool import GpuNodePool, GpuNodePoolArgs
from gpu_platform.resources.options import caller_provider
from gpu_platform.resources.pool_args import pool_args, pool_options
from gpu_platform.resources.team import build_tenancy
from gpu_platform.resources.typed_args import Required, TypedDict
from gpu_platform.spec.errors import SpecError
from gpu_platform.spec.models import PlatformSpec


class GpuPlatformArgs(TypedDict, total=False):
    """A whole GPU platform from one stack file's description."""

    platform: Required[dict[str, Any]]
    """The stack file's `gpu-platform:platform` object (docs/stack-file.md); validated whole."""
    region: Required[str]
    """The AWS region (the stack's `aws:region`)."""
    alert_secrets: dict[str, pulumi.Input[str]]
    """Alert receivers' secrets (webhook URLs, routing keys) by config key, as Pulumi secrets."""


class GpuPlatform(pulumi.ComponentResource):
    """Every capability of the stack file: cluster, monitoring, GPU Operator, node pools, autoscaling,
    model cache, teams, datasets and queueing, each the component of its own, in dependency order.

    Resource options reach every child: a caller's `protect` overrides the library's defaults, its
    `depends_on` holds every child back, and its AWS provider (`provider` or `providers["aws"]`) replaces the
    one the platform would make; its Kubernetes provider serves an adopted cluster."""

    cluster_name: pulumi.Output[str]
    kubeconfig: pulumi.Output[str]
    """A kubeconfig (secret) that gets a token from `aws eks get-token` with the caller's identity."""

    def __init__(self, name: str, args: GpuPlatformArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(options.public_type("GpuPlatform"), name, None,
                         options.formerly(opts, "gpu-platform:platform:GpuPlatform"))
        spec = _spec(args)
        region = args["region"]
        self.spec = spec
        self._exports: dict[str, Any] = {"environment": spec.environment}
        self._protect = opts.protect if opts is not None else None
        self._base = options.child(self, opts, protect=self._protect)
        aws = caller_provider(opts, "aws")
        self.aws_provider = aws if aws is not None else self._aws_provider(spec, region)
        aws_child = pulumi.ResourceOptions.merge(self._base, pulumi.ResourceOptions(provider=self.aws_provider))
        self.cluster = build_cluster(spec, region, caller_provider(opts, "kubernetes"), aws_child)
        self._monitoring(spec, aws_child, args.get("alert_secrets") or {})
        self._gpu_operator(spec)
        self._compute(spec, region, aws_child)
        self._tenancy(spec, aws_child)
        self._logging(spec, region, aws_child)
        self.cluster_name = self.cluster.cluster_name
        self.kubeconfig = self.cluster.kubeconfig
        self.register_outputs(self._exports)

    def exports(self) -> dict[str, Any]:
        """Stack outputs: cluster name, kubeconfig (secret), pool names, team namespaces, model-cache ids."""
        return dict(self._exports)

    def _after(self, *waits: Any) -> pulumi.ResourceOptions:
        """Options of a direct child: the caller's options as given to every child, then `waits`."""
        return pulumi.ResourceOptions.merge(self._base, pulumi.ResourceOptions(depends_on=list(waits)))

    def _aws_provider(self, spec: PlatformSpec, region: str):
        from pulumi_aws import Provider, ProviderDefaultTagsArgs

        tags = {names.MANAGED_BY_TAG: names.MANAGED_BY, names.CLUSTER_TAG: spec.cluster.name,
                names.ENVIRONMENT_TAG: spec.environment, **spec.tags}
        return Provider("aws", region=region, default_tags=ProviderDefaultTagsArgs(tags=tags),
                        opts=pulumi.ResourceOptions(parent=self))

    def _compute(self, spec: PlatformSpec, region: str, aws_child: pulumi.ResourceOptions) -> None:
        # Pools wait for the cluster, its node role and network add-ons, and the GPU Operator's release.
        after = [*self.cluster.nodes_prerequisites, self.gpu_operator.release]
        self.dra_driver = None
        if driver_pools(spec.node_pools):  # the kubelet plugin is there before a DRA or UltraServer pool's first node
            from gpu_platform.resources.dra_driver import DraDriver

            self.dra_driver = DraDriver("dra-driver", spec, self.cluster.k8s_provider,
                                        compute_domains=compute_domains_on(spec.node_pools),
                                        depends_on=[*self.cluster.system_ready, self.gpu_operator.release],
                                        opts=self._after())
            after.append(self.dra_driver.release)
        cluster = self.cluster.pool_args(spec.cluster.name)
        self.node_pools = [
            GpuNodePool(p.name, GpuNodePoolArgs(**cluster, **pool_args(spec, p, GpuNodePoolArgs)),
                        opts=pulumi.ResourceOptions.merge(aws_child, pool_options(p, after, self._protect)))
            for p in spec.node_pools if p.provisioner != KARPENTER]
        self.karpenter = build_karpenter(spec, region, self.cluster, after, aws_child)
        self.efa_device_plugin = None
        if efa_pools(spec):
            self.efa_device_plugin = EfaDevicePlugin("efa-device-plugin", spec, self.cluster.k8s_provider,
                                                     depends_on=self.cluster.system_ready, opts=self._after())
        if spec.cluster_autoscaler.enabled:
            self.cluster_autoscaler = ClusterAutoscaler(
                "cluster-autoscaler", spec, region, self.cluster.cluster_name, self.cluster.k8s_provider,
                depends_on=self.cluster.system_ready, opts=aws_child)
        self._exports.update(clusterName=self.cluster.cluster_name, kubeconfig=self.cluster.kubeconfig,
                             nodePools=[p.node_group.node_group_name for p in self.node_pools])
        if self.karpenter is not None:
            self._exports["karpenterNodePools"] = [p.name for p in karpenter_pools(spec)]

    def _monitoring(self, spec: PlatformSpec, aws_child: pulumi.ResourceOptions, alert_secrets: Mapping[str, Any]) -> None:
        # SNS receivers publish through Pod Identity: the association exists before Alertmanager starts.
        self.alert_publishing = build_alert_publishing(spec, self.cluster.cluster_name, self.cluster.system_ready, aws_child)
        publishing = [self.alert_publishing.association] if self.alert_publishing else []
        self.monitoring = GpuMonitoring(
            "monitoring", monitoring_args(spec, self.cluster.k8s_provider, alert_secrets),
            opts=self._after(*self.cluster.system_ready, *publishing))
        self._exports["monitoring"] = self.monitoring.outputs

    def _logging(self, spec: PlatformSpec, region: str, aws_child: pulumi.ResourceOptions) -> None:
        from gpu_platform.render.monitoring import prometheus_mode
        from gpu_platform.resources.logging import build_logging

        # The ServiceMonitor needs the Prometheus operator's CRDs: they come with the monitoring release.
        scraped = prometheus_mode(spec.monitoring) != "none"
        self.logging = build_logging(spec, region, self.cluster.cluster_name, self.cluster.k8s_provider, scraped,
                                     [*self.cluster.system_ready, *self.monitoring.crds_ready], aws_child)
        if self.logging is not None:
            self._exports["logging"] = {k: g.name for k, g in self.logging.log_groups.items()}

    def _gpu_operator(self, spec: PlatformSpec) -> None:
        # The operator creates dcgm-exporter's ServiceMonitor only if the Prometheus CRDs exist at start.
        self.gpu_operator = GpuOperator("gpu-operator", operator_args(spec, self.cluster.k8s_provider),
                                        opts=self._after(*self.cluster.system_ready, *self.monitoring.crds_ready))
        self._exports["gpuOperator"] = {"namespace": self.gpu_operator.namespace.metadata.name,
                                        "chartVersion": spec.gpu_operator.chart_version,
                                        "driver": self.gpu_operator.driver}

    def _tenancy(self, spec: PlatformSpec, aws_child: pulumi.ResourceOptions) -> None:
        self.model_cache = build_model_cache(spec, self.cluster, aws_child)
        if self.dra_driver is not None and compute_domains_on(spec.node_pools):  # teams' ComputeDomains need its CRD
            aws_child = pulumi.ResourceOptions.merge(
                aws_child, pulumi.ResourceOptions(depends_on=[self.dra_driver.release]))
        tenancy = build_tenancy(spec, self.cluster, self.model_cache, aws_child)
        self.priority_tiers, self.teams, self.team_access = tenancy.priority_tiers, tenancy.teams, tenancy.access
        self.team_admission = tenancy.admission
        self._exports["teamNamespaces"] = [t.namespace_name for t in self.teams]
        self.datasets = build_datasets(spec, self.cluster, self.teams, aws_child)
        if self.datasets is not None:
            self._exports["datasets"] = {"fileSystemId": self.datasets.file_system.id,
                                         "dnsName": self.datasets.file_system.dns_name}
        if spec.queueing.enabled:  # Kueue and its objects are imported only when a stack queues
            from gpu_platform.resources.kueue import build_queueing

            self.queueing = build_queueing(spec, self.cluster, self.teams, self.monitoring, aws_child)
            self._exports["queueing"] = self.queueing.outputs
        if self.model_cache is not None:
            self._exports["modelCache"] = {"fileSystemId": self.model_cache.file_system.id,
                                           "storageClass": self.model_cache.storage_class_name}


def _spec(args: Mapping[str, Any]) -> PlatformSpec:
    """The stack file's object, validated whole, with the region (`aws:region`) its zones must be in."""
    from gpu_platform.decisions.validation import parse_platform

    platform = args.get("platform")
    if platform is None:
        raise SpecError(["GpuPlatform: platform: required (the stack file's gpu-platform:platform object)"])
    return parse_platform(platform, region=args.get("region"))


def operator_args(spec: PlatformSpec, k8s_provider: Any) -> GpuOperatorArgs:
    """The stack file's operator block, and every pool it serves, as the GpuOperator's arguments."""
    op, mon = spec.gpu_operator, spec.monitoring
    pools = [OperatorPoolArgs(**p.model_dump(include={"name", "instance_types", "ami", "sharing", "taints"},
                                             exclude_none=True)) for p in spec.node_pools]
    return GpuOperatorArgs(
        chart_version=op.chart_version, namespace=op.namespace, driver=op.driver.model_dump(exclude_none=True),
        upgrade_policy=op.upgrade_policy.model_dump(), pools=pools, mig_strategy=spec.mig_strategy,
        k8s_provider=k8s_provider, service_monitor=mon.enabled and mon.prometheus.mode != "none",
        service_monitor_labels=dict(mon.prometheus.selector_labels),
        system_node_selector=dict(spec.cluster.system_node_selector),
        kubernetes_version=spec.cluster.kubernetes_version, environment=spec.environment)


def monitoring_args(spec: PlatformSpec, k8s_provider: Any, receiver_secrets: Mapping[str, Any]) -> GpuMonitoringArgs:
    """The stack file's monitoring block, the teams' alert routes and the GPU prices, as GpuMonitoring's arguments."""
    settings = MonitoringSettings.of(spec)
    mon = spec.monitoring.model_dump(exclude_none=True)
    return GpuMonitoringArgs(
        k8s_provider=k8s_provider, **mon,
        team_routes={t: r.model_dump(exclude_none=True) for t, r in settings.team_routes.items()},
        receiver_secrets=dict(receiver_secrets), gpu_prices=dict(settings.gpu_prices), cluster_name=spec.cluster.name,
        system_node_selector=dict(spec.cluster.system_node_selector), environment=spec.environment)
