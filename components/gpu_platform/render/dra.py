"""NVIDIA's DRA driver chart values (dra-driver-nvidia-gpu, pinned), and the guard holding them to the
chart's own values.yaml.

The kubelet plugin runs only on DRA pools' nodes (their `gpu-platform.io/gpu-allocation: dra` label), where
the GPU Operator's device plugin is off: the chart refuses `resources.gpus.enabled` unless told the device
plugin is gone (`gpuResourcesEnabledOverride`), which the node labels make true. The operator keeps the
driver: `/` when the AMI installs it, the driver container's root when the operator does (values.yaml).
The chart creates its DeviceClasses (`gpu.nvidia.com`, `mig.nvidia.com`, and the ComputeDomain classes when
those are on); the API version is pinned so Helm never picks an older one the server still lists.
"""
from __future__ import annotations

import copy
from functools import cache
from typing import TYPE_CHECKING, Any
from collections.abc import Mapping, Sequence


from gpu_platform.decisions.dra import dra_pools, driver_pools, kubelet_plugin_selector
from gpu_platform.facts import catalog
from gpu_platform.render.operator_values import unknown_keys, with_tolerations

if TYPE_CHECKING:
    from gpu_platform.spec.models import GpuPool, TaintSpec

# Where the driver's files are on the host (values.yaml `nvidiaDriverRoot`): the AMI's, or the operator's
# driver container's mount.
DRIVER_ROOTS = {"ami": "/", "operator": "/run/nvidia/driver"}


@cache
def _chart_defaults(chart_version: str) -> dict[str, Any]:
    values: dict[str, Any] = catalog.upstream_yaml(catalog.DRA_DRIVER_RELEASES[chart_version].values_file)
    return values


def chart_defaults(chart_version: str) -> dict[str, Any]:
    """The pinned chart's values.yaml (a private copy)."""
    return copy.deepcopy(_chart_defaults(chart_version))


def dra_driver_values(chart_version: str, pools: Sequence["GpuPool"], driver_source: str,
                      system_node_selector: Mapping[str, str], compute_domains: bool = False) -> dict[str, Any]:
    """The kubelet plugin on DRA pools (and UltraServer pools, for ComputeDomains), tolerating their taints; the
    controller on the system nodes. Without a DRA pool the driver's GPU side is off: the device plugin keeps
    the GPUs and the driver hands out IMEX channels only (AWS's UltraServer setup)."""
    defaults = chart_defaults(chart_version)
    taints: list["TaintSpec"] = []
    for pool in driver_pools(pools):
        taints += [t for t in pool.taints if t not in taints]
    gpus = bool(dra_pools(pools))
    return {
        "nvidiaDriverRoot": DRIVER_ROOTS[driver_source],
        "resourceApiVersion": catalog.RESOURCE_API_VERSION,
        "resources": {"gpus": {"enabled": gpus}, "computeDomains": {"enabled": compute_domains}},
        # The device plugin is off on every node the kubelet plugin publishes GPUs on (decisions/dra.py labels).
        **({"gpuResourcesEnabledOverride": True} if gpus else {}),
        "controller": {"nodeSelector": dict(system_node_selector)},
        "kubeletPlugin": {"nodeSelector": kubelet_plugin_selector(pools),
                          "tolerations": with_tolerations(defaults["kubeletPlugin"]["tolerations"], taints)},
    }


# Maps whose keys are data (node labels), not chart settings.
FREE_FORM = ("controller.nodeSelector", "kubeletPlugin.nodeSelector")


def unknown_dra_driver_keys(values: Mapping[str, Any], chart_version: str) -> list[str]:
    return unknown_keys(values, _chart_defaults(chart_version), FREE_FORM)
