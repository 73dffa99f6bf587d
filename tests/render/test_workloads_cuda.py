"""The workload helper's `cuda` keyword: pods land only on pools whose driver runs the image's CUDA version."""
import copy

import kubernetes_validate
import pytest

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import names
from gpu_platform.render.workloads import gpu_job, gpu_pod_spec
from tests.support.stacks import on_kubernetes, spec_of

IMAGE = "registry.example.com/trainer:1.0"


@pytest.fixture(scope="module")
def two_branches():
    """dev on Kubernetes 1.33 with a second pool on an AMI release of the R570 era."""
    platform = on_kubernetes("dev", "1.33", "20251120")  # R580
    old = copy.deepcopy(platform["nodePools"][0])
    old.update(name="a10g-r570", ami={**old["ami"], "releaseVersion": "1.33.5-20250901"})
    platform["nodePools"].append(old)
    return parse_platform(platform)


def pools_of(pod: dict) -> list[str]:
    (term,) = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    (expr,) = term["matchExpressions"]
    assert (expr["key"], expr["operator"]) == (names.POOL_LABEL, "In")
    return expr["values"]


def test_a_cuda_version_selects_the_pools_whose_driver_runs_it(two_branches):
    assert pools_of(gpu_pod_spec(two_branches, "research", IMAGE, cuda="13.0")) == ["a10g-spot"]
    assert pools_of(gpu_pod_spec(two_branches, "research", IMAGE, cuda="12.8")) == ["a10g-spot", "a10g-r570"]
    assert pools_of(gpu_pod_spec(two_branches, "research", IMAGE, cuda="12.9")) == ["a10g-spot", "a10g-r570"]


def test_without_cuda_the_pod_has_no_affinity(two_branches):
    assert "affinity" not in gpu_pod_spec(two_branches, "research", IMAGE)


def test_a_version_no_pool_runs_is_refused_naming_the_keyword(two_branches):
    platform = on_kubernetes("dev", "1.33", "20250901")
    with pytest.raises(ValueError, match=r"cuda='13.0': no pool this pod may land on runs CUDA 13.0 "
                                         r"\(a10g-spot: 12.8 \(12.x with minor-version compatibility\)\)"):
        gpu_pod_spec(parse_platform(platform), "research", IMAGE, cuda="13.0")


def test_a_chosen_pool_that_cannot_run_it_is_refused(two_branches):
    with pytest.raises(ValueError, match="cuda='13.1'"):
        gpu_pod_spec(two_branches, "research", IMAGE, pool="a10g-r570", cuda="13.1")
    pod = gpu_pod_spec(two_branches, "research", IMAGE, pool="a10g-spot", cuda="13.1")
    assert pod["nodeSelector"] == {names.POOL_LABEL: "a10g-spot"} and "affinity" not in pod


@pytest.mark.parametrize("value, words", [("13", "cuda: '13' is not a CUDA version"), ("14.0", "cuda: CUDA 14.x")])
def test_a_malformed_version_is_refused_naming_the_keyword(two_branches, value, words):
    with pytest.raises(ValueError, match=words):
        gpu_pod_spec(two_branches, "research", IMAGE, cuda=value)


def test_a_job_with_a_cuda_version_matches_the_kubernetes_schema(two_branches):
    job = gpu_job(two_branches, "research", "train", IMAGE, cuda="13.0")
    assert pools_of(job["spec"]["template"]["spec"]) == ["a10g-spot"]
    kubernetes_validate.validate(job, two_branches.cluster.kubernetes_version, strict=True)


def test_the_operators_driver_decides_on_ubuntu_pools():
    prod = spec_of("prod")  # 580.173.02 on every pool
    pod = gpu_pod_spec(prod, "inference", IMAGE, cuda="13.1")  # 13.x by minor-version compatibility
    assert set(pools_of(pod)) <= {p.name for p in prod.node_pools}
    assert all(p.name in pools_of(gpu_pod_spec(prod, "inference", IMAGE, cuda="12.9")) for p in prod.node_pools
               if p.name in pools_of(pod))
