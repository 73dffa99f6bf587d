"""Recognising the GPU Operator's chart, GPU AMI types and GPU instance types by what they are."""
from __future__ import annotations

import pytest

from gpu_platform.facts import catalog
from gpu_platform.facts.recognise import GPU_AMI_TYPES, is_gpu_instance_type, is_gpu_operator_chart


@pytest.mark.parametrize("chart", [
    "gpu-operator", "nvidia/gpu-operator", "oci://nvcr.io/nvidia/gpu-operator", "https://helm.ngc.nvidia.com/nvidia/gpu-operator",
    "https://helm.ngc.nvidia.com/nvidia/charts/gpu-operator-v25.10.1.tgz", "https://example.com/charts/gpu-operator/",
])
def test_the_operator_chart_by_any_reference(chart):
    assert is_gpu_operator_chart(chart)


@pytest.mark.parametrize("chart", ["karpenter", "my-gpu-operator", "gpu-operator-crds", "nvidia/network-operator", "", None])
def test_other_charts_are_not_the_operator(chart):
    assert not is_gpu_operator_chart(chart)


def test_every_catalog_gpu_image_is_a_gpu_ami_type():
    images = {i.eks_ami_type for i in catalog.NODE_IMAGES.values() if i.eks_ami_type != "CUSTOM"}
    assert images <= GPU_AMI_TYPES and "AL2023_x86_64_STANDARD" not in GPU_AMI_TYPES


def test_gpu_instance_types_beyond_the_catalog():
    assert all(is_gpu_instance_type(t) for t in catalog.INSTANCE_TYPES)
    assert is_gpu_instance_type("g4dn.xlarge") and is_gpu_instance_type("p3.2xlarge")
    assert not is_gpu_instance_type("m6i.large") and not is_gpu_instance_type(None)
