"""Reserved capacity and Blackwell pools in the stack file: what AWS refuses is refused with the field to edit,
driver floors hold for both driver owners, and Blackwell MIG layouts are placed like Hopper's."""
from __future__ import annotations

import dataclasses
from datetime import date

import pytest

from gpu_platform.facts import catalog
from tests.support.blackwell import blackwell, block_pool, odcr_pool
from tests.support.stacks import only_spec_problem, spec_problems, stack_platform

TODAY = date(2026, 11, 23)
UBUNTU = {"type": "UBUNTU_24_04", "imageId": "ami-0c3f9e8a1b2d4e567"}


def problems(platform: dict) -> list[str]:
    return spec_problems(platform, TODAY)


def only_problem(platform: dict, path: str) -> str:
    return only_spec_problem(platform, path, TODAY)


def dev_with(*pools: dict) -> dict:
    platform = stack_platform("dev")
    platform["nodePools"] = list(pools)
    platform["teams"] = []
    return platform


def test_the_example_stack_is_valid():
    assert problems(blackwell()) == []


@pytest.mark.parametrize("pool", [block_pool(), odcr_pool(), block_pool(instance_type="p5.48xlarge"),
                                  odcr_pool(instance_type="p6-b300.48xlarge")], ids=["block", "odcr", "p5", "b300"])
def test_reserved_pools_as_aws_takes_them_pass(pool):
    assert problems(dev_with(pool)) == []


# --- Capacity Blocks ---

def test_a_capacity_block_needs_its_reservation():
    pool = block_pool()
    del pool["reservation"]
    assert "describe-capacity-blocks" in only_problem(dev_with(pool), "nodePools[0].reservation")


def test_a_capacity_block_needs_its_window():
    pool = block_pool()
    del pool["reservation"]["end"]
    assert "start" in only_problem(dev_with(pool), "nodePools[0].reservation")


def test_a_window_ending_before_it_starts_is_refused():
    pool = block_pool()
    pool["reservation"].update(start="2026-12-14T11:30:00Z", end="2026-11-16T11:30:00Z")
    msg = only_problem(dev_with(pool), "nodePools[0].reservation.end")
    assert "ends (2026-11-16T11:30:00Z) before it starts (2026-12-14T11:30:00Z)" in msg


@pytest.mark.parametrize("moment", ["2026-11-16T11:30:00", "2026-11-16T12:30:00+01:00"])
def test_window_times_must_be_utc(moment):
    pool = block_pool()
    pool["reservation"]["start"] = moment
    assert "UTC" in only_problem(dev_with(pool), "nodePools[0].reservation.start")


def test_a_capacity_block_on_several_instance_types_is_refused():
    pool = block_pool(instanceTypes=["p5e.48xlarge", "p5en.48xlarge"])  # one GPU shape: 8 x H200
    found = problems(dev_with(pool))
    assert any(p.startswith("nodePools[0].instanceTypes: a Capacity Block reserves one instance type") for p in found)


def test_a_capacity_block_in_several_zones_is_refused():
    pool = block_pool(zones=["us-east-1a", "us-east-1b"])
    assert "one Availability Zone" in only_problem(dev_with(pool), "nodePools[0].zones")


def test_a_capacity_block_node_group_names_its_zone():
    pool = block_pool()
    del pool["zones"]
    assert "list that zone alone" in only_problem(dev_with(pool), "nodePools[0].zones")


def test_capacity_blocks_are_sold_for_p_families_only():
    msg = only_problem(dev_with(block_pool(instance_type="g7e.12xlarge")), "nodePools[0].instanceTypes")
    assert "p6-b200" in msg and "g7e" in msg and "On-Demand Capacity Reservation" in msg


def test_a_pool_cannot_outgrow_its_block():
    pool = block_pool(maxSize=5)
    assert "instanceCount (4)" in only_problem(dev_with(pool), "nodePools[0].maxSize")


def test_a_block_holds_at_most_64_instances():
    pool = block_pool()
    pool["reservation"]["instanceCount"] = 65
    assert "64" in only_problem(dev_with(pool), "nodePools[0].reservation.instanceCount")


def test_a_critical_pool_does_not_run_on_a_block():
    assert "ends on a date" in only_problem(dev_with(block_pool(critical=True)), "nodePools[0].critical")


def test_a_karpenter_block_pool_needs_no_zone_but_one_instance_type():
    ami = {"type": "AL2023_x86_64_NVIDIA", "alias": "al2023@v20260917"}
    karpenter = block_pool(provisioner="karpenter", ami=ami)
    del karpenter["zones"]
    assert problems(dev_with(karpenter)) == []
    karpenter["instanceTypes"] = ["p5e.48xlarge", "p5en.48xlarge"]
    assert any(p.startswith("nodePools[0].instanceTypes") for p in problems(dev_with(karpenter)))


# --- On-Demand Capacity Reservations ---

def test_spot_never_runs_in_a_reservation():
    pool = odcr_pool(capacityType="spot")
    assert "spot instances never launch" in only_problem(dev_with(pool), "nodePools[0].reservation")


def test_an_odcr_takes_no_window():
    pool = odcr_pool()
    pool["reservation"]["start"] = "2026-11-16T11:30:00Z"
    assert "Capacity Block's window" in only_problem(dev_with(pool), "nodePools[0].reservation.start")


def test_an_odcr_node_group_runs_one_type_in_one_zone():
    pool = odcr_pool(instanceTypes=["g7e.2xlarge", "g7e.4xlarge"])  # one GPU shape: 1 x RTX PRO 6000
    pool.pop("zones")
    found = problems(dev_with(pool))
    assert any(p.startswith("nodePools[0].instanceTypes: an On-Demand Capacity Reservation reserves one") for p in found)
    assert any(p.startswith("nodePools[0].zones: an On-Demand Capacity Reservation lives in one") for p in found)


def test_a_karpenter_odcr_pool_may_fall_back_to_other_types_and_outgrow_the_reservation():
    pool = odcr_pool(provisioner="karpenter", instanceTypes=["g7e.2xlarge", "g7e.4xlarge"], maxSize=4,
                     ami={"type": "AL2023_x86_64_NVIDIA", "alias": "al2023@v20260917"})
    pool.pop("zones")
    found = problems(dev_with(pool))
    assert not any("instanceTypes" in p or "maxSize" in p for p in found), found


def test_a_reservation_id_must_be_one():
    pool = odcr_pool()
    pool["reservation"]["id"] = "lt-0e7e12b0d5a4c3f21"
    assert "is not a capacity reservation id such as cr-" in only_problem(dev_with(pool), "nodePools[0].reservation.id")


def test_a_capacity_block_price_override_must_name_a_type_and_a_price():
    platform = dev_with(block_pool())
    platform["pricing"] = {"capacityBlockUsdPerHour": {"p6-b200.48xlarge": 0, "p9.48xlarge": 1.0}}
    found = problems(platform)
    assert 'pricing.capacityBlockUsdPerHour["p6-b200.48xlarge"]: must be a positive price in USD per hour' in found
    assert any(p.startswith('pricing.capacityBlockUsdPerHour["p9.48xlarge"]') for p in found)


# --- driver floors, for both driver owners ---

def operator_platform(*pools: dict, version: str) -> dict:
    platform = dev_with(*pools)
    platform["gpuOperator"]["driver"] = {"source": "operator", "version": version}
    return platform


def test_an_operator_driver_565_on_b200_is_refused_naming_the_field():
    found = problems(operator_platform(block_pool(ami=dict(UBUNTU)), version="565.57.01"))
    assert found and all(p.startswith("gpuOperator.driver.version: ") for p in found)
    assert any("B200 (nodePools[0]) needs driver >= 570.133.20" in p for p in found)


def test_an_operator_driver_on_its_branch_runs_b200_and_b300():
    pools = (block_pool(ami=dict(UBUNTU)), odcr_pool(name="b300", instance_type="p6-b300.48xlarge", ami=dict(UBUNTU)))
    assert problems(operator_platform(*pools, version="580.173.02")) == []


def test_r535_is_below_every_blackwell_floor():
    pools = (block_pool(ami=dict(UBUNTU)), odcr_pool(ami=dict(UBUNTU)))
    found = problems(operator_platform(*pools, version="535.309.01"))
    assert any("B200 (nodePools[0]) needs driver >= 570.133.20" in p for p in found)
    assert any("RTX-PRO-6000 (nodePools[1]) needs driver >= 575.57.08" in p for p in found)


def test_an_ami_release_of_the_r570_era_cannot_run_b300():
    ami = {"type": "AL2023_x86_64_NVIDIA", "releaseVersion": "1.33.5-20250901"}
    platform = dev_with(odcr_pool(name="b300", instance_type="p6-b300.48xlarge", ami=ami))
    platform["cluster"]["kubernetesVersion"] = "1.33"
    platform["cluster"]["create"]["systemNodes"]["releaseVersion"] = "1.33.5-20250901"
    platform["cluster"]["create"]["addons"]["kube-proxy"] = "v1.33.3-eksbuild.4"
    msg = next(p for p in problems(platform) if p.startswith("nodePools[0].ami.releaseVersion: "))
    assert "runs NVIDIA driver R570 on p6-b300; B300 needs driver >= 580.65.06" in msg
    assert "releases from 20251029 carry R580" in msg  # 1.33 images moved to R580 in release v20251029


def test_an_ami_release_of_the_r570_era_runs_b200_but_not_rtx_pro_6000():
    ami = {"type": "AL2023_x86_64_NVIDIA", "releaseVersion": "1.35.5-20250901"}
    assert problems(dev_with(block_pool(ami=ami))) == []
    msg = only_problem(dev_with(odcr_pool(ami=ami)), "nodePools[0].ami.releaseVersion")
    assert "RTX-PRO-6000 needs driver >= 575.57.08" in msg


def test_the_dual_driver_ami_runs_rtx_pro_6000_mig_on_r580():
    pool = odcr_pool(sharing={"mode": "mig", "strategy": "mixed", "layout": {"2g.48gb": 1, "1g.24gb": 2}})
    assert problems(dev_with(pool)) == []


def test_rtx_pro_6000_mig_is_refused_below_r580_with_an_operator_driver(monkeypatch):
    # No supported operator driver is on R575: a chart that offered 575.57.08 would still refuse MIG on it.
    chart = catalog.GPU_OPERATOR_CHARTS["v26.7.0"]
    wider = dataclasses.replace(chart, supported_drivers=(*chart.supported_drivers, "575.57.08"))
    monkeypatch.setattr(catalog, "GPU_OPERATOR_CHARTS", {"v26.7.0": wider})
    pool = odcr_pool(ami=dict(UBUNTU), sharing={"mode": "mig", "strategy": "mixed", "layout": {"4g.96gb": 1}})
    found = problems(operator_platform(pool, version="575.57.08"))
    assert found == ["gpuOperator.driver.version: MIG profile 4g.96gb on RTX-PRO-6000 (nodePools[0]) needs driver >= "
                     "580.65.06"]


def test_an_image_an_instance_type_does_not_run_is_refused(monkeypatch):
    it = catalog.INSTANCE_TYPES["p6-b200.48xlarge"]
    types = {**catalog.INSTANCE_TYPES, it.name: dataclasses.replace(it, ami_types=("AL2023_x86_64_NVIDIA",))}
    monkeypatch.setattr(catalog, "INSTANCE_TYPES", types)
    pool = block_pool(ami={"type": "BOTTLEROCKET_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260917"})
    msg = only_problem(dev_with(pool), "nodePools[0].ami.type")
    assert "p6-b200.48xlarge does not run BOTTLEROCKET_x86_64_NVIDIA; it runs AL2023_x86_64_NVIDIA" in msg


# --- MIG on Blackwell ---

def mig(layout: dict) -> dict:
    return {"mode": "mig", "strategy": "mixed", "layout": layout}


def test_the_b200_all_balanced_layout_is_accepted():
    assert problems(dev_with(block_pool(sharing=mig({"1g.23gb": 2, "2g.45gb": 1, "3g.90gb": 1})))) == []


def test_two_3g_and_a_1g_on_b200_are_refused_as_not_fitting():
    msg = only_problem(dev_with(block_pool(sharing=mig({"3g.90gb": 2, "1g.23gb": 1}))), "nodePools[0].sharing.layout")
    assert "does not fit one B200" in msg and "placement rules" in msg


def test_a_hopper_profile_on_b200_is_refused_naming_the_valid_ones():
    msg = only_problem(dev_with(block_pool(sharing=mig({"1g.10gb": 7}))), "nodePools[0].sharing.layout")
    assert "1g.10gb not a MIG profile of B200; valid: 1g.23gb, 1g.23gb+me, 1g.45gb, 2g.45gb, 3g.90gb, 4g.90gb" in msg


def test_rtx_pro_6000_layouts_fit_four_slices():
    assert problems(dev_with(odcr_pool(sharing=mig({"1g.24gb": 4})))) == []
    msg = only_problem(dev_with(odcr_pool(sharing=mig({"2g.48gb": 2, "1g.24gb": 1}))), "nodePools[0].sharing.layout")
    assert "compute slices, a GPU has 4" in msg


# --- windows as AWS sells them (EC2 user guide, Find and purchase Capacity Blocks) ---

def _window(start: str, end: str) -> dict:
    pool = block_pool()
    pool["reservation"].update(start=start, end=end)
    return dev_with(pool)


def test_a_two_hour_window_is_refused_for_its_end():
    msg = only_problem(_window("2026-11-16T11:30:00Z", "2026-11-16T13:30:00Z"), "nodePools[0].reservation.end")
    assert "ends at 11:30 UTC" in msg


@pytest.mark.parametrize("end, length", [("2026-12-01T11:30:00Z", "15 days"),
                                         ("2027-06-01T11:30:00Z", "197 days"), ("2027-05-24T11:30:00Z", "189 days")])
def test_a_length_aws_never_sells_is_refused(end, length):
    msg = only_problem(_window("2026-11-16T11:30:00Z", end), "nodePools[0].reservation.end")
    assert f"a window of {length} is not sold" in msg and "1 to 14 days" in msg and "182" in msg


@pytest.mark.parametrize("end", ["2026-11-17T11:30:00Z", "2026-11-30T11:30:00Z", "2026-12-14T11:30:00Z",
                                 "2027-05-17T11:30:00Z"], ids=["1 day", "14 days", "4 weeks", "26 weeks"])
def test_every_length_aws_sells_passes(end):
    assert problems(_window("2026-11-16T11:30:00Z", end)) == []


@pytest.mark.parametrize("start, end", [("2026-11-16T11:30:00Z", "2026-11-23T12:00:00Z"),
                                        ("2026-11-16T12:00:00Z", "2026-11-23T12:00:00Z")])
def test_a_block_ending_away_from_11_30_utc_is_refused(start, end):
    found = problems(_window(start, end))
    assert [p.split(": ")[0] for p in found] == ["nodePools[0].reservation.end"], found
    assert "ends at 11:30 UTC" in found[0]


@pytest.mark.parametrize("start, end", [("2026-11-16T04:55:00Z", "2026-11-16T11:30:00Z"),
                                        ("2026-11-16T17:05:00Z", "2026-11-23T11:30:00Z"),
                                        ("2026-11-16T17:05:00Z", "2026-11-30T11:30:00Z")],
                         ids=["the rest of a day", "7 days from now", "14 days from now"])
def test_a_block_starting_when_bought_passes(start, end):
    # EC2 API reference, CapacityBlockOffering: a block may start at 04:55 and end at 11:30.
    assert problems(_window(start, end)) == []


def test_a_block_starting_when_bought_is_held_to_the_lengths_sold():
    msg = only_problem(_window("2026-11-16T17:05:00Z", "2026-12-01T11:30:00Z"), "nodePools[0].reservation.end")
    assert "is not sold" in msg


@pytest.mark.parametrize("start, end", [("0001-01-01T11:30:00Z", "0001-01-08T11:30:00Z"),
                                        ("9999-01-01T11:30:00Z", "9999-01-08T11:30:00Z")], ids=["year 1", "year 9999"])
def test_an_implausible_year_is_refused_naming_both_ends(start, end):
    found = problems(_window(start, end))
    assert [p.split(":")[0] for p in found] == ["nodePools[0].reservation.start", "nodePools[0].reservation.end"]
    assert "2024 to 2028" in found[0]


@pytest.mark.parametrize("value", [1763292600, "1763292600", 1763292600.0])
def test_an_epoch_window_is_refused(value):
    platform = _window("2026-11-16T11:30:00Z", "2026-11-23T11:30:00Z")
    platform["nodePools"][0]["reservation"]["start"] = value
    assert "ISO 8601" in only_problem(platform, "nodePools[0].reservation.start")


def test_a_p4de_block_pool_is_valid():
    assert problems(dev_with(block_pool(instance_type="p4de.24xlarge"))) == []


# --- one reservation, one pool ---

def test_one_block_on_two_pools_is_refused():
    first, second = block_pool(), block_pool(name="b200-block-2")
    second["reservation"].update(start="2026-12-14T11:30:00Z", end="2026-12-21T11:30:00Z")
    assert "also nodePools[0]" in only_problem(dev_with(first, second), "nodePools[1].reservation.id")


def test_a_blocks_id_on_an_odcr_pool_of_another_type_is_refused():
    odcr = odcr_pool()
    odcr["reservation"]["id"] = block_pool()["reservation"]["id"]
    assert "serves one pool" in only_problem(dev_with(block_pool(), odcr), "nodePools[1].reservation.id")


def test_two_pools_of_one_type_may_share_an_odcr():
    assert problems(dev_with(odcr_pool(), odcr_pool(name="rtx-odcr-2"))) == []


# --- property: a window is accepted exactly when AWS sells its length ---

from datetime import datetime, timedelta, timezone  # noqa: E402

from hypothesis import given, settings, strategies as st  # noqa: E402

from gpu_platform.spec.field_path import FieldPath  # noqa: E402
from gpu_platform.spec.rules_capacity import window_rules  # noqa: E402

SOLD = {*range(1, 15), *range(21, 183, 7)}


@settings(max_examples=200, deadline=None)
@given(days=st.integers(1, 400), minutes=st.sampled_from([0, 0, 0, 30, 90, 24 * 60 - 30]))
def test_a_window_passes_exactly_when_aws_sells_it(days, minutes):
    start = datetime(2026, 11, 16, 11, 30, tzinfo=timezone.utc)
    end = start + timedelta(days=days, minutes=minutes)
    found = list(window_rules(FieldPath.of("p"), start, end, TODAY))
    assert (found == []) == (minutes == 0 and days in SOLD), (days, minutes, found)


# --- Local Zones: only where the catalog sells a type's blocks ---

def test_a_local_zone_on_a_pool_whose_blocks_are_sold_in_azs_is_refused():
    platform = dev_with(block_pool(zones=["us-east-1-dfw-2a"]))
    platform["cluster"]["create"]["vpc"]["localZones"] = ["us-east-1-dfw-2a"]
    assert "Capacity Blocks of p6e-gb200.36xlarge only" in only_problem(platform, "nodePools[0].zones")


def test_a_local_zone_the_catalog_knows_no_blocks_in_is_refused():
    platform = dev_with(block_pool())
    platform["cluster"]["create"]["vpc"]["localZones"] = ["us-east-1-bos-1a"]
    assert "us-east-1-dfw-2a only" in only_problem(platform, "cluster.create.vpc.localZones[0]")


def test_a_local_zone_among_the_vpcs_zones_is_refused():
    platform = dev_with(block_pool())
    platform["cluster"]["create"]["vpc"].update(availabilityZones=2, zones=["us-east-1a", "us-east-1-dfw-2a"])
    assert "localZones" in only_problem(platform, "cluster.create.vpc.zones[1]")


# --- a block's quote ---

def test_a_quote_with_its_day_passes():
    pool = block_pool()
    pool["reservation"].update(quotedUsdPerHour=98.84, quotedOn="2026-11-02")
    assert problems(dev_with(pool)) == []


@pytest.mark.parametrize("quote, path, words", [
    ({"quotedOn": "2026-11-02"}, "quotedOn", "quotedUsdPerHour"),
    ({"quotedUsdPerHour": 98.84, "quotedOn": "2026-11-20"}, "quotedOn", "after the block starts"),
    ({"quotedUsdPerHour": 0}, "quotedUsdPerHour", "greater than 0"),
])
def test_a_quote_aws_never_gives_is_refused(quote, path, words):
    pool = block_pool()
    pool["reservation"].update(quote)
    assert words in only_problem(dev_with(pool), f"nodePools[0].reservation.{path}")


def test_a_quote_on_an_odcr_is_refused():
    pool = odcr_pool()
    pool["reservation"]["quotedUsdPerHour"] = 9.0
    assert "onDemandUsdPerHour" in only_problem(dev_with(pool), "nodePools[0].reservation.quotedUsdPerHour")
