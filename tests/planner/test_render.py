"""The text preview and the Markdown pull-request summary."""
from __future__ import annotations

from collections import Counter

import pytest

from gpu_platform.planner import render
from gpu_platform.planner.plan import build_plan
from gpu_platform.planner.sections import Section

MANDATORY = {"policy": "node-groups-protected", "level": "mandatory",
             "urn": "urn:pulumi:test::gpu-platform::fixture:index:Box$aws:eks/nodeGroup:NodeGroup::box-gpu",
             "message": "node groups must be protected"}
ADVISORY = {**MANDATORY, "policy": "pinned-versions", "level": "advisory", "message": "pin it"}
EXTRA = Section("extra", "Extra table", lambda ctx: None, lambda d: f"extra text {d['n']}",
                lambda d: f"extra markdown {d['n']}")


@pytest.fixture
def plan(recording):
    return build_plan(recording)


def _tree_lines(text: str) -> list[str]:
    return text.split("\n\n")[1].splitlines()[1:]


def test_tree_has_one_line_per_resource_plus_the_stack(plan):
    assert len(_tree_lines(render.text(plan))) == len(plan["resources"]) + 1


def test_tree_starts_at_the_root_stack(plan):
    assert _tree_lines(render.text(plan))[0].split() == ["+", "pulumi:pulumi:Stack", "fixture-box-test"]


def test_tree_nests_children_under_their_component(plan):
    lines = _tree_lines(render.text(plan))
    box = next(i for i, line in enumerate(lines) if "fixture:index:Box" in line)
    vpc = next(line for line in lines if "aws:ec2/vpc:Vpc" in line)
    assert lines[box].index("fixture:index:Box") < vpc.index("aws:ec2/vpc:Vpc")


def test_tree_flags_protected_and_retained_resources(plan):
    line = next(line for line in _tree_lines(render.text(plan)) if "aws:efs/fileSystem:FileSystem" in line)
    assert line.endswith("protect retain")


def test_counts_per_type_match_the_plan(plan):
    text = render.text(plan)
    for type_, n in Counter(r["type"] for r in plan["resources"]).items():
        assert f"{n:>5}  {type_}\n" in text


def test_clean_verdict(plan):
    assert "Policy: passed, no violations." in render.text(plan)


def test_mandatory_violation_fails_the_verdict_and_is_listed(plan):
    plan["policy"]["violations"] = [ADVISORY, MANDATORY]
    text = render.text(plan)
    assert "Policy: FAILED (1 advisory, 1 mandatory)." in text
    assert "mandatory  node-groups-protected  aws:eks/nodeGroup:NodeGroup::box-gpu: node groups must be protected" in text


def test_advisory_only_passes(plan):
    plan["policy"]["violations"] = [ADVISORY]
    assert "Policy: passed (1 advisory)." in render.text(plan)


def test_secret_outputs_are_shown_as_marker(plan):
    assert "kubeconfig   [secret]" in render.text(plan)


def test_sections_render_under_their_title(plan):
    plan["extra"] = {"n": 3}
    assert render.text(plan, [EXTRA]).rstrip().endswith("Extra table\nextra text 3")


def test_sections_missing_from_the_plan_are_skipped(plan):
    assert "Extra table" not in render.text(plan, [EXTRA])


def test_markdown_summarises_counts_verdict_and_sections(plan):
    plan["extra"] = {"n": 3}
    md = render.markdown(plan, [EXTRA])
    assert md.startswith("### gpu-platform plan: `test`")
    assert f"**{len(plan['resources'])} resources** to create. Policy: passed, no violations." in md
    assert "| `aws:ec2/vpc:Vpc` | 1 |" in md and "#### Extra table\n\nextra markdown 3" in md


def test_markdown_lists_violations_in_a_table(plan):
    plan["policy"]["violations"] = [MANDATORY]
    assert "| mandatory | `node-groups-protected` | `aws:eks/nodeGroup:NodeGroup::box-gpu` |" in render.markdown(plan)
