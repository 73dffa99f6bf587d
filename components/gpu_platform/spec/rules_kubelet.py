"""Rules on a pool's kubelet CPU and topology managers (`nodePools[].kubelet`; docs/numa.md)."""
from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpu_platform.facts import kubelet as facts
from gpu_platform.spec.field_path import FieldPath, Problem

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec


def kubelet_rules(at: FieldPath, pool: "NodePoolSpec") -> Iterator[Problem]:
    """The CPUs kept for the system (the pool's, or the default under the static policy) exist on the pool's
    smallest instance type and leave some for pods. A pool left unset is one the defaults fit."""
    spec = pool.kubelet
    if spec is None:
        return
    given = spec.reserved_system_cpus
    cpuset = given or (facts.DEFAULT_RESERVED_SYSTEM_CPUS if spec.cpu_manager_policy == "static" else "")
    if not cpuset:
        return
    path, shown = at / "kubelet.reservedSystemCpus", "" if given else f"the default {cpuset} "
    if any(int(first) > int(last) for first, _, last in (term.partition("-") for term in cpuset.split(",")) if last):
        yield path, "a range runs from the lower CPU to the higher, e.g. 0-3"
        return
    cpus = facts.cpu_list(cpuset)
    vcpus = min(it.vcpu for it in pool.instances)
    if cpus[-1] >= vcpus:
        yield path, f"{shown}CPU {cpus[-1]} does not exist on a {vcpus}-vCPU node (CPUs 0-{vcpus - 1})"
    elif len(cpus) >= vcpus:
        yield path, f"{shown}keeps all {vcpus} vCPUs from pods; reserve fewer"
