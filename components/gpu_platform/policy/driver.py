"""Who owns the NVIDIA driver, and that it is pinned (AWS EKS user guide, ml-eks-optimized-ami; NVIDIA
cloud-native-docs gpu-operator/platform-support.rst and life-cycle-policy.rst; docs/gpu-operator.md).

- The GPU Operator chart is pinned to an exact version the platform knows.
- An operator-owned driver (`driver.enabled`, the chart's default) is an exact version on that chart's
  supported list.
- AMI-owned pools pin their AMI release: "latest" silently replaces GPU nodes whenever AWS publishes one.
- Driver and image agree: no operator driver on an NVIDIA AMI (there is no driver container for Amazon
  Linux), and no Ubuntu (custom image) GPU pool without the operator's driver.
"""
from __future__ import annotations

import re
from typing import Any, Optional
from collections.abc import Iterator, Mapping

from pulumi_policy import ResourceValidationArgs, Severity, StackValidationArgs

from gpu_platform.facts import catalog, names
from gpu_platform.policy.common import (
    HELM_RELEASE, NODE_GROUP, get, gpu_operator_release, has, is_gpu_node_group, is_operator_release, node_group_label,
    of_type, release_values, resource_policy, stack_policy, truthy,
)

AMI_RELEASE = re.compile(r"^\d+\.\d+\.\d+-\d{8}$")  # e.g. 1.33.5-20251120
CUSTOM_AMI = "CUSTOM"
# EKS AMI types that bring their own NVIDIA driver (catalog: every non-custom GPU image is AMI-owned).
AMI_OWNED_TYPES = frozenset(i.eks_ami_type for i in catalog.NODE_IMAGES.values() if i.driver_owner == "ami")


def operator_driver_enabled(values: Mapping[str, Any]) -> bool:
    """The chart installs a driver unless `driver.enabled` is false (its values.yaml default is true)."""
    return truthy((values.get("driver") or {}).get("enabled", True))


def custom_image(props: Any) -> bool:
    """The image is pinned in the launch template (amiType CUSTOM, or none with a launch template)."""
    ami_type = get(props, "amiType")
    return ami_type == CUSTOM_AMI or (ami_type is None and has(props, "launchTemplate"))


def chart_pinned(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    if not is_operator_release(args.props):
        return
    version = get(args.props, "version")
    if version not in catalog.GPU_OPERATOR_CHARTS:
        yield (f"GPU Operator release {args.name!r}: chart version {version!r} is not one the platform has checked "
               f"(exact version, values keys, supported drivers): pin the chart version to one of "
               f"{', '.join(catalog.GPU_OPERATOR_CHARTS)} (stack file: gpuOperator.chartVersion)")


def driver_pinned(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    if not is_operator_release(args.props):
        return
    values = release_values(args.props, ("driver",))
    if not operator_driver_enabled(values):
        return
    chart = catalog.GPU_OPERATOR_CHARTS.get(get(args.props, "version", ""))
    version = str((values.get("driver") or {}).get("version") or "")
    supported = chart.supported_drivers if chart else ()
    if not version:
        choice = f"one of {', '.join(supported)}" if supported else "an exact driver the pinned chart supports"
        yield (f"GPU Operator release {args.name!r} installs the driver (values driver.enabled) but sets no "
               "driver.version, so the chart's default follows every chart upgrade: set the release's values "
               f"driver.version to {choice} (stack file: gpuOperator.driver.version)")
    elif chart is not None and version not in supported:
        yield (f"GPU Operator release {args.name!r}: driver {version} is not supported by gpu-operator {chart.version}: "
               f"set the release's values driver.version to one of {', '.join(supported)} "
               "(stack file: gpuOperator.driver.version)")


def ami_release_pinned(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    props, who = args.props, node_group_label(args.name, args.props)
    if custom_image(props):
        return  # the image is pinned in the launch template (Ubuntu pools pin ami.imageId)
    release = get(props, "releaseVersion")
    if not release:
        yield (f"{who} does not pin its AMI release, so EKS uses the latest AMI and replaces nodes when AWS publishes "
               "one: set releaseVersion on this node group, e.g. 1.33.5-20251120 (stack file: ami.releaseVersion)")
    elif str(get(props, "amiType", "")).startswith("BOTTLEROCKET"):
        if catalog.bottlerocket_version(str(release)) is None:  # EKS names Bottlerocket's own release and build
            yield (f"{who} releaseVersion {release!r} is not an exact Bottlerocket release: set releaseVersion to "
                   "<bottlerocket>-<build>, e.g. 1.63.0-18d04e52 (stack file: ami.releaseVersion)")
    elif not AMI_RELEASE.match(str(release)):
        yield (f"{who} releaseVersion {release!r} is not an exact AMI release: set releaseVersion to "
               "<k8s>.<patch>-<yyyymmdd>, e.g. 1.33.5-20251120 (stack file: ami.releaseVersion)")


def driver_ami_consistent(args: StackValidationArgs, config: Mapping[str, Any]) -> Iterator[tuple[str, Optional[str]]]:
    release = gpu_operator_release(args)
    if release is None:
        return
    operator_driver = operator_driver_enabled(release_values(release.props, ("driver",)))
    for ng in of_type(args, NODE_GROUP):
        props = ng.props
        if not is_gpu_node_group(props):
            continue
        ami_type = get(props, "amiType")
        who = node_group_label(ng.name, props)
        driver_off = get(props, "labels", {}).get(names.gpu_deploy_label("driver")) == "false"
        if operator_driver and ami_type in AMI_OWNED_TYPES and not driver_off:
            yield (f"{who} runs {ami_type}, which ships its own NVIDIA driver, but the GPU Operator also installs one "
                   f"(values driver.enabled): set driver.enabled false in the values of operator release "
                   f"{release.name!r} (stack file: gpuOperator.driver.source ami), or run this node group on an image "
                   "without a driver (stack file: ami.type UBUNTU_22_04 or UBUNTU_24_04)", ng.urn)
        if not operator_driver and custom_image(props):
            yield (f"{who} runs a custom (Ubuntu) image, which has no NVIDIA driver, and the GPU Operator's driver is "
                   "disabled: enable the driver with a pinned driver.version in the values of operator release "
                   f"{release.name!r} (stack file: gpuOperator.driver.source operator), or use the "
                   "AL2023_x86_64_NVIDIA AMI type", ng.urn)


POLICIES = [
    resource_policy(
        "gpu-operator-chart-pinned",
        "The GPU Operator Helm chart is pinned to an exact version the platform has checked.",
        [HELM_RELEASE], chart_pinned, severity=Severity.HIGH,
        remediation="Pin the GPU Operator chart to a version in gpu_platform.facts.catalog (stack file: "
                    "gpuOperator.chartVersion)."),
    resource_policy(
        "gpu-driver-pinned",
        "An operator-owned NVIDIA driver is an exact version on the chart's supported list.",
        [HELM_RELEASE], driver_pinned, severity=Severity.HIGH,
        remediation="Set the release's values driver.version to a driver the pinned chart supports (stack file: "
                    "gpuOperator.driver.version)."),
    resource_policy(
        "ami-release-pinned",
        "Node groups on EKS-optimized AMIs pin their AMI release (no silent node replacement on new AMIs).",
        [NODE_GROUP], ami_release_pinned, severity=Severity.HIGH,
        remediation="Set releaseVersion on the node group (stack file: ami.releaseVersion, "
                    "systemNodes.releaseVersion)."),
    stack_policy(
        "driver-ami-consistency",
        "Exactly one owner per GPU driver: no operator driver on NVIDIA AMIs, no driverless custom images.",
        driver_ami_consistent, severity=Severity.CRITICAL,
        remediation="One driver owner: the operator's driver off on NVIDIA AMI types, on for custom images "
                    "(stack file: gpuOperator.driver.source to match the pools' ami.type)."),
]
