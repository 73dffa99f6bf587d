"""Refusals for driver ownership, images, sharing and MIG strategy: each with a failing and a passing case.

Every case goes through `parse_platform`, the same entry the program and the planner use, and checks the
field path a user must edit plus the gist of the message.
"""
from datetime import date

import pytest

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.spec.errors import SpecError
from tests.support.stacks import stack_platform

TODAY = date(2026, 11, 22)
BEFORE_R535_EOL = date(2026, 6, 1)
AL2023 = {"type": "AL2023_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"}
BOTTLEROCKET = {"type": "BOTTLEROCKET_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"}
AL2 = {"type": "AL2_x86_64_GPU", "releaseVersion": "1.35.7-20260911"}
UBUNTU = {"type": "UBUNTU_24_04", "imageId": "ami-0c3f9e8a1b2d4e567"}
CHART = "v26.7.0"
SUPPORTED = catalog.GPU_OPERATOR_CHARTS[CHART].supported_drivers


def pool(name, instance, ami, sharing=None):
    out = {"name": name, "instanceTypes": [instance], "capacityType": "on-demand", "minSize": 0, "maxSize": 2,
           "ami": dict(ami)}
    if sharing:
        out["sharing"] = sharing
    return out


def platform(*pools, driver=None, environment="dev"):
    p = stack_platform("dev")
    p["environment"] = environment
    if environment == "prod":  # prod lists who reaches the API endpoint
        p["cluster"]["create"]["publicAccessCidrs"] = ["203.0.113.0/24"]
    p["nodePools"] = list(pools)
    p["teams"] = []
    p["gpuOperator"]["driver"] = driver or {"source": "ami"}
    return p


def operator_driver(version="580.173.02"):
    return {"source": "operator", "version": version}


def problems(p, today=TODAY):
    try:
        parse_platform(p, today=today)
    except SpecError as err:
        return err.problems
    return []


def assert_refused(p, path, fragment, today=TODAY):
    found = problems(p, today)
    assert any(x.startswith(f"{path}: ") and fragment in x for x in found), found


def mig(layout, strategy=None):
    out = {"mode": "mig", "layout": layout}
    if strategy:
        out["strategy"] = strategy
    return out


# --- the shipped stacks plan clean ---

@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_shipped_stacks_are_accepted(stack):
    assert problems(stack_platform(stack)) == []


# --- who owns the driver, on which image ---

def test_operator_driver_on_an_nvidia_ami_is_refused():
    assert_refused(platform(pool("a", "g5.xlarge", AL2023), driver=operator_driver()),
                   "nodePools[0].ami.type", "ships its own NVIDIA driver")


def test_operator_driver_on_ubuntu_is_accepted():
    assert problems(platform(pool("a", "g5.xlarge", UBUNTU), driver=operator_driver())) == []


def test_operator_driver_on_bottlerocket_is_refused():
    assert_refused(platform(pool("a", "g5.xlarge", BOTTLEROCKET), driver=operator_driver()),
                   "nodePools[0].ami.type", "ships its own NVIDIA driver")


def test_ami_driver_on_ubuntu_is_refused():
    assert_refused(platform(pool("a", "g5.xlarge", UBUNTU)), "nodePools[0].ami.type", "has no NVIDIA driver")


@pytest.mark.parametrize("ami", [AL2023, BOTTLEROCKET])
def test_ami_driver_on_an_nvidia_ami_is_accepted(ami):
    assert problems(platform(pool("a", "g5.xlarge", ami))) == []


def test_amazon_linux_and_ubuntu_pools_with_an_operator_driver_are_refused_on_the_amazon_linux_pool():
    found = problems(platform(pool("u", "g5.xlarge", UBUNTU), pool("al", "g5.xlarge", AL2023), driver=operator_driver()))
    assert [x.split(":")[0] for x in found] == ["nodePools[1].ami.type"]


def test_amazon_linux_and_ubuntu_pools_with_an_ami_driver_are_refused_on_the_ubuntu_pool():
    found = problems(platform(pool("u", "g5.xlarge", UBUNTU), pool("al", "g5.xlarge", AL2023)))
    assert [x.split(":")[0] for x in found] == ["nodePools[0].ami.type"]


def test_al2_is_refused():
    assert_refused(platform(pool("a", "g5.xlarge", AL2)), "nodePools[0].ami.type", "AL2_x86_64_GPU is not supported")


def test_ubuntu_pool_must_pin_its_image_id():
    assert_refused(platform(pool("a", "g5.xlarge", {"type": "UBUNTU_24_04"}), driver=operator_driver()),
                   "nodePools[0].ami.imageId", "pin the UBUNTU_24_04 EKS image id")


def test_ubuntu_pool_takes_no_release_version():
    ami = {**UBUNTU, "releaseVersion": "1.35.7-20260911"}
    assert_refused(platform(pool("a", "g5.xlarge", ami), driver=operator_driver()),
                   "nodePools[0].ami.releaseVersion", "Ubuntu pools pin imageId")


def test_eks_ami_pool_takes_no_image_id():
    assert_refused(platform(pool("a", "g5.xlarge", {**AL2023, "imageId": "ami-0c3f9e8a1b2d4e567"})),
                   "nodePools[0].ami.imageId", "selected by releaseVersion")


def test_eks_ami_pool_must_pin_its_release():
    assert_refused(platform(pool("a", "g5.xlarge", {"type": "AL2023_x86_64_NVIDIA"})),
                   "nodePools[0].ami.releaseVersion", "pin the AMI release")


def test_eks_ami_release_must_match_the_cluster_version():
    assert_refused(platform(pool("a", "g5.xlarge", {**AL2023, "releaseVersion": "1.32.9-20251120"})),
                   "nodePools[0].ami.releaseVersion", "not a release for Kubernetes 1.35")



def test_a_bottlerocket_release_is_bottlerocket_s_own_with_its_build():
    """EKS names a Bottlerocket node group's release by Bottlerocket's version and build, not Kubernetes'."""
    valid = platform(pool("a", "g5.xlarge", {**BOTTLEROCKET, "releaseVersion": "1.63.0-18d04e52"}))
    assert [p for p in problems(valid) if "releaseVersion" in p] == []
    assert_refused(platform(pool("a", "g5.xlarge", {"type": "BOTTLEROCKET_x86_64_NVIDIA"})),
                   "nodePools[0].ami.releaseVersion", "e.g. 1.63.0-18d04e52")


def test_an_amazon_linux_release_carries_its_build_date():
    assert_refused(platform(pool("a", "g5.xlarge", {**AL2023, "releaseVersion": "1.35.7-18d04e52"})),
                   "nodePools[0].ami.releaseVersion", "<kubernetes>.<patch>-<YYYYMMDD>")


# --- the pinned driver ---

def test_unknown_chart_version_is_refused():
    p = platform(pool("a", "g5.xlarge", AL2023))
    p["gpuOperator"]["chartVersion"] = "v25.10.1"
    assert_refused(p, "gpuOperator.chartVersion", f"must be one of {CHART}")


def test_ami_driver_with_a_version_is_refused():
    assert_refused(platform(pool("a", "g5.xlarge", AL2023), driver={"source": "ami", "version": "580.173.02"}),
                   "gpuOperator.driver.version", "the AMI owns the driver")


def test_operator_driver_without_a_version_is_refused():
    assert_refused(platform(pool("a", "g5.xlarge", UBUNTU), driver={"source": "operator"}),
                   "gpuOperator.driver.version", "pin an exact driver")


def test_driver_off_the_supported_list_is_refused():
    assert_refused(platform(pool("a", "g5.xlarge", UBUNTU), driver=operator_driver("580.126.16")),
                   "gpuOperator.driver.version", f"not supported by gpu-operator {CHART}")


@pytest.mark.parametrize("version", SUPPORTED)
def test_every_supported_driver_is_accepted_outside_prod(version):
    assert problems(platform(pool("a", "g6.xlarge", UBUNTU), driver=operator_driver(version))) == []


def test_operator_driver_needs_a_kubernetes_version_nvidia_supports_on_eks():
    p = platform(pool("a", "g5.xlarge", UBUNTU), driver=operator_driver())
    p["cluster"]["kubernetesVersion"] = "1.32"
    p["cluster"]["create"]["systemNodes"]["releaseVersion"] = "1.32.9-20251120"
    assert_refused(p, "cluster.kubernetesVersion", "operator-owned drivers on EKS are supported on Kubernetes")


def test_driver_below_a_gpus_minimum_is_refused():
    h200 = catalog.GPU_MODELS["H200"]
    assert_refused(platform(pool("h", "p5e.48xlarge", UBUNTU), driver=operator_driver("535.309.01")),
                   "gpuOperator.driver.version", f"H200 (nodePools[0]) needs driver >= {h200.min_driver}")


def test_driver_at_or_above_a_gpus_minimum_is_accepted():
    assert problems(platform(pool("h", "p5e.48xlarge", UBUNTU), driver=operator_driver("580.173.02"))) == []


def test_driver_below_a_mig_profiles_minimum_is_refused():
    p = platform(pool("a", "p4d.24xlarge", UBUNTU, mig({"1g.10gb": 4})), driver=operator_driver("520.61.05"))
    assert_refused(p, "gpuOperator.driver.version", "MIG profile 1g.10gb on A100-SXM4-40GB (nodePools[0]) needs driver >=")


def test_driver_branch_past_end_of_life_is_refused_in_prod():
    p = platform(pool("a", "g6.xlarge", UBUNTU), driver=operator_driver("535.309.01"), environment="prod")
    assert_refused(p, "gpuOperator.driver.version", "branch R535 reached end of life")


def test_driver_branch_before_end_of_life_is_accepted_in_prod():
    p = platform(pool("a", "g6.xlarge", UBUNTU), driver=operator_driver("535.309.01"), environment="prod")
    assert problems(p, today=BEFORE_R535_EOL) == []


def test_kernel_module_type_must_be_a_known_kind():
    p = platform(pool("a", "g5.xlarge", UBUNTU), driver={**operator_driver(), "kernelModuleType": "closed"})
    assert_refused(p, "gpuOperator.driver.kernelModuleType", "")


# --- driver upgrade policy ---

def test_upgrade_policy_defaults_wait_for_labelled_jobs_and_never_force():
    policy = parse_platform(stack_platform("prod"), today=TODAY).gpu_operator.upgrade_policy
    assert policy.wait_for_completion.pod_selector == f"{names.DOMAIN}/wait-for-completion=true"
    assert policy.wait_for_completion.timeout_seconds == 0
    assert policy.gpu_pod_deletion.force is False and policy.drain.enable is False


def test_gpu_pods_with_scratch_volumes_can_be_deleted_for_a_driver_upgrade_by_default():
    """Every pod of the workload helper mounts /dev/shm as an emptyDir; refusing to delete it would fail
    the node's upgrade and leave the node cordoned."""
    assert parse_platform(stack_platform("prod"), today=TODAY).gpu_operator.upgrade_policy.gpu_pod_deletion.delete_empty_dir


@pytest.mark.parametrize("selector", ["app!=web", "app in (a,b)", "!legacy", "app", "a=b,=c"])
def test_a_wait_selector_the_workload_helper_cannot_set_is_refused(selector):
    p = stack_platform("prod")
    p["gpuOperator"]["upgradePolicy"] = {"waitForCompletion": {"podSelector": selector}}
    assert_refused(p, "gpuOperator.upgradePolicy.waitForCompletion.podSelector", "equality-based label selector")


def test_an_empty_wait_selector_waits_for_nothing():
    p = stack_platform("prod")
    p["gpuOperator"]["upgradePolicy"] = {"waitForCompletion": {"podSelector": ""}}
    assert problems(p) == []


def test_upgrade_policy_with_a_negative_timeout_is_refused():
    p = stack_platform("prod")
    p["gpuOperator"]["upgradePolicy"] = {"waitForCompletion": {"timeoutSeconds": -1}}
    assert_refused(p, "gpuOperator.upgradePolicy.waitForCompletion.timeoutSeconds", "greater than or equal to 0")


def test_upgrade_policy_with_an_unknown_field_is_refused():
    p = stack_platform("prod")
    p["gpuOperator"]["upgradePolicy"] = {"drain": {"enabled": True}}
    assert_refused(p, "gpuOperator.upgradePolicy.drain.enabled", "unknown field; allowed: enable")


def test_upgrade_policy_set_in_full_is_accepted():
    p = stack_platform("prod")
    p["gpuOperator"]["upgradePolicy"] = {
        "autoUpgrade": True, "maxParallelUpgrades": 2, "maxUnavailable": 1,
        "waitForCompletion": {"timeoutSeconds": 3600, "podSelector": "app=trainer"},
        "gpuPodDeletion": {"force": False, "timeoutSeconds": 600, "deleteEmptyDir": False},
        "drain": {"enable": True, "force": False, "podSelector": "", "timeoutSeconds": 900, "deleteEmptyDir": True},
    }
    assert problems(p) == []


# --- sharing ---

@pytest.mark.parametrize("sharing", [{"mode": "time-slicing", "replicas": 4}, mig({"1g.10gb": 7})])
def test_sharing_on_bottlerocket_is_refused(sharing):
    instance = "p5.48xlarge" if sharing["mode"] == "mig" else "g5.xlarge"
    assert_refused(platform(pool("b", instance, BOTTLEROCKET, sharing)), "nodePools[0].sharing.mode",
                   "runs its own device plugin")


def test_bottlerocket_mig_gpu_without_sharing_is_accepted():
    assert problems(platform(pool("b", "p5.48xlarge", BOTTLEROCKET))) == []


def test_time_slicing_without_replicas_is_refused():
    assert_refused(platform(pool("a", "g5.xlarge", AL2023, {"mode": "time-slicing"})),
                   "nodePools[0].sharing.replicas", "needs replicas")


@pytest.mark.parametrize("replicas", [1, 65])
def test_time_slicing_replicas_out_of_range_are_refused(replicas):
    assert_refused(platform(pool("a", "g5.xlarge", AL2023, {"mode": "time-slicing", "replicas": replicas})),
                   "nodePools[0].sharing.replicas", "")


def test_replicas_without_time_slicing_are_refused():
    assert_refused(platform(pool("a", "g5.xlarge", AL2023, {"mode": "none", "replicas": 4})),
                   "nodePools[0].sharing.replicas", "applies to mode time-slicing only")


def test_layout_without_mig_is_refused():
    p = platform(pool("a", "g5.xlarge", AL2023, {"mode": "time-slicing", "replicas": 2, "layout": {"1g.10gb": 1}}))
    assert_refused(p, "nodePools[0].sharing.layout", "apply to mode mig only")


def test_mig_on_a_gpu_without_mig_is_refused():
    assert_refused(platform(pool("a", "g6e.xlarge", AL2023, mig({"1g.10gb": 1}))), "nodePools[0].sharing.mode",
                   "L40S has no MIG")


def test_mig_without_a_layout_is_refused():
    assert_refused(platform(pool("h", "p5.48xlarge", AL2023, {"mode": "mig"})), "nodePools[0].sharing.layout",
                   "give the MIG layout of one GPU")


def test_mig_layout_that_cannot_be_placed_is_refused():
    assert_refused(platform(pool("h", "p5.48xlarge", AL2023, mig({"4g.40gb": 1, "3g.40gb": 1, "1g.10gb": 1}))),
                   "nodePools[0].sharing.layout", "does not fit one H100-80GB-HBM3")


@pytest.mark.parametrize("ami, driver", [(AL2023, None), (UBUNTU, operator_driver())])
def test_mig_layout_that_fits_is_accepted_with_either_driver_owner(ami, driver):
    p = platform(pool("h", "p5.48xlarge", ami, mig({"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2})), driver=driver)
    assert problems(p) == []


def test_mig_on_al2_is_refused():
    assert_refused(platform(pool("h", "p5.48xlarge", AL2, mig({"7g.80gb": 1}))), "nodePools[0].sharing.mode",
                   "MIG through the GPU Operator is not supported on AL2_x86_64_GPU")


# --- MIG strategy ---

def test_single_strategy_with_several_profiles_is_refused():
    p = platform(pool("h", "p5.48xlarge", AL2023, mig({"3g.40gb": 1, "1g.10gb": 4}, "single")))
    assert_refused(p, "nodePools[0].sharing.strategy", "needs one profile per GPU")


def test_single_strategy_with_one_profile_per_pool_is_accepted():
    p = platform(pool("h", "p5.48xlarge", AL2023, mig({"1g.10gb": 7}, "single")),
                 pool("a", "p4de.24xlarge", AL2023, mig({"3g.40gb": 2}, "single")))
    assert problems(p) == [] and parse_platform(p, today=TODAY).mig_strategy == "single"


def test_different_strategies_across_mig_pools_are_refused():
    p = platform(pool("h", "p5.48xlarge", AL2023, mig({"1g.10gb": 7}, "single")),
                 pool("a", "p4de.24xlarge", AL2023, mig({"3g.40gb": 1, "2g.20gb": 1}, "mixed")))
    assert_refused(p, "nodePools[1].sharing.strategy", "the MIG strategy is cluster-wide")


def test_an_unset_strategy_means_mixed_and_conflicts_with_single():
    p = platform(pool("h", "p5.48xlarge", AL2023, mig({"1g.10gb": 7}, "single")),
                 pool("a", "p4de.24xlarge", AL2023, mig({"7g.80gb": 1})))
    assert_refused(p, "nodePools[1].sharing.strategy", "the MIG strategy is cluster-wide")


def test_mixed_strategy_everywhere_is_accepted():
    p = platform(pool("h", "p5.48xlarge", AL2023, mig({"1g.10gb": 7})),
                 pool("a", "p4de.24xlarge", AL2023, mig({"3g.40gb": 1, "2g.20gb": 1}, "mixed")))
    assert problems(p) == [] and parse_platform(p, today=TODAY).mig_strategy == "mixed"


def test_no_mig_pool_means_strategy_none():
    assert parse_platform(stack_platform("dev"), today=TODAY).mig_strategy == "none"
