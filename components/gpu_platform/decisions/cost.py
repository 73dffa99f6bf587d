"""The cost model: what a stack's GPU pools and platform pieces cost per hour and per month, as an estimate.

Plain Python over the catalog's price table. It prices plain pool facts, so the same arithmetic serves
the planner (facts from the stack file) and the policy pack (facts from the node groups a program
registered). Conventions, explained to users in docs/cost.md:
- A pool is priced at its FIRST instance type, for its floor and its ceiling alike: managed node groups
  launch on-demand capacity in list order and the Cluster Autoscaler sizes the group from that type.
  The others are fallbacks with the same GPUs; a pool running on a pricier fallback costs more.
- Spot = on-demand x (1 - discount); the discount is per instance type if the stack gives one, else the
  stack's, else the catalog's default. Overridden on-demand prices are discounted the same way.
- A Capacity Block is paid up front for every hour of its window, used or not, once, when it is bought
  (EC2 user guide, Capacity Blocks pricing and billing). Two figures: its fee (rate x instances x the
  window's hours) in the month it is charged, which is what a monthly budget is held to; and its amortised
  share, the rate over the window's hours inside the month of the as-of day, the pool's monthly figure. The
  charge falls in the month of `reservation.quotedOn` (the day the offering was quoted and bought), else of
  the block's start. The rate is the block's quote (`reservation.quotedUsdPerHour`), else the stack's
  per-type rate, else the catalog's dated planning figure. Without a known window (a node group read back
  by the policy pack without the plan's figures) it is priced for a whole month. An On-Demand Capacity
  Reservation bills its instances at the on-demand rate whether nodes run or not: a pool targeting one with a
  known instanceCount costs at least that many nodes.
- A month is catalog.HOURS_PER_MONTH hours. Storage is priced per GB-month (GiB, as AWS bills volumes).
- A figure without a price is None ("unknown"), never a guess; totals add the known figures and name
  the unpriced items.
- Warm capacity (`nodePools[].warm`) is nodes kept running for work that must start at once: a pool's floor is
  its minSize or its warm nodes, whichever is more, and its warm figure is those nodes for a whole month. At
  max size nothing changes: the autoscaler never grows a pool past maxSize, so the budget already counts them.
- The EKS control plane is priced by the support window its Kubernetes version is in on the as-of date
  (decisions/lifecycle.py): standard, or extended support past the end of standard support.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import date
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional

from gpu_platform.decisions.capacity import node_resources, service_floor_nodes
from gpu_platform.decisions.datasets import throughput
from gpu_platform.decisions.karpenter import os_volume_gib
from gpu_platform.decisions.log_volume import log_volumes
from gpu_platform.decisions.metrics_storage import stack_metrics_storage
from gpu_platform.decisions.lifecycle import control_plane_price
from gpu_platform.decisions.network import nat_gateway_count as network_nat_count
from gpu_platform.decisions.reservations import hours_in_month, is_block, reservation, window
from gpu_platform.decisions.warm import warm_nodes
from gpu_platform.facts import catalog, names
from gpu_platform.facts.field_path import FieldPath

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec, PlatformSpec, PricingSpec

HOURS = catalog.HOURS_PER_MONTH
FSX_LUSTRE = "fsxLustre"  # price override key (pricing.fsxLustreUsdPerGbMonth)
ON_DEMAND_PRICES = FieldPath.of("pricing.onDemandUsdPerHour")  # where a price the catalog lacks is set
FSX_DATASETS = "fsxDatasets"  # fixed item key
SPOT, ON_DEMAND, CAPACITY_BLOCK = "spot", "on-demand", "capacity-block"
OVERRIDE_SOURCE = "stack file (pricing)"
OVERRIDE_AS_OF = "stack"
QUOTED_SOURCE = "stack file (reservation {id} quotedUsdPerHour)"

# What no figure here covers; printed with every estimate.
EXCLUSIONS = (
    "NAT gateway data processing and all data transfer",
    "EFS throughput and request charges (storage only)",
    "FSx for Lustre backups and S3 requests of its data repository association",
    "EBS snapshots, extra IOPS or throughput, load balancers, CloudWatch metrics and alarms",
    "log ingestion beyond logging.ingestGbPerDay (its per-namespace estimate is counted)",
    "taxes, support plans, savings plans and reserved-instance discounts",
)


METRICS_VOLUMES = "ebsMetricsVolumes"
LOG_INGESTION, LOG_STORAGE = "cloudwatchLogsIngestion", "cloudwatchLogsStorage"  # fixed item keys and price keys

# --- prices ---

@dataclass(frozen=True)
class Quote:
    """One price with where it came from."""

    usd: float
    source: str
    as_of: str


# Fixed platform prices by key: the catalog figure a stack may override.
FIXED_PRICES: Mapping[str, catalog.Price] = {
    "eksControlPlane": catalog.EKS_CONTROL_PLANE,
    "natGateway": catalog.NAT_GATEWAY,
    "efsStandard": catalog.EFS_STANDARD_GB_MONTH,
    "ebsGp3": catalog.EBS_GP3_GB_MONTH,
    LOG_INGESTION: catalog.CLOUDWATCH_LOGS_INGEST,
    LOG_STORAGE: catalog.CLOUDWATCH_LOGS_STORAGE,
}


@dataclass(frozen=True)
class Pricing:
    spot_discount: float = catalog.DEFAULT_SPOT_DISCOUNT
    spot_discounts: Mapping[str, float] = field(default_factory=dict)  # per instance type
    on_demand_usd_per_hour: Mapping[str, float] = field(default_factory=dict)  # per instance type
    fixed_overrides: Mapping[str, float] = field(default_factory=dict)  # FIXED_PRICES key -> usd
    capacity_block_usd_per_hour: Mapping[str, float] = field(default_factory=dict)  # per instance type

    @classmethod
    def from_spec(cls, pricing: "PricingSpec") -> "Pricing":
        fixed = {"eksControlPlane": pricing.eks_control_plane_usd_per_hour,
                 "natGateway": pricing.nat_gateway_usd_per_hour,
                 "efsStandard": pricing.efs_usd_per_gb_month,
                 "ebsGp3": pricing.ebs_gp3_usd_per_gb_month,
                 FSX_LUSTRE: pricing.fsx_lustre_usd_per_gb_month}
        return cls(pricing.spot_discount, dict(pricing.spot_discounts), dict(pricing.on_demand_usd_per_hour),
                   {k: v for k, v in fixed.items() if v is not None}, dict(pricing.capacity_block_usd_per_hour))

    def capacity_block(self, instance_type: str) -> Optional[Quote]:
        """A Capacity Block's USD per instance-hour: the stack's override, else the catalog's planning figure."""
        if instance_type in self.capacity_block_usd_per_hour:
            return Quote(self.capacity_block_usd_per_hour[instance_type], OVERRIDE_SOURCE, OVERRIDE_AS_OF)
        price = catalog.CAPACITY_BLOCK_PRICES.get(instance_type)
        return Quote(price.usd_per_hour, price.source, price.as_of) if price else None

    def on_demand(self, instance_type: str) -> Optional[Quote]:
        """On-demand USD per node-hour: the stack's override, else the catalog (GPU or system types)."""
        if instance_type in self.on_demand_usd_per_hour:
            return Quote(self.on_demand_usd_per_hour[instance_type], OVERRIDE_SOURCE, OVERRIDE_AS_OF)
        gpu_type = catalog.INSTANCE_TYPES.get(instance_type)
        price = gpu_type.price if gpu_type else catalog.SYSTEM_INSTANCE_PRICES.get(instance_type)
        return Quote(price.usd_per_hour, price.source, price.as_of) if price else None

    def discount(self, instance_type: str, capacity_type: str) -> float:
        if capacity_type != SPOT:
            return 0.0
        return self.spot_discounts.get(instance_type, self.spot_discount)

    def node_hourly(self, instance_type: str, capacity_type: str) -> Optional[float]:
        """What one node costs per hour at this capacity type; None without a price."""
        quote = self.capacity_block(instance_type) if capacity_type == CAPACITY_BLOCK else self.on_demand(instance_type)
        return None if quote is None else quote.usd * (1 - self.discount(instance_type, capacity_type))

    def fixed(self, key: str) -> Quote:
        if key in self.fixed_overrides:
            return Quote(self.fixed_overrides[key], OVERRIDE_SOURCE, OVERRIDE_AS_OF)
        price = FIXED_PRICES[key]
        return Quote(price.usd_per_hour, price.source, price.as_of)

    def control_plane(self, kubernetes_version: Optional[str], as_of: date) -> Quote:
        """The EKS control plane's hourly price: the stack's override, else the price of the support window
        the version is in on `as_of`."""
        if "eksControlPlane" in self.fixed_overrides:
            return self.fixed("eksControlPlane")
        price = control_plane_price(kubernetes_version, as_of)
        return Quote(price.usd_per_hour, price.source, price.as_of)


# --- pools ---

@dataclass(frozen=True)
class PoolFacts:
    """What a node group is, as far as its bill goes."""

    name: str
    instance_types: tuple[str, ...]
    capacity_type: str  # spot | on-demand | capacity-block
    min_size: int
    max_size: int
    reserved: int = 0  # instances its reservation bills whether nodes run or not (0: none known)
    block_hours: Optional[float] = None  # a Capacity Block's hours in the priced month (None: a whole month)
    window_hours: Optional[float] = None  # a Capacity Block's whole window (None: a month)
    charge_month: Optional[str] = None  # YYYY-MM its fee is charged in (None: the priced month)
    quote: Optional[Quote] = None  # the rate the block was quoted at (None: the stack's or the catalog's)
    serving_floor: int = 0  # nodes its services' minimum replicas keep running (teams[].services[])

    @property
    def nodes_at_min(self) -> int:
        return min(self.max_size, max(self.min_size, self.serving_floor))
    # Nodes placeholders hold ready (nodePools[].warm): the pool never runs fewer. Not a node group's input, so
    # not compared: a pool read back from its node group has the same bill at max size.
    warm: int = field(default=0, compare=False)

    @property
    def priced_type(self) -> str:
        return self.instance_types[0]


def pool_facts(pool: "NodePoolSpec", as_of: date) -> PoolFacts:
    """A stack file pool's bill facts; a Capacity Block's hours are those of its window in `as_of`'s month."""
    r = pool.reservation
    reserved = (reservation(pool).instance_count or pool.max_size) if is_block(pool) else (r.instance_count or 0) if r else 0
    facts = PoolFacts(pool.name, tuple(pool.instance_types), pool.capacity_type, pool.min_size, pool.max_size, reserved,
                      warm=warm_nodes(pool))
    if not is_block(pool):
        return facts
    block = reservation(pool)
    start, end = window(pool)
    quote = None
    if block.quoted_usd_per_hour is not None:
        quote = Quote(block.quoted_usd_per_hour, QUOTED_SOURCE.format(id=block.id),
                      block.quoted_on.isoformat() if block.quoted_on else OVERRIDE_AS_OF)
    return replace(facts, block_hours=hours_in_month(pool, as_of), window_hours=(end - start).total_seconds() / 3600,
                   charge_month=f"{block.quoted_on or start:%Y-%m}", quote=quote)


def pool_facts_from_spec(spec: "PlatformSpec", as_of: Optional[date] = None) -> list[PoolFacts]:
    """Each pool's bill facts; at least the nodes its services' minimum replicas keep running count at min."""
    out = []
    for p in spec.node_pools:
        out.append(replace(pool_facts(p, as_of or date.today()), serving_floor=service_floor_nodes(spec, p)))
    return out


NODE_GROUP_CAPACITY = {"SPOT": SPOT, "CAPACITY_BLOCK": CAPACITY_BLOCK}  # anything else is billed on-demand


def pool_facts_from_node_group_inputs(inputs: Mapping[str, Any], template_types: tuple[str, ...] = (),
                                      blocks: Optional[Mapping[str, Any]] = None) -> PoolFacts:
    """Facts of a registered `aws:eks/nodeGroup:NodeGroup` from its inputs (camelCase, as sent to the engine).

    The pool's name is its pool label when set (GPU pools carry it), else the node group name. A group that
    names its instance type in its launch template (Capacity Blocks) is priced at `template_types`. `blocks`
    gives, by pool name, the hours and instances of a Capacity Block's window in the priced month (as the
    plan computed them); without them a block is priced for a whole month at max size.
    """
    types = inputs.get("instanceTypes") or list(template_types)
    if not types:
        raise ValueError("node group has no instanceTypes input; the cost model prices the listed instance types")
    scaling = inputs.get("scalingConfig") or {}
    name = (inputs.get("labels") or {}).get(names.POOL_LABEL) or inputs.get("nodeGroupName") or "node-group"
    capacity = NODE_GROUP_CAPACITY.get(str(inputs.get("capacityType", "ON_DEMAND")).upper(), ON_DEMAND)
    max_size = int(scaling.get("maxSize", 0))
    block = (blocks or {}).get(name) or {} if capacity == CAPACITY_BLOCK else {}
    quote = Quote(float(block["usdPerHour"]), str(block.get("source", OVERRIDE_SOURCE)),
                  str(block.get("asOf", OVERRIDE_AS_OF))) if "usdPerHour" in block else None
    return PoolFacts(name, tuple(types), capacity, int(scaling.get("minSize", 0)), max_size,
                     int(block.get("instances", max_size)) if capacity == CAPACITY_BLOCK else 0,
                     float(block["hours"]) if "hours" in block else None,
                     float(block["windowHours"]) if "windowHours" in block else None,
                     str(block["chargeMonth"]) if "chargeMonth" in block else None, quote)


@dataclass(frozen=True)
class PoolEstimate:
    facts: PoolFacts
    on_demand: Optional[Quote]  # per node-hour of the priced type
    discount: float  # fraction off on-demand; 0 for on-demand pools
    gpus_per_node: int  # 0 for a type the GPU catalog does not know
    gpu: Optional[str]  # GPU model key
    block: Optional[Quote] = None  # a Capacity Block's rate per instance-hour (capacity-block pools)

    @property
    def name(self) -> str:
        return self.facts.name

    @property
    def is_block(self) -> bool:
        return self.facts.capacity_type == CAPACITY_BLOCK

    @property
    def quote(self) -> Optional[Quote]:
        """The price the pool is billed at: the block's rate, or the on-demand price."""
        return self.block if self.is_block else self.on_demand

    @property
    def usd_per_node_hour(self) -> Optional[float]:
        if self.is_block:
            return None if self.block is None else self.block.usd
        return None if self.on_demand is None else self.on_demand.usd * (1 - self.discount)

    def hourly(self, nodes: int) -> Optional[float]:
        """Nodes running for an hour, and the reserved instances billed beside them (ODCRs)."""
        rate = self.usd_per_node_hour
        return None if rate is None else rate * max(nodes, self.facts.reserved)

    @property
    def block_hours(self) -> float:
        """The hours of the block billed in the priced month (a whole month when its window is not known)."""
        hours = self.facts.block_hours
        return HOURS if hours is None else hours

    @property
    def block_monthly(self) -> Optional[float]:
        """A Capacity Block's bill for the month: every reserved instance for every hour of its window in it."""
        rate = self.usd_per_node_hour
        return None if rate is None else rate * self.facts.reserved * self.block_hours

    @property
    def block_fee(self) -> Optional[float]:
        """A Capacity Block's whole fee, charged once, up front: every reserved instance for its whole window."""
        rate = self.usd_per_node_hour
        hours = HOURS if self.facts.window_hours is None else self.facts.window_hours
        return None if rate is None or not self.is_block else rate * self.facts.reserved * hours

    @property
    def floor_nodes(self) -> int:
        """What the pool runs with no work: minSize, or more where its services' minimum replicas or its
        placeholders (nodePools[].warm) hold more."""
        return max(self.facts.nodes_at_min, self.facts.warm)

    @property
    def warm_monthly(self) -> Optional[float]:
        """What holding the warm nodes costs a month: each is a running node, idle until work preempts it."""
        rate = self.usd_per_node_hour
        return None if rate is None else rate * self.facts.warm * HOURS

    @property
    def hourly_at_min(self) -> Optional[float]:
        return _hourly(self.block_monthly) if self.is_block else self.hourly(self.floor_nodes)

    @property
    def hourly_at_max(self) -> Optional[float]:
        return _hourly(self.block_monthly) if self.is_block else self.hourly(self.facts.max_size)

    @property
    def monthly_at_min(self) -> Optional[float]:
        return self.block_monthly if self.is_block else _monthly(self.hourly_at_min)

    @property
    def monthly_at_max(self) -> Optional[float]:
        return self.block_monthly if self.is_block else _monthly(self.hourly_at_max)

    @property
    def usd_per_gpu_hour(self) -> Optional[float]:
        rate = self.usd_per_node_hour
        return None if rate is None or not self.gpus_per_node else rate / self.gpus_per_node


def estimate_pool(facts: PoolFacts, pricing: Pricing) -> PoolEstimate:
    gpu_type = catalog.INSTANCE_TYPES.get(facts.priced_type)
    block = (facts.quote or pricing.capacity_block(facts.priced_type)) if facts.capacity_type == CAPACITY_BLOCK else None
    return PoolEstimate(facts, pricing.on_demand(facts.priced_type),
                        pricing.discount(facts.priced_type, facts.capacity_type),
                        gpu_type.gpu_count if gpu_type else 0, gpu_type.gpu if gpu_type else None, block)


# --- fixed platform items ---

@dataclass(frozen=True)
class FixedItem:
    """A cost the platform adds beside the GPU pools. Quantities at the stack's floor and ceiling."""

    key: str
    label: str
    unit: str  # "hour": usd per unit-hour | "GB-month": usd per GB per month
    what: str  # one unit, e.g. "m6i.large node"
    quantity_at_min: float
    quantity_at_max: float
    price: Optional[Quote]  # None: no price known
    included: bool = True  # False: billed, but not to this stack (shown with a note)
    note: str = ""

    def monthly(self, quantity: float) -> Optional[float]:
        if not self.included:
            return 0.0
        if self.price is None:
            return None
        per_unit = self.price.usd * (HOURS if self.unit == "hour" else 1)  # else per GB-month or per GB
        return quantity * per_unit

    @property
    def monthly_at_min(self) -> Optional[float]:
        return self.monthly(self.quantity_at_min)

    @property
    def monthly_at_max(self) -> Optional[float]:
        return self.monthly(self.quantity_at_max)

    @property
    def hourly_at_min(self) -> Optional[float]:
        return _hourly(self.monthly_at_min)

    @property
    def hourly_at_max(self) -> Optional[float]:
        return _hourly(self.monthly_at_max)


def nat_gateway_count(spec: "PlatformSpec") -> int:
    """NAT gateways the stack creates (none on existing subnets); decisions/network.py owns the rule."""
    create = spec.cluster.create
    if create is None or create.vpc is None:
        return 0
    return network_nat_count(create.vpc, spec.prod, create.vpc.availability_zones)


def fixed_items_from_spec(spec: "PlatformSpec", pricing: Pricing, as_of: Optional[date] = None) -> list[FixedItem]:
    return [item for item in (_eks(spec, pricing, as_of or date.today()), _nat(spec, pricing),
                              _system_nodes(spec, pricing), _efs(spec, pricing), _ebs(spec, pricing),
                              _metrics_volumes(spec, pricing), _fsx(spec, pricing)) if item is not None
            ] + _logs(spec, pricing)


def _eks(spec: "PlatformSpec", pricing: Pricing, as_of: date) -> FixedItem:
    adopted = spec.cluster.create is None
    return FixedItem("eksControlPlane", "EKS control plane", "hour", "cluster", 1, 1,
                     pricing.control_plane(spec.cluster.kubernetes_version, as_of), included=not adopted,
                     note="adopted cluster: billed to its owner, not to this stack" if adopted else "")


def _nat(spec: "PlatformSpec", pricing: Pricing) -> FixedItem:
    count = nat_gateway_count(spec)
    note = "" if count else "existing subnets: their NAT gateways are not created by this stack"
    return FixedItem("natGateways", "NAT gateways", "hour", "NAT gateway", count, count, pricing.fixed("natGateway"),
                     included=bool(count), note=note)


def _system_nodes(spec: "PlatformSpec", pricing: Pricing) -> FixedItem:
    create = spec.cluster.create
    if create is None:
        return FixedItem("systemNodes", "System nodes", "hour", "node", 0, 0, None, included=False,
                         note="adopted cluster: its system nodes are not managed by this stack")
    sys_nodes = create.system_nodes
    itype = sys_nodes.instance_types[0]
    quote = pricing.on_demand(itype)
    note = "" if quote else f"no catalog price for {itype}; set {ON_DEMAND_PRICES.key(itype)}"
    return FixedItem("systemNodes", "System nodes", "hour", f"{itype} node", sys_nodes.min_size, sys_nodes.max_size,
                     quote, note=note)


def _efs(spec: "PlatformSpec", pricing: Pricing) -> Optional[FixedItem]:
    cache = spec.model_cache
    if not cache.enabled:
        return None
    gib = cache.storage_gib_estimate
    return FixedItem("efsModelCache", "EFS model cache", "GB-month", "GB stored", gib, gib, pricing.fixed("efsStandard"),
                     note="modelCache.storageGiBEstimate; EFS bills what is stored")


def fsx_lustre_item(deployment_type: str, throughput: Optional[int], gib: float, pricing: Pricing) -> FixedItem:
    """The datasets file system: provisioned SSD storage at its deployment type's and throughput's price."""
    quote: Optional[Quote]
    if FSX_LUSTRE in pricing.fixed_overrides:
        quote = Quote(pricing.fixed_overrides[FSX_LUSTRE], OVERRIDE_SOURCE, OVERRIDE_AS_OF)
    else:
        tier = catalog.FSX_LUSTRE_DEPLOYMENTS.get(deployment_type)
        price = tier.prices.get(throughput or 0) if tier else None
        quote = Quote(price.usd_per_hour, price.source, price.as_of) if price else None
    tier_text = f"{deployment_type}{f', {throughput} MB/s/TiB' if throughput else ''}"
    return FixedItem(FSX_DATASETS, "FSx for Lustre datasets", "GB-month", "GB provisioned", gib, gib, quote,
                     note=f"{tier_text}; billed as provisioned")


def _fsx(spec: "PlatformSpec", pricing: Pricing) -> Optional[FixedItem]:
    fsx = spec.datasets.fsx_lustre
    if fsx is None:
        return None
    return fsx_lustre_item(fsx.deployment_type, throughput(fsx), fsx.storage_capacity_gib, pricing)


def _ebs(spec: "PlatformSpec", pricing: Pricing) -> FixedItem:
    """gp3 root volumes of every node the stack creates: disk size x nodes, at min and at max size."""
    groups = [(p.name, p.disk_size_gib + os_volume_gib(p), p.min_size, p.max_size) for p in spec.node_pools]
    if spec.cluster.create is not None:
        s = spec.cluster.create.system_nodes
        groups.insert(0, ("system", s.disk_size_gib, s.min_size, s.max_size))
    note = "; ".join(f"{name} {gib} GiB x {lo}-{hi}" for name, gib, lo, hi in groups)
    return FixedItem("ebsRootVolumes", "EBS gp3 root volumes", "GB-month", "GB provisioned",
                     sum(g * lo for _, g, lo, _ in groups), sum(g * hi for _, g, _, hi in groups),
                     pricing.fixed("ebsGp3"), note=note)


def _metrics_volumes(spec: "PlatformSpec", pricing: Pricing) -> Optional[FixedItem]:
    """Prometheus' and Alertmanager's gp3 volumes (none when the stack keeps metrics in the pod)."""
    storage = stack_metrics_storage(spec)
    if storage is None or not storage.persistent:
        return None
    note = (f"Prometheus {storage.prometheus_gib} GiB for {storage.retention} (estimate {storage.estimate_gib} GiB "
            f"for {storage.series} series), Alertmanager {storage.alertmanager_gib} GiB")
    return FixedItem(METRICS_VOLUMES, "EBS gp3 metrics volumes", "GB-month", "GB provisioned", storage.volumes_gib,
                     storage.volumes_gib, pricing.fixed("ebsGp3"), note=note)


def log_items(ingested_gb_per_month: float, stored_gb: float, pricing: Pricing, note: str = "") -> list[FixedItem]:
    """CloudWatch Logs: what the pipeline sends each month and what the retention keeps."""
    return [FixedItem(LOG_INGESTION, "CloudWatch Logs ingestion", "GB", "GB ingested per month",
                      ingested_gb_per_month, ingested_gb_per_month, pricing.fixed(LOG_INGESTION), note=note),
            FixedItem(LOG_STORAGE, "CloudWatch Logs storage", "GB-month", "GB stored", stored_gb, stored_gb,
                      pricing.fixed(LOG_STORAGE), note="every day of the retention kept, at the ingested size")]


def _logs(spec: "PlatformSpec", pricing: Pricing) -> list[FixedItem]:
    """The log pipeline's destinations (the plan's logging section has one row each); none with logging off."""
    volumes = log_volumes(spec)
    if not volumes:
        return []
    per_day = sum(v.gb_per_day for v in volumes)
    return log_items(sum(v.ingested_gb_per_month for v in volumes), sum(v.stored_gb for v in volumes), pricing,
                     note=f"{per_day:g} GB/day over {len(volumes)} log groups (logging.ingestGbPerDay), "
                          f"kept {volumes[0].retention_days} days")


# --- the estimate ---

@dataclass(frozen=True)
class Budget:
    monthly_usd: float
    monthly_at_max: float

    @property
    def headroom_at_max(self) -> float:
        """Positive: room left at max size; negative: the ceiling exceeds the budget by that much."""
        return self.monthly_usd - self.monthly_at_max

    @property
    def within_budget(self) -> bool:
        return self.headroom_at_max >= 0


@dataclass(frozen=True)
class CostEstimate:
    pools: list[PoolEstimate]
    fixed: list[FixedItem]
    budget: Optional[Budget]
    spot_discount: float

    def _sum(self, attr: str) -> float:
        return float(sum(v for v in (getattr(x, attr) for x in (*self.pools, *self.fixed)) if v is not None))

    @property
    def monthly_at_min(self) -> float:
        return self._sum("monthly_at_min")

    @property
    def monthly_at_max(self) -> float:
        return self._sum("monthly_at_max")

    @property
    def charges(self) -> dict[str, float]:
        """Capacity Block fees by the month they are charged in (YYYY-MM; "" for a month not known)."""
        out: dict[str, float] = {}
        for p in self.pools:
            if p.is_block and p.block_fee is not None:
                month = p.facts.charge_month or ""
                out[month] = out.get(month, 0.0) + p.block_fee
        return out

    @property
    def charge_month(self) -> Optional[str]:
        """The month carrying the most Capacity Block fees (None without blocks)."""
        charges = self.charges
        return max(sorted(charges), key=lambda month: charges[month]) if charges else None

    @property
    def charge_month_at_max(self) -> float:
        """What a monthly budget is held to: the month the heaviest up-front block fees fall in, every other
        item at max size (blocks' amortised shares replaced by the fees charged that month)."""
        amortised = sum(p.monthly_at_max or 0.0 for p in self.pools if p.is_block)
        fees = self.charges.get(self.charge_month, 0.0) if self.charge_month is not None else 0.0
        return self.monthly_at_max - amortised + fees

    @property
    def hourly_at_min(self) -> float:
        return self._sum("hourly_at_min")

    @property
    def hourly_at_max(self) -> float:
        return self._sum("hourly_at_max")

    @property
    def unpriced(self) -> list[str]:
        """Items left out of the totals because no price is known."""
        return ([p.name for p in self.pools if p.quote is None]
                + [f.label for f in self.fixed if f.included and f.price is None])

    @property
    def sources(self) -> list[Quote]:
        """Every distinct (source, date) behind the figures, usd 0 (the source, not a price)."""
        quotes = [p.quote for p in self.pools] + [f.price for f in self.fixed if f.included]
        return sorted({Quote(0.0, q.source, q.as_of) for q in quotes if q}, key=lambda q: (q.source, q.as_of))

    @property
    def prices_as_of(self) -> str:
        """The oldest catalog date behind the figures (overrides are the stack's own)."""
        dates = [q.as_of for q in self.sources if q.as_of != OVERRIDE_AS_OF]
        return min(dates) if dates else OVERRIDE_AS_OF


def estimate(pools: list[PoolFacts], fixed: list[FixedItem], pricing: Pricing,
             budget_monthly_usd: Optional[float] = None) -> CostEstimate:
    pool_estimates = [estimate_pool(p, pricing) for p in pools]
    partial = CostEstimate(pool_estimates, list(fixed), None, pricing.spot_discount)
    if budget_monthly_usd is None:
        return partial
    return CostEstimate(pool_estimates, list(fixed), Budget(budget_monthly_usd, partial.charge_month_at_max),
                        pricing.spot_discount)


def estimate_spec(spec: "PlatformSpec", as_of: Optional[date] = None) -> CostEstimate:
    """The stack's estimate; the control plane priced by its support window on `as_of` (default: today)."""
    pricing = Pricing.from_spec(spec.pricing)
    budget = spec.budget.monthly_usd if spec.budget else None
    return estimate(pool_facts_from_spec(spec, as_of), fixed_items_from_spec(spec, pricing, as_of), pricing, budget)


# --- per schedulable unit: teams and alerts ---

@dataclass(frozen=True)
class UnitPrice:
    """Capacity-weighted USD per unit-hour of one extended resource, across the pools offering it."""

    resource: str
    capacity_at_max: int
    on_demand_usd_per_hour: Optional[float]  # None: no pool offering it has a price
    spot_usd_per_hour: Optional[float]


def pool_unit_costs(pool: "NodePoolSpec", mig_strategy: str, node_usd_per_hour: float) -> dict[str, float]:
    """USD per unit-hour of each resource a pool offers, from its node price.

    A whole or time-sliced GPU unit costs the node-hour over the units per node. A MIG slice costs its
    compute share of a GPU-hour (its compute slices over the GPU's: 7, or 4 on an RTX PRO 6000), so idle
    compute in a partial layout is not charged.
    """
    per_node = node_resources(pool, mig_strategy)
    if pool.sharing.mode != "mig":
        return {r: node_usd_per_hour / n for r, n in per_node.items()}
    gpu_hour = node_usd_per_hour / pool.gpus_per_node
    out = {}
    for profile, count in (pool.sharing.layout or {}).items():
        if count:
            res = names.GPU_RESOURCE if mig_strategy == "single" else names.mig_resource(profile)
            out[res] = gpu_hour * catalog.mig_compute_share(pool.gpu, profile)
    return out


def unit_prices(spec: "PlatformSpec") -> dict[str, UnitPrice]:
    """Per resource: the at-max cost of its units over their count, all-on-demand and all-spot. A Capacity
    Block has one price, its block rate, in both; a pool without a price is left out of the average."""
    pricing = Pricing.from_spec(spec.pricing)
    strategy = spec.mig_strategy
    units: dict[str, int] = {}
    priced: dict[str, int] = {}
    cost: dict[str, list[float]] = {}
    for pool in spec.node_pools:
        itype = pool.instance_types[0]
        rates = [pricing.node_hourly(itype, CAPACITY_BLOCK if is_block(pool) else kind) for kind in (ON_DEMAND, SPOT)]
        od, spot = (pool_unit_costs(pool, strategy, r) if r is not None else None for r in rates)
        for res, per_node in node_resources(pool, strategy).items():
            n = per_node * pool.max_size
            units[res] = units.get(res, 0) + n
            acc = cost.setdefault(res, [0.0, 0.0])
            if od is not None and spot is not None:
                priced[res] = priced.get(res, 0) + n
                acc[0] += n * od[res]
                acc[1] += n * spot[res]
    return {r: UnitPrice(r, units[r], *((c / priced[r]) if priced.get(r) else None for c in cost[r]))
            for r in sorted(units)}


@dataclass(frozen=True)
class TeamShare:
    resource: str
    quota: int
    capacity_at_max: int
    unit: Optional[UnitPrice]

    @property
    def share(self) -> Optional[float]:
        """Fraction of the schedulable capacity at max size the quota claims."""
        return self.quota / self.capacity_at_max if self.capacity_at_max else None

    @property
    def on_demand_monthly(self) -> Optional[float]:
        rate = None if self.unit is None else self.unit.on_demand_usd_per_hour
        return None if rate is None else self.quota * rate * HOURS

    @property
    def spot_monthly(self) -> Optional[float]:
        rate = None if self.unit is None else self.unit.spot_usd_per_hour
        return None if rate is None else self.quota * rate * HOURS


@dataclass(frozen=True)
class TeamCost:
    name: str
    shares: list[TeamShare]

    @property
    def on_demand_monthly(self) -> float:
        return sum(s.on_demand_monthly or 0.0 for s in self.shares)

    @property
    def spot_monthly(self) -> float:
        return sum(s.spot_monthly or 0.0 for s in self.shares)


def team_costs(spec: "PlatformSpec") -> list[TeamCost]:
    """Each team's quota, its share of capacity at max size, and its cost if fully used for a month."""
    prices = unit_prices(spec)
    out = []
    for team in spec.teams:
        quota = ({names.GPU_RESOURCE: team.quota.gpus} if team.quota.gpus else {}) | {
            names.mig_resource(p): n for p, n in sorted(team.quota.mig_slices.items()) if n}
        shares = [TeamShare(r, n, prices[r].capacity_at_max if r in prices else 0, prices.get(r))
                  for r, n in quota.items()]
        out.append(TeamCost(team.name, shares))
    return out


def gpu_hourly_cost_by_model(spec: "PlatformSpec") -> dict[str, float]:
    """USD per physical GPU-hour by NVML model name (dcgm-exporter's modelName), at each pool's own
    capacity type; the highest when several pools share a model, so an idle-GPU alert never understates."""
    pricing = Pricing.from_spec(spec.pricing)
    out: dict[str, float] = {}
    for pool in spec.node_pools:
        gpu_hour = estimate_pool(pool_facts(pool, date.today()), pricing).usd_per_gpu_hour
        if gpu_hour is not None:
            name = pool.gpu.nvml_name
            out[name] = max(out.get(name, 0.0), gpu_hour)
    return out


def stale_block_rates(est: CostEstimate, as_of: date) -> list[str]:
    """Blocks priced by a catalog rate older than catalog.CAPACITY_BLOCK_RATE_MAX_AGE_DAYS on `as_of`."""
    out = []
    for p in est.pools:
        quote = p.block if p.is_block else None
        if quote is None or quote.source != catalog.CAPACITY_BLOCK_PRICE_SOURCE:
            continue
        dated = _month_start(quote.as_of)
        if dated is not None and (as_of - dated).days > catalog.CAPACITY_BLOCK_RATE_MAX_AGE_DAYS:
            out.append(f"{p.name}: the block is priced at the catalog's {p.facts.priced_type} rate of {quote.as_of} "
                       f"(${quote.usd:g}/instance-hour), {(as_of - dated).days} days old on {as_of}: AWS prices each "
                       "offering when it is bought and reviews its rates quarterly; set the pool's "
                       "reservation.quotedUsdPerHour and quotedOn to the offering's UpfrontFee over its instance-hours")
    return out


def _month_start(as_of: str) -> Optional[date]:
    try:
        return date.fromisoformat(as_of + "-01" if len(as_of) == 7 else as_of)
    except ValueError:
        return None


def _monthly(hourly: Optional[float]) -> Optional[float]:
    return None if hourly is None else hourly * HOURS


def _hourly(monthly: Optional[float]) -> Optional[float]:
    return None if monthly is None else monthly / HOURS
