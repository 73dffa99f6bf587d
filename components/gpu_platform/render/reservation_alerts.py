"""Reservations nearing their end, alerted at run time: each pool's end and drain from the stack file as
constant series, compared with Prometheus' clock (`time()`), so the warning comes however long ago the plan ran.

A Capacity Block's nodes go at its drain (EKS's scheduled scale-down or Karpenter's drain, 40 minutes before the
end, or EC2's termination where that comes first:
https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-using.html); an ODCR with an end date stops
holding capacity at its end (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-reservations-using.html).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any
from collections.abc import Sequence

from gpu_platform.decisions import reservations
from gpu_platform.render.alert_rule import alerting_rule

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec

END = "gpu_platform:reservation_end_timestamp_seconds"
DRAIN = "gpu_platform:reservation_drain_timestamp_seconds"
RECORDED = frozenset({END, DRAIN})


@dataclass(frozen=True)
class ReservationEnd:
    pool: str
    reservation: str  # the reservation's id
    kind: str  # capacity-block | odcr
    drain: datetime  # when the pool's nodes go
    end: datetime


def reservation_ends(spec: "PlatformSpec") -> tuple[ReservationEnd, ...]:
    """Every reserved pool whose reservation has an end: each Capacity Block, and ODCRs given one."""
    out = []
    for pool in spec.node_pools:
        kind = reservations.kind(pool)
        end = pool.reservation.end if pool.reservation is not None else None
        if kind and end is not None:
            drain = reservations.drain_at(pool) if kind == reservations.CAPACITY_BLOCK else end
            out.append(ReservationEnd(pool.name, reservations.reservation(pool).id, kind, drain, end))
    return tuple(out)


def _epoch(moment: datetime) -> int:
    """Seconds since 1970 of a stack-file time (UTC where it names no zone)."""
    return int((moment if moment.tzinfo else moment.replace(tzinfo=timezone.utc)).timestamp())


def recording_rules(ends: Sequence[ReservationEnd]) -> list[dict[str, Any]]:
    rules = []
    for r in ends:
        labels = {"pool": r.pool, "reservation": r.reservation, "kind": r.kind}
        rules += [{"record": END, "expr": f"vector({_epoch(r.end)})", "labels": labels},
                  {"record": DRAIN, "expr": f"vector({_epoch(r.drain)})", "labels": labels}]
    return rules


def ending_alerts(t: Any) -> list[dict[str, Any]]:
    """Warning and critical tiers by the hours left before the drain; both stop at the reservation's end."""
    return [alerting_rule(
        "GpuReservationEnding",
        f"({DRAIN} - time()) < {hours * 3600} and on (pool, reservation) ({END} - time()) > 0", 0, severity,
        "{{ $labels.kind }} {{ $labels.reservation }} of pool {{ $labels.pool }}: its nodes go in "
        "{{ $value | humanizeDuration }} (under " f"{hours}h).",
        "When the reservation ends its capacity goes: a Capacity Block's nodes are drained 40 minutes before "
        "its end (EC2 terminates what is left 30 minutes before it, 60 for UltraServers), an ODCR stops holding "
        "instances. Running jobs must checkpoint before then. Extend the block (PurchaseCapacityBlockExtension) "
        "or buy the next one and set nodePools[].reservation in the stack file, or plan where the work goes. "
        "A negative time means the nodes are already gone. Thresholds: monitoring.alerts."
        "reservationWarningHours (warning), reservationCriticalHours (critical).",
    ) for severity, hours in (("warning", t.reservation_warning_hours), ("critical", t.reservation_critical_hours))]
