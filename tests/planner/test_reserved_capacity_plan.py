"""The training-blackwell example end to end: the plan prices a Capacity Block for its hours in the month of
--as-of and warns near its end, the reservations section renders, and the lock, diff and disruption gate
cover the reserved pools (a new block rolls the pool; leaving the block replaces its node group)."""
from __future__ import annotations

import json
from datetime import date

import pytest

from gpu_platform.planner import reservations_section
from gpu_platform.planner.cli import main
from gpu_platform.planner.plan import schema_problems
from tests.support.blackwell import STACK, blackwell
from tests.support.stacks import AS_OF, ROOT, spec_of, write_stack

COMMITTED_LOCK = ROOT / "stacks" / f"Pulumi.{STACK}.lock.json"


def plan_on(tmp_path, day: str, platform: dict | None = None, *extra: str) -> tuple[int, dict]:
    out = tmp_path / f"plan-{day}.json"
    source = (["--config", str(write_stack(tmp_path / f"Pulumi.{STACK}.yaml", platform))] if platform is not None
              else ["--project-dir", str(ROOT), "--stack", STACK])
    code = main(["plan", *source, "--as-of", day, "--json", str(out), *extra])
    return code, json.loads(out.read_text()) if out.exists() else {}


def pool_cost(plan: dict, name: str) -> dict:
    return next(p for p in plan["cost"]["pools"] if p["name"] == name)


@pytest.mark.parametrize("day, hours", [("2026-11-23", 348.5), ("2026-12-10", 323.5), ("2027-01-04", 0)])
def test_the_plan_prices_the_block_for_its_hours_in_the_month_of_as_of(tmp_path, day, hours):
    code, plan = plan_on(tmp_path, day)
    assert code == 0 and schema_problems(plan) == []
    cost = pool_cost(plan, "b200-train")
    assert cost["reservation"]["hoursInMonth"] == hours and cost["reservation"]["month"] == day[:7]
    assert cost["monthlyUsdAtMin"] == cost["monthlyUsdAtMax"] == round(4 * 82.368 * hours, 2)
    assert cost["reservation"]["start"] == "2026-11-16T11:30:00Z" and cost["reservation"]["end"] == "2026-12-14T11:30:00Z"


@pytest.mark.parametrize("day, warned", [("2026-11-23", None), ("2026-12-13", "nodePools[0].reservation.end"),
                                         ("2026-12-15", "nodePools[0].reservation")])
def test_the_plan_warns_near_and_after_the_end_yet_exits_0(tmp_path, day, warned):
    code, plan = plan_on(tmp_path, day)
    section = plan["reservations"]
    warnings = [f["field"] for f in section["findings"] if f["severity"] == "warning"]
    assert code == 0 and warnings == ([warned] if warned else [])
    assert section["pools"][0]["nodesGoAt"] == "2026-12-14T10:50:00Z"


def test_the_section_renders_the_window_and_its_warnings(tmp_path):
    section = reservations_section.from_spec(spec_of(STACK), date(2026, 12, 13))
    text = reservations_section.text(section)
    assert "2026-11-16 11:30 to 2026-12-14 11:30 UTC" in text and "2026-12-14 10:50 UTC" in text
    assert "warning: Capacity Block cr-0b2c4d6e8f0a1b3c5 ends on 2026-12-14 11:30 UTC" in text
    markdown = reservations_section.markdown(section)
    assert "| b200-train | cr-0b2c4d6e8f0a1b3c5 |" in markdown and "⚠️" in markdown


def test_the_section_is_left_out_where_nothing_is_reserved():
    assert reservations_section.from_spec(spec_of("prod"), date(2026, 11, 23)) is None


def test_an_operator_driver_565_on_b200_exits_2_naming_the_field(tmp_path, capsys):
    platform = blackwell()
    platform["gpuOperator"]["driver"] = {"source": "operator", "version": "565.57.01"}
    for pool in platform["nodePools"]:
        pool["ami"] = {"type": "UBUNTU_24_04", "imageId": "ami-0c3f9e8a1b2d4e567"}
    code, _ = plan_on(tmp_path, AS_OF, platform)
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert "gpuOperator.driver.version: B200 (nodePools[0]) needs driver >= 570.133.20" in err


# --- lock, diff and the disruption gate ---

@pytest.fixture(scope="module")
def base_plan(tmp_path_factory):
    code, plan = plan_on(tmp_path_factory.mktemp("base"), AS_OF, None, "--lock", str(COMMITTED_LOCK))
    assert code == 0
    return plan


def edited(tmp_path, edit) -> tuple[int, dict, str]:
    platform = blackwell()
    edit(platform["nodePools"][0])
    code, plan = plan_on(tmp_path, AS_OF, platform, "--lock", str(COMMITTED_LOCK))
    path = tmp_path / "head.json"
    path.write_text(json.dumps(plan))
    return code, plan, str(path)


def test_the_example_passes_against_its_committed_lock(base_plan):
    assert [v for v in base_plan["policy"]["violations"] if v["level"] == "mandatory"] == []


def test_a_new_block_rolls_the_pool_and_needs_the_locks_approval(base_plan, tmp_path, capsys):
    def new_block(pool):
        pool["reservation"].update(id="cr-0f1e2d3c4b5a69788", start="2026-12-14T11:30:00Z", end="2026-12-28T11:30:00Z")

    code, head, head_path = edited(tmp_path, new_block)
    found = [v["message"] for v in head["policy"]["violations"] if v["policy"] == "disruption-approved"]
    assert code == 1 and len(found) == 1 and found[0].startswith("pool b200-train: node-roll of ")
    assert "capacityReservationId" in found[0]
    base_path = tmp_path / "base.json"
    base_path.write_text(json.dumps(base_plan))
    capsys.readouterr()
    assert main(["diff", str(base_path), head_path, "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {(d["pool"], d["effect"]) for d in doc["disruptions"]} == {("b200-train", "node-roll")}


def test_leaving_the_block_for_on_demand_replaces_the_node_group(tmp_path):
    def on_demand(pool):
        pool.update(capacityType="on-demand")
        del pool["reservation"]

    code, head, _ = edited(tmp_path, on_demand)
    found = [v["message"] for v in head["policy"]["violations"] if v["policy"] == "node-group-replacement-guard"]
    assert code == 1 and any("b200-train" in m and "capacityType" in m for m in found)
