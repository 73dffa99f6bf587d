"""Cross-field rules of the stack spec: everything decidable from the file and the facts alone.

Each rule yields (field path, message): the path a user must edit, and what would be valid there. Rules
that need a decision (team quotas against pool capacity, Kueue's placement, datasets claims) run above
those decisions, in decisions/validation.py, which also runs these: one call for the program and the planner.
"""
from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from datetime import date
from collections.abc import Iterable, Iterator, Sequence
from typing import Optional

from gpu_platform.facts import catalog, names, syntax
from gpu_platform.facts.lifecycle_calendar import ami_driver_era, release_minor
from gpu_platform.facts.mig import layout_problem
from gpu_platform.spec import rules_training as training
from gpu_platform.spec.alerting import alerting_rules
from gpu_platform.spec.field_path import (
    CLUSTER, CLUSTER_VERSION, GPU_OPERATOR, NODE_POOLS, REGION, TEAMS, FieldPath, Problem,
)
from gpu_platform.spec.models import (
    ADDON_VERSION, ClusterSpec, CreateClusterSpec, GpuOperatorSpec, GpuPool, NodePoolSpec, PlatformSpec, VpcSpec,
)
from gpu_platform.spec.pool_context import PoolContext
from gpu_platform.spec.acceptance import acceptance_rules
from gpu_platform.spec.repair import repair_rules
from gpu_platform.spec.rules_capacity import platform_rules as reservation_rules
from gpu_platform.spec.rules_capacity import pool_rules as capacity_rules
from gpu_platform.spec.rules_dra import pool_rules as dra_rules
from gpu_platform.spec.rules_karpenter import ami_rules as karpenter_ami_rules
from gpu_platform.spec.rules_karpenter import rules as karpenter_rules
from gpu_platform.spec.rules_teams import ROLE_ARN, cache_claim_rules
from gpu_platform.spec.rules_ultraserver import platform_rules as ultraserver_platform_rules
from gpu_platform.spec.rules_ultraserver import pool_rules as ultraserver_rules
from gpu_platform.spec.rules_kubelet import kubelet_rules
from gpu_platform.spec.rules_warm import warm_rules

# Label prefixes pool labels may not use: the platform's, NVIDIA's and EKS's own, and Kubernetes' reserved
# domains with their subdomains (kubelet refuses such labels at registration).
RESERVED_LABEL_DOMAINS = (names.NVIDIA_DOMAIN, f"{names.DOMAIN}/", "k8s.amazonaws.com/", "eks.amazonaws.com/",
                          *(f"{d}/" for d in syntax.RESERVED_DOMAINS))


@dataclass(frozen=True)
class Findings:
    problems: list[Problem]
    pools_valid: bool  # every pool passed: rules that place work on the pools' capacity may run


def check(spec: PlatformSpec, today: date) -> Findings:
    problems = [*_cluster_rules(spec), *_duplicate_rules(spec), *reservation_rules(spec), *ultraserver_platform_rules(spec),
                *_model_cache_rules(spec), *_access_rules(spec),
                *_pricing_rules(spec), *_pool_alert_rules(spec), *repair_rules(spec), *alerting_rules(spec), *training.efa_rules(spec),
                *training.datasets_rules(spec)]
    pool_problems = [p for pool in spec.node_pools for p in pool_rules(PoolContext.of(spec, pool, today), pool)]
    pool_problems += karpenter_rules(spec)
    problems += pool_problems
    if all(gpu_known(p) for p in spec.node_pools):  # rules below look each pool's GPU up
        problems += [*_driver_rules(spec, today), *_mig_strategy_rules(spec)]
    return Findings(problems, pools_valid=not pool_problems)


def _pricing_rules(spec: PlatformSpec) -> Iterator[Problem]:
    """Price overrides must be usable: a typo in an instance type would silently keep the catalog price."""
    p = spec.pricing
    used = {t for pool in spec.node_pools for t in pool.instance_types}
    if spec.cluster.create is not None:
        used.update(spec.cluster.create.system_nodes.instance_types)
    known = set(catalog.INSTANCE_TYPES) | set(catalog.SYSTEM_INSTANCE_PRICES) | used
    for field, prices in (("spotDiscounts", p.spot_discounts), ("onDemandUsdPerHour", p.on_demand_usd_per_hour),
                          ("capacityBlockUsdPerHour", p.capacity_block_usd_per_hour)):
        for itype, value in prices.items():
            at = FieldPath.of("pricing").field(field).key(itype)
            if itype not in known:
                yield at, "names no catalog instance type and none this stack uses"
            elif field == "spotDiscounts" and not 0 <= value < 1:
                yield at, "must be a fraction off on-demand, >= 0 and < 1 (0.6 = 60% off)"
            elif field != "spotDiscounts" and value <= 0:
                yield at, "must be a positive price in USD per hour"


def gpu_known(pool: GpuPool) -> bool:
    """The pool's instance types are all in the catalog and share one GPU model and count."""
    known = [catalog.INSTANCE_TYPES[t] for t in pool.instance_types if t in catalog.INSTANCE_TYPES]
    return len(known) == len(pool.instance_types) and len({(it.gpu, it.gpu_count) for it in known}) == 1


def _cluster_rules(spec: PlatformSpec) -> Iterator[Problem]:
    yield from cluster_rules(spec.cluster, prod=spec.prod)


def cluster_rules(c: ClusterSpec, at: FieldPath = CLUSTER, prod: bool = False) -> Iterator[Problem]:
    """The cluster block: a supported version, created or adopted, pinned add-ons and system nodes, and in
    prod an API endpoint closed to the internet. `at` is the block's path (a Cluster component's arguments
    are the `create` block, flattened at the root: paths say so)."""
    create_at = at / "create" if at == CLUSTER else at
    if c.kubernetes_version not in catalog.KUBERNETES_VERSIONS:
        yield at / "kubernetesVersion", f"must be one of {', '.join(catalog.KUBERNETES_VERSIONS)}"
    if (c.create is None) == (c.existing is None):
        yield CLUSTER, "set exactly one of `create` (a new cluster) or `existing` (adopt one by name)"
    for j, arn in enumerate(c.admin_role_arns):
        if not re.fullmatch(ROLE_ARN, arn):
            yield (at / "adminRoleArns").index(j), "must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)"
    if c.create is None:
        if c.admin_role_arns:
            yield (at / "adminRoleArns", "applies to clusters this stack creates; grant access on an adopted "
                   "cluster where it is managed")
        return
    if (c.create.vpc is None) == (c.create.subnet_ids is None):
        yield (create_at or create_at / "vpc",
               "set exactly one of `vpc` (create a VPC) or `subnetIds` (use existing subnets)")
    missing = [a for a in catalog.CORE_ADDONS if a not in c.create.addons]
    if missing:
        yield create_at / "addons", f"pin every core add-on; missing: {', '.join(missing)}"
    for addon, version in c.create.addons.items():
        if addon not in (*catalog.CORE_ADDONS, *catalog.OPTIONAL_ADDONS):
            allowed = ", ".join((*catalog.CORE_ADDONS, *catalog.OPTIONAL_ADDONS))
            yield create_at / "addons" / addon, f"unknown add-on; allowed: {allowed}"
        elif not re.fullmatch(ADDON_VERSION, version):
            yield create_at / "addons" / addon, "must be an exact add-on version such as v1.20.4-eksbuild.1"
    sys_nodes = c.create.system_nodes
    if sys_nodes.min_size > sys_nodes.max_size:
        yield create_at / "systemNodes.minSize", f"must be <= maxSize ({sys_nodes.max_size})"
    if not sys_nodes.release_version.startswith(c.kubernetes_version + "."):
        yield (create_at / "systemNodes.releaseVersion",
               f"must be an AMI release for Kubernetes {c.kubernetes_version} (e.g. {c.kubernetes_version}.5-20251120)")
    vpc = c.create.vpc
    if vpc is not None and vpc.zones is not None and len(vpc.zones) != vpc.availability_zones:
        yield create_at / "vpc.zones", f"lists {len(vpc.zones)} zones but availabilityZones is {vpc.availability_zones}"
    if vpc is not None:
        yield from local_zone_rules(vpc, create_at / "vpc")
    yield from endpoint_rules(c.create, create_at, prod)


def local_zone_rules(vpc: VpcSpec, at: FieldPath) -> Iterator[Problem]:
    """The cluster's own subnets are in Availability Zones (EKS places no cluster subnet in a Local Zone); a
    Local Zone is listed apart, and only one the catalog knows Capacity Blocks in."""
    for j, z in enumerate(vpc.zones or []):
        if syntax.is_local_zone(z):
            yield ((at / "zones").index(j), f"{z} is a Local Zone, where EKS places no cluster subnet: list it under "
                   f"{at / 'localZones'} (node groups only)")
    known = catalog.local_zones_with_blocks()
    for j, z in enumerate(vpc.local_zones or []):
        if not syntax.is_local_zone(z):
            yield (at / "localZones").index(j), f"{z} is an Availability Zone: list it under {at / 'zones'}"
        elif z not in known:
            yield ((at / "localZones").index(j), f"the catalog knows Capacity Blocks in {', '.join(known)} only: a "
                   f"subnet in {z} would serve no pool")


def endpoint_rules(create: CreateClusterSpec, create_at: FieldPath, prod: bool) -> Iterator[Problem]:
    """The public API endpoint in prod: never the whole internet (the default when `publicAccessCidrs` is
    left out is 0.0.0.0/0, so prod must list its networks or close the endpoint). The field's type has
    already held each entry to an IPv4 network."""
    field = create_at / "publicAccessCidrs"
    if not prod or not create.endpoint_public_access:
        return
    fix = (f"list the networks that may reach it (your office or VPN egress), e.g. publicAccessCidrs: "
           f"[203.0.113.0/24], or set {create_at / 'endpointPublicAccess'}: false and reach the API from inside "
           "the VPC")
    if "public_access_cidrs" not in create.model_fields_set:
        yield field, ("left out, it opens the public API endpoint to the whole internet (EKS's default 0.0.0.0/0), "
                      f"which prod refuses: {fix}")
        return
    for j, net in enumerate(map(ipaddress.IPv4Network, create.public_access_cidrs)):
        if net.prefixlen == 0:
            yield (field.index(j),
                   f"{net} opens the public API endpoint to the whole internet, which prod refuses: {fix}")


def region_rules(region: object, zones: Iterable[tuple[FieldPath, str]]) -> Iterator[Problem]:
    """The stack's region (`aws:region`: config beside the platform object, read by the planner and the
    program) and every zone the file names: a zone of that region. `zones` are (field path, zone name)."""
    if region is None:
        return
    if not isinstance(region, str):
        yield REGION, f"must be a region name, not {syntax.kind_of(region)}"
        return
    problem = syntax.region(region)
    if problem:
        yield REGION, problem
        return
    for path, zone in zones:
        problem = syntax.zone(zone, region)
        if problem:
            yield path, problem


_SNAKE = {"zones": "zones", "localZones": "local_zones"}


def named_zones(spec: PlatformSpec) -> list[tuple[FieldPath, str]]:
    """(field path, zone) of every zone the stack file names: the VPC's and the pools'."""
    vpc = spec.cluster.create.vpc if spec.cluster.create else None
    found = [(CLUSTER.field("create.vpc").field(key).index(j), z) for key in ("zones", "localZones")
             for j, z in enumerate(getattr(vpc, _SNAKE[key]) or [])] if vpc else []
    return found + [(NODE_POOLS.index(i).field("zones").index(j), z)
                    for i, p in enumerate(spec.node_pools) for j, z in enumerate(p.zones or [])]


def _duplicate_rules(spec: PlatformSpec) -> Iterator[Problem]:
    for at, listed in ((NODE_POOLS, [p.name for p in spec.node_pools]), (TEAMS, [t.name for t in spec.teams])):
        seen: dict[str, int] = {}
        for i, name in enumerate(listed):
            if name in seen:
                yield at.index(i) / "name", f"duplicate name {name!r} (also {at.index(seen[name])})"
            seen.setdefault(name, i)


def _pool_alert_rules(spec: PlatformSpec) -> Iterator[Problem]:
    """A pool's memory warning stays below its critical threshold, either taken from monitoring.alerts."""
    limits = spec.pool_memory_limits()
    for i, pool in enumerate(spec.node_pools):
        warning, critical = limits.get(pool.name, (0.0, 100.0))
        at = FieldPath.of("nodePools").index(i)
        if warning >= critical:
            yield (at.field("alerts"), f"memoryUsedPercent ({warning:g}) must be below memoryCriticalPercent "
                   f"({critical:g}; either may come from monitoring.alerts)")


def pool_rules(ctx: PoolContext, pool: NodePoolSpec) -> Iterator[Problem]:
    """One pool's rules, in the context of its cluster (the stack file's, or a pool component's arguments)."""
    at = ctx.at
    yield from gpu_shape_rules(at, pool)
    if not gpu_known(pool):
        return
    if pool.name == names.SYSTEM_ROLE:
        yield at / "name", f"{names.SYSTEM_ROLE!r} is the system node group's name; choose another pool name"
    if pool.min_size > pool.max_size:
        yield at / "minSize", f"must be <= maxSize ({pool.max_size})"
    if ctx.cluster_name is not None and len(ctx.cluster_name) + 1 + len(pool.name) > catalog.EKS_NODE_GROUP_NAME_MAX:
        yield at / "name", f"cluster name + '-' + pool name must fit {catalog.EKS_NODE_GROUP_NAME_MAX} characters"
    if pool.efa and any(it.efa_interfaces == 0 for it in pool.instances):
        no_efa = [it.name for it in pool.instances if it.efa_interfaces == 0]
        yield at / "efa", f"{', '.join(no_efa)} have no EFA; EFA instance types: {training.efa_instance_types()}"
    if pool.critical and pool.capacity_type == "spot":
        yield at / "capacityType", "a critical pool must be on-demand (spot capacity can be reclaimed at any time)"
    for j, taint in enumerate(pool.taints):
        if taint.key == names.GPU_TAINT_KEY:
            yield at.field("taints").index(j).field("key"), f"{names.GPU_TAINT_KEY} is always set on GPU pools; list only extra taints"
        if taint.key == names.ACCEPTANCE_TAINT_KEY:
            yield (at.field("taints").index(j).field("key"), f"{names.ACCEPTANCE_TAINT_KEY} is the acceptance gate's "
                   "startup taint, set from nodePools[].acceptance; remove it here")
    for key in pool.labels:
        if key.startswith(RESERVED_LABEL_DOMAINS) or syntax.reserved_domain(key):
            yield (at / "labels", f"{key!r} is managed by the platform or Kubernetes; reserved prefixes: "
                   f"{', '.join(RESERVED_LABEL_DOMAINS)} (and subdomains of {' and '.join(syntax.RESERVED_DOMAINS)})")
    yield from _ami_rules(ctx, at, pool)
    yield from sharing_rules(at, pool)
    yield from training.pool_rules(ctx, at, pool)
    yield from capacity_rules(ctx, pool)
    yield from dra_rules(ctx, pool)
    yield from ultraserver_rules(ctx, pool)
    yield from kubelet_rules(at, pool)
    yield from warm_rules(at, pool)
    yield from acceptance_rules(at, pool)


def gpu_shape_rules(at: FieldPath, pool: GpuPool) -> Iterator[Problem]:
    """The pool's instance types: known GPU instances, listed once, all of one GPU model and count."""
    unknown = [j for j, t in enumerate(pool.instance_types) if t not in catalog.INSTANCE_TYPES]
    for j in unknown:
        yield (at.field("instanceTypes").index(j),
               f"unknown GPU instance type {pool.instance_types[j]!r}; known: {', '.join(catalog.INSTANCE_TYPES)}")
    if unknown:
        return
    if len(set(pool.instance_types)) != len(pool.instance_types):
        yield at / "instanceTypes", "lists an instance type twice"
    shapes = {(it.gpu, it.gpu_count) for it in pool.instances}
    if len(shapes) > 1:
        found = ", ".join(f"{t} ({it.gpu_count} x {it.gpu})"
                          for t, it in zip(pool.instance_types, pool.instances, strict=True))
        yield (at / "instanceTypes",
               f"every instance type in a pool needs the same GPU model and count (the autoscaler sizes the "
               f"group from the first one); found {found}")


def _ami_rules(ctx: PoolContext, at: FieldPath, pool: NodePoolSpec) -> Iterator[Problem]:
    image, source = pool.ami.image, ctx.driver_source
    if not image.supported:
        yield at / "ami.type", f"{image.key} is not supported: {image.note}"
        return
    for it in pool.instances:
        if image.key not in it.ami_types:
            yield at / "ami.type", f"{it.name} does not run {image.key}; it runs {', '.join(it.ami_types)}"
    if image.driver_owner == "ami":
        yield from ami_driver_rules(at, pool)
    if image.driver_owner != source:
        if source == "operator":
            yield (at / "ami.type", f"{image.key} ships its own NVIDIA driver; with gpuOperator.driver.source "
                   "operator every GPU pool must use UBUNTU_22_04 or UBUNTU_24_04 (NVIDIA supports operator drivers "
                   "on EKS only on Ubuntu)")
        else:
            yield (at / "ami.type", f"{image.key} has no NVIDIA driver; with gpuOperator.driver.source ami use "
                   "AL2023_x86_64_NVIDIA or BOTTLEROCKET_x86_64_NVIDIA, or set source: operator")
    if pool.provisioner == "karpenter":
        yield from karpenter_ami_rules(at, pool)
        return
    if image.eks_ami_type == "CUSTOM":
        if pool.ami.image_id is None:
            yield at / "ami.imageId", f"pin the {image.key} EKS image id (ami-...); look it up at {image.ssm_parameter}"
        if pool.ami.release_version is not None:
            yield at / "ami.releaseVersion", "applies to EKS-optimized AMI types only; Ubuntu pools pin imageId"
    else:
        if pool.ami.image_id is not None:
            yield at / "ami.imageId", f"{image.key} is selected by releaseVersion; imageId is for Ubuntu pools"
        yield from _release_rules(at, pool, ctx.kubernetes_version)


def _release_rules(at: FieldPath, pool: NodePoolSpec, k8s: Optional[str]) -> Iterator[Problem]:
    """A node group's EKS release: Bottlerocket's own release and build (its variant follows the cluster's
    minor), else the Kubernetes version and the build date."""
    release, bottlerocket = pool.ami.release_version, pool.ami.image.os == "bottlerocket"
    example = "1.63.0-18d04e52" if bottlerocket else f"{k8s or '1.35'}.5-20251120"
    if release is None:
        yield (at / "ami.releaseVersion", f"pin the AMI release (e.g. {example}): it fixes the driver branch, and "
               "'latest' replaces nodes whenever AWS publishes an AMI")
    elif bottlerocket:
        return
    elif not re.match(r"^\d+\.\d+\.\d+-\d{8}$", release):
        yield (at / "ami.releaseVersion",
               f"{release} is not an EKS AMI release: <kubernetes>.<patch>-<YYYYMMDD>, e.g. {example}")
    elif k8s is not None and not release.startswith(k8s + "."):
        yield at / "ami.releaseVersion", f"{release} is not a release for Kubernetes {k8s}"


def sharing_rules(at: FieldPath, pool: GpuPool) -> Iterator[Problem]:
    # A pool as Kueue reads it has no image: what its image allows is checked where its nodes are made.
    s, gpu, ami = pool.sharing, pool.gpu, getattr(pool, "ami", None)
    image = ami.image if ami is not None else None
    if s.mode != "time-slicing" and s.replicas is not None:
        yield at / "sharing.replicas", "applies to mode time-slicing only"
    if s.mode != "mig" and (s.layout is not None or s.strategy is not None):
        yield at / "sharing.layout", "layout and strategy apply to mode mig only"
    if s.mode != "none" and image is not None and not image.operator_device_plugin:
        yield at / "sharing.mode", f"{image.key} runs its own device plugin; GPU sharing is configured for AL2023 and Ubuntu pools only"
        return
    if s.mode == "time-slicing" and s.replicas is None:
        yield at / "sharing.replicas", "time-slicing needs replicas (>= 2 pods per GPU)"
    if s.mode != "mig":
        return
    if not gpu.mig_capable:
        capable = sorted({it.name for it in catalog.INSTANCE_TYPES.values() if it.gpu_model.mig_capable})
        yield at / "sharing.mode", f"{gpu.key} has no MIG; MIG-capable instance types: {', '.join(capable)}"
        return
    if image is not None and not image.operator_mig:
        yield at / "sharing.mode", f"MIG through the GPU Operator is not supported on {image.key}"
    if not s.layout:
        yield at / "sharing.layout", f"give the MIG layout of one GPU, e.g. {{\"{next(iter(gpu.mig_profiles))}\": 7}}"
        return
    problem = layout_problem(gpu, s.layout)
    if problem:
        yield at / "sharing.layout", f"does not fit one {gpu.key}: {problem}"
    elif (s.strategy or "mixed") == "single" and len([n for n in s.layout.values() if n]) != 1:
        yield at / "sharing.strategy", "single exposes slices as nvidia.com/gpu and needs one profile per GPU; use mixed"


def _driver_rules(spec: PlatformSpec, today: date) -> Iterator[Problem]:
    yield from driver_rules(spec.gpu_operator, spec.node_pools, spec.cluster.kubernetes_version, spec.prod, today)


def driver_rules(op: GpuOperatorSpec, pools: Sequence[GpuPool], kubernetes_version: Optional[str], prod: bool,
                 today: date, *, at: FieldPath = GPU_OPERATOR, pools_at: FieldPath = NODE_POOLS,
                 k8s_at: FieldPath = CLUSTER_VERSION) -> Iterator[Problem]:
    """The operator's chart and driver: a chart version the catalog checks, an exact driver it supports on
    this Kubernetes version, new enough for every pool's GPUs and MIG profiles, not past end of life in prod."""
    chart = catalog.GPU_OPERATOR_CHARTS.get(op.chart_version)
    if chart is None:
        yield at / "chartVersion", f"must be one of {', '.join(catalog.GPU_OPERATOR_CHARTS)}"
        return
    drv = op.driver
    if drv.source == "ami":
        if drv.version is not None:
            yield at / "driver.version", "the AMI owns the driver; pin ami.releaseVersion on pools instead"
        return
    if drv.version is None:
        yield (at / "driver.version",
               f"pin an exact driver; {chart.version} supports {', '.join(chart.supported_drivers)}")
        return
    if kubernetes_version is not None and kubernetes_version not in chart.kubernetes_versions:
        yield (k8s_at, f"operator-owned drivers on EKS are supported on Kubernetes "
               f"{', '.join(chart.kubernetes_versions)}")
    if drv.version not in chart.supported_drivers:
        yield (at / "driver.version",
               f"{drv.version} is not supported by gpu-operator {chart.version}; choose one of {', '.join(chart.supported_drivers)}")
    for i, pool in enumerate(pools):
        for need in driver_shortfalls(pool, drv.version, f" ({pools_at.index(i)})"):
            yield at / "driver.version", need
    branch = catalog.DRIVER_BRANCHES.get(catalog.driver_branch(drv.version))
    if prod and branch is not None and branch.eol < today:
        yield (at / "driver.version",
               f"branch R{branch.branch} reached end of life on {branch.eol}; prod needs a supported branch")


def driver_shortfalls(pool: GpuPool, version: str, where: str = "") -> Iterator[str]:
    """What an operator-owned driver `version` is too old for on this pool: its GPU, its MIG profiles."""
    key, gpu = catalog.version_key(version), pool.gpu
    if key < catalog.version_key(gpu.min_driver):
        yield f"{gpu.key}{where} needs driver >= {gpu.min_driver}"
    for profile in (pool.sharing.layout or {}) if pool.sharing.mode == "mig" else {}:
        need = gpu.profile_min_driver.get(profile)
        if need and key < catalog.version_key(need):
            yield f"MIG profile {profile} on {gpu.key}{where} needs driver >= {need}"


def ami_driver_rules(at: FieldPath, pool: NodePoolSpec) -> Iterator[Problem]:
    """An AMI-owned driver: the branch the pinned AMI release runs on each instance type must be new enough for
    the pool's GPU and its MIG profiles (the lifecycle calendar's AMI eras; a release it cannot place is not
    judged, the plan's lifecycle section says so)."""
    pin, fld = (pool.ami.alias, "alias") if pool.ami.alias else (pool.ami.release_version, "releaseVersion")
    era = ami_driver_era(pool.ami.image.eks_ami_type, pin or "")
    if era is None:
        return
    gpu = pool.gpu
    floors = [(gpu.min_driver, gpu.key)]
    for profile in (pool.sharing.layout or {}) if pool.sharing.mode == "mig" else {}:
        if gpu.profile_min_driver.get(profile):
            floors.append((gpu.profile_min_driver[profile], f"MIG profile {profile} on {gpu.key}"))
    minor = release_minor(pin or "")
    newer = [e for e in catalog.AMI_DRIVER_ERAS
             if e.ami_type == era.ami_type and e.first_release > era.first_release and e.covers(minor)]
    for family in dict.fromkeys(it.family for it in pool.instances):
        branch = era.branch_for(family)
        for need, what in floors:
            if branch and int(branch) < int(catalog.driver_branch(need)):
                fix = next((f"; releases from {e.first_release:%Y%m%d} carry R{e.branch_for(family)}" for e in newer
                            if int(e.branch_for(family) or 0) >= int(catalog.driver_branch(need))), "")
                yield (at.field("ami").field(fld), f"{pin} runs NVIDIA driver R{branch} on {family}; {what} needs driver >= "
                       f"{need} (R{catalog.driver_branch(need)}): pin a newer AMI release{fix}")


def _mig_strategy_rules(spec: PlatformSpec) -> Iterator[Problem]:
    yield from mig_strategy_rules(spec.node_pools)


def mig_strategy_rules(pools: Sequence[GpuPool], pools_at: FieldPath = NODE_POOLS) -> Iterator[Problem]:
    mig = [(i, p) for i, p in enumerate(pools) if p.sharing.mode == "mig"]
    strategies = {p.sharing.strategy or "mixed" for _, p in mig}
    if len(strategies) > 1:
        i = mig[-1][0]
        yield (pools_at.index(i) / "sharing.strategy",
               "the MIG strategy is cluster-wide: use the same strategy on every MIG pool")


def _model_cache_rules(spec: PlatformSpec) -> Iterator[Problem]:
    cache = spec.model_cache
    if not cache.enabled:
        return
    if cache.addon_version is None:
        yield (FieldPath.of("modelCache.addonVersion"), f"pin the {catalog.EFS_CSI_ADDON} add-on version when the "
               "cache is enabled (e.g. v2.1.13-eksbuild.1)")
    for i, team in enumerate(spec.teams):  # each team's cache claim is counted by its own quota
        yield from cache_claim_rules(TEAMS.index(i), team.quota, cache.pvc_size, FieldPath.of("modelCache.pvcSize"))


def _access_rules(spec: PlatformSpec) -> Iterator[Problem]:
    admins = set(spec.cluster.admin_role_arns)
    for i, team in enumerate(spec.teams):
        for role_field, arns in (("developerRoleArns", team.access.developer_role_arns),
                                 ("adminRoleArns", team.access.admin_role_arns)):
            for j, arn in enumerate(arns):
                if arn in admins:
                    yield ((TEAMS.index(i) / "access" / role_field).index(j), "is a cluster admin "
                           "(cluster.adminRoleArns); an IAM role has one access entry per cluster, so list it in one "
                           "place")
