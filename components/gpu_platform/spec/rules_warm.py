"""Rules on a pool's warm capacity (`nodePools[].warm`; docs/node-pools.md#warm-capacity).

A placeholder holds a node by requesting every GPU resource the node offers, so each holds one node and real
work preempts it. That needs the pool's GPUs to be extended resources one pod can take whole, and nodes the
autoscaler may still add.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gpu_platform.spec.field_path import FieldPath

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec

Problem = tuple[FieldPath, str]


def warm_rules(at: FieldPath, pool: "NodePoolSpec") -> Iterator[Problem]:
    warm = pool.warm
    if warm is None:
        return
    if warm.nodes > pool.max_size:
        yield (at / "warm.nodes", f"{warm.nodes} warm nodes exceed maxSize ({pool.max_size}): the pool never grows "
               f"past it; hold at most {pool.max_size} or raise maxSize")
    if pool.capacity_type == "capacity-block":
        yield (at / "warm", "a Capacity Block's instances are paid for the whole window and launched when it "
               "starts: there is nothing to keep warm; size the block (reservation.instanceCount) instead")
    if pool.gpu_allocation == "dra":
        yield (at / "warm", "a DRA pool's GPUs are allocated through ResourceClaims, not requested as an extended "
               "resource a placeholder pod could hold whole: keep nodes up with minSize instead")
    sharing = pool.sharing
    if sharing.mode == "time-slicing" and sharing.fail_requests_greater_than_one:
        yield (at / "warm", "a placeholder takes all of a node's time-sliced replicas, which "
               "sharing.failRequestsGreaterThanOne refuses: set it to false, or keep nodes up with minSize")
