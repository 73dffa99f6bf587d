"""GPU sharing, decided per pool: which entry of the device-plugin and MIG manager files each pool's
nodes select (by label), the MIG layout each pool's GPUs are split into, and the operands an image
brings itself. The files themselves are rendered in render/sharing.py.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Union
from collections.abc import Sequence

from gpu_platform.facts import catalog, names

if TYPE_CHECKING:
    from gpu_platform.spec.models import GpuPool, NodePoolSpec, OperatorPoolSpec

    # A pool whose image is known: the stack file's, or the GPU Operator's view of one. Kueue's view
    # (QueuePoolSpec) has no image, so what the image decides cannot be asked of it.
    ImagePool = Union[NodePoolSpec, OperatorPoolSpec]


def operator_mig(pool: "ImagePool") -> bool:
    """The GPU Operator's MIG manager configures this pool's GPUs (MIG-capable GPU, image allows it)."""
    return pool.gpu.mig_capable and pool.ami.image.operator_mig


def pool_mig_layout(pool: "GpuPool") -> dict[str, int] | None:
    """The layout every GPU of the pool is split into (None: MIG disabled)."""
    s = pool.sharing
    return _largest_first(pool.gpu, s.layout) if s.mode == "mig" and s.layout else None


def sharing_labels(pool: "ImagePool") -> dict[str, str]:
    """Node labels that pick the pool's entry in the device-plugin and MIG ConfigMaps.

    Managed node group labels are applied at registration, so nodes select their config from birth.
    Every pool the MIG manager serves selects its own config (`pool-<name>`, MIG disabled when the
    pool has no layout), so enabling MIG or changing a layout never relabels a running node.
    """
    sharing = pool.sharing
    labels: dict[str, str] = {}
    if sharing.mode == "time-slicing":
        labels[names.DEVICE_PLUGIN_CONFIG_LABEL] = names.device_plugin_config_key(
            sharing.replicas or 1, sharing.fail_requests_greater_than_one)
    if operator_mig(pool):
        labels[names.MIG_CONFIG_LABEL] = names.mig_config_name(pool.name)
    return labels


def mig_layout_tag(pool: "ImagePool") -> dict[str, str]:
    """The launch template's instance tag naming the pool's layout: a new layout is a new template
    version, so EKS replaces the pool's nodes maxUnavailable at a time and each new node partitions its
    GPUs at boot (the MIG manager does not re-apply a changed config to running nodes)."""
    if not operator_mig(pool):
        return {}
    return {names.MIG_LAYOUT_TAG: names.mig_layout_id(pool.gpu.key, pool_mig_layout(pool))}


def operand_labels(pool: "ImagePool") -> dict[str, str]:
    """Turn off GPU Operator operands an image provides itself (Bottlerocket ships its own)."""
    image: catalog.NodeImage = pool.ami.image
    if image.operator_device_plugin:
        return {}
    return {names.gpu_deploy_label(op): "false" for op in ("driver", "container-toolkit", "device-plugin", "mig-manager")}


def mig_configs(pools: Sequence["ImagePool"]) -> dict[str, dict[str, int] | None]:
    """The MIG config of every pool the MIG manager serves, by name: its layout, None when disabled.

    Profiles are listed largest first whatever order the stack file used, so the file is stable.
    """
    return {names.mig_config_name(p.name): pool_mig_layout(p) for p in sorted(pools, key=lambda p: p.name)
            if operator_mig(p)}


def _largest_first(gpu: catalog.GpuModel, layout: dict[str, int]) -> dict[str, int]:
    def size(profile: str) -> tuple[int, int, str]:
        cls = catalog.mig_class(gpu, profile)
        return -cls.compute, -cls.memory, profile

    return {p: layout[p] for p in sorted(layout, key=size) if layout[p]}
