"""The stack file's schema: `gpu-platform:platform` as pydantic models, plus every cross-field rule.

Structure (types, enums, ranges, unknown fields) is pydantic's job; rules that relate fields to each
other or to the catalog live in `_rules`, each reporting the field path a user must edit and what is
valid. `parse_platform` raises one `SpecError` listing every problem at once.
"""
from __future__ import annotations

import ipaddress
import re
from datetime import date
from typing import Any, Iterator, Literal, Mapping, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic.alias_generators import to_camel

from . import catalog, names
from .mig import layout_problem

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
QUANTITY = r"^\d+(\.\d+)?(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$"
EXACT_SEMVER = r"^v?\d+\.\d+\.\d+$"
ADDON_VERSION = r"^v\d+\.\d+\.\d+-eksbuild\.\d+$"
ROLE_ARN = r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+$"
RESERVED_LABEL_DOMAINS = ("nvidia.com/", f"{names.DOMAIN}/", "k8s.amazonaws.com/", "eks.amazonaws.com/",
                          "kubernetes.io/", "k8s.io/")
RESERVED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease", "gpu-operator", "monitoring")
PRIORITY_TIERS = ("critical-inference", "standard", "preemptible-batch")


class SpecError(ValueError):
    """The stack file is invalid; `problems` holds one `path: message` line per problem."""

    def __init__(self, problems: list[str]):
        self.problems = problems
        super().__init__("invalid gpu-platform:platform:\n" + "\n".join(f"  - {p}" for p in problems))


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


# --- cluster ---

class VpcSpec(_Model):
    cidr: str = "10.40.0.0/16"
    availability_zones: int = Field(3, ge=2, le=6)
    zones: Optional[list[str]] = None  # explicit zone names; default: <region>a, b, c...
    single_nat_gateway: Optional[bool] = None  # default: one per zone in prod, one otherwise

    @field_validator("cidr")
    @classmethod
    def _cidr(cls, v: str) -> str:
        net = ipaddress.ip_network(v)  # raises ValueError with a readable message
        if net.version != 4 or not 16 <= net.prefixlen <= 20:
            raise ValueError("must be an IPv4 CIDR between /16 and /20 (room for one /20 subnet per zone)")
        return v


class SystemNodesSpec(_Model):
    instance_types: list[str] = Field(default_factory=lambda: ["m6i.large"], min_length=1)
    min_size: int = Field(2, ge=1)
    max_size: int = Field(4, ge=1)
    disk_size_gib: int = Field(50, ge=20, le=16384, alias="diskSizeGiB")
    release_version: str = Field(pattern=r"^\d+\.\d+\.\d+-\d{8}$")


class CreateClusterSpec(_Model):
    vpc: Optional[VpcSpec] = None
    subnet_ids: Optional[list[str]] = None  # private subnets of an existing VPC
    endpoint_public_access: bool = True
    public_access_cidrs: list[str] = Field(default_factory=lambda: ["0.0.0.0/0"])
    addons: dict[str, str]
    system_nodes: SystemNodesSpec
    # Envelope-encrypt Kubernetes secrets with this KMS key (optional; cannot be removed once set).
    secrets_kms_key_arn: Optional[str] = Field(None, pattern=r"^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key/[\w-]+$")


class ExistingClusterSpec(_Model):
    subnet_ids: list[str] = Field(min_length=1)
    node_security_group_ids: list[str] = Field(default_factory=list)


class ClusterSpec(_Model):
    name: str = Field(pattern=r"^[a-z][a-z0-9-]{0,31}$")
    kubernetes_version: str
    create: Optional[CreateClusterSpec] = None
    existing: Optional[ExistingClusterSpec] = None
    admin_role_arns: list[str] = Field(default_factory=list)


# --- GPU operator ---

class DriverSpec(_Model):
    source: Literal["ami", "operator"]
    version: Optional[str] = Field(None, pattern=r"^\d+\.\d+(\.\d+)?$")
    kernel_module_type: Literal["auto", "open", "proprietary"] = "auto"


class WaitForCompletionSpec(_Model):
    timeout_seconds: int = Field(0, ge=0)  # 0: wait as long as it takes
    pod_selector: str = f"{names.DOMAIN}/wait-for-completion=true"


class GpuPodDeletionSpec(_Model):
    force: bool = False
    timeout_seconds: int = Field(300, ge=0)
    delete_empty_dir: bool = False


class DrainSpec(_Model):
    enable: bool = False
    force: bool = False
    pod_selector: str = ""
    timeout_seconds: int = Field(300, ge=0)
    delete_empty_dir: bool = False


class UpgradePolicySpec(_Model):
    auto_upgrade: bool = True
    max_parallel_upgrades: int = Field(1, ge=0)
    max_unavailable: Union[int, str] = "25%"
    wait_for_completion: WaitForCompletionSpec = Field(default_factory=WaitForCompletionSpec)
    gpu_pod_deletion: GpuPodDeletionSpec = Field(default_factory=GpuPodDeletionSpec)
    drain: DrainSpec = Field(default_factory=DrainSpec)


class GpuOperatorSpec(_Model):
    chart_version: str
    namespace: str = Field("gpu-operator", pattern=DNS_LABEL)
    driver: DriverSpec
    upgrade_policy: UpgradePolicySpec = Field(default_factory=UpgradePolicySpec)


class ClusterAutoscalerSpec(_Model):
    enabled: bool = True
    chart_version: str = Field("9.52.1", pattern=r"^\d+\.\d+\.\d+$")
    image_tag: Optional[str] = Field(None, pattern=r"^v\d+\.\d+\.\d+$")  # default: matches the cluster minor


# --- node pools ---

class AmiSpec(_Model):
    type: Literal[tuple(catalog.NODE_IMAGES)]  # type: ignore[valid-type]
    release_version: Optional[str] = Field(None, pattern=r"^\d+\.\d+\.\d+-\d{8}$")
    image_id: Optional[str] = Field(None, pattern=r"^ami-[0-9a-f]{8,17}$")

    @property
    def image(self) -> catalog.NodeImage:
        return catalog.NODE_IMAGES[self.type]


class SharingSpec(_Model):
    mode: Literal["none", "time-slicing", "mig"] = "none"
    replicas: Optional[int] = Field(None, ge=2, le=64)
    fail_requests_greater_than_one: bool = True
    strategy: Optional[Literal["single", "mixed"]] = None
    layout: Optional[dict[str, int]] = None


class TaintSpec(_Model):
    key: str = Field(pattern=r"^([a-z0-9.-]+/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
    value: str = ""
    effect: Literal[tuple(names.TAINT_EFFECTS)]  # type: ignore[valid-type]


class NodePoolSpec(_Model):
    name: str = Field(pattern=DNS_LABEL, max_length=40)
    instance_types: list[str] = Field(min_length=1)
    capacity_type: Literal["spot", "on-demand"]
    min_size: int = Field(ge=0)
    max_size: int = Field(ge=1, le=1000)
    ami: AmiSpec
    sharing: SharingSpec = Field(default_factory=SharingSpec)
    taints: list[TaintSpec] = Field(default_factory=list)
    labels: dict[str, str] = Field(default_factory=dict)
    disk_size_gib: int = Field(200, ge=100, le=16384, alias="diskSizeGiB")
    efa: bool = False
    critical: bool = False
    protect: Optional[bool] = None  # default: protected in prod
    max_unavailable: int = Field(1, ge=1, le=100)

    # Look-ups below are valid once `parse_platform` accepted the spec.
    @property
    def instances(self) -> list[catalog.InstanceType]:
        return [catalog.INSTANCE_TYPES[t] for t in self.instance_types]

    @property
    def gpu(self) -> catalog.GpuModel:
        return self.instances[0].gpu_model

    @property
    def gpus_per_node(self) -> int:
        return self.instances[0].gpu_count


# --- model cache, monitoring ---

class ModelCacheSpec(_Model):
    enabled: bool = False
    addon_version: Optional[str] = Field(None, pattern=ADDON_VERSION)  # aws-efs-csi-driver, pinned
    storage_gib_estimate: int = Field(500, ge=1, alias="storageGiBEstimate")  # for the cost estimate only: EFS grows as written
    pvc_size: str = Field("1Ti", pattern=QUANTITY)


class AlertThresholds(_Model):
    memory_used_percent: float = Field(90, gt=0, lt=100)
    memory_for_minutes: int = Field(5, ge=0)
    temperature_celsius: float = Field(83, gt=0, lt=120)
    temperature_for_minutes: int = Field(5, ge=0)
    idle_utilization_percent: float = Field(10, gt=0, lt=100)
    idle_minutes: int = Field(30, ge=1)
    exporter_down_minutes: int = Field(5, ge=1)
    not_detected_minutes: int = Field(10, ge=1)


class PrometheusSpec(_Model):
    mode: Literal["install", "existing", "none"] = "install"
    chart_version: str = Field("79.5.0", pattern=r"^\d+\.\d+\.\d+$")
    namespace: str = Field("monitoring", pattern=DNS_LABEL)
    selector_labels: dict[str, str] = Field(default_factory=lambda: {"release": "kube-prometheus-stack"})
    grafana_dashboard_label: str = "grafana_dashboard"


class MonitoringSpec(_Model):
    enabled: bool = True
    prometheus: PrometheusSpec = Field(default_factory=PrometheusSpec)
    alerts: AlertThresholds = Field(default_factory=AlertThresholds)


# --- teams ---

class QuotaSpec(_Model):
    gpus: int = Field(0, ge=0)
    mig_slices: dict[str, int] = Field(default_factory=dict)
    cpu: str = Field(pattern=QUANTITY)
    memory: str = Field(pattern=QUANTITY)
    pods: int = Field(200, ge=1)
    persistent_volume_claims: int = Field(20, ge=0)
    storage: str = Field("2Ti", pattern=QUANTITY)


class ContainerDefaultsSpec(_Model):
    """Requests given to containers that set none, so every pod counts against the team's quota."""
    cpu: str = Field("250m", pattern=QUANTITY)
    memory: str = Field("512Mi", pattern=QUANTITY)


class TeamAccessSpec(_Model):
    developer_role_arns: list[str] = Field(default_factory=list)
    admin_role_arns: list[str] = Field(default_factory=list)


class TeamSpec(_Model):
    name: str = Field(pattern=DNS_LABEL, max_length=40)
    quota: QuotaSpec
    max_gpus_per_pod: Optional[int] = Field(None, ge=1)  # default: the largest GPU node's count
    priority_tier: Literal[PRIORITY_TIERS] = "standard"  # type: ignore[valid-type]
    access: TeamAccessSpec = Field(default_factory=TeamAccessSpec)
    container_defaults: ContainerDefaultsSpec = Field(default_factory=ContainerDefaultsSpec)


# --- money ---

class BudgetSpec(_Model):
    monthly_usd: float = Field(gt=0)


class PricingSpec(_Model):
    spot_discount: float = Field(catalog.DEFAULT_SPOT_DISCOUNT, ge=0, lt=1)
    spot_discounts: dict[str, float] = Field(default_factory=dict)  # per instance type
    on_demand_usd_per_hour: dict[str, float] = Field(default_factory=dict)  # per instance type
    # Overrides of the catalog's fixed prices (e.g. 0.60 for a cluster in EKS extended support).
    eks_control_plane_usd_per_hour: Optional[float] = Field(None, ge=0)
    nat_gateway_usd_per_hour: Optional[float] = Field(None, ge=0)
    efs_usd_per_gb_month: Optional[float] = Field(None, ge=0)
    ebs_gp3_usd_per_gb_month: Optional[float] = Field(None, ge=0)


class PlatformSpec(_Model):
    environment: Literal["dev", "staging", "prod"]
    cluster: ClusterSpec
    gpu_operator: GpuOperatorSpec
    cluster_autoscaler: ClusterAutoscalerSpec = Field(default_factory=ClusterAutoscalerSpec)
    node_pools: list[NodePoolSpec] = Field(min_length=1)
    model_cache: ModelCacheSpec = Field(default_factory=ModelCacheSpec)
    monitoring: MonitoringSpec = Field(default_factory=MonitoringSpec)
    teams: list[TeamSpec] = Field(default_factory=list)
    quota_overcommit_ratio: float = Field(1.0, ge=1.0, le=10.0)
    budget: Optional[BudgetSpec] = None
    pricing: PricingSpec = Field(default_factory=PricingSpec)
    tags: dict[str, str] = Field(default_factory=dict)

    @property
    def prod(self) -> bool:
        return self.environment == "prod"

    def pool_protected(self, pool: NodePoolSpec) -> bool:
        return self.prod if pool.protect is None else pool.protect

    @property
    def mig_strategy(self) -> str:
        """The cluster-wide MIG strategy: one for all MIG pools (`none` without MIG)."""
        strategies = {p.sharing.strategy or "mixed" for p in self.node_pools if p.sharing.mode == "mig"}
        return strategies.pop() if len(strategies) == 1 else "none" if not strategies else "mixed"


# --- parsing and cross-field rules ---

def parse_platform(data: Any, today: date | None = None) -> PlatformSpec:
    """Validate the stack file's object; raise SpecError listing every problem with its field path."""
    if not isinstance(data, Mapping):
        raise SpecError(["gpu-platform:platform: must be an object (see the stack file contract in the README)"])
    try:
        spec = PlatformSpec.model_validate(data)
    except ValidationError as exc:
        raise SpecError([_format_error(e) for e in exc.errors()]) from None
    problems = [f"{path}: {msg}" for path, msg in _rules(spec, today or date.today())]
    if problems:
        raise SpecError(problems)
    return spec


def _path(loc: tuple) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(part)):
            out += f".{part}" if out else str(part)
        else:
            out += f'["{part}"]'
    return out or "gpu-platform:platform"


def _format_error(err: dict) -> str:
    loc = tuple(err["loc"])
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        allowed = _fields_at(loc[:-1])
        msg = "unknown field" + (f"; allowed: {', '.join(allowed)}" if allowed else "")
    elif err["type"] == "missing":
        msg = "required field is missing"
    return f"{_path(loc)}: {msg}"


def _fields_at(loc: tuple) -> list[str]:
    """The camelCase field names of the model found at `loc`, for 'unknown field' messages."""
    model: Any = PlatformSpec
    for part in loc:
        if isinstance(part, int):
            continue
        field = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        if field is None:
            return []
        model = _model_of(field.annotation)
        if model is None:
            return []
    return [f.alias or n for n, f in model.model_fields.items()]


def _model_of(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found is not None:
            return found
    return None


Problem = tuple[str, str]


def _rules(spec: PlatformSpec, today: date) -> Iterator[Problem]:
    yield from _cluster_rules(spec)
    yield from _duplicate_rules(spec)
    yield from _model_cache_rules(spec)
    yield from _access_rules(spec)
    yield from _pricing_rules(spec)
    pool_problems = [p for i, pool in enumerate(spec.node_pools) for p in _pool_rules(spec, i, pool)]
    yield from pool_problems
    if all(_gpu_known(p) for p in spec.node_pools):  # rules below look each pool's GPU up
        yield from _driver_rules(spec, today)
        yield from _mig_strategy_rules(spec)
    if not pool_problems:  # capacity is only meaningful once every pool is valid
        yield from _team_rules(spec)


def _pricing_rules(spec: PlatformSpec) -> Iterator[Problem]:
    """Price overrides must be usable: a typo in an instance type would silently keep the catalog price."""
    p = spec.pricing
    used = {t for pool in spec.node_pools for t in pool.instance_types}
    if spec.cluster.create is not None:
        used.update(spec.cluster.create.system_nodes.instance_types)
    known = set(catalog.INSTANCE_TYPES) | set(catalog.SYSTEM_INSTANCE_PRICES) | used
    for field, prices in (("spotDiscounts", p.spot_discounts), ("onDemandUsdPerHour", p.on_demand_usd_per_hour)):
        for itype, value in prices.items():
            if itype not in known:
                yield f'pricing.{field}["{itype}"]', "names no catalog instance type and none this stack uses"
            elif field == "spotDiscounts" and not 0 <= value < 1:
                yield f'pricing.{field}["{itype}"]', "must be a fraction off on-demand, >= 0 and < 1 (0.6 = 60% off)"
            elif field == "onDemandUsdPerHour" and value <= 0:
                yield f'pricing.{field}["{itype}"]', "must be a positive price in USD per hour"


def _gpu_known(pool: NodePoolSpec) -> bool:
    """The pool's instance types are all in the catalog and share one GPU model and count."""
    its = [catalog.INSTANCE_TYPES.get(t) for t in pool.instance_types]
    return None not in its and len({(it.gpu, it.gpu_count) for it in its}) == 1


def _cluster_rules(spec: PlatformSpec) -> Iterator[Problem]:
    c = spec.cluster
    if c.kubernetes_version not in catalog.KUBERNETES_VERSIONS:
        yield "cluster.kubernetesVersion", f"must be one of {', '.join(catalog.KUBERNETES_VERSIONS)}"
    if (c.create is None) == (c.existing is None):
        yield "cluster", "set exactly one of `create` (a new cluster) or `existing` (adopt one by name)"
    for j, arn in enumerate(c.admin_role_arns):
        if not re.match(ROLE_ARN, arn):
            yield f"cluster.adminRoleArns[{j}]", "must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)"
    if c.create is None:
        if c.admin_role_arns:
            yield ("cluster.adminRoleArns", "applies to clusters this stack creates; grant access on an adopted "
                   "cluster where it is managed")
        return
    if (c.create.vpc is None) == (c.create.subnet_ids is None):
        yield "cluster.create", "set exactly one of `vpc` (create a VPC) or `subnetIds` (use existing subnets)"
    missing = [a for a in catalog.CORE_ADDONS if a not in c.create.addons]
    if missing:
        yield "cluster.create.addons", f"pin every core add-on; missing: {', '.join(missing)}"
    for addon, version in c.create.addons.items():
        if addon not in catalog.CORE_ADDONS:
            yield f"cluster.create.addons.{addon}", f"unknown core add-on; allowed: {', '.join(catalog.CORE_ADDONS)}"
        elif not re.match(ADDON_VERSION, version):
            yield f"cluster.create.addons.{addon}", "must be an exact add-on version such as v1.20.4-eksbuild.1"
    sys_nodes = c.create.system_nodes
    if sys_nodes.min_size > sys_nodes.max_size:
        yield "cluster.create.systemNodes.minSize", f"must be <= maxSize ({sys_nodes.max_size})"
    if not sys_nodes.release_version.startswith(c.kubernetes_version + "."):
        yield ("cluster.create.systemNodes.releaseVersion",
               f"must be an AMI release for Kubernetes {c.kubernetes_version} (e.g. {c.kubernetes_version}.5-20251120)")
    vpc = c.create.vpc
    if vpc is not None and vpc.zones is not None and len(vpc.zones) != vpc.availability_zones:
        yield "cluster.create.vpc.zones", f"lists {len(vpc.zones)} zones but availabilityZones is {vpc.availability_zones}"


def _duplicate_rules(spec: PlatformSpec) -> Iterator[Problem]:
    for field, items in (("nodePools", spec.node_pools), ("teams", spec.teams)):
        seen: dict[str, int] = {}
        for i, item in enumerate(items):
            if item.name in seen:
                yield f"{field}[{i}].name", f"duplicate name {item.name!r} (also {field}[{seen[item.name]}])"
            seen.setdefault(item.name, i)


def _pool_rules(spec: PlatformSpec, i: int, pool: NodePoolSpec) -> Iterator[Problem]:
    at = f"nodePools[{i}]"
    unknown = [j for j, t in enumerate(pool.instance_types) if t not in catalog.INSTANCE_TYPES]
    for j in unknown:
        yield (f"{at}.instanceTypes[{j}]",
               f"unknown GPU instance type {pool.instance_types[j]!r}; known: {', '.join(catalog.INSTANCE_TYPES)}")
    if unknown:
        return
    if pool.name == names.SYSTEM_ROLE:
        yield f"{at}.name", f"{names.SYSTEM_ROLE!r} is the system node group's name; choose another pool name"
    if len(set(pool.instance_types)) != len(pool.instance_types):
        yield f"{at}.instanceTypes", "lists an instance type twice"
    shapes = {(it.gpu, it.gpu_count) for it in pool.instances}
    if len(shapes) > 1:
        found = ", ".join(f"{t} ({it.gpu_count} x {it.gpu})" for t, it in zip(pool.instance_types, pool.instances))
        yield (f"{at}.instanceTypes",
               f"every instance type in a pool needs the same GPU model and count (the autoscaler sizes the "
               f"group from the first one); found {found}")
        return
    if pool.min_size > pool.max_size:
        yield f"{at}.minSize", f"must be <= maxSize ({pool.max_size})"
    if len(spec.cluster.name) + 1 + len(pool.name) > catalog.EKS_NODE_GROUP_NAME_MAX:
        yield f"{at}.name", f"cluster name + '-' + pool name must fit {catalog.EKS_NODE_GROUP_NAME_MAX} characters"
    if pool.efa and any(it.efa_interfaces == 0 for it in pool.instances):
        no_efa = [it.name for it in pool.instances if it.efa_interfaces == 0]
        yield f"{at}.efa", f"{', '.join(no_efa)} have no EFA; EFA is available on p4d, p4de, p5, p5e, p5en"
    if pool.critical and pool.capacity_type == "spot":
        yield f"{at}.capacityType", "a critical pool must be on-demand (spot capacity can be reclaimed at any time)"
    for j, taint in enumerate(pool.taints):
        if taint.key == names.GPU_TAINT_KEY:
            yield f"{at}.taints[{j}].key", f"{names.GPU_TAINT_KEY} is always set on GPU pools; list only extra taints"
    for key in pool.labels:
        if key.startswith(RESERVED_LABEL_DOMAINS):
            yield f"{at}.labels", f"{key!r} is managed by the platform; reserved prefixes: {', '.join(RESERVED_LABEL_DOMAINS)}"
    yield from _ami_rules(spec, at, pool)
    yield from _sharing_rules(at, pool)


def _ami_rules(spec: PlatformSpec, at: str, pool: NodePoolSpec) -> Iterator[Problem]:
    image, source = pool.ami.image, spec.gpu_operator.driver.source
    if not image.supported:
        yield f"{at}.ami.type", f"{image.key} is not supported: {image.note}"
        return
    if image.driver_owner != source:
        if source == "operator":
            yield (f"{at}.ami.type", f"{image.key} ships its own NVIDIA driver; with gpuOperator.driver.source "
                   "operator every GPU pool must use UBUNTU_22_04 or UBUNTU_24_04 (NVIDIA supports operator drivers "
                   "on EKS only on Ubuntu)")
        else:
            yield (f"{at}.ami.type", f"{image.key} has no NVIDIA driver; with gpuOperator.driver.source ami use "
                   "AL2023_x86_64_NVIDIA or BOTTLEROCKET_x86_64_NVIDIA, or set source: operator")
    if image.eks_ami_type == "CUSTOM":
        if pool.ami.image_id is None:
            yield f"{at}.ami.imageId", f"pin the {image.key} EKS image id (ami-...); look it up at {image.ssm_parameter}"
        if pool.ami.release_version is not None:
            yield f"{at}.ami.releaseVersion", "applies to EKS-optimized AMI types only; Ubuntu pools pin imageId"
    else:
        if pool.ami.image_id is not None:
            yield f"{at}.ami.imageId", f"{image.key} is selected by releaseVersion; imageId is for Ubuntu pools"
        release = pool.ami.release_version
        k8s = spec.cluster.kubernetes_version
        if release is None:
            yield (f"{at}.ami.releaseVersion", f"pin the AMI release (e.g. {k8s}.5-20251120): it fixes the driver "
                   "branch, and 'latest' replaces nodes whenever AWS publishes an AMI")
        elif not release.startswith(k8s + "."):
            yield f"{at}.ami.releaseVersion", f"{release} is not a release for Kubernetes {k8s}"


def _sharing_rules(at: str, pool: NodePoolSpec) -> Iterator[Problem]:
    s, gpu, image = pool.sharing, pool.gpu, pool.ami.image
    if s.mode != "time-slicing" and s.replicas is not None:
        yield f"{at}.sharing.replicas", "applies to mode time-slicing only"
    if s.mode != "mig" and (s.layout is not None or s.strategy is not None):
        yield f"{at}.sharing.layout", "layout and strategy apply to mode mig only"
    if s.mode != "none" and not image.operator_device_plugin:
        yield f"{at}.sharing.mode", f"{image.key} runs its own device plugin; GPU sharing is configured for AL2023 and Ubuntu pools only"
        return
    if s.mode == "time-slicing" and s.replicas is None:
        yield f"{at}.sharing.replicas", "time-slicing needs replicas (>= 2 pods per GPU)"
    if s.mode != "mig":
        return
    if not gpu.mig_capable:
        capable = sorted({it.name for it in catalog.INSTANCE_TYPES.values() if it.gpu_model.mig_capable})
        yield f"{at}.sharing.mode", f"{gpu.key} has no MIG; MIG-capable instance types: {', '.join(capable)}"
        return
    if not image.operator_mig:
        yield f"{at}.sharing.mode", f"MIG through the GPU Operator is not supported on {image.key}"
    if not s.layout:
        yield f"{at}.sharing.layout", f"give the MIG layout of one GPU, e.g. {{\"{next(iter(gpu.mig_profiles))}\": 7}}"
        return
    problem = layout_problem(gpu, s.layout)
    if problem:
        yield f"{at}.sharing.layout", f"does not fit one {gpu.key}: {problem}"
    elif (s.strategy or "mixed") == "single" and len([n for n in s.layout.values() if n]) != 1:
        yield f"{at}.sharing.strategy", "single exposes slices as nvidia.com/gpu and needs one profile per GPU; use mixed"


def _driver_rules(spec: PlatformSpec, today: date) -> Iterator[Problem]:
    op = spec.gpu_operator
    chart = catalog.GPU_OPERATOR_CHARTS.get(op.chart_version)
    if chart is None:
        yield "gpuOperator.chartVersion", f"must be one of {', '.join(catalog.GPU_OPERATOR_CHARTS)}"
        return
    drv = op.driver
    if drv.source == "ami":
        if drv.version is not None:
            yield "gpuOperator.driver.version", "the AMI owns the driver; pin ami.releaseVersion on pools instead"
        return
    if drv.version is None:
        yield "gpuOperator.driver.version", f"pin an exact driver; {chart.version} supports {', '.join(chart.supported_drivers)}"
        return
    if spec.cluster.kubernetes_version not in chart.kubernetes_versions:
        yield ("cluster.kubernetesVersion", f"operator-owned drivers on EKS are supported on Kubernetes "
               f"{', '.join(chart.kubernetes_versions)}")
    if drv.version not in chart.supported_drivers:
        yield ("gpuOperator.driver.version",
               f"{drv.version} is not supported by gpu-operator {chart.version}; choose one of {', '.join(chart.supported_drivers)}")
    key = catalog.version_key(drv.version)
    for i, pool in enumerate(spec.node_pools):
        gpu = pool.gpu
        if key < catalog.version_key(gpu.min_driver):
            yield "gpuOperator.driver.version", f"{gpu.key} (nodePools[{i}]) needs driver >= {gpu.min_driver}"
        for profile in (pool.sharing.layout or {}) if pool.sharing.mode == "mig" else {}:
            need = gpu.profile_min_driver.get(profile)
            if need and key < catalog.version_key(need):
                yield "gpuOperator.driver.version", f"MIG profile {profile} on {gpu.key} (nodePools[{i}]) needs driver >= {need}"
    branch = catalog.DRIVER_BRANCHES.get(catalog.driver_branch(drv.version))
    if spec.prod and branch is not None and branch.eol < today:
        yield "gpuOperator.driver.version", f"branch R{branch.branch} reached end of life on {branch.eol}; prod needs a supported branch"


def _mig_strategy_rules(spec: PlatformSpec) -> Iterator[Problem]:
    mig = [(i, p) for i, p in enumerate(spec.node_pools) if p.sharing.mode == "mig"]
    strategies = {p.sharing.strategy or "mixed" for _, p in mig}
    if len(strategies) > 1:
        i = mig[-1][0]
        yield f"nodePools[{i}].sharing.strategy", "the MIG strategy is cluster-wide: use the same strategy on every MIG pool"


def _team_rules(spec: PlatformSpec) -> Iterator[Problem]:
    from .capacity import platform_capacity  # capacity reads the spec models defined above

    capacity = platform_capacity(spec).total
    offered = sorted(r.removeprefix(names.MIG_RESOURCE_PREFIX) for r in capacity if r.startswith(names.MIG_RESOURCE_PREFIX))
    # The operator's and Prometheus's namespaces are configurable: reserve the ones this stack uses too.
    reserved = list(dict.fromkeys((*RESERVED_NAMESPACES, spec.gpu_operator.namespace, spec.monitoring.prometheus.namespace)))
    for i, team in enumerate(spec.teams):
        at = f"teams[{i}]"
        if team.name in reserved:
            yield f"{at}.name", f"{team.name!r} is a system namespace; reserved: {', '.join(reserved)}"
        for profile in team.quota.mig_slices:
            if profile not in offered:
                yield (f"{at}.quota.migSlices", f"no pool provides nvidia.com/mig-{profile} (MIG slices are per-profile "
                       f"resources under the mixed strategy); offered: {', '.join(offered) or 'none'}")
        for role_field, arns in (("developerRoleArns", team.access.developer_role_arns),
                                 ("adminRoleArns", team.access.admin_role_arns)):
            for j, arn in enumerate(arns):
                if not re.match(ROLE_ARN, arn):
                    yield f"{at}.access.{role_field}[{j}]", "must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)"
    yield from _overcommit_rules(spec, capacity)


def _model_cache_rules(spec: PlatformSpec) -> Iterator[Problem]:
    cache = spec.model_cache
    if not cache.enabled:
        return
    if cache.addon_version is None:
        yield ("modelCache.addonVersion", f"pin the {catalog.EFS_CSI_ADDON} add-on version when the cache is enabled "
               "(e.g. v2.1.13-eksbuild.1)")
    size = quantity_value(cache.pvc_size)
    for i, team in enumerate(spec.teams):  # each team's cache claim is counted by its own quota
        if team.quota.persistent_volume_claims < 1:
            yield f"teams[{i}].quota.persistentVolumeClaims", "must be >= 1: the team's model-cache claim counts against it"
        if quantity_value(team.quota.storage) < size:
            yield (f"teams[{i}].quota.storage", f"must be >= modelCache.pvcSize ({cache.pvc_size}): the team's "
                   "model-cache claim counts against it")


def _access_rules(spec: PlatformSpec) -> Iterator[Problem]:
    admins = set(spec.cluster.admin_role_arns)
    for i, team in enumerate(spec.teams):
        for role_field, arns in (("developerRoleArns", team.access.developer_role_arns),
                                 ("adminRoleArns", team.access.admin_role_arns)):
            for j, arn in enumerate(arns):
                if arn in admins:
                    yield (f"teams[{i}].access.{role_field}[{j}]", "is a cluster admin (cluster.adminRoleArns); an IAM "
                           "role has one access entry per cluster, so list it in one place")


_QUANTITY_SUFFIXES = {"": 1, "m": 0.001, "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
                      "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}


def quantity_value(quantity: str) -> float:
    """A Kubernetes quantity (already matched by QUANTITY) as a number: `1Ti` -> 1099511627776."""
    number, suffix = re.fullmatch(r"(\d+(?:\.\d+)?)([a-zA-Z]*)", quantity).groups()
    return float(number) * _QUANTITY_SUFFIXES[suffix]


def _overcommit_rules(spec: PlatformSpec, capacity: Mapping[str, int]) -> Iterator[Problem]:
    from .capacity import team_quota_totals

    ratio = spec.quota_overcommit_ratio
    for res, asked in team_quota_totals(spec).items():
        offered = capacity.get(res, 0)
        if not offered and res.startswith(names.MIG_RESOURCE_PREFIX):
            continue  # reported above: no pool offers that profile
        if asked > offered * ratio:
            yield ("teams", f"team quotas ask for {asked} {res} but the pools provide {offered} at max size "
                   f"(quotaOvercommitRatio {ratio:g} allows {int(offered * ratio)}); raise maxSize or the ratio, or lower quotas")
