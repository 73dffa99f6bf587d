"""CPU and memory for GPU pods, derived from the instance the GPUs come with (pure).

A GPU pod needs host CPUs to feed its GPUs (data loading, decoding, the launcher and NCCL's proxy
threads) and host memory to stage batches; NVIDIA's and AWS's training guides size them per GPU. A
namespace default of 250m CPU and 512Mi leaves an 8-GPU job starved. So each schedulable GPU unit gets
its share of the node:

    node budget = vCPUs (memory) x (1 - RESERVED_FRACTION) - RESERVED_CPU (RESERVED_MEMORY_GIB)

kept back for kubelet's and the system's reservations, the platform's DaemonSets and the page cache.
The budget is divided among the node's units of the resource the pod asks for: whole GPUs, time-sliced
replicas, or MIG slices (a slice gets its compute share, slices of 7, of a GPU's CPUs and its memory share,
slices of 8, of a GPU's memory; of 4 and of 4 on an RTX PRO 6000). A pod asking for N units gets N shares,
rounded down to half a CPU and a whole GiB (a share below that, say many time-sliced replicas on a 4-vCPU
node, down to 10 millicores and a MiB), never up: N pods of one unit, or one pod of all of them, always fit
on a node. A pool with several instance types is sized by its smallest one; a pod that may land in several
pools by the smallest share.
On a pool whose kubelet pins CPUs (decisions/numa.py) the CPUs it keeps for the system come off the node
first, and a pod gets whole CPUs (rounded down), which the static CPU manager can pin.
A team's largest pod is checked against its quota on the pools the team can reach (its queue's, with Kueue).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING
from collections.abc import Sequence

from gpu_platform.decisions.capacity import node_resources
from gpu_platform.decisions.numa import pool_kubelet
from gpu_platform.facts import catalog, names

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec, PlatformSpec, TeamSpec

RESERVED_FRACTION = 0.10
RESERVED_CPU = 1.0
RESERVED_MEMORY_GIB = 2.0
CPU_STEP_MILLI = 500  # half a CPU
FINE_CPU_STEP_MILLI = 10  # below half a CPU


@dataclass(frozen=True)
class Budget:
    """CPUs and GiB of memory a node has for GPU pods."""

    cpu: float
    memory_gib: float


@dataclass(frozen=True)
class PodSize:
    cpu: float
    memory_mib: int

    @property
    def cpu_quantity(self) -> str:
        """`21` or `10500m`: whole CPUs plainly, others in millicores."""
        return str(int(self.cpu)) if self.cpu == int(self.cpu) else f"{int(round(self.cpu * 1000))}m"

    @property
    def memory_quantity(self) -> str:
        return _mib_quantity(self.memory_mib)


def _mib_quantity(mib: int) -> str:
    return f"{mib // 1024}Gi" if mib % 1024 == 0 else f"{mib}Mi"


def shm_size(memory_bytes: float) -> str:
    """/dev/shm for a container of `memory_bytes`: half of it (its pages count against the memory limit),
    whole GiB from 2 GiB of memory up."""
    half = int(memory_bytes // 2**20) // 2
    return _mib_quantity(half - half % 1024 if half >= 1024 else max(1, half))


def _round_down(cpu: float, memory_gib: float) -> PodSize:
    """Half CPUs and whole GiB; a smaller figure in 10 millicores or MiB. Never rounds up."""
    milli = math.floor(cpu * 1000)
    milli -= milli % (CPU_STEP_MILLI if milli >= CPU_STEP_MILLI else FINE_CPU_STEP_MILLI)
    mib = math.floor(memory_gib * 1024)
    mib -= mib % 1024 if mib >= 1024 else 0
    return PodSize(max(1, milli) / 1000, max(1, mib))


def node_budget(pool: "NodePoolSpec") -> Budget:
    """What the pool's smallest instance type leaves for GPU pods, after the CPUs the pool's kubelet keeps
    for the system (reservedSystemCPUs: decisions/numa.py)."""
    smallest = min(pool.instances, key=lambda it: (it.vcpu, it.memory_gib))
    keep = 1 - RESERVED_FRACTION
    cpus = smallest.vcpu - pool_kubelet(pool).reserved_cpus
    return Budget(cpus * keep - RESERVED_CPU, smallest.memory_gib * keep - RESERVED_MEMORY_GIB)


def unit_share(pool: "NodePoolSpec", resource: str, mig_strategy: str) -> Budget:
    """One unit of `resource` on this pool: its CPUs and GiB (0 when the pool does not offer it)."""
    budget = node_budget(pool)
    per_node = node_resources(pool, mig_strategy).get(resource, 0)
    if not per_node:
        return Budget(0.0, 0.0)
    if resource.startswith(names.MIG_RESOURCE_PREFIX):
        profile = resource.removeprefix(names.MIG_RESOURCE_PREFIX)
        gpu = Budget(budget.cpu / pool.gpus_per_node, budget.memory_gib / pool.gpus_per_node)
        return Budget(gpu.cpu * catalog.mig_compute_share(pool.gpu, profile),
                      gpu.memory_gib * catalog.mig_memory_share(pool.gpu, profile))
    return Budget(budget.cpu / per_node, budget.memory_gib / per_node)


def pod_size(pools: Sequence["NodePoolSpec"], resource: str, units: int, mig_strategy: str) -> PodSize:
    """CPU and memory for a pod with `units` of `resource` that may run on any of `pools`: whole CPUs when
    one of them pins CPUs (the static CPU manager pins only whole CPUs: decisions/numa.py) and the share
    holds one; a smaller share (many time-sliced replicas) stays as it is, in the node's shared CPUs."""
    return _sized([unit_share(p, resource, mig_strategy) for p in pools], units, _pins(pools))


def _pins(pools: Sequence["NodePoolSpec"]) -> bool:
    return any(pool_kubelet(p).aligned for p in pools)


def _sized(shares: Sequence[Budget], units: int, whole_cpus: bool) -> PodSize:
    """`units` of the smallest of the pools' unit shares (pools that do not offer the resource left out), in
    whole CPUs when `whole_cpus` and the size holds one."""
    offered = [s for s in shares if s.cpu > 0] or [Budget(0.0, 0.0)]
    size = _round_down(min(s.cpu for s in offered) * units, min(s.memory_gib for s in offered) * units)
    if whole_cpus and size.cpu >= 1:
        return PodSize(float(math.floor(size.cpu)), size.memory_mib)
    return size


@dataclass(frozen=True)
class TeamFit:
    """Whether a team's CPU and memory quota admits its largest GPU pod at the default sizes (else the
    API server refuses such a pod: "exceeded quota")."""

    team: str
    gpus: int  # the team's largest pod: min(GPU quota, maxGpusPerPod)
    size: PodSize  # on the pool where that pod is smallest
    cpu_quota: str
    memory_quota: str

    @property
    def problems(self) -> list[str]:
        from gpu_platform.spec.models import quantity_value

        out = []
        if quantity_value(self.cpu_quota) < self.size.cpu:
            out.append(f"quota.cpu {self.cpu_quota} < {self.size.cpu_quantity}")
        if quantity_value(self.memory_quota) < self.size.memory_mib * 2**20:
            out.append(f"quota.memory {self.memory_quota} < {self.size.memory_quantity}")
        return out


def team_pools(spec: "PlatformSpec", team: "TeamSpec") -> list["NodePoolSpec"]:
    """The pools a team's whole-GPU pods can run on. With Kueue, those where its queue holds nominal quota
    or may borrow (a flavor with neither is one the queue never admits onto); without, every pool."""
    return _Reach(spec).pools(team)


class _Reach:
    """`team_pools` for every team, with what depends on the pools alone (Kueue's placement of every
    team's quota, the pool of each flavor) worked out once rather than once per team."""

    def __init__(self, spec: "PlatformSpec"):
        self.spec = spec
        if spec.queueing.enabled:
            from gpu_platform.decisions.queueing import gpu_flavors, placement

            self.placed = placement(spec)
            self.pool_of = {f.name: f.pool for f in gpu_flavors(spec)}

    def pools(self, team: "TeamSpec") -> list["NodePoolSpec"]:
        if not self.spec.queueing.enabled:
            return list(self.spec.node_pools)
        from gpu_platform.decisions.queueing import team_queue

        queue = team_queue(self.spec, team, self.placed)
        reachable = {self.pool_of[flavor] for (flavor, resource), q in queue.quotas.items()
                     if resource == names.GPU_RESOURCE and flavor in self.pool_of and q.nominal + q.borrowing_limit > 0}
        return [p for p in self.spec.node_pools if p.name in reachable]


class _PoolSizes:
    """Per pool, the whole GPUs a node offers and one GPU's share of the node, each worked out once
    however many teams may land on the pool."""

    def __init__(self, spec: "PlatformSpec"):
        self.mig_strategy = spec.mig_strategy
        self.gpus = {p.name: node_resources(p, spec.mig_strategy).get(names.GPU_RESOURCE, 0) for p in spec.node_pools}
        self.pinned = {p.name for p in spec.node_pools if pool_kubelet(p).aligned}  # the static CPU manager's
        self._shares: dict[str, Budget] = {}

    def share(self, pool: "NodePoolSpec") -> Budget:
        if pool.name not in self._shares:
            self._shares[pool.name] = unit_share(pool, names.GPU_RESOURCE, self.mig_strategy)
        return self._shares[pool.name]

    def pod_size(self, pools: Sequence["NodePoolSpec"], gpus: int) -> PodSize:
        """`pod_size(pools, nvidia.com/gpu, gpus)` from the shares already worked out."""
        return _sized([self.share(p) for p in pools], gpus, any(p.name in self.pinned for p in pools))


def team_fits(spec: "PlatformSpec") -> list[TeamFit]:
    """For each team with a GPU quota: its largest whole-GPU pod at the default sizes against its quota,
    sized on the pools the team can reach (`team_pools`). Whatever depends on the pools alone (Kueue's
    placement, each pool's GPUs and shares, the largest request) is worked out once, not once per team."""
    from gpu_platform.decisions.capacity import largest_gpu_request

    sizes, reach = _PoolSizes(spec), _Reach(spec)
    largest = largest_gpu_request(spec) if any(t.max_gpus_per_pod is None for t in spec.teams) else 0
    out = []
    for team in spec.teams:
        gpus = min(team.quota.gpus, team.max_gpus_per_pod if team.max_gpus_per_pod is not None else largest)
        hosts = [p for p in reach.pools(team) if sizes.gpus[p.name] >= gpus]
        if gpus and hosts:
            out.append(TeamFit(team.name, gpus, sizes.pod_size(hosts, gpus), team.quota.cpu, team.quota.memory))
    return out
