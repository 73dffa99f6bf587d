"""What a GPU pool component is given, and how it is checked: the pool's settings and its cluster's, as
typed dictionaries of plain values and Pulumi Inputs (the schema other Pulumi languages see).

A pool component reads its arguments into the stack file's own pool model and runs the very rules the
stack file's pools pass (spec/rules.py), so a MIG layout that does not fit is refused by the node pool
alone, naming the argument. Field paths in problems use the schema's (camelCase) names.
"""
from collections.abc import Mapping
from typing import Any

from gpu_platform.decisions.cuda import pool_min_cuda_rules
from gpu_platform.facts.karpenter_window import window_problem
from gpu_platform.resources.arg_enums import AmiTypeInput, CapacityTypeInput, SharingModeInput
from gpu_platform.facts.names import DRIVER_SOURCES, ENVIRONMENT_TAG, ENVIRONMENTS, MIG_STRATEGIES
from gpu_platform.resources.typed_args import (ArgumentsError, Required, TypedDict, as_arguments, camel,
                                              syntax_problems, unknown_arguments)
from gpu_platform.spec.errors import SpecError
from gpu_platform.spec.field_path import FieldPath
from gpu_platform.spec.models import DisruptionWindowSpec, NodePoolSpec
from gpu_platform.spec.parse import read_part
from gpu_platform.spec.pool_context import PoolContext
from gpu_platform.spec.repair import pool_repair_rules
from gpu_platform.spec.rules import driver_shortfalls, gpu_known, pool_rules
from gpu_platform.spec.rules_karpenter import pool_rules as karpenter_pool_rules



class PoolAmiArgs(TypedDict, total=False):
    """The image a pool's nodes boot: an EKS AMI type pinned to a release, or an image id."""

    type: Required[AmiTypeInput]
    """EKS AMI type (`AmiType` or its value), e.g. AL2023_x86_64_NVIDIA, BOTTLEROCKET_x86_64_NVIDIA, UBUNTU_24_04."""
    release_version: str
    """The exact AMI release of an EKS-optimized type, e.g. 1.35.7-20260911."""
    image_id: str
    """The exact image of an Ubuntu pool (ami-...)."""
    alias: str
    """Karpenter pools: the exact EKS AMI alias, e.g. al2023@v20260911."""


class PoolSharingArgs(TypedDict, total=False):
    """How the pool's GPUs are shared between pods."""

    mode: SharingModeInput
    """none, time-slicing or mig (`SharingMode` or its value)."""
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
    """The taint's key."""
    value: str
    """The taint's value (may be empty)."""
    effect: Required[str]
    """NoSchedule, PreferNoSchedule or NoExecute."""


class PoolRepairOverrideArgs(TypedDict):
    """What EKS does for one node condition and reason the node monitoring agent reports."""

    condition: str
    """The node condition the node monitoring agent reports (e.g. AcceleratedHardwareReady)."""
    reason: str
    """The reason of that condition (e.g. a DCGM health code)."""
    wait_minutes: int
    """How long EKS waits before repairing."""
    action: str
    """What EKS does: Replace, Reboot or NoAction."""


class PoolRepairArgs(TypedDict, total=False):
    """EKS node auto repair of the pool's nodes."""

    enabled: bool
    """Whether EKS repairs (replaces or reboots) the pool's unhealthy nodes."""
    max_unhealthy_nodes: int
    """EKS stops repairing when more nodes than this are unhealthy (a count)."""
    max_unhealthy_percent: int
    """The same threshold as a percentage of the pool's nodes."""
    max_parallel_repairs: int
    """Nodes repaired at once (a count)."""
    max_parallel_percent: int
    """Nodes repaired at once, as a percentage of the pool's nodes."""
    overrides: list[PoolRepairOverrideArgs]
    """Per condition and reason: how long EKS waits and what it does."""


class KarpenterSettingsArgs(TypedDict, total=False):
    """How Karpenter disrupts the pool's nodes."""

    consolidation_policy: str
    """WhenEmpty (default) or WhenEmptyOrUnderutilized."""
    consolidate_after: str
    """How long a node must stay empty (or underutilized) before Karpenter removes it (e.g. 10m)."""
    expire_after: str
    """Node lifetime before Karpenter replaces it: must be Never (expiry ignores disruption budgets)."""
    weight: int
    """The NodePool's priority (1-100) when a pod fits several."""


class DisruptionWindowArgs(TypedDict):
    """When Karpenter may drift or consolidate nodes: opens at each cron `schedule` (UTC) for `duration`."""

    schedule: str
    """A cron expression (UTC) at which the window opens, e.g. "0 2 * * 6" (Saturdays 02:00)."""
    duration: str
    """How long the window stays open, e.g. 4h."""


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
    quoted_usd_per_hour: float
    """A Capacity Block's rate per instance-hour as quoted (its UpfrontFee over its instance-hours): prices the
    block instead of the catalog's dated figure."""
    quoted_on: str
    """The day the block was quoted and bought, YYYY-MM-DD: the month its whole fee is charged in."""


class PoolWarmArgs(TypedDict):
    """Nodes kept ready by placeholder pods that GPU work preempts (docs/node-pools.md#warm-capacity). GpuPlatform
    registers the placeholders of every warm pool; a pool component built alone checks the setting only."""

    nodes: int
    """Nodes held (1 to maxSize), each by one placeholder requesting all of a node's GPUs."""


class PoolKubeletArgs(TypedDict, total=False):
    """The kubelet's CPU and topology managers on the pool's nodes (docs/numa.md). Unset, pools of 8-GPU
    training instances (p4d, p4de, p5, p5e, p5en, p6-b200, p6-b300) get the defaults below; others none."""

    cpu_manager_policy: str
    """static (default: Guaranteed pods with whole CPUs get exclusive cores) or none."""
    topology_manager_policy: str
    """restricted (default), single-numa-node, best-effort or none: how strictly a pod's CPUs and devices share
    NUMA nodes."""
    topology_manager_scope: str
    """pod (default: the whole pod aligned together) or container."""
    reserved_system_cpus: str
    """CPUs kept for the system, never for pods, as a Linux CPU list (default 0-3 under the static policy)."""


class PoolAlertsArgs(TypedDict, total=False):
    """GPU memory thresholds of the pool's GPUs where they differ from the monitoring's (percent)."""

    memory_used_percent: float
    """Warning above this."""
    memory_critical_percent: float
    """Critical above this."""


class PoolAcceptanceArgs(TypedDict, total=False):
    """What a new node must pass before it takes work (docs/acceptance.md). A pool built alone registers its nodes
    with the startup taint readiness.k8s.io/gpu-acceptance; GpuPlatform installs the checker that lifts it."""

    enabled: bool
    """Gate new nodes (default true when the block is given)."""
    level: int
    """DCGM diagnostic level, dcgmi diag -r: 1 (seconds), 2 (default, about 2 minutes) or 3 (about 15 minutes)."""
    checks: list[str]
    """dcgm, nccl (two or more whole GPUs), efa (EFA pools), imex (UltraServers); default: all the hardware has."""
    timeout_minutes: int
    """The whole run's limit (default: the level's and the checks' own)."""
    nccl_bus_bandwidth_gbps: float
    """The in-node all-reduce bus bandwidth floor in GB/s (default: the catalog's for the instance type)."""
    recheck_hours: int
    """Hours between passive `dcgmi health -c` re-checks of idle accepted nodes, 0 for none (default: prod 24,
    others none). GpuPlatform runs them."""


class PoolArgs(TypedDict, total=False):
    """The pool itself: what both pool components take (a managed node group or a Karpenter NodePool)."""

    instance_types: Required[list[str]]
    """Instance types sharing one GPU model and count, e.g. ["g5.xlarge", "g5.2xlarge"]."""
    capacity_type: Required[CapacityTypeInput]
    """spot, on-demand or capacity-block (with `reservation`): `CapacityType` or its value."""
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
    min_cuda: str
    """A CUDA version, "major.minor", the pool's driver must run (natively or by minor-version compatibility):
    refused when its AMI release's driver branch or the operator's driver cannot (docs/cuda.md)."""
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
    kubelet: PoolKubeletArgs
    """The kubelet's CPU and topology managers (default: on for 8-GPU training instance types)."""
    warm: PoolWarmArgs
    """Warm capacity: nodes held ready for work that must start in seconds, priced as running nodes."""
    acceptance: PoolAcceptanceArgs
    """What a new node must pass before it takes work (default: none for a pool built alone)."""
    alerts: PoolAlertsArgs
    """This pool's GPU memory alert thresholds; GpuMonitoring's pool_memory applies them."""
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
    args = as_arguments(args_type.__name__.removesuffix("Args"), name, args, args_type)
    cluster_name, subnet_zones, window = args.get("cluster_name"), args.get("subnet_zones"), args.get("disruption_window")
    problems = unknown_arguments(args, args_type)
    problems += _context_problems(args) + syntax_problems(args)
    limit, percent = args.pop("max_unavailable", None), args.pop("max_unavailable_percent", None)
    if limit is not None and percent is not None:
        problems.append("maxUnavailablePercent: set maxUnavailable or maxUnavailablePercent, not both")
    if percent is not None and (isinstance(percent, bool) or not isinstance(percent, int) or not 1 <= percent <= 100):
        problems.append(f"maxUnavailablePercent: must be a whole percentage, 1-100 (given {percent!r})")
        percent = None  # named here; the model would name maxUnavailable, which the program did not set
    fields = {k: v for k, v in args.items() if k in NodePoolSpec.model_fields and k not in ("name", "provisioner")}
    data = {"min_size": 0, **fields, "name": name, "provisioner": provisioner,
            "max_unavailable": f"{percent}%" if percent is not None else limit}
    try:
        pool = read_part(NodePoolSpec, {k: v for k, v in data.items() if v is not None})
    except SpecError as err:
        raise ArgumentsError(where, [*problems, *err.problems]) from None
    ctx = PoolContext(
        at=FieldPath(), cluster_name=cluster_name if isinstance(cluster_name, str) else None,
        kubernetes_version=args.get("kubernetes_version"), environment=args.get("environment", "dev"),
        environment_stated=bool(environment_tag(args)),
        tags=dict(args.get("tags") or {}), driver_source=args.get("driver_source", "ami"),
        driver_version=args.get("driver_version"), mig_strategy=args.get("mig_strategy") or _own_strategy(pool),
        lustre_client=bool(args.get("lustre_client")), subnet_zones=tuple(subnet_zones) if subnet_zones else None,
        disruption_window=DisruptionWindowSpec(**window) if window else None)
    problems += _pool_problems(ctx, pool)
    if pool.efa and "vpc_id" in args_type.__annotations__ and args.get("vpc_id") is None:
        problems.append("vpcId: required for an EFA pool: its security group is made in the cluster's VPC")
    if problems:
        raise ArgumentsError(where, problems)
    return pool, ctx


def environment_tag(args: Mapping[str, Any]) -> dict[str, str]:
    """The tag that carries the environment a program gave the pool to the policy pack's rules (a stack file's
    pools get it from the aws provider's default tags instead); none when the program gave none, so a pool
    whose environment nobody stated is still held to prod."""
    environment = args.get("environment")
    return {ENVIRONMENT_TAG: environment} if isinstance(environment, str) and environment else {}


def _pool_problems(ctx: PoolContext, pool: NodePoolSpec) -> list[str]:
    found = [*pool_rules(ctx, pool), *karpenter_pool_rules(ctx, pool), *pool_repair_rules(FieldPath.of("repair"), pool.repair)]
    if ctx.driver_source == "operator" and ctx.driver_version and gpu_known(pool):
        found += [(FieldPath.of("driverVersion"), need) for need in driver_shortfalls(pool, ctx.driver_version)]
    operator = ctx.driver_version if ctx.driver_source == "operator" else None
    found += pool_min_cuda_rules(FieldPath.of("minCuda"), pool, operator, None)
    window = ctx.disruption_window
    problem = window_problem(window.schedule, window.duration) if window else None
    if problem:
        found.append((FieldPath.of("disruptionWindow"), problem))
    return [f"{path}: {message}" for path, message in found]


def _context_problems(args: Mapping[str, Any]) -> list[str]:
    checks = (("environment", ENVIRONMENTS), ("driver_source", DRIVER_SOURCES), ("mig_strategy", MIG_STRATEGIES))
    return [f"{camel(key)}: must be one of {', '.join(allowed)}" for key, allowed in checks
            if args.get(key) is not None and args[key] not in allowed]


def _own_strategy(pool: NodePoolSpec) -> str:
    return (pool.sharing.strategy or "mixed") if pool.sharing.mode == "mig" else "none"
