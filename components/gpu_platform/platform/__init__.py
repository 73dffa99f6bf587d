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
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional, cast

import pulumi

from gpu_platform.decisions.dra import compute_domains_on, driver_pools
from gpu_platform.decisions.acceptance import accepted_pools, replaces_instances
from gpu_platform.decisions.efa import efa_pools
from gpu_platform.decisions.karpenter import karpenter_pools
from gpu_platform.decisions.warm import warm_pools
from gpu_platform.facts import component_types, names
from gpu_platform.facts.karpenter import KARPENTER
from gpu_platform.render.alert_routing import delivered_alerting, sns_topics
from gpu_platform.render.acceptance import acceptance_manifests
from gpu_platform.render.autoscaler import autoscaler_values
from gpu_platform.render.autoscaler_metrics import autoscaler_monitors
from gpu_platform.render.alert_routing import missing_secrets
from gpu_platform.render.dra import dra_driver_values
from gpu_platform.render.efa import device_plugin_values as efa_plugin_values
from gpu_platform.render.efa_metrics import efa_metrics_manifests
from gpu_platform.render.data_feeding import data_feeding_wanted
from gpu_platform.render.monitoring import MonitoringSettings, efa_metrics_wanted, prometheus_mode
from gpu_platform.render.operator_values import OperatorSettings
from gpu_platform.resources import options
from gpu_platform.resources.alert_sns import AlertPublishing
from gpu_platform.resources.typed_args import ArgumentsError, argument_problems, as_arguments
from gpu_platform.resources.autoscaler import ClusterAutoscaler
from gpu_platform.resources.cluster import Cluster
from gpu_platform.resources.cluster_base import ClusterBase
from gpu_platform.resources.datasets import Datasets
from gpu_platform.resources.efa import EfaDevicePlugin
from gpu_platform.resources.gpu_operator import GpuOperator
from gpu_platform.resources.model_cache import ModelCache
from gpu_platform.resources.monitoring import GpuMonitoring
from gpu_platform.resources.node_pool import GpuNodePool
from gpu_platform.resources.options import caller_provider
from gpu_platform.platform import mapping
from gpu_platform.resources.admission import TeamAdmission, TeamAdmissionArgs
from gpu_platform.resources.team import PriorityTiers, PriorityTiersArgs, TeamAccess, TeamNamespace
from gpu_platform.resources.typed_args import Required, TypedDict
from gpu_platform.spec.errors import COMPONENT_ARGUMENTS, SpecError
from gpu_platform.spec.models import PlatformSpec
from gpu_platform.spec.pool_context import PoolContext

if TYPE_CHECKING:
    import pulumi_aws
    import pulumi_kubernetes

    from gpu_platform.resources.karpenter_controller import KarpenterController
    from gpu_platform.resources.karpenter_pool import KarpenterNodePool


PLATFORM_ARGUMENT = "platform"  # GpuPlatformArgs' key holding the stack file's object


@dataclass
class KarpenterPools:
    controller: "KarpenterController"  # imported only when a pool uses Karpenter
    pools: list["KarpenterNodePool"]


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
    """The EKS cluster's name (created or adopted)."""
    kubeconfig: pulumi.Output[str]
    """A kubeconfig (secret) that gets a token from `aws eks get-token` with the caller's identity."""

    def __init__(self, name: str, args: GpuPlatformArgs, opts: Optional[pulumi.ResourceOptions] = None):
        """Refusals are the program's: its `platform` argument's paths (`platform.teams[0].quota.gpus`),
        never a stack file the program may not have read."""
        where = f"GpuPlatform {name!r}: "
        args = as_arguments("GpuPlatform", name, args, GpuPlatformArgs)  # type: ignore[assignment]
        problems = argument_problems(args, GpuPlatformArgs)
        if problems:
            raise ArgumentsError(where, problems)
        secrets = args.get("alert_secrets") or {}
        try:
            spec = _spec(args)
        except SpecError as err:
            raise ArgumentsError(where, err.problems, within=PLATFORM_ARGUMENT) from None
        missing = missing_secrets(delivered_alerting(spec.monitoring), secrets)
        if missing:
            raise ArgumentsError(where, missing)
        try:
            self._build(name, spec, args["region"], secrets, opts)
        except SpecError as err:  # what the platform object asks of the resource options, say
            if err.subject == COMPONENT_ARGUMENTS:
                raise
            raise ArgumentsError(where, err.problems, within=PLATFORM_ARGUMENT) from None

    @classmethod
    def of(cls, name: str, spec: PlatformSpec, region: str,
           alert_secrets: Optional[Mapping[str, pulumi.Input[str]]] = None,
           opts: Optional[pulumi.ResourceOptions] = None) -> "GpuPlatform":
        """The platform of a stack file already validated by `parse_platform` (with this `region`), built as
        it is: not validated again."""
        component = cls.__new__(cls)
        component._build(name, spec, region, alert_secrets or {}, opts)
        return component

    def _build(self, name: str, spec: PlatformSpec, region: str, alert_secrets: Mapping[str, pulumi.Input[str]],
               opts: Optional[pulumi.ResourceOptions]) -> None:
        missing = missing_secrets(delivered_alerting(spec.monitoring), alert_secrets)
        if missing:  # before any resource registers: never a platform whose receivers cannot read theirs
            raise SpecError(missing)
        super().__init__(component_types.public("GpuPlatform"), name, None,
                         options.formerly(opts, "GpuPlatform"))
        self.spec = spec
        self._secrets = alert_secrets
        self._region = region
        self._exports: dict[str, Any] = {"environment": spec.environment}
        self._protect = opts.protect if opts is not None else None
        self._base = options.child(self, opts, protect=self._protect)
        aws = caller_provider(opts, "aws")
        self.aws_provider = aws if aws is not None else self._aws_provider(spec, region)
        aws_child = pulumi.ResourceOptions.merge(self._base, pulumi.ResourceOptions(provider=self.aws_provider))
        self.cluster = self._cluster(spec, region, caller_provider(opts, "kubernetes"), aws_child)
        self._monitoring(spec, aws_child, alert_secrets)
        self._gpu_operator(spec)
        self._compute(spec, region, aws_child)
        self._tenancy(spec, aws_child)
        self._data_feeding(spec)
        self._logging(spec, region, aws_child)
        self.cluster_name = self.cluster.cluster_name
        assert self.cluster.kubeconfig is not None  # the platform gives its cluster the region the kubeconfig names
        self.kubeconfig = self.cluster.kubeconfig
        self.register_outputs(self._exports)

    def exports(self) -> dict[str, Any]:
        """Stack outputs: cluster name, kubeconfig (secret), pool names, team namespaces, model-cache ids."""
        return dict(self._exports)

    @staticmethod
    def _waiting(opts: pulumi.ResourceOptions, *waits: pulumi.Resource) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=list(waits)))

    def _after(self, *waits: pulumi.Resource) -> pulumi.ResourceOptions:
        """Options of a direct child: the caller's options as given to every child, then `waits`."""
        return pulumi.ResourceOptions.merge(self._base, pulumi.ResourceOptions(depends_on=list(waits)))

    def _aws_provider(self, spec: PlatformSpec, region: str) -> "pulumi_aws.Provider":
        from pulumi_aws import Provider, ProviderDefaultTagsArgs

        tags = {names.MANAGED_BY_TAG: names.MANAGED_BY, names.CLUSTER_TAG: spec.cluster.name,
                names.ENVIRONMENT_TAG: spec.environment, **spec.tags}
        return Provider("aws", region=region, default_tags=ProviderDefaultTagsArgs(tags=tags),
                        opts=pulumi.ResourceOptions(parent=self))

    @staticmethod
    def _cluster(spec: PlatformSpec, region: str, k8s_provider: Optional[pulumi.ProviderResource],
                 opts: pulumi.ResourceOptions) -> ClusterBase:
        """The stack file's cluster: created from `cluster.create`, or adopted from `cluster.existing`."""
        if spec.cluster.create is not None:
            if k8s_provider is not None:
                raise SpecError(["cluster.create: a Kubernetes provider cannot be given for a cluster this stack "
                                 "creates (its kubeconfig comes from the new cluster); adopt the cluster with "
                                 "cluster.existing"])
            return Cluster.of("cluster", mapping.cluster_settings(spec, region), opts=opts)
        from gpu_platform.resources.adopted_cluster import AdoptedCluster

        # the caller's provider of the kubernetes package (caller_provider): pulumi_kubernetes' Provider
        given = cast(Optional["pulumi_kubernetes.Provider"], k8s_provider)
        return AdoptedCluster("cluster", mapping.adopted_args(spec, region, given), opts=opts)

    def _compute(self, spec: PlatformSpec, region: str, aws_child: pulumi.ResourceOptions) -> None:
        # Pools wait for the cluster, its node role and network add-ons, and the GPU Operator's release.
        after = [*self.cluster.nodes_prerequisites, self.gpu_operator.release]
        self.dra_driver = None
        if driver_pools(spec.node_pools):  # the kubelet plugin is there before a DRA or UltraServer pool's first node
            from gpu_platform.resources.dra_driver import DraDriver

            version = spec.dra_driver.chart_version
            values = dra_driver_values(version, spec.node_pools, spec.gpu_operator.driver.source,
                                       spec.cluster.system_node_selector, compute_domains_on(spec.node_pools))
            self.dra_driver = DraDriver("dra-driver", version, values, self.cluster.k8s_provider,
                                        depends_on=[*self.cluster.system_ready, self.gpu_operator.release],
                                        opts=self._after())
            after.append(self.dra_driver.release)
        self.acceptance = None
        gated = accepted_pools(spec)
        if gated:  # the rules and checkers are there before an accepted pool's first node registers
            from gpu_platform.resources.acceptance import AcceptanceReplacement, NodeAcceptance

            manifests = acceptance_manifests(gated, dict(spec.cluster.system_node_selector), spec.prod)
            identity: list[pulumi.Resource] = []
            if replaces_instances([gate for _, gate in gated]):  # credentials reach a pod only if it starts after
                identity = [AcceptanceReplacement("acceptance-replacement", spec.cluster.name,
                                                  self.cluster.cluster_name, self.cluster.system_ready,
                                                  opts=aws_child).association]
            self.acceptance = NodeAcceptance("node-acceptance", manifests, self.cluster.k8s_provider,
                                             depends_on=[*self.cluster.system_ready, self.gpu_operator.release,
                                                         *identity], opts=self._after())
        cluster = self.cluster.pool_args(spec.cluster.name)
        self.node_pools = [
            GpuNodePool.of(p.name, p, PoolContext.of(spec, p), cluster,
                           opts=pulumi.ResourceOptions.merge(aws_child, mapping.pool_options(p, after, self._protect)))
            for p in spec.node_pools if p.provisioner != KARPENTER]
        self.karpenter = self._karpenter(spec, region, after, aws_child)
        self.efa_device_plugin = None
        if efa_pools(spec):
            self.efa_device_plugin = EfaDevicePlugin("efa-device-plugin", spec.efa_device_plugin.chart_version,
                                                     efa_plugin_values(spec), self.cluster.k8s_provider,
                                                     depends_on=self.cluster.system_ready, opts=self._after())
        self._efa_metrics(spec)
        if spec.cluster_autoscaler.enabled:
            self.cluster_autoscaler = ClusterAutoscaler(
                "cluster-autoscaler", spec.cluster_autoscaler.chart_version, autoscaler_values(spec, region),
                spec.cluster.name, self.cluster.cluster_name, self.cluster.k8s_provider,
                depends_on=self.cluster.system_ready, opts=aws_child)
        self._autoscaler_metrics(spec)
        self._warm_capacity(spec)
        self._exports.update(clusterName=self.cluster.cluster_name, kubeconfig=self.cluster.kubeconfig,
                             nodePools=[p.node_group.node_group_name for p in self.node_pools])
        if self.karpenter is not None:
            self._exports["karpenterNodePools"] = [p.name for p in karpenter_pools(spec)]

    def _efa_metrics(self, spec: PlatformSpec) -> None:
        """The EFA collector on the EFA pools' nodes, once the Prometheus operator's CRDs exist (its PodMonitor)."""
        manifests = efa_metrics_manifests(spec)
        self.efa_metrics = None
        if manifests:
            from gpu_platform.resources.efa_metrics import EfaMetrics

            self.efa_metrics = EfaMetrics("efa-metrics", manifests, self.cluster.k8s_provider,
                                          [*self.cluster.system_ready, *self.monitoring.crds_ready], opts=self._after())

    def _warm_capacity(self, spec: PlatformSpec) -> None:
        """Placeholders holding each warm pool's nodes; they wait for the pools they select."""
        pools = warm_pools(spec)
        self.warm_capacity = None
        if pools:
            from gpu_platform.resources.warm_capacity import WarmCapacity

            pool_resources = [*self.node_pools, *(self.karpenter.pools if self.karpenter else [])]
            self.warm_capacity = WarmCapacity("warm-capacity", pools, self.cluster.k8s_provider,
                                              [*self.cluster.system_ready, *pool_resources], opts=self._after())

    def _autoscaler_metrics(self, spec: PlatformSpec) -> None:
        """Prometheus scrapes each autoscaler: the capacity alerts read their failure counters."""
        monitors = autoscaler_monitors(spec)
        self.autoscaler_metrics = None
        if monitors:
            from gpu_platform.resources.autoscaler_metrics import AutoscalerMetrics

            self.autoscaler_metrics = AutoscalerMetrics("autoscaler-metrics", monitors, self.cluster.k8s_provider,
                                                        self.monitoring.crds_ready, opts=self._after())

    def _karpenter(self, spec: PlatformSpec, region: str, after: list[pulumi.Resource],
                   opts: pulumi.ResourceOptions) -> Optional[KarpenterPools]:
        """The controller and every Karpenter pool (None when no pool uses Karpenter); the pools wait for
        `after` (what node groups wait for) and the controller."""
        pools = karpenter_pools(spec)
        if not pools:
            return None
        from gpu_platform.resources.karpenter_controller import KarpenterController
        from gpu_platform.resources.karpenter_pool import KarpenterNodePool

        controller = KarpenterController("karpenter", mapping.karpenter_controller(spec, region), self.cluster,
                                         depends_on=self.cluster.system_ready, opts=opts)
        cluster = mapping.karpenter_cluster(self.cluster, spec.cluster.name)
        own = pulumi.ResourceOptions(parent=opts.parent, depends_on=opts.depends_on)
        return KarpenterPools(controller, [
            KarpenterNodePool.of(p.name, p, PoolContext.of(spec, p), cluster, opts=pulumi.ResourceOptions.merge(
                own, mapping.pool_options(p, [*after, *controller.ready], opts.protect)))
            for p in pools])

    def _monitoring(self, spec: PlatformSpec, aws_child: pulumi.ResourceOptions,
                    alert_secrets: Mapping[str, pulumi.Input[str]]) -> None:
        # SNS receivers publish through Pod Identity: the association exists before Alertmanager starts.
        # Only when a receiver publishes to SNS and the platform installs the Alertmanager.
        topics = sns_topics(delivered_alerting(spec.monitoring))
        self.alert_publishing = None
        if topics:
            self.alert_publishing = AlertPublishing(
                "alert-publishing", sns_topics(spec.monitoring.alerting), spec.cluster.name,
                spec.monitoring.prometheus.namespace, self.cluster.cluster_name, self.cluster.system_ready, opts=aws_child)
        publishing = [self.alert_publishing.association] if self.alert_publishing else []
        self.monitoring = GpuMonitoring.of("monitoring", MonitoringSettings.of(spec, self._region), alert_secrets,
                                           self.cluster.k8s_provider,  # AWS: the volumes' and Grafana's roles
                                           opts=self._waiting(aws_child, *self.cluster.system_ready, *publishing))
        self._exports["monitoring"] = self.monitoring.outputs
        self._usage_report(spec, aws_child)

    def _usage_report(self, spec: PlatformSpec, aws_child: pulumi.ResourceOptions) -> None:
        """The monthly usage report, once Prometheus (and its namespace) is there."""
        from gpu_platform.decisions.usage import report_plan

        plan = report_plan(spec.monitoring, spec.cluster.name)
        self.usage_report = None
        if plan is None:
            return
        from gpu_platform.resources.usage_report import UsageReport

        ready = [r for r in (self.monitoring.namespace, self.monitoring.release) if r is not None]
        self.usage_report = UsageReport("usage-report", plan, spec.cluster.name, self.cluster.cluster_name,
                                        self.cluster.k8s_provider, spec.cluster.system_node_selector,
                                        [*self.cluster.system_ready, *ready], opts=aws_child)
        self._exports["usageReport"] = {"bucket": self.usage_report.bucket_name, "prefix": plan.prefix}

    def _logging(self, spec: PlatformSpec, region: str, aws_child: pulumi.ResourceOptions) -> None:
        self.logging = None
        if not spec.logging.enabled:
            return
        from gpu_platform.render.logging import LoggingSettings
        from gpu_platform.resources.logging import LogPipeline

        # The log-derived alerts' PrometheusRule needs the Prometheus operator's CRDs: they come with monitoring.
        scraped = prometheus_mode(spec.monitoring) != "none"
        self.logging = LogPipeline("logging", LoggingSettings.of(spec, region, scraped), region,
                                   self.cluster.cluster_name, self.cluster.k8s_provider, scraped,
                                   [*self.cluster.system_ready, *self.monitoring.crds_ready], opts=aws_child)
        self._exports["logging"] = {k: g.name for k, g in self.logging.log_groups.items()}

    def _gpu_operator(self, spec: PlatformSpec) -> None:
        # The operator creates dcgm-exporter's ServiceMonitor only if the Prometheus CRDs exist at start.
        self.gpu_operator = GpuOperator.of("gpu-operator", OperatorSettings.of(spec), self.cluster.k8s_provider,
                                           opts=self._after(*self.cluster.system_ready, *self.monitoring.crds_ready))
        self._exports["gpuOperator"] = {"namespace": self.gpu_operator.namespace.metadata.name,
                                        "chartVersion": spec.gpu_operator.chart_version,
                                        "driver": self.gpu_operator.driver}

    def _tenancy(self, spec: PlatformSpec, aws_child: pulumi.ResourceOptions) -> None:
        self.model_cache = None
        if spec.model_cache.enabled:
            self.model_cache = ModelCache("model-cache", mapping.model_cache_args(spec, self.cluster),
                                          opts=self._waiting(aws_child, *self.cluster.system_ready))
        if self.dra_driver is not None and compute_domains_on(spec.node_pools):  # teams' ComputeDomains need its CRD
            aws_child = pulumi.ResourceOptions.merge(
                aws_child, pulumi.ResourceOptions(depends_on=[self.dra_driver.release]))
        self._teams(spec, aws_child)
        self._exports["teamNamespaces"] = [t.namespace_name for t in self.teams]
        self.datasets = None
        fsx = spec.datasets.fsx_lustre
        if fsx is not None:
            self.datasets = Datasets.of("datasets", fsx, mapping.datasets_cluster(spec, self.cluster, self.teams),
                                        opts=pulumi.ResourceOptions.merge(aws_child, pulumi.ResourceOptions(
                                            depends_on=list(self.cluster.system_ready), protect=fsx.protect)))
        if self.datasets is not None:
            self._exports["datasets"] = {"fileSystemId": self.datasets.file_system.id,
                                         "dnsName": self.datasets.file_system.dns_name}
        if spec.queueing.enabled:  # Kueue and its objects are imported only when a stack queues
            from gpu_platform.resources.kueue import KueueQueueing

            self.queueing = KueueQueueing.of(
                "kueue", mapping.fleet(spec), mapping.queueing_cluster(spec, self.cluster, self.teams),
                opts=pulumi.ResourceOptions.merge(aws_child, pulumi.ResourceOptions(
                    depends_on=[*self.cluster.system_ready, *self.monitoring.crds_ready])))
            self._exports["queueing"] = self.queueing.outputs
        if self.model_cache is not None:
            self._exports["modelCache"] = {"fileSystemId": self.model_cache.file_system.id,
                                           "storageClass": self.model_cache.storage_class_name}


    def _data_feeding(self, spec: PlatformSpec) -> None:
        """The data-feeding dashboard, once the file systems it names exist (Grafana shows it with the data
        source the installed stack got)."""
        self.file_system_metrics = None
        if not data_feeding_wanted(spec):
            return
        from gpu_platform.resources.file_system_metrics import FileSystemMetrics

        prom = spec.monitoring.prometheus
        file_systems = [r for r in (self.datasets, self.model_cache) if r is not None]
        self.file_system_metrics = FileSystemMetrics(
            "data-feeding", prom.namespace, prom.grafana_dashboard_label,
            self.datasets.file_system_id if self.datasets is not None else None,
            self.model_cache.file_system_id if self.model_cache is not None else None,
            self.cluster.k8s_provider, [*self.monitoring.crds_ready, *file_systems], opts=self._after(),
            efa=efa_metrics_wanted(spec))

    def _teams(self, spec: PlatformSpec, opts: pulumi.ResourceOptions) -> None:
        """Priority tiers, the team admission policies, every team's unit and the access entries."""
        provider = self.cluster.k8s_provider
        storage_class = self.model_cache.storage_class_name if self.model_cache is not None else None
        self.priority_tiers = PriorityTiers("priority-tiers", PriorityTiersArgs(k8s_provider=provider), opts=opts)
        self.team_admission = TeamAdmission("team-admission", TeamAdmissionArgs(k8s_provider=provider), opts=opts)
        self.teams = [TeamNamespace.of(f"team-{s.team.name}", s, opts)
                      for s in mapping.team_settings(spec, provider, storage_class)]
        self.team_access = TeamAccess.of("team-access", [(t.name, t.access) for t in spec.teams],
                                         self.cluster.cluster_name, opts=opts)
        self._serving(spec, opts)

    def _serving(self, spec: PlatformSpec, opts: pulumi.ResourceOptions) -> None:
        """KEDA and the serving alerts, then each team's model servers once its namespace, quota, limits and cache
        claim exist."""
        self.serving, self.serving_control = {}, None
        served = mapping.served(spec)
        if not any(served.values()):
            return
        from gpu_platform.resources.serving import ModelServing, ServingControl

        self.serving_control = ServingControl("serving", *mapping.serving_control(spec), self.cluster.k8s_provider,
                                              [*self.cluster.system_ready, *self.monitoring.crds_ready], opts=opts)
        crds = [*([self.serving_control.keda] if self.serving_control.keda else []), *self.monitoring.crds_ready]
        if any(s.load_balancer for t in spec.teams for s in t.services):
            crds.append(self.serving_control.load_balancer_controller(
                spec.cluster.name, self._region, self.cluster.cluster_name, self.cluster.vpc_id,
                spec.cluster.system_node_selector, self.cluster.k8s_provider, list(self.cluster.system_ready)))
        for team, unit in zip(spec.teams, self.teams, strict=True):
            if not served[team.name]:
                continue
            ready = [unit.namespace, unit.quota, unit.limits, *self.priority_tiers.classes.values(),
                     *([unit.model_cache_claim] if unit.model_cache_claim is not None else [])]
            self.serving[team.name] = ModelServing(
                f"serving-{team.name}", spec.cluster.name, team.name, served[team.name], self.cluster.cluster_name,
                self.cluster.k8s_provider, self._secrets, ready, crds, opts=opts)
        self._exports["services"] = {t: sorted(s.deployments) for t, s in self.serving.items()}

def _spec(args: Mapping[str, Any]) -> PlatformSpec:
    """The stack file's object, validated whole, with the region (`aws:region`) its zones must be in."""
    from gpu_platform.decisions.validation import parse_platform

    platform = args.get("platform")
    if platform is None:
        raise SpecError(["GpuPlatform: platform: required (the stack file's gpu-platform:platform object)"])
    return parse_platform(platform, region=args.get("region"))
