"""The helper's multi-node Jobs prefer nodes close in the AWS network to each other: pod affinity to the
Job's own pods per network layer, on pools whose nodes carry the layer labels (render/workloads.py gpu_job;
docs/topology.md)."""
import kubernetes_validate
import pytest

from gpu_platform.facts import names
from gpu_platform.render.workloads import gpu_job

IMAGE = "registry.example.com/trainer:2.3"


def terms(job) -> list[dict]:
    affinity = job["spec"]["template"]["spec"].get("affinity")
    return affinity["podAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"] if affinity else []


def test_a_multi_node_job_prefers_its_own_pods_network_layers_bottom_first(prod):
    job = gpu_job(prod, "research", "pretrain", IMAGE, pool="a100-train", gpus=8, nodes=4)
    found = terms(job)
    assert [(x["podAffinityTerm"]["topologyKey"], x["weight"]) for x in found] == [
        ("topology.k8s.aws/network-node-layer-3", 100), ("topology.k8s.aws/network-node-layer-2", 50),
        ("topology.k8s.aws/network-node-layer-1", 10)]
    # the Job controller labels each of the Job's pods with its name: the pods attract each other only
    assert all(x["podAffinityTerm"]["labelSelector"] == {"matchLabels": {names.JOB_NAME_LABEL: "pretrain"}}
               for x in found)
    assert "requiredDuringSchedulingIgnoredDuringExecution" not in job["spec"]["template"]["spec"]["affinity"]["podAffinity"]


def test_the_job_with_its_affinity_matches_the_kubernetes_schema(prod):
    job = gpu_job(prod, "research", "pretrain", IMAGE, pool="a100-train", gpus=8, nodes=2)
    kubernetes_validate.validate(job, prod.cluster.kubernetes_version, strict=True)


@pytest.mark.parametrize("options", [dict(pool="a100-train", gpus=8),  # one node: nothing to keep together
                                     dict(pool="l4-inference", gpus=1, nodes=2)])  # g6 nodes carry no layer labels
def test_other_jobs_have_no_affinity(options, prod):
    assert terms(gpu_job(prod, "research", "j", IMAGE, **options)) == []


def test_gpu_job_still_refuses_an_option_gpu_pod_spec_does_not_take(prod):
    with pytest.raises(TypeError, match="gpu_count"):
        gpu_job(prod, "research", "j", IMAGE, gpu_count=8)
