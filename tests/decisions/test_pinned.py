"""Reading what a stack pins from the resources its program registers (the plan's resources)."""
import pytest

from gpu_platform.decisions.pinned import CLUSTER, HELM_RELEASE, NODE_GROUP, Pinned, from_plan, from_resources
from tests.support.plans import existing_cluster_platform
from tests.support.stacks import stack_platform


def test_the_dev_plan_pins(plan_of):
    pins = from_plan(plan_of(stack_platform("dev"), "dev"))
    assert (pins.kubernetes, pins.cluster_created, pins.operator_chart, pins.operator_driver) == (
        "1.35", True, "v26.7.0", None)
    assert [(p.name, p.ami_type, p.release_version, p.families) for p in pins.pools] == [
        ("a10g-spot", "AL2023_x86_64_NVIDIA", "1.35.7-20260911", ("g5",))]
    assert pins.addons == {"aws-efs-csi-driver": "v2.1.13-eksbuild.1", "aws-ebs-csi-driver": "v1.66.0-eksbuild.1",
                           "coredns": "v1.13.2-eksbuild.31",
                           "eks-pod-identity-agent": "v1.3.10-eksbuild.3", "kube-proxy": "v1.35.3-eksbuild.29",
                           "vpc-cni": "v1.22.4-eksbuild.3", "eks-node-monitoring-agent": "v1.6.6-eksbuild.1"}
    assert pins.autoscaler_tag == "v1.35.2"


def test_the_prod_plan_pins_the_operator_driver_and_custom_images(plan_of):
    pins = from_plan(plan_of(stack_platform("prod"), "prod"))
    assert pins.operator_driver == "580.173.02"
    assert [p.name for p in pins.pools] == ["a100-train", "h100-mig", "l4-inference"]  # not the system nodes
    assert all(p.custom_image for p in pins.pools)


def test_an_adopted_cluster_takes_its_version_from_the_node_groups(plan_of):
    pins = from_plan(plan_of(existing_cluster_platform(), "dev"))
    assert (pins.kubernetes, pins.cluster_created) == ("1.35", False)


@pytest.mark.parametrize("enabled", [False, "false"])
def test_a_disabled_operator_driver_is_not_a_pinned_driver(enabled):
    release = {"chart": "gpu-operator", "version": "v26.7.0", "values": {"driver": {"enabled": enabled,
                                                                                   "version": "580.173.02"}}}
    assert from_resources([(HELM_RELEASE, release)]).operator_driver is None


def test_the_operator_driver_is_on_by_default():
    release = {"chart": "gpu-operator", "version": "v26.7.0", "values": {"driver": {"version": "580.173.02"}}}
    assert from_resources([(HELM_RELEASE, release)]).operator_driver == "580.173.02"


def test_the_cluster_version_wins_over_node_groups():
    pins = from_resources([(NODE_GROUP, {"version": "1.34", "instanceTypes": ["m6i.large"]}),
                           (CLUSTER, {"version": "1.35"})])
    assert pins.kubernetes == "1.35" and pins.pools == ()


def test_nothing_registered_pins_nothing():
    assert from_resources([]) == Pinned()


def test_karpenter_pools_pin_their_image_by_the_node_class_alias(plan_of):
    pins = from_plan(plan_of(stack_platform("karpenter"), "karpenter"))
    by_name = {p.name: p for p in pins.pools}
    assert (by_name["h100-mig"].ami_type, by_name["h100-mig"].release_version, by_name["h100-mig"].families) == (
        "AL2023_x86_64_NVIDIA", "al2023@v20260911", ("p5",))
    assert by_name["a100-train"].release_version == "1.35.7-20260911"  # the managed node group beside them


def test_an_alias_dates_its_ami_like_a_release_version():
    from gpu_platform.facts.lifecycle_calendar import release_date

    assert release_date("al2023@v20260911") == release_date("1.35.7-20260911")
    assert release_date("bottlerocket@v1.50.0") is None
