"""The plan's `acceptance` section: per gated pool, what a new node must pass before it takes work, how long
that keeps it from being schedulable, and what that time costs each time the pool scales up by a node (at
the pool's price as the cost section prices it). JSON shape in docs/acceptance.md."""
from __future__ import annotations

from datetime import date
from typing import Any, Optional

from gpu_platform.decisions import acceptance, cost
from gpu_platform.facts import acceptance as facts
from gpu_platform.facts import names
from gpu_platform.planner.sections import PlanContext, Section, register
from gpu_platform.planner.tables import md_table, text_table
from gpu_platform.spec.models import PlatformSpec

NAME = "acceptance"
TITLE = "Node acceptance: what a new GPU node proves before it takes work"
VERSION = 1


def build(ctx: PlanContext) -> Optional[dict[str, Any]]:
    return None if ctx.spec is None else from_spec(ctx.spec, ctx.as_of or date.today())


def from_spec(spec: PlatformSpec, as_of: date) -> Optional[dict[str, Any]]:
    gated = acceptance.accepted_pools(spec)
    if not gated:
        return None
    pricing = cost.Pricing.from_spec(spec.pricing)
    pools = []
    for pool, gate in gated:
        rate = cost.estimate_pool(cost.pool_facts(pool, as_of), pricing).usd_per_node_hour
        pools.append({
            "name": pool.name, "level": gate.level, "dcgm": facts.DCGM_LEVELS[gate.level].name,
            "checks": list(gate.checks), "ncclFloorGbps": gate.nccl_floor_gbps, "efaInterfaces": gate.efa_interfaces,
            "timeoutMinutes": gate.timeout_minutes, "expectedSeconds": gate.expected_seconds,
            "recheckHours": gate.recheck_hours,
            "usdPerNodeHour": rate,
            "usdPerScaleUp": acceptance.scale_up_cost_usd(gate, rate) if rate is not None else None,
        })
    return {"version": VERSION, "startupTaint": f"{names.ACCEPTANCE_TAINT_KEY}={names.ACCEPTANCE_TAINT_VALUE}:"
                                                 f"{names.ACCEPTANCE_TAINT_EFFECT}",
            "condition": names.ACCEPTANCE_CONDITION, "controller": facts.NODE_READINESS_IMAGE, "pools": pools}


def _minutes(seconds: int) -> str:
    return f"{seconds / 60:.1f} min"


def _rows(section: dict[str, Any]) -> list[list[str]]:
    return [[p["name"], f"{p['level']}", ", ".join(p["checks"]),
             f"{p['ncclFloorGbps']:g} GB/s" if p["ncclFloorGbps"] else "-", _minutes(p["expectedSeconds"]),
             f"{p['timeoutMinutes']} min", f"${p['usdPerScaleUp']:,.2f}" if p["usdPerScaleUp"] is not None else "?",
             f"every {p['recheckHours']} h" if p.get("recheckHours") else "off"]
            for p in section["pools"]]


HEADERS = ["Pool", "DCGM level", "Checks", "NCCL floor", "Added to schedulable", "Timeout", "Cost per node scale-up",
           "Idle re-check"]


def _note(section: dict[str, Any]) -> str:
    return (f"New nodes register with {section['startupTaint']}; the node readiness controller lifts it once the "
            f"{section['condition']} condition is True. A node that fails keeps the taint, is labelled with the failing "
            "check and alerts (docs/acceptance.md).")


def text(section: dict[str, Any]) -> str:
    return "\n".join([*text_table(HEADERS, _rows(section)), f"  {_note(section)}"])


def markdown(section: dict[str, Any]) -> str:
    return "\n".join([*md_table(HEADERS, _rows(section)), "", f"_{_note(section)}_"])


SECTION = register(Section(NAME, TITLE, build, text, markdown, needs_platform=True))
