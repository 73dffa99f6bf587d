"""Reservations nearing their end alert at run time: promtool's clock starts at 1970-01-01T00:00Z, so a block
ending four days later is watched through its warning, critical and end."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from gpu_platform.render.reservation_alerts import ReservationEnd, reservation_ends
from gpu_platform.decisions.validation import parse_platform
from tests.support.stacks import stack_platform
from tests.render.promtool_rules import description, group, run

EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
END = EPOCH + timedelta(hours=96)
DRAIN = END - timedelta(minutes=40)  # 95h20m
BLOCK = ReservationEnd("h100-block", "cr-0123456789abcdef0", "capacity-block", DRAIN, END)
LABELS = {"pool": BLOCK.pool, "reservation": BLOCK.reservation, "kind": BLOCK.kind}


def ending(severity: str, hours: int, left: str) -> dict:
    summary = (f"capacity-block {BLOCK.reservation} of pool {BLOCK.pool}: its nodes go in {left} (under {hours}h).")
    return {"exp_labels": {**LABELS, "severity": severity},
            "exp_annotations": {"summary": summary, "description": description("GpuReservationEnding",
                                                                               severity=severity)}}


def at(moment: datetime) -> str:
    """promtool's eval_time of a moment: minutes since its clock's start."""
    return f"{int((moment - EPOCH).total_seconds() // 60)}m"


def test_a_block_warns_then_turns_critical_before_its_drain_and_stops_at_its_end(promtool, tmp_path, t):
    warn, crit = timedelta(hours=t.reservation_warning_hours), timedelta(hours=t.reservation_critical_hours)
    warned, critical = DRAIN - warn, DRAIN - crit
    minute = timedelta(minutes=1)
    checks = [
        (at(warned - minute), []),
        (at(warned + minute), [ending("warning", t.reservation_warning_hours, _left(warn - minute))]),
        (at(critical + minute), [ending("warning", t.reservation_warning_hours, _left(crit - minute)),
                                 ending("critical", t.reservation_critical_hours, _left(crit - minute))]),
        (at(END + minute), []),
    ]
    spec = group([], [])
    spec["alert_rule_test"] = [{"eval_time": when, "alertname": "GpuReservationEnding", "exp_alerts": exp}
                               for when, exp in checks]
    run(promtool, tmp_path, t, [spec], reservation_ends=[BLOCK])


def _left(d: timedelta) -> str:
    """Prometheus' humanizeDuration for whole minutes."""
    days, rest = divmod(int(d.total_seconds()), 86400)
    hours, rest = divmod(rest, 3600)
    text = f"{hours}h {rest // 60}m 0s"
    return f"{days}d {text}" if days else text


def test_without_reservations_the_alert_stays_silent(promtool, tmp_path, t):
    spec = group([], [])
    spec["alert_rule_test"] = [{"eval_time": "100h", "alertname": "GpuReservationEnding", "exp_alerts": []}]
    run(promtool, tmp_path, t, [spec])


@pytest.mark.parametrize("stack, pools", [("training-blackwell", ["b200-train"]), ("dev", [])])
def test_each_capacity_block_of_a_stack_is_watched_with_its_drain(stack, pools):
    ends = reservation_ends(parse_platform(stack_platform(stack)))
    assert [e.pool for e in ends] == pools
    for e in ends:
        assert e.kind == "capacity-block" and e.end - e.drain == timedelta(minutes=40)


def test_a_time_without_a_zone_is_read_as_utc():
    from gpu_platform.render.reservation_alerts import recording_rules
    naive = ReservationEnd("p", "cr-0123456789abcdef0", "odcr", datetime(1970, 1, 2), datetime(1970, 1, 2))
    assert {r["expr"] for r in recording_rules([naive])} == {"vector(86400)"}


def test_the_component_refuses_a_reservation_end_that_is_no_time():
    from gpu_platform.resources.monitoring import monitoring_settings
    from gpu_platform.spec.errors import SpecError
    bad = [{"pool": "p", "reservation": "cr-0123456789abcdef0", "kind": "odcr", "drain": "soon", "end": "later"}]
    with pytest.raises(SpecError, match=r"reservation_ends\[0\]: drain and end must be ISO 8601"):
        monitoring_settings("m", {"reservation_ends": bad})


def test_a_critical_tier_not_below_the_warning_is_refused_naming_the_field():
    platform = stack_platform("dev")
    platform["monitoring"]["alerts"] = {"reservationWarningHours": 4, "reservationCriticalHours": 4}
    with pytest.raises(Exception, match=r"monitoring\.alerts\.reservationCriticalHours: must be below"):
        parse_platform(platform)
