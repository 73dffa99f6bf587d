"""Kueue: fair GPU sharing across teams (`queueing.mode: kueue`, docs/queueing.md).

One release of the official chart in its own namespace on the system nodes (its metrics scraped when the
platform has Prometheus), then the objects decided in queueing.py and rendered in queueing_objects.py:
the flavors, the cohort, the tiers' WorkloadPriorityClasses, one ClusterQueue per team, a LocalQueue in
each team namespace, and the admission policy refusing unqueued GPU pods in team namespaces. Kueue's
objects wait for the release (its CRDs and webhooks); each is registered whole, as rendered.
"""
from typing import TYPE_CHECKING, Any, Mapping, Optional

import pulumi
import pulumi_kubernetes
from pulumi_kubernetes.apiextensions import CustomResource

from gpu_platform.decisions.dra import dra_pools, is_dra
from gpu_platform.decisions.queueing import Fleet, gpu_flavors, placement, queueing_rules, quota_ceiling, team_queue
from gpu_platform.facts import catalog, names
from gpu_platform.render.queueing_objects import chart_values, queueing_manifests
from gpu_platform.resources import options
from gpu_platform.resources.pool_args import PoolSharingArgs, PoolTaintArgs
from gpu_platform.resources.team import TeamQuotaArgs
from gpu_platform.resources.typed_args import Required, TypedDict, argument_problems
from gpu_platform.spec.errors import SpecError
from gpu_platform.spec.models import QueueingSpec, QueuePoolSpec, TeamSpec, mig_strategy_of
from gpu_platform.spec.parse import read_part
from gpu_platform.spec.rules import gpu_shape_rules, mig_strategy_rules, sharing_rules

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec

# Pods of the manager run as non-root with every capability dropped (the chart's security contexts).
POD_SECURITY_LEVEL = "baseline"
RELEASE_TIMEOUT_SECONDS = 600


class KueueObject(CustomResource):
    """A Kueue object registered exactly as rendered. CustomResource's arguments carry metadata and spec
    only; a WorkloadPriorityClass keeps `value` and `description` at the top level, so the whole object
    is sent as the resource's inputs (the provider takes a custom object's fields as they are)."""

    def __init__(self, resource_name: str, obj: dict, opts: Optional[pulumi.ResourceOptions] = None):
        from pulumi_kubernetes import _utilities

        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(version=_utilities.get_version()))
        pulumi.CustomResource.__init__(self, f"kubernetes:{obj['apiVersion']}:{obj['kind']}", resource_name,
                                       dict(obj), opts)


class QueuePoolArgs(TypedDict, total=False):
    """A GPU pool Kueue admits onto: its GPUs, sharing and taints, capacity type and size at most."""

    name: Required[str]
    """The pool's name: its nodes carry it in the gpu-platform.io/pool label."""
    instance_types: Required[list[str]]
    capacity_type: Required[str]
    """spot, on-demand or capacity-block: the flavor's gpu-platform.io/capacity-type label."""
    max_size: Required[int]
    """Nodes at most: nominal quotas must fit the pool at this size."""
    sharing: PoolSharingArgs
    gpu_allocation: str
    """device-plugin (default) or dra: Kueue counts a DRA pool's claimed GPUs (DeviceClass gpu.nvidia.com) as
    nvidia.com/gpu."""
    taints: list[PoolTaintArgs]


class TeamQueueArgs(TypedDict, total=False):
    """The team's share of the cohort (docs/queueing.md)."""

    weight: float
    """Fair-sharing weight (default 1)."""
    borrowing_limit: str
    """Percentage of the nominal quota the team may borrow (default by tier)."""
    lending_limit: str
    """Percentage of the nominal quota others may borrow (default 100%)."""
    pools: list[str]
    """Pools holding the team's nominal GPU quota, in order (default all)."""


class QueuedTeamArgs(TypedDict, total=False):
    """A team with a queue: its quota (the nominal quota), tier and share."""

    name: Required[str]
    quota: Required[TeamQuotaArgs]
    priority_tier: str
    queue: TeamQueueArgs
    namespace: pulumi.Input[str]
    """The team's namespace (a TeamNamespace's `namespaceName`: the LocalQueue waits for it; default the name)."""


class KueueQueueingArgs(TypedDict, total=False):
    """Kueue's chart, the GPU pools it admits onto and the teams it queues."""

    chart_version: Required[str]
    """The Kueue chart, pinned: one the catalog checks."""
    node_pools: Required[list[QueuePoolArgs]]
    """The GPU pools: one flavor per pool and GPU resource."""
    teams: Required[list[QueuedTeamArgs]]
    """The teams: one ClusterQueue each, nominal quotas placed on the pools in order."""
    namespace: str
    """Kueue's namespace (default kueue-system)."""
    environment: str
    """dev, staging or prod: prod runs two controller replicas with a disruption budget."""
    prometheus_namespace: str
    """Scrape the controller's metrics from there (Prometheus operator CRDs must exist)."""
    system_node_selector: dict[str, str]
    """Where the controller runs: the system nodes' labels (default gpu-platform.io/role=system)."""
    k8s_provider: pulumi_kubernetes.Provider
    """The cluster's Kubernetes provider (default: the provider the resource options give)."""


class KueueQueueing(pulumi.ComponentResource):
    """Kueue with a cohort, one flavor per pool's GPU resource, a ClusterQueue per team, a LocalQueue in each
    team namespace and the admission policy that keeps GPU pods in team namespaces queued."""

    namespace_name: pulumi.Output[str]
    cluster_queues: pulumi.Output[dict[str, str]]
    """Team -> its ClusterQueue."""
    local_queue: pulumi.Output[str]
    """The LocalQueue every team namespace has; workloads name it in kueue.x-k8s.io/queue-name."""
    quota_ceilings: pulumi.Output[dict[str, dict[str, str]]]
    """Team -> the ResourceQuota `hard` entries its queue needs (a TeamNamespace's `quotaCeiling`)."""

    def __init__(self, name: str, args: KueueQueueingArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(options.public_type("KueueQueueing"), name, None,
                         options.formerly(opts, "gpu-platform:kueue:KueueQueueing"))
        from pulumi_kubernetes.admissionregistration.v1 import ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding
        from pulumi_kubernetes.core.v1 import Namespace
        from pulumi_kubernetes.helm.v3 import Release
        from pulumi_kubernetes.meta.v1 import ObjectMetaArgs

        fleet = queueing_settings(name, args)
        queueing = fleet.queueing
        provider = options.kubernetes(args)

        def after(*waits: Any) -> pulumi.ResourceOptions:
            return options.child(self, opts, depends_on=list(waits), **provider)

        self.namespace = Namespace(name, metadata=ObjectMetaArgs(
            name=queueing.namespace, labels=names.platform_namespace_labels(POD_SECURITY_LEVEL)), opts=after())
        self.values = chart_values(args.get("environment") == "prod",
                                   args.get("system_node_selector") or names.SYSTEM_NODE_SELECTOR,
                                   args.get("prometheus_namespace"), dra=bool(dra_pools(fleet.node_pools)))
        self.release = Release(
            name, name=names.KUEUE_RELEASE, chart=catalog.KUEUE_CHART, version=queueing.chart_version,
            namespace=self.namespace.metadata.name, create_namespace=False, values=self.values,
            skip_await=False, timeout=RELEASE_TIMEOUT_SECONDS, opts=after(self.namespace))

        placed = placement(fleet)
        self.queues = {t.name: team_queue(fleet, t, placed) for t in fleet.teams}
        m = queueing_manifests(fleet.teams, self.queues, gpu_flavors(fleet))
        self.objects: dict[str, pulumi.Resource] = {}
        for key, obj in m.items():
            if key.startswith(("flavor-", "priority-")) or key == "cohort":
                self.objects[key] = KueueObject(f"{name}-{key}", obj, opts=after(self.release))
        shared = list(self.objects.values())  # flavors, the cohort and the priorities come before any queue
        namespaces = {t["name"]: t.get("namespace") for t in args["teams"]}
        for team in fleet.teams:
            cq = KueueObject(f"{name}-queue-{team.name}", m[f"queue-{team.name}"], opts=after(self.release, *shared))
            self.objects[f"queue-{team.name}"] = cq
            self.objects[f"local-queue-{team.name}"] = KueueObject(
                f"{name}-local-queue-{team.name}", _in_namespace(m[f"local-queue-{team.name}"], namespaces[team.name]),
                opts=after(self.release, cq))
        # After the release: a labelled GPU pod is then gated by Kueue's webhook rather than run unqueued.
        policy, binding = m["policy"], m["policy-binding"]
        self.policy = ValidatingAdmissionPolicy(f"{name}-policy", metadata=policy["metadata"], spec=policy["spec"],
                                                opts=after(self.release))
        self.binding = ValidatingAdmissionPolicyBinding(
            f"{name}-policy", metadata=binding["metadata"], spec=binding["spec"], opts=after(self.release, self.policy))
        self.namespace_name = queueing.namespace
        self.cluster_queues = {t.name: names.cluster_queue(t.name) for t in fleet.teams}
        self.local_queue = names.TEAM_LOCAL_QUEUE
        self.quota_ceilings = {t.name: quota_ceiling(fleet, t) for t in fleet.teams}
        self.outputs: dict[str, Any] = {
            "namespace": queueing.namespace, "chartVersion": queueing.chart_version, "cohort": names.KUEUE_COHORT,
            "clusterQueues": self.cluster_queues, "localQueue": self.local_queue}
        self.register_outputs(self.outputs)


def _in_namespace(obj: dict, namespace: Any) -> dict:
    """The object in the namespace given (an Output waits for it), or as rendered when none is."""
    if namespace is None:
        return obj
    return {**obj, "metadata": {**obj["metadata"], "namespace": namespace}}


def queueing_settings(name: str, args: Mapping[str, Any]) -> Fleet:
    """The pools, teams and settings from KueueQueueing's arguments, checked with the stack file's pool,
    team and queueing rules; SpecError names each argument that is wrong."""
    args = dict(args)
    where = f"KueueQueueing {name!r}: "
    problems = argument_problems(args, KueueQueueingArgs)
    pools, teams = [], []
    for i, pool in enumerate(args.get("node_pools") or []):
        try:
            pools.append(read_part(QueuePoolSpec, pool, f"nodePools[{i}]."))
        except SpecError as err:
            problems += err.problems
    for i, team in enumerate(args.get("teams") or []):
        fields = {k: v for k, v in dict(team).items() if k != "namespace"}
        problems += argument_problems(fields, QueuedTeamArgs, f"teams[{i}].", required=False)
        try:
            teams.append(read_part(TeamSpec, fields, f"teams[{i}]."))
        except SpecError as err:
            problems += err.problems
    try:
        queueing = read_part(QueueingSpec, {"mode": "kueue", "chart_version": args.get("chart_version"),
                                            **({"namespace": args["namespace"]} if "namespace" in args else {})})
    except SpecError as err:
        problems += err.problems
    if problems:
        raise SpecError([where + p for p in problems])
    found = [p for i, pool in enumerate(pools) for p in gpu_shape_rules(f"nodePools[{i}]", pool)]
    if not found:
        found += [p for i, pool in enumerate(pools) for p in sharing_rules(f"nodePools[{i}]", pool)]
        found += mig_strategy_rules(pools)
    fleet = Fleet(pools, teams, queueing, mig_strategy_of(pools))
    if not found:
        found += queueing_rules(fleet)
    if found:
        raise SpecError([where + f"{path.removeprefix('queueing.')}: {message}" for path, message in found])
    return fleet


def build_queueing(spec: "PlatformSpec", cluster: Any, teams: list[Any], monitoring: Any,
                   opts: pulumi.ResourceOptions) -> Optional[KueueQueueing]:
    """Kueue when `queueing.mode` is kueue, else None. `teams` are the platform's TeamNamespace components;
    the release waits for the system nodes and for the Prometheus CRDs its ServiceMonitor needs."""
    if not spec.queueing.enabled:
        return None
    from gpu_platform.render.monitoring import scraping_namespace

    return KueueQueueing("kueue", queueing_args(spec, cluster.k8s_provider, scraping_namespace(spec.monitoring),
                                                {t.namespace_name: t.namespace.metadata.name for t in teams}),
                         opts=pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(
                             depends_on=[*cluster.system_ready, *monitoring.crds_ready])))


def queueing_args(spec: "PlatformSpec", k8s_provider: Any, prometheus_namespace: Optional[str],
                  namespaces: Mapping[str, Any]) -> KueueQueueingArgs:
    """The stack file's queueing block, pools and teams as KueueQueueing's arguments."""
    pools = [QueuePoolArgs(**p.model_dump(include={"name", "instance_types", "capacity_type", "max_size", "sharing",
                                                   "taints"}, exclude_none=True),
                           **({"gpu_allocation": p.gpu_allocation} if is_dra(p) else {})) for p in spec.node_pools]
    teams = [QueuedTeamArgs(**t.model_dump(include={"name", "quota", "priority_tier", "queue"}, exclude_none=True),
                            namespace=namespaces[names.team_namespace(t.name)]) for t in spec.teams]
    args = KueueQueueingArgs(chart_version=spec.queueing.chart_version, node_pools=pools, teams=teams,
                             namespace=spec.queueing.namespace, environment=spec.environment,
                             system_node_selector=dict(spec.cluster.system_node_selector), k8s_provider=k8s_provider)
    if prometheus_namespace is not None:
        args["prometheus_namespace"] = prometheus_namespace
    return args
