"""Warm capacity in the plan: the placeholders registered, each pool's warm nodes in the capacity and cost
sections, and nothing a node roll could come from (the disruption gate reads node groups and templates only)."""
from __future__ import annotations

from tests.support.stacks import cached_plan, resources, stack_platform

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
NODE_SHAPES = ("aws:eks/nodeGroup:NodeGroup", "aws:ec2/launchTemplate:LaunchTemplate")


def without_warm() -> dict:
    p = stack_platform("prod")
    for pool in p["nodePools"]:
        pool.pop("warm", None)
    return p


def test_prod_registers_one_placeholder_per_warm_node_after_its_pool():
    plan = cached_plan(stack_platform("prod"))
    (d,) = [r for r in resources(plan, DEPLOYMENT) if r["name"] == "warm-capacity-l4-inference"]
    assert d["inputs"]["spec"]["replicas"] == 1 and d["inputs"]["metadata"]["namespace"] == "gpu-platform-warm"
    (group,) = [r for r in resources(plan, NODE_SHAPES[0]) if r["name"] == "l4-inference"]
    assert group["urn"] in d["options"]["dependsOn"]  # the pool's node group (a component's children are waited for)


def test_the_sections_show_the_warm_nodes_and_their_price():
    plan = cached_plan(stack_platform("prod"))
    capacity = {p["name"]: p for p in plan["capacity"]["pools"]}
    cost = {p["name"]: p for p in plan["cost"]["pools"]}
    assert capacity["l4-inference"]["warmNodes"] == 1 and "warmNodes" not in capacity["a100-train"]
    assert cost["l4-inference"]["warm"] == {"nodes": 1, "monthlyUsd": round(0.9776 * 730, 2)}
    assert "warm" not in cost["h100-mig"]


def test_warm_capacity_changes_no_node_group_or_template():
    shapes = [{(r["type"], r["name"]): r["inputs"] for r in cached_plan(p)["resources"] if r["type"] in NODE_SHAPES}
              for p in (stack_platform("prod"), without_warm())]
    assert shapes[0] == shapes[1]
    assert not resources(cached_plan(without_warm()), DEPLOYMENT) or all(
        not r["name"].startswith("warm-") for r in resources(cached_plan(without_warm()), DEPLOYMENT))
