"""Rules on a pool's kubelet CPU and topology managers (`nodePools[].kubelet`; docs/numa.md)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpu_platform.facts import kubelet as facts

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec

Problem = tuple[str, str]


def kubelet_rules(at: str, pool: "NodePoolSpec") -> Iterator[Problem]:
    spec = pool.kubelet
    if spec is None or spec.reserved_system_cpus is None:
        return
    path = f"{at}.kubelet.reservedSystemCpus"
    if any(int(first) > int(last) for first, _, last in
           (term.partition("-") for term in spec.reserved_system_cpus.split(",")) if last):
        yield path, "a range runs from the lower CPU to the higher, e.g. 0-3"
        return
    cpus = facts.cpu_list(spec.reserved_system_cpus)
    vcpus = min(it.vcpu for it in pool.instances)
    if cpus[-1] >= vcpus:
        yield path, f"CPU {cpus[-1]} does not exist on a {vcpus}-vCPU node (CPUs 0-{vcpus - 1})"
    elif len(cpus) >= vcpus:
        yield path, f"keeps all {vcpus} vCPUs from pods; reserve fewer"
