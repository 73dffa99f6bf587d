"""monthly-budget: priced by decisions/cost.py from the registered node groups and platform pieces."""
from __future__ import annotations

import pytest
from pulumi_policy import StackValidationArgs

from gpu_platform.decisions.cost import HOURS
from gpu_platform.facts import catalog
from gpu_platform.policy import BY_NAME
from gpu_platform.policy.common import with_defaults
from gpu_platform.policy.cost import monthly_at_max
from tests.policy.harness import LAUNCH_TEMPLATE, NODE_GROUP, gpu_node_group, launch_template, run_stack, stack_resource, system_node_group

G5 = catalog.INSTANCE_TYPES["g5.xlarge"].price.usd_per_hour
M6I = catalog.SYSTEM_INSTANCE_PRICES["m6i.large"].usd_per_hour


def resources(capacity="ON_DEMAND", max_size=4):
    return [stack_resource(NODE_GROUP, gpu_node_group(capacity=capacity, max_size=max_size), "a10g"),
            stack_resource(LAUNCH_TEMPLATE, launch_template(size=200), "a10g"),
            stack_resource(NODE_GROUP, system_node_group(), "system"),
            stack_resource(LAUNCH_TEMPLATE, launch_template("gpu-test-system", size=50), "system")]


def test_total_prices_pools_and_volumes_at_max_size():
    config = with_defaults(BY_NAME["monthly-budget"])
    total, unpriced = monthly_at_max(StackValidationArgs(resources(), config), config)
    ebs = (200 * 4 + 50 * 3) * catalog.EBS_GP3_GB_MONTH.usd_per_hour
    assert total == pytest.approx((G5 * 4 + M6I * 3) * HOURS + ebs) and unpriced == []


def test_spot_pools_get_the_configured_discount():
    config = with_defaults(BY_NAME["monthly-budget"], {"spotDiscount": 0.5})
    spot, _ = monthly_at_max(StackValidationArgs(resources("SPOT"), config), config)
    on_demand, _ = monthly_at_max(StackValidationArgs(resources(), config), config)
    assert on_demand - spot == pytest.approx(G5 * 4 * HOURS * 0.5)


def test_stack_within_budget_passes():
    assert run_stack("monthly-budget", resources(), config={"monthlyUsd": 5000}) == []


def test_stack_over_budget_is_refused():
    found = run_stack("monthly-budget", resources(max_size=40), config={"monthlyUsd": 5000})
    assert len(found) == 1 and "over the $5,000 budget" in found[0][0] and "maxSize" in found[0][0]


def test_no_budget_no_check():
    assert run_stack("monthly-budget", resources(max_size=400)) == []


def test_ids_unknown_in_preview_do_not_stop_the_budget():
    from tests.policy.harness import UNKNOWN

    group = gpu_node_group(max_size=40, nodeRoleArn=UNKNOWN, subnetIds=UNKNOWN)
    group["launchTemplate"]["version"] = UNKNOWN
    found = run_stack("monthly-budget", [stack_resource(NODE_GROUP, group, "a10g")], config={"monthlyUsd": 5000})
    assert len(found) == 1 and "over the $5,000 budget" in found[0][0]


# --- the datasets file system: its provisioned capacity at its deployment type's and throughput's price ---

LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"


def lustre(**props) -> dict:
    return {"deploymentType": "PERSISTENT_2", "storageType": "SSD", "storageCapacity": 4800,
            "perUnitStorageThroughput": 250, "subnetIds": "subnet-0a1b2c3d4e5f60718", **props}


def with_lustre(**props):
    return [*resources(), stack_resource(LUSTRE, lustre(**props), "datasets")]


def total(stack, **config) -> tuple[float, list]:
    config = with_defaults(BY_NAME["monthly-budget"], config)
    return monthly_at_max(StackValidationArgs(stack, config), config)


@pytest.mark.parametrize("props, usd_per_gb_month", [
    ({}, 0.21),                                                                 # PERSISTENT_2 at 250 MB/s/TiB
    ({"perUnitStorageThroughput": 1000}, 0.60),
    ({"deploymentType": "PERSISTENT_1", "perUnitStorageThroughput": 50}, 0.145),
    ({"deploymentType": "SCRATCH_2", "perUnitStorageThroughput": None}, 0.14),  # no tier: the scratch price
])
def test_a_lustre_file_system_adds_its_capacity_at_its_tier_s_price(props, usd_per_gb_month):
    plain, _ = total(resources())
    props = {k: v for k, v in lustre(**props).items() if v is not None}
    priced, unpriced = total([*resources(), stack_resource(LUSTRE, props, "datasets")])
    assert priced - plain == pytest.approx(4800 * usd_per_gb_month) and unpriced == []
    assert usd_per_gb_month == catalog.FSX_LUSTRE_DEPLOYMENTS[props["deploymentType"]].prices[
        props.get("perUnitStorageThroughput", 0)].usd_per_hour


def test_the_fsx_lustre_price_override_reaches_the_budget():
    plain, _ = total(resources())
    priced, _ = total(with_lustre(), fixedPrices={"fsxLustre": 0.5})
    assert priced - plain == pytest.approx(4800 * 0.5)


def test_a_lustre_file_system_of_an_unknown_type_is_named_as_unpriced():
    plain, _ = total(resources())
    priced, unpriced = total(with_lustre(deploymentType="SCRATCH_1"))
    assert priced == pytest.approx(plain) and unpriced == ["FSx for Lustre datasets"]


def test_the_datasets_can_push_a_stack_over_budget():
    plain, _ = total(resources())
    budget = plain + 500  # room for the pools and volumes, not for 4,800 GB at $0.21
    assert run_stack("monthly-budget", resources(), config={"monthlyUsd": budget}) == []
    (found,) = run_stack("monthly-budget", with_lustre(), config={"monthlyUsd": budget})
    assert "over the" in found[0]


def test_the_fixed_prices_schema_names_the_fsx_override():
    assert "fsxLustre" in BY_NAME["monthly-budget"].config_schema.properties["fixedPrices"]["description"]


def test_the_plan_passes_its_fsx_price_to_the_budget_rule():
    from gpu_platform.planner import verdict
    from tests.support.stacks import cached_plan, stack_platform

    plan = cached_plan(stack_platform("prod"))
    (fsx,) = [f for f in plan["cost"]["fixed"] if f["key"] == "fsxDatasets"]
    assert verdict.plan_derived_config(plan)["monthly-budget"]["fixedPrices"]["fsxLustre"] == fsx["usdPerUnit"] == 0.21


# --- a Capacity Block's whole fee falls in one month: the budget holds that month ---

B200 = catalog.CAPACITY_BLOCK_PRICES["p6-b200.48xlarge"].usd_per_hour


def block_resources():
    group = gpu_node_group("b200", instance_types=("p6-b200.48xlarge",), capacity="CAPACITY_BLOCK", max_size=4)
    return [stack_resource(NODE_GROUP, group, "b200")]


def test_the_budget_holds_the_month_a_blocks_fee_is_charged_in():
    """A 28-day block of 4 instances bought in November: $221k charged then, though only 348.5 of its hours
    fall in November. Amortised it would pass a $150,000 budget; up front it does not."""
    blocks = {"b200": {"hours": 348.5, "instances": 4, "windowHours": 672, "chargeMonth": "2026-11"}}
    config = with_defaults(BY_NAME["monthly-budget"], {"capacityBlocks": blocks})
    total, _ = monthly_at_max(StackValidationArgs(block_resources(), config), config)
    assert total == pytest.approx(B200 * 4 * 672, rel=1e-3)
    found = run_stack("monthly-budget", block_resources(), config={"monthlyUsd": 150000, "capacityBlocks": blocks})
    assert len(found) == 1 and "over the $150,000 budget" in found[0][0]


def test_a_blocks_quoted_rate_reaches_the_budget():
    blocks = {"b200": {"hours": 24, "instances": 4, "windowHours": 24, "chargeMonth": "2026-11", "usdPerHour": 100.0}}
    config = with_defaults(BY_NAME["monthly-budget"], {"capacityBlocks": blocks})
    total, _ = monthly_at_max(StackValidationArgs(block_resources(), config), config)
    assert total == pytest.approx(100.0 * 4 * 24, rel=1e-3)


# --- CloudWatch Logs: the stated ingestion and what the retention keeps, when the stack runs log groups ---

LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"


def with_log_group():
    return [*resources(), stack_resource(LOG_GROUP, {"name": "/gpu-platform/gpu-test/research",
                                                     "retentionInDays": 30}, "logging-research")]


def test_log_groups_add_the_stated_ingestion_and_storage():
    plain, _ = total(resources())
    priced, unpriced = total(with_log_group(), logIngestGbPerMonth=300, logStoredGb=900)
    assert priced - plain == pytest.approx(300 * 0.50 + 900 * 0.03) and unpriced == []


def test_log_volumes_without_log_groups_cost_nothing():
    plain, _ = total(resources())
    assert total(resources(), logIngestGbPerMonth=300, logStoredGb=900)[0] == pytest.approx(plain)


def test_the_logs_can_push_a_stack_over_budget():
    plain, _ = total(resources())
    config = {"monthlyUsd": plain + 100, "logIngestGbPerMonth": 1000}  # $500 of ingestion
    assert run_stack("monthly-budget", with_log_group(), config={"monthlyUsd": plain + 100}) == []
    (found,) = run_stack("monthly-budget", with_log_group(), config=config)
    assert "over the" in found[0]


def test_the_plan_passes_its_log_volumes_to_the_budget_rule():
    from gpu_platform.planner import verdict
    from tests.support.stacks import cached_plan, stack_platform

    plan = cached_plan(stack_platform("prod"))
    fixed = {f["key"]: f for f in plan["cost"]["fixed"]}
    derived = verdict.plan_derived_config(plan)["monthly-budget"]
    assert derived["logIngestGbPerMonth"] == fixed["cloudwatchLogsIngestion"]["quantityAtMax"] > 0
    assert derived["logStoredGb"] == fixed["cloudwatchLogsStorage"]["quantityAtMax"] == (10 + 20 + 15 + 10) * 365
