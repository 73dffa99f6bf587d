"""The Job's podFailurePolicy under the Job API's own rules: disruptions are not failures, named exit codes
fail the Job at once, anything else counts against backoffLimit."""
import re

import kubernetes_validate
import pytest

from gpu_platform.render.workloads import gpu_job
from tests.support.stacks import spec_of, without_services

IMAGE = "registry.example.com/trainer:2.3"


def action(policy: dict, pod_status: dict) -> str:
    """The action the Job controller takes for a failed pod, as documented at
    https://kubernetes.io/docs/concepts/workloads/controllers/job/#pod-failure-policy: rules are checked in
    order and the first that matches decides; `onExitCodes` matches a terminated container (only the one
    named by `containerName`, when set) whose exit code is In (or NotIn) `values`; `onPodConditions` matches
    a pod condition of that type and status. No match: the failure counts against backoffLimit."""
    for rule in policy["rules"]:
        if "onExitCodes" in rule:
            req = rule["onExitCodes"]
            for c in pod_status.get("containerStatuses", []):
                if req.get("containerName") not in (None, c["name"]):
                    continue
                code = c["state"].get("terminated", {}).get("exitCode")
                if code is not None and (code in req["values"]) == (req["operator"] == "In"):
                    return rule["action"]
        for cond in rule.get("onPodConditions", []):
            if any(pc["type"] == cond["type"] and pc["status"] == cond.get("status", "True")
                   for pc in pod_status.get("conditions", [])):
                return rule["action"]
    return "Count"


def job_outcome(job: dict, failed_pods: list[dict]) -> str:
    """Whether the Job fails after these pod failures: a FailJob match fails it, counted failures fail it once
    they exceed backoffLimit (default 6), Ignore leaves it running (the pod is replaced)."""
    counted = 0
    for status in failed_pods:
        taken = action(job["spec"]["podFailurePolicy"], status)
        if taken == "FailJob":
            return "Failed"
        counted += taken == "Count"
    return "Failed" if counted > job["spec"].get("backoffLimit", 6) else "Running"


def terminated(code: int, container: str = "main", conditions: tuple[dict, ...] = ()) -> dict:
    return {"phase": "Failed", "conditions": list(conditions),
            "containerStatuses": [{"name": container, "state": {"terminated": {"exitCode": code}}}]}


# Node repair, a spot reclaim, a drain or a preemption: the pod gets DisruptionTarget, then SIGTERM/SIGKILL.
EVICTED = terminated(137, conditions=({"type": "DisruptionTarget", "status": "True", "reason": "EvictionByEvictionAPI"},))


@pytest.fixture(scope="module")
def prod():
    return spec_of("prod")


def job(spec, **kwargs):
    return gpu_job(spec, "research", "finetune", IMAGE, pool="a100-train", gpus=8, **kwargs)


def test_an_evicted_pod_is_not_counted_as_a_failure(prod):
    j = job(prod, backoff_limit=0)
    assert action(j["spec"]["podFailurePolicy"], EVICTED) == "Ignore"
    assert job_outcome(j, [EVICTED, EVICTED, EVICTED]) == "Running"
    assert job_outcome(j, [terminated(1)]) == "Failed"  # a crash still counts: the evaluator is not a yes-man


def test_a_named_exit_code_fails_the_job_at_once(prod):
    j = job(prod, backoff_limit=5, fail_on_exit_codes=[42, 3])
    assert action(j["spec"]["podFailurePolicy"], terminated(42)) == "FailJob"
    assert job_outcome(j, [terminated(42)]) == "Failed"
    assert job_outcome(j, [terminated(1), EVICTED, terminated(1)]) == "Running"  # 2 counted <= 5
    assert action(j["spec"]["podFailurePolicy"], terminated(42, container="sidecar")) == "Count"


def test_the_policy_validates_strictly(prod):
    j = job(prod, backoff_limit=2, fail_on_exit_codes=list(range(1, 256)), nodes=1)
    kubernetes_validate.validate(j, prod.cluster.kubernetes_version, strict=True)
    assert j["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    assert j["spec"]["podFailurePolicy"]["rules"][1]["onExitCodes"]["values"] == list(range(1, 256))


def test_exit_codes_are_sorted_and_unique_as_the_api_requires(prod):
    rule = job(prod, fail_on_exit_codes=[7, 3, 7])["spec"]["podFailurePolicy"]["rules"][1]
    assert rule["onExitCodes"] == {"containerName": "main", "operator": "In", "values": [3, 7]}


@pytest.mark.parametrize("codes, message", [
    ([0], "[0] are not exit codes a container can fail with; give integers 1-255"),
    ([256, 1], "[256] are not exit codes"),
    ([True], "are not exit codes"),
])
def test_refuses_what_is_not_an_exit_code(prod, codes, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        job(prod, fail_on_exit_codes=codes)


# --- checkpoints ---

def env(j: dict) -> dict:
    return {e["name"]: e.get("value") for e in j["spec"]["template"]["spec"]["containers"][0].get("env", [])}


def test_checkpoints_go_to_the_jobs_directory_on_the_datasets_volume(prod):
    assert env(job(prod))["CHECKPOINT_DIR"] == "/datasets/checkpoints/finetune"


def test_without_datasets_checkpoints_go_to_the_model_cache():
    spec = spec_of("prod", lambda p: p.pop("datasets"))
    assert env(job(spec))["CHECKPOINT_DIR"] == "/models/checkpoints/finetune"


def test_without_a_shared_volume_no_checkpoint_dir_is_promised():
    spec = spec_of("prod", lambda p: (p.pop("datasets"), without_services(p).update(modelCache={"enabled": False})))
    assert "CHECKPOINT_DIR" not in env(job(spec))
