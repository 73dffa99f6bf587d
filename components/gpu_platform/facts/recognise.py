"""Recognising GPU things by what they are, not by how this platform names them.

The pack's rules and the disruption model read resources any program registers: a GPU Operator release
may name its chart `gpu-operator`, `nvidia/gpu-operator` or a URL; a GPU node group may carry none of
this platform's labels. These look-ups say what a chart, an AMI type or an instance type is.
"""
from __future__ import annotations

import re
from typing import Any, Optional
from collections.abc import Mapping

from gpu_platform.facts import catalog

# The chart reference's last path segment: `gpu-operator`, or a packaged chart `gpu-operator-v25.10.1.tgz`.
_OPERATOR_CHART = re.compile(rf"{re.escape(catalog.GPU_OPERATOR_CHART)}(-v?\d[\w.+-]*?)?(\.tgz|\.tar\.gz)?")

# EKS managed node group AMI types that carry the NVIDIA driver: the catalog's images, plus the Arm
# variants EKS publishes (not built by this platform, still GPU node groups when a program uses them).
GPU_AMI_TYPES = frozenset(
    {i.eks_ami_type for i in catalog.NODE_IMAGES.values() if i.eks_ami_type != "CUSTOM"}
    | {"AL2023_ARM_64_NVIDIA", "BOTTLEROCKET_ARM_64_NVIDIA"})

# EC2 families with NVIDIA GPUs beyond the catalog's priced types (AWS "Accelerated computing" instances).
NVIDIA_GPU_FAMILIES = frozenset({
    "g4dn", "g5", "g5g", "g6", "g6e", "g6f", "gr6", "g7", "g7e", "p3", "p3dn", "p4d", "p4de", "p5", "p5e", "p5en",
    "p6-b200", "p6-b300",
})


def is_gpu_operator_chart(chart: object) -> bool:
    """`gpu-operator`, `nvidia/gpu-operator`, `oci://nvcr.io/nvidia/gpu-operator`, or an https URL of the
    chart (`.../gpu-operator` or `.../gpu-operator-v25.10.1.tgz`)."""
    if not isinstance(chart, str) or not chart:
        return False
    last = chart.rstrip("/").rsplit("/", 1)[-1].split("?", 1)[0]
    return _OPERATOR_CHART.fullmatch(last) is not None


def is_gpu_instance_type(instance_type: object) -> bool:
    """A catalog GPU type, or any size of an NVIDIA GPU family (`g4dn.xlarge`, `p5.48xlarge`)."""
    if not isinstance(instance_type, str):
        return False
    return instance_type in catalog.INSTANCE_TYPES or instance_type.split(".", 1)[0] in NVIDIA_GPU_FAMILIES


def node_group_instance_types(inputs: Mapping[str, Any], template: Optional[Mapping[str, Any]]) -> list[str]:
    """A managed node group's instance types: its own `instanceTypes`, else the `instanceType` of the launch
    template it names (a Capacity Block group names its type there only: EKS fails one naming it twice)."""
    types = inputs.get("instanceTypes")
    if isinstance(types, list) and types:
        return list(types)
    instance_type = template.get("instanceType") if isinstance(template, Mapping) else None
    return [instance_type] if isinstance(instance_type, str) and instance_type else []
