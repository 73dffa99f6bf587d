"""The helper's multi-node Jobs on pools Kueue places by network topology: the pod-set annotation asking for
the pool's level on the Job's pod template (render/workloads.py gpu_job; docs/topology.md)."""
import pytest

from gpu_platform.facts import names
from gpu_platform.render.workloads import gpu_job
from tests.support.stacks import spec_of

IMAGE = "registry.example.com/trainer:2.3"


def template_annotations(job) -> dict:
    return job["spec"]["template"]["metadata"]["annotations"]


def test_a_multi_node_job_on_a_topology_pool_prefers_the_pool_s_level():
    job = gpu_job(spec_of("prod"), "research", "pretrain", IMAGE, pool="a100-train", gpus=8, nodes=4)
    assert template_annotations(job)[names.KUEUE_PREFERRED_TOPOLOGY_ANNOTATION] == "topology.k8s.aws/network-node-layer-3"
    assert names.KUEUE_REQUIRED_TOPOLOGY_ANNOTATION not in template_annotations(job)
    assert job["spec"]["parallelism"] == 4  # one pod set of 4 pods: the annotation is on its template


def test_a_required_level_is_asked_for_as_required():
    def required(platform):
        pool = next(p for p in platform["nodePools"] if p["name"] == "a100-train")
        pool["topology"] = {"placement": "required", "level": "network-node-layer-2"}
    job = gpu_job(spec_of("prod", required), "research", "pretrain", IMAGE, pool="a100-train", gpus=8, nodes=2)
    annotations = template_annotations(job)
    assert annotations[names.KUEUE_REQUIRED_TOPOLOGY_ANNOTATION] == "topology.k8s.aws/network-node-layer-2"
    assert names.KUEUE_PREFERRED_TOPOLOGY_ANNOTATION not in annotations


@pytest.mark.parametrize("options", [dict(pool="a100-train", gpus=8),  # one node: nothing to keep together
                                     dict(pool="l4-inference", gpus=1, nodes=2)])  # a pool without topology
def test_other_jobs_ask_for_no_topology(options):
    annotations = template_annotations(gpu_job(spec_of("prod"), "research", "j", IMAGE, **options))
    assert not {names.KUEUE_PREFERRED_TOPOLOGY_ANNOTATION, names.KUEUE_REQUIRED_TOPOLOGY_ANNOTATION} & set(annotations)


def test_without_queueing_a_multi_node_job_asks_kueue_for_nothing():
    def no_queue(platform):
        platform["queueing"] = {"mode": "none"}
        for team in platform["teams"]:
            team.pop("queue", None)
    job = gpu_job(spec_of("prod", no_queue), "research", "pretrain", IMAGE, pool="a100-train", gpus=8, nodes=2)
    assert not any(k.startswith("kueue.x-k8s.io/") for k in template_annotations(job))


def test_gpu_job_still_refuses_an_unknown_option():
    with pytest.raises(TypeError, match="gpu_count"):
        gpu_job(spec_of("prod"), "research", "j", IMAGE, gpu_count=8)
