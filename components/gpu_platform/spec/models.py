"""The stack file's schema: `gpu-platform:platform` as pydantic models.

Structure (types, enums, ranges, unknown fields) is pydantic's job (spec/parse.py reads a file's object
into these models); rules that relate fields to each other or to the catalog live in spec/rules*.py, and
rules that need a decision (quotas against capacity) in decisions/validation.py, each reporting the field
path a user must edit and what is valid. `gpu_platform.decisions.validation.parse_platform` runs all of
them and raises one `SpecError` listing every problem at once.
"""
from __future__ import annotations

import ipaddress
import re
from datetime import date, datetime, timedelta
from functools import cached_property
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal, Optional, Union, get_args

from pydantic import Field, field_validator

from gpu_platform.facts import catalog, names, syntax
from gpu_platform.facts import kubelet as kubelet_facts
from gpu_platform.spec.alerting import AlertingSpec, SeverityRoutesSpec
from gpu_platform.spec.fields import (
    AmiId, CapacityReservationId, CudaVersion, DnsLabel, EqualitySelector, FsxFileSystemPath, InstanceType, Ipv4Cidr,
    LabelKey, Labels, Quantity, S3Uri, SecurityGroupId, Selector, StorageRequest, SubnetId, Tags, TaintKey, TaintValue,
    Zone,
)
from gpu_platform.spec.acceptance import AcceptanceSpec
from gpu_platform.spec.repair import NodeRepairSpec
from gpu_platform.spec.serving import ServiceSpec
from gpu_platform.spec.strict import StrictModel

KMS_KEY_ARN = r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[\w-]+$"
ADDON_VERSION = catalog.ADDON_VERSION_PATTERN
PriorityTier = Literal["critical-inference", "standard", "preemptible-batch"]
PRIORITY_TIERS: tuple[PriorityTier, ...] = get_args(PriorityTier)

# Fields whose values are the catalog's keys: pydantic reads a Literal built from them when the module loads,
# which a type checker cannot evaluate, so to it they are the strings they are.
if TYPE_CHECKING:
    NodeImageType = str
    TaintEffect = str
    DraDriverChart = str
    FsxDeploymentType = str
else:
    NodeImageType = Literal[tuple(catalog.NODE_IMAGES)]
    TaintEffect = Literal[tuple(names.TAINT_EFFECTS)]
    DraDriverChart = Literal[tuple(catalog.DRA_DRIVER_RELEASES)]
    FsxDeploymentType = Literal[tuple(catalog.FSX_LUSTRE_DEPLOYMENTS)]


# --- cluster ---

class VpcSpec(StrictModel):
    """The VPC the stack creates for the cluster."""

    cidr: str = "10.40.0.0/16"
    availability_zones: int = Field(3, ge=2, le=6)
    zones: Optional[list[Zone]] = None  # explicit zone names in the stack's region; default: <region>a, b, c...
    single_nat_gateway: Optional[bool] = None  # default: one per zone in prod, one otherwise
    # Local Zones the VPC reaches (a Capacity Block sold there, e.g. us-east-1-dfw-2a): one private subnet each,
    # for node groups only; its egress is the region's NAT gateway (docs/node-pools.md, Local Zones)
    local_zones: Optional[list[Zone]] = Field(None, min_length=1, max_length=1)

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, v: str) -> str:
        net = ipaddress.ip_network(v)  # raises ValueError with a readable message
        if net.version != 4 or not 16 <= net.prefixlen <= 20:
            raise ValueError("must be an IPv4 CIDR between /16 and /20 (room for one /20 subnet per zone)")
        return v


class SystemNodesSpec(StrictModel):
    """The managed node group running the platform's own controllers (no GPUs)."""

    instance_types: list[InstanceType] = Field(default_factory=lambda: ["m6i.large"], min_length=1)
    min_size: int = Field(2, ge=1)
    max_size: int = Field(4, ge=1)
    disk_size_gib: int = Field(50, ge=20, le=16384, alias="diskSizeGiB")
    release_version: str = Field(pattern=r"^\d+\.\d+\.\d+-\d{8}$")


class CreateClusterSpec(StrictModel):
    """A cluster the stack creates: its VPC, API endpoint access, add-ons and system nodes."""

    vpc: Optional[VpcSpec] = None
    subnet_ids: Optional[list[SubnetId]] = None  # private subnets of an existing VPC
    endpoint_public_access: bool = True
    # Networks that may reach the public API endpoint (default: any)
    public_access_cidrs: list[Ipv4Cidr] = Field(default_factory=lambda: ["0.0.0.0/0"])
    # EKS add-ons by name, each at a pinned version (vpc-cni: v1.22.4-eksbuild.3, ...)
    addons: dict[str, str]
    system_nodes: SystemNodesSpec
    # Envelope-encrypt Kubernetes secrets with this KMS key (optional; cannot be removed once set).
    secrets_kms_key_arn: Optional[str] = Field(None, pattern=KMS_KEY_ARN)


class ExistingClusterSpec(StrictModel):
    """A cluster made elsewhere that the stack adopts: its subnets and node security groups."""

    subnet_ids: list[SubnetId] = Field(min_length=1)
    # Security groups GPU nodes join besides the cluster security group
    node_security_group_ids: list[SecurityGroupId] = Field(default_factory=list)


class ClusterSpec(StrictModel):
    """The EKS cluster: its name and Kubernetes version, and whether the stack creates it or adopts one."""

    name: str = Field(pattern=r"^[a-z][a-z0-9-]{0,31}$")
    # The EKS Kubernetes minor version ("1.33"), one of the catalog's
    kubernetes_version: str
    create: Optional[CreateClusterSpec] = None
    existing: Optional[ExistingClusterSpec] = None
    # IAM roles given cluster-admin access (EKS access entries with the cluster admin policy)
    admin_role_arns: list[str] = Field(default_factory=list)
    # Where the platform's controllers run (GPU Operator, autoscaler, Karpenter, Prometheus, Kueue): labels of
    # the system nodes. The default is the label the platform's own system node group carries; an adopted
    # cluster names its existing system nodes here.
    system_node_selector: Labels = Field(default_factory=lambda: dict(names.SYSTEM_NODE_SELECTOR),
                                                 min_length=1)


# --- GPU operator ---

class DriverSpec(StrictModel):
    """Who owns the NVIDIA driver: the node image (ami) or the GPU Operator at a pinned version."""

    source: names.DriverSource
    version: Optional[str] = Field(None, pattern=r"^\d+\.\d+(\.\d+)?$")
    kernel_module_type: Literal["auto", "open", "proprietary"] = "auto"


def selector_labels(selector: str) -> dict[str, str]:
    """`a=b,c==d` -> {a: b, c: d}; ValueError for anything but an equality-based label selector."""
    problem = syntax.selector(selector, equality_only=True)
    if problem:
        raise ValueError(f"{problem} (the workload helper labels job pods with it)")
    return dict(re.split(r"\s*==?\s*", term, maxsplit=1) for term in syntax.selector_terms(selector))


class WaitForCompletionSpec(StrictModel):
    """Jobs a driver upgrade waits for before it takes a node."""

    timeout_seconds: int = Field(0, ge=0)  # 0: wait as long as it takes
    # Pods the upgrade controller waits for before it touches a node; `gpu_job` labels job pods with it.
    pod_selector: EqualitySelector = f"{names.WAIT_FOR_COMPLETION_LABEL}=true"


def node_count_or_percent(v: Optional[Union[int, str]]) -> Optional[Union[int, str]]:
    """A rolling update's `maxUnavailable`: a node count (1-100) or a percentage ("25%", 1%-100%)."""
    if v is None:
        return v
    m = re.fullmatch(r"(\d{1,3})%", v) if isinstance(v, str) else None
    if not 1 <= (int(m.group(1)) if m else v if isinstance(v, int) else 0) <= 100:
        raise ValueError("must be a node count (1-100) or a percentage such as \"25%\" (1%-100%)")
    return v


class GpuPodDeletionSpec(StrictModel):
    """Whether a driver upgrade deletes the GPU pods on a node, and how long it waits."""

    force: bool = False
    timeout_seconds: int = Field(300, ge=0)
    # Every GPU pod the workload helper makes mounts /dev/shm as a memory emptyDir: without this the
    # controller cannot delete them, the node's upgrade fails and the node stays cordoned.
    delete_empty_dir: bool = True


class DrainSpec(StrictModel):
    """How a driver upgrade drains a node."""

    enable: bool = False
    force: bool = False
    pod_selector: Selector = ""
    timeout_seconds: int = Field(300, ge=0)
    delete_empty_dir: bool = False


class UpgradePolicySpec(StrictModel):
    """How the GPU Operator rolls a driver upgrade over the GPU nodes."""

    auto_upgrade: bool = True
    max_parallel_upgrades: int = Field(1, ge=0)
    max_unavailable: Union[int, str] = "25%"  # nodes (1-100) or a percentage (1%-100%) upgraded at a time
    wait_for_completion: WaitForCompletionSpec = Field(default_factory=WaitForCompletionSpec)
    gpu_pod_deletion: GpuPodDeletionSpec = Field(default_factory=GpuPodDeletionSpec)
    drain: DrainSpec = Field(default_factory=DrainSpec)

    _max_unavailable = field_validator("max_unavailable")(lambda v: node_count_or_percent(v))


class GpuOperatorSpec(StrictModel):
    """The NVIDIA GPU Operator: its chart, who owns the driver, and how driver upgrades roll."""

    # The GPU Operator chart's exact version (v26.7.0)
    chart_version: str
    namespace: DnsLabel = "gpu-operator"
    driver: DriverSpec
    upgrade_policy: UpgradePolicySpec = Field(default_factory=UpgradePolicySpec)


class ClusterAutoscalerSpec(StrictModel):
    """The Cluster Autoscaler that sizes managed node groups."""

    enabled: bool = True
    chart_version: str = Field("9.52.1", pattern=r"^\d+\.\d+\.\d+$")
    image_tag: Optional[str] = Field(None, pattern=r"^v\d+\.\d+\.\d+$")  # default: matches the cluster minor


# --- node pools ---

class AmiSpec(StrictModel):
    """The pool's node image, pinned: its type and release (or alias, or image id)."""

    type: NodeImageType
    # An EKS-optimized release: <kubernetes>.<patch>-<YYYYMMDD>, or <bottlerocket>-<build> (spec/rules.py)
    release_version: Optional[str] = Field(None, pattern=r"^\d+\.\d+\.\d+-[0-9a-f]{8}$")
    # Ubuntu pools: Canonical's Ubuntu EKS image id (ami-...), pinned in the launch template
    image_id: Optional[AmiId] = None
    alias: Optional[str] = Field(None, max_length=30)  # Karpenter pools: an exact EKS AMI alias, family@version

    @property
    def image(self) -> catalog.NodeImage:
        return catalog.NODE_IMAGES[self.type]


class SharingSpec(StrictModel):
    """How a pool shares its GPUs: none, time-slicing (replicas per GPU) or MIG (strategy and layout)."""

    mode: Literal["none", "time-slicing", "mig"] = "none"
    replicas: Optional[int] = Field(None, ge=2, le=64)
    fail_requests_greater_than_one: bool = True
    strategy: Optional[Literal["single", "mixed"]] = None
    # MIG: slices of each profile cut from every GPU ("3g.40gb": 1, "1g.10gb": 2)
    layout: Optional[dict[str, int]] = None


class TaintSpec(StrictModel):
    """A taint on the pool's nodes, beside the GPU taint the platform always sets."""

    key: TaintKey  # the taint's key, in label-key syntax
    value: TaintValue = ""
    effect: TaintEffect


KARPENTER_DURATION = r"^(([0-9]+(s|m|h))+|Never)$"  # NodePool consolidateAfter and expireAfter


class PoolAlertsSpec(StrictModel):
    """GPU memory thresholds of this pool's GPUs where they differ from monitoring.alerts (docs/monitoring.md): an
    inference pool that keeps its model resident runs near full memory by design; a training pool should not."""
    memory_used_percent: Optional[float] = Field(None, gt=0, lt=100)  # warning (default: monitoring.alerts')
    memory_critical_percent: Optional[float] = Field(None, gt=0, lt=100)  # critical (default: monitoring.alerts')


class KarpenterPoolSpec(StrictModel):
    """How Karpenter disrupts a pool's nodes (provisioner: karpenter); see docs/karpenter.md."""
    consolidation_policy: Literal["WhenEmpty", "WhenEmptyOrUnderutilized"] = "WhenEmpty"
    consolidate_after: str = Field("10m", pattern=KARPENTER_DURATION)  # how long a node must stay empty
    expire_after: str = Field("Never", pattern=KARPENTER_DURATION)  # expiry ignores disruption budgets
    weight: Optional[int] = Field(None, ge=1, le=100)  # NodePool priority when a pod fits several


# How pods get a pool's GPUs: the GPU Operator's device plugin (`nvidia.com/gpu` requests), or NVIDIA's DRA
# driver (ResourceClaims); see docs/dra.md. Never both on one node.
GpuAllocation = Literal["device-plugin", "dra"]
GPU_ALLOCATIONS: tuple[GpuAllocation, ...] = get_args(GpuAllocation)

CapacityType = Literal["spot", "on-demand", "capacity-block"]
CAPACITY_TYPES: tuple[CapacityType, ...] = get_args(CapacityType)


class ReservationSpec(StrictModel):
    """Reserved capacity a pool launches into: the EC2 Capacity Block for ML a `capacity-block` pool runs on
    (with its window), or the On-Demand Capacity Reservation an `on-demand` pool targets (the id alone)."""
    id: CapacityReservationId  # cr- and 17 hexadecimal digits (Karpenter's EC2NodeClass takes cr-[0-9a-z]+)
    start: Optional[datetime] = None  # capacity blocks: when the block starts, ISO 8601 in UTC
    end: Optional[datetime] = None  # capacity blocks: when it ends (EC2 terminates its instances 30 minutes before)
    instance_count: Optional[int] = Field(None, ge=1)  # the instances reserved (default: the pool's maxSize)
    # capacity blocks: the rate the offering was quoted at (its UpfrontFee over its instance-hours) and the day
    # of the quote; the plan prices the block with it instead of the catalog's list rate
    quoted_usd_per_hour: Optional[float] = Field(None, gt=0)
    quoted_on: Optional[date] = None  # the day of that quote

    @field_validator("start", "end", mode="before")
    @classmethod
    def _text(cls, v: object) -> object:
        """A window is ISO 8601 text (or a YAML timestamp): a number would be read as seconds since 1970."""
        iso = isinstance(v, datetime) or isinstance(v, str) and re.match(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}", v)
        if v is not None and not iso:
            raise ValueError(f"must be an ISO 8601 date and time in UTC such as 2026-12-07T11:30:00Z, as `aws ec2 "
                             f"describe-capacity-blocks` prints it, not {str(v)[:30]!r} (epoch seconds are not taken)")
        return v

    @field_validator("quoted_on", mode="before")
    @classmethod
    def _day(cls, v: object) -> object:
        if v is not None and not isinstance(v, (str, date)):
            raise ValueError("must be the quote's day as ISO 8601 text such as 2026-11-20")
        return v

    @field_validator("start", "end")
    @classmethod
    def _utc(cls, v: Optional[datetime]) -> Optional[datetime]:
        if v is not None and v.utcoffset() != timedelta(0):
            raise ValueError("must be an ISO 8601 time in UTC, e.g. 2026-12-07T11:30:00Z (AWS gives block times "
                             "in UTC)")
        return v


CPUSET = r"^\d+(-\d+)?(,\d+(-\d+)?)*$"  # a Linux CPU list, e.g. 0-3 or 0,1,96,97


class KubeletSpec(StrictModel):
    """The kubelet's CPU and topology managers on a pool's nodes (docs/numa.md). Unset, a pool of 8-GPU
    training instances (facts/kubelet.py NUMA_ALIGNED_FAMILIES) gets these defaults and any other pool none."""
    cpu_manager_policy: kubelet_facts.CpuManagerPolicy = "static"
    topology_manager_policy: kubelet_facts.TopologyManagerPolicy = "restricted"
    topology_manager_scope: kubelet_facts.TopologyManagerScope = "pod"
    # CPUs kept for the system and kubelet, never given to pods (default 0-3 under the static policy).
    reserved_system_cpus: Optional[str] = Field(None, pattern=CPUSET)


class WarmSpec(StrictModel):
    """Nodes kept ready by placeholder pods that real work preempts (docs/node-pools.md#warm-capacity)."""
    nodes: int = Field(ge=1)


class _GpuShape:
    """Look-ups on a pool's `instance_types`, valid once the rules accepted them (known, one GPU shape)."""

    instance_types: list[str]  # each pool model's field

    @property
    def instances(self) -> list[catalog.InstanceType]:
        return [catalog.INSTANCE_TYPES[t] for t in self.instance_types]

    @property
    def gpu(self) -> catalog.GpuModel:
        return self.instances[0].gpu_model

    @property
    def gpus_per_node(self) -> int:
        return self.instances[0].gpu_count


class NodePoolSpec(StrictModel, _GpuShape):
    """One GPU node pool: its instance types, capacity, size, node image, GPU sharing and placement."""

    name: DnsLabel  # a node label value and Karpenter NodePool name (63); see docs/planner.md for the limits
    provisioner: Literal["managed-node-group", "karpenter"] = "managed-node-group"
    karpenter: Optional[KarpenterPoolSpec] = None  # Karpenter settings (provisioner: karpenter only)
    instance_types: list[str] = Field(min_length=1)
    capacity_type: CapacityType
    # A capacity block's id and window (capacity-block), or an On-Demand Capacity Reservation's id (on-demand).
    reservation: Optional[ReservationSpec] = None
    min_size: int = Field(ge=0)
    max_size: int = Field(ge=1, le=1000)
    ami: AmiSpec
    sharing: SharingSpec = Field(default_factory=SharingSpec)
    gpu_allocation: GpuAllocation = "device-plugin"
    taints: list[TaintSpec] = Field(default_factory=list)
    # Extra labels on the pool's nodes
    labels: Labels = Field(default_factory=dict)
    disk_size_gib: int = Field(200, ge=100, le=16384, alias="diskSizeGiB")
    min_cuda: Optional[CudaVersion] = None  # the pool's driver must run this CUDA version (docs/cuda.md)
    efa: bool = False
    critical: bool = False
    protect: Optional[bool] = None  # default: protected in prod
    # The managed node group's rolling update: nodes (1-100) or a percentage ("25%") replaced at a time.
    max_unavailable: Optional[Union[int, str]] = None  # default: 1 node in prod, 25% elsewhere
    update_strategy: Literal["default", "minimal"] = "default"  # minimal: terminate before launching
    # Availability zones of a VPC the stack creates (default: every zone; an EFA pool: the first one).
    zones: Optional[list[Zone]] = Field(None, min_length=1)
    # Instance-store NVMe as one RAID0 array for kubelet and containers (default raid0 where offered).
    local_storage: Optional[Literal["raid0", "none"]] = None
    repair: NodeRepairSpec = Field(default_factory=NodeRepairSpec)  # managed node group auto repair
    kubelet: Optional[KubeletSpec] = None  # CPU and topology managers; default by instance type (docs/numa.md)
    warm: Optional[WarmSpec] = None  # nodes held ready for work that must start in seconds (priced in the plan)
    # What a new node must pass before it takes work; default by environment (docs/acceptance.md).
    acceptance: Optional[AcceptanceSpec] = None
    alerts: Optional[PoolAlertsSpec] = None  # this pool's GPU memory thresholds (default: monitoring.alerts')

    _max_unavailable = field_validator("max_unavailable")(lambda v: node_count_or_percent(v))


class OperatorPoolSpec(StrictModel, _GpuShape):
    """A GPU pool as the GPU Operator serves it: its GPUs, image, sharing and extra taints."""
    name: DnsLabel
    instance_types: list[str] = Field(min_length=1)
    ami: AmiSpec
    sharing: SharingSpec = Field(default_factory=SharingSpec)
    gpu_allocation: GpuAllocation = "device-plugin"
    taints: list[TaintSpec] = Field(default_factory=list)


class QueuePoolSpec(StrictModel, _GpuShape):
    """A GPU pool as Kueue sees it: its GPUs, sharing and taints, its capacity type and its size at most."""
    name: DnsLabel
    instance_types: list[str] = Field(min_length=1)
    capacity_type: CapacityType
    max_size: int = Field(ge=1, le=1000)
    sharing: SharingSpec = Field(default_factory=SharingSpec)
    gpu_allocation: GpuAllocation = "device-plugin"
    taints: list[TaintSpec] = Field(default_factory=list)


GpuPool = Union[NodePoolSpec, OperatorPoolSpec, QueuePoolSpec]  # what the operator and Kueue read of a pool


def mig_strategy_of(pools: Sequence[GpuPool]) -> str:
    """The cluster-wide MIG strategy of these pools: one for all MIG pools (`none` without MIG)."""
    strategies = {p.sharing.strategy or "mixed" for p in pools if p.sharing.mode == "mig"}
    return strategies.pop() if len(strategies) == 1 else "none" if not strategies else "mixed"


# --- training: the EFA device plugin and the datasets file system ---

class EfaDevicePluginSpec(StrictModel):
    """The EFA device plugin, for pools with EFA."""

    chart_version: str = "v0.5.30"  # aws-efa-k8s-device-plugin, installed only when a pool sets efa


class DraDriverSpec(StrictModel):
    """NVIDIA's DRA driver, for pools that allocate GPUs by Dynamic Resource Allocation."""

    # NVIDIA's DRA driver chart (dra-driver-nvidia-gpu), installed only when a pool sets gpuAllocation dra or runs
    # UltraServers (their ComputeDomains)
    chart_version: DraDriverChart = "0.4.1"


class DataRepositorySpec(StrictModel):
    """An S3 prefix linked to the file system (a data repository association)."""

    s3_path: S3Uri  # s3://<bucket>[/<prefix>]
    file_system_path: FsxFileSystemPath = "/"  # where the prefix appears in the file system
    auto_import: bool = True  # new, changed and deleted S3 objects show up in the file system
    auto_export: bool = False  # files written in the linked directory (checkpoints) are copied to S3


class DatasetsOwnerSpec(StrictModel):
    """Who owns each team's directory (and the shared area) when it is made: never root."""

    uid: int = Field(1000, ge=1, le=2**31 - 1)
    gid: int = Field(1000, ge=1, le=2**31 - 1)


class FsxLustreSpec(StrictModel):
    """An FSx for Lustre file system linked to an S3 data repository, claimed by each team."""

    deployment_type: FsxDeploymentType = "PERSISTENT_2"
    storage_capacity_gib: int = Field(1200, ge=1200, alias="storageCapacityGiB")
    throughput_per_tib: Optional[int] = Field(None, alias="throughputPerTiB")  # MB/s per TiB; default the lowest
    kms_key_arn: Optional[str] = Field(None, pattern=KMS_KEY_ARN)  # default: the AWS-managed FSx key
    addon_version: Optional[str] = Field(None, pattern=ADDON_VERSION)  # aws-fsx-csi-driver, pinned
    data_repository: Optional[DataRepositorySpec] = None
    teams: Optional[list[str]] = None  # teams that get a claim; default: every team
    claim_size: StorageRequest = "1Ti"  # what each team's claim asks (its storage quota counts it)
    protect: Optional[bool] = None  # default: protected and retained on delete in prod
    shared: Optional[DnsLabel] = None  # a directory every claiming team mounts read-only
    owner: DatasetsOwnerSpec = Field(default_factory=DatasetsOwnerSpec)  # of each directory the platform makes


class DatasetsSpec(StrictModel):
    """Training datasets on a shared file system."""

    fsx_lustre: Optional[FsxLustreSpec] = None


# --- Karpenter ---

class DisruptionWindowSpec(StrictModel):
    """When Karpenter may drift or consolidate nodes: opens at each `schedule` (cron, UTC, weekly) for `duration`."""
    schedule: str  # a weekly cron expression, in UTC ("0 2 * * sun")
    duration: str = Field(pattern=r"^((([0-9]+(h|m))|([0-9]+h[0-9]+m))(0s)?)$")


class KarpenterSpec(StrictModel):
    """Karpenter, for pools with provisioner karpenter: its disruption window and settings."""

    chart_version: str = Field("1.14.1", pattern=r"^\d+\.\d+\.\d+$")
    namespace: DnsLabel = "kube-system"
    disruption_window: Optional[DisruptionWindowSpec] = None  # required in prod when a pool uses Karpenter


# --- model cache, monitoring ---

class ModelCacheSpec(StrictModel):
    """The ReadWriteMany model cache (EFS) each team's pods read weights from."""

    enabled: bool = False
    addon_version: Optional[str] = Field(None, pattern=ADDON_VERSION)  # aws-efs-csi-driver, pinned
    storage_gib_estimate: int = Field(500, ge=1, alias="storageGiBEstimate")  # for the cost estimate only: EFS grows as written
    pvc_size: StorageRequest = "1Ti"


class AlertThresholds(StrictModel):
    """When the GPU alerts fire."""

    memory_used_percent: float = Field(90, gt=0, lt=100)  # warning
    memory_critical_percent: float = Field(97, gt=0, lt=100)
    memory_for_minutes: int = Field(5, ge=0)
    temperature_celsius: float = Field(83, gt=0, lt=120)  # warning
    temperature_critical_celsius: float = Field(87, gt=0, lt=120)
    temperature_for_minutes: int = Field(5, ge=0)
    idle_utilization_percent: float = Field(10, gt=0, lt=100)
    idle_minutes: int = Field(30, ge=1)
    exporter_down_minutes: int = Field(5, ge=1)
    not_detected_minutes: int = Field(10, ge=1)
    gpu_unhealthy_minutes: int = Field(5, ge=0)  # GPUs out of allocatable, node reports a GPU fault
    pending_minutes: int = Field(15, ge=1)  # a GPU pod unschedulable this long alerts its team and the platform
    reservation_warning_hours: int = Field(48, ge=1)  # a Capacity Block's drain (an ODCR's end) this close: warning
    reservation_critical_hours: int = Field(4, ge=1)  # ... this close: critical


class PrometheusSpec(StrictModel):
    """The Prometheus the platform installs, or the existing one it uses."""

    mode: Literal["install", "existing", "none"] = "install"
    chart_version: str = Field("79.5.0", pattern=r"^\d+\.\d+\.\d+$")
    namespace: DnsLabel = "monitoring"
    # Labels Prometheus selects its monitors and rules by
    selector_labels: Labels = Field(default_factory=lambda: {"release": "kube-prometheus-stack"})
    grafana_dashboard_label: LabelKey = "grafana_dashboard"  # the Grafana sidecar's label on dashboards
    retention: str = Field("10d", pattern=r"^[1-9][0-9]*(h|d|w|y)$")  # how long Prometheus keeps samples
    storage_gi: Optional[int] = Field(None, ge=1)  # the Prometheus volume; default: sized from the retention
    ebs_csi_addon_version: Optional[str] = Field(None, pattern=ADDON_VERSION)  # aws-ebs-csi-driver: volumes on


class UsageReportSpec(StrictModel):
    """The monthly GPU usage report: a CronJob querying Prometheus, writing CSV to an S3 prefix (docs/usage.md)."""
    enabled: bool = False
    # Five-field cron, UTC (the CronJob's timeZone); each run reports the calendar month before it.
    schedule: str = Field("0 6 1 * *", pattern=r"^(\S+\s+){4}\S+$")
    bucket_name: Optional[str] = None  # default: a bucket the stack creates, named from the cluster
    prefix: str = Field("gpu-usage", pattern=r"^[a-z0-9]([a-z0-9-]{0,62}[a-z0-9])?$")  # the job writes only here
    retention_days: int = Field(400, ge=30, le=3650)  # reports older than this expire (lifecycle rule)
    prometheus_url: Optional[str] = Field(None, pattern=r"^https?://[^\s]+$")  # default: the installed Prometheus

    @field_validator("bucket_name")
    @classmethod
    def _bucket(cls, v: Optional[str]) -> Optional[str]:
        problem = syntax.s3_bucket(v) if v is not None else None
        if problem:
            raise ValueError(problem)
        return v


class MonitoringSpec(StrictModel):
    """GPU monitoring: DCGM metrics, Prometheus, the alerts and where they go."""

    enabled: bool = True
    prometheus: PrometheusSpec = Field(default_factory=PrometheusSpec)
    alerts: AlertThresholds = Field(default_factory=AlertThresholds)
    alerting: Optional[AlertingSpec] = None  # receivers and routes of the installed Alertmanager
    usage_report: UsageReportSpec = Field(default_factory=UsageReportSpec)


# --- teams ---

class LoggingSpec(StrictModel):
    """Pod and node logs to CloudWatch Logs through Fluent Bit: a log group per team namespace (docs/logging.md)."""

    enabled: bool = True  # prod requires it (policy log-pipeline-required)
    retention_days: Optional[int] = None  # default per environment (catalog.DEFAULT_LOG_RETENTION_DAYS)
    kms_key_arn: Optional[str] = Field(None, pattern=KMS_KEY_ARN)  # default: a key the stack creates
    chart_version: str = Field("0.58.1", pattern=r"^\d+\.\d+\.\d+$")
    namespace: DnsLabel = "logging"
    ingest_gb_per_day: dict[str, float] = Field(default_factory=dict)  # per namespace, for the plan's cost rows

    @field_validator("retention_days")
    @classmethod
    def _retention(cls, v: Optional[int]) -> Optional[int]:
        if v is not None and v not in catalog.LOG_RETENTION_DAYS:
            raise ValueError("must be a retention CloudWatch Logs accepts: one of "
                             + ", ".join(map(str, catalog.LOG_RETENTION_DAYS)))
        return v

    @field_validator("chart_version")
    @classmethod
    def _chart(cls, v: str) -> str:
        if v not in catalog.FLUENT_BIT_VALUES:
            raise ValueError(f"must be a Fluent Bit chart version the platform knows: {', '.join(catalog.FLUENT_BIT_VALUES)}")
        return v


class QuotaSpec(StrictModel):
    """A team's quota: whole GPUs, MIG slices per profile, CPU, memory and storage."""

    gpus: int = Field(0, ge=0)
    # MIG slices the team may hold, by profile ("1g.10gb": 4)
    mig_slices: dict[str, int] = Field(default_factory=dict)
    cpu: Quantity  # CPU requests in the namespace, at most ("64", "32000m")
    memory: Quantity  # memory requests in the namespace, at most ("512Gi")
    pods: int = Field(200, ge=1)
    persistent_volume_claims: int = Field(20, ge=0)
    storage: Quantity = "2Ti"


class ContainerDefaultsSpec(StrictModel):
    """Requests given to containers that set none, so every pod counts against the team's quota."""
    cpu: Quantity = "250m"
    memory: Quantity = "512Mi"


class TeamAccessSpec(StrictModel):
    """The IAM roles given a team's developer and admin access in its namespace."""

    # IAM roles in the team's developers group (team-developers Role: workloads, not credentials)
    developer_role_arns: list[str] = Field(default_factory=list)
    # IAM roles in the team's admins group (team-admins Role: everything in the namespace)
    admin_role_arns: list[str] = Field(default_factory=list)


PERCENT = r"^\d{1,4}%$"


class SubTeamSpec(StrictModel):
    """A part of a team holding its share of the team's nominal quota in a ClusterQueue of the team's cohort,
    with a LocalQueue of its name in the team's namespace (docs/queueing.md)."""
    name: DnsLabel  # the LocalQueue's name: workloads name it in kueue.x-k8s.io/queue-name
    share: str = Field(pattern=PERCENT)  # of the team's quota; the team's shares add up to 100%


class TeamQueueSpec(StrictModel):
    """The team's share of the Kueue cohort (queueing.mode kueue); see docs/queueing.md."""
    weight: float = Field(1, ge=0, le=1000)  # fair-sharing weight: share of what others leave unused
    borrowing_limit: Optional[str] = Field(None, pattern=PERCENT)  # of the nominal quota; default by tier
    lending_limit: Optional[str] = Field(None, pattern=PERCENT)  # of the nominal quota; default 100%
    pools: list[str] = Field(default_factory=list)  # pools holding the nominal GPU quota, in order; default all
    sub_teams: list[SubTeamSpec] = Field(default_factory=list)  # needs queueing.fairSharing


class TeamSpec(StrictModel):
    """One team: its namespace, GPU quota, access, queue and model services."""

    name: DnsLabel  # the team's namespace (63; not a system one: rules_teams); see docs/planner.md for the limits
    quota: QuotaSpec
    max_gpus_per_pod: Optional[int] = Field(None, ge=1)  # default: the largest GPU node's count
    priority_tier: PriorityTier = "standard"
    access: TeamAccessSpec = Field(default_factory=TeamAccessSpec)
    queue: TeamQueueSpec = Field(default_factory=TeamQueueSpec)
    container_defaults: ContainerDefaultsSpec = Field(default_factory=ContainerDefaultsSpec)
    alerting: Optional[SeverityRoutesSpec] = None  # receivers for alerts from the team's namespace
    # The CUDA version the team's images are built with: every pool the team reaches must run it (docs/cuda.md)
    min_cuda: Optional[CudaVersion] = None
    services: list[ServiceSpec] = Field(default_factory=list)  # model servers in the namespace (docs/serving.md)


GO_DURATION = r"^[1-9][0-9]{0,5}(h|m)$"  # whole hours or minutes, as Kueue's Configuration reads durations


class FairSharingSpec(StrictModel):
    """Admission fair sharing: within a team's queue, workloads of the LocalQueue that used the least GPU time
    lately go first; use decays by half every `usageHalfLife` (docs/queueing.md)."""
    usage_half_life: str = Field("168h", pattern=GO_DURATION)
    usage_sampling_interval: str = Field("5m", pattern=GO_DURATION)


class DebugQueueSpec(StrictModel):
    """A `debug` LocalQueue in every team namespace for short interactive work (docs/queueing.md)."""
    runtime_ceiling_minutes: int = Field(60, ge=1, le=1440)  # the longest a GPU job in it may run


class QueueingSpec(StrictModel):
    """Fair GPU sharing across teams: `kueue` installs Kueue and gives every team a queue (docs/queueing.md)."""
    mode: Literal["none", "kueue"] = "none"
    chart_version: Optional[str] = Field(None, pattern=r"^\d+\.\d+\.\d+$")  # required with kueue: pinned
    namespace: DnsLabel = "kueue-system"
    # Priority tier -> the longest a GPU job of a team in that tier may run, in hours (docs/workloads.md):
    # Kueue's maximum execution time with kueue, the Job's activeDeadlineSeconds without.
    runtime_ceiling_hours: dict[str, int] = Field(default_factory=dict)
    fair_sharing: Optional[FairSharingSpec] = None  # admission fair sharing between a team's LocalQueues
    debug_queue: Optional[DebugQueueSpec] = None

    @field_validator("runtime_ceiling_hours")
    @classmethod
    def _ceilings(cls, v: dict[str, int]) -> dict[str, int]:
        for tier, hours in v.items():
            if tier not in PRIORITY_TIERS:
                raise ValueError(f"{tier!r} is no priority tier; tiers: {', '.join(PRIORITY_TIERS)}")
            if not 1 <= hours <= 8760:
                raise ValueError(f"{tier}: {hours} hours; a ceiling is 1 to 8760 hours (a year)")
        return v

    @property
    def enabled(self) -> bool:
        return self.mode == "kueue"


# --- money ---

class BudgetSpec(StrictModel):
    """A monthly budget the plan's cost is held to."""

    monthly_usd: float = Field(gt=0)


class PricingSpec(StrictModel):
    """Prices the plan's cost uses instead of the catalog's (discounts, reserved rates)."""

    spot_discount: float = Field(catalog.DEFAULT_SPOT_DISCOUNT, ge=0, lt=1)
    spot_discounts: dict[str, float] = Field(default_factory=dict)  # per instance type
    on_demand_usd_per_hour: dict[str, float] = Field(default_factory=dict)  # per instance type
    # A Capacity Block's rate per instance-hour, per instance type: the offering's UpfrontFee over its hours.
    capacity_block_usd_per_hour: dict[str, float] = Field(default_factory=dict)
    # Overrides of the catalog's fixed prices. The control plane is otherwise priced by its EKS support window.
    eks_control_plane_usd_per_hour: Optional[float] = Field(None, ge=0)
    nat_gateway_usd_per_hour: Optional[float] = Field(None, ge=0)
    efs_usd_per_gb_month: Optional[float] = Field(None, ge=0)
    ebs_gp3_usd_per_gb_month: Optional[float] = Field(None, ge=0)
    fsx_lustre_usd_per_gb_month: Optional[float] = Field(None, ge=0)  # the datasets file system's tier


class PlatformSpec(StrictModel):
    """The stack file's `gpu-platform:platform` object: one environment's whole GPU platform."""

    environment: names.Environment
    cluster: ClusterSpec
    gpu_operator: GpuOperatorSpec
    cluster_autoscaler: ClusterAutoscalerSpec = Field(default_factory=ClusterAutoscalerSpec)
    karpenter: KarpenterSpec = Field(default_factory=KarpenterSpec)
    node_pools: list[NodePoolSpec] = Field(min_length=1)
    model_cache: ModelCacheSpec = Field(default_factory=ModelCacheSpec)
    efa_device_plugin: EfaDevicePluginSpec = Field(default_factory=EfaDevicePluginSpec)
    dra_driver: DraDriverSpec = Field(default_factory=DraDriverSpec)
    datasets: DatasetsSpec = Field(default_factory=DatasetsSpec)
    monitoring: MonitoringSpec = Field(default_factory=MonitoringSpec)
    logging: LoggingSpec = Field(default_factory=LoggingSpec)
    teams: list[TeamSpec] = Field(default_factory=list)
    quota_overcommit_ratio: float = Field(1.0, ge=1.0, le=10.0)
    queueing: QueueingSpec = Field(default_factory=QueueingSpec)
    budget: Optional[BudgetSpec] = None
    pricing: PricingSpec = Field(default_factory=PricingSpec)
    # AWS tags on the AWS resources the platform makes
    tags: Tags = Field(default_factory=dict)

    @property
    def prod(self) -> bool:
        return self.environment == "prod"

    def pool_protected(self, pool: NodePoolSpec) -> bool:
        return self.prod if pool.protect is None else pool.protect

    def pool_max_unavailable(self, pool: NodePoolSpec) -> Union[int, str]:
        """Nodes a rolling update replaces at a time: one in prod (GPU jobs die with their node), else 25%."""
        if pool.max_unavailable is not None:
            return pool.max_unavailable
        return 1 if self.prod else "25%"

    @cached_property  # read for every pool, team and service: worked out once per validated file
    def mig_strategy(self) -> str:
        """The cluster-wide MIG strategy: one for all MIG pools (`none` without MIG)."""
        return mig_strategy_of(self.node_pools)

    def pool_memory_limits(self) -> dict[str, tuple[float, float]]:
        """Pool -> (warning, critical) GPU memory percentages, for the pools that set their own."""
        t = self.monitoring.alerts
        return {p.name: (p.alerts.memory_used_percent or t.memory_used_percent,
                         p.alerts.memory_critical_percent or t.memory_critical_percent)
                for p in self.node_pools if p.alerts is not None}


# --- Kubernetes quantities ---

quantity_value = syntax.quantity_value  # a quantity as a number: `1Ti` -> 1099511627776.0
