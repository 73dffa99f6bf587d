"""The plan document: version-1 shape, schema, deterministic order, secrets hidden."""
from __future__ import annotations

import copy
import json
import random

import pytest

from gpu_platform.planner.engine import Recording, Registration
from gpu_platform.planner.plan import build_plan, dumps, ordered, schema_problems

ROOT = "urn:pulumi:t::p::pulumi:pulumi:Stack::p-t"


def _reg(urn_tail: str, parent: str | None) -> Registration:
    type_, name = urn_tail.rsplit("::", 1)
    return Registration(urn=f"urn:pulumi:t::p::{urn_tail}", type=type_.rsplit("$", 1)[-1], name=name, custom=True,
                        parent=parent, provider=None, inputs={}, options={})


def _tree() -> list[Registration]:
    comp = _reg("x:m:Comp::c", ROOT)
    return [comp, _reg("x:m:Comp$aws:b:B::z", comp.urn), _reg("x:m:Comp$aws:a:A::y", comp.urn),
            _reg("aws:a:A::top", ROOT), _reg("x:m:Comp$aws:a:A::x", comp.urn)]


def _recording(resources) -> Recording:
    return Recording("p", "t", ROOT, resources, {}, {}, [])


def test_plan_of_the_fixture_validates_against_the_schema(recording):
    assert schema_problems(build_plan(recording)) == []


def test_plan_has_the_version_1_keys(recording):
    plan = build_plan(recording)
    assert (plan["version"], plan["project"], plan["stack"], plan["policy"]) == (1, "fixture-box", "test",
                                                                                 {"violations": []})


def test_resource_entries_have_the_contract_keys(recording):
    entry = build_plan(recording)["resources"][0]
    assert sorted(entry) == ["custom", "inputs", "name", "options", "parent", "provider", "type", "urn"]


def test_secret_inputs_appear_as_marker(recording):
    plan = build_plan(recording)
    config_map = next(r for r in plan["resources"] if r["name"] == "box-settings")
    assert config_map["inputs"]["data"]["token"] == "[secret]" and "s3cr3t" not in dumps(plan)


def test_secret_outputs_appear_as_marker(recording):
    assert build_plan(recording)["outputs"]["kubeconfig"] == "[secret]"


def test_schema_rejects_a_resource_without_options(recording):
    plan = copy.deepcopy(build_plan(recording))
    del plan["resources"][0]["options"]
    assert schema_problems(plan) == ["resources/0: 'options' is a required property"]


def test_schema_rejects_an_unknown_violation_level(recording):
    plan = build_plan(recording)
    plan["policy"]["violations"] = [{"policy": "p", "level": "fatal", "urn": None, "message": "m"}]
    assert len(schema_problems(plan)) == 1


def test_schema_allows_extra_sections_and_option_keys(recording):
    plan = copy.deepcopy(build_plan(recording))
    plan["futureSection"] = {"anything": [1, "two"]}
    plan["resources"][0]["options"]["futureOption"] = True
    assert schema_problems(plan) == []


def test_order_is_depth_first_with_siblings_by_type_then_name():
    names = [r.name for r in ordered(_recording(_tree()))]
    assert names == ["top", "c", "x", "y", "z"]


def test_order_does_not_depend_on_registration_order():
    resources = _tree()
    shuffled = resources[:]
    random.Random(7).shuffle(shuffled)
    assert [r.urn for r in ordered(_recording(shuffled))] == [r.urn for r in ordered(_recording(resources))]


def test_parents_come_before_children(recording):
    seen = {recording.root_urn}
    for entry in build_plan(recording)["resources"]:
        assert entry["parent"] in seen
        seen.add(entry["urn"])


@pytest.mark.parametrize("key", ["version", "resources", "policy"])
def test_dumps_is_stable_json_with_sorted_keys(recording, key):
    text = dumps(build_plan(recording))
    assert json.loads(text)[key] == build_plan(recording)[key] and text == dumps(json.loads(text))
