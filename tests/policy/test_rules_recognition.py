"""Rules on resources any Pulumi program registers (issue 21): what they guard is recognised by what it is,
the environment can come from policy config, and messages say what to change on the resource."""
from __future__ import annotations

import pytest

from gpu_platform.facts import names
from gpu_platform.policy.common import is_gpu_node_group
from tests.policy.harness import (
    HELM_RELEASE, NODE_GROUP, gpu_node_group, operator_release, options, run_resource, run_stack, stack_resource,
    with_provider,
)


def plain_gpu_group(**extra) -> dict:
    """A GPU node group as a plain pulumi_aws program writes it: no gpu-platform labels, no taint."""
    props = {"amiType": "AL2023_x86_64_NVIDIA", "capacityType": "ON_DEMAND", "clusterName": "c",
             "instanceTypes": ["g4dn.xlarge"], "nodeGroupName": "gpu", "releaseVersion": "1.33.5-20251120",
             "scalingConfig": {"desiredSize": 0, "maxSize": 2, "minSize": 0}}
    props.update(extra)
    return props


@pytest.mark.parametrize("props", [
    {"amiType": "BOTTLEROCKET_x86_64_NVIDIA", "instanceTypes": ["m6i.large"]},
    {"amiType": "AL2023_x86_64_STANDARD", "instanceTypes": ["p3.8xlarge"]},
    {"instanceTypes": ["m6i.large"], "taints": [{"key": names.GPU_TAINT_KEY, "effect": "NO_SCHEDULE"}]},
    {"labels": {names.POOL_LABEL: "a", names.GPU_PRODUCT_LABEL: "NVIDIA-A10G"}},
], ids=["gpu-ami-type", "gpu-instance-family", "gpu-taint", "platform-labels"])
def test_gpu_node_groups_are_recognised_by_what_they_are(props):
    assert is_gpu_node_group(props)


def test_a_cpu_node_group_is_not_a_gpu_node_group():
    assert not is_gpu_node_group({"amiType": "AL2023_x86_64_STANDARD", "instanceTypes": ["m6i.large"]})


def test_a_plain_gpu_node_group_without_the_taint_is_refused():
    (message,) = run_resource("gpu-pool-tainted", NODE_GROUP, plain_gpu_group(), name="gpu")
    assert "node group 'gpu' has no nvidia.com/gpu NoSchedule taint" in message and "to this node group" in message


@pytest.mark.parametrize("chart", ["nvidia/gpu-operator", "oci://nvcr.io/nvidia/gpu-operator",
                                   "https://helm.ngc.nvidia.com/nvidia/charts/gpu-operator-v25.10.1.tgz"])
def test_the_operator_release_is_recognised_with_a_repository_prefix(chart):
    release = {**operator_release(version="v23.9.0"), "chart": chart}
    (message,) = run_resource("gpu-operator-chart-pinned", HELM_RELEASE, release, name="nvidia")
    assert "GPU Operator release 'nvidia'" in message and "pin the chart version" in message
    assert message.endswith("(stack file: gpuOperator.chartVersion)")


def test_a_prefixed_operator_release_is_read_by_the_stack_rules():
    release = {**operator_release(driver={"enabled": True, "version": "580.173.02"}), "chart": "nvidia/gpu-operator"}
    res = [stack_resource(HELM_RELEASE, release, "gpu-operator"), stack_resource(NODE_GROUP, plain_gpu_group(), "gpu")]
    ((message, urn),) = run_stack("driver-ami-consistency", res)
    assert "runs AL2023_x86_64_NVIDIA" in message and "set driver.enabled false" in message and urn.endswith("::gpu")


# --- the environment ---

def test_unknown_environment_is_held_to_prod_and_says_how_to_name_it():
    (message,) = run_resource("node-group-protected", NODE_GROUP, plain_gpu_group(), name="gpu", provider=None)
    assert "environment is unknown" in message and "set `environment` in this policy's config" in message


def test_policy_config_names_the_environment_of_a_program_without_the_tag():
    assert run_resource("node-group-protected", NODE_GROUP, plain_gpu_group(), name="gpu", provider=None,
                        config={"environment": "dev"}) == []


def test_an_untagged_stack_time_slicing_is_held_to_prod_unless_config_says_otherwise():
    release = operator_release(time_slicing={"ts-4": 4})
    group = gpu_node_group(labels={names.DEVICE_PLUGIN_CONFIG_LABEL: "ts-4"})
    res = [stack_resource(HELM_RELEASE, release, "gpu-operator"), stack_resource(NODE_GROUP, group, "a10g")]
    ((message, _),) = run_stack("time-slicing-forbidden", res)
    assert "environment unknown (held to prod)" in message and names.DEVICE_PLUGIN_CONFIG_LABEL in message
    assert run_stack("time-slicing-forbidden", res, config={"environment": "dev"}) == []
    assert run_stack("time-slicing-forbidden", with_provider(res, "dev")) == []


# --- messages: what to change on the resource, the stack-file field in parentheses ---

def test_protect_message_says_what_to_set_on_the_resource():
    (message,) = run_resource("node-group-protected", NODE_GROUP, gpu_node_group(), name="a10g", opts=options())
    assert "set protect=True on this node group (stack file: remove `protect: false`" in message


def test_ami_release_message_names_the_node_group_input():
    (message,) = run_resource("ami-release-pinned", NODE_GROUP, plain_gpu_group(releaseVersion=None), name="gpu")
    assert "set releaseVersion on this node group" in message and "(stack file: ami.releaseVersion)" in message


def test_the_taint_to_add_is_written_as_yaml_would_read_it():
    (message,) = run_resource("gpu-pool-tainted", NODE_GROUP, plain_gpu_group(), name="gpu")
    assert "add the taint {key: nvidia.com/gpu, value: present, effect: NO_SCHEDULE} to this node group" in message


def test_an_unpinned_driver_on_an_unknown_chart_says_what_to_set():
    release = {**operator_release(driver={"enabled": True}, version="v24.9.0"), "chart": "nvidia/gpu-operator"}
    (message,) = run_resource("gpu-driver-pinned", HELM_RELEASE, release, name="nvidia")
    assert "set the release's values driver.version to an exact driver the pinned chart supports" in message
