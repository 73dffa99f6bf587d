"""Host memory of a model server (pure): what its pod requests and is limited to, and how many replicas a node's
allocatable memory holds.

A server needs host memory besides its GPUs' (facts/serving.py, a stated planning figure): a base for the API
server and engine core, a share per GPU worker, and the weights staged one checkpoint file at a time. The pod
asks for the larger of that and its GPUs' share of the node (decisions/pod_sizing.py), in whole GiB when it is
above the share. A replica that asks more than its share leaves fewer replicas on a node than its GPUs would:
the capacity checks count replicas per node by both.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING

from gpu_platform.decisions.capacity import node_resources
from gpu_platform.decisions.pod_sizing import node_budget, pod_size
from gpu_platform.facts import serving

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec
    from gpu_platform.spec.serving import ServiceSpec


def host_need_gib(service: "ServiceSpec") -> float:
    """Base, one share per GPU worker (a worker per tensor-parallel GPU), and the largest checkpoint file staged."""
    shard_gib = serving.CHECKPOINT_SHARD_GB * 1e9 / 2**30
    return (serving.SERVER_HOST_BASE_GIB + serving.SERVER_HOST_PER_GPU_GIB * service.gpu.tp
            + min(service.model.size_gib, shard_gib))


def server_memory_mib(pool: "NodePoolSpec", service: "ServiceSpec", resource: str, units: int,
                      mig_strategy: str) -> int:
    """The pod's memory request (= limit): its GPUs' share of the node, or the server's need in whole GiB if more."""
    share = pod_size([pool], resource, units, mig_strategy).memory_mib
    return max(share, math.ceil(host_need_gib(service)) * 1024)


def node_memory_mib(pool: "NodePoolSpec") -> int:
    """What one node of the pool (its smallest instance type) leaves for GPU pods."""
    return math.floor(node_budget(pool).memory_gib * 1024)


def replicas_per_node(pool: "NodePoolSpec", resource: str, units: int, memory_mib: int, mig_strategy: str) -> int:
    """Replicas one node holds: as many as its GPU units allow and its allocatable memory holds."""
    by_gpu = node_resources(pool, mig_strategy).get(resource, 0) // units
    return min(by_gpu, node_memory_mib(pool) // memory_mib) if memory_mib else by_gpu
