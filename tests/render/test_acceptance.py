"""The acceptance gate's objects (render/acceptance.py): Kubernetes' schema strictly, the NodeReadinessRule
against the pinned controller's CRD and its CEL rules, the checker's admission policy evaluated with
cel-python on allowed and refused node updates."""
from __future__ import annotations

import copy
import dataclasses
import subprocess
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from gpu_platform.decisions.acceptance import accepted_pools
from gpu_platform.facts import acceptance as facts
from gpu_platform.facts import catalog, names
from gpu_platform.render import acceptance as r
from gpu_platform.render import acceptance_reporter
from tests.support.admission import denials
from tests.support.crd_schemas import schema_problems
from tests.support.kueue_crds import cel_problems
from tests.support.stacks import spec_of

CHECKER = r.CHECKER_USER


def gate_of(stack: str):
    """A shipped stack's spec and the acceptance gate's objects it renders."""
    spec = spec_of(stack)
    return spec, r.acceptance_manifests(accepted_pools(spec), dict(spec.cluster.system_node_selector), spec.prod)


@pytest.fixture(scope="module")
def prod():
    return gate_of("prod")


def test_every_object_validates_strictly(prod):
    spec, objects = prod
    kinds = set()
    for obj in objects:
        kinds.add(obj["kind"])
        if obj["kind"] == "NodeReadinessRule":
            assert schema_problems(facts.NODE_READINESS_CRDS, obj) == []
            assert cel_problems(facts.NODE_READINESS_CRDS, obj) == []
        else:
            kubernetes_validate.validate(obj, spec.cluster.kubernetes_version, strict=True)
    assert {"NodeReadinessRule", "DaemonSet", "Deployment", "ValidatingAdmissionPolicy", "ClusterRole"} <= kinds


def test_the_crd_refuses_a_taint_outside_its_domain():
    gate = accepted_pools(spec_of("prod"))[0][1]
    rule = r.readiness_rule(gate)
    rule["spec"]["taint"]["key"] = names.GPU_TAINT_KEY
    assert any("readiness.k8s.io/" in p for p in cel_problems(facts.NODE_READINESS_CRDS, rule))


def test_no_gate_no_objects():
    spec = spec_of("dev")
    assert r.acceptance_manifests(accepted_pools(spec), {}, False) == []


def test_one_rule_and_checker_per_pool(prod):
    spec, objects = prod
    rules = [o for o in objects if o["kind"] == "NodeReadinessRule"]
    assert [x["spec"]["nodeSelector"]["matchLabels"][names.POOL_LABEL] for x in rules] == [p.name for p in spec.node_pools]
    assert {x["spec"]["enforcementMode"] for x in rules} == {"bootstrap-only"}
    assert {x["spec"]["conditions"][0]["type"] for x in rules} == {names.ACCEPTANCE_CONDITION}


def test_checker_runs_once_per_new_node_of_its_pool(prod):
    spec, objects = prod
    ds = next(o for o in objects if o["kind"] == "DaemonSet" and o["metadata"]["name"] == r.checker_name("a100-train"))
    pod = ds["spec"]["template"]["spec"]
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert {"key": names.ACCEPTANCE_LABEL, "operator": "DoesNotExist"} in terms[0]["matchExpressions"]
    assert [c["name"] for c in pod["initContainers"]] == ["precheck", "dcgm", "nccl", "efa"]
    assert "dcgmi diag -r 2 -j" in pod["initContainers"][1]["command"][2]
    assert "-g 8" in pod["initContainers"][2]["command"][2]
    env = {e["name"]: e.get("value") for e in pod["containers"][0]["env"]}
    assert env["CHECKS"] == "dcgm,nccl,efa" and env["NCCL_FLOOR_GBPS"] == "180" and env["EFA_INTERFACES"] == "4"
    assert env["EFA_FLOOR_MBPS"] == f"{facts.EFA_FLOOR_MBPS:g}"
    assert r.efa_script() in pod["initContainers"][3]["command"][2]
    assert r.startup_toleration() in pod["tolerations"]


def test_reporter_ships_as_text(prod):
    _, objects = prod
    cm = next(o for o in objects if o["kind"] == "ConfigMap")
    source = cm["data"][r.REPORTER_KEY]
    compile(source, "reporter.py", "exec")
    assert "import gpu_platform" not in source and "from gpu_platform" not in source


def test_every_pod_mounting_the_reporter_rolls_when_it_changes(prod):
    _, objects = prod
    mounting = [o for o in objects if o["kind"] == "DaemonSet"]
    assert mounting
    for daemonset in mounting:
        assert daemonset["spec"]["template"]["metadata"]["annotations"] == names.script_digest(r.reporter_source())
    assert names.script_digest("a newer reporter") != names.script_digest(r.reporter_source())


def test_dcgm_image_is_the_operators():
    values = yaml.safe_load((catalog.UPSTREAM / "gpu-operator-values-v26.7.0.yaml").read_text())["dcgm"]
    assert facts.DCGM_IMAGE == f"{values['repository']}/{values['image']}:{values['version']}"


# --- the checker's admission policy ---

def node(labels=None, conditions=(), taints=(), annotations=None, name="ip-10-40-1-17.ec2.internal") -> dict:
    meta = {"name": name, "labels": {names.POOL_LABEL: "a100-train", **(labels or {})}}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta,
            "spec": {"taints": [dict(t) for t in taints]},
            "status": {"conditions": [dict(c) for c in conditions]}}


READY = {"type": "Ready", "status": "True"}
TAINT = {"key": names.ACCEPTANCE_TAINT_KEY, "value": "pending", "effect": "NoSchedule"}


def refused(old: dict, new: dict, user=CHECKER, on="ip-10-40-1-17.ec2.internal") -> list[str]:
    policy = r.admission_policy()[0]
    request = {"userInfo": {"username": user, "extra": {names.SA_NODE_NAME_EXTRA: [on]} if on else {}}}
    return denials(policy, new, None, oldObject=old, request=request)


def test_checker_may_write_its_condition_and_labels_on_its_node():
    old = node(conditions=[READY], taints=[TAINT])
    new = node({names.ACCEPTANCE_LABEL: "failed", names.ACCEPTANCE_CHECK_LABEL: "nccl"},
               [READY, {"type": names.ACCEPTANCE_CONDITION, "status": "False"}], [TAINT])
    assert refused(old, new) == []


def test_checker_may_not_touch_another_node():
    old, new = node(), node({names.ACCEPTANCE_LABEL: "passed"})
    assert refused(old, new, on="ip-10-40-9-9.ec2.internal") == ["the acceptance checker may change only the node its pod runs on"]
    assert refused(old, new, on=None)


def test_checker_may_not_remove_a_taint():
    assert refused(node(taints=[TAINT]), node(taints=[]))[0].startswith("the acceptance checker may not change a node's spec")


def test_checker_may_not_change_other_labels_conditions_or_annotations():
    old = node(conditions=[READY])
    assert refused(old, node({"team": "x"}, [READY]))
    assert refused(old, node(conditions=[{"type": "Ready", "status": "False"}]))
    assert refused(old, node(conditions=[READY], annotations={"a": "b"}))
    relabel = copy.deepcopy(old)
    relabel["metadata"]["labels"][names.POOL_LABEL] = "other"
    assert refused(old, relabel)


def test_checker_may_write_the_passive_health_condition():
    old = node({names.ACCEPTANCE_LABEL: "passed"}, [READY, {"type": names.ACCEPTANCE_CONDITION, "status": "True"}])
    new = node({names.ACCEPTANCE_LABEL: "passed"}, [READY, {"type": names.ACCEPTANCE_CONDITION, "status": "True"},
                                                    {"type": names.HEALTH_CONDITION, "status": "False"}])
    assert refused(old, new) == []
    assert refused(old, node({names.ACCEPTANCE_LABEL: "passed"}, [READY, {"type": "GpuOther", "status": "False"}]))


def test_policy_leaves_everyone_else_alone():
    assert refused(node(taints=[TAINT]), node(), user="system:serviceaccount:node-readiness-system:x") == []


def test_check_commands_are_shell_and_skip_unchecked_nodes(prod, tmp_path):
    import subprocess

    _, objects = prod
    for ds in (o for o in objects if o["kind"] == "DaemonSet" and "initContainers" in o["spec"]["template"]["spec"]):
        for c in ds["spec"]["template"]["spec"]["initContainers"][1:]:
            script = c["command"][2]
            assert script.startswith(f"[ -e {r.RESULTS}/skip ] ||")
            (tmp_path / "check.sh").write_text(script)
            subprocess.run(["sh", "-n", str(tmp_path / "check.sh")], check=True)


# --- replacing failed Karpenter nodes ---

@pytest.fixture(scope="module")
def karpenter():
    return gate_of("karpenter")


def test_karpenter_pools_replace_failed_nodes_by_their_nodeclaim(karpenter):
    spec, objects = karpenter
    for obj in objects:
        if obj["kind"] != "NodeReadinessRule":
            kubernetes_validate.validate(obj, spec.cluster.kubernetes_version, strict=True)
    role = next(o for o in objects if o["kind"] == "ClusterRole" and o["metadata"]["name"] == names.ACCEPTANCE_NAME)
    assert {"apiGroups": ["karpenter.sh"], "resources": ["nodeclaims"], "verbs": ["delete"]} in role["rules"]
    ds = next(o for o in objects if o["kind"] == "DaemonSet" and o["metadata"]["name"] == r.checker_name("l4-inference"))
    env = {e["name"]: e.get("value") for e in ds["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert (env["REPLACE_VIA"], env["MAX_FAILED_PERCENT"]) == ("nodeclaim", "20")
    trained = next(o for o in objects if o["kind"] == "DaemonSet" and o["metadata"]["name"] == r.checker_name("a100-train"))
    env = {e["name"]: e.get("value") for e in trained["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert (env["REPLACE_VIA"], env["MAX_FAILED_NODES"]) == ("asg", "2")  # a managed node group, prod's limit


def test_managed_node_groups_only_get_no_nodeclaim_rights(prod):
    _, objects = prod
    assert not any(o["metadata"]["name"] == f"{names.ACCEPTANCE_NAME}-replace" for o in objects)
    role = next(o for o in objects if o["kind"] == "ClusterRole" and o["metadata"]["name"] == names.ACCEPTANCE_NAME)
    assert not any("nodeclaims" in rule["resources"] for rule in role["rules"])


def test_managed_node_groups_replace_within_their_eks_repair_thresholds():
    spec = spec_of("prod")
    gates = {gate.pool: gate for _, gate in accepted_pools(spec)}
    assert {(g.replace_via, g.max_failed_nodes, g.max_failed_percent) for g in gates.values()} == {("asg", 2, None)}
    off = copy.deepcopy(spec)
    off.node_pools[0].repair.enabled = False
    assert accepted_pools(off)[0][1].replace_via == ""  # repair off: a failed node stays until replaced by hand


def test_the_termination_role_reaches_only_this_clusters_groups_and_passes_botocore():
    import json

    from tests.support.aws_api import api_problems, service_model

    doc = r.terminate_policy("gpu-prod")
    [statement] = doc["Statement"]
    assert statement["Action"] == "autoscaling:TerminateInstanceInAutoScalingGroup"
    assert statement["Condition"] == {"StringEquals": {f"aws:ResourceTag/{names.ca_cluster_tag('gpu-prod')}": "owned"}}
    shape = service_model("iam").operation_model("PutRolePolicy").input_shape
    assert api_problems({"RoleName": "r", "PolicyName": "p", "PolicyDocument": json.dumps(doc)}, shape) == []


def claim(node_name="ip-10-40-1-17.ec2.internal", pool="l4-inference") -> dict:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim",
            "metadata": {"name": f"{pool}-x7k2p", "labels": {names.KARPENTER_NODEPOOL_LABEL: pool}},
            "status": {"nodeName": node_name}}


def deletion_refused(old: dict, user=CHECKER, on="ip-10-40-1-17.ec2.internal") -> list[str]:
    policy = r.nodeclaim_policy(["l4-inference", "h100-mig"])[0]
    request = {"userInfo": {"username": user, "extra": {names.SA_NODE_NAME_EXTRA: [on]} if on else {}}}
    return denials(policy, None, None, oldObject=old, request=request)


def test_checker_may_delete_its_own_nodes_claim_in_a_replacing_pool():
    assert deletion_refused(claim()) == []


def test_checker_may_not_delete_other_claims():
    assert deletion_refused(claim(node_name="ip-10-40-9-9.ec2.internal")) == [
        "the acceptance checker may delete only the NodeClaim of the node its pod runs on"]
    assert deletion_refused(claim(pool="cpu-general"))[0].startswith(
        "the acceptance checker may delete only NodeClaims of pools that replace")
    unlabelled = claim()
    del unlabelled["metadata"]["labels"]
    assert deletion_refused(unlabelled)
    unlaunched = claim()
    del unlaunched["status"]
    assert deletion_refused(unlaunched)
    assert deletion_refused(claim(), on=None)


def test_replace_policy_leaves_karpenter_alone():
    assert deletion_refused(claim(pool="x"), user="system:serviceaccount:karpenter:karpenter") == []


def test_images_are_pinned_by_version_and_the_reporter_by_digest_too():
    for image in (facts.DCGM_IMAGE, facts.NCCL_TESTS_IMAGE, facts.NODE_READINESS_IMAGE, facts.REPORTER_IMAGE):
        name = image.split("@")[0]
        assert ":" in name.rsplit("/", 1)[1] and not name.endswith(":latest"), image
    digest = facts.REPORTER_IMAGE.split("@sha256:")[1]
    assert len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)


OUTPUTS = Path(__file__).parent / "acceptance_outputs"
# Stand-ins for libfabric's tools: fi_info lists the recorded four domains; fi_pingpong logs how it was called
# and, as the client, prints the recorded transfer table (or fails when told to).
FAKE_PINGPONG = """#!/bin/sh
echo "$FI_EFA_ENABLE_SHM_TRANSFER $*" >> "$LOG"
case "$*" in *localhost) [ -z "$FAIL" ] || exit 3; tail -n 2 "$TABLE";; esac
"""


def _run_efa_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail: str = "") -> subprocess.CompletedProcess[str]:
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    listing = (OUTPUTS / "efa_4_pass.txt").read_text().split("uverbs0")[0]
    (bin_ / "fi_info").write_text(f"#!/bin/sh\ncat <<'END'\n{listing}END\n")
    (bin_ / "fi_pingpong").write_text(FAKE_PINGPONG)
    for tool in bin_.iterdir():
        tool.chmod(0o755)
    monkeypatch.setattr(facts, "EFA_BIN", str(bin_))
    env = {"PATH": f"{bin_}:/usr/bin:/bin", "LOG": str(tmp_path / "log"), "FAIL": fail,
           "TABLE": str(OUTPUTS / "efa_4_pass.txt")}
    return subprocess.run(["/bin/sh", "-c", r.efa_script()], env=env, capture_output=True, text=True, timeout=30)


def test_efa_script_sends_between_the_first_and_last_interface(tmp_path, monkeypatch):
    done = _run_efa_script(tmp_path, monkeypatch)
    assert done.returncode == 0, done.stderr
    calls = sorted((tmp_path / "log").read_text().splitlines())
    size, iterations = facts.EFA_PINGPONG_BYTES, facts.EFA_PINGPONG_ITERATIONS
    assert calls == [f"0 -p efa -e rdm -I {iterations} -S {size} -d rdmap79s0-rdm",
                     f"0 -p efa -e rdm -I {iterations} -S {size} -d rdmap82s0-rdm localhost"]
    assert "transfer: rdmap79s0-rdm -> rdmap82s0-rdm" in done.stdout
    assert acceptance_reporter.judge_efa(done.stdout + "uverbs0 uverbs1 uverbs2 uverbs3", 4, facts.EFA_FLOOR_MBPS).passed


def test_efa_script_exits_with_the_clients_failure(tmp_path, monkeypatch):
    done = _run_efa_script(tmp_path, monkeypatch, fail="yes")
    assert done.returncode == 3
    assert not acceptance_reporter.judge_efa(done.stdout, 4, facts.EFA_FLOOR_MBPS).passed


# --- passive re-checks of idle accepted nodes ---

def _recheck(objects: list[dict]) -> list[dict]:
    return [o for o in objects if o["kind"] == "DaemonSet" and o["metadata"]["name"].startswith(names.ACCEPTANCE_RECHECK)]


def test_prod_rechecks_each_gated_pool_at_the_lowest_priority(prod):
    spec, objects = prod
    rechecks = _recheck(objects)
    assert len(rechecks) == len(accepted_pools(spec)) and rechecks
    priority = next(o for o in objects if o["kind"] == "PriorityClass")
    assert priority["value"] < 0 and priority["preemptionPolicy"] == "Never"
    for ds in rechecks:
        pod = ds["spec"]["template"]["spec"]
        assert pod["priorityClassName"] == priority["metadata"]["name"]
        assert r.startup_toleration() not in pod["tolerations"]  # accepted nodes only
        terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert {"key": names.ACCEPTANCE_LABEL, "operator": "In", "values": ["passed"]} in terms[0]["matchExpressions"]
        assert not any("nvidia.com/gpu" in str(c.get("resources")) for c in pod["containers"])  # takes no GPU from work
        health, reporter_ = pod["containers"]
        assert "dcgmi health -s a" in health["command"][2] and "dcgmi health -c" in health["command"][2]
        assert "diag" not in health["command"][2]
        env = {e["name"]: e.get("value") for e in reporter_["env"]}
        assert reporter_["command"][-1] == "recheck" and env["RECHECK_HOURS"] == "24"


def test_rechecks_off_render_nothing():
    spec = spec_of("prod")
    gates = [(p, dataclasses.replace(g, recheck_hours=None)) for p, g in accepted_pools(spec)]
    objects = r.acceptance_manifests(gates, {}, True)
    assert not _recheck(objects) and not any(o["kind"] == "PriorityClass" for o in objects)


def test_health_script_is_shell():
    subprocess.run(["/bin/sh", "-n", "-c", r.health_script()], check=True)
