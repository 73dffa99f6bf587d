"""Topology-aware placement with Kueue: which pools schedule multi-node jobs by network topology, and how.

Kueue (v0.19.2) admits a pod set onto a flavor that names a Topology only where the nodes' labels put all
its pods within one domain of the level asked for (`required`), or in as few domains as fit (`preferred`).
The levels are the AWS network layers the cloud controller labels nodes with from EC2's instance topology,
then the node itself (docs/topology.md).

A pool schedules by topology when queueing is on, its setting (`nodePools[].topology`) is not `none`, and it
can: every instance type is one EC2 describes the topology of (else its nodes carry no layer labels), and it
allocates GPUs through the device plugin. Kueue's topology-aware scheduling counts a node's allocatable
resources and does not see DRA devices (https://github.com/kubernetes-sigs/kueue/issues/10548, open at
v0.19.2), so DRA pools, UltraServer pools among them, keep their ComputeDomains as their placement. Unset,
the setting is `preferred` within `network-node-layer-3` on EFA pools that can, and `none` elsewhere.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator, Optional, Sequence

from gpu_platform.facts import catalog, names

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec, QueuePoolSpec

DEFAULT_PLACEMENT = "preferred"
LEVELS = tuple(names.NETWORK_NODE_LAYERS)  # coarsest first
DEFAULT_LEVEL = LEVELS[-1]  # the finest layer: the nodes closest to each other


@dataclass(frozen=True)
class PoolTopology:
    """A pool's placement by topology: `required` or `preferred`, at one level (its node label)."""

    placement: str
    level: str  # network-node-layer-N

    @property
    def label(self) -> str:
        return names.NETWORK_NODE_LAYERS[self.level]

    @property
    def annotation(self) -> str:
        return (names.KUEUE_REQUIRED_TOPOLOGY_ANNOTATION if self.placement == "required"
                else names.KUEUE_PREFERRED_TOPOLOGY_ANNOTATION)


def topology_levels() -> list[str]:
    """The Topology's node labels, coarsest first; the hostname last, as Kueue requires of it."""
    return [*names.NETWORK_NODE_LAYER_LABELS, names.HOSTNAME_LABEL]


def unsupported(pool: "NodePoolSpec | QueuePoolSpec") -> Optional[str]:
    """Why the pool cannot schedule by topology, or None when it can."""
    missing = [t for t in pool.instance_types if t not in catalog.TOPOLOGY_INSTANCE_TYPES]
    if missing:
        described = ", ".join(sorted(catalog.TOPOLOGY_INSTANCE_TYPES))
        return (f"EC2 does not describe the network topology of {', '.join(missing)}, so their nodes carry no "
                f"network-node-layer labels; instance types it describes: {described}")
    if pool.gpu_allocation != "device-plugin":
        return ("Kueue's topology-aware scheduling counts nodes' allocatable GPUs and does not see DRA devices; "
                "a DRA pool keeps its ComputeDomains (set placement: none)")
    return None


def pool_topology(pool: "NodePoolSpec | QueuePoolSpec") -> Optional[PoolTopology]:
    """The pool's placement by topology, or None when it schedules without (queueing on is the caller's)."""
    setting = pool.topology
    if setting is None:
        return PoolTopology(DEFAULT_PLACEMENT, DEFAULT_LEVEL) if pool.efa and unsupported(pool) is None else None
    if setting.placement == "none" or unsupported(pool) is not None:
        return None
    return PoolTopology(setting.placement, setting.level)


def topology_rules(pools: Sequence["NodePoolSpec | QueuePoolSpec"], queueing: bool) -> Iterator[tuple[str, str]]:
    """A placement a pool asks for that it cannot have, each at the field that asks."""
    for i, pool in enumerate(pools):
        setting = pool.topology
        if setting is None or setting.placement == "none":
            continue
        if not queueing:
            yield f"nodePools[{i}].topology", "applies when queueing.mode is kueue (Kueue places jobs by topology)"
            continue
        reason = unsupported(pool)
        if reason:
            yield f"nodePools[{i}].topology.placement", reason


def job_topology(pools: Sequence["NodePoolSpec | QueuePoolSpec"]) -> Optional[PoolTopology]:
    """What a multi-node job landing on these pools asks Kueue for: nothing unless every one of them schedules by
    topology (an annotation would keep the job off the others). Pools that agree give their setting; pools
    that differ give `preferred` at the finest level any of them names, which holds no job back."""
    settings = [pool_topology(p) for p in pools]
    if not settings or any(s is None for s in settings):
        return None
    if len(set(settings)) == 1:
        return settings[0]
    finest = max((s.level for s in settings if s is not None), key=LEVELS.index)
    return PoolTopology(DEFAULT_PLACEMENT, finest)
