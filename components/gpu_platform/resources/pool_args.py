"""What a GPU pool component is given, and how it is checked: the pool's settings and its cluster's, as
typed dictionaries of plain values and Pulumi Inputs (the schema other Pulumi languages see).

A pool component reads its arguments into the stack file's own pool model and runs the very rules the
stack file's pools pass (spec/rules.py), so a MIG layout that does not fit is refused by the node pool
alone, naming the argument. Field paths in problems use the schema's (camelCase) names.
"""
from typing import TYPE_CHECKING, Any, Mapping, Optional

import pulumi

from gpu_platform.facts.karpenter_window import window_problem
from gpu_platform.resources.typed_args import ENVIRONMENTS, Required, TypedDict, camel, syntax_problems
from gpu_platform.spec.errors import SpecError
from gpu_platform.spec.models import DisruptionWindowSpec, NodePoolSpec
from gpu_platform.spec.parse import read_part
from gpu_platform.spec.pool_context import PoolContext
from gpu_platform.spec.repair import pool_repair_rules
from gpu_platform.spec.rules import driver_shortfalls, gpu_known, pool_rules
from gpu_platform.spec.rules_karpenter import pool_rules as karpenter_pool_rules

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec

DRIVER_SOURCES = ("ami", "operator")
MIG_STRATEGIES = ("none", "single", "mixed")


class PoolAmiArgs(TypedDict, total=False):
    """The image a pool's nodes boot: an EKS AMI type pinned to a release, or an image id."""

    type: Required[str]
    """EKS AMI type, e.g. AL2023_x86_64_NVIDIA, BOTTLEROCKET_x86_64_NVIDIA, UBUNTU_24_04."""
    release_version: str
    """The exact AMI release of an EKS-optimized type, e.g. 1.35.7-20260911."""
    image_id: str
    """The exact image of an Ubuntu pool (ami-...)."""
    alias: str
    """Karpenter pools: the exact EKS AMI alias, e.g. al2023@v20260911."""


class PoolSharingArgs(TypedDict, total=False):
    """How the pool's GPUs are shared between pods."""

    mode: str
    """none, time-slicing or mig."""
    replicas: int
    """Time-slicing: pods per GPU (2-64)."""
    fail_requests_greater_than_one: bool
    """Time-slicing: refuse pods asking for more than one shared GPU (default true)."""
    strategy: str
    """MIG: single or mixed (the GPU Operator's strategy is cluster-wide)."""
    layout: dict[str, int]
    """MIG: profile -> instances on every GPU, e.g. {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}."""


class PoolTaintArgs(TypedDict, total=False):
    """A taint the pool's nodes carry besides the GPU taint."""

    key: Required[str]
    value: str
    effect: Required[str]
    """NoSchedule, PreferNoSchedule or NoExecute."""


class PoolRepairOverrideArgs(TypedDict):
    """What EKS does for one node condition and reason the node monitoring agent reports."""

    condition: str
    reason: str
    wait_minutes: int
    action: str


class PoolRepairArgs(TypedDict, total=False):
    """EKS node auto repair of the pool's nodes."""

    enabled: bool
    max_unhealthy_nodes: int
    max_unhealthy_percent: int
    max_parallel_repairs: int
    max_parallel_percent: int
    overrides: list[PoolRepairOverrideArgs]


class KarpenterSettingsArgs(TypedDict, total=False):
    """How Karpenter disrupts the pool's nodes."""

    consolidation_policy: str
    """WhenEmpty (default) or WhenEmptyOrUnderutilized."""
    consolidate_after: str
    expire_after: str
    weight: int


class DisruptionWindowArgs(TypedDict):
    """When Karpenter may drift or consolidate nodes: opens at each cron `schedule` (UTC) for `duration`."""

    schedule: str
    duration: str


class PoolReservationArgs(TypedDict, total=False):
    """Reserved capacity the pool launches into: a Capacity Block (capacity type capacity-block, with its window)
    or an On-Demand Capacity Reservation (capacity type on-demand, the id alone)."""

    id: Required[str]
    """The reservation's id, cr-..."""
    start: str
    """A Capacity Block's start, ISO 8601 in UTC, e.g. 2026-12-07T11:30:00Z."""
    end: str
    """A Capacity Block's end, ISO 8601 in UTC: its nodes are drained 40 minutes before it."""
    instance_count: int
    """The instances reserved (default: max_size): what a block bills, and the pool's ceiling."""


class PoolArgs(TypedDict, total=False):
    """The pool itself: what both pool components take (a managed node group or a Karpenter NodePool)."""

    instance_types: Required[list[str]]
    """Instance types sharing one GPU model and count, e.g. ["g5.xlarge", "g5.2xlarge"]."""
    capacity_type: Required[str]
    """spot, on-demand or capacity-block (with `reservation`)."""
    reservation: PoolReservationArgs
    """The Capacity Block (capacity-block) or On-Demand Capacity Reservation (on-demand) the nodes launch into."""
    min_size: int
    """Nodes at least (default 0: the pool scales from zero)."""
    max_size: Required[int]
    """Nodes at most (1-1000)."""
    ami: Required[PoolAmiArgs]
    """The image the nodes boot, pinned."""
    sharing: PoolSharingArgs
    """How pods share the GPUs: none (default), time-slicing or MIG."""
    gpu_allocation: str
    """device-plugin (default: nvidia.com/gpu requests) or dra (ResourceClaims served by NVIDIA's DRA driver)."""
    taints: list[PoolTaintArgs]
    """Taints besides nvidia.com/gpu, which every GPU pool carries."""
    labels: dict[str, str]
    """Node labels besides the platform's own (pool, GPU model, sharing config)."""
    disk_size_gib: int
    """The volume container images live on (default 200)."""
    critical: bool
    """A critical pool must be on-demand; policies hold it there."""
    max_unavailable: int
    """Nodes replaced at a time in a roll (default: 1 in prod, 25% elsewhere)."""
    max_unavailable_percent: int
    """Or a percentage of the pool's nodes."""
    local_storage: str
    """raid0 (default where the image supports it) or none: the instance-store NVMe under kubelet."""
    repair: PoolRepairArgs
    """EKS node auto repair of the pool's nodes (default on)."""
    environment: str
    """dev, staging or prod: prod protects the pool and rolls one node at a time."""
    kubernetes_version: str
    """The cluster's Kubernetes minor, e.g. "1.35" (AMI releases are checked against it)."""
    tags: dict[str, str]
    """Tags on every instance and volume."""
    driver_source: str
    """Who installs the NVIDIA driver: ami (default) or operator (the GPU Operator, on Ubuntu pools)."""
    driver_version: str
    """The GPU Operator's pinned driver, when it owns the driver: checked against the GPU's minimum."""
    mig_strategy: str
    """The cluster-wide MIG strategy (default: this pool's)."""
    lustre_client: bool
    """Install the FSx for Lustre client at boot (the cluster mounts a datasets file system)."""


def pool_from_args(args_type: type, name: str, args: Mapping[str, Any],
                   provisioner: str) -> tuple[NodePoolSpec, PoolContext]:
    """The pool model (named after the component) and its context, checked with the stack file's rules;
    SpecError naming each argument that is wrong. `args_type` is the component's Args TypedDict (its keys
    are the arguments it takes, its name less `Args` the component's)."""
    where = f"{args_type.__name__.removesuffix('Args')} {name!r}: "
    args = dict(args)
    cluster_name, subnet_zones, window = args.get("cluster_name"), args.get("subnet_zones"), args.get("disruption_window")
    problems = [f"{camel(k)}: unknown argument" for k in sorted(set(args) - set(args_type.__annotations__))]
    problems += _context_problems(args) + syntax_problems(args)
    limit, percent = args.pop("max_unavailable", None), args.pop("max_unavailable_percent", None)
    if limit is not None and percent is not None:
        problems.append("maxUnavailablePercent: set maxUnavailable or maxUnavailablePercent, not both")
    fields = {k: v for k, v in args.items() if k in NodePoolSpec.model_fields and k not in ("name", "provisioner")}
    data = {"min_size": 0, **fields, "name": name, "provisioner": provisioner,
            "max_unavailable": f"{percent}%" if percent is not None else limit}
    try:
        pool = read_part(NodePoolSpec, {k: v for k, v in data.items() if v is not None})
    except SpecError as err:
        raise SpecError([where + p for p in [*problems, *err.problems]]) from None
    ctx = PoolContext(
        at="", cluster_name=cluster_name if isinstance(cluster_name, str) else None,
        kubernetes_version=args.get("kubernetes_version"), environment=args.get("environment", "dev"),
        tags=dict(args.get("tags") or {}), driver_source=args.get("driver_source", "ami"),
        driver_version=args.get("driver_version"), mig_strategy=args.get("mig_strategy") or _own_strategy(pool),
        lustre_client=bool(args.get("lustre_client")), subnet_zones=tuple(subnet_zones) if subnet_zones else None,
        disruption_window=DisruptionWindowSpec(**window) if window else None)
    problems += _pool_problems(ctx, pool)
    if problems:
        raise SpecError([where + p for p in problems])
    return pool, ctx


def _pool_problems(ctx: PoolContext, pool: NodePoolSpec) -> list[str]:
    found = [*pool_rules(ctx, pool), *karpenter_pool_rules(ctx, pool), *pool_repair_rules(".repair", pool.repair)]
    if ctx.driver_source == "operator" and ctx.driver_version and gpu_known(pool):
        found += [("driverVersion", need) for need in driver_shortfalls(pool, ctx.driver_version)]
    window = ctx.disruption_window
    problem = window_problem(window.schedule, window.duration) if window else None
    if problem:
        found.append(("disruptionWindow", problem))
    return [f"{path.lstrip('.')}: {message}" for path, message in found]


def _context_problems(args: Mapping[str, Any]) -> list[str]:
    checks = (("environment", ENVIRONMENTS), ("driver_source", DRIVER_SOURCES), ("mig_strategy", MIG_STRATEGIES))
    return [f"{camel(key)}: must be one of {', '.join(allowed)}" for key, allowed in checks
            if args.get(key) is not None and args[key] not in allowed]


def _own_strategy(pool: NodePoolSpec) -> str:
    return (pool.sharing.strategy or "mixed") if pool.sharing.mode == "mig" else "none"


def pool_args(spec: "PlatformSpec", pool: NodePoolSpec, args_type: type) -> dict:
    """The stack file's pool as a pool component's arguments (`args_type` names the ones it takes)."""
    ctx = PoolContext.of(spec, pool)
    args = pool.model_dump(exclude_none=True, exclude={"name", "provisioner", "protect", "max_unavailable"})
    if pool.gpu_allocation == "device-plugin":  # the default, left out as before the field existed
        del args["gpu_allocation"]
    if pool.reservation is not None:  # times as the ISO strings the Args declare
        args["reservation"] = pool.reservation.model_dump(mode="json", exclude_none=True)
    limit = pool.max_unavailable
    if limit is not None:
        args["max_unavailable_percent" if isinstance(limit, str) else "max_unavailable"] = (
            int(limit.rstrip("%")) if isinstance(limit, str) else limit)
    args.update(environment=ctx.environment, kubernetes_version=ctx.kubernetes_version, tags=dict(ctx.tags),
                driver_source=ctx.driver_source, mig_strategy=ctx.mig_strategy, lustre_client=ctx.lustre_client)
    if ctx.driver_version:
        args["driver_version"] = ctx.driver_version
    if ctx.disruption_window is not None:
        args["disruption_window"] = ctx.disruption_window.model_dump()
    allowed = set(args_type.__annotations__)
    return {k: v for k, v in args.items() if k in allowed}


def pool_options(pool: NodePoolSpec, depends_on: list, caller_protect: Optional[bool] = None) -> pulumi.ResourceOptions:
    """What the pool waits for, and its protection: the program's `protect` when it set one, else the stack
    file's for this pool, else the library's default (prod)."""
    return pulumi.ResourceOptions(depends_on=depends_on,
                                  protect=caller_protect if caller_protect is not None else pool.protect)
