"""The plan's `lifecycle` section through the real planner: verdicts, exit codes, the cost it adds, and the
policy pack judging the same day. Every plan here passes a fixed `--as-of`."""
from __future__ import annotations

import json

import pytest

from gpu_platform.planner import lifecycle_section, verdict
from gpu_platform.planner.cli import main
from gpu_platform.planner.plan import schema_problems
from tests.support.stacks import AS_OF, on_kubernetes, resource, stack_platform, write_stack

CLUSTER = "aws:eks/cluster:Cluster"


def run(tmp_path, platform: dict, *args: str, stack: str = "prod") -> tuple[int, dict]:
    cfg = write_stack(tmp_path / f"Pulumi.{stack}.yaml", platform)
    out = tmp_path / "plan.json"
    code = main(["plan", "--config", str(cfg), "--json", str(out), *args])
    return code, json.loads(out.read_text())


def eks_line(plan: dict) -> dict:
    return next(f for f in plan["cost"]["fixed"] if f["key"] == "eksControlPlane")


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_example_stacks_have_no_lifecycle_warnings_on_their_last_update(plan_of, stack):
    section = plan_of(stack_platform(stack), stack)["lifecycle"]
    assert (section["asOf"], section["verdicts"], section["summary"]) == (AS_OF, [], {"errors": 0, "warnings": 0})
    assert section["standing"][0]["status"] == "standard"


def test_the_section_lists_each_pinned_version(plan_of):
    rows = {(s["subject"], s["version"], s["status"]) for s in plan_of(stack_platform("prod"), "prod")["lifecycle"]["standing"]}
    assert rows == {("EKS Kubernetes", "1.35", "standard"), ("GPU Operator", "v26.7.0", "supported"),
                    ("operator driver", "580.173.02", "supported")}


def test_1_33_on_2026_11_23_warns_and_prices_the_control_plane_at_the_extended_rate(plan_of):
    plan = plan_of(on_kubernetes("prod", "1.33"), "prod")
    (v,) = plan["lifecycle"]["verdicts"]
    assert (v["severity"], v["field"], v["monthlyUsd"], v["date"]) == (
        "warning", "cluster.kubernetesVersion", 365.0, "2026-07-29")
    line = eks_line(plan)
    assert (line["usdPerUnit"], line["monthlyUsdAtMax"]) == (0.6, 438.0)
    assert any("extended-support rate ($0.60/h)" in n for n in plan["cost"]["notes"])
    assert schema_problems(plan) == []


def test_the_pack_names_extended_support_as_advisory(plan_of):
    plan = plan_of(on_kubernetes("prod", "1.33"), "prod")
    found = [v for v in plan["policy"]["violations"] if v["policy"].startswith("lifecycle-")]
    assert [(v["policy"], v["level"]) for v in found] == [("lifecycle-support-window", "advisory")]
    assert found[0]["urn"] == resource(plan, CLUSTER, "cluster")["urn"] and "(+$365.00/month)" in found[0]["message"]


def test_the_budget_policy_agrees_with_the_plan_to_the_cent_in_extended_support(plan_of):
    from pulumi_policy import StackValidationArgs

    verdict.load_pack()
    from gpu_platform.policy.cost import monthly_at_max

    plan = plan_of(on_kubernetes("prod", "1.33"), "prod")
    config = verdict.plan_derived_config(plan)["monthly-budget"]
    config.pop("fixedPrices")  # the policy prices the control plane itself, from the cluster's version and asOf
    assert config["asOf"] == AS_OF
    total, _ = monthly_at_max(StackValidationArgs(verdict.stack_resources(plan), config), config)
    assert round(total, 2) == plan["cost"]["totals"]["monthlyUsdAtMax"]


def test_1_34_within_60_days_of_its_end_of_standard_support_warns_with_the_date(plan_of):
    (v,) = plan_of(on_kubernetes("dev", "1.34"), "dev")["lifecycle"]["verdicts"]
    assert v["date"] == "2026-12-02" and "leaves EKS standard support on 2026-12-02 (in 9 days)" in v["message"]


def test_a_version_past_extended_support_exits_2_in_prod(tmp_path, capsys):
    code, plan = run(tmp_path, on_kubernetes("prod", "1.33"), "--as-of", "2027-08-01")
    err = capsys.readouterr()
    assert code == 2 and "Traceback" not in err.err
    assert (f"error: {tmp_path / 'Pulumi.prod.yaml'}: cluster.kubernetesVersion: Kubernetes 1.33 reached the end of "
            "EKS extended support on 2027-07-29") in err.err
    assert "Support windows" in err.out  # the plan is still shown, and written
    assert plan["lifecycle"]["summary"] == {"errors": 1, "warnings": 0}
    assert [v["level"] for v in plan["policy"]["violations"] if v["policy"] == "lifecycle-end-of-life"] == ["mandatory"]


def test_past_extended_support_is_a_warning_in_dev(tmp_path, capsys):
    code, plan = run(tmp_path, on_kubernetes("dev", "1.33"), "--as-of", "2027-08-01", stack="dev")
    assert code == 0
    assert [v["severity"] for v in plan["lifecycle"]["verdicts"]] == ["warning"]
    assert "warning: Kubernetes 1.33 reached the end of EKS extended support" in capsys.readouterr().out


def test_as_of_moves_the_judgement(tmp_path):
    code, plan = run(tmp_path, stack_platform("prod"), "--as-of", "2027-03-27")  # 1.35 leaves standard support
    assert code == 0 and plan["lifecycle"]["asOf"] == "2027-03-27"
    assert eks_line(plan)["usdPerUnit"] == 0.6 and plan["lifecycle"]["summary"]["warnings"] == 1


@pytest.mark.parametrize("bad", ["2026-13-01", "tomorrow"])
def test_a_malformed_as_of_is_a_usage_error(capsys, bad):
    with pytest.raises(SystemExit) as exit_:
        main(["plan", "--stack", "dev", "--as-of", bad])
    assert exit_.value.code == 2 and "is not a date like 2026-11-23" in capsys.readouterr().err


def test_text_and_markdown_show_the_verdicts(plan_of):
    section = plan_of(on_kubernetes("prod", "1.33"), "prod")["lifecycle"]
    text, markdown = lifecycle_section.text(section), lifecycle_section.markdown(section)
    assert "warning: Kubernetes 1.33 is in EKS extended support" in text and "(+$365.00/month)" in text
    assert "⚠️ **Kubernetes 1.33**: Kubernetes 1.33 is in EKS extended support" in markdown
    assert "| EKS Kubernetes | 1.33 | extended | 2027-07-29 |" in markdown


def test_a_clean_section_says_so(plan_of):
    section = plan_of(stack_platform("dev"), "dev")["lifecycle"]
    assert "No lifecycle warnings." in lifecycle_section.text(section)
    assert "✅ No lifecycle warnings." in lifecycle_section.markdown(section)
    assert "[unconfirmed]" not in lifecycle_section.text(section)  # every fact the shipped stack pins is sourced


def test_only_a_pinned_forecast_is_marked_unconfirmed(plan_of):
    section = plan_of(on_kubernetes("dev", "1.36", "20260917"), "dev")["lifecycle"]
    (row,) = [line for line in lifecycle_section.text(section).splitlines() if "EKS Kubernetes" in line]
    assert row.endswith("[unconfirmed]") and "forecast" in row


def test_the_pr_markdown_carries_the_section(tmp_path, capsys):
    cfg = write_stack(tmp_path / "Pulumi.dev.yaml", on_kubernetes("dev", "1.34"))
    assert main(["plan", "--config", str(cfg), "--format", "markdown", "--as-of", AS_OF]) == 0
    out = capsys.readouterr().out
    assert "#### Support windows" in out and "2026-12-02 (in 9 days)" in out


def test_errors_lists_only_errors():
    section = {"verdicts": [{"severity": "warning", "field": "a", "message": "m"},
                            {"severity": "error", "field": "b", "message": "n"}]}
    assert lifecycle_section.errors(section) == ["b: n"] and lifecycle_section.errors(None) == []
