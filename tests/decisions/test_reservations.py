"""Reserved capacity decided from the spec: what a node group and a NodePool launch into, and what a Capacity
Block's window means on fixed days (its hours in the month, its state, when its nodes go, the warnings)."""
from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from gpu_platform.decisions import reservations as r
from gpu_platform.decisions.node_pool import node_group_inputs
from gpu_platform.decisions.placement import subnet_indices
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.spec.pool_context import PoolContext
from tests.support.blackwell import blackwell, block_pool, karpenter_twin, odcr_pool
from tests.support.stacks import spec_of, stack_platform


@pytest.fixture(scope="module")
def spec():
    return spec_of("training-blackwell")


def pool(spec, name):
    return next(p for p in spec.node_pools if p.name == name)


def utc(*args) -> datetime:
    return datetime(*args, tzinfo=timezone.utc)


def test_what_each_pool_reserves(spec):
    assert (r.kind(pool(spec, "b200-train")), r.kind(pool(spec, "rtx-serve"))) == ("capacity-block", "odcr")
    assert r.kind(spec_of("prod").node_pools[0]) == ""
    assert r.reserved_instances(pool(spec, "b200-train")) == 4


def test_a_block_node_group_names_its_type_only_in_the_launch_template(spec):
    b200 = pool(spec, "b200-train")
    inputs = node_group_inputs(PoolContext.of(spec, b200), b200)
    assert (inputs.capacity_type, inputs.instance_types) == ("CAPACITY_BLOCK", None)
    assert r.template_reservation(b200) == {
        "capacity_reservation_specification": {"capacity_reservation_target": {
            "capacity_reservation_id": "cr-0b2c4d6e8f0a1b3c5"}},
        "instance_market_options": {"market_type": "capacity-block"},
        "instance_type": "p6-b200.48xlarge"}


def test_an_odcr_node_group_is_on_demand_and_targets_its_reservation(spec):
    rtx = pool(spec, "rtx-serve")
    inputs = node_group_inputs(PoolContext.of(spec, rtx), rtx)
    assert (inputs.capacity_type, inputs.instance_types) == ("ON_DEMAND", ["g7e.12xlarge"])
    assert r.template_reservation(rtx) == {"capacity_reservation_specification": {"capacity_reservation_target": {
        "capacity_reservation_id": "cr-0e7e12b0d5a4c3f21"}}}


def test_pools_without_a_reservation_launch_as_before():
    prod = spec_of("prod")
    assert all(r.template_reservation(p) == {} and r.reservation_selector_terms(p) == [] for p in prod.node_pools)
    assert r.placement_group(next(p for p in prod.node_pools if p.efa))


def test_reserved_pools_get_no_placement_group_and_one_zone(spec):
    b200 = pool(spec, "b200-train")
    assert b200.efa and not r.placement_group(b200)
    assert subnet_indices(PoolContext.of(spec, b200), b200, ["us-east-1a", "us-east-1b", "us-east-1c"]) == [0]
    rtx = pool(spec, "rtx-serve")
    assert subnet_indices(PoolContext.of(spec, rtx), rtx, ["us-east-1a", "us-east-1b", "us-east-1c"]) == [1]


def test_karpenter_capacity_types_put_reserved_capacity_first():
    twin = parse_platform(karpenter_twin())
    assert r.karpenter_capacity_types(pool(twin, "b200-train")) == ["reserved"]
    assert r.karpenter_capacity_types(pool(twin, "rtx-serve")) == ["reserved", "on-demand"]
    assert r.reservation_selector_terms(pool(twin, "b200-train")) == [{"id": "cr-0b2c4d6e8f0a1b3c5"}]


# --- time: the window 2026-11-16 11:30 to 2026-12-14 11:30 UTC ---

@pytest.mark.parametrize("day, hours", [
    (date(2026, 11, 23), 14 * 24 + 12.5),  # Nov 16 11:30 to Dec 1 00:00
    (date(2026, 11, 1), 14 * 24 + 12.5),  # any day of the month prices the same month
    (date(2026, 12, 31), 13 * 24 + 11.5),  # Dec 1 00:00 to Dec 14 11:30
    (date(2027, 1, 5), 0),
    (date(2026, 10, 31), 0),
])
def test_a_blocks_hours_in_the_month_of_a_day(spec, day, hours):
    assert r.hours_in_month(pool(spec, "b200-train"), day) == pytest.approx(hours)


def test_a_month_is_its_calendar_month_in_utc():
    assert r.month_of(date(2026, 12, 9)) == (utc(2026, 12, 1), utc(2027, 1, 1))
    assert r.month_of(date(2028, 2, 29)) == (utc(2028, 2, 1), utc(2028, 3, 1))
    last = r.month_of(date(9999, 12, 31))  # the calendar's last month has no next month to name
    assert last[0] == utc(9999, 12, 1) and last[1].year == 9999


@pytest.mark.parametrize("day, state", [(date(2026, 11, 16), r.SCHEDULED), (date(2026, 11, 17), r.ACTIVE),
                                        (date(2026, 12, 14), r.ACTIVE), (date(2026, 12, 15), r.ENDED)])
def test_a_blocks_state_on_a_day(spec, day, state):
    assert r.state(pool(spec, "b200-train"), day) == state


def test_the_nodes_go_40_minutes_before_the_end(spec):
    assert r.drain_at(pool(spec, "b200-train")) == utc(2026, 12, 14, 10, 50)


# --- what the plan warns about ---

def warnings(spec, day):
    return [f for f in r.findings(spec, day) if f.severity == r.WARNING]


def test_an_active_block_far_from_its_end_has_no_warning(spec):
    assert warnings(spec, date(2026, 11, 23)) == []
    (note,) = r.findings(spec, date(2026, 11, 23))
    assert (note.severity, str(note.field)) == (r.NOTE, "nodePools[0].efa") and "placement group" in note.message


def test_a_block_ending_within_two_days_warns_with_when_its_nodes_go(spec):
    (found,) = warnings(spec, date(2026, 12, 13))
    assert str(found.field) == "nodePools[0].reservation.end"
    assert "2026-12-14 10:50 UTC" in found.message and "checkpoint" in found.message
    assert "Amazon EKS Node Group Capacity Scaledown Before Reservation End" in found.message


def test_a_block_that_ended_warns_that_the_pool_has_no_nodes(spec):
    (found,) = warnings(spec, date(2026, 12, 20))
    assert str(found.field) == "nodePools[0].reservation" and "ended on 2026-12-14 11:30 UTC" in found.message


def test_a_karpenter_block_says_karpenter_drains_its_nodes():
    twin = parse_platform(karpenter_twin())
    (found,) = [f for f in warnings(twin, date(2026, 12, 14)) if f.pool == "b200-train"]
    assert "Karpenter drains its nodes at 2026-12-14 10:50 UTC" in found.message


def test_a_block_not_started_warns_a_node_group_that_wants_nodes_already():
    platform = stack_platform("dev")
    platform["nodePools"].append(block_pool(minSize=1))
    (found,) = warnings(parse_platform(platform), date(2026, 11, 10))
    assert str(found.field) == "nodePools[1].minSize" and "launch errors" in found.message
    platform["nodePools"][1]["minSize"] = 0
    assert warnings(parse_platform(platform), date(2026, 11, 10)) == []


def test_karpenter_on_demand_pools_warn_that_open_odcrs_sit_unused():
    (found,) = warnings(spec_of("karpenter"), date(2026, 11, 23))
    assert "CapacityReservationPreference none" in found.message and "g6.2xlarge, g6.4xlarge, p5.48xlarge" in found.message


def test_stacks_without_reservations_or_karpenter_have_nothing_to_say():
    assert r.findings(spec_of("prod"), date(2026, 11, 23)) == []
    platform = blackwell()
    platform["nodePools"][1] = odcr_pool(name="rtx-serve", critical=True, minSize=2, maxSize=2,
                                         sharing=platform["nodePools"][1]["sharing"])
    assert warnings(parse_platform(platform), date(2026, 11, 23)) == []
