"""GPU sharing: which device-plugin and MIG config each pool's nodes select, by node label."""
from __future__ import annotations

from typing import TYPE_CHECKING

from . import catalog, names

if TYPE_CHECKING:
    from .spec import NodePoolSpec


def sharing_labels(pool: "NodePoolSpec") -> dict[str, str]:
    """Node labels that pick the pool's entry in the device-plugin and MIG ConfigMaps.

    Managed node group labels are applied at registration, so nodes select their config from birth.
    A MIG-capable GPU without a layout is pinned to `all-disabled` so a stale layout never survives.
    """
    sharing, gpu = pool.sharing, pool.gpu
    labels: dict[str, str] = {}
    if sharing.mode == "time-slicing":
        labels[names.DEVICE_PLUGIN_CONFIG_LABEL] = names.device_plugin_config_key(sharing.replicas or 1)
    if gpu.mig_capable and pool.ami.image.operator_mig:
        layout = sharing.layout if sharing.mode == "mig" else None
        labels[names.MIG_CONFIG_LABEL] = names.mig_config_name(gpu.key, layout) if layout else names.MIG_ALL_DISABLED
    return labels


def operand_labels(pool: "NodePoolSpec") -> dict[str, str]:
    """Turn off GPU Operator operands an image provides itself (Bottlerocket ships its own)."""
    image: catalog.NodeImage = pool.ami.image
    if image.operator_device_plugin:
        return {}
    return {names.gpu_deploy_label(op): "false" for op in ("driver", "container-toolkit", "device-plugin", "mig-manager")}
