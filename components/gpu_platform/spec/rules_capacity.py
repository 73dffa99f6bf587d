"""Stack-file rules for reserved capacity: a pool on an EC2 Capacity Block for ML (`capacityType:
capacity-block` with `reservation: {id, start, end}`) or an on-demand pool targeting an On-Demand Capacity
Reservation (`reservation: {id}`). Each rule refuses what AWS refuses, with the field to edit:

- a Capacity Block is a targeted reservation of one instance type in one Availability Zone, sold for the
  P families only, with at most 64 instances (EC2 user guide, "Capacity Blocks for ML"); a managed node
  group on one needs that instance type in its launch template and subnets in that zone only (AWS EKS user
  guide, capacity-blocks-mng);
- a targeted ODCR holds one instance type in one zone: a node group's other types or zones never launch
  (Karpenter falls back to on-demand for them, so its pools may list more);
- spot instances never run in a reservation; a window ends after it starts; a pool cannot outgrow the
  reservation it is confined to; a critical pool does not run on capacity that ends on a date.
"""
from __future__ import annotations

from typing import Iterator

from gpu_platform.facts import catalog
from gpu_platform.facts.karpenter import KARPENTER
from gpu_platform.spec.field_path import FieldPath
from gpu_platform.spec.models import NodePoolSpec
from gpu_platform.spec.pool_context import PoolContext

Problem = tuple[str, str]
CAPACITY_BLOCK, ON_DEMAND, SPOT = "capacity-block", "on-demand", "spot"


def pool_rules(ctx: PoolContext, pool: NodePoolSpec) -> Iterator[Problem]:
    at, r = ctx.at, pool.reservation
    if pool.capacity_type == CAPACITY_BLOCK:
        yield from _block_rules(ctx, at, pool)
    elif r is not None and pool.capacity_type == SPOT:
        yield (at / "reservation", "spot instances never launch into a capacity reservation: use capacityType "
               "on-demand to target an On-Demand Capacity Reservation, or capacity-block for a Capacity Block")
    elif r is not None:
        if r.start is not None or r.end is not None:
            yield (at / "reservation.start", "start and end are a Capacity Block's window (capacityType "
                   "capacity-block); an On-Demand Capacity Reservation is given by its id alone")
        if pool.provisioner != KARPENTER:
            yield from _confined_rules(ctx, at, pool, "an On-Demand Capacity Reservation")


def _block_rules(ctx: PoolContext, at: FieldPath, pool: NodePoolSpec) -> Iterator[Problem]:
    r = pool.reservation
    if r is None or r.start is None or r.end is None:
        yield (at / "reservation", "a capacity-block pool runs on one Capacity Block: give its {id: cr-..., start: "
               "<UTC time>, end: <UTC time>} as `aws ec2 describe-capacity-blocks` shows them")
    elif r.end <= r.start:
        yield at / "reservation.end", f"the window ends ({_iso(r.end)}) before it starts ({_iso(r.start)})"
    other = sorted({it.family for it in pool.instances} - set(catalog.CAPACITY_BLOCK_FAMILIES))
    if other:
        yield (at / "instanceTypes", f"Capacity Blocks are sold for {', '.join(catalog.CAPACITY_BLOCK_FAMILIES)} "
               f"instances, not {', '.join(other)}; capacityType on-demand can target an On-Demand Capacity "
               "Reservation of any type (reservation: {id: cr-...})")
    if pool.critical:
        yield (at / "critical", "a critical pool must keep its capacity, and a Capacity Block ends on a date: run it "
               "on-demand (with an On-Demand Capacity Reservation to hold the capacity)")
    if r is not None and r.instance_count is not None and r.instance_count > catalog.CAPACITY_BLOCK_MAX_INSTANCES:
        yield (at / "reservation.instanceCount",
               f"a Capacity Block holds at most {catalog.CAPACITY_BLOCK_MAX_INSTANCES} instances")
    yield from _confined_rules(ctx, at, pool, "a Capacity Block")


def _confined_rules(ctx: PoolContext, at: FieldPath, pool: NodePoolSpec, what: str) -> Iterator[Problem]:
    """A pool confined to one reservation: its one instance type, its one zone, its size."""
    if len(pool.instance_types) > 1:
        yield (at / "instanceTypes", f"{what} reserves one instance type: list only it (the others could never "
               "launch into the reservation)")
    zones_known = ctx.vpc is not None or ctx.subnet_zones is not None
    if pool.provisioner != KARPENTER and zones_known and (pool.zones is None or len(pool.zones) != 1):
        yield (at / "zones", f"{what} lives in one Availability Zone: list that zone alone, so the node group's "
               "subnets are all in it")
    count = pool.reservation.instance_count if pool.reservation else None
    if count is not None and pool.max_size > count:
        yield (at / "maxSize", f"must be <= reservation.instanceCount ({count}): {what} has no room for more nodes "
               "and the launches beyond it fail")


def _iso(moment) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
