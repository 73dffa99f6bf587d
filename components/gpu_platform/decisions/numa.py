"""NUMA alignment of a pool's nodes: the kubelet's CPU and topology managers (pure; docs/numa.md).

On an 8-GPU training instance the GPUs and EFA NICs hang off two CPU sockets. With the static CPU manager
the kubelet gives a Guaranteed pod's containers with whole CPUs exclusive cores, and the topology manager
(policy `restricted` or `single-numa-node`) admits a pod only where those cores and its GPUs share NUMA
nodes (https://kubernetes.io/docs/tasks/administer-cluster/topology-manager/). Pools of the families in
facts/kubelet.py NUMA_ALIGNED_FAMILIES get this unless their `kubelet` says otherwise; other pools keep the
kubelet's defaults (no pinning) unless they ask.

Each node format writes the same KubeletConfiguration fields its own way: AL2023's NodeConfig
`spec.kubelet.config`, Ubuntu's kubelet flags, Bottlerocket's settings (node_boot; Karpenter's node classes
through their user data, render/karpenter).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from gpu_platform.facts import kubelet as facts

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec


@dataclass(frozen=True)
class PoolKubelet:
    """The CPU and topology manager settings a pool's nodes boot with."""

    cpu_manager_policy: str
    topology_manager_policy: str
    topology_manager_scope: str
    reserved_system_cpus: Optional[str]

    @property
    def aligned(self) -> bool:
        """Pods asking for whole CPUs at Guaranteed QoS get exclusive cores (the static CPU manager)."""
        return self.cpu_manager_policy == "static"

    @property
    def reserved_cpus(self) -> int:
        """How many CPUs `reserved_system_cpus` keeps from pods (0 without a list)."""
        return len(facts.cpu_list(self.reserved_system_cpus or ""))

    def config(self) -> dict[str, str]:
        """The KubeletConfiguration fields to set: only those away from the kubelet's defaults."""
        out: dict[str, str] = {}
        if self.cpu_manager_policy != "none":
            out["cpuManagerPolicy"] = self.cpu_manager_policy
        if self.topology_manager_policy != "none":
            out["topologyManagerPolicy"] = self.topology_manager_policy
            out["topologyManagerScope"] = self.topology_manager_scope
        if self.reserved_system_cpus:
            out["reservedSystemCPUs"] = self.reserved_system_cpus
        return out


OFF = PoolKubelet("none", "none", "container", None)


def aligned_by_default(pool: "NodePoolSpec") -> bool:
    """Every instance type of the pool is a two-socket 8-GPU training instance."""
    return all(it.family in facts.NUMA_ALIGNED_FAMILIES for it in pool.instances)


def pool_kubelet(pool: "NodePoolSpec") -> PoolKubelet:
    """The pool's own `kubelet`, else the default for its instance types. Under the static policy the first
    CPUs are kept for the system unless the pool names its own."""
    spec = pool.kubelet
    if spec is None:
        if not aligned_by_default(pool):
            return OFF
        from gpu_platform.spec.models import KubeletSpec

        spec = KubeletSpec()
    reserved = spec.reserved_system_cpus
    if reserved is None and spec.cpu_manager_policy == "static":
        reserved = facts.DEFAULT_RESERVED_SYSTEM_CPUS
    return PoolKubelet(spec.cpu_manager_policy, spec.topology_manager_policy, spec.topology_manager_scope, reserved)


def kubelet_flags(pool: "NodePoolSpec") -> list[str]:
    """The settings as kubelet flags (Ubuntu's bootstrap passes them through --kubelet-extra-args)."""
    return [f"{facts.KUBELET_FLAGS[k]}={v}" for k, v in pool_kubelet(pool).config().items()]


def bottlerocket_settings(pool: "NodePoolSpec") -> dict[str, str]:
    """The settings under settings.kubernetes (Bottlerocket's names of the same kubelet fields)."""
    return {facts.BOTTLEROCKET_SETTINGS[k]: v for k, v in pool_kubelet(pool).config().items()}
