"""The stack file onto the components: each function takes the validated PlatformSpec (and the components
built before) and gives one component what it builds from, as the already-validated models and their
context (`X.of(name, settings)`) or as plain Args. Nothing here validates: `parse_platform` did, once.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

import pulumi

from gpu_platform.decisions.queueing import Fleet
from gpu_platform.facts import names
from gpu_platform.render.monitoring import scraping_namespace
from gpu_platform.render.team_objects import TeamContext
from gpu_platform.resources.team import TeamRolesArgs, TeamSettings
from gpu_platform.spec.models import NodePoolSpec, PlatformSpec, TeamSpec

if TYPE_CHECKING:
    from gpu_platform.resources.kueue import QueueingCluster


def team_settings(spec: PlatformSpec, team: TeamSpec, k8s_provider: Any, storage_class: Optional[Any]) -> TeamSettings:
    """A stack-file team as TeamNamespace builds it: the pools' GPUs, Prometheus, Kueue and the model cache's
    StorageClass (None without a cache)."""
    return TeamSettings(team, TeamContext.of(spec, team, storage_class), k8s_provider)


def team_roles(spec: PlatformSpec) -> list[TeamRolesArgs]:
    """Every team's IAM roles, as TeamAccess takes them."""
    return [TeamRolesArgs(name=t.name, **t.access.model_dump()) for t in spec.teams]


def pool_options(pool: NodePoolSpec, depends_on: list, caller_protect: Optional[bool] = None) -> pulumi.ResourceOptions:
    """What the pool waits for, and its protection: the program's `protect` when it set one, else the stack
    file's for this pool, else the library's default (prod)."""
    return pulumi.ResourceOptions(depends_on=depends_on,
                                  protect=caller_protect if caller_protect is not None else pool.protect)


def karpenter_cluster(cluster: Any, cluster_name: str) -> dict[str, Any]:
    """What a KarpenterNodePool reads of the platform's cluster: its name, what an Ubuntu node's bootstrap
    joins, and the Kubernetes provider."""
    base = cluster.pool_args(cluster_name)
    keys = ("cluster_name", "cluster_endpoint", "cluster_certificate_authority", "service_cidr")
    return {**{k: base[k] for k in keys}, "k8s_provider": cluster.k8s_provider}


def fleet(spec: PlatformSpec) -> Fleet:
    """The pools, teams and queueing block Kueue is built from."""
    return Fleet(spec.node_pools, spec.teams, spec.queueing, spec.mig_strategy)


def queueing_cluster(spec: PlatformSpec, cluster: Any, teams: list[Any]) -> "QueueingCluster":
    """What Kueue reads of the platform's cluster: each team's namespace (its TeamNamespace's, so a LocalQueue
    waits for it), the environment, the system nodes, Prometheus and the Kubernetes provider."""
    from gpu_platform.resources.kueue import QueueingCluster  # Kueue's module loads only when a stack queues

    namespaces = {t.namespace_name: t.namespace.metadata.name for t in teams}
    return QueueingCluster({t.name: namespaces[names.team_namespace(t.name)] for t in spec.teams},
                           spec.environment == "prod", dict(spec.cluster.system_node_selector),
                           scraping_namespace(spec.monitoring), cluster.k8s_provider)
