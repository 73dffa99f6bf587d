"""Reserved capacity in the pack: Capacity Block node groups as EKS accepts them, no placement group forced onto a
reservation, critical pools off Capacity Blocks, allowed types read from launch templates, MIG and budget rules
reading a group whose instance type is in its launch template only. Each rule passes and fails once at least."""
from __future__ import annotations

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import names
from gpu_platform.facts.karpenter import NODE_POOL
from gpu_platform.render.karpenter import node_pool_object
from gpu_platform.spec.pool_context import PoolContext
from tests.policy.harness import (
    LAUNCH_TEMPLATE, NODE_GROUP, gpu_node_group, launch_template, operator_release, run_resource, run_stack,
    stack_resource, with_provider,
)
from tests.support.blackwell import karpenter_twin

HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
BLOCK_ID = "cr-0b2c4d6e8f0a1b3c5"
B200_LABELS = {names.GPU_PRODUCT_LABEL: "NVIDIA-B200", names.ACCELERATOR_LABEL: "nvidia-b200"}


def block_group(labels: dict = B200_LABELS, **extra) -> dict:
    """A Capacity Block node group: its instance type is named in its launch template only."""
    props = gpu_node_group("b200-train", capacity="CAPACITY_BLOCK", labels=labels, release="1.35.7-20260917")
    del props["instanceTypes"]
    props.update(extra)
    return props


def block_template(**extra) -> dict:
    return launch_template("gpu-test-b200-train", instanceType="p6-b200.48xlarge",
                           instanceMarketOptions={"marketType": "capacity-block"},
                           capacityReservationSpecification={"capacityReservationTarget": {"capacityReservationId": BLOCK_ID}},
                           **extra)


def stack(group: dict, template: dict) -> list:
    return with_provider([stack_resource(NODE_GROUP, group, "b200-train"),
                          stack_resource(LAUNCH_TEMPLATE, template, "b200-train")])


# --- capacity-block-node-group ---

def test_a_block_group_with_its_template_passes():
    assert run_stack("capacity-block-node-group", stack(block_group(), block_template())) == []


def test_a_block_group_listing_its_instance_type_is_refused():
    group = block_group(instanceTypes=["p6-b200.48xlarge"])
    (found,) = run_stack("capacity-block-node-group", stack(group, block_template()))
    assert "lists instanceTypes" in found[0] and "drop instanceTypes" in found[0]


def test_a_block_template_without_the_market_type_or_the_block_is_refused():
    template = block_template()
    del template["instanceMarketOptions"]
    del template["capacityReservationSpecification"]
    (found,) = run_stack("capacity-block-node-group", stack(block_group(), template))
    assert "instanceMarketOptions.marketType capacity-block" in found[0] and "capacityReservationId" in found[0]


def test_a_block_group_without_a_template_is_refused():
    resources = with_provider([stack_resource(NODE_GROUP, block_group(), "b200-train")])
    (found,) = run_stack("capacity-block-node-group", resources)
    assert "a launch template" in found[0]


def test_on_demand_groups_are_not_held_to_it():
    resources = with_provider([stack_resource(NODE_GROUP, gpu_node_group(), "a10g")])
    assert run_stack("capacity-block-node-group", resources) == []


# --- reservation-without-placement-group ---

def test_a_reservation_without_a_placement_group_passes():
    assert run_resource("reservation-without-placement-group", LAUNCH_TEMPLATE, block_template()) == []


def test_a_placement_group_forced_onto_a_reservation_is_named():
    template = block_template(placement={"groupName": "gpu-test-b200-train"})
    (found,) = run_resource("reservation-without-placement-group", LAUNCH_TEMPLATE, template, name="b200-train")
    assert BLOCK_ID in found and "gpu-test-b200-train" in found and "drop the placement" in found


def test_a_placement_group_without_a_reservation_is_not_its_business():
    template = launch_template(placement={"groupName": "gpu-test-a100"})
    assert run_resource("reservation-without-placement-group", LAUNCH_TEMPLATE, template) == []


# --- critical pools, allowed types, MIG, budget ---

def test_a_critical_pool_on_a_capacity_block_is_refused():
    group = block_group(labels={**B200_LABELS, names.CRITICAL_LABEL: "true"})
    (found,) = run_resource("critical-pool-on-demand", NODE_GROUP, group, name="b200-train")
    assert "CAPACITY_BLOCK" in found and "ends on a date" in found


def test_a_critical_pool_on_an_odcr_is_on_demand():
    group = gpu_node_group(labels={names.CRITICAL_LABEL: "true"})
    assert run_resource("critical-pool-on-demand", NODE_GROUP, group) == []


def test_the_allow_list_reads_a_launch_templates_instance_type():
    config = {"allowedInstanceTypes": ["p5.48xlarge"]}
    (found,) = run_resource("instance-types-allowed", LAUNCH_TEMPLATE, block_template(), name="b200", config=config)
    assert "launch template 'b200' uses p6-b200.48xlarge" in found
    assert run_resource("instance-types-allowed", LAUNCH_TEMPLATE, block_template()) == []  # the catalog's list


def test_a_mig_label_on_a_block_group_is_judged_by_its_gpu():
    labels = {**B200_LABELS, names.MIG_CONFIG_LABEL: "pool-b200-train"}  # the harness's A10G label is replaced
    assert run_resource("mig-on-capable-instances", NODE_GROUP, block_group(labels=labels)) == []
    a10g = {names.GPU_PRODUCT_LABEL: "NVIDIA-A10G", names.MIG_CONFIG_LABEL: "pool-a10g"}
    (found,) = run_resource("mig-on-capable-instances", NODE_GROUP, block_group(labels=a10g), name="a10g")
    assert "A10G have no MIG" in found


def _budget(config: dict) -> list:
    resources = [*stack(block_group(), block_template()),
                 stack_resource(HELM_RELEASE, operator_release(), "gpu-operator")]
    return run_stack("monthly-budget", resources, config)


def test_the_budget_holds_the_month_a_blocks_whole_fee_is_charged_in():
    """AWS charges the block once, up front: its 348.5 hours in the month (4 x 82.368 x 348.5 = 114,820.99) are
    the amortised share, but the month it is bought carries 4 x 82.368 x 672 = 221,405.18."""
    block = {"hours": 348.5, "instances": 4, "windowHours": 672, "chargeMonth": "2026-11"}
    (found,) = _budget({"monthlyUsd": 120000, "capacityBlocks": {"b200-train": block}})
    assert "over the $120,000 budget" in found[0]
    assert _budget({"monthlyUsd": 230000, "capacityBlocks": {"b200-train": block}}) == []


def test_the_budget_prices_a_block_without_hours_for_a_whole_month():
    (found,) = _budget({"monthlyUsd": 120000})  # 4 x 82.368 x 730 = 240,514.56
    assert "over the $120,000 budget" in found[0]


def test_a_critical_node_pool_is_on_demand_in_its_odcr_but_not_on_a_block():
    spec = parse_platform(karpenter_twin())
    pools = {p.name: p for p in spec.node_pools}
    odcr = node_pool_object(PoolContext.of(spec, pools["rtx-serve"]), pools["rtx-serve"])  # critical, reserved first
    assert run_resource("karpenter-critical-pool-on-demand", NODE_POOL, odcr) == []
    block = node_pool_object(PoolContext.of(spec, pools["b200-train"]), pools["b200-train"])
    block["spec"]["template"]["metadata"]["labels"][names.CRITICAL_LABEL] = "true"
    (found,) = run_resource("karpenter-critical-pool-on-demand", NODE_POOL, block, name="b200-train")
    assert "CAPACITY_BLOCK" in found and "ends on a date" in found
