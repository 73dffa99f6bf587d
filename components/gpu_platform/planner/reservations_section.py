"""The plan's `reservations` section: each pool on reserved capacity (a Capacity Block's window and where it
stands on the as-of day, or the On-Demand Capacity Reservation it targets) and what the plan warns about.

Computed from the validated spec by decisions/reservations.py. Warnings never change the exit code: a block
that ended or ends within two days, a block not started under a pool that wants nodes already, Karpenter
leaving open ODCRs unused; notes say what the platform decided for a reserved pool (no placement group).
JSON shape in docs/node-pools.md; `VERSION` changes only when a field changes meaning.
"""
from __future__ import annotations

from datetime import date, datetime
from typing import Any, Optional

from gpu_platform.decisions import reservations
from gpu_platform.facts import catalog
from gpu_platform.facts.karpenter import KARPENTER
from gpu_platform.planner.sections import PlanContext, Section, register
from gpu_platform.planner.tables import md_table, text_table
from gpu_platform.spec.models import NodePoolSpec, PlatformSpec

NAME = "reservations"
TITLE = "Reserved capacity"
VERSION = 1
MARKS = {reservations.WARNING: "⚠️", reservations.NOTE: "ℹ️"}


def build(ctx: PlanContext) -> Optional[dict[str, Any]]:
    return None if ctx.spec is None else from_spec(ctx.spec, ctx.as_of or date.today())


def from_spec(spec: PlatformSpec, as_of: date) -> Optional[dict[str, Any]]:
    """The section, or None when no pool reserves capacity and there is nothing to warn about."""
    pools = [_pool(p, as_of) for p in spec.node_pools if reservations.kind(p)]
    found = reservations.findings(spec, as_of)
    if not pools and not found:
        return None
    return {
        "version": VERSION, "asOf": as_of.isoformat(), "drainMinutesBeforeEnd": catalog.CAPACITY_BLOCK_DRAIN_MINUTES,
        "pools": pools,
        "findings": [{"severity": f.severity, "pool": f.pool or None, "field": str(f.field), "message": f.message}
                     for f in found],
        "summary": {"warnings": sum(f.severity == reservations.WARNING for f in found),
                    "notes": sum(f.severity == reservations.NOTE for f in found)},
    }


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _pool(pool: NodePoolSpec, as_of: date) -> dict[str, Any]:
    kind, r = reservations.kind(pool), reservations.reservation(pool)
    out: dict[str, Any] = {
        "name": pool.name, "kind": kind, "id": r.id, "provisioner": pool.provisioner,
        "instanceType": pool.instance_types[0], "instances": r.instance_count, "maxSize": pool.max_size,
        "zones": pool.zones, "placementGroup": reservations.placement_group(pool),
    }
    if kind == reservations.CAPACITY_BLOCK:
        start, end = reservations.window(pool)
        out.update(start=_iso(start), end=_iso(end), state=reservations.state(pool, as_of),
                   nodesGoAt=_iso(reservations.drain_at(pool)), month=f"{as_of:%Y-%m}",
                   hoursInMonth=round(reservations.hours_in_month(pool, as_of), 2))
    return out


# --- rendering (from the JSON section) ---

def _window(p: dict[str, Any]) -> str:
    if p["kind"] != reservations.CAPACITY_BLOCK:
        return "until cancelled"
    return f"{p['start'][:16].replace('T', ' ')} to {p['end'][:16].replace('T', ' ')} UTC"


def _launch(p: dict[str, Any]) -> str:
    if p["provisioner"] == KARPENTER:
        return "NodePool: reserved" + (" (capacity-block)" if p["kind"] == reservations.CAPACITY_BLOCK else ", then on-demand")
    return "node group: " + ("CAPACITY_BLOCK" if p["kind"] == reservations.CAPACITY_BLOCK else "ON_DEMAND, targeted")


def _minute(iso: Optional[str]) -> str:
    return "-" if iso is None else f"{iso[:16].replace('T', ' ')} UTC"


def _rows(section: dict[str, Any]) -> list[list[str]]:
    return [[p["name"], p["id"], p["instanceType"], _window(p), p.get("state", "-"), _minute(p.get("nodesGoAt")),
             _launch(p)] for p in section["pools"]]


HEADERS = ["Pool", "Reservation", "Instance type", "Window", "On the day", "Nodes go at", "Launches as"]


def text(section: dict[str, Any]) -> str:
    lines = [f"  As of {section['asOf']}: a Capacity Block's nodes go {section['drainMinutesBeforeEnd']} minutes before "
             "its end."]
    if section["pools"]:
        lines += text_table(HEADERS, _rows(section))
    lines += [f"  {f['severity']}: {f['message']}" + (f" ({f['field']})" if f["field"] else "")
              for f in section["findings"]]
    return "\n".join(lines)


def markdown(section: dict[str, Any]) -> str:
    lines = [f"_As of {section['asOf']}: a Capacity Block's nodes go {section['drainMinutesBeforeEnd']} minutes before "
             "its end._"]
    if section["pools"]:
        lines += ["", *md_table(HEADERS, _rows(section))]
    if section["findings"]:
        lines += ["", *(f"- {MARKS[f['severity']]} {f['message']} (`{f['field']}`)" for f in section["findings"])]
    return "\n".join(lines)


SECTION = register(Section(NAME, TITLE, build, text, markdown, needs_platform=True))
