"""How the pack's rules read the stack (policy/common.py): views built once per validation, by type."""
from __future__ import annotations

from pulumi_policy import StackValidationArgs

from gpu_platform.policy.common import of_type, readable_stack_args
from tests.policy.harness import stack_resource

NS, CM = "kubernetes:core/v1:Namespace", "kubernetes:core/v1:ConfigMap"


def stack(*names: str) -> list:
    return [stack_resource(NS if n.startswith("ns") else CM, {"metadata": {"name": n}}, n) for n in names]


def test_every_rule_of_one_validation_reads_the_same_views_in_the_engine_s_order():
    resources = stack("ns-a", "cm-a", "ns-b")
    first, second = readable_stack_args(StackValidationArgs(resources)), readable_stack_args(StackValidationArgs(resources))
    assert [r.name for r in first.resources] == ["ns-a", "cm-a", "ns-b"]
    assert all(a is b for a, b in zip(first.resources, second.resources, strict=True))
    assert [r.name for r in of_type(first, NS)] == ["ns-a", "ns-b"] and of_type(first, "aws:s3/bucket:Bucket") == []


def test_a_rule_changing_its_list_leaves_the_next_rule_s_alone():
    resources = stack("ns-a", "cm-a")
    mine = readable_stack_args(StackValidationArgs(resources))
    mine.resources.clear()
    of_type(readable_stack_args(StackValidationArgs(resources)), NS).clear()
    theirs = readable_stack_args(StackValidationArgs(resources))
    assert [r.name for r in theirs.resources] == ["ns-a", "cm-a"] and len(of_type(theirs, NS)) == 1


def test_another_validation_gets_its_own_views():
    readable_stack_args(StackValidationArgs(stack("ns-old")))
    fresh = readable_stack_args(StackValidationArgs(stack("ns-new", "cm-new")))
    assert [r.name for r in fresh.resources] == ["ns-new", "cm-new"]
    assert [r.name for r in of_type(fresh, CM)] == ["cm-new"]


def test_resources_not_read_through_the_views_are_filtered_as_given():
    resources = stack("ns-a", "cm-a")
    assert [r.name for r in of_type(StackValidationArgs(resources), CM)] == ["cm-a"]
