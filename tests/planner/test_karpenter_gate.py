"""The lock, diff, plan verdict and preview gate on the Karpenter example stack: NodePools are pools too."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from gpu_platform.planner.cli import main
from gpu_platform.planner.lock import changes, lock_from_plan
from gpu_platform.planner.preview_gate import check
from tests.planner.planner_fixtures import digest_of
from tests.support.stacks import ROOT, stack_platform, write_stack

COMMITTED_LOCK = ROOT / "stacks" / "Pulumi.karpenter.lock.json"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"


def _pool(platform, name):
    return next(p for p in platform["nodePools"] if p["name"] == name)


EDITS = {
    "base": lambda p: None,
    "alias": lambda p: _pool(p, "h100-mig")["ami"].update(alias="al2023@v20251201"),
    "taint": lambda p: _pool(p, "l4-inference").update(taints=[{"key": "tier", "value": "online", "effect": "NoSchedule"}]),
    "maxsize": lambda p: _pool(p, "l4-inference").update(maxSize=10),
    "window": lambda p: p["karpenter"].update(disruptionWindow={"schedule": "0 3 * * sat", "duration": "6h"}),
    "removed": lambda p: p.update(nodePools=[x for x in p["nodePools"] if x["name"] != "l4-inference"],
                                  teams=[t for t in p["teams"] if t["name"] != "inference"]),
}
EXPECTED = {
    "alias": {("h100-mig", "node-roll")},
    # the operator learns to tolerate the new taint: its DaemonSets restart on every other GPU pool
    "taint": {("l4-inference", "node-roll"), ("h100-mig", "operand-restart"), ("a100-train", "operand-restart")},
    "maxsize": {("l4-inference", "none")},
    "window": {("h100-mig", "none"), ("l4-inference", "none")},
    "removed": {("l4-inference", "replacement")},
}


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = {}
    for name, edit in EDITS.items():
        folder = tmp_path_factory.mktemp(name)
        platform = stack_platform("karpenter")
        edit(platform)
        stack = write_stack(folder / "Pulumi.karpenter.yaml", platform)
        plan = folder / "plan.json"
        code = main(["plan", "--config", str(stack), "--json", str(plan), "--lock", str(COMMITTED_LOCK)])
        out[name] = {"stack": stack, "plan": plan, "code": code, "doc": json.loads(plan.read_text())}
    return out


def _violations(run, policy="disruption-approved"):
    return [v["message"] for v in run["doc"]["policy"]["violations"] if v["policy"] == policy]


# --- the lock ---

def test_the_committed_lock_is_what_lock_writes_today(runs):
    assert lock_from_plan(runs["base"]["doc"]) == json.loads(COMMITTED_LOCK.read_text())


def test_the_lock_holds_node_pools_beside_node_groups(runs):
    lock = json.loads(COMMITTED_LOCK.read_text())
    assert lock["nodePools"] == {"h100-mig": {"metadata.name": "h100-mig"},
                                 "l4-inference": {"metadata.name": "l4-inference"}}
    assert set(lock["nodeGroups"]) == {"a100-train", "cluster-system"}
    assert {n: e["nodeGroup"] for n, e in lock["pools"].items()} == {
        "a100-train": "a100-train", "h100-mig": "h100-mig", "l4-inference": "l4-inference", "system": "cluster-system"}


def test_lock_changes_name_a_node_pool_replacement():
    old = json.loads(COMMITTED_LOCK.read_text())
    new = copy.deepcopy(old)
    new["nodePools"]["h100-mig"]["metadata.name"] = "h100-mig-2"
    assert '~ h100-mig.metadata.name: "h100-mig" -> "h100-mig-2" (replaces the NodePool)' in changes(old, new)


def test_stacks_without_karpenter_keep_their_lock_shape():
    assert "nodePools" not in json.loads((ROOT / "stacks" / "Pulumi.prod.lock.json").read_text())


# --- the plan's verdict against the lock ---

def test_the_unchanged_stack_passes_against_its_lock(runs):
    assert runs["base"]["code"] == 0 and runs["base"]["doc"]["policy"]["violations"] == []


@pytest.mark.parametrize("edit, pool, cause", [
    ("alias", "h100-mig", "EC2NodeClass (nodes drift): amiSelectorTerms[0].alias al2023@v20260911 -> al2023@v20251201"),
    ("taint", "l4-inference", "NodePool template (nodes drift): taints"),
])
def test_a_drift_the_lock_does_not_record_fails_the_prod_plan(runs, edit, pool, cause):
    assert runs[edit]["code"] == 1
    (message,) = _violations(runs[edit])
    assert message.startswith(f"pool {pool}: node-roll of ") and cause in message


def test_regenerating_the_lock_approves_the_drift(runs, tmp_path, capsys):
    lock = tmp_path / "Pulumi.karpenter.lock.json"
    lock.write_text(COMMITTED_LOCK.read_text())
    assert main(["lock", "--plan", str(runs["alias"]["plan"]), "--out", str(lock)]) == 0
    assert "~ pool h100-mig: approves node-roll: EC2NodeClass (nodes drift)" in capsys.readouterr().out
    assert main(["plan", "--config", str(runs["alias"]["stack"]), "--lock", str(lock)]) == 0


@pytest.mark.parametrize("edit", ["maxsize", "window"])
def test_behavioral_changes_pass_with_no_lock_change(runs, edit):
    assert runs[edit]["code"] == 0 and _violations(runs[edit]) == []
    assert lock_from_plan(runs[edit]["doc"]) == json.loads(COMMITTED_LOCK.read_text())


def test_a_removed_node_pool_is_refused_as_a_delete(runs):
    assert runs["removed"]["code"] == 1
    (message,) = _violations(runs["removed"], "locked-node-groups-present")
    assert message.startswith("locked NodePool 'l4-inference' is no longer declared: this update would DELETE it")


# --- diff ---

@pytest.mark.parametrize("edit", list(EXPECTED))
def test_diff_lists_exactly_the_expected_pools_and_effects(runs, edit, capsys):
    code = main(["diff", str(runs["base"]["plan"]), str(runs[edit]["plan"]), "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert {(d["pool"], d["effect"]) for d in doc["disruptions"]} == EXPECTED[edit]
    assert code == (1 if edit == "removed" else 0)


def test_diff_counts_nodes_and_gpus_at_limits(runs, capsys):
    main(["diff", str(runs["base"]["plan"]), str(runs["alias"]["plan"]), "--format", "json"])
    (found,) = json.loads(capsys.readouterr().out)["disruptions"]
    assert (found["nodes"], found["gpus"]) == (2, 16)


def test_diff_reports_a_deleted_node_pool_as_a_guarded_delete(runs, capsys):
    main(["diff", str(runs["base"]["plan"]), str(runs["removed"]["plan"]), "--format", "json"])
    deleted = {(d["type"], d["name"]) for d in json.loads(capsys.readouterr().out)["deleted"]}
    assert {(NODE_POOL, "l4-inference"), (NODE_CLASS, "l4-inference-class")} <= deleted


# --- check-preview ---

def _digest(runs, edit, tmp_path) -> str:
    digest = digest_of(runs["base"]["doc"], runs[edit]["doc"])
    path = tmp_path / "preview.json"
    path.write_text(json.dumps(digest))
    return str(path)


def test_an_unapproved_drift_fails_the_preview_gate_in_prod(runs, tmp_path, capsys):
    assert main(["check-preview", _digest(runs, "alias", tmp_path), "--lock", str(COMMITTED_LOCK)]) == 1
    out = capsys.readouterr().out
    assert "h100-mig: node-roll of 2 node(s), 16 GPU(s): EC2NodeClass (nodes drift)" in out
    assert "(NOT approved by the lock)" in out


def test_an_in_place_preview_passes(runs, tmp_path):
    assert main(["check-preview", _digest(runs, "maxsize", tmp_path), "--lock", str(COMMITTED_LOCK)]) == 0


def test_deleting_or_replacing_a_node_pool_fails_the_preview_gate():
    urn = ("urn:pulumi:karpenter::gpu-platform::gpu-platform:index:GpuPlatform$gpu-platform:index:KarpenterNodePool"
           f"${NODE_POOL}::l4-inference")
    class_urn = urn.replace(f"${NODE_POOL}::l4-inference", f"${NODE_CLASS}::l4-inference-class")
    digest = {"steps": [{"op": "delete", "urn": urn, "oldState": {"urn": urn, "type": NODE_POOL, "inputs": {}}},
                        {"op": "replace", "urn": class_urn, "replaceReasons": ["metadata.name"],
                         "oldState": {"urn": class_urn, "type": NODE_CLASS, "inputs": {}},
                         "newState": {"urn": class_urn, "type": NODE_CLASS, "inputs": {}}}]}
    findings, errors = check(digest)
    assert errors == [] and {(f.op, f.type, f.name) for f in findings} == {
        ("delete", NODE_POOL, "l4-inference"), ("replace", NODE_CLASS, "l4-inference-class")}


def test_the_budget_rule_agrees_with_the_cost_section(runs):
    doc = runs["base"]["doc"]
    # the pools, volumes and fixed items, CloudWatch Logs ($104.64) and the metrics volumes (12 GB of gp3)
    assert doc["cost"]["totals"]["monthlyUsdAtMax"] == pytest.approx(120159.29, abs=0.01)
    config = Path(runs["base"]["stack"]).parent / "budget.json"
    config.write_text(json.dumps({"monthly-budget": {"monthlyUsd": 120159, "efsStorageGiB": 2000}}))
    assert main(["plan", "--config", str(runs["base"]["stack"]), "--policy-config", str(config),
                 "--lock", str(COMMITTED_LOCK)]) == 1
    config.write_text(json.dumps({"monthly-budget": {"monthlyUsd": 120160, "efsStorageGiB": 2000}}))
    assert main(["plan", "--config", str(runs["base"]["stack"]), "--policy-config", str(config),
                 "--lock", str(COMMITTED_LOCK)]) == 0


def test_the_pack_prices_and_counts_a_karpenter_pool_as_the_same_pool_on_a_node_group(runs, plan_of):
    """Done when: capacity and cost of a Karpenter pool equal those of the same pool on a managed node group,
    in the plan's sections and in what the policy pack reads from the registered resources."""
    from pulumi_policy import StackValidationArgs

    from gpu_platform.planner import verdict
    from gpu_platform.policy.cost import monthly_at_max
    from gpu_platform.policy.teams import capacity_at_max

    managed = stack_platform("karpenter")
    for pool in managed["nodePools"]:
        if pool.pop("provisioner", None):
            pool.pop("karpenter", None)
            pool["ami"] = {"type": "AL2023_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"}
    plans = {"karpenter": runs["base"]["doc"], "managed": plan_of(managed, stack="karpenter")}
    assert not [r for r in plans["managed"]["resources"] if r["type"] == NODE_POOL]
    read = {}
    for name, plan in plans.items():
        config = verdict.reconcile(verdict.load_pack(), {}, verdict.plan_derived_config(plan))["monthly-budget"][1]
        args = StackValidationArgs(verdict.stack_resources(plan), config)
        read[name] = (monthly_at_max(args, config)[0], capacity_at_max(args), plan["capacity"], plan["cost"]["totals"])
    assert read["karpenter"][0] == pytest.approx(read["managed"][0], abs=0.01)
    assert read["karpenter"][1:] == read["managed"][1:]
