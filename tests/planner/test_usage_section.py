"""The plan's usage section: recorded series, unit prices (the cost section's), the report's destination, and
MIG capacity no team's quota can reach."""
from __future__ import annotations

from gpu_platform.decisions.cost import team_costs
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog
from gpu_platform.planner.usage_section import from_spec, markdown, text
from tests.support.stacks import stack_platform, without_services


def test_prod_names_the_mig_slices_no_quota_reaches():
    section = from_spec(parse_platform(stack_platform("prod")))
    counts = [w.split(" MIG slices")[0] for w in section["warnings"]]
    assert counts == ["16 x 1g.10gb", "14 x 2g.20gb", "14 x 3g.40gb"]
    assert "Warnings:" in text(section) and "⚠️ 16 x 1g.10gb" in markdown(section)


def test_a_stack_whose_quotas_cover_its_slices_warns_of_nothing():
    platform = stack_platform("mig-slices")
    platform["teams"][0]["quota"]["migSlices"] = {"1g.10gb": 16}
    platform["teams"][1]["quota"]["migSlices"] = {"3g.40gb": 8, "2g.20gb": 8}
    assert "warnings" not in from_spec(parse_platform(platform))


def test_a_month_of_each_teams_quota_at_the_units_prices_is_the_cost_sections_team_figure():
    spec = parse_platform(stack_platform("mig-slices"))
    units = {u["resource"]: u for u in from_spec(spec)["units"]}
    for team in team_costs(spec):
        month = sum(s.quota * units[s.resource]["usdPerUnitHour"] * catalog.HOURS_PER_MONTH for s in team.shares)
        assert abs(month - team.on_demand_monthly) < 0.01 * len(team.shares), team.name


def test_the_report_is_described_where_it_is_on_and_off_elsewhere():
    report = from_spec(parse_platform(stack_platform("prod")))["report"]
    assert report["enabled"] and report["destination"].startswith("s3://gpu-prod-gpu-usage-")
    assert report["destination"].endswith("/gpu-usage/") and report["schedule"] == "0 6 1 * *"
    assert from_spec(parse_platform(stack_platform("dev")))["report"] == {"enabled": False}


def test_no_section_without_a_prometheus():
    platform = stack_platform("dev")
    platform["monitoring"]["prometheus"] = {"mode": "none"}
    without_services(platform)  # services scale on Prometheus
    assert from_spec(parse_platform(platform)) is None


def test_the_job_history_is_named_with_its_destination_and_retention():
    section = from_spec(parse_platform(stack_platform("prod")))
    jobs = section["report"]["jobHistory"]
    assert jobs["destination"] == section["report"]["destination"] and jobs["retentionDays"] >= 365
    assert jobs["file"] == "gpu-jobs-YYYY-MM.csv" and {"team", "queue", "outcome", "nodes"} <= set(jobs["columns"])
    assert "Job history: gpu-jobs-YYYY-MM.csv" in text(section)
