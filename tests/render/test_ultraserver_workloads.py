"""Jobs on the UltraServer example: the same gpu_job call as anywhere, its pods claiming GPUs by DRA and, for a
multi-node job, the IMEX channel of the team's ComputeDomain of that many nodes."""
import kubernetes_validate
import pytest

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import names
from gpu_platform.render import queueing_objects as o
from gpu_platform.render.workloads import gpu_job
from tests.support.kueue_crds import cel_true
from tests.support.ultraserver import POOL, ultraserver

IMAGE = "registry.example.com/trainer:2.3"


@pytest.fixture(scope="module")
def spec():
    return parse_platform(ultraserver())


def test_a_multi_node_job_claims_gpus_and_its_domain_s_channel(spec):
    job = gpu_job(spec, "research", "pretrain", IMAGE, pool=POOL, gpus=4, nodes=8)
    assert (job["spec"]["parallelism"], job["spec"]["completions"], job["spec"]["completionMode"]) == (8, 8, "Indexed")
    pod = job["spec"]["template"]["spec"]
    assert pod["resourceClaims"] == [{"name": "gpus", "resourceClaimTemplateName": "gb200-x4"},
                                     {"name": "imex", "resourceClaimTemplateName": names.compute_domain_claim_template(8)}]
    (container,) = pod["containers"]
    assert container["resources"]["claims"] == [{"name": "gpus"}, {"name": "imex"}]
    assert names.GPU_RESOURCE not in container["resources"]["requests"]
    assert container["resources"]["requests"][names.EFA_RESOURCE] == "16"
    kubernetes_validate.validate(job, spec.cluster.kubernetes_version, strict=True)
    job_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": job["spec"]["template"]["metadata"], "spec": pod}
    assert cel_true(o.ASKS_FOR_GPUS, object=job_pod) and cel_true(o.IS_QUEUED, object=job_pod)


def test_a_single_node_job_claims_no_channel(spec):
    pod = gpu_job(spec, "research", "eval", IMAGE, pool=POOL, gpus=2)["spec"]["template"]["spec"]
    assert [c["name"] for c in pod["resourceClaims"]] == ["gpus"]


def test_a_node_count_without_a_domain_is_refused(spec):
    with pytest.raises(ValueError, match="ComputeDomains for jobs of 2, 4, 8, 16, 18 nodes; asked for 3"):
        gpu_job(spec, "research", "odd", IMAGE, pool=POOL, gpus=4, nodes=3)
