"""What Kubernetes can schedule: extended GPU resources per node, per pool at max size, and in total; and
the most GPUs one pod may ask for.

- no sharing: `nvidia.com/gpu` = GPUs per node
- time-slicing: `nvidia.com/gpu` = GPUs x replicas (not renamed, so autoscalers understand it)
- MIG single: every slice is an `nvidia.com/gpu`; MIG mixed: one `nvidia.com/mig-<profile>` per profile
- DRA (`gpuAllocation: dra`): the node advertises no extended resource; its GPUs are devices of class
  `gpu.nvidia.com`, which Kueue counts as `nvidia.com/gpu` (decisions/dra.py), so they are counted here in
  that unit too
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional
from collections.abc import Mapping

from gpu_platform.facts import names

if TYPE_CHECKING:
    from gpu_platform.spec.models import GpuPool, NodePoolSpec, PlatformSpec, TeamSpec
    from gpu_platform.spec.serving import ServiceSpec


def node_resources(pool: "GpuPool", mig_strategy: str) -> dict[str, int]:
    s = pool.sharing
    return shared_resources(pool.gpus_per_node, s.mode, s.replicas, s.layout, mig_strategy)


def shared_resources(gpus: int, mode: str, replicas: Optional[int], layout: Optional[Mapping[str, int]],
                     mig_strategy: str) -> dict[str, int]:
    """What a node with `gpus` GPUs offers Kubernetes when they are shared this way (`mode` as in the stack file)."""
    if mode == "time-slicing":
        return {names.GPU_RESOURCE: gpus * (replicas or 1)}
    if mode == "mig":
        slices = {p: n for p, n in (layout or {}).items() if n}
        if mig_strategy == "single":
            return {names.GPU_RESOURCE: gpus * sum(slices.values())}
        return {names.mig_resource(p): gpus * n for p, n in sorted(slices.items())}
    return {names.GPU_RESOURCE: gpus}


@dataclass(frozen=True)
class PoolCapacity:
    pool: str
    gpu: str
    physical_gpus_max: int
    per_node: dict[str, int]
    at_max: dict[str, int]


@dataclass(frozen=True)
class PlatformCapacity:
    pools: list[PoolCapacity]
    total: dict[str, int] = field(default_factory=dict)


def platform_capacity(spec: "PlatformSpec") -> PlatformCapacity:
    strategy = spec.mig_strategy
    pools: list[PoolCapacity] = []
    total: dict[str, int] = {}
    for pool in spec.node_pools:
        per_node = node_resources(pool, strategy)
        at_max = {r: n * pool.max_size for r, n in per_node.items()}
        for r, n in at_max.items():
            total[r] = total.get(r, 0) + n
        pools.append(PoolCapacity(pool.name, pool.gpu.key, pool.gpus_per_node * pool.max_size, per_node, at_max))
    return PlatformCapacity(pools, dict(sorted(total.items())))


def team_quota_totals(spec: "PlatformSpec") -> dict[str, int]:
    """The sum of team quotas per extended resource, to set beside capacity."""
    total: dict[str, int] = {}
    for team in spec.teams:
        if team.quota.gpus:
            total[names.GPU_RESOURCE] = total.get(names.GPU_RESOURCE, 0) + team.quota.gpus
        for profile, n in team.quota.mig_slices.items():
            res = names.mig_resource(profile)
            total[res] = total.get(res, 0) + n
    return dict(sorted(total.items()))


def largest_gpu_request(spec: "PlatformSpec") -> int:
    """The most `nvidia.com/gpu` one pod can get on any pool's node (time-slicing that refuses
    requests above one caps a pod at one shared GPU)."""
    largest = 0
    for pool in spec.node_pools:
        n = node_resources(pool, spec.mig_strategy).get(names.GPU_RESOURCE, 0)
        if pool.sharing.mode == "time-slicing" and pool.sharing.fail_requests_greater_than_one:
            n = min(n, 1)
        largest = max(largest, n)
    return largest


def max_gpus_per_pod(spec: "PlatformSpec", team: "TeamSpec") -> int:
    return team.max_gpus_per_pod if team.max_gpus_per_pod is not None else largest_gpu_request(spec)


def service_resource(pool: "GpuPool", service: "ServiceSpec", mig_strategy: str) -> tuple[str, int]:
    """The extended resource one replica of a service asks on its pool, and how many: a MIG slice of its profile
    (mixed strategy), one shared GPU on a time-slicing pool, else its whole GPUs."""
    profile = service.gpu.mig_profile
    if pool.sharing.mode == "mig" and profile and mig_strategy == "mixed":
        return names.mig_resource(profile), 1
    return names.GPU_RESOURCE, 1 if pool.sharing.mode != "none" else service.gpu.count


def service_floor_nodes(spec: "PlatformSpec", pool: "NodePoolSpec") -> int:
    """The nodes the services' minimum replicas keep running in a pool (0 without services there)."""
    per_node = node_resources(pool, spec.mig_strategy)
    held: dict[str, int] = {}
    for team in spec.teams:
        for service in team.services:
            if service.gpu.pool == pool.name:
                resource, units = service_resource(pool, service, spec.mig_strategy)
                held[resource] = held.get(resource, 0) + service.replicas.min * units
    return max((-(-n // per_node[r]) for r, n in held.items() if per_node.get(r)), default=0)
