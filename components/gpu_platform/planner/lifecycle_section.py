"""The plan's `lifecycle` section: where each pinned version stands in its support window on the as-of date.

Built from what the program registered (decisions/pinned.py) and judged by decisions/lifecycle.py, the
same reading and rules the policy pack's lifecycle rules use. A version past end of life is an error in
prod (the plan then exits 2, see cli.py) and a warning elsewhere. JSON shape in docs/lifecycle.md;
`VERSION` changes only when a field changes meaning.
"""
from __future__ import annotations

from datetime import date
from typing import Any, Optional

from gpu_platform.decisions import lifecycle, pinned
from gpu_platform.facts.lifecycle_calendar import CHECKED
from gpu_platform.planner.sections import PlanContext, Section, register
from gpu_platform.planner.tables import md_table, money, text_table

NAME = "lifecycle"
TITLE = "Support windows"
VERSION = 1
STRICT_ENVIRONMENTS = ("prod",)
MARKS = {lifecycle.ERROR: "❌", lifecycle.WARNING: "⚠️"}


def build(ctx: PlanContext) -> Optional[dict[str, Any]]:
    if ctx.spec is None:
        return None
    return from_plan(ctx.plan, ctx.spec.environment, ctx.as_of or date.today())


def from_plan(plan: dict[str, Any], environment: str, as_of: date, warn_days: int = lifecycle.WARN_DAYS) -> dict[str, Any]:
    pins = pinned.from_plan(plan)
    strict = environment in STRICT_ENVIRONMENTS
    found = lifecycle.verdicts(pins, as_of, strict, warn_days)
    return {
        "version": VERSION, "asOf": as_of.isoformat(), "environment": environment, "strict": strict,
        "warnDays": warn_days, "calendarChecked": CHECKED,
        "standing": [_standing(s) for s in lifecycle.standings(pins, as_of)],
        "verdicts": [_verdict(v) for v in found],
        "summary": {"errors": sum(v.severity == lifecycle.ERROR for v in found),
                    "warnings": sum(v.severity == lifecycle.WARNING for v in found)},
    }


def _day(d: Optional[date]) -> Optional[str]:
    return None if d is None else d.isoformat()


def _standing(s: lifecycle.Standing) -> dict[str, Any]:
    return {"kind": s.kind, "subject": s.subject, "version": s.version, "status": s.status, "until": _day(s.until),
            "note": s.note, "confirmed": s.confirmed, "source": s.source, "checked": s.checked}


def _verdict(v: lifecycle.Verdict) -> dict[str, Any]:
    return {"severity": v.severity, "kind": v.kind, "subject": v.subject, "field": v.field, "message": v.message,
            "date": _day(v.date), "monthlyUsd": None if v.monthly_usd is None else round(v.monthly_usd, 2)}


def errors(section: Optional[dict[str, Any]]) -> list[str]:
    """The section's errors as one line each (what makes the plan exit 2)."""
    return [f"{v['field']}: {v['message']}" for v in (section or {}).get("verdicts", [])
            if v["severity"] == lifecycle.ERROR]


# --- rendering (from the JSON section, so text, Markdown and JSON never disagree) ---

def _heading(section: dict[str, Any]) -> str:
    rule = "past end of life is an error" if section["strict"] else "past end of life is a warning"
    return (f"As of {section['asOf']} ({section['environment']}: {rule}); warnings from {section['warnDays']} days "
            f"before an end of support. Calendar checked {section['calendarChecked']}.")


def _row(s: dict[str, Any]) -> list[str]:
    # a date the calendar holds but cannot yet stand behind; a version it does not hold says so in its note
    marked = not s["confirmed"] and s["status"] != lifecycle.UNKNOWN
    return [s["subject"], s["version"], s["status"], s["until"] or "", s["note"] + (" [unconfirmed]" if marked else "")]


def _cost(v: dict[str, Any]) -> str:
    return f" (+${money(v['monthlyUsd'])}/month)" if v["monthlyUsd"] and v["severity"] == lifecycle.WARNING else ""


def text(section: dict[str, Any]) -> str:
    lines = [f"  {_heading(section)}"]
    lines += text_table(["Pinned", "Version", "Status", "Until", "Calendar"], [_row(s) for s in section["standing"]])
    lines.append("")
    verdicts = section["verdicts"]
    lines += [f"  {v['severity']}: {v['message']}{_cost(v)}" for v in verdicts] or ["  No lifecycle warnings."]
    return "\n".join(lines)


def markdown(section: dict[str, Any]) -> str:
    lines = [f"_{_heading(section)}_", ""]
    lines += [f"{MARKS[v['severity']]} **{v['subject']}**: {v['message']}{_cost(v)}" for v in section["verdicts"]] \
        or ["✅ No lifecycle warnings."]
    lines += ["", "<details><summary>Pinned versions and their support windows</summary>", ""]
    lines += md_table(["Pinned", "Version", "Status", "Until", "Calendar"], [_row(s) for s in section["standing"]])
    sources = sorted({(s["source"], s["checked"]) for s in section["standing"] if s["source"]})
    if sources:
        lines += ["", "- Sources: " + "; ".join(f"{src} (checked {day})" for src, day in sources) + "."]
    lines += ["", "</details>"]
    return "\n".join(lines)


SECTION = register(Section(NAME, TITLE, build, text, markdown, needs_platform=True))
