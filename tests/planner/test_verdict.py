"""The offline verdict: the pack's rules on recorded plans, with the CLI's config semantics.

dev and prod plan clean (with their committed locks, and prod with policies/config.prod.json); each
unsafe variant is caught by the policy that owns it, with a message saying what to change. Variants
the stack file can express go through the real program (`plan_of`); the others (the spec refuses
them first) are hand-edited into a recorded plan, exactly as the engine would have sent them.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from gpu_platform.planner import verdict
from gpu_platform.planner.cli import main
from gpu_platform.planner.errors import PlannerError
from tests.support.stacks import AS_OF, ROOT, resource, resources, stack_platform

NODE_GROUP, RELEASE = "aws:eks/nodeGroup:NodeGroup", "kubernetes:helm.sh/v3:Release"
PROD_CONFIG = ROOT / "policies" / "config.prod.json"


@pytest.fixture(scope="module")
def stack_plans(tmp_path_factory):
    """The real plans of stacks/Pulumi.dev.yaml and stacks/Pulumi.prod.yaml (read-only: copy to change)."""
    out = {}
    for stack in ("dev", "prod"):
        path = tmp_path_factory.mktemp("plans") / f"{stack}.json"
        assert main(["plan", "--stack", stack, "--json", str(path), "--as-of", AS_OF]) == 0
        out[stack] = json.loads(path.read_text())
    return out


@pytest.fixture
def prod(stack_plans):
    return copy.deepcopy(stack_plans["prod"])


def config_file(tmp_path: Path, data: dict) -> Path:
    path = tmp_path / "policy-config.json"
    path.write_text(json.dumps(data))
    return path


def caught(plan: dict, policy: str, config: Path | None = None) -> list[dict]:
    return [v for v in verdict.evaluate(plan, config) if v["policy"] == policy]


def mandatory(plan: dict, config: Path | None = None) -> list[dict]:
    return [v for v in verdict.evaluate(plan, config) if v["level"] == "mandatory"]


# --- clean stacks ---

@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_stack_plans_clean(stack_plans, stack):
    assert stack_plans[stack]["policy"]["violations"] == []


def test_prod_clean_under_the_example_prod_config(stack_plans):
    assert verdict.evaluate(stack_plans["prod"], PROD_CONFIG) == []


def test_verdict_runs_under_the_stack_s_lock(stack_plans):
    """The committed lock is read (prod is a locked stack): dropping a group from the plan is caught."""
    plan = copy.deepcopy(stack_plans["prod"])
    plan["resources"] = [r for r in plan["resources"] if r["name"] != "h100-mig" or r["type"] != NODE_GROUP]
    found = caught(plan, "locked-node-groups-present")
    assert len(found) == 1 and "'h100-mig' is no longer declared" in found[0]["message"]


# --- unsafe variants through the program ---

def test_unprotected_prod_pool_is_refused(plan_of):
    platform = stack_platform("prod")
    platform["nodePools"][0]["protect"] = False
    found = caught(plan_of(platform, stack="prod"), "node-group-protected")
    assert len(found) == 1 and found[0]["level"] == "mandatory" and found[0]["urn"].endswith("::h100-mig")
    assert "protect: false" in found[0]["message"]


def test_time_slicing_in_prod_is_refused(plan_of):
    platform = stack_platform("prod")
    platform["nodePools"][2]["critical"] = False
    platform["nodePools"][2]["sharing"] = {"mode": "time-slicing", "replicas": 4}
    del platform["nodePools"][2]["warm"]  # a placeholder could not take a node's time-sliced replicas
    found = caught(plan_of(platform, stack="prod"), "time-slicing-forbidden")
    assert len(found) == 1 and "l4-inference" in found[0]["message"] and "sharing.mode" in found[0]["message"]


def test_budget_exceeded_is_refused(plan_of):
    platform = stack_platform("dev")
    platform["budget"] = {"monthlyUsd": 1000}
    plan = plan_of(platform, stack="dev")
    found = caught(plan, "monthly-budget")
    assert len(found) == 1 and found[0]["level"] == "mandatory"
    assert f"${plan['cost']['totals']['monthlyUsdAtMax']:,.0f}/month" in found[0]["message"]


def test_changing_a_locked_pool_s_instance_type_is_refused(plan_of):
    """stack "prod" holds the plan to stacks/Pulumi.prod.lock.json, as `pulumi preview -s prod` would."""
    platform = stack_platform("prod")
    platform["nodePools"][1]["instanceTypes"] = ["p4de.24xlarge"]
    found = caught(plan_of(platform, stack="prod"), "node-group-replacement-guard")
    assert len(found) == 1 and found[0]["urn"].endswith("::a100-train")
    assert '["p4d.24xlarge"] to ["p4de.24xlarge"]' in found[0]["message"] and "gpu-platform lock --stack prod" in found[0]["message"]


def test_cli_exits_1_and_prints_the_verdict_on_mandatory(tmp_path, capsys):
    from tests.support.stacks import write_stack

    platform = stack_platform("prod")
    platform["nodePools"][1]["protect"] = False
    cfg = write_stack(tmp_path / "Pulumi.prod.yaml", platform)
    assert main(["plan", "--config", str(cfg), "--as-of", AS_OF]) == 1
    out = capsys.readouterr().out
    assert "Policy: FAILED (1 mandatory)." in out and "node-group-protected" in out


# --- unsafe variants the stack file cannot express, edited into a recorded plan ---

def test_desired_size_not_ignored_is_refused(prod):
    resource(prod, NODE_GROUP, "a100-train")["options"]["ignoreChanges"] = []
    found = caught(prod, "node-group-ignores-desired-size")
    assert len(found) == 1 and "ignore_changes" in found[0]["message"]


def test_spot_critical_pool_is_refused(prod):
    resource(prod, NODE_GROUP, "l4-inference")["inputs"]["capacityType"] = "SPOT"
    found = caught(prod, "critical-pool-on-demand")
    assert len(found) == 1 and "on-demand" in found[0]["message"]


def test_unpinned_chart_is_refused(prod):
    release = next(r for r in resources(prod, RELEASE) if r["inputs"]["chart"] == "cluster-autoscaler")
    release["inputs"]["version"] = "9.x"
    found = caught(prod, "helm-chart-pinned")
    assert len(found) == 1 and "not exact" in found[0]["message"]


def test_delete_before_replace_is_refused(prod):
    resource(prod, NODE_GROUP, "h100-mig")["options"]["deleteBeforeReplace"] = True
    assert caught(prod, "node-group-no-delete-before-replace")


def test_imdsv1_launch_template_is_refused(prod):
    template = resource(prod, "aws:ec2/launchTemplate:LaunchTemplate", "l4-inference")
    template["inputs"]["metadataOptions"]["httpTokens"] = "optional"
    assert caught(prod, "launch-template-imdsv2")


def test_team_without_quota_is_refused(prod):
    prod["resources"] = [r for r in prod["resources"]
                         if not (r["type"] == "kubernetes:core/v1:ResourceQuota" and r["inputs"]["metadata"]["namespace"] == "batch")]
    found = caught(prod, "team-gpu-quota")
    assert len(found) == 1 and "'batch'" in found[0]["message"]


def test_replacing_a_locked_pool_is_refused(prod):
    resource(prod, NODE_GROUP, "h100-mig")["inputs"]["instanceTypes"] = ["p5e.48xlarge"]
    found = caught(prod, "node-group-replacement-guard")
    assert len(found) == 1 and "instanceTypes" in found[0]["message"] and found[0]["level"] == "mandatory"


def test_unknown_locked_input_fails_closed(prod):
    resource(prod, NODE_GROUP, "l4-inference")["inputs"]["clusterName"] = verdict.UNKNOWN_MARK
    found = caught(prod, "node-group-replacement-guard")
    assert len(found) == 1 and found[0]["level"] == "mandatory" and "fails closed" in found[0]["message"]


def test_unknown_value_in_an_ordinary_rule_is_advisory_like_the_sdk(prod):
    release = next(r for r in resources(prod, RELEASE) if r["inputs"]["chart"] == "gpu-operator")
    release["inputs"]["values"] = verdict.UNKNOWN_MARK
    found = caught(prod, "gpu-driver-pinned")
    assert len(found) == 1 and found[0]["level"] == "advisory" and "during preview" in found[0]["message"]


def test_advisory_findings_do_not_fail_the_plan(prod):
    fs = resources(prod, "aws:efs/fileSystem:FileSystem")[0]
    fs["inputs"]["throughputMode"] = "bursting"
    assert [v["policy"] for v in verdict.evaluate(prod, None)] == ["model-cache-elastic-throughput"]
    assert mandatory(prod) == []


# --- config semantics (as the Pulumi CLI reconciles --policy-pack-config) ---

def test_config_can_disable_a_policy(prod, tmp_path):
    resource(prod, NODE_GROUP, "l4-inference")["inputs"]["capacityType"] = "SPOT"
    assert caught(prod, "critical-pool-on-demand", config_file(tmp_path, {"critical-pool-on-demand": "disabled"})) == []


def test_all_sets_every_level_and_a_policy_entry_wins(prod, tmp_path):
    fs = resources(prod, "aws:efs/fileSystem:FileSystem")[0]
    fs["inputs"]["throughputMode"] = "bursting"
    config = config_file(tmp_path, {"all": "mandatory"})
    assert [v["level"] for v in caught(prod, "model-cache-elastic-throughput", config)] == ["mandatory"]
    config = config_file(tmp_path, {"all": "mandatory", "model-cache-elastic-throughput": "advisory"})
    assert [v["level"] for v in caught(prod, "model-cache-elastic-throughput", config)] == ["advisory"]


def test_config_properties_merge_over_schema_defaults(prod, tmp_path):
    config = config_file(tmp_path, {"instance-types-allowed": {"allowedInstanceTypes": ["p5.48xlarge", "m6i.xlarge"]}})
    found = caught(prod, "instance-types-allowed", config)
    assert {v["urn"].rsplit("::", 1)[-1] for v in found} == {"a100-train", "l4-inference"}


def test_a_stricter_budget_in_the_config_file_wins(prod, tmp_path):
    found = caught(prod, "monthly-budget", config_file(tmp_path, {"monthly-budget": {"monthlyUsd": 100000}}))
    assert len(found) == 1 and "$100,000 budget (policy config monthly-budget.monthlyUsd)" in found[0]["message"]


def test_a_stricter_budget_in_the_stack_file_wins_over_the_prod_config(prod):
    """config.prod.json's $150,000 must not let a stack $100,000 over its own tighter budget through."""
    at_max = prod["cost"]["totals"]["monthlyUsdAtMax"]
    prod["cost"]["budget"]["monthlyUsd"] = round(at_max - 100000)
    found = caught(prod, "monthly-budget", PROD_CONFIG)
    assert len(found) == 1 and found[0]["level"] == "mandatory"
    assert f"${at_max - 100000:,.0f} budget (stack file budget.monthlyUsd)" in found[0]["message"]
    budget = verdict.budget_in_force(verdict.plan_derived_config(prod), verdict.read_config(PROD_CONFIG))
    assert budget == {"monthlyUsd": round(at_max - 100000), "source": verdict.STACK_BUDGET,
                      "stackFileUsd": round(at_max - 100000), "policyConfigUsd": 150000}


@pytest.mark.parametrize("stack_usd, config_usd, expected", [
    (4000, 150000, (4000, "stack file budget.monthlyUsd")),
    (200000, 150000, (150000, "policy config monthly-budget.monthlyUsd")),
    (150000, 150000, (150000, "stack file budget.monthlyUsd")),
    (None, 150000, (150000, "policy config monthly-budget.monthlyUsd")),
    (4000, None, (4000, "stack file budget.monthlyUsd")),
])
def test_the_budget_in_force_is_the_stricter_one(stack_usd, config_usd, expected):
    derived = {"monthly-budget": {"monthlyUsd": stack_usd}} if stack_usd is not None else {}
    given = {"monthly-budget": {"monthlyUsd": config_usd}} if config_usd is not None else {}
    budget = verdict.budget_in_force(derived, given)
    assert (budget["monthlyUsd"], budget["source"]) == expected
    assert verdict.budget_in_force({}, {}) is None
    props = verdict.reconcile(verdict.load_pack(), given, derived)["monthly-budget"][1]
    assert (props["monthlyUsd"], props["budgetSource"]) == expected


def test_the_plan_records_and_shows_the_budget_in_force(tmp_path, capsys):
    out = tmp_path / "prod.json"
    assert main(["plan", "--stack", "prod", "--json", str(out), "--as-of", AS_OF, "--policy-config",
                 str(PROD_CONFIG)]) == 0
    plan = json.loads(out.read_text())
    assert plan["policy"]["budget"]["source"] == verdict.STACK_BUDGET  # both $150,000: the stack file's
    assert "Budget in force: $150,000/month, the stack file budget.monthlyUsd." in capsys.readouterr().out


def test_stack_file_values_reach_the_policies(stack_plans):
    derived = verdict.plan_derived_config(stack_plans["dev"])
    assert derived["monthly-budget"]["monthlyUsd"] == stack_plans["dev"]["cost"]["budget"]["monthlyUsd"]
    assert derived["team-quota-within-capacity"]["capacityRatio"] == stack_plans["dev"]["capacity"]["quotaOvercommitRatio"]


def test_budget_rule_agrees_with_the_plan_s_cost_section(stack_plans):
    from pulumi_policy import StackValidationArgs

    from gpu_platform.policy.cost import monthly_at_max

    for plan in stack_plans.values():
        config = verdict.reconcile(verdict.load_pack(), {}, verdict.plan_derived_config(plan))["monthly-budget"][1]
        total, _ = monthly_at_max(StackValidationArgs(verdict.stack_resources(plan), config), config)
        assert total == pytest.approx(plan["cost"]["totals"]["monthlyUsdAtMax"], abs=0.01)


@pytest.mark.parametrize("bad", [
    {"node-group-protected": "strict"},
    {"node-group-protected": {"environments": "prod"}},
    {"monthly-budget": {"monthlyUsd": -5}},
    {"gpu-pool-tainted": 3},
])
def test_invalid_config_is_an_input_error(stack_plans, tmp_path, bad):
    with pytest.raises(PlannerError):
        verdict.evaluate(stack_plans["dev"], config_file(tmp_path, bad))


def test_unknown_policy_names_are_ignored_with_a_warning(stack_plans, tmp_path, capsys):
    assert verdict.evaluate(stack_plans["dev"], config_file(tmp_path, {"no-such-policy": "disabled"})) == []
    assert "no-such-policy" in capsys.readouterr().err


def test_the_verdict_builds_arguments_only_for_the_types_each_rule_reads(monkeypatch):
    """A resource rule returns at once for types it does not read, so the verdict builds its arguments only
    for those it does: 26 rules over 10k resources would otherwise build 260k objects to discard."""
    from pulumi_policy import ResourceValidationPolicy

    plan = json.loads((ROOT / "tests" / "planner" / "fixtures" / "plans" / "prod.json").read_text())
    built: list[str] = []
    real = verdict.EngineView.resource_args

    def counting(self, resource, config):
        built.append(resource["type"])
        return real(self, resource, config)
    monkeypatch.setattr(verdict.EngineView, "resource_args", counting)
    rules = [p for p in verdict.load_pack().POLICIES if isinstance(p, ResourceValidationPolicy)]
    assert all(p.resource_types for p in rules)  # every resource rule names what it reads
    assert verdict.evaluate(plan, PROD_CONFIG) == plan["policy"]["violations"] == []
    read = sorted(r["type"] for p in rules for r in plan["resources"] if r["type"] in p.resource_types)
    assert sorted(built) == read
    assert len(built) < len(rules) * len(plan["resources"]) / 4


def test_without_a_policy_config_jsonschema_is_not_imported(monkeypatch, stack_plans):
    """Defaults and the values a plan derives from its (validated) stack file need no schema check: a plan
    without a policy config does not pay for importing jsonschema. A config file's properties are checked."""
    import builtins

    imported: list[str] = []
    real = builtins.__import__

    def recording(name, *args, **kwargs):
        imported.append(name)
        return real(name, *args, **kwargs)
    monkeypatch.setattr(builtins, "__import__", recording)
    pack = verdict.load_pack()
    verdict.reconcile(pack, {}, verdict.plan_derived_config(stack_plans["prod"]))
    assert "jsonschema" not in imported
    with pytest.raises(PlannerError, match="monthly-budget"):
        verdict.reconcile(pack, {"monthly-budget": {"monthlyUsd": "lots"}}, {})
    assert "jsonschema" in imported


def test_the_verdict_proxies_only_the_resources_a_rule_reads(monkeypatch):
    """Inputs behind the unknown-checking proxy are built when a rule first reads them, once each: most
    resources of a large plan (tags, RBAC, namespaces) are read by no rule."""
    plan = json.loads((ROOT / "tests" / "planner" / "fixtures" / "plans" / "prod.json").read_text())
    built: list[str] = []
    real = verdict._props

    def counting(resource):
        built.append(resource["urn"])
        return real(resource)
    monkeypatch.setattr(verdict, "_props", counting)
    assert verdict.evaluate(plan, PROD_CONFIG) == []
    assert len(built) == len(set(built)) < len(plan["resources"]) / 2
