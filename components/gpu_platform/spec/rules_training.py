"""Spec rules for training pools: zones and EFA, local NVMe, and the datasets file system. Each yields
(field path, what would be valid)."""
from __future__ import annotations

import string
from collections.abc import Iterator, Sequence

from gpu_platform.facts import catalog, names, syntax
from gpu_platform.spec.field_path import NODE_POOLS, FieldPath, Problem
from gpu_platform.spec.models import FsxLustreSpec, NodePoolSpec, PlatformSpec, VpcSpec, quantity_value
from gpu_platform.spec.pool_context import PoolContext


def pool_rules(ctx: PoolContext, at: FieldPath, pool: NodePoolSpec) -> Iterator[Problem]:
    yield from _zone_rules(ctx, at, pool)
    image = pool.ami.image
    if pool.local_storage == "raid0" and not image.local_storage:
        yield (at / "localStorage", f"the instance-store RAID0 is set up on AL2023 and Ubuntu pools; {pool.ami.type} "
               "configures its own storage: use none")


def _zone_rules(ctx: PoolContext, at: FieldPath, pool: NodePoolSpec) -> Iterator[Problem]:
    if pool.zones is None:
        return
    vpc, known = ctx.vpc, ctx.subnet_zones
    if vpc is None and known is None:
        yield (at / "zones", "applies to a VPC this stack creates (or subnets whose zones are given); on existing "
               "subnets a pool uses them all (an EFA pool the first listed)")
        return
    if pool.efa and len(pool.zones) > 1:
        yield (at / "zones", f"an EFA pool runs in one cluster placement group, and a placement group lives in one "
               f"availability zone: list one zone, not {len(pool.zones)}")
    if len(set(pool.zones)) != len(pool.zones):
        yield at / "zones", "lists a zone twice"
    if vpc is not None:
        yield from _vpc_zone_rules(at, pool.zones, vpc)
    elif known is not None:
        unknown = [z for z in pool.zones if z not in known]
        if unknown:
            yield at / "zones", f"{', '.join(unknown)} not among the subnets' zones ({', '.join(known)})"


def _vpc_zone_rules(at: FieldPath, zones: Sequence[str], vpc: VpcSpec) -> Iterator[Problem]:
    """A pool's zones on a VPC this stack creates: the VPC's zones, or Local Zones it reaches."""
    local = [z for z in zones if syntax.is_local_zone(z)]
    for z in local:
        if z not in (vpc.local_zones or []):
            yield (at / "zones", f"{z} is a Local Zone the VPC does not reach: list it in "
                   "cluster.create.vpc.localZones, which gives the VPC a subnet there")
    if vpc.zones is not None:
        unknown = [z for z in zones if z not in vpc.zones and z not in local]
        if unknown:
            yield at / "zones", f"{', '.join(unknown)} not in cluster.create.vpc.zones ({', '.join(vpc.zones)})"
        return
    letters = string.ascii_lowercase[:vpc.availability_zones]
    for z in zones:
        if z in local:
            continue
        if syntax.zone(z) or z[-1] not in letters:
            yield (at / "zones", f"{z!r} is not one of the VPC's zones: <region>{letters[0]} to "
                   f"<region>{letters[-1]} ({vpc.availability_zones} availabilityZones)")


def efa_rules(spec: PlatformSpec) -> Iterator[Problem]:
    if any(p.efa for p in spec.node_pools) and spec.efa_device_plugin.chart_version not in catalog.EFA_DEVICE_PLUGIN_VALUES:
        yield (FieldPath.of("efaDevicePlugin.chartVersion"),
               f"must be one of {', '.join(catalog.EFA_DEVICE_PLUGIN_VALUES)} (the chart versions whose values are checked)")


def efa_instance_types() -> str:
    return ", ".join(sorted(t for t, it in catalog.INSTANCE_TYPES.items() if it.efa_interfaces))


# --- the datasets file system ---

def datasets_rules(spec: PlatformSpec) -> Iterator[Problem]:
    fsx = spec.datasets.fsx_lustre
    if fsx is None:
        return
    at = FieldPath.of("datasets.fsxLustre")
    yield from file_system_rules(fsx, spec.prod, at)
    team_names = [t.name for t in spec.teams]
    for j, team in enumerate(fsx.teams or []):
        if team not in team_names:
            yield (at / "teams").index(j), f"unknown team {team!r}; teams: {', '.join(team_names) or 'none'}"
    if fsx.shared == names.DATASETS_TEAMS_DIR:
        yield at / "shared", f"{names.DATASETS_TEAMS_DIR!r} holds the team directories; name the shared area otherwise"
    claiming = [t for t in team_names if fsx.teams is None or t in fsx.teams]
    links = len(claiming) + int(bool(fsx.shared))
    if fsx.data_repository is not None and links > catalog.FSX_LUSTRE_MAX_DATA_REPOSITORY_ASSOCIATIONS:
        yield (at / "dataRepository", f"each claiming team's directory{' and the shared area' if fsx.shared else ''} "
               f"links to S3 through its own data repository association: {links} needed, FSx allows "
               f"{catalog.FSX_LUSTRE_MAX_DATA_REPOSITORY_ASSOCIATIONS} per file system; list fewer teams in "
               f"{at / 'teams'} or leave the S3 link out")
    for i, pool in enumerate(spec.node_pools):
        if not pool.ami.image.lustre_client:
            yield (NODE_POOLS.index(i) / "ami.type", f"{pool.ami.type} nodes cannot mount the datasets file system "
                   "(the Lustre client is installed at boot on AL2023 and Ubuntu pools)")


def file_system_rules(fsx: FsxLustreSpec, prod: bool, at: FieldPath) -> Iterator[Problem]:
    """The FSx for Lustre file system itself: a pinned CSI add-on, a size, throughput and deployment FSx
    accepts, durable in prod, an S3 link only where FSx offers one."""
    kind = catalog.FSX_LUSTRE_DEPLOYMENTS[fsx.deployment_type]
    if fsx.addon_version is None:
        yield at / "addonVersion", f"pin the {catalog.FSX_CSI_ADDON} add-on version (e.g. v1.6.0-eksbuild.1)"
    size = fsx.storage_capacity_gib
    if size not in catalog.FSX_LUSTRE_CAPACITY_GIB and size % catalog.FSX_LUSTRE_CAPACITY_STEP_GIB:
        yield (at / "storageCapacityGiB", f"{size} is not a valid size: 1200, 2400, or a multiple of "
               f"{catalog.FSX_LUSTRE_CAPACITY_STEP_GIB} GiB")
    if quantity_value(fsx.claim_size) > size * 2**30:
        yield at / "claimSize", f"must be <= storageCapacityGiB ({size}Gi): a claim binds to a volume of that size"
    if fsx.throughput_per_tib is not None and fsx.throughput_per_tib not in kind.throughputs:
        allowed = ", ".join(map(str, kind.throughputs)) or "none (scratch file systems have a fixed throughput)"
        yield at / "throughputPerTiB", f"{fsx.deployment_type} takes {allowed}"
    if not kind.persistent:
        if fsx.kms_key_arn:
            yield (at / "kmsKeyArn",
                   f"{fsx.deployment_type} is encrypted with the FSx service key; use a PERSISTENT type")
        if prod:
            yield (at / "deploymentType", f"{fsx.deployment_type} loses its data when a file server fails; prod "
                   "needs PERSISTENT_2 (or PERSISTENT_1)")
    if fsx.data_repository is not None and not kind.data_repository_associations:
        linked = ", ".join(k for k, d in catalog.FSX_LUSTRE_DEPLOYMENTS.items() if d.data_repository_associations)
        yield (at / "dataRepository", f"{fsx.deployment_type} file systems cannot link an S3 data repository; "
               f"deploymentType must be one of {linked}")

