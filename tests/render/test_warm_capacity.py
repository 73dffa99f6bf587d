"""Warm capacity's objects: valid Kubernetes objects (kubernetes-validate, strict), one placeholder per node that
any preempting tier takes, below every team tier and not below the Cluster Autoscaler's expendable cutoff."""
from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from gpu_platform.decisions.warm import warm_pools
from gpu_platform.facts import catalog, names
from gpu_platform.render.team_objects import PRIORITY_TIERS
from gpu_platform.render.warm_capacity import deployment, priority_class, warm_objects
from tests.support.stacks import spec_of

CA_EXPENDABLE_CUTOFF = -10  # cluster-autoscaler FAQ: pods below it "don't trigger scale-ups"


def warm(stack: str, pool: int, nodes: int = 1, **changes):
    def edit(p):
        p["nodePools"][pool].update(warm={"nodes": nodes}, **changes)
    return spec_of(stack, edit)


@pytest.mark.parametrize("version", ["1.33", "1.35"])
def test_every_object_validates_strictly(version):
    for obj in warm_objects(warm_pools(warm("prod", 1, taints=[{"key": "workload", "value": "training",
                                                                 "effect": "NoSchedule"}]))):
        kubernetes_validate.validate(obj, version, strict=True)


def test_a_misspelt_field_fails_validation():
    (pool,) = warm_pools(spec_of("prod"))
    bad = copy.deepcopy(deployment(pool))
    bad["spec"]["template"]["spec"]["priorityClass"] = names.WARM_PRIORITY_CLASS
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, "1.35", strict=True)


def test_no_warm_pool_no_objects():
    assert warm_objects(warm_pools(spec_of("dev"))) == []


def test_each_placeholder_takes_all_of_a_node_s_gpus():
    (pool,) = warm_pools(spec_of("prod"))  # l4-inference: g6.2xlarge, one L4
    d = deployment(pool)
    pod = d["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    assert d["spec"]["replicas"] == 1 and pod["nodeSelector"] == {names.POOL_LABEL: "l4-inference"}
    assert c["resources"]["requests"][names.GPU_RESOURCE] == c["resources"]["limits"][names.GPU_RESOURCE] == "1"
    assert c["image"] == catalog.PAUSE_IMAGE and "@sha256:" in c["image"]


def test_a_mig_pool_s_placeholder_takes_every_slice():
    (pool,) = warm_pools(warm("mig-slices", 0))  # p5: 8 GPUs, each 3g.40gb + 2g.20gb + 2 x 1g.10gb
    requests = deployment(pool)["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"]
    assert {k: v for k, v in requests.items() if k.startswith(names.MIG_RESOURCE_PREFIX)} == {
        "nvidia.com/mig-1g.10gb": "16", "nvidia.com/mig-2g.20gb": "8", "nvidia.com/mig-3g.40gb": "8"}


def test_the_placeholder_tolerates_the_gpu_taint_and_the_pool_s_own():
    pool = {w.pool: w for w in warm_pools(warm("prod", 1))}["a100-train"]  # workload=training:NoSchedule
    tolerations = deployment(pool)["spec"]["template"]["spec"]["tolerations"]
    assert {"key": "workload", "operator": "Equal", "value": "training", "effect": "NoSchedule"} in tolerations
    assert {"key": names.GPU_TAINT_KEY, "operator": "Equal", "value": names.GPU_TAINT_VALUE,
            "effect": "NoSchedule"} in tolerations


def test_the_priority_is_below_every_tier_and_still_scales_the_cluster():
    pc = priority_class()
    assert pc["value"] < min(t.value for t in PRIORITY_TIERS.values())
    assert pc["value"] >= CA_EXPENDABLE_CUTOFF
    assert pc["preemptionPolicy"] == "Never" and pc["globalDefault"] is False


def test_the_pods_run_restricted():
    (pool,) = warm_pools(spec_of("prod"))
    ns, _, d = warm_objects([pool])
    assert ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    sc = d["spec"]["template"]["spec"]["containers"][0]["securityContext"]
    assert sc["runAsNonRoot"] and sc["capabilities"] == {"drop": ["ALL"]} and not sc["allowPrivilegeEscalation"]
