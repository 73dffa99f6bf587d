"""Kueue: fair GPU sharing across teams (`queueing.mode: kueue`, docs/queueing.md).

One release of the official chart in its own namespace on the system nodes (its metrics scraped when the
platform has Prometheus), then the objects decided in queueing.py and rendered in queueing_objects.py:
the flavors, the cohort, the tiers' WorkloadPriorityClasses, one ClusterQueue per team, a LocalQueue in
each team namespace, and the admission policy refusing unqueued GPU pods in team namespaces. Kueue's
objects wait for the release (its CRDs and webhooks); each is registered whole, as rendered.
"""
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Optional

import pulumi
import pulumi_kubernetes

from gpu_platform.facts import component_types
from gpu_platform.decisions.dra import dra_pools
from gpu_platform.decisions.queueing import (Fleet, gpu_flavors, local_queues, placement, queueing_rules, quota_ceiling,
                                             sub_team_queues, team_queue, usage_weights)
from gpu_platform.facts import catalog, names
from gpu_platform.render.queueing_objects import chart_values, local_queue_key, queueing_manifests
from gpu_platform.resources import options
from gpu_platform.resources.kubernetes_object import KubernetesObject
from gpu_platform.resources.pool_args import PoolSharingArgs, PoolTaintArgs
from gpu_platform.resources.team import TeamQuotaArgs
from gpu_platform.resources.typed_args import ArgumentsError, Required, TypedDict, argument_problems, as_arguments
from gpu_platform.spec.errors import SpecError
from gpu_platform.spec.field_path import QUEUEING, ROOT, FieldPath
from gpu_platform.spec.models import QueueingSpec, QueuePoolSpec, TeamSpec, mig_strategy_of
from gpu_platform.spec.parse import read_part
from gpu_platform.spec.rules import gpu_shape_rules, mig_strategy_rules, sharing_rules

# Pods of the manager run as non-root with every capability dropped (the chart's security contexts).
POD_SECURITY_LEVEL = "baseline"
RELEASE_TIMEOUT_SECONDS = 600


class QueuePoolArgs(TypedDict, total=False):
    """A GPU pool Kueue admits onto: its GPUs, sharing and taints, capacity type and size at most."""

    name: Required[str]
    """The pool's name: its nodes carry it in the gpu-platform.io/pool label."""
    instance_types: Required[list[str]]
    """The pool's instance types: its GPUs per node."""
    capacity_type: Required[str]
    """spot, on-demand or capacity-block: the flavor's gpu-platform.io/capacity-type label."""
    max_size: Required[int]
    """Nodes at most: nominal quotas must fit the pool at this size."""
    sharing: PoolSharingArgs
    """Time-slicing or MIG: what one GPU request means on the pool."""
    gpu_allocation: str
    """device-plugin (default) or dra: Kueue counts a DRA pool's claimed GPUs (DeviceClass gpu.nvidia.com) as
    nvidia.com/gpu."""
    taints: list[PoolTaintArgs]
    """The pool's extra taints, which the flavor's workloads tolerate."""


class SubTeamArgs(TypedDict, total=False):
    """A sub-team: a ClusterQueue in the team's cohort holding its share of the team's quota, and its LocalQueue."""

    name: Required[str]
    """The LocalQueue's name: workloads name it in kueue.x-k8s.io/queue-name."""
    share: Required[str]
    """Percentage of the team's quota; a team's shares add up to 100%."""


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
    sub_teams: list[SubTeamArgs]
    """Parts of the team, each with its share of the team's quota in a nested cohort and a LocalQueue of its name
    in the team's namespace (needs fair_sharing)."""


class FairSharingArgs(TypedDict, total=False):
    """Admission fair sharing between a team's LocalQueues by their recent GPU time."""

    usage_half_life: str
    """How fast past use is forgotten: it counts half after this long (default 168h)."""
    usage_sampling_interval: str
    """How often use is sampled (default 5m)."""


class DebugQueueArgs(TypedDict, total=False):
    """A `debug` LocalQueue in every team namespace for short jobs."""

    runtime_ceiling_minutes: int
    """The longest a GPU job in it may run (default 60)."""


class QueuedTeamArgs(TypedDict, total=False):
    """A team with a queue: its quota (the nominal quota), tier and share."""

    name: Required[str]
    """The team's name."""
    quota: Required[TeamQuotaArgs]
    """The team's nominal quota in its ClusterQueue."""
    priority_tier: str
    """The team's priority tier: its workloads' priority and which pools (spot or not) its queue admits to."""
    queue: TeamQueueArgs
    """The team's share of the cohort: fair-sharing weight, borrowing and lending limits."""
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
    runtime_ceiling_hours: dict[str, int]
    """Priority tier -> the longest one GPU Job of a team in that tier may run; an admission policy holds Jobs to it."""
    fair_sharing: FairSharingArgs
    """Admission fair sharing between each team's LocalQueues (needed for sub-teams)."""
    debug_queue: DebugQueueArgs
    """A short-job LocalQueue in every team namespace."""
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

    namespace_name: str
    """The namespace Kueue's controller runs in."""
    cluster_queues: dict[str, str]
    """Team -> its ClusterQueue."""
    local_queue: str
    """The LocalQueue every team namespace has; workloads name it in kueue.x-k8s.io/queue-name."""
    quota_ceilings: dict[str, dict[str, str]]
    """Team -> the ResourceQuota `hard` entries its queue needs (a TeamNamespace's `quotaCeiling`)."""

    def __init__(self, name: str, args: KueueQueueingArgs, opts: Optional[pulumi.ResourceOptions] = None):
        fleet = queueing_settings(name, args)
        cluster = QueueingCluster(
            {t["name"]: t.get("namespace") for t in args["teams"]}, args.get("environment") == "prod",
            args.get("system_node_selector") or names.SYSTEM_NODE_SELECTOR, args.get("prometheus_namespace"),
            args.get("k8s_provider"))
        self._build(name, fleet, cluster, opts)

    @classmethod
    def of(cls, name: str, fleet: Fleet, cluster: "QueueingCluster",
           opts: Optional[pulumi.ResourceOptions] = None) -> "KueueQueueing":
        """Queueing whose pools, teams and settings the stack file's rules already validated (GpuPlatform's),
        built as they are: not checked again."""
        component = cls.__new__(cls)
        component._build(name, fleet, cluster, opts)
        return component

    def _build(self, name: str, fleet: Fleet, cluster: "QueueingCluster", opts: Optional[pulumi.ResourceOptions]) -> None:
        super().__init__(component_types.public("KueueQueueing"), name, None,
                         options.formerly(opts, "KueueQueueing"))
        from pulumi_kubernetes.admissionregistration.v1 import ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding
        from pulumi_kubernetes.core.v1 import Namespace
        from pulumi_kubernetes.helm.v3 import Release

        queueing = fleet.queueing
        provider = options.kubernetes({"k8s_provider": cluster.k8s_provider})

        def after(*waits: pulumi.Resource) -> pulumi.ResourceOptions:
            return options.child(self, opts, depends_on=list(waits), **provider)

        self.namespace = Namespace(name, metadata={
            "name": queueing.namespace, "labels": names.platform_namespace_labels(POD_SECURITY_LEVEL)}, opts=after())
        self.values = chart_values(cluster.prod, cluster.system_node_selector, cluster.prometheus_namespace,
                                   dra=bool(dra_pools(fleet.node_pools)), fair_sharing=queueing.fair_sharing,
                                   weights=usage_weights(fleet))
        self.release = Release(
            name, name=names.KUEUE_RELEASE, chart=catalog.KUEUE_CHART, version=queueing.chart_version,
            namespace=self.namespace.metadata.name, create_namespace=False, values=self.values,
            skip_await=False, timeout=RELEASE_TIMEOUT_SECONDS, opts=after(self.namespace))

        placed = placement(fleet)
        self.queues = {t.name: team_queue(fleet, t, placed) for t in fleet.teams}
        m = queueing_manifests(fleet.teams, self.queues, gpu_flavors(fleet), queueing)
        self.objects: dict[str, pulumi.Resource] = {}
        for key, obj in m.items():
            if key.startswith(("flavor-", "priority-")) or key in ("cohort", "topology"):
                self.objects[key] = KubernetesObject(f"{name}-{key}", obj, opts=after(self.release))
        shared = list(self.objects.values())  # flavors, the cohort and the priorities come before any queue
        namespaces = cluster.team_namespaces
        for team in fleet.teams:
            waits = shared
            if f"cohort-{team.name}" in m:  # a team with sub-teams: its cohort, under the platform's, before its queues
                key = f"cohort-{team.name}"
                self.objects[key] = KubernetesObject(f"{name}-{key}", m[key], opts=after(self.release, *shared))
                waits = [*shared, self.objects[key]]
            queues = {names.cluster_queue(team.name): f"queue-{team.name}"}
            queues.update({sub.cluster_queue: f"queue-{team.name}-{sub.name}"
                           for sub in sub_team_queues(team, self.queues[team.name])})
            for key in queues.values():
                self.objects[key] = KubernetesObject(f"{name}-{key}", m[key], opts=after(self.release, *waits))
            for share in local_queues(queueing, team):
                key = local_queue_key(team, share)
                cq = self.objects[queues[share.cluster_queue or names.cluster_queue(team.name)]]
                self.objects[key] = KubernetesObject(f"{name}-{key}", _in_namespace(m[key], namespaces[team.name]),
                                                opts=after(self.release, cq))
        # After the release: a labelled GPU pod is then gated by Kueue's webhook rather than run unqueued.
        policy, binding = m["policy"], m["policy-binding"]
        self.policy = ValidatingAdmissionPolicy(f"{name}-policy", metadata=policy["metadata"], spec=policy["spec"],
                                                opts=after(self.release))
        self.binding = ValidatingAdmissionPolicyBinding(
            f"{name}-policy", metadata=binding["metadata"], spec=binding["spec"], opts=after(self.release, self.policy))
        if "ceilings-policy" in m:
            ceilings, ceilings_binding = m["ceilings-policy"], m["ceilings-policy-binding"]
            self.ceilings_policy = ValidatingAdmissionPolicy(
                f"{name}-ceilings-policy", metadata=ceilings["metadata"], spec=ceilings["spec"], opts=after(self.release))
            self.ceilings_binding = ValidatingAdmissionPolicyBinding(
                f"{name}-ceilings-policy", metadata=ceilings_binding["metadata"], spec=ceilings_binding["spec"],
                opts=after(self.release, self.ceilings_policy))
        self.namespace_name = queueing.namespace
        self.cluster_queues = {t.name: names.cluster_queue(t.name) for t in fleet.teams}
        self.local_queue = names.TEAM_LOCAL_QUEUE
        self.quota_ceilings = {t.name: quota_ceiling(fleet, t) for t in fleet.teams}
        self.outputs: dict[str, Any] = {
            "namespace": queueing.namespace, "chartVersion": queueing.chart_version, "cohort": names.KUEUE_COHORT,
            "clusterQueues": self.cluster_queues, "localQueue": self.local_queue}
        self.register_outputs(self.outputs)


def _in_namespace(obj: dict[str, Any], namespace: Optional[pulumi.Input[str]]) -> dict[str, Any]:
    """The object in the namespace given (an Output waits for it), or as rendered when none is."""
    if namespace is None:
        return obj
    return {**obj, "metadata": {**obj["metadata"], "namespace": namespace}}


@dataclass(frozen=True)
class QueueingCluster:
    """What KueueQueueing reads of its cluster besides the fleet."""

    # team -> its namespace (an Output waits for it; None: the team's name)
    team_namespaces: Mapping[str, Optional[pulumi.Input[str]]]
    prod: bool = False  # the chart's controller runs highly available
    system_node_selector: Mapping[str, str] = field(default_factory=lambda: dict(names.SYSTEM_NODE_SELECTOR))
    prometheus_namespace: Optional[str] = None  # its metrics are scraped from there
    k8s_provider: Optional[pulumi.ProviderResource] = None


QUEUEING_SETTINGS = ("namespace", "runtime_ceiling_hours", "fair_sharing", "debug_queue")


def queueing_settings(name: str, args: Mapping[str, Any]) -> Fleet:
    """The pools, teams and settings from KueueQueueing's arguments, checked with the stack file's pool,
    team and queueing rules; SpecError names each argument that is wrong."""
    args = as_arguments("KueueQueueing", name, args, KueueQueueingArgs)
    where = f"KueueQueueing {name!r}: "
    problems = argument_problems(args, KueueQueueingArgs)
    pools, teams = [], []
    for i, pool in enumerate(args.get("node_pools") or []):
        try:
            pools.append(read_part(QueuePoolSpec, pool, FieldPath.of("nodePools").index(i)))
        except SpecError as err:
            problems += err.problems
    for i, team in enumerate(args.get("teams") or []):
        fields = {k: v for k, v in dict(team).items() if k != "namespace"}
        problems += argument_problems(fields, QueuedTeamArgs, FieldPath.of("teams").index(i), required=False)
        try:
            teams.append(read_part(TeamSpec, fields, FieldPath.of("teams").index(i)))
        except SpecError as err:
            problems += err.problems
    try:
        queueing = read_part(QueueingSpec, {"mode": "kueue", "chart_version": args.get("chart_version"),
                                            **{k: args[k] for k in QUEUEING_SETTINGS if k in args}})
    except SpecError as err:
        problems += err.problems
    if problems:
        raise ArgumentsError(where, problems)
    found = [p for i, pool in enumerate(pools) for p in gpu_shape_rules(FieldPath.of("nodePools").index(i), pool)]
    if not found:
        found += [p for i, pool in enumerate(pools) for p in sharing_rules(FieldPath.of("nodePools").index(i), pool)]
        found += mig_strategy_rules(pools)
    fleet = Fleet(pools, teams, queueing, mig_strategy_of(pools))
    if not found:
        found += queueing_rules(fleet)
    if found:
        raise ArgumentsError(where, [f"{path.moved(QUEUEING, ROOT)}: {message}" for path, message in found])
    return fleet
