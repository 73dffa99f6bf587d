"""Warm capacity (`nodePools[].warm`): how many nodes each pool keeps ready, and what a placeholder asks for
so that it holds exactly one node until real work preempts it (docs/node-pools.md#warm-capacity).

A placeholder requests every GPU resource a node of the pool offers (whole GPUs, MIG slices or time-sliced
replicas, as the device plugin advertises them), so no two share a node and any GPU pod that lands there must
preempt it; the autoscaler then adds a node for the evicted placeholder, up to maxSize.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpu_platform.decisions.capacity import node_resources
from gpu_platform.decisions.tolerations import toleration
from gpu_platform.facts import names

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec, PlatformSpec


@dataclass(frozen=True)
class WarmPool:
    pool: str
    nodes: int  # placeholders, one per node
    gpu_requests: dict[str, int]  # one placeholder's GPU resources: everything one node offers
    tolerations: list[dict[str, str]]  # the GPU taint and the pool's own


def warm_pool(pool: "NodePoolSpec", mig_strategy: str) -> WarmPool:
    assert pool.warm is not None
    gpu_taint = {"key": names.GPU_TAINT_KEY, "operator": "Equal", "value": names.GPU_TAINT_VALUE,
                 "effect": "NoSchedule"}
    return WarmPool(pool.name, pool.warm.nodes, node_resources(pool, mig_strategy),
                    [gpu_taint, *(toleration(t) for t in pool.taints)])


def warm_pools(spec: "PlatformSpec") -> list[WarmPool]:
    return [warm_pool(p, spec.mig_strategy) for p in spec.node_pools if p.warm is not None]


def warm_nodes(pool: "NodePoolSpec") -> int:
    return pool.warm.nodes if pool.warm is not None else 0
