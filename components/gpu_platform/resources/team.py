"""Tenancy: priority tiers for the cluster, one complete namespace unit per team, and EKS access entries.

The objects themselves are built by `team_objects` (pure); this module only registers them, each with
the cluster's Kubernetes provider. Access entries live in one component for all teams because EKS
allows a single entry per IAM principal: a role two teams list gets one entry holding both groups.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

import pulumi

from gpu_platform.facts import names
from gpu_platform.render import team_objects as objects

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec, TeamSpec


class PriorityTiers(pulumi.ComponentResource):
    """One PriorityClass per tier. None is the global default: pods that name no class run at 0,
    below every tier (the workload helper names the team's tier)."""

    def __init__(self, name: str, k8s_provider: pulumi.ProviderResource, opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-platform:team:PriorityTiers", name, None, opts)
        from pulumi_kubernetes.scheduling.v1 import PriorityClass

        self.classes = {}
        for tier in objects.PRIORITY_TIERS:
            m = objects.priority_class(tier)
            self.classes[tier] = PriorityClass(
                f"{name}-{tier}", metadata=m["metadata"], value=m["value"], global_default=m["globalDefault"],
                preemption_policy=m["preemptionPolicy"], description=m["description"],
                opts=pulumi.ResourceOptions(parent=self, provider=k8s_provider))
        self.register_outputs({"classes": [names.priority_class(t) for t in self.classes]})


@dataclass
class TeamCluster:
    """What a team unit needs from the cluster and the model cache."""

    k8s_provider: pulumi.ProviderResource
    storage_class: Optional[str] = None  # the model cache's StorageClass; None: no cache claim
    cache_ready: list[pulumi.Resource] = field(default_factory=list)


class TeamNamespace(pulumi.ComponentResource):
    """Namespace, quota, limits, roles and bindings, ingress policy and the model-cache claim of one team."""

    def __init__(self, name: str, spec: "PlatformSpec", team: "TeamSpec", cluster: TeamCluster,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-platform:team:TeamNamespace", name, None, opts)
        from pulumi_kubernetes.core.v1 import LimitRange, Namespace, PersistentVolumeClaim, ResourceQuota
        from pulumi_kubernetes.networking.v1 import NetworkPolicy
        from pulumi_kubernetes.rbac.v1 import Role, RoleBinding

        m = objects.team_manifests(spec, team, cluster.storage_class)
        k8s = pulumi.ResourceOptions(parent=self, provider=cluster.k8s_provider)
        self.namespace = Namespace(name, metadata=m["namespace"]["metadata"], opts=k8s)
        inside = pulumi.ResourceOptions.merge(k8s, pulumi.ResourceOptions(depends_on=[self.namespace]))
        self.quota = ResourceQuota(f"{name}-quota", metadata=m["quota"]["metadata"], spec=m["quota"]["spec"],
                                   opts=inside)
        self.limits = LimitRange(f"{name}-limits", metadata=m["limits"]["metadata"], spec=m["limits"]["spec"],
                                 opts=inside)
        self.network_policy = NetworkPolicy(f"{name}-ingress", metadata=m["ingress"]["metadata"],
                                            spec=m["ingress"]["spec"], opts=inside)
        self.roles, self.bindings = {}, {}
        for r in names.TEAM_ROLES:
            role, binding = m[f"role-{r}"], m[f"binding-{r}"]
            self.roles[r] = Role(f"{name}-{r}", metadata=role["metadata"], rules=role["rules"], opts=inside)
            self.bindings[r] = RoleBinding(
                f"{name}-{r}", metadata=binding["metadata"], role_ref=binding["roleRef"], subjects=binding["subjects"],
                opts=pulumi.ResourceOptions.merge(inside, pulumi.ResourceOptions(depends_on=[self.roles[r]])))
        self.model_cache_claim = None
        if "model-cache" in m:
            claim = m["model-cache"]
            # After the quota and limits (the claim is counted) and once the cache can bind it.
            after = [self.namespace, self.quota, self.limits, *cluster.cache_ready]
            self.model_cache_claim = PersistentVolumeClaim(
                f"{name}-model-cache", metadata=claim["metadata"], spec=claim["spec"],
                opts=pulumi.ResourceOptions.merge(k8s, pulumi.ResourceOptions(depends_on=after)))
        self.namespace_name = names.team_namespace(team.name)
        self.register_outputs({"namespace": self.namespace_name, "priorityTier": team.priority_tier})


class TeamAccess(pulumi.ComponentResource):
    """One EKS access entry per IAM role any team lists, mapping it to the team groups it belongs to."""

    def __init__(self, name: str, spec: "PlatformSpec", cluster_name: pulumi.Input[str],
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-platform:team:TeamAccess", name, None, opts)
        from pulumi_aws import eks

        self.entries = {
            arn: eks.AccessEntry(names.access_entry_resource(arn), cluster_name=cluster_name, principal_arn=arn,
                                 kubernetes_groups=groups, type="STANDARD", opts=pulumi.ResourceOptions(parent=self))
            for arn, groups in objects.access_entries(spec).items()
        }
        self.register_outputs({"principals": list(self.entries)})


@dataclass
class Tenancy:
    priority_tiers: PriorityTiers
    teams: list[TeamNamespace]
    access: TeamAccess


def build_tenancy(spec: "PlatformSpec", cluster: Any, model_cache: Any, opts: pulumi.ResourceOptions) -> Tenancy:
    """Priority tiers, every team's unit and the access entries. `cluster` is the platform's Cluster;
    `model_cache` its ModelCache or None."""
    provider = cluster.k8s_provider
    team_cluster = TeamCluster(
        provider,
        storage_class=model_cache.storage_class_name if model_cache is not None else None,
        cache_ready=list(model_cache.ready) if model_cache is not None else [])
    return Tenancy(
        priority_tiers=PriorityTiers("priority-tiers", provider, opts=opts),
        teams=[TeamNamespace(f"team-{t.name}", spec, t, team_cluster, opts=opts) for t in spec.teams],
        access=TeamAccess("team-access", spec, cluster.name, opts=opts),
    )
