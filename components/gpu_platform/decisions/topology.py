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
    from gpu_platform.spec.models import GpuPool

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
