"""Driver ownership and pinning: gpu-operator-chart-pinned, gpu-driver-pinned, ami-release-pinned,
driver-ami-consistency."""
from __future__ import annotations

from gpu_platform.facts import catalog, names
from tests.policy.harness import (
    HELM_RELEASE,
    NODE_GROUP,
    gpu_node_group,
    operator_release,
    run_resource,
    run_stack,
    stack_resource,
    system_node_group,
)

CHART = next(iter(catalog.GPU_OPERATOR_CHARTS.values()))
UBUNTU = dict(ami_type=None, release=None)  # the image is pinned in the launch template


def operator_driver(version=None):
    return {"enabled": True, **({"version": version} if version else {})}


def test_known_operator_chart_passes():
    assert run_resource("gpu-operator-chart-pinned", HELM_RELEASE, operator_release()) == []


def test_operator_chart_range_is_refused():
    found = run_resource("gpu-operator-chart-pinned", HELM_RELEASE, operator_release(version="^26.7"))
    assert len(found) == 1 and CHART.version in found[0]


def test_operator_chart_unknown_to_the_catalog_is_refused():
    assert run_resource("gpu-operator-chart-pinned", HELM_RELEASE, operator_release(version="v99.1.0"))


def test_other_charts_are_not_the_operator_rule_s_business():
    other = {**operator_release(version="latest"), "chart": "cluster-autoscaler"}
    assert run_resource("gpu-operator-chart-pinned", HELM_RELEASE, other) == []


def test_supported_operator_driver_passes():
    release = operator_release(driver=operator_driver(CHART.supported_drivers[-1]))
    assert run_resource("gpu-driver-pinned", HELM_RELEASE, release) == []


def test_operator_driver_without_version_is_refused():
    found = run_resource("gpu-driver-pinned", HELM_RELEASE, operator_release(driver=operator_driver()))
    assert len(found) == 1 and "driver.version" in found[0] and CHART.default_driver in found[0]


def test_driver_enabled_by_chart_default_needs_a_version():
    release = operator_release()
    release["values"]["driver"] = {}
    assert run_resource("gpu-driver-pinned", HELM_RELEASE, release)


def test_unsupported_operator_driver_is_refused():
    found = run_resource("gpu-driver-pinned", HELM_RELEASE, operator_release(driver=operator_driver("550.54.14")))
    assert len(found) == 1 and "not supported" in found[0]


def test_ami_owned_driver_needs_no_version():
    assert run_resource("gpu-driver-pinned", HELM_RELEASE, operator_release(driver={"enabled": False})) == []


def test_pinned_ami_release_passes():
    assert run_resource("ami-release-pinned", NODE_GROUP, gpu_node_group()) == []


def test_missing_ami_release_is_refused():
    found = run_resource("ami-release-pinned", NODE_GROUP, gpu_node_group(release=None), name="a10g")
    assert len(found) == 1 and "releaseVersion" in found[0] and "a10g" in found[0]


def test_inexact_ami_release_is_refused():
    assert run_resource("ami-release-pinned", NODE_GROUP, gpu_node_group(release="latest"))


def test_a_bottlerocket_release_is_bottlerocket_s_own():
    """EKS names a Bottlerocket node group's release by Bottlerocket's version and build (1.63.0-18d04e52)."""
    bottlerocket = {"ami_type": "BOTTLEROCKET_x86_64_NVIDIA"}
    assert run_resource("ami-release-pinned", NODE_GROUP, gpu_node_group(release="1.63.0-18d04e52", **bottlerocket)) == []
    found = run_resource("ami-release-pinned", NODE_GROUP, gpu_node_group(release="latest", **bottlerocket))
    assert len(found) == 1 and "1.63.0-18d04e52" in found[0], found


def test_system_node_group_release_is_pinned_too():
    props = system_node_group()
    del props["releaseVersion"]
    assert run_resource("ami-release-pinned", NODE_GROUP, props)


def test_custom_image_pools_pin_in_the_launch_template():
    assert run_resource("ami-release-pinned", NODE_GROUP, gpu_node_group(**UBUNTU)) == []


def _stack(release, group):
    return [stack_resource(HELM_RELEASE, release, "gpu-operator"), stack_resource(NODE_GROUP, group, "pool")]


def test_ami_driver_on_nvidia_ami_is_consistent():
    assert run_stack("driver-ami-consistency", _stack(operator_release(), gpu_node_group())) == []


def test_operator_driver_on_ubuntu_is_consistent():
    release = operator_release(driver=operator_driver(CHART.default_driver))
    assert run_stack("driver-ami-consistency", _stack(release, gpu_node_group(**UBUNTU))) == []


def test_operator_driver_on_nvidia_ami_is_refused():
    release = operator_release(driver=operator_driver(CHART.default_driver))
    found = run_stack("driver-ami-consistency", _stack(release, gpu_node_group()))
    assert len(found) == 1 and "AL2023_x86_64_NVIDIA" in found[0][0] and found[0][1].endswith("::pool")


def test_operator_driver_beside_bottlerocket_with_driver_operand_off_is_consistent():
    release = operator_release(driver=operator_driver(CHART.default_driver))
    group = gpu_node_group(ami_type="BOTTLEROCKET_x86_64_NVIDIA", labels={names.gpu_deploy_label("driver"): "false"})
    assert run_stack("driver-ami-consistency", _stack(release, group)) == []


def test_ubuntu_pool_without_operator_driver_is_refused():
    found = run_stack("driver-ami-consistency", _stack(operator_release(), gpu_node_group(**UBUNTU)))
    assert len(found) == 1 and "no NVIDIA driver" in found[0][0]


def test_launch_template_version_unknown_in_preview_does_not_stop_the_rule():
    from tests.policy.harness import UNKNOWN

    props = gpu_node_group(**UBUNTU)
    props["launchTemplate"]["version"] = UNKNOWN  # the template is being updated in this preview
    assert run_resource("ami-release-pinned", NODE_GROUP, props) == []


def test_unknown_values_elsewhere_in_the_release_do_not_stop_the_driver_rules():
    from tests.policy.harness import UNKNOWN

    release = operator_release(driver=operator_driver())
    release["values"]["operator"] = {"nodeSelector": UNKNOWN}
    assert len(run_resource("gpu-driver-pinned", HELM_RELEASE, release)) == 1
    assert run_stack("driver-ami-consistency", _stack(release, gpu_node_group(**UBUNTU))) == []
