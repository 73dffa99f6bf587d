"""Runtime ceilings per priority tier on the jobs the workload helper writes: Kueue's maximum execution time
with queueing on, the Job's activeDeadlineSeconds without; refused for a name that is no tier."""
from __future__ import annotations

import kubernetes_validate
import pytest

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import names
from gpu_platform.render.workloads import gpu_job
from gpu_platform.spec.errors import SpecError
from tests.support.stacks import stack_platform

IMAGE = "nvcr.io/nvidia/pytorch:25.01-py3"


def test_prod_caps_each_tiers_jobs_through_kueue():
    spec = parse_platform(stack_platform("prod"))
    batch = gpu_job(spec, "batch", "sweep", IMAGE)  # preemptible-batch: 24 hours
    research = gpu_job(spec, "research", "train", IMAGE)  # standard: 168 hours
    inference = gpu_job(spec, "inference", "eval", IMAGE)  # critical-inference: no ceiling
    assert batch["metadata"]["labels"][names.KUEUE_MAX_EXEC_TIME_LABEL] == str(24 * 3600)
    assert research["metadata"]["labels"][names.KUEUE_MAX_EXEC_TIME_LABEL] == str(168 * 3600)
    assert names.KUEUE_MAX_EXEC_TIME_LABEL not in inference["metadata"]["labels"]
    assert all("activeDeadlineSeconds" not in j["spec"] for j in (batch, research, inference))
    kubernetes_validate.validate(batch, "1.35.0", strict=True)


def test_without_kueue_the_job_carries_its_own_deadline():
    platform = stack_platform("dev")
    platform["queueing"] = {"mode": "none", "runtimeCeilingHours": {"preemptible-batch": 6}}
    spec = parse_platform(platform)
    tier_team = next(t.name for t in spec.teams if t.priority_tier == "preemptible-batch")
    job = gpu_job(spec, tier_team, "sweep", IMAGE)
    assert job["spec"]["activeDeadlineSeconds"] == 6 * 3600
    assert names.KUEUE_MAX_EXEC_TIME_LABEL not in job["metadata"]["labels"]
    kubernetes_validate.validate(job, "1.35.0", strict=True)


def test_without_ceilings_jobs_run_unbounded():
    spec = parse_platform(stack_platform("dev"))
    job = gpu_job(spec, spec.teams[0].name, "train", IMAGE)
    assert "activeDeadlineSeconds" not in job["spec"]
    assert names.KUEUE_MAX_EXEC_TIME_LABEL not in job["metadata"]["labels"]


@pytest.mark.parametrize("ceilings, message", [({"batch": 24}, "is no priority tier"),
                                               ({"standard": 0}, "1 to 8760 hours")])
def test_a_ceiling_for_no_tier_or_out_of_range_is_refused(ceilings, message):
    platform = stack_platform("prod")
    platform["queueing"]["runtimeCeilingHours"] = ceilings
    with pytest.raises(SpecError) as err:
        parse_platform(platform)
    assert any(p.startswith("queueing.runtimeCeilingHours") and message in p for p in err.value.problems), \
        err.value.problems
