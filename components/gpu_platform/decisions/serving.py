"""Model serving decided from the stack file: what each service asks of its pool, whether it fits, how
long it takes to come up and what it costs; and the rules that refuse a service before deploy.

Memory: a whole GPU's memory is the catalog's GB (decimal, read as the lower GiB figure: conservative), a MIG
slice its memory share of that, a time-sliced replica the GPU's memory over the pool's replicas (each replica
may share its GPU with that many others). A service fits when, on each of its tensor-parallel GPUs, its share
of the weights, the engine's overhead and its stated KV-cache floor fit that memory x gpuMemoryUtilization.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Optional
from collections.abc import Iterator

from gpu_platform.decisions.capacity import node_resources, service_resource
from gpu_platform.decisions.cost import Pricing, pool_unit_costs
from gpu_platform.decisions.reservations import is_block
from gpu_platform.decisions.serving_memory import host_need_gib, node_memory_mib, replicas_per_node, server_memory_mib
from gpu_platform.facts import catalog, names, serving
from gpu_platform.facts.syntax import quantity_value
from gpu_platform.spec.field_path import TEAMS, FieldPath, Problem

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec, PlatformSpec
    from gpu_platform.spec.serving import ServiceSpec

STARTUP_PERIOD_SECONDS = 10
STARTUP_SAFETY = 2  # the startup probe allows twice the expected load and warm-up before it gives up


def _gib(gb: float) -> float:
    return gb * 1e9 / 2**30


@dataclass(frozen=True)
class ServicePlan:
    """One service as it will run: its pool, the resource and units a replica asks, fit, timing and cost."""

    team: str
    at: FieldPath  # teams[i].services[j]
    service: "ServiceSpec"
    pool: "NodePoolSpec"
    resource: str
    units: int  # of `resource` per replica
    memory_gib: float  # usable device memory per GPU of a replica, before gpuMemoryUtilization
    unit_usd_per_hour: Optional[float]
    max_surge: int  # 1 only when the pool's always-on nodes hold a spare replica (warm capacity)
    zones: int  # zones the pool spans (spread replicas over them)
    host_memory_mib: int  # the pod's memory request and limit (decisions/serving_memory.py)
    mig_strategy: str

    @property
    def weights_gib(self) -> float:
        return self.service.model.size_gib

    @property
    def need_gib(self) -> float:
        s = self.service
        return self.weights_gib / s.gpu.tp + serving.ENGINE_OVERHEAD_GIB_PER_GPU + s.kv_cache_floor_gib

    @property
    def usable_gib(self) -> float:
        return self.memory_gib * self.service.gpu_memory_utilization

    @property
    def margin_gib(self) -> float:
        return self.usable_gib - self.need_gib

    @property
    def engine_memory_fraction(self) -> float:
        """vLLM's --gpu-memory-utilization: a fraction of the device it sees. A MIG slice is a device of its own;
        a time-sliced GPU is the whole GPU, so a replica takes its share of gpuMemoryUtilization."""
        shared = (self.pool.sharing.replicas or 1) if self.pool.sharing.mode == "time-slicing" else 1
        return round(self.service.gpu_memory_utilization / shared, 4)

    @property
    def load_seconds(self) -> int:
        mibps = serving.MODEL_CACHE_CLIENT_MIBPS * serving.MODEL_CACHE_READ_SHARE
        return math.ceil(self.weights_gib * 1024 / mibps)

    @property
    def cold_start_seconds(self) -> int:
        """On a running node: the weights read from the cache, then the engine's warm-up."""
        return self.load_seconds + serving.ENGINE_WARMUP_SECONDS

    @property
    def startup_failure_threshold(self) -> int:
        return max(30, math.ceil(self.cold_start_seconds * STARTUP_SAFETY / STARTUP_PERIOD_SECONDS))

    @property
    def replicas_per_node(self) -> int:
        return replicas_per_node(self.pool, self.resource, self.units, self.host_memory_mib, self.mig_strategy)

    def usd_per_hour(self, replicas: int) -> Optional[float]:
        rate = self.unit_usd_per_hour
        return None if rate is None else replicas * self.units * rate

    @property
    def shape(self) -> str:
        s = self.service.gpu
        if self.resource.startswith(names.MIG_RESOURCE_PREFIX) or s.mig_profile:
            return f"MIG {s.mig_profile} on {self.pool.gpu.key}"
        if self.pool.sharing.mode == "time-slicing":
            return f"1/{self.pool.sharing.replicas} time-sliced {self.pool.gpu.key}"
        return f"{s.count}x {self.pool.gpu.key}" + (f" (TP {s.tp})" if s.tp > 1 else "")


def pool_named(spec: "PlatformSpec", name: str) -> Optional["NodePoolSpec"]:
    return next((p for p in spec.node_pools if p.name == name), None)


def device_memory_gib(pool: "NodePoolSpec", service: "ServiceSpec") -> float:
    gpu = pool.gpu
    if pool.sharing.mode == "mig" and service.gpu.mig_profile in gpu.mig_profiles:
        return _gib(gpu.memory_gb * catalog.mig_memory_share(gpu, str(service.gpu.mig_profile)))
    if pool.sharing.mode == "time-slicing":
        return _gib(gpu.memory_gb) / (pool.sharing.replicas or 1)
    return _gib(gpu.memory_gb)


def _unit_price(spec: "PlatformSpec", pool: "NodePoolSpec", resource: str) -> Optional[float]:
    kind = "capacity-block" if is_block(pool) else pool.capacity_type
    node = Pricing.from_spec(spec.pricing).node_hourly(pool.instance_types[0], kind)
    return None if node is None else pool_unit_costs(pool, spec.mig_strategy, node).get(resource)


def _service_path(team: int, service: int) -> FieldPath:
    return TEAMS.index(team).field("services").index(service)


def plans(spec: "PlatformSpec") -> list[ServicePlan]:
    """Every team's services whose pool exists and offers what they ask (the rules report the others)."""
    out = []
    for i, team in enumerate(spec.teams):
        for j, service in enumerate(team.services):
            pool = pool_named(spec, service.gpu.pool)
            if pool is None:
                continue
            resource, units = service_resource(pool, service, spec.mig_strategy)
            zones = len(pool.zones) if pool.zones else _vpc_zones(spec)
            memory = server_memory_mib(pool, service, resource, units, spec.mig_strategy)
            out.append(ServicePlan(team.name, _service_path(i, j), service, pool, resource, units,
                                   device_memory_gib(pool, service), _unit_price(spec, pool, resource), 0, zones,
                                   memory, spec.mig_strategy))
    held = _held_at_minimum(out)
    return [_with_surge(spec, p, *held[p.pool.name]) for p in out]


def _vpc_zones(spec: "PlatformSpec") -> int:
    create = spec.cluster.create
    if create is not None and create.vpc is not None:
        return len(create.vpc.zones) if create.vpc.zones else create.vpc.availability_zones
    return 0  # not known from the file (an existing VPC's subnets)


def _held_at_minimum(all_plans: list[ServicePlan]) -> dict[str, tuple[dict[str, float], float]]:
    """Pool -> (GPU units by resource, host memory in MiB) that every service's minimum replicas hold there."""
    held: dict[str, tuple[dict[str, float], float]] = {}
    for p in all_plans:
        units, memory = held.get(p.pool.name, ({}, 0.0))
        units[p.resource] = units.get(p.resource, 0) + p.service.replicas.min * p.units
        held[p.pool.name] = units, memory + p.service.replicas.min * p.host_memory_mib
    return held


def _with_surge(spec: "PlatformSpec", plan: ServicePlan, held: dict[str, float], memory_held: float) -> ServicePlan:
    """Surge one replica only when the pool's always-on nodes hold it beside every service's minimum there, in GPU
    units and in memory: otherwise a rollout on a full pool waits for a node that may never come, and the old
    replica holds its GPU."""
    always_on = node_resources(plan.pool, spec.mig_strategy).get(plan.resource, 0) * plan.pool.min_size
    memory_left = node_memory_mib(plan.pool) * plan.pool.min_size - memory_held
    spare = always_on - held.get(plan.resource, 0) >= plan.units and memory_left >= plan.host_memory_mib
    return replace(plan, max_surge=1 if spare else 0)


# --- rules: each names the field a user edits ---

def serving_rules(spec: "PlatformSpec") -> Iterator[Problem]:
    for i, team in enumerate(spec.teams):
        seen: set[str] = set()
        for j, service in enumerate(team.services):
            at = _service_path(i, j)
            if service.name in seen:
                yield at / "name", f"{service.name!r} is used twice in team {team.name}: service names are unique"
            seen.add(service.name)
            yield from _service_rules(spec, at, service)
    valid = [p for p in plans(spec) if not any(True for _ in _shape_rules(spec, p.at, p.pool, p.service))]
    yield from _fit_rules(valid)
    yield from _quota_rules(spec, valid)
    yield from _pool_size_rules(spec, valid)
    yield from _host_memory_rules(valid)


def _service_rules(spec: "PlatformSpec", at: FieldPath, service: "ServiceSpec") -> Iterator[Problem]:
    if not spec.model_cache.enabled:
        yield at, "a service reads its weights from the model cache: set modelCache.enabled"
    mon = spec.monitoring
    if service.autoscaling is not None and (not mon.enabled or mon.prometheus.mode == "none"):
        yield (at / "autoscaling", "scales on the server's metrics in Prometheus: there is none (monitoring.enabled "
               "false or monitoring.prometheus.mode none); install one, or name an existing one")
    create = spec.cluster.create
    if service.load_balancer and (create is None or create.vpc is None):
        yield (at / "loadBalancer", "an internal load balancer admits callers from the VPC the stack creates "
               "(cluster.create.vpc): its CIDR is what the server's NetworkPolicy lets through")
    pool = pool_named(spec, service.gpu.pool)
    if pool is None:
        yield at / "gpu.pool", f"no pool named {service.gpu.pool!r}; pools: {', '.join(p.name for p in spec.node_pools)}"
        return
    yield from _shape_rules(spec, at, pool, service)
    yield from _scale_to_zero_rules(spec, at, pool, service)


def _shape_rules(spec: "PlatformSpec", at: FieldPath, pool: "NodePoolSpec", service: "ServiceSpec") -> Iterator[Problem]:
    g, mode = service.gpu, pool.sharing.mode
    if pool.gpu_allocation == "dra":
        yield at / "gpu.pool", f"pool {pool.name} allocates GPUs by DRA; services ask the device plugin's resources"
        return
    if mode == "mig":
        offered = sorted(p for p, n in (pool.sharing.layout or {}).items() if n)
        if g.mig_profile not in offered:
            yield (at / "gpu.migProfile", f"pool {pool.name} cuts {pool.gpu.key} GPUs into MIG slices: name one it "
                   f"offers ({', '.join(offered)}), not {g.mig_profile!r}")
        elif spec.mig_strategy == "single" and len(offered) > 1:
            yield (at / "gpu.migProfile", "under the single MIG strategy every slice is nvidia.com/gpu and a replica "
                   "cannot choose its profile: use a one-profile layout or the mixed strategy")
    elif g.mig_profile is not None:
        yield at / "gpu.migProfile", f"pool {pool.name} does not cut MIG slices (sharing.mode {mode})"
    if mode != "none":
        if g.count != 1:
            yield at / "gpu.count", f"a replica on {mode} pool {pool.name} holds one slice or shared GPU: count 1"
        if g.tp != 1:
            yield at / "gpu.tensorParallel", f"tensor parallelism needs whole GPUs; pool {pool.name} shares them ({mode})"
        return
    if g.tp > pool.gpus_per_node:
        yield (at / "gpu.tensorParallel", f"tensor parallelism stays within one node: a {pool.instance_types[0]} "
               f"node of pool {pool.name} has {pool.gpus_per_node} GPUs, not {g.tp}")
    elif g.tp != g.count:
        yield at / "gpu.tensorParallel", f"must equal gpu.count ({g.count}): each GPU of a replica holds a shard"
    if g.count > pool.gpus_per_node:
        yield (at / "gpu.count", f"one node of pool {pool.name} gives a pod at most {pool.gpus_per_node} GPUs "
               f"({pool.instance_types[0]}), not {g.count}")


def _scale_to_zero_rules(spec: "PlatformSpec", at: FieldPath, pool: "NodePoolSpec", service: "ServiceSpec") -> Iterator[Problem]:
    if service.replicas.min > 0:
        return
    where = at / "replicas.min"
    if spec.prod:
        yield where, "prod services keep a warm replica (>= 1): a request to a service at zero waits minutes"
    elif service.autoscaling is None:
        yield where, "0 replicas needs autoscaling to wake the service (set autoscaling) or min >= 1"
    elif not _scales_from_zero(spec, pool):
        yield where, (f"pool {pool.name} cannot scale from zero (no Cluster Autoscaler or Karpenter): min >= 1")


def _scales_from_zero(spec: "PlatformSpec", pool: "NodePoolSpec") -> bool:
    return pool.provisioner == "karpenter" or spec.cluster_autoscaler.enabled or pool.min_size > 0


def _fit_rules(plans_: list[ServicePlan]) -> Iterator[Problem]:
    for p in plans_:
        if p.margin_gib >= 0:
            continue
        m = p.service.model
        field = "weightsGiB" if m.weights_gib is not None else "parameterCount"
        yield (p.at / "model" / field, f"{p.weights_gib:.1f} GiB of weights over {p.service.gpu.tp} GPU(s) do not fit "
               f"{p.shape}: each GPU needs {p.need_gib:.1f} GiB (weights share, {serving.ENGINE_OVERHEAD_GIB_PER_GPU} "
               f"GiB engine overhead, kvCacheFloorGiB {p.service.kv_cache_floor_gib:g}) of {p.memory_gib:.1f} GiB x "
               f"gpuMemoryUtilization {p.service.gpu_memory_utilization:g} = {p.usable_gib:.1f} GiB; use more tensor-"
               "parallel GPUs, a larger slice or GPU, or a smaller dtype")


def _quota_rules(spec: "PlatformSpec", plans_: list[ServicePlan]) -> Iterator[Problem]:
    by_team: dict[str, list[ServicePlan]] = {}
    for p in plans_:
        by_team.setdefault(p.team, []).append(p)
    for i, team in enumerate(spec.teams):
        used: dict[str, int] = {}
        memory_mib = 0
        for p in by_team.get(team.name, []):
            used[p.resource] = used.get(p.resource, 0) + p.service.replicas.max * p.units
            quota = (team.quota.gpus if p.resource == names.GPU_RESOURCE
                     else team.quota.mig_slices.get(p.resource.removeprefix(names.MIG_RESOURCE_PREFIX), 0))
            if used[p.resource] > quota:
                field = "gpus" if p.resource == names.GPU_RESOURCE else "migSlices"
                yield (p.at / "replicas.max", f"the team's services ask up to {used[p.resource]} {p.resource} at max "
                       f"replicas, over teams[{i}].quota.{field} ({quota})")
            memory_mib += p.service.replicas.max * p.host_memory_mib
            if memory_mib * 2**20 > quantity_value(team.quota.memory):
                yield (p.at / "replicas.max", f"the team's services ask up to {_gib_text(memory_mib)} of host memory "
                       f"at max replicas, over teams[{i}].quota.memory ({team.quota.memory})")


def _pool_size_rules(spec: "PlatformSpec", plans_: list[ServicePlan]) -> Iterator[Problem]:
    used: dict[tuple[str, str], int] = {}
    memory: dict[str, int] = {}
    for p in plans_:
        per_node = node_resources(p.pool, spec.mig_strategy).get(p.resource, 0)
        key = (p.pool.name, p.resource)
        used[key] = used.get(key, 0) + p.service.replicas.max * p.units
        memory[p.pool.name] = memory.get(p.pool.name, 0) + p.service.replicas.max * p.host_memory_mib
        replicas_at_max = p.replicas_per_node * p.pool.max_size
        node_mib = node_memory_mib(p.pool)
        if p.service.replicas.max > replicas_at_max or used[key] > per_node * p.pool.max_size:
            yield (p.at / "replicas.max", f"pool {p.pool.name} holds {per_node * p.pool.max_size} {p.resource} at "
                   f"maxSize {p.pool.max_size} ({replicas_at_max} replicas of this shape, "
                   f"{_gib_text(p.host_memory_mib)} of host memory each); its services ask {used[key]} at max "
                   "replicas: raise the pool's maxSize or lower replicas.max")
        elif memory[p.pool.name] > node_mib * p.pool.max_size:
            yield (p.at / "replicas.max", f"pool {p.pool.name}'s nodes leave {_gib_text(node_mib)} each for GPU "
                   f"pods, {_gib_text(node_mib * p.pool.max_size)} at maxSize {p.pool.max_size}; its services' "
                   f"replicas ask {_gib_text(memory[p.pool.name])} of host memory at max: raise the pool's maxSize "
                   "or lower replicas.max")


def _host_memory_rules(plans_: list[ServicePlan]) -> Iterator[Problem]:
    """A replica asking more host memory than a node of its pool leaves for GPU pods never schedules."""
    for p in plans_:
        have = node_memory_mib(p.pool)
        if p.host_memory_mib <= have:
            continue
        s = p.service
        staged = host_need_gib(s) - serving.SERVER_HOST_BASE_GIB - serving.SERVER_HOST_PER_GPU_GIB * s.gpu.tp
        yield (p.at / "gpu.pool", f"a replica needs {_gib_text(p.host_memory_mib)} of host memory (server base "
               f"{serving.SERVER_HOST_BASE_GIB:g} GiB, {serving.SERVER_HOST_PER_GPU_GIB:g} GiB per GPU worker x "
               f"{s.gpu.tp}, {staged:.1f} GiB of weights staged); a node of pool {p.pool.name} "
               f"(its smallest instance type) leaves {_gib_text(have)} for GPU pods: use a pool of larger instances")


def _gib_text(mib: int) -> str:
    return f"{mib / 1024:.1f} GiB"
