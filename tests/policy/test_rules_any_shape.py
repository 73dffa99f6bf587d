"""No rule raises, whatever shape another program registers: every policy in POLICIES is run on the resources
of each example stack's plan with arbitrary JSON put at a random path of one resource's inputs (a bool where
an object is read, lists and maps swapped, null where a list is read, a string where an object is expected).

A rule judges what it can read and reports an advisory naming the resource and the property for what it
cannot (policy/common.py's typed readers); only the SDK's "can't run during preview" path may carry it,
at advisory level, never an exception out of `validate`, which fails the whole `pulumi preview`.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpu_platform.planner import verdict
from gpu_platform.policy import POLICIES
from gpu_platform.policy.common import RULE_FAILED_PREFIX, UNREADABLE_PREFIX

PLANS = Path(__file__).resolve().parents[1] / "planner" / "fixtures" / "plans"
STACKS = sorted(p.stem for p in PLANS.glob("*.json"))
UNKNOWN = verdict.UNKNOWN_MARK
# Resource types the pack never reads are left alone: mutating them proves nothing.
READ_TYPES_EXCLUDED = ("gpu-platform:",)


def _plan(stack: str) -> dict[str, Any]:
    return json.loads((PLANS / f"{stack}.json").read_text())


_CACHE = {stack: _plan(stack) for stack in STACKS}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12) | st.just(UNKNOWN) | st.just("nvidia.com/gpu") | st.just("NO_SCHEDULE"),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


def paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    """Every path in a JSON value (the root of the inputs excluded)."""
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            found += paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += paths(v, (*prefix, i))
    return found


def put(inputs: dict[str, Any], path: tuple, value: Any) -> None:
    node = inputs
    for step in path[:-1]:
        node = node[step]
    node[path[-1]] = value


def _readable(resource: dict[str, Any]) -> bool:
    return bool(resource.get("inputs")) and not resource["type"].startswith(READ_TYPES_EXCLUDED)


@st.composite
def mutated_plans(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    stack = draw(st.sampled_from(STACKS))
    plan = copy.deepcopy(_CACHE[stack])
    candidates = [r for r in plan["resources"] if _readable(r)]
    target = draw(st.sampled_from(candidates))
    for _ in range(draw(st.integers(1, 3))):
        where = paths(target["inputs"])
        path = draw(st.sampled_from(where)) if where else (draw(st.text(max_size=8)),)
        put(target["inputs"], path, draw(json_values))
    return plan, f"{target['type']} {target['name']}"


def test_every_policy_runs_in_the_check():
    """The check below reaches every policy (none is disabled by default)."""
    settings_ = verdict.reconcile(verdict.load_pack(), {})
    assert all(settings_[p.name][0] != "disabled" for p in POLICIES)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(mutated_plans())
def test_no_rule_raises_on_any_shape(case):
    plan, what = case
    try:
        found = verdict.evaluate(plan, None)
    except Exception as exc:  # noqa: BLE001 the assertion names the shape that broke a rule
        pytest.fail(f"a rule raised on {what}: {type(exc).__name__}: {exc}")
    for v in found:
        assert RULE_FAILED_PREFIX not in v["message"], f"a rule stopped on {what}: {v['message']}"
        if UNREADABLE_PREFIX in v["message"]:
            assert v["level"] == "advisory" and v["policy"] == "readable-properties", v


def _first(plan: dict[str, Any], type_suffix: str, name: str | None = None) -> dict[str, Any]:
    return next(r for r in plan["resources"] if r["type"].endswith(type_suffix) and name in (None, r["name"]))


def _swap_node_group(inputs: dict[str, Any]) -> None:
    inputs["labels"], inputs["taints"] = list(inputs["labels"].items()), {"a": inputs["taints"]}
    inputs["instanceTypes"] = {"type": inputs["instanceTypes"]}


@pytest.mark.parametrize("stack, suffix, name, edit, path", [
    ("prod", ":Release", "gpu-operator", lambda i: i["values"].update(driver=True), "values.driver"),
    ("prod", ":NodeGroup", "l4-inference", _swap_node_group, "labels"),
    ("prod", ":LaunchTemplate", None, lambda i: i.update(metadataOptions="required"), "metadataOptions"),
    ("prod", ":LaunchTemplate", None, lambda i: i.update(vpcSecurityGroupIds=True), "vpcSecurityGroupIds"),
    ("prod", ":ClusterQueue", None, lambda i: i["spec"]["resourceGroups"].insert(0, None), "spec.resourceGroups[0]"),
    ("karpenter", ":NodePool", "h100-mig",
     lambda i: i["spec"]["template"]["metadata"]["labels"].update({"nvidia.com/gpu.product": ["NVIDIA-H100"]}),
     "spec.template.metadata.labels.nvidia.com/gpu.product"),
], ids=["operator-driver-bool", "node-group-lists-and-maps-swapped", "launch-template-string-for-object", "launch-template-bool-for-list",
        "cluster-queue-null-resource-group", "node-pool-list-label"])
def test_shapes_other_programs_register_are_judged_not_raised_on(stack, suffix, name, edit, path):
    plan = copy.deepcopy(_CACHE[stack])
    target = _first(plan, suffix, name)
    edit(target["inputs"])
    found = verdict.evaluate(plan, None)  # raised before: the whole preview failed
    assert not [v for v in found if RULE_FAILED_PREFIX in v["message"]], found
    advisories = [v["message"] for v in found if v["policy"] == "readable-properties" and v["urn"] == target["urn"]]
    assert any(m.startswith(f"{UNREADABLE_PREFIX} {path} of {target['type']} {target['name']!r}") for m in advisories), found


def test_a_rule_still_judges_what_it_can_read():
    """A node group with unreadable labels is still refused for what can be read (spot in a critical pool
    is read from capacityType; the taint check still sees a missing GPU taint)."""
    plan = copy.deepcopy(_CACHE["prod"])
    target = _first(plan, ":NodeGroup", "l4-inference")
    target["inputs"]["taints"] = "none"
    found = verdict.evaluate(plan, None)
    mine = {v["policy"] for v in found if v["urn"] == target["urn"]}
    assert {"readable-properties", "gpu-pool-tainted"} <= mine, found


def test_valid_example_stacks_have_nothing_unreadable():
    for stack in STACKS:
        found = verdict.evaluate(copy.deepcopy(_CACHE[stack]), None)
        assert not [v for v in found if v["policy"] == "readable-properties"], (stack, found)
