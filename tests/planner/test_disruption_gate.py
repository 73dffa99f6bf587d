"""The disruption gate end to end on the prod stack: plan, lock and diff on real edits of the stack file."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpu_platform.planner.cli import main
from gpu_platform.planner.lock import lock_from_plan
from tests.support.stacks import AS_OF, ROOT, stack_platform, write_stack

COMMITTED_LOCK = ROOT / "stacks" / "Pulumi.prod.lock.json"
GPU_POOLS = ("a100-train", "h100-mig", "l4-inference")


def _pool(platform, name):
    return next(p for p in platform["nodePools"] if p["name"] == name)


EDITS = {
    "base": lambda p: None,
    "driver": lambda p: p["gpuOperator"]["driver"].update(version="595.91.07"),
    "mig": lambda p: _pool(p, "h100-mig")["sharing"].update(layout={"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 1}),
    "disk": lambda p: _pool(p, "a100-train").update(diskSizeGiB=800),
    "maxsize": lambda p: _pool(p, "l4-inference").update(maxSize=8),
    "quota": lambda p: p["teams"][0]["quota"].update(gpus=10),
    "disk+maxsize": lambda p: _pool(p, "a100-train").update(diskSizeGiB=800, maxSize=_pool(p, "a100-train")["maxSize"] + 2),
}
# The pools and effects `diff --format json` must list for each edit, exactly.
EXPECTED = {
    "driver": {(pool, "gpu-pod-eviction") for pool in GPU_POOLS},
    "mig": {("h100-mig", "node-roll")},  # a new layout rolls the pool one node at a time
    "disk": {("a100-train", "node-roll")},
    "maxsize": {("l4-inference", "none")},
    "quota": set(),
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Each edit of the prod stack: its stack file, its plan (held to the committed lock) and the exit code."""
    out = {}
    for name, edit in EDITS.items():
        folder = tmp_path_factory.mktemp(name)
        platform = stack_platform("prod")
        edit(platform)
        stack = write_stack(folder / "Pulumi.prod.yaml", platform)
        plan = folder / "plan.json"
        code = main(["plan", "--config", str(stack), "--json", str(plan), "--lock", str(COMMITTED_LOCK), "--as-of", AS_OF])
        out[name] = {"stack": stack, "plan": plan, "code": code, "doc": json.loads(plan.read_text())}
    return out


def _violations(run):
    return [v for v in run["doc"]["policy"]["violations"] if v["policy"] == "disruption-approved"]


def test_the_unchanged_stack_passes_against_its_lock(runs):
    assert runs["base"]["code"] == 0 and _violations(runs["base"]) == []


@pytest.mark.parametrize("edit, effect, cause", [
    ("driver", "gpu-pod-eviction", "GPU driver (operator-owned): version 580.173.02 -> 595.91.07"),
    ("mig", "node-roll", "MIG layout 2x1g.10gb+1x2g.20gb+1x3g.40gb -> 1x1g.10gb+1x2g.20gb+1x3g.40gb"),
    ("disk", "node-roll", "launch template: blockDeviceMappings[0].ebs.volumeSize 500 -> 800"),
])
def test_a_disruptive_change_fails_the_prod_plan_naming_pool_effect_and_cause(runs, edit, effect, cause):
    run = runs[edit]
    assert run["code"] == 1
    found = _violations(run)
    assert {v["message"].split(":", 1)[0] for v in found} == {f"pool {pool}" for pool, _ in EXPECTED[edit]}
    for v in found:
        assert v["level"] == "mandatory" and f": {effect} of " in v["message"] and cause in v["message"]
        # the file planned is a copy outside the stack folder: the lock it needs is written from that file
        assert f"gpu-platform lock --config {run['stack']}" in v["message"]


@pytest.mark.parametrize("edit", ["driver", "mig", "disk"])
def test_regenerating_the_lock_approves_the_change(runs, edit, tmp_path, capsys):
    run, lock = runs[edit], tmp_path / "Pulumi.prod.lock.json"
    lock.write_text(COMMITTED_LOCK.read_text())
    assert main(["lock", "--plan", str(run["plan"]), "--out", str(lock)]) == 0
    approved = capsys.readouterr().out
    assert all(f"~ pool {pool}: approves {effect}" in approved for pool, effect in EXPECTED[edit])
    assert main(["plan", "--config", str(run["stack"]), "--lock", str(lock), "--as-of", AS_OF]) == 0


@pytest.mark.parametrize("edit", ["maxsize", "quota"])
def test_in_place_changes_pass_with_no_lock_change(runs, edit):
    assert runs[edit]["code"] == 0 and _violations(runs[edit]) == []
    assert lock_from_plan(runs[edit]["doc"]) == json.loads(COMMITTED_LOCK.read_text())


@pytest.mark.parametrize("edit", ["driver", "mig", "disk", "maxsize", "quota"])
def test_diff_json_lists_exactly_the_expected_pools_and_effects(runs, edit, capsys):
    assert main(["diff", str(runs["base"]["plan"]), str(runs[edit]["plan"]), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert {(d["pool"], d["effect"]) for d in doc["disruptions"]} == EXPECTED[edit]
    for d in doc["disruptions"]:
        assert set(d) >= {"pool", "effect", "cause", "nodes", "gpus"} and d["cause"]


def test_diff_text_lists_an_in_place_change_under_other_changes(runs, capsys):
    assert main(["diff", str(runs["base"]["plan"]), str(runs["maxsize"]["plan"])]) == 0
    out = capsys.readouterr().out
    other = out.split("Other changes (in place):\n", 1)[1].split("\n", 1)[0]
    assert other == "  l4-inference: node group, in place: scalingConfig.maxSize 6 -> 8"
    assert out.split("Disruption to GPU nodes and jobs:\n", 1)[1].startswith("  (none)")


def test_diff_lists_an_in_place_change_of_a_pool_that_is_also_disrupted(runs, capsys):
    base, head = runs["base"]["plan"], runs["disk+maxsize"]["plan"]
    before = _pool(stack_platform("prod"), "a100-train")["maxSize"]
    assert main(["diff", str(base), str(head)]) == 0
    out = capsys.readouterr().out
    disrupted = out.split("Disruption to GPU nodes and jobs:\n", 1)[1].split("\n", 1)[0]
    assert "a100-train" in disrupted and "node-roll" in disrupted and "volumeSize 500 -> 800" in disrupted
    other = out.split("Other changes (in place):\n", 1)[1].split("\n", 1)[0]
    assert other == f"  a100-train: node group, in place: scalingConfig.maxSize {before} -> {before + 2}"
    assert main(["diff", str(base), str(head), "--format", "markdown"]) == 0
    assert f"- a100-train: node group, in place: scalingConfig.maxSize {before} -> {before + 2}" in capsys.readouterr().out


def test_diff_markdown_is_the_pull_request_table(runs, capsys):
    assert main(["diff", str(runs["base"]["plan"]), str(runs["driver"]["plan"]), "--format", "markdown"]) == 0
    out = capsys.readouterr().out
    assert "| Pool | Effect | Cause | Nodes | GPUs |" in out
    assert ("| h100-mig | gpu-pod-eviction | GPU driver (operator-owned): version 580.173.02 -> 595.91.07 | 2 | 16 |"
            in out)


def test_plan_refuses_a_lock_that_does_not_exist(runs, capsys):
    assert main(["plan", "--config", str(runs["base"]["stack"]), "--lock", str(Path(runs["base"]["stack"]).parent / "x")]) == 2
    assert "--lock" in capsys.readouterr().err


def test_the_model_reads_unknowns_as_plans_write_them():
    from gpu_platform.decisions.disruption_model import UNKNOWN
    from gpu_platform.planner import verdict, wire

    assert UNKNOWN == wire.UNKNOWN_MARK == verdict.UNKNOWN_MARK
