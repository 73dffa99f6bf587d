"""Reserved capacity, decided from the spec: what a pool reserves, how its nodes launch into it, and what a
Capacity Block's window means on a given day (pure).

- A managed node group on a Capacity Block is created with capacityType CAPACITY_BLOCK and a launch template
  naming the instance type, market type `capacity-block` and the block's id; the node group lists no
  instance type of its own (EKS fails a group that names one in both places) and its subnets are in the
  block's zone (AWS EKS user guide, capacity-blocks-mng; botocore eks CreateNodegroup instanceTypes).
- A managed node group on an On-Demand Capacity Reservation is an ON_DEMAND group whose launch template
  targets the reservation id: its nodes launch only into it.
- A Karpenter pool selects the reservation by id in its EC2NodeClass (`capacityReservationSelectorTerms`)
  and allows Karpenter's `reserved` capacity type: on a block only reserved capacity of type
  `capacity-block`; on an ODCR reserved first, then on-demand when the reservation is full (karpenter.sh
  v1.14, Utilizing ODCRs and Capacity Blocks).
- No cluster placement group on a reserved EFA pool: a block's instances are already placed close together
  ("no need to use a cluster placement group with a Capacity Block", EC2 user guide, Work with Capacity
  Blocks), and a placement group the reservation was not made in makes its launches fail for want of
  capacity (terraform-aws-eks PR 3730, p6-b200 against ODCRs and Capacity Blocks).
- Time: a block is paid up front for every hour of its window; EKS scales its group to zero and Karpenter
  drains its nodes 40 minutes before the end (catalog.CAPACITY_BLOCK_DRAIN_MINUTES).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from typing import TYPE_CHECKING, Any

from gpu_platform.decisions.dra import is_dra
from gpu_platform.facts import catalog
from gpu_platform.facts.field_path import NODE_POOLS, FieldPath
from gpu_platform.facts.karpenter import KARPENTER

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec, PlatformSpec, ReservationSpec

CAPACITY_BLOCK, ODCR = "capacity-block", "odcr"
# A block ending this soon after the plan's day is named: its nodes are drained before a change merged
# today has long been live.
ENDING_WITHIN = timedelta(hours=48)
DRAIN = timedelta(minutes=catalog.CAPACITY_BLOCK_DRAIN_MINUTES)
# A DRA node group cannot wait at 0 for the autoscaler (spec/rules_dra.py): its launches fail until the block starts.
_DRA_FIXED = ("a DRA pool has a fixed size the autoscaler cannot change, so the errors last until the block is "
              "active; apply the stack once it is, or accept them")
SCHEDULED, ACTIVE, ENDED = "scheduled", "active", "ended"
WARNING, NOTE = "warning", "note"


def kind(pool: "NodePoolSpec") -> str:
    """`capacity-block`, `odcr` (an on-demand pool targeting a reservation) or "" (no reservation)."""
    if pool.capacity_type == CAPACITY_BLOCK:
        return CAPACITY_BLOCK
    return ODCR if pool.reservation is not None and pool.capacity_type == "on-demand" else ""


def is_block(pool: "NodePoolSpec") -> bool:
    return kind(pool) == CAPACITY_BLOCK


def reserved_instances(pool: "NodePoolSpec") -> int:
    """The instances a reservation holds (and bills, used or not): its instanceCount, else the pool's maxSize."""
    r = pool.reservation
    return r.instance_count if r is not None and r.instance_count else pool.max_size


def single_zone(pool: "NodePoolSpec") -> bool:
    """A node group confined to one reservation runs in its one zone (Karpenter finds the zone itself)."""
    return bool(kind(pool)) and pool.provisioner != KARPENTER


def placement_group(pool: "NodePoolSpec") -> bool:
    """An EFA pool gets a cluster placement group unless a reservation already decides where it runs."""
    return pool.efa and not kind(pool)


# --- the launch template and the NodePool ---

def reservation(pool: "NodePoolSpec") -> "ReservationSpec":
    """The reservation of a pool that has one (`kind(pool)` is set)."""
    if pool.reservation is None:
        raise ValueError(f"pool {pool.name!r} has no reservation")
    return pool.reservation


def window(pool: "NodePoolSpec") -> tuple[datetime, datetime]:
    """A Capacity Block's window: the stack file's rules give every block its start and end."""
    r = reservation(pool)
    if r.start is None or r.end is None:
        raise ValueError(f"pool {pool.name!r}: a Capacity Block needs reservation.start and reservation.end")
    return r.start, r.end


def template_reservation(pool: "NodePoolSpec") -> dict[str, Any]:
    """Launch template fields (pulumi_aws argument names) that launch a node group's nodes into its reservation."""
    if not kind(pool):
        return {}
    out: dict[str, Any] = {"capacity_reservation_specification": {
        "capacity_reservation_target": {"capacity_reservation_id": reservation(pool).id}}}
    if is_block(pool):
        out["instance_market_options"] = {"market_type": CAPACITY_BLOCK}
        out["instance_type"] = pool.instance_types[0]
    return out


def karpenter_capacity_types(pool: "NodePoolSpec") -> list[str]:
    """The NodePool's `karpenter.sh/capacity-type` values: reserved capacity first where there is one."""
    if is_block(pool):
        return ["reserved"]
    if kind(pool) == ODCR:
        return ["reserved", "on-demand"]
    return [pool.capacity_type]


def reservation_selector_terms(pool: "NodePoolSpec") -> list[dict[str, str]]:
    """The EC2NodeClass's capacityReservationSelectorTerms: the reservation by id ([] without one)."""
    return [{"id": reservation(pool).id}] if kind(pool) else []


# --- time ---

def _utc(day: date) -> datetime:
    return datetime.combine(day, time(), tzinfo=timezone.utc)


def month_of(day: date) -> tuple[datetime, datetime]:
    """The calendar month holding `day`, as [first 00:00 UTC, next month's first 00:00 UTC)."""
    first = _utc(day.replace(day=1))
    if (day.year, day.month) == (date.max.year, date.max.month):  # no next month to name: the last instant
        return first, datetime.max.replace(tzinfo=timezone.utc)
    return first, _utc((day.replace(day=1) + timedelta(days=32)).replace(day=1))


def hours_in_month(pool: "NodePoolSpec", day: date) -> float:
    """Hours of the block's window inside the month holding `day` (0 outside it)."""
    (start, end), (month_start, month_end) = window(pool), month_of(day)
    overlap = min(end, month_end) - max(start, month_start)
    return max(overlap.total_seconds(), 0) / 3600


def termination_minutes(pool: "NodePoolSpec") -> int:
    """How long before the block's end EC2 starts terminating its instances (60 minutes for UltraServers)."""
    found = [catalog.ULTRASERVERS[t].block_termination_minutes for t in pool.instance_types if t in catalog.ULTRASERVERS]
    return max([catalog.CAPACITY_BLOCK_TERMINATION_MINUTES, *found])


def drain_at(pool: "NodePoolSpec") -> datetime:
    """When the block's nodes go: EKS's scheduled scale-down to zero or Karpenter's drain, or EC2's termination
    where that comes first (UltraServers)."""
    return window(pool)[1] - max(DRAIN, timedelta(minutes=termination_minutes(pool)))


def state(pool: "NodePoolSpec", day: date) -> str:
    """The block on `day` (its 00:00 UTC): scheduled, active or ended."""
    moment, (start, end) = _utc(day), window(pool)
    return SCHEDULED if moment < start else ACTIVE if moment < end else ENDED


# --- what the plan says about reserved pools ---

@dataclass(frozen=True)
class Finding:
    severity: str  # warning | note
    pool: str
    field: FieldPath  # the stack file field that changes it
    message: str


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _block_findings(at: FieldPath, pool: "NodePoolSpec", day: date) -> list[Finding]:
    r, (start, end), found = reservation(pool), window(pool), []
    who = ("Karpenter drains its nodes" if pool.provisioner == KARPENTER
           else f"EKS scales the node group to zero ({catalog.CAPACITY_BLOCK_SCALE_DOWN_ACTION!r})")
    now = state(pool, day)
    if now == ENDED:
        found.append(Finding(WARNING, pool.name, at / "reservation", (
            f"Capacity Block {r.id} ended on {_when(end)}: {who} from {_when(drain_at(pool))}, so the pool has had "
            "no nodes since; buy a new block and set its id and window, or move the pool to on-demand")))
    elif end - _utc(day) <= ENDING_WITHIN:
        found.append(Finding(WARNING, pool.name, at / "reservation.end", (
            f"Capacity Block {r.id} ends on {_when(end)}: {who} at {_when(end - DRAIN)}, 40 minutes before the "
            f"end, and EC2 terminates what is left {termination_minutes(pool)} minutes before it; "
            "running jobs must checkpoint before then. Extend the block (PurchaseCapacityBlockExtension) and set "
            "the new end, or plan where the work goes")))
    if now == SCHEDULED and pool.min_size > 0 and pool.provisioner != KARPENTER:
        found.append(Finding(WARNING, pool.name, at / "minSize", (
            f"Capacity Block {r.id} starts on {_when(start)}: until then the Auto Scaling group cannot launch the "
            f"{pool.min_size} node(s) minSize asks for and logs launch errors, and EKS upgrades such groups at "
            "size 0; " + (_DRA_FIXED if is_dra(pool) else
                          "keep minSize 0 and let the autoscaler scale up once the block is active"))))
    return found


def findings(spec: "PlatformSpec", day: date) -> list[Finding]:
    """What the plan warns or notes about reserved capacity on `day`, pool by pool, then for Karpenter."""
    found: list[Finding] = []
    for i, pool in enumerate(spec.node_pools):
        at = NODE_POOLS.index(i)
        if is_block(pool):
            found += _block_findings(at, pool, day)
        if pool.efa and kind(pool):
            found.append(Finding(NOTE, pool.name, at / "efa", (
                "no cluster placement group: the reservation already decides where the nodes run (a Capacity "
                "Block's instances are placed close together), and a placement group it was not made in would "
                "fail the launches")))
    open_types = sorted({t for p in spec.node_pools if p.provisioner == KARPENTER and p.capacity_type == "on-demand"
                         and not kind(p) for t in p.instance_types})
    if open_types:
        found.append(Finding(WARNING, "", NODE_POOLS.each() / "reservation", (
            "Karpenter's reserved capacity (the ReservedCapacity feature, on by default) launches on-demand nodes "
            "with CapacityReservationPreference none: an open On-Demand Capacity Reservation of "
            f"{', '.join(open_types)} sits unused, and paid for, unless a pool names it in reservation.id")))
    return found
