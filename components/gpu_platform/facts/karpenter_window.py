"""Disruption windows in Karpenter's terms: cron schedules (UTC) and durations, as minutes of a week.

A Karpenter budget with a schedule is active from each time the schedule fires for `duration` (active at
t when it fired in (t - duration, t]); per disruption reason the most restrictive active budget wins,
and with no active budget disruption is unbounded (karpenter.sh v1.14, Disruption: NodePool Disruption
Budgets; Karpenter parses schedules with robfig/cron's standard parser, in UTC). A window in which
nodes may be disrupted is therefore written the other way round: a `nodes: "0"` budget over every
stretch of the week outside it (`closed_budgets`). `first_open_minute` reads any list of budgets back
and finds a minute outside a window at which a reason could still disrupt a node.

Only weekly schedules are reasoned about: day of month and month must be `*`. Pure; no Pulumi.
"""
from __future__ import annotations

import re
from typing import Any, Optional
from collections.abc import Iterable, Mapping

WEEK = 7 * 24 * 60  # minutes; minute 0 is Sunday 00:00 UTC
DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")
DESCRIPTORS = {"@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *"}
DURATION = re.compile(r"(?:(\d+)h)?(?:(\d+)m)?(?:0s)?")
MAX_CLOSED_BUDGETS = 48  # a NodePool holds 50 budgets; two more say what may happen inside the window


class WindowError(ValueError):
    """A schedule or duration this module cannot read (the message says why)."""


def _number(text: str, names: tuple[str, ...]) -> int:
    lowered = text.lower()
    if lowered in names:
        return names.index(lowered)
    if not text.isdigit():
        raise WindowError(f"{text!r} is not a number{' or a day name' if names else ''}")
    return int(text)


def _field(text: str, low: int, high: int, names: tuple[str, ...] = ()) -> set[int]:
    """One cron field: `*`, `?`, lists, ranges, steps and (day of week) names, as robfig/cron reads them."""
    values: set[int] = set()
    for part in text.split(","):
        body, _, step_text = part.partition("/")
        step = _number(step_text, ()) if step_text else 1
        if step < 1:
            raise WindowError(f"step {step_text!r} must be at least 1")
        if body in ("*", "?"):
            start, end = low, high
        elif "-" in body:
            first, _, last = body.partition("-")
            start, end = _number(first, names), _number(last, names)
        else:
            start = _number(body, names)
            end = high if step_text else start  # `a/n` runs from a to the end of the range
        if not low <= start <= end <= high:
            raise WindowError(f"{part!r} is outside {low}-{high}")
        values.update(range(start, end + 1, step))
    return values


def fire_minutes(schedule: str) -> list[int]:
    """The minutes of the week at which a weekly cron schedule fires (sorted)."""
    expr = DESCRIPTORS.get(schedule.strip().lower(), schedule)
    if expr.startswith("@"):
        raise WindowError(f"{schedule!r} does not repeat every week; use five fields or @weekly, @daily, @hourly")
    fields = expr.split()
    if len(fields) != 5:
        raise WindowError(f"{schedule!r} is not a five-field cron schedule (minute hour day-of-month month day-of-week)")
    minute, hour, dom, month, dow = fields
    if dom not in ("*", "?") or month not in ("*", "?"):
        raise WindowError(f"{schedule!r} names a day of the month or a month: a window must repeat every week")
    minutes, hours, days = _field(minute, 0, 59), _field(hour, 0, 23), _field(dow, 0, 6, DAYS)
    return sorted(d * 1440 + h * 60 + m for d in days for h in hours for m in minutes)


def parse_duration(text: str) -> int:
    """Minutes of a budget duration: `4h`, `90m`, `2h30m` (an optional trailing `0s`, as Go prints them)."""
    m = DURATION.fullmatch(text.strip())
    if not m or (m.group(1) is None and m.group(2) is None):
        raise WindowError(f"{text!r} is not a duration in hours and minutes such as 4h, 90m or 2h30m")
    return int(m.group(1) or 0) * 60 + int(m.group(2) or 0)


def format_duration(minutes: int) -> str:
    hours, rest = divmod(minutes, 60)
    return (f"{hours}h" if hours else "") + (f"{rest}m" if rest or not hours else "")


def active(schedule: str, duration: str) -> bytearray:
    """1 for every minute of the week at which a budget with this schedule and duration is active."""
    length = parse_duration(duration)
    out = bytearray(WEEK)
    for start in fire_minutes(schedule):
        for t in range(start, start + min(length, WEEK)):
            out[t % WEEK] = 1
    return out


def closed_stretches(schedule: str, duration: str) -> list[tuple[int, int]]:
    """(start minute, length) of every stretch of the week outside the window, in week order."""
    open_ = active(schedule, duration)
    if all(open_):
        return []
    if not any(open_):
        raise WindowError("the window never opens")
    out = []
    for t in range(WEEK):
        if not open_[t] and open_[t - 1]:  # a closed stretch starts here (t - 1 wraps to Saturday)
            length = 1
            while not open_[(t + length) % WEEK]:
                length += 1
            out.append((t, length))
    return out


def closed_budgets(schedule: str, duration: str, reasons: Iterable[str]) -> list[dict[str, Any]]:
    """`nodes: "0"` budgets (for `reasons`) covering every minute outside the window, one per distinct
    start time and length (days sharing both share a budget)."""
    by_shape: dict[tuple[int, int, int], list[int]] = {}
    for start, length in closed_stretches(schedule, duration):
        day, minute_of_day = divmod(start, 1440)
        by_shape.setdefault((minute_of_day // 60, minute_of_day % 60, length), []).append(day)
    budgets = []
    for (hour, minute, length), days in sorted(by_shape.items()):
        dow = "*" if len(days) == 7 else ",".join(DAYS[d] for d in sorted(days))
        budgets.append({"nodes": "0", "reasons": list(reasons), "schedule": f"{minute} {hour} * * {dow}",
                        "duration": format_duration(length)})
    if len(budgets) > MAX_CLOSED_BUDGETS:
        raise WindowError(f"the window needs {len(budgets)} closed budgets; a NodePool holds {MAX_CLOSED_BUDGETS}: "
                          "open it less often (e.g. once a day or once a week)")
    return budgets


def window_problem(schedule: str, duration: str) -> Optional[str]:
    """Why a disruption window cannot be used, or None."""
    try:
        if parse_duration(duration) == 0:
            return "the window never opens (duration 0)"
        if not closed_stretches(schedule, duration):
            return "the window is always open, so it restricts nothing; open it for part of the week"
        closed_budgets(schedule, duration, ())
    except WindowError as err:
        return str(err)
    return None


def _zero(nodes: Any) -> bool:
    return str(nodes).strip() in ("0", "0%")


def _budget_active(budget: Mapping[str, Any]) -> Optional[bytearray]:
    """When a budget is active (None: never, as far as a weekly reading can prove)."""
    schedule, duration = budget.get("schedule"), budget.get("duration")
    if schedule is None and duration is None:
        return bytearray(b"\x01") * WEEK
    try:
        return active(str(schedule), str(duration))
    except (WindowError, TypeError):
        return None  # not weekly or unreadable: it cannot be counted on to block anything


def first_open_minute(budgets: Iterable[Mapping[str, Any]], window: Optional[bytearray], reason: str) -> Optional[int]:
    """The first minute outside `window` (None: no window, every minute) at which `budgets` let
    Karpenter disrupt a node for `reason`, or None when none does. Disruption is allowed at a minute
    unless an active budget for that reason allows zero nodes."""
    blocked = bytearray(WEEK)
    for budget in budgets:
        reasons = budget.get("reasons")
        if (reasons and reason not in reasons) or not _zero(budget.get("nodes")):
            continue
        when = _budget_active(budget)
        if when is not None:
            blocked = bytearray(a | b for a, b in zip(blocked, when, strict=True))
    for t in range(WEEK):
        if not blocked[t] and not (window is not None and window[t]):
            return t
    return None


def describe_minute(t: int) -> str:
    day, rest = divmod(t, 1440)
    return f"{DAYS[day].capitalize()} {rest // 60:02d}:{rest % 60:02d} UTC"
