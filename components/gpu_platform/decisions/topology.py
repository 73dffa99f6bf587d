"""Network proximity for multi-node jobs: the AWS network layers a job's pods should share.

EC2 describes where an instance sits in a hierarchy of network nodes, and the AWS cloud controller labels
each node with one `topology.k8s.aws/network-node-layer-N` per layer, top first (docs/topology.md). Only
instance types EC2 describes get the labels (`catalog.TOPOLOGY_INSTANCE_TYPES`). A multi-node job whose
pods may land only on such pools prefers nodes sharing the bottom layer with the job's other pods, then the
middle one, then the top one: a preference never holds a job back, which matters because Kueue admits a
job by quota, not by where its pods fit.
"""
from __future__ import annotations

from typing import TYPE_CHECKING
from collections.abc import Sequence

from gpu_platform.facts import catalog, names

if TYPE_CHECKING:
    from gpu_platform.spec.models import GpuPool, QueueingSpec

# Scheduler weights (1-100) per layer, bottom layer first: the closer the shared layer, the stronger the pull.
LAYER_WEIGHTS = (100, 50, 10)


def described(pool: "GpuPool") -> bool:
    """Every instance type of the pool is one whose nodes carry the network-layer labels."""
    return all(t in catalog.TOPOLOGY_INSTANCE_TYPES for t in pool.instance_types)


def proximity_layers(pools: Sequence["GpuPool"]) -> list[tuple[str, int]]:
    """(layer label, weight) a multi-node job landing on these pools prefers to share, bottom layer first;
    none unless every pool is described (on others the label is absent and the preference meaningless)."""
    if not pools or not all(described(p) for p in pools):
        return []
    return list(zip(reversed(names.NETWORK_NODE_LAYER_LABELS), LAYER_WEIGHTS, strict=True))


# --- Kueue's topology-aware scheduling (docs/topology.md#kueues-topology-aware-scheduling) ---

# The Topology's levels, top first, down to the node (Kueue requires the hostname level to be the last).
TOPOLOGY_LEVELS = (*names.NETWORK_NODE_LAYER_LABELS, names.HOSTNAME_LABEL)
# What a multi-node Job asks for by default: to fit under one bottom-layer network node, preferably.
DEFAULT_TOPOLOGY_LEVEL = names.NETWORK_NODE_LAYER_LABELS[-1]
TOPOLOGY_MODES = ("preferred", "required")


def topology_release(queueing: "QueueingSpec") -> bool:
    """Kueue is on, at a release that schedules by topology without a feature gate."""
    release = catalog.KUEUE_RELEASES.get(queueing.chart_version or "")
    return queueing.enabled and release is not None and release.topology_aware_scheduling


def schedules_by_topology(pool: "GpuPool", queueing: "QueueingSpec") -> bool:
    """A multi-node training pool Kueue places by topology: whole GPUs through the device plugin (a DRA device is
    no allocatable resource Kueue could count per domain), EFA (what multi-node jobs run on) and instance types
    whose nodes carry the network-layer labels."""
    return (topology_release(queueing) and described(pool) and pool.gpu_allocation != "dra"
            and pool.sharing.mode == "none" and bool(getattr(pool, "efa", False)))
