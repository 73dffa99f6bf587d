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
  reservation it is confined to; a critical pool does not run on capacity that ends on a date;
- a block's window is one AWS sells: 1 to 14 days in 1-day steps, then up to 182 days in 7-day steps, to
  11:30 UTC (EC2 user guide, capacity-blocks-purchase.html), in a year near the plan's. A block bought to
  start at once starts when it is bought ("if a Capacity Block starts at 04:55 and ends at 11:30, the hours
  field would be 6", EC2 API reference, CapacityBlockOffering), so its first day may be short;
- one reservation, one pool: two windows for one block, or a block's id targeted as an ODCR of another type,
  compete for one reservation at apply (`platform_rules`).
"""
from __future__ import annotations

from datetime import date, datetime, timedelta
from collections.abc import Iterator
from typing import Optional

from gpu_platform.facts import catalog, syntax
from gpu_platform.facts.karpenter import KARPENTER
from gpu_platform.spec.field_path import NODE_POOLS, FieldPath, Problem
from gpu_platform.spec.models import NodePoolSpec, PlatformSpec
from gpu_platform.spec.pool_context import PoolContext

CAPACITY_BLOCK, ON_DEMAND, SPOT = "capacity-block", "on-demand", "spot"


def pool_rules(ctx: PoolContext, pool: NodePoolSpec) -> Iterator[Problem]:
    at, r = ctx.at, pool.reservation
    yield from local_zone_rules(at, pool)
    if pool.capacity_type == CAPACITY_BLOCK:
        yield from _block_rules(ctx, at, pool)
    elif r is not None and pool.capacity_type == SPOT:
        yield (at / "reservation", "spot instances never launch into a capacity reservation: use capacityType "
               "on-demand to target an On-Demand Capacity Reservation, or capacity-block for a Capacity Block")
    elif r is not None:
        if r.quoted_usd_per_hour is not None or r.quoted_on is not None:
            yield (at / "reservation" / ("quotedUsdPerHour" if r.quoted_usd_per_hour is not None else "quotedOn"),
                   "a Capacity Block's quote (capacityType capacity-block); an On-Demand Capacity Reservation is "
                   "billed at the on-demand rate (pricing.onDemandUsdPerHour)")
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
    else:
        yield from window_rules(at, r.start, r.end, ctx.today or date.today())
        if r.quoted_on is not None and r.quoted_on > r.start.date():
            yield (at / "reservation.quotedOn", f"{r.quoted_on} is after the block starts ({_iso(r.start)}): a block "
                   "is quoted and bought before it starts, and its fee is charged then")
    if r is not None and r.quoted_on is not None and r.quoted_usd_per_hour is None:
        yield at / "reservation.quotedOn", "the day of a quote: give the quoted rate too (quotedUsdPerHour)"
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
    if _sold_in_local_zones(pool):
        yield from _local_zone_block_rules(at, pool, zones_known)
    elif pool.provisioner != KARPENTER and zones_known and (pool.zones is None or len(pool.zones) != 1):
        yield (at / "zones", f"{what} lives in one Availability Zone: list that zone alone, so the node group's "
               "subnets are all in it")
    count = pool.reservation.instance_count if pool.reservation else None
    if count is not None and pool.max_size > count:
        yield (at / "maxSize", f"must be <= reservation.instanceCount ({count}): {what} has no room for more nodes "
               "and the launches beyond it fail")


def _sold_in_local_zones(pool: NodePoolSpec) -> tuple[str, ...]:
    """The Local Zones where this block pool's instance type is sold (empty: Availability Zones)."""
    if pool.capacity_type != CAPACITY_BLOCK:
        return ()
    return tuple(z for t in pool.instance_types for z in catalog.block_local_zones(t))


def _local_zone_block_rules(at: FieldPath, pool: NodePoolSpec, zones_known: bool) -> Iterator[Problem]:
    """A block sold in a Local Zone launches only into a subnet there (EC2 user guide, capacity-blocks-launch)."""
    sold = _sold_in_local_zones(pool)
    where = " or ".join(sold)
    if not zones_known:
        yield (at / "zones", f"{pool.instance_types[0]} Capacity Blocks live in the Local Zone {where}, and the "
               "cluster's subnets are not known to reach it: create the VPC with cluster.create.vpc.localZones: "
               f"[{sold[0]}] (a component: give the subnets' zones, one of them {sold[0]})")
    elif pool.zones is None or len(pool.zones) != 1 or pool.zones[0] not in sold:
        yield (at / "zones", f"{pool.instance_types[0]} Capacity Blocks live in the Local Zone {where} (you must be "
               f"opted in to it), and no instance launches in another zone: list zones: [{sold[0]}]")


def local_zone_rules(at: FieldPath, pool: NodePoolSpec) -> Iterator[Problem]:
    """A pool names a Local Zone only where the catalog sells its type's Capacity Blocks."""
    sold = _sold_in_local_zones(pool)
    for z in pool.zones or []:
        if syntax.is_local_zone(z) and z not in sold:
            yield (at / "zones", f"{z} is a Local Zone, where the catalog knows Capacity Blocks of "
                   f"{_types_in(z)} only, not this pool's {pool.capacity_type} {', '.join(pool.instance_types)}: use "
                   "the region's Availability Zones")


def _types_in(zone: str) -> str:
    return ", ".join(t for t in catalog.LOCAL_ZONE_BLOCKS if zone in catalog.block_local_zones(t)) or "no type"


def window_rules(at: FieldPath, start: datetime, end: datetime, today: date) -> Iterator[Problem]:
    """A Capacity Block window as AWS sells it, each problem naming the field to edit."""
    hour, minute = catalog.CAPACITY_BLOCK_BOUNDARY_UTC
    years = range(today.year - catalog.CAPACITY_BLOCK_YEARS_AROUND, today.year + catalog.CAPACITY_BLOCK_YEARS_AROUND + 1)
    off = False  # a year or a time of day already named: the length would only repeat it
    for name, moment in (("start", start), ("end", end)):
        if moment.year not in years:
            off = True
            yield (at / "reservation" / name, f"{_iso(moment)} is not a Capacity Block's time: blocks are bought "
                   f"weeks ahead for at most 26 weeks, so a window lies in {years[0]} to {years[-1]} (the plan is of "
                   f"{today.isoformat()})")
        elif name == "end" and (moment.hour, moment.minute, moment.second, moment.microsecond) != (hour, minute, 0, 0):
            off = True
            yield (at / "reservation" / name, f"{_iso(moment)}: every Capacity Block ends at "
                   f"{hour:02}:{minute:02} UTC (EC2 user guide, Find and purchase Capacity Blocks)")
    if not off:
        problem = duration_problem(end - start)
        if problem:
            yield at / "reservation.end", problem


def duration_problem(length: timedelta) -> Optional[str]:
    """What is wrong with a block's length (None when AWS sells it): 1-14 days, or 7-day steps up to 182. A
    window that ends at 11:30 UTC but started at another time began when it was bought: its short first day
    counts as a day of the offering."""
    days, rest = divmod(length, timedelta(days=1))
    days += 1 if rest else 0
    weekly = catalog.CAPACITY_BLOCK_WEEKLY_STEP_DAYS
    if length > timedelta(0) and (1 <= days <= catalog.CAPACITY_BLOCK_DAILY_MAX_DAYS or
                                  (days % weekly == 0 and days <= catalog.CAPACITY_BLOCK_MAX_DAYS)):
        return None
    return (f"a window of {_length(length)} is not sold: Capacity Blocks last 1 to "
            f"{catalog.CAPACITY_BLOCK_DAILY_MAX_DAYS} days in 1-day steps, or {weekly}-day steps up to "
            f"{catalog.CAPACITY_BLOCK_MAX_DAYS} days (EC2 user guide, Find and purchase Capacity Blocks)")


def platform_rules(spec: PlatformSpec) -> Iterator[Problem]:
    """One reservation, one pool: a block's id on a second pool, or one ODCR targeted by pools of different
    instance types, would have the pools compete for (or fail to launch into) one reservation."""
    seen: dict[str, int] = {}
    for i, pool in enumerate(spec.node_pools):
        r = pool.reservation
        if r is None or pool.capacity_type == SPOT:
            continue
        first = seen.setdefault(r.id, i)
        if first == i:
            continue
        other = spec.node_pools[first]
        if CAPACITY_BLOCK in (pool.capacity_type, other.capacity_type) or other.instance_types != pool.instance_types:
            yield (NODE_POOLS.index(i) / "reservation.id", f"{r.id} is also {NODE_POOLS.index(first)}'s reservation: "
                   "a Capacity Block (or an On-Demand Capacity Reservation of one instance type) serves one pool; "
                   "give each pool its own reservation, or one pool the whole of it")


def _length(length: timedelta) -> str:
    days, rest = divmod(length, timedelta(days=1))
    hours = rest / timedelta(hours=1)
    return f"{days} days" + (f" {hours:g} hours" if hours else "") if days else f"{hours:g} hours"


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
