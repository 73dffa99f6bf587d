"""GPUs by Dynamic Resource Allocation, decided per pool (`nodePools[].gpuAllocation: dra`; docs/dra.md).

- Nodes: a DRA pool's nodes carry `gpu-platform.io/gpu-allocation: dra` (where NVIDIA's DRA kubelet plugin
  runs) and `nvidia.com/gpu.deploy.device-plugin: "false"` (the GPU Operator's device plugin stays off), so
  no node is ever served by both; the operator still owns driver, toolkit, GFD and DCGM there.
- Claims: each team that may use a DRA pool gets one ResourceClaimTemplate per shape the pool offers, a
  GPU model and a count of whole GPUs on one node (1, 2, 4, ... up to the node's GPUs), selected by the
  device's `productName` so a claim lands on that model's pools only.
- Counting: the cluster counts claimed GPUs under the device class (`gpu.nvidia.com`): the team's
  ResourceQuota bounds `gpu.nvidia.com.deviceclass.resource.k8s.io/devices`, and Kueue maps the class onto
  `nvidia.com/gpu`, so one nominal quota per team covers both allocation modes (decisions/queueing.py).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar
from collections.abc import Iterable, Sequence

from gpu_platform.facts import catalog, names

if TYPE_CHECKING:
    from gpu_platform.spec.models import GpuPool, NodePoolSpec, QueuePoolSpec, TeamSpec

DRA = "dra"
Pool = TypeVar("Pool", bound="GpuPool")  # a pool filter returns the kind of pool it was given


def is_dra(pool: "GpuPool") -> bool:
    return str(pool.gpu_allocation) == DRA


def dra_pools(pools: Iterable[Pool]) -> list[Pool]:
    return [p for p in pools if is_dra(p)]


def is_ultraserver(pool: "GpuPool") -> bool:
    """A pool of an UltraServer instance type (one NVLink domain across nodes, IMEX channels by ComputeDomain)."""
    return any(t in catalog.ULTRASERVERS for t in pool.instance_types)


def ultraserver_pools(pools: Iterable[Pool]) -> list[Pool]:
    return [p for p in pools if is_ultraserver(p)]


# Operands AWS turns off on UltraServer nodes, whose AMI brings driver, toolkit, fabric manager and IMEX and
# whose GPUs run without MIG (AWS EKS user guide, ml-eks-nvidia-ultraserver: driver.enabled, toolkit.enabled and
# migManager.enabled false). Per node, so device-plugin pools elsewhere keep theirs.
ULTRASERVER_OPERANDS_OFF = ("driver", "container-toolkit", "mig-manager")


def allocation_labels(pool: "GpuPool") -> dict[str, str]:
    """Node labels of a DRA pool (where the DRA kubelet plugin runs, the operator's device plugin off) and of an
    UltraServer pool (the operands the AMI replaces off; on the device plugin, where the kubelet plugin runs for
    ComputeDomains only)."""
    off = ULTRASERVER_OPERANDS_OFF if is_ultraserver(pool) else ()
    if is_dra(pool):
        return {names.GPU_ALLOCATION_LABEL: DRA, **{names.gpu_deploy_label(op): "false" for op in ("device-plugin", *off)}}
    if not off:
        return {}
    return {names.COMPUTE_DOMAINS_LABEL: "true", **{names.gpu_deploy_label(op): "false" for op in off}}


def driver_pools(pools: Iterable["GpuPool"]) -> list["GpuPool"]:
    """The pools NVIDIA's DRA driver runs on: DRA pools, and UltraServer pools for their ComputeDomains."""
    return [p for p in pools if is_dra(p) or is_ultraserver(p)]


def kubelet_plugin_selector(pools: Sequence["GpuPool"]) -> dict[str, str]:
    """Where the driver's kubelet plugin runs: DRA pools' nodes, else (GPUs on the device plugin, the plugin
    for ComputeDomains only) the UltraServer nodes. The stack file never mixes the two (rules_ultraserver)."""
    return {names.GPU_ALLOCATION_LABEL: DRA} if dra_pools(pools) else {names.COMPUTE_DOMAINS_LABEL: "true"}


def claim_counts(gpus_per_node: int) -> tuple[int, ...]:
    """Whole-GPU counts one claim may ask for on a node: powers of two up to the node's GPUs, and all of them."""
    counts, n = [], 1
    while n < gpus_per_node:
        counts.append(n)
        n *= 2
    return (*counts, gpus_per_node)


@dataclass(frozen=True)
class ClaimShape:
    """One ResourceClaimTemplate: `count` whole GPUs of one model on one node."""

    gpu: str  # catalog GPU key
    count: int

    @property
    def name(self) -> str:
        return names.claim_template_name(self.gpu, self.count)

    @property
    def product_name(self) -> str:
        """The DRA driver's `productName` attribute: NVML's device name."""
        return catalog.GPU_MODELS[self.gpu].nvml_name

    @property
    def selector(self) -> str:
        """CEL over the device's attributes in the driver's domain (gpu-kubelet-plugin deviceinfo.go)."""
        return f"device.attributes['{names.DRA_GPU_DRIVER}'].productName == '{self.product_name}'"


def team_may_use(team: "TeamSpec", pool: "GpuPool") -> bool:
    """A team may use a pool it lists in `queue.pools`, or every pool when it lists none."""
    return not team.queue.pools or pool.name in team.queue.pools


def team_dra_pools(pools: Sequence[Pool], team: "TeamSpec") -> list[Pool]:
    return [p for p in dra_pools(pools) if team_may_use(team, p)]


def claim_shapes(pools: Sequence["GpuPool"]) -> list[ClaimShape]:
    """The shapes these DRA pools offer, by GPU model then count."""
    shapes = {ClaimShape(p.gpu.key, n) for p in dra_pools(pools) for n in claim_counts(p.gpus_per_node)}
    return sorted(shapes, key=lambda s: (s.gpu, s.count))


def team_claim_shapes(pools: Sequence["GpuPool"], team: "TeamSpec") -> list[ClaimShape]:
    return claim_shapes(team_dra_pools(pools, team))


@dataclass(frozen=True)
class DomainShape:
    """A team's ComputeDomain for jobs spanning `nodes` nodes of an UltraServer pool; its IMEX channel's
    ResourceClaimTemplate (which the driver generates) is what each of the job's pods claims."""

    nodes: int

    @property
    def name(self) -> str:
        return names.compute_domain_name(self.nodes)

    @property
    def channel_template(self) -> str:
        return names.compute_domain_claim_template(self.nodes)


def team_domain_shapes(pools: Sequence["NodePoolSpec | QueuePoolSpec"], team: "TeamSpec") -> list[DomainShape]:
    """Multi-node shapes (2, 4, ... nodes, and the whole pool) of the UltraServer pools the team may use. One
    domain serves one job at a time (AWS: a ComputeDomain per workload job)."""
    sizes = {n for p in ultraserver_pools(pools) if team_may_use(team, p) for n in claim_counts(p.max_size) if n > 1}
    return [DomainShape(n) for n in sorted(sizes)]


def compute_domains_on(pools: Sequence["GpuPool"]) -> bool:
    """The driver's ComputeDomain side runs when a pool is an UltraServer pool, whichever its GPU allocation."""
    return bool(ultraserver_pools(pools))


def devices_quota(pools: Sequence["GpuPool"], team: "TeamSpec", gpus: str) -> dict[str, str]:
    """The team's ResourceQuota entry for claimed GPUs when the cluster has DRA pools: `gpus` (its GPU quota, or
    Kueue's ceiling of it) when it may use one, else 0, so no team claims GPUs no one gave it."""
    if not dra_pools(pools):
        return {}
    return {names.dra_devices_quota_key(names.DRA_GPU_CLASS): gpus if team_dra_pools(pools, team) else "0"}
