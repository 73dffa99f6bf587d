"""The closed sets a component argument takes, as enums: a type checker refuses a misspelt value
(`capacity_type="ondemand"`), an IDE completes the valid ones, and other Pulumi languages get them as enums.

Each argument accepts the enum's member or its value as plain text: a type checker reads the `...Input`
alias (the enum or the literal values), the component package's schema sees the enum. The values are the
stack file's own (tests/resources/test_arg_enums.py holds them to the models and the catalog).
"""
from enum import Enum
from typing import TYPE_CHECKING, Any, Literal, Union


class CapacityType(str, Enum):
    """How a pool's instances are bought."""

    SPOT = "spot"
    """Spot instances: cheapest, reclaimed by EC2 at two minutes' notice."""
    ON_DEMAND = "on-demand"
    """On-Demand instances (or an On-Demand Capacity Reservation, with `reservation`)."""
    CAPACITY_BLOCK = "capacity-block"
    """An EC2 Capacity Block for ML, with `reservation` naming it."""


class AmiType(str, Enum):
    """The image family a pool's nodes boot (EKS AMI types; Ubuntu pools pin an image id)."""

    AL2023_X86_64_NVIDIA = "AL2023_x86_64_NVIDIA"
    """Amazon Linux 2023 with the NVIDIA driver (x86_64)."""
    AL2023_ARM_64_NVIDIA = "AL2023_ARM_64_NVIDIA"
    """Amazon Linux 2023 with the NVIDIA driver (Graviton GPU instances)."""
    BOTTLEROCKET_X86_64_NVIDIA = "BOTTLEROCKET_x86_64_NVIDIA"
    """Bottlerocket with the NVIDIA driver (x86_64)."""
    AL2_X86_64_GPU = "AL2_x86_64_GPU"
    """Amazon Linux 2 GPU image (end of life: refused for new Kubernetes versions)."""
    UBUNTU_22_04 = "UBUNTU_22_04"
    """Canonical's Ubuntu 22.04 EKS image, by `image_id`; the GPU Operator installs the driver."""
    UBUNTU_24_04 = "UBUNTU_24_04"
    """Canonical's Ubuntu 24.04 EKS image, by `image_id`; the GPU Operator installs the driver."""


class SharingMode(str, Enum):
    """How pods share a pool's GPUs."""

    NONE = "none"
    """Whole GPUs only."""
    TIME_SLICING = "time-slicing"
    """Several pods take turns on one GPU (`replicas` per GPU), without memory isolation."""
    MIG = "mig"
    """Multi-Instance GPU slices, isolated in hardware (`layout`, `strategy`)."""


if TYPE_CHECKING:  # what a type checker holds a program to: the member, or its value as text
    CapacityTypeInput = Union[CapacityType, Literal["spot", "on-demand", "capacity-block"]]
    AmiTypeInput = Union[AmiType, Literal["AL2023_x86_64_NVIDIA", "AL2023_ARM_64_NVIDIA", "BOTTLEROCKET_x86_64_NVIDIA",
                                          "AL2_x86_64_GPU", "UBUNTU_22_04", "UBUNTU_24_04"]]
    SharingModeInput = Union[SharingMode, Literal["none", "time-slicing", "mig"]]
else:  # what the component package's schema is inferred from at run time: the enum
    CapacityTypeInput = CapacityType
    AmiTypeInput = AmiType
    SharingModeInput = SharingMode

ENUMS = (CapacityType, AmiType, SharingMode)


def plain(value: Any) -> Any:
    """`value` with every enum member replaced by its value, at any depth of mappings and lists: the models
    and the rules read text."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(plain(v) for v in value)
    return value
