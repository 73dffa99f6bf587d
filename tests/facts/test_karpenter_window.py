"""Disruption windows: cron schedules and durations as minutes of the week, the `nodes: "0"` budgets that
close the rest of the week, and reading any budgets back."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_platform.facts.karpenter_window import (
    DAYS,
    WEEK,
    WindowError,
    active,
    closed_budgets,
    closed_stretches,
    describe_minute,
    fire_minutes,
    first_open_minute,
    format_duration,
    parse_duration,
    window_problem,
)

REASONS = ["Drifted", "Underutilized"]
SUNDAY_2AM = 2 * 60


# --- reading schedules and durations ---

@pytest.mark.parametrize("text, minutes", [("4h", 240), ("90m", 90), ("2h30m", 150), ("164h", 9840), ("4h0s", 240),
                                           ("30m0s", 30)])
def test_durations_are_hours_and_minutes(text, minutes):
    assert parse_duration(text) == minutes


@pytest.mark.parametrize("text", ["", "0s", "10s", "4", "h", "4x", "1d", "-4h"])
def test_other_durations_are_refused(text):
    with pytest.raises(WindowError):
        parse_duration(text)


@pytest.mark.parametrize("minutes, text", [(240, "4h"), (30, "30m"), (150, "2h30m"), (0, "0m")])
def test_durations_print_as_karpenter_reads_them(minutes, text):
    assert format_duration(minutes) == text and parse_duration(text) == minutes


@pytest.mark.parametrize("schedule, first, count", [
    ("0 2 * * sun", SUNDAY_2AM, 1),
    ("0 2 * * SUN", SUNDAY_2AM, 1),  # names in any case, as robfig/cron reads them
    ("0 2 * * 0", SUNDAY_2AM, 1),
    ("0 2 * * *", SUNDAY_2AM, 7),
    ("30 22 * * mon-fri", 1440 + 22 * 60 + 30, 5),
    ("0 */6 * * sat", 6 * 1440, 4),
    ("15 3/12 ? * 1,3", 1440 + 3 * 60 + 15, 4),
    ("@weekly", 0, 1),
    ("@daily", 0, 7),
    ("@hourly", 0, 168),
])
def test_weekly_schedules_fire_at_their_minutes(schedule, first, count):
    fires = fire_minutes(schedule)
    assert (fires[0], len(fires)) == (first, count)


@pytest.mark.parametrize("schedule, why", [
    ("0 2 1 * *", "day of the month"),
    ("0 2 * 6 *", "month"),
    ("@monthly", "does not repeat every week"),
    ("0 2 * *", "five-field"),
    ("0 25 * * *", "outside 0-23"),
    ("0 2 * * 7", "outside 0-6"),
    ("0 2 * * funday", "not a number"),
    ("*/0 * * * *", "at least 1"),
])
def test_schedules_that_are_not_weekly_or_not_cron_are_refused(schedule, why):
    with pytest.raises(WindowError, match=why):
        fire_minutes(schedule)


def test_a_budget_is_active_from_each_firing_for_its_duration():
    on = active("0 2 * * sun", "4h")
    assert sum(on) == 240 and on[SUNDAY_2AM] and on[SUNDAY_2AM + 239] and not on[SUNDAY_2AM + 240]
    assert not on[SUNDAY_2AM - 1]


def test_a_window_running_past_saturday_midnight_wraps_to_sunday():
    on = active("0 22 * * sat", "4h")
    assert on[WEEK - 1] and on[0] and on[119] and not on[120]


# --- closing the rest of the week ---

def test_a_weekly_window_is_closed_by_one_budget_over_the_other_164_hours():
    assert closed_budgets("0 2 * * sun", "4h", REASONS) == [
        {"nodes": "0", "reasons": REASONS, "schedule": "0 6 * * sun", "duration": "164h"}]


def test_a_daily_window_shares_one_budget_across_the_week():
    assert closed_budgets("0 2 * * *", "4h", REASONS) == [
        {"nodes": "0", "reasons": REASONS, "schedule": "0 6 * * *", "duration": "20h"}]


def test_stretches_of_different_length_get_their_own_budgets():
    budgets = closed_budgets("0 22 * * sat,sun", "6h", REASONS)
    assert [(b["schedule"], b["duration"]) for b in budgets] == [("0 4 * * sun", "18h"), ("0 4 * * mon", "138h")]


def test_overlapping_firings_make_one_window():
    assert closed_stretches("0 1,2 * * sun", "2h") == [(4 * 60, WEEK - 3 * 60)]  # open 01:00-04:00


@pytest.mark.parametrize("schedule, duration, problem", [
    ("0 2 * * sun", "0m", "never opens"),
    ("0 * * * *", "1h", "always open"),
    ("0 2 1 * *", "4h", "day of the month"),
    ("*/5 * * * *", "1m", "holds 48"),
])
def test_unusable_windows_are_named(schedule, duration, problem):
    assert problem in window_problem(schedule, duration)


def test_a_usable_window_has_no_problem():
    assert window_problem("0 2 * * sun", "4h") is None


# --- reading budgets back ---

def test_closed_budgets_leave_no_minute_outside_the_window():
    window = active("0 2 * * sun", "4h")
    budgets = closed_budgets("0 2 * * sun", "4h", REASONS)
    assert all(first_open_minute(budgets, window, r) is None for r in REASONS)


def test_without_a_window_the_first_open_minute_is_the_window_s_first():
    budgets = closed_budgets("0 2 * * sun", "4h", REASONS)
    assert first_open_minute(budgets, None, "Drifted") == SUNDAY_2AM


def test_a_budget_for_other_reasons_does_not_close_the_week():
    budgets = closed_budgets("0 2 * * sun", "4h", ["Underutilized"])
    assert first_open_minute(budgets, active("0 2 * * sun", "4h"), "Drifted") == 0


def test_a_nonzero_or_missing_budget_allows_disruption_everywhere():
    window = active("0 2 * * sun", "4h")
    assert first_open_minute([{"nodes": "1"}], window, "Drifted") == 0
    assert first_open_minute([], window, "Drifted") == 0


@pytest.mark.parametrize("nodes", ["0", "0%"])
def test_an_always_active_zero_budget_blocks_every_minute(nodes):
    assert first_open_minute([{"nodes": nodes}], None, "Drifted") is None


def test_a_budget_that_is_not_weekly_cannot_be_counted_on():
    assert first_open_minute([{"nodes": "0", "schedule": "0 0 1 * *", "duration": "720h"}], None, "Drifted") == 0


def test_minutes_read_as_day_and_utc_time():
    assert describe_minute(0) == "Sun 00:00 UTC" and describe_minute(1440 + 6 * 60 + 5) == "Mon 06:05 UTC"


@settings(max_examples=40, deadline=None)
@given(days=st.sets(st.integers(0, 6), min_size=1), hour=st.integers(0, 23), minute=st.sampled_from([0, 15, 30, 45]),
       length=st.integers(15, 20 * 60))
def test_closed_budgets_close_exactly_the_minutes_outside_any_daily_window(days, hour, minute, length):
    schedule = f"{minute} {hour} * * {','.join(DAYS[d] for d in sorted(days))}"
    duration = format_duration(length)
    window = active(schedule, duration)
    budgets = closed_budgets(schedule, duration, REASONS)
    blocked = bytearray(WEEK)
    for b in budgets:
        blocked = bytearray(x | y for x, y in zip(blocked, active(b["schedule"], b["duration"]), strict=True))
    assert all(blocked[t] != window[t] for t in range(WEEK))
