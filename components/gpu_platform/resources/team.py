"""Tenancy: priority tiers for the cluster, one complete namespace unit per team, and EKS access entries.

The objects themselves are built by `team_objects` (pure); this module checks each component's arguments
with the stack file's team rules and registers the objects. Access entries live in one component for all
teams because EKS allows a single entry per IAM principal: a role two teams list gets one entry holding
both groups. Each component takes its own arguments, so it serves any EKS cluster.
"""
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

import pulumi
import pulumi_kubernetes

from gpu_platform.decisions.dra import ClaimShape, DomainShape
from gpu_platform.facts import component_types, names, syntax
from gpu_platform.render import team_objects as objects
from gpu_platform.render.team_objects import TeamContext
from gpu_platform.resources import options
from gpu_platform.resources.typed_args import (
    ArgumentsError, Required, TypedDict, argument_problems, as_arguments, moved,
)
from gpu_platform.spec.errors import SpecError
from gpu_platform.spec.field_path import TEAMS, FieldPath
from gpu_platform.spec.models import TeamAccessSpec, TeamSpec
from gpu_platform.spec.parse import read_part
from gpu_platform.spec.rules_teams import (
    RESERVED_NAMESPACES, cache_claim_rules, cluster_context_rules, mig_slice_rules, name_rules, role_arn_rules,
)

class PriorityTiersArgs(TypedDict, total=False):
    """The cluster the tiers are made in."""

    k8s_provider: pulumi_kubernetes.Provider
    """The cluster's Kubernetes provider (default: the provider the resource options give)."""


class PriorityTiers(pulumi.ComponentResource):
    """One PriorityClass per tier (critical-inference, standard, preemptible-batch). None is the global
    default: pods that name no class run at 0, below every tier."""

    class_names: list[str]
    """The PriorityClasses, highest tier first."""

    def __init__(self, name: str, args: PriorityTiersArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(component_types.public("PriorityTiers"), name, None,
                         options.formerly(opts, "PriorityTiers"))
        from pulumi_kubernetes.scheduling.v1 import PriorityClass

        given = as_arguments("PriorityTiers", name, args if args is not None else {}, PriorityTiersArgs)
        problems = argument_problems(given, PriorityTiersArgs)
        if problems:
            raise ArgumentsError(f"PriorityTiers {name!r}: ", problems)
        self.classes: dict[str, pulumi_kubernetes.scheduling.v1.PriorityClass] = {}
        for tier in objects.PRIORITY_TIERS:
            m = objects.priority_class(tier)
            self.classes[tier] = PriorityClass(
                f"{name}-{tier}", metadata=m["metadata"], value=m["value"], global_default=m["globalDefault"],
                preemption_policy=m["preemptionPolicy"], description=m["description"],
                opts=options.child(self, opts, **options.kubernetes(given)))
        self.class_names = [names.priority_class(t) for t in self.classes]
        self.register_outputs({"classes": self.class_names})


class TeamQuotaArgs(TypedDict, total=False):
    """What the team may request in its namespace (requests; GPUs are counted whole or per MIG profile)."""

    gpus: int
    """Whole (or time-sliced) GPUs, nvidia.com/gpu (default 0)."""
    mig_slices: dict[str, int]
    """MIG profile -> slices, e.g. {"1g.10gb": 4} (mixed strategy)."""
    cpu: Required[str]
    """CPU the team may request, e.g. "64"."""
    memory: Required[str]
    """Memory the team may request, e.g. 512Gi."""
    pods: int
    """Default 200."""
    persistent_volume_claims: int
    """Default 20."""
    storage: str
    """Requested storage across the team's claims (default 2Ti)."""


class ContainerDefaultsArgs(TypedDict, total=False):
    """Requests given to containers that set none, so every pod counts against the quota."""

    cpu: str
    """Default 250m."""
    memory: str
    """Default 512Mi."""


class TeamModelCacheArgs(TypedDict, total=False):
    """A claim on a ReadWriteMany model cache in the team's namespace."""

    storage_class: Required[pulumi.Input[str]]
    """The cache's StorageClass (a ModelCache's `storageClassName`: the claim then waits until it can bind)."""
    size: str
    """The claim's request (default 1Ti); counted by the team's storage quota."""


class TeamGpuClaimArgs(TypedDict, total=False):
    """A ResourceClaimTemplate in the team's namespace: `count` whole GPUs of one model on one node."""

    gpu: Required[str]
    """The GPU model, a catalog key such as B200."""
    count: Required[int]
    """Whole GPUs the claim asks for on one node."""


class TeamNamespaceArgs(TypedDict, total=False):
    """One team: its namespace, quota and limits, roles, ingress policy and model-cache claim."""

    team: Required[str]
    """The team's name, which is also its namespace's (a DNS label)."""
    quota: Required[TeamQuotaArgs]
    """What the team may request in its namespace."""
    kubernetes_version: Required[str]
    """The cluster's Kubernetes minor, e.g. 1.35 (Pod Security labels pin it)."""
    priority_tier: str
    """critical-inference, standard (default) or preemptible-batch."""
    max_gpus_per_pod: int
    """The most nvidia.com/gpu one pod may request (default: the team's GPU quota)."""
    container_defaults: ContainerDefaultsArgs
    """Requests for containers that set none (default 250m CPU, 512Mi memory)."""
    mig_profiles: list[str]
    """MIG profiles the cluster offers: each is bounded in the quota (at 0 unless migSlices gives some)."""
    prometheus_namespace: str
    """The namespace of the Prometheus that scrapes team pods, let through the ingress policy."""
    model_cache: TeamModelCacheArgs
    """A claim on the model cache in the namespace (none without)."""
    quota_ceiling: dict[str, str]
    """ResourceQuota `hard` entries that replace the quota's where a Kueue queue admits more (a
    Queueing component's `quotaCeilings` for this team)."""
    dra: bool
    """The cluster allocates GPUs by DRA: claimed GPUs (gpu.nvidia.com devices) are bounded in the quota, at
    the team's GPUs when it has gpuClaims, else at 0."""
    gpu_claims: list[TeamGpuClaimArgs]
    """ResourceClaimTemplates for the DRA pools the team may use."""
    compute_domains: list[int]
    """ComputeDomains for multi-node jobs on the UltraServer pools the team may use, by node count (the DRA
    driver's ComputeDomain CRD must be installed: its chart with resources.computeDomains.enabled)."""
    min_cuda: str
    """The CUDA version the team's images are built with, "major.minor" (e.g. "12.8"): recorded on the namespace,
    where `gpu-platform lock` reads it for the pack, which refuses a driver change below it (docs/cuda.md)."""
    cuda_pools: list[str]
    """The pools whose driver must run `min_cuda` (default: every pool)."""
    k8s_provider: pulumi_kubernetes.Provider
    """The cluster's Kubernetes provider (default: the provider the resource options give)."""


class TeamNamespace(pulumi.ComponentResource):
    """Namespace, quota, limits, roles and bindings, ingress policy and the model-cache claim of one team."""

    namespace_name: str
    """The team's namespace."""
    priority_class_name: str
    """The PriorityClass of the team's tier (made by PriorityTiers)."""

    def __init__(self, name: str, args: TeamNamespaceArgs, opts: Optional[pulumi.ResourceOptions] = None):
        self._build(name, team_settings(name, args), opts)

    @classmethod
    def of(cls, name: str, settings: "TeamSettings", opts: Optional[pulumi.ResourceOptions] = None) -> "TeamNamespace":
        """A team the stack file's rules already validated (GpuPlatform's), built as it is: not checked again."""
        component = cls.__new__(cls)
        component._build(name, settings, opts)
        return component

    def _build(self, name: str, settings: "TeamSettings", opts: Optional[pulumi.ResourceOptions]) -> None:
        super().__init__(component_types.public("TeamNamespace"), name, None,
                         options.formerly(opts, "TeamNamespace"))
        from pulumi_kubernetes.core.v1 import LimitRange, Namespace, PersistentVolumeClaim, ResourceQuota
        from pulumi_kubernetes.networking.v1 import NetworkPolicy
        from pulumi_kubernetes.rbac.v1 import Role, RoleBinding

        team, ctx = settings.team, settings.context
        m = objects.team_manifests(ctx, team)
        provider = options.kubernetes({"k8s_provider": settings.k8s_provider})
        self.namespace = Namespace(name, metadata=m["namespace"]["metadata"], opts=options.child(self, opts, **provider))

        def inside(*after: pulumi.Resource) -> pulumi.ResourceOptions:
            return options.child(self, opts, depends_on=[self.namespace, *after], **provider)

        self.quota = ResourceQuota(f"{name}-quota", metadata=m["quota"]["metadata"], spec=m["quota"]["spec"],
                                   opts=inside())
        self.limits = LimitRange(f"{name}-limits", metadata=m["limits"]["metadata"], spec=m["limits"]["spec"],
                                 opts=inside())
        self.network_policy = NetworkPolicy(f"{name}-ingress", metadata=m["ingress"]["metadata"],
                                            spec=m["ingress"]["spec"], opts=inside())
        self.roles, self.bindings = {}, {}
        for r in names.TEAM_ROLES:
            role, binding = m[f"role-{r}"], m[f"binding-{r}"]
            self.roles[r] = Role(f"{name}-{r}", metadata=role["metadata"], rules=role["rules"], opts=inside())
            self.bindings[r] = RoleBinding(
                f"{name}-{r}", metadata=binding["metadata"], role_ref=binding["roleRef"], subjects=binding["subjects"],
                opts=inside(self.roles[r]))
        self.model_cache_claim = None
        if "model-cache" in m:  # after the quota and limits, which count it
            claim = m["model-cache"]
            self.model_cache_claim = PersistentVolumeClaim(
                f"{name}-model-cache", metadata=claim["metadata"], spec=claim["spec"], opts=inside(self.quota, self.limits))
        self.claim_templates = {}
        if ctx.claim_shapes:
            from pulumi_kubernetes.resource.v1 import ResourceClaimTemplate

            for shape in ctx.claim_shapes:
                template = m[f"claim-{shape.name}"]
                self.claim_templates[shape.name] = ResourceClaimTemplate(
                    f"{name}-{shape.name}", metadata=template["metadata"], spec=template["spec"], opts=inside())
        self.compute_domains = {}
        if ctx.domain_shapes:
            from pulumi_kubernetes.apiextensions import CustomResource

            for domain in ctx.domain_shapes:
                cd = m[f"domain-{domain.name}"]
                self.compute_domains[domain.name] = CustomResource(
                    f"{name}-{domain.name}", api_version=cd["apiVersion"], kind=cd["kind"], metadata=cd["metadata"],
                    spec=cd["spec"], opts=inside())
        self.namespace_name = names.team_namespace(team.name)
        self.priority_class_name = names.priority_class(team.priority_tier)
        self.register_outputs({"namespace": self.namespace_name, "priorityTier": team.priority_tier})


@dataclass(frozen=True)
class TeamSettings:
    """What a TeamNamespace builds: the team, validated, and what it reads of its cluster."""

    team: TeamSpec
    context: TeamContext
    k8s_provider: Optional[pulumi.ProviderResource] = None


def team_settings(name: str, args: Mapping[str, Any]) -> TeamSettings:
    """The team and its cluster context from a TeamNamespace's arguments, checked with the stack file's
    team rules (spec/rules_teams.py); ArgumentsError names each argument that is wrong."""
    args = as_arguments("TeamNamespace", name, args, TeamNamespaceArgs)
    where = f"TeamNamespace {name!r}: "
    claims, domains = list(args.get("gpu_claims") or []), list(args.get("compute_domains") or [])
    problems = argument_problems(args, TeamNamespaceArgs)
    problems += [f"{path}: {message}" for path, message in
                 cluster_context_rules(args.get("kubernetes_version"), claims, domains, args.get("dra"))]
    fields: dict[str, Any] = {k: args[k] for k in ("quota", "priority_tier", "max_gpus_per_pod", "container_defaults",
                                                   "min_cuda") if k in args}
    try:
        team = read_part(TeamSpec, {"name": args.get("team"), **fields})
    except SpecError as err:
        named = [moved(p, FieldPath.of("name"), FieldPath.of("team")) for p in err.problems]  # the model's name
        raise ArgumentsError(where, [*problems, *named]) from None
    cache = args.get("model_cache")
    size = (cache or {}).get("size") or "1Ti"
    found = [*name_rules(FieldPath(), team, RESERVED_NAMESPACES, name_field="team"),
             *mig_slice_rules(FieldPath(), team.quota, args.get("mig_profiles")),
             *(cache_claim_rules(FieldPath(), team.quota, size, FieldPath.of("modelCache.size"))
               if cache is not None else ())]
    problems += [f"{path}: {message}" for path, message in found]
    if problems:
        raise ArgumentsError(where, problems)
    shapes = tuple(dict.fromkeys(ClaimShape(dict(c)["gpu"], dict(c)["count"]) for c in claims))
    profiles = args.get("mig_profiles") or list(team.quota.mig_slices)
    ctx = TeamContext(
        str(args.get("kubernetes_version")), tuple(names.mig_resource(p) for p in profiles),
        team.max_gpus_per_pod if team.max_gpus_per_pod is not None else team.quota.gpus,
        args.get("prometheus_namespace"), dict(args.get("quota_ceiling") or {}),
        cache["storage_class"] if cache is not None else None, size,
        bool(args.get("dra", bool(shapes))), shapes, tuple(dict.fromkeys(DomainShape(n) for n in domains)),
        tuple(args["cuda_pools"]) if args.get("cuda_pools") is not None else None)
    return TeamSettings(team, ctx, args.get("k8s_provider"))


class TeamRolesArgs(TypedDict, total=False):
    """The IAM roles of one team's developers and admins."""

    name: Required[str]
    """The team's name (its Kubernetes groups are <name>:developers and <name>:admins)."""
    developer_role_arns: list[str]
    """IAM roles mapped to the team's developers group."""
    admin_role_arns: list[str]
    """IAM roles mapped to the team's admins group."""


class TeamAccessArgs(TypedDict, total=False):
    """Which IAM roles reach which team namespaces of a cluster."""

    cluster_name: Required[pulumi.Input[str]]
    """The EKS cluster the access entries are made in (its name may be an Output)."""
    teams: Required[list[TeamRolesArgs]]
    """Every team with its roles: one access entry per role, holding all its teams' groups."""


class TeamAccess(pulumi.ComponentResource):
    """One EKS access entry per IAM role any team lists, mapping it to the team groups it belongs to."""

    principals: list[str]
    """The IAM role ARNs with an access entry."""

    def __init__(self, name: str, args: TeamAccessArgs, opts: Optional[pulumi.ResourceOptions] = None):
        self._build(name, access_settings(name, args), args["cluster_name"], opts)

    @classmethod
    def of(cls, name: str, teams: list[tuple[str, TeamAccessSpec]], cluster_name: pulumi.Input[str],
           opts: Optional[pulumi.ResourceOptions] = None) -> "TeamAccess":
        """Teams' roles the stack file's rules already validated (GpuPlatform's), built as they are."""
        component = cls.__new__(cls)
        component._build(name, teams, cluster_name, opts)
        return component

    def _build(self, name: str, teams: list[tuple[str, TeamAccessSpec]], cluster_name: pulumi.Input[str],
               opts: Optional[pulumi.ResourceOptions]) -> None:
        super().__init__(component_types.public("TeamAccess"), name, None,
                         options.formerly(opts, "TeamAccess"))
        from pulumi_aws import eks

        self.entries = {
            arn: eks.AccessEntry(names.access_entry_resource(arn), cluster_name=cluster_name, principal_arn=arn,
                                 kubernetes_groups=groups, type="STANDARD", opts=options.child(self, opts))
            for arn, groups in objects.access_entries(teams).items()
        }
        self.principals = list(self.entries)
        self.register_outputs({"principals": self.principals})


def access_settings(name: str, args: Mapping[str, Any]) -> list[tuple[str, TeamAccessSpec]]:
    """Each team's name and roles from TeamAccess's arguments; SpecError names each one that is wrong."""
    args = as_arguments("TeamAccess", name, args, TeamAccessArgs)
    problems = argument_problems(args, TeamAccessArgs)
    teams = []
    for i, given in enumerate(args.get("teams") or []):
        given = dict(given)
        team = given.pop("name", None)
        if not isinstance(team, str) or syntax.namespace(team):
            problem = syntax.namespace(team) if isinstance(team, str) else f"not {syntax.kind_of(team)}"
            problems.append(f"teams[{i}].name: must be a team name (its namespace): {problem}")
        try:
            access = read_part(TeamAccessSpec, given, TEAMS.index(i))
        except SpecError as err:
            problems += err.problems
            continue
        problems += [f"{path}: {message}" for path, message in role_arn_rules(TEAMS.index(i), access)]
        teams.append((str(team), access))
    if problems:
        raise ArgumentsError(f"TeamAccess {name!r}: ", problems)
    return teams
