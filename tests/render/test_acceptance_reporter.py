"""The acceptance reporter's verdicts on recorded check outputs (tests/render/acceptance_outputs/, written in
the formats the tools document: `dcgmi diag -j`, nccl-tests' all_reduce_perf table, `fi_info` with the
`/dev/infiniband` listing, `nvidia-smi -q`'s Fabric section)."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from gpu_platform.facts import acceptance as facts
from gpu_platform.facts import names
from gpu_platform.render import acceptance_reporter as r

OUT = Path(__file__).parent / "acceptance_outputs"


def text(name: str) -> str:
    return (OUT / name).read_text()


def test_constants_are_the_platforms():
    assert (r.CONDITION, r.LABEL, r.CHECK_LABEL) == (
        names.ACCEPTANCE_CONDITION, names.ACCEPTANCE_LABEL, names.ACCEPTANCE_CHECK_LABEL)
    assert r.FULL_LEVEL == facts.FULL_LEVEL
    assert r.POOL_LABEL == names.POOL_LABEL
    assert r.HEALTH_CONDITION == names.HEALTH_CONDITION


def test_dcgm_pass():
    v = r.judge_dcgm(text("dcgm_pass.json"))
    assert v.passed and v.summary == "DCGM passed 3 tests" and not v.warnings


def test_dcgm_fail_names_the_test_gpu_and_message():
    v = r.judge_dcgm(text("dcgm_fail.json"))
    assert not v.passed
    assert "memory GPU 1: A memory mismatch was detected on GPU 1" in v.summary


def test_dcgm_warning_passes_and_is_reported():
    v = r.judge_dcgm(text("dcgm_warn.json"))
    assert v.passed and len(v.warnings) == 1 and "Persistence mode" in v.warnings[0]


@pytest.mark.parametrize("garbage", ["", "Error: unable to connect to host engine", "{}", '{"DCGM Diagnostic": {}}'])
def test_dcgm_without_a_report_fails(garbage):
    assert not r.judge_dcgm(garbage).passed


def test_nccl_above_the_floor_passes_on_the_largest_size():
    v = r.judge_nccl(text("nccl_h100_pass.txt"), 270)
    assert v.passed and "391.22 GB/s at 8589934592 bytes" in v.summary


def test_nccl_below_the_floor_fails():
    v = r.judge_nccl(text("nccl_h100_slow.txt"), 270)
    assert not v.passed and "142.06 GB/s" in v.summary and "floor of 270 GB/s" in v.summary


def test_nccl_wrong_results_fail_even_when_fast():
    assert not r.judge_nccl(text("nccl_h100_wrong.txt"), 270).passed


def test_nccl_without_results_fails():
    assert not r.judge_nccl("# nThread 1 nGpus 8\nNCCL failure common.cu:1005 'unhandled cuda error'\n", 1).passed


def test_efa_all_interfaces_and_transfer_above_the_floor_pass():
    v = r.judge_efa(text("efa_4_pass.txt"), 4, facts.EFA_FLOOR_MBPS)
    assert v.passed and "transfer 2486.71 MB/s at 1048576 bytes" in v.summary


def test_efa_missing_interface_fails():
    v = r.judge_efa(text("efa_4_missing_one.txt"), 4, facts.EFA_FLOOR_MBPS)
    assert not v.passed and "3 RDM domains" in v.summary


def test_efa_transfer_below_the_floor_fails():
    v = r.judge_efa(text("efa_4_slow.txt"), 4, facts.EFA_FLOOR_MBPS)
    assert not v.passed and "512.38 MB/s" in v.summary and f"floor of {facts.EFA_FLOOR_MBPS:g}" in v.summary
    assert r.judge_efa(text("efa_4_slow.txt"), 4, 500).passed


def test_efa_without_a_transfer_fails():
    v = r.judge_efa(text("efa_4_no_transfer.txt"), 4, facts.EFA_FLOOR_MBPS)
    assert not v.passed and "printed no results" in v.summary


def test_efa_transfer_with_lost_messages_fails():
    lost = text("efa_4_pass.txt").replace("=100     200m", "=97      194m")
    v = r.judge_efa(lost, 4, facts.EFA_FLOOR_MBPS)
    assert not v.passed and "acknowledged 97 of 100" in v.summary


@pytest.mark.parametrize(("size", "expected"), [("64", 64), ("4k", 4096), ("1m", 1 << 20), ("2g", 2 << 30)])
def test_pingpong_sizes(size, expected):
    assert r._size(size) == expected


def test_efa_floor_is_a_share_of_the_documented_sample():
    assert facts.EFA_FLOOR_MBPS == round(facts.EFA_PINGPONG_SAMPLE_MBPS * facts.EFA_FLOOR_SHARE)
    assert 0 < facts.EFA_FLOOR_MBPS < facts.EFA_PINGPONG_SAMPLE_MBPS


def test_imex_fabric_pass_and_in_progress():
    assert r.judge_imex(text("imex_gb200_pass.txt")).passed
    v = r.judge_imex(text("imex_gb200_in_progress.txt"))
    assert not v.passed and "GPU 3: In Progress/N/A" in v.summary
    assert not r.judge_imex("GPU 00000000:00:1E.0\n    Product Name : NVIDIA A10G\n").passed


def _verdicts(*passed: bool) -> dict[str, r.Verdict]:
    return {c: r.Verdict(p, f"{c} ok" if p else f"{c} bad") for c, p in zip(("dcgm", "nccl"), passed, strict=False)}


def test_decide_pass_labels_and_clears_the_failed_check():
    o = r.decide(_verdicts(True, True), 2, None)
    assert (o.status, o.reason) == ("True", "Passed")
    assert o.labels == {names.ACCEPTANCE_LABEL: "passed", names.ACCEPTANCE_CHECK_LABEL: None}


def test_decide_first_failure_names_the_check():
    o = r.decide(_verdicts(True, False), 2, None)
    assert (o.status, o.reason, o.message) == ("False", "NcclFailed", "nccl bad")
    assert o.labels == {names.ACCEPTANCE_LABEL: "failed", names.ACCEPTANCE_CHECK_LABEL: "nccl"}


@pytest.mark.parametrize("level", [1, 2])
def test_a_failed_node_needs_a_full_level_run(level):
    o = r.decide(_verdicts(True, True), level, "False")
    assert (o.status, o.reason) == ("False", "FullCheckRequired")


def test_a_failed_node_passes_a_clean_full_run():
    assert r.decide(_verdicts(True, True), facts.FULL_LEVEL, "False").status == "True"


def test_message_is_bounded():
    o = r.decide({"dcgm": r.Verdict(False, "x" * 5000)}, 1, None)
    assert len(o.message) == r.MESSAGE_LIMIT


def _record(tmp_path: Path, check: str, source: str, rc: str) -> None:
    (tmp_path / f"{check}.out").write_text(text(source) if source else "")
    (tmp_path / f"{check}.rc").write_text(rc + "\n")


def test_judge_reads_recorded_outputs_and_exit_codes(tmp_path):
    _record(tmp_path, "dcgm", "dcgm_pass.json", "0")
    _record(tmp_path, "nccl", "nccl_h100_pass.txt", "0")
    _record(tmp_path, "efa", "efa_4_pass.txt", "2")
    v = r.judge(tmp_path, ["dcgm", "nccl", "efa"], 270, 4, facts.EFA_FLOOR_MBPS)
    assert v["dcgm"].passed and v["nccl"].passed and not v["efa"].passed and "exited 2" in v["efa"].summary


def test_judge_timeout_and_missing_output(tmp_path):
    _record(tmp_path, "dcgm", "", "124")
    v = r.judge(tmp_path, ["dcgm", "imex"], 0, 0)
    assert v["dcgm"].summary == "dcgm timed out" and not v["imex"].passed


def test_condition_patch_touches_only_its_condition():
    patch = r.condition_patch(r.Outcome("True", "Passed", "ok"), "2026-11-27T09:00:00Z")
    assert [c["type"] for c in patch["status"]["conditions"]] == [names.ACCEPTANCE_CONDITION]


def test_a_node_without_the_startup_taint_is_left_alone():
    taint = {"key": names.ACCEPTANCE_TAINT_KEY, "value": "pending", "effect": "NoSchedule"}
    assert r.STARTUP_TAINT == names.ACCEPTANCE_TAINT_KEY
    assert r.unchecked({"spec": {"taints": [{"key": names.GPU_TAINT_KEY}]}})
    assert r.unchecked({"spec": {}})
    assert not r.unchecked({"spec": {"taints": [taint]}})


def _pod(name, kind=None, phase="Running"):
    meta = {"name": name, "namespace": "ns", **({"ownerReferences": [{"kind": kind}]} if kind else {})}
    return {"metadata": meta, "status": {"phase": phase}}


def test_work_on_the_node_is_what_is_not_an_agent():
    pods = [_pod("dcgm-exporter", "DaemonSet"), _pod("kube-proxy-mirror", "Node"), _pod("done", "Job", "Succeeded"),
            _pod("trainer", "Job"), _pod("bare")]
    assert r.workloads(pods) == ["ns/trainer", "ns/bare"]
    assert r.workloads(pods[:3]) == []


def test_a_node_gated_while_in_use_keeps_serving_unchecked():
    o = r.skipped(True, "running work: ns/trainer")
    assert (o.status, o.reason, o.labels) == ("True", "NotCheckedInUse", {names.ACCEPTANCE_LABEL: "unchecked"})
    assert r.skipped(False, "no startup taint").status == ""


# --- replacing a failed node within the pool's limit ---

def pool_node(name: str, verdict: str = "passed", claim: str = "") -> dict:
    meta: dict = {"name": name, "labels": {names.POOL_LABEL: "l4-inference", names.ACCEPTANCE_LABEL: verdict}}
    if claim:  # as Karpenter v1 owns the nodes it launches
        meta["ownerReferences"] = [{"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "name": claim,
                                    "uid": "6f1c2a34-0d55-4d8e-9a51-1b7c2e0f9a10", "blockOwnerDeletion": True}]
    return {"metadata": meta}


def test_a_lone_failed_node_is_replaced():
    nodes = [pool_node("a", "failed"), *(pool_node(str(i)) for i in range(9))]
    assert r.replacement(nodes, None, 20) == ""


def test_failures_past_the_pools_limit_hold_the_nodes():
    nodes = [pool_node(f"f{i}", "failed") for i in range(3)] + [pool_node(str(i)) for i in range(7)]
    held = r.replacement(nodes, None, 20)
    assert held.startswith("not replaced: 3 of the pool's 10 nodes failed, more than the 2")
    assert r.replacement(nodes, 3, None) == ""  # a count wins over the share


def test_a_small_pool_still_replaces_one_node():
    assert r.replace_limit(2, None, 20) == 1 and r.replace_limit(0, None, None) == 1
    assert r.replacement([pool_node("a", "failed"), pool_node("b", "failed")], None, 20).startswith("not replaced")


def test_the_nodeclaim_is_the_nodes_owner():
    assert r.node_claim(pool_node("a", claim="l4-inference-x7k2p")) == "l4-inference-x7k2p"
    assert r.node_claim(pool_node("a")) == ""


# --- managed node groups: the instance, terminated in its Auto Scaling group ---

CREDS = {"AccessKeyId": "ASIAEXAMPLEKEYID0001", "SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
         "Token": "IQoJb3JpZ2luX2VjEXAMPLETOKEN//////////wEaCXVzLWVhc3QtMSJHMEUCIQ"}


def test_the_instance_comes_from_the_provider_id():
    assert r.instance_id({"spec": {"providerID": "aws:///us-east-1a/i-0a1b2c3d4e5f60718"}}) == "i-0a1b2c3d4e5f60718"
    assert r.instance_id({"spec": {}}) == ""
    assert r.instance_id({"spec": {"providerID": "kind://docker/kind/kind-worker"}}) == ""


def test_the_termination_keeps_the_groups_size_and_is_a_valid_autoscaling_call():
    from tests.support.aws_api import api_problems, service_model

    params = r.terminate_params("i-0a1b2c3d4e5f60718")
    assert params["ShouldDecrementDesiredCapacity"] == "false"
    operation = service_model("autoscaling").operation_model(params["Action"])
    assert params["Version"] == service_model("autoscaling").api_version
    call = {"InstanceId": params["InstanceId"], "ShouldDecrementDesiredCapacity": False}
    assert api_problems(call, operation.input_shape) == []


def test_the_request_is_signed_as_botocore_signs_it():
    import urllib.parse

    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    body = urllib.parse.urlencode(r.terminate_params("i-0a1b2c3d4e5f60718"))
    request = AWSRequest(method="POST", url="https://autoscaling.us-east-1.amazonaws.com/", data=body,
                         headers={"Content-Type": r.FORM})
    SigV4Auth(Credentials(CREDS["AccessKeyId"], CREDS["SecretAccessKey"], CREDS["Token"]), "autoscaling",
              "us-east-1").add_auth(request)
    ours = r.signed_headers("us-east-1", body, CREDS, request.headers["X-Amz-Date"])
    assert ours["authorization"] == request.headers["Authorization"]
    assert ours["x-amz-security-token"] == request.headers["X-Amz-Security-Token"]


# --- the passive health re-check: `dcgmi health -c` reports in the DCGM user guide's layout ---

def test_health_healthy_sets_the_condition_true():
    o = r.judge_health(text("health_healthy.txt"))
    assert (o.status, o.reason) == ("True", "Healthy")


def test_health_warning_stays_true_and_says_why():
    o = r.judge_health(text("health_warning.txt"))
    assert (o.status, o.reason) == ("True", "Warning") and "PCIe replays" in o.message


def test_health_failure_sets_the_condition_false():
    o = r.judge_health(text("health_failure.txt"))
    assert (o.status, o.reason) == ("False", "Failure") and "uncorrectable memory errors" in o.message


def test_health_without_a_report_is_false():
    o = r.judge_health("Error: unable to establish a connection to the specified host: localhost\n")
    assert (o.status, o.reason) == ("False", "NoReport") and "unable to establish" in o.message


def test_health_condition_patch_names_its_own_condition():
    patch = r.condition_patch(r.judge_health(text("health_failure.txt")), "2026-01-01T00:00:00Z", r.HEALTH_CONDITION)
    assert patch["status"]["conditions"][0]["type"] == names.HEALTH_CONDITION == "GpuHealthPassive"


def test_health_report_asks_the_dcgm_container_and_judges_its_answer(tmp_path):
    import threading

    def dcgm_container() -> None:  # answers the request file as render/acceptance.py health_script does
        while not (tmp_path / r.RUN).exists():
            time.sleep(0.05)
        (tmp_path / "health.out").write_text(text("health_failure.txt"))
        (tmp_path / r.RUN).unlink()

    (tmp_path / "health.out").write_text(text("health_healthy.txt"))  # last run's report is not reused
    threading.Thread(target=dcgm_container, daemon=True).start()
    assert r._health_report(tmp_path, 10).status == "False"


def test_health_report_times_out_false(tmp_path, monkeypatch):
    monkeypatch.setattr(r.time, "sleep", lambda _s: None)
    o = r._health_report(tmp_path, 3)
    assert (o.status, o.reason) == ("False", "TimedOut") and not (tmp_path / r.RUN).exists()
