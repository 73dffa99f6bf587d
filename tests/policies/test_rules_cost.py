"""monthly-budget: priced by components/cost.py from the registered node groups and platform pieces."""
from __future__ import annotations

import pytest
from policy_harness import LAUNCH_TEMPLATE, NODE_GROUP, gpu_node_group, launch_template, run_stack, stack_resource, system_node_group

from components import catalog
from components.cost import HOURS
from gpu_policies.cost import monthly_at_max
from gpu_policies.common import with_defaults
from gpu_policies import BY_NAME
from pulumi_policy import StackValidationArgs

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
    from policy_harness import UNKNOWN

    group = gpu_node_group(max_size=40, nodeRoleArn=UNKNOWN, subnetIds=UNKNOWN)
    group["launchTemplate"]["version"] = UNKNOWN
    found = run_stack("monthly-budget", [stack_resource(NODE_GROUP, group, "a10g")], config={"monthlyUsd": 5000})
    assert len(found) == 1 and "over the $5,000 budget" in found[0][0]
