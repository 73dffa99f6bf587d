"""The acceptance gate as the example stacks plan it: each accepted pool's nodes register with the startup
taint, the Cluster Autoscaler's simulated node (the Auto Scaling group's node-template tags and its chart
values) carries the pool's taints but not the startup taint, and a Karpenter pool lists it under
`startupTaints`, valid against the pinned Karpenter CRD."""
from __future__ import annotations

import json

import pytest

from gpu_platform.facts import names
from tests.support.crd_schemas import schema_problems
from tests.support.plans import node_groups, stack_plan
from tests.support.stacks import resources

STARTUP = {"key": names.ACCEPTANCE_TAINT_KEY, "value": names.ACCEPTANCE_TAINT_VALUE, "effect": "NO_SCHEDULE"}
GATED = ("prod", "training-blackwell", "training-ultraserver")


def _template_taints(plan: dict, pool: str) -> dict[str, str]:
    prefix = names.ca_taint_tag("")
    tags = [r["inputs"]["tag"] for r in resources(plan, "aws:autoscaling/tag:Tag") if r["name"].startswith(f"{pool}-")]
    return {t["key"][len(prefix):]: t["value"] for t in tags if t["key"].startswith(prefix)}


def _autoscaler_args(plan: dict) -> dict:
    release = next(r for r in resources(plan, "kubernetes:helm.sh/v3:Release")
                   if r["inputs"].get("name") == names.CA_RELEASE)
    values = release["inputs"]["values"]
    return json.loads(values) if isinstance(values, str) else values


@pytest.mark.parametrize("stack", GATED)
def test_nodes_register_with_the_startup_taint_the_autoscaler_ignores(stack):
    plan = stack_plan(stack)
    groups = node_groups(plan)
    assert groups
    for pool, group in groups.items():
        taints = group["inputs"]["taints"]
        assert STARTUP in taints, pool
        template = _template_taints(plan, pool)
        assert names.ACCEPTANCE_TAINT_KEY not in template
        own = {t["key"] for t in taints if t != STARTUP}
        assert own == set(template), pool  # the pool's own taints, the GPU taint among them
    assert _autoscaler_args(plan)["extraArgs"]["startup-taint"] == names.ACCEPTANCE_TAINT_KEY


def test_ungated_stack_registers_nodes_as_before():
    plan = stack_plan("dev")
    for group in node_groups(plan).values():
        assert all(t["key"] != names.ACCEPTANCE_TAINT_KEY for t in group["inputs"]["taints"])
    assert "startup-taint" not in _autoscaler_args(plan)["extraArgs"]
    assert not [r for r in plan["resources"] if r["type"].endswith("NodeReadinessRule")]


def test_karpenter_pools_list_it_as_a_startup_taint():
    plan = stack_plan("karpenter")
    pools = [r for r in plan["resources"] if r["type"] == "kubernetes:karpenter.sh/v1:NodePool"]
    assert pools
    for pool in pools:
        obj = {k: pool["inputs"][k] for k in ("apiVersion", "kind", "metadata", "spec")}
        spec = obj["spec"]["template"]["spec"]
        assert spec["startupTaints"] == [{"key": names.ACCEPTANCE_TAINT_KEY, "value": names.ACCEPTANCE_TAINT_VALUE,
                                          "effect": "NoSchedule"}]
        assert names.ACCEPTANCE_TAINT_KEY not in {t["key"] for t in spec["taints"]}
        assert schema_problems("karpenter-v1.14.1", obj) == []


@pytest.mark.parametrize("stack", [*GATED, "karpenter"])
def test_every_gated_pool_has_its_rule_and_checker(stack):
    plan = stack_plan(stack)
    rules = [r["inputs"]["spec"]["nodeSelector"]["matchLabels"][names.POOL_LABEL]
             for r in plan["resources"] if r["type"].endswith(":NodeReadinessRule")]
    checkers = [r["inputs"]["metadata"]["name"] for r in plan["resources"]
                if r["type"] == "kubernetes:apps/v1:DaemonSet" and r["inputs"]["metadata"].get("namespace") == names.ACCEPTANCE_NAMESPACE]
    rechecks = [c for c in checkers if c.startswith(names.ACCEPTANCE_RECHECK)]
    assert sorted(rules) and sorted(f"{names.ACCEPTANCE_NAME}-{p}" for p in rules) == sorted(set(checkers) - set(rechecks))
    # only gated pools' idle nodes are re-checked; prod-environment stacks re-check every one by default
    assert set(rechecks) <= {f"{names.ACCEPTANCE_RECHECK}-{p}" for p in rules}
    if stack == "prod":
        assert len(rechecks) == len(rules)


def test_the_checker_gets_its_aws_identity_before_it_runs():
    """Pod Identity credentials reach only pods started after the association: the checkers wait for it."""
    plan = stack_plan("prod")
    [assoc] = [r for r in resources(plan, "aws:eks/podIdentityAssociation:PodIdentityAssociation")
               if r["name"] == "acceptance-replacement"]
    assert (assoc["inputs"]["namespace"], assoc["inputs"]["serviceAccount"]) == (
        names.ACCEPTANCE_NAMESPACE, names.ACCEPTANCE_NAME)
    checkers = [r for r in resources(plan, "kubernetes:apps/v1:DaemonSet")
                if r["inputs"]["metadata"].get("namespace") == names.ACCEPTANCE_NAMESPACE]
    assert checkers and all(assoc["urn"] in r["options"]["dependsOn"] for r in checkers)


def test_no_aws_identity_without_a_gated_managed_node_group():
    assert not [r for r in stack_plan("dev")["resources"] if r["name"] == "acceptance-replacement"]
