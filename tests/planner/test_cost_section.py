"""The plan's `capacity` and `cost` sections: JSON, text and the pull-request Markdown.

The Markdown for dev and prod is kept as reviewed snapshots in tests/planner/snapshots/. After a
deliberate change, refresh them with `UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/planner/test_cost_section.py`
and review the diff like code.
"""
import contextlib
import io
import json
import os
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from gpu_platform.decisions.cost import pool_facts_from_node_group_inputs, pool_facts_from_spec
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import names
from gpu_platform.planner import capacity_section, cost_section, render
from gpu_platform.planner.plan import schema_problems
from gpu_platform.planner.tables import money
from tests.support.stacks import AS_OF, resources, stack_platform

SNAPSHOTS = Path(__file__).with_name("snapshots")
DAY = date.fromisoformat(AS_OF)  # the control plane is priced by its EKS support window on this day
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


def spec_of(stack: str, **changes):
    platform = stack_platform(stack)
    platform.update(changes)
    return parse_platform(platform)


def capacity(stack: str, **changes) -> dict:
    return capacity_section.from_spec(spec_of(stack, **changes))


def cost(stack: str, region: str = "us-east-1", **changes) -> dict:
    return cost_section.from_spec(spec_of(stack, **changes), region, DAY)


def pr_summary(stack: str) -> str:
    """The capacity and cost part of the pull-request comment, as the planner prints it."""
    spec = spec_of(stack)
    plan = {"project": "gpu-platform", "stack": stack, "resources": [], "outputs": {}, "policy": {"violations": []},
            "capacity": capacity_section.from_spec(spec), "cost": cost_section.from_spec(spec, "us-east-1", DAY)}
    shown = render.markdown(plan, [capacity_section.SECTION, cost_section.SECTION])
    return shown[shown.index(f"#### {capacity_section.TITLE}"):]


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    """Run `gpu-platform plan --stack <name>` once per stack and format: (exit code, stdout, plan JSON)."""
    from gpu_platform.planner.cli import main

    runs = {}

    def run(stack: str, fmt: str = "text"):
        if (stack, fmt) not in runs:
            out = tmp_path_factory.mktemp("plan") / "plan.json"
            shown = io.StringIO()
            with contextlib.redirect_stdout(shown):
                code = main(["plan", "--stack", stack, "--json", str(out), "--format", fmt, "--as-of", AS_OF])
            runs[stack, fmt] = (code, shown.getvalue(), json.loads(out.read_text()))
        return runs[stack, fmt]

    return run


# --- capacity ---

def test_time_sliced_pool_offers_replicas_per_gpu():
    pool = capacity("dev")["pools"][0]  # a10g-spot: g5.xlarge (1 GPU) x 4 replicas, max 4 nodes
    assert (pool["perNode"], pool["atMax"], pool["physicalGpusAtMax"]) == (
        {names.GPU_RESOURCE: 1 * 4}, {names.GPU_RESOURCE: 1 * 4 * 4}, 4)


def test_mig_mixed_pool_offers_each_profile():
    pool = capacity("prod")["pools"][0]  # h100-mig: 8 GPUs x {3g.40gb: 1, 2g.20gb: 1, 1g.10gb: 2}, max 2 nodes
    assert pool["atMax"] == {names.mig_resource("1g.10gb"): 8 * 2 * 2, names.mig_resource("2g.20gb"): 8 * 1 * 2,
                             names.mig_resource("3g.40gb"): 8 * 1 * 2}


def test_mig_single_pool_offers_slices_as_gpus():
    platform = stack_platform("prod")
    platform["nodePools"][0]["sharing"] = {"mode": "mig", "strategy": "single", "layout": {"1g.10gb": 7}}
    platform["teams"] = [{"name": "research", "quota": {"gpus": 4, "cpu": "8", "memory": "8Gi"}}]
    pool = capacity_section.from_spec(parse_platform(platform))["pools"][0]
    assert pool["perNode"] == {names.GPU_RESOURCE: 8 * 7}


def test_total_beside_team_quotas():
    section = capacity("prod")
    gpu = {r["resource"]: r for r in section["resources"]}[names.GPU_RESOURCE]
    # a100-train 8 x 2 + l4-inference 1 x 6; quotas research 12 + inference 6 + batch 4
    assert (gpu["capacityAtMax"], gpu["teamQuota"], gpu["quotaToCapacity"]) == (16 + 6, 12 + 6 + 4, 1.0)


def test_physical_gpus_in_total():
    assert capacity("prod")["total"]["physicalGpusAtMax"] == 8 * 2 + 8 * 2 + 1 * 6


def test_quotas_within_capacity_are_not_overcommitted():
    assert capacity("dev")["overcommitted"] is False


def test_overcommit_allowed_by_ratio_is_flagged():
    platform = stack_platform("dev")
    platform["quotaOvercommitRatio"] = 2
    platform["teams"][0]["quota"]["gpus"] = 20  # 20 + 4 of 16 units
    section = capacity_section.from_spec(parse_platform(platform))
    assert (section["overcommitted"], "exceed capacity" in capacity_section.text(section)) == (True, True)


# --- cost JSON ---

def test_cost_section_is_labelled_an_estimate_with_its_date():
    section = cost("prod")
    assert (section["version"], section["currency"], section["estimate"], section["prices"]["asOf"]) == (
        1, "USD", True, "2025-06")


def test_cost_pool_figures_recompute_from_the_catalog():
    h100 = cost("prod")["pools"][0]  # p5.48xlarge $55.04/h, 0..2 nodes, 8 GPUs
    # minSize 0, but the research team's MIG service keeps one replica, so one node, at min
    assert (h100["minSize"], h100["nodesAtMin"]) == (0, 1)
    assert (h100["monthlyUsdAtMin"], h100["monthlyUsdAtMax"], h100["usdPerGpuHour"]) == (
        round(55.04 * 730, 2), round(55.04 * 2 * 730, 2), round(55.04 / 8, 6))


def test_cost_totals_add_pools_and_fixed_items():
    section = cost("prod")
    parts = [p["monthlyUsdAtMax"] for p in section["pools"]] + [f["monthlyUsdAtMax"] for f in section["fixed"]]
    assert section["totals"]["monthlyUsdAtMax"] == pytest.approx(sum(parts), abs=0.01)


def test_budget_headroom_at_max():
    section = cost("prod")
    assert section["budget"] == {"monthlyUsd": 150000, "withinBudget": True,
                                 "headroomAtMax": pytest.approx(150000 - section["totals"]["monthlyUsdAtMax"], abs=0.01)}


def test_over_budget_is_said_plainly():
    section = cost("dev", budget={"monthlyUsd": 1000})
    assert (section["budget"]["withinBudget"], "OVER BUDGET" in cost_section.text(section)) == (False, True)


def test_other_region_notes_the_price_region():
    notes = cost("dev", region="eu-west-1")["notes"]
    assert [n for n in notes if "eu-west-1" in n and "pricing.onDemandUsdPerHour" in n]


def test_unpriced_items_are_named_in_the_markdown():
    platform = stack_platform("dev")
    platform["cluster"]["create"]["systemNodes"]["instanceTypes"] = ["c7g.large"]
    section = cost_section.from_spec(parse_platform(platform))
    assert "No price known for System nodes" in cost_section.markdown(section)


def test_team_costs_in_the_section():
    research = cost("dev")["teams"][0]  # 8 of 16 time-sliced units at g5.xlarge $1.006/h over 4 replicas
    assert (research["name"], research["resources"][0]["share"], research["onDemandMonthlyUsd"]) == (
        "research", 0.5, round(8 * 1.006 / 4 * 730, 2))


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_sections_match_the_plan_schema(stack):
    plan = {"version": 1, "project": "gpu-platform", "stack": stack, "resources": [], "outputs": {},
            "policy": {"violations": []}, "capacity": capacity(stack), "cost": cost(stack)}
    assert schema_problems(json.loads(json.dumps(plan))) == []


# --- text ---

def test_text_money_has_thousands_separators_and_cents():
    assert money(55.04 * 2 * 730) == "80,358.40"


def test_text_shows_the_pool_ceiling():
    assert f"{money(55.04 * 2 * 730)}" in cost_section.text(cost("prod"))


def test_text_columns_are_aligned():
    lines = capacity_section.text(capacity("prod")).splitlines()
    header, first = lines[0], lines[1]
    assert first.index("h100-mig") == header.index("Pool") and first.index("H100") == header.index("GPU")


# --- Markdown snapshots ---

@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_markdown_summary_matches_the_reviewed_snapshot(stack):
    path = SNAPSHOTS / f"{stack}.md"
    shown = pr_summary(stack)
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(shown)
    assert shown == path.read_text(), f"{path.name} is stale: review and refresh with UPDATE_SNAPSHOTS=1"


# --- through the real planner ---

@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_pool_facts_from_registered_node_groups_equal_the_spec(planned, stack):
    _, _, plan = planned(stack)
    registered = [pool_facts_from_node_group_inputs(r["inputs"]) for r in resources(plan, NODE_GROUP)
                  if names.POOL_LABEL in (r["inputs"].get("labels") or {})]
    # a node group does not know the services on its pool: the nodes they hold at min are the spec's alone
    from_spec = [replace(f, serving_floor=0) for f in pool_facts_from_spec(spec_of(stack))]
    assert sorted(registered, key=lambda f: f.name) == sorted(from_spec, key=lambda f: f.name)


def test_plan_json_carries_both_sections(planned):
    _, _, plan = planned("prod")
    assert (plan["capacity"], plan["cost"]) == (capacity("prod"), cost("prod"))


def test_plan_text_ends_with_capacity_and_cost(planned):
    _, shown, _ = planned("prod")
    assert shown.index(capacity_section.TITLE) < shown.index(cost_section.TITLE) < shown.index("Price sources")


def test_plan_markdown_carries_the_snapshot_summary(planned):
    _, shown, _ = planned("prod", "markdown")
    assert pr_summary("prod").rstrip() in shown


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_policy_budget_rule_sees_the_same_ceiling_as_the_plan(planned, stack):
    """The budget policy prices what the program registered; the plan prices the stack file."""
    from pulumi_policy import StackValidationArgs

    from gpu_platform.planner import verdict

    verdict.load_pack()
    from gpu_platform.policy.cost import monthly_at_max

    _, _, plan = planned(stack)
    config = verdict.plan_derived_config(plan)["monthly-budget"]
    total, unpriced = monthly_at_max(StackValidationArgs(verdict.stack_resources(plan), config), config)
    assert (round(total, 2), unpriced) == (plan["cost"]["totals"]["monthlyUsdAtMax"], [])


# --- Capacity Blocks: the up-front charge, the amortised share, and which rate priced them ---

def _blackwell_block(**quote):
    platform = stack_platform("training-blackwell")
    pool = next(p for p in platform["nodePools"] if p["capacityType"] == "capacity-block")
    pool["reservation"].update(quote)
    section = cost_section.from_spec(parse_platform(platform), "us-east-1", date.fromisoformat(AS_OF))
    return section, next(p for p in section["pools"] if p["name"] == pool["name"])


def test_the_section_shows_a_blocks_fee_in_its_charge_month_beside_its_amortised_share():
    section, pool = _blackwell_block()
    r = pool["reservation"]
    assert r["upfrontUsd"] == round(82.368 * 4 * 672, 2) and r["chargeMonth"] == "2026-11" and r["rate"] == "catalog"
    assert pool["monthlyUsdAtMax"] == round(82.368 * 4 * r["hoursInMonth"], 2) < r["upfrontUsd"]
    t = section["totals"]
    assert t["upfrontCharges"] == {"2026-11": r["upfrontUsd"]} and t["chargeMonth"] == "2026-11"
    assert t["monthlyUsdInChargeMonthAtMax"] == pytest.approx(t["monthlyUsdAtMax"] - pool["monthlyUsdAtMax"]
                                                              + r["upfrontUsd"], abs=0.02)
    assert section["budget"]["month"] == "2026-11"
    assert section["budget"]["headroomAtMax"] == pytest.approx(250000 - t["monthlyUsdInChargeMonthAtMax"], abs=0.02)
    assert "2026-11" in cost_section.text(section) and "fee $221,405.18 charged in 2026-11" in cost_section.text(section)


def test_a_stale_catalog_rate_is_warned_and_a_quote_is_used_with_its_date():
    section, _ = _blackwell_block()
    assert len(section["warnings"]) == 1 and "b200-train" in section["warnings"][0]
    assert "Warnings:" in cost_section.text(section)
    section, pool = _blackwell_block(quotedUsdPerHour=98.84, quotedOn="2026-10-30")
    assert "warnings" not in section
    assert (pool["usdPerNodeHour"], pool["asOf"], pool["reservation"]["rate"]) == (98.84, "2026-10-30", "quoted")
    assert pool["reservation"]["chargeMonth"] == "2026-10" and "2026-11" not in section["totals"]["upfrontCharges"]
