"""The stack file onto the components: each function takes the validated PlatformSpec (and the components
built before) and gives one component what it builds from, as the already-validated models and their
context (`X.of(name, settings)`) or as plain Args. Nothing here validates: `parse_platform` did, once.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, cast

import pulumi

from gpu_platform.decisions import node_repair
from gpu_platform.decisions.datasets import claim_teams
from gpu_platform.decisions.karpenter import untagged_subnets, uses_karpenter
from gpu_platform.decisions.network import subnet_count
from gpu_platform.decisions.placement import subnet_index
from gpu_platform.decisions.queueing import Fleet
from gpu_platform.facts import names
from gpu_platform.render.monitoring import scraping_namespace
from gpu_platform.render.team_objects import TeamContext
from gpu_platform.resources.adopted_cluster import AdoptedClusterArgs
from gpu_platform.resources.cluster import ClusterSettings
from gpu_platform.resources.cluster_base import ClusterBase
from gpu_platform.resources.model_cache import ModelCacheArgs
from gpu_platform.resources.team import TeamNamespace, TeamSettings
from gpu_platform.spec.models import NodePoolSpec, PlatformSpec

if TYPE_CHECKING:
    import pulumi_kubernetes

    from gpu_platform.resources.karpenter_controller import ControllerSettings
    from gpu_platform.resources.kueue import QueueingCluster
    from gpu_platform.render.serving_scaling import RenderedService


def team_settings(spec: PlatformSpec, k8s_provider: pulumi.ProviderResource,
                  storage_class: Optional[pulumi.Input[str]]) -> list[TeamSettings]:
    """Each stack-file team as TeamNamespace builds it: the pools' GPUs, Prometheus, Kueue and the model cache's
    StorageClass (None without a cache); what all teams share is worked out once."""
    # The cache's StorageClass name may be an Output: rendering places it in the claim unread, as a name.
    contexts = TeamContext.of_teams(spec, spec.teams, cast(Optional[str], storage_class))
    return [TeamSettings(team, ctx, k8s_provider) for team, ctx in zip(spec.teams, contexts, strict=True)]


def served(spec: PlatformSpec) -> dict[str, list["RenderedService"]]:
    """Team -> its services as ModelServing registers them (an empty list without services)."""
    from gpu_platform.decisions.serving import plans
    from gpu_platform.render.serving_scaling import rendered

    out: dict[str, list[RenderedService]] = {t.name: [] for t in spec.teams}
    for plan in plans(spec):
        out[plan.team].append(rendered(spec, plan))
    return out


def serving_control(spec: PlatformSpec) -> tuple[bool, Optional[dict[str, Any]], dict[str, str], str, dict[str, str], str]:
    """What ServingControl builds: KEDA when a service autoscales, the serving alerts and dashboard when a
    Prometheus scrapes, the system nodes KEDA runs on, where Prometheus reads its rules and Grafana its dashboards."""
    from gpu_platform.decisions.serving import plans
    from gpu_platform.render.serving_scaling import rule_group

    every = plans(spec)
    prom = spec.monitoring.prometheus
    rules = rule_group(every) if scraping_namespace(spec.monitoring) else None
    return (any(p.service.autoscaling for p in every), rules, dict(spec.cluster.system_node_selector), prom.namespace,
            {**prom.selector_labels, names.MANAGED_BY_LABEL: names.MANAGED_BY}, prom.grafana_dashboard_label)


def pool_options(pool: NodePoolSpec, depends_on: list[pulumi.Resource],
                 caller_protect: Optional[bool] = None) -> pulumi.ResourceOptions:
    """What the pool waits for, and its protection: the program's `protect` when it set one, else the stack
    file's for this pool, else the library's default (prod)."""
    return pulumi.ResourceOptions(depends_on=depends_on,
                                  protect=caller_protect if caller_protect is not None else pool.protect)


def karpenter_cluster(cluster: ClusterBase, cluster_name: str) -> dict[str, Any]:
    """What a KarpenterNodePool reads of the platform's cluster: its name, what an Ubuntu node's bootstrap
    joins, and the Kubernetes provider."""
    base = cluster.pool_args(cluster_name)
    keys = ("cluster_name", "cluster_endpoint", "cluster_certificate_authority", "service_cidr")
    return {**{k: base[k] for k in keys}, "k8s_provider": cluster.k8s_provider}


def fleet(spec: PlatformSpec) -> Fleet:
    """The pools, teams and queueing block Kueue is built from."""
    return Fleet(spec.node_pools, spec.teams, spec.queueing, spec.mig_strategy)


def queueing_cluster(spec: PlatformSpec, cluster: ClusterBase, teams: list[TeamNamespace]) -> "QueueingCluster":
    """What Kueue reads of the platform's cluster: each team's namespace (its TeamNamespace's, so a LocalQueue
    waits for it), the environment, the system nodes, Prometheus and the Kubernetes provider."""
    from gpu_platform.resources.kueue import QueueingCluster  # Kueue's module loads only when a stack queues

    namespaces = {t.namespace_name: t.namespace.metadata.name for t in teams}
    return QueueingCluster({t.name: namespaces[names.team_namespace(t.name)] for t in spec.teams},
                           spec.environment == "prod", dict(spec.cluster.system_node_selector),
                           scraping_namespace(spec.monitoring), cluster.k8s_provider)


def cluster_settings(spec: PlatformSpec, region: str) -> ClusterSettings:
    """The stack file's `cluster.create` block, and what the pools need of it, as Cluster builds it."""
    return ClusterSettings(spec.cluster, region, spec.environment == "prod", dict(spec.tags),
                           tuple(node_repair.gpu_taints(spec)), uses_karpenter(spec))


def adopted_args(spec: PlatformSpec, region: str,
                 k8s_provider: Optional["pulumi_kubernetes.Provider"] = None) -> AdoptedClusterArgs:
    """The stack file's `cluster.existing` block as AdoptedCluster's arguments."""
    existing = spec.cluster.existing
    assert existing is not None  # parse_platform: exactly one of create and existing
    args = AdoptedClusterArgs(cluster_name=spec.cluster.name, subnet_ids=list(existing.subnet_ids),
                              node_security_group_ids=list(existing.node_security_group_ids), region=region)
    if k8s_provider is not None:
        args["k8s_provider"] = k8s_provider
    return args


def model_cache_args(spec: PlatformSpec, cluster: ClusterBase) -> ModelCacheArgs:
    """The model cache's add-on and the platform's cluster (one mount target per private subnet)."""
    version = spec.model_cache.addon_version
    assert version is not None  # parse_platform: an enabled model cache pins its add-on
    return ModelCacheArgs(cluster_name=spec.cluster.name, vpc_id=cluster.vpc_id, subnet_ids=cluster.private_subnet_ids,
                          subnet_count=subnet_count(spec), node_security_group_id=cluster.node_security_group_id,
                          addon_version=version, k8s_provider=cluster.k8s_provider)


def datasets_cluster(spec: PlatformSpec, cluster: ClusterBase, teams: list[TeamNamespace]) -> dict[str, Any]:
    """What Datasets reads of the platform besides its file system: the cluster, the subnet of the first EFA
    pool, and each claiming team's namespace, resolved once its quota and limits exist (the claim is counted)."""
    by_name = {t.namespace_name: t for t in teams}
    namespaces = {}
    for team in claim_teams(spec):
        unit = by_name[names.team_namespace(team.name)]
        namespaces[team.name] = pulumi.Output.all(unit.namespace.metadata.name, unit.quota.id, unit.limits.id).apply(
            lambda parts: parts[0])
    index = subnet_index(spec, cluster.zone_names)
    subnet = pulumi.Output.from_input(cluster.private_subnet_ids).apply(lambda ids: ids[index])
    return {"cluster_name": spec.cluster.name, "vpc_id": cluster.vpc_id, "subnet_id": subnet,
            "node_security_group_id": cluster.node_security_group_id, "team_namespaces": namespaces,
            "k8s_provider": cluster.k8s_provider, "environment": spec.environment}


def karpenter_controller(spec: PlatformSpec, region: str) -> "ControllerSettings":
    """What Karpenter's controller is built from (imported only when a pool uses Karpenter)."""
    from gpu_platform.render.karpenter import controller_values
    from gpu_platform.resources.karpenter_controller import ControllerSettings

    k = spec.karpenter
    return ControllerSettings(spec.cluster.name, region, k.namespace, k.chart_version, controller_values(spec),
                              tuple(untagged_subnets(spec)))
