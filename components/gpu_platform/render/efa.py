"""The EFA device plugin chart's values: only on EFA pools' nodes, tolerating the GPU taint and every EFA
pool's own taints; and the guard holding them to the pinned chart's values.yaml."""
from __future__ import annotations

import copy
from functools import cache
from typing import TYPE_CHECKING, Any


from gpu_platform.decisions.efa import efa_pools
from gpu_platform.facts import catalog, names
from gpu_platform.render.operator_values import unknown_keys, with_tolerations

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec, TaintSpec


@cache
def _chart_defaults(chart_version: str) -> dict[str, Any]:
    values: dict[str, Any] = catalog.upstream_yaml(catalog.EFA_DEVICE_PLUGIN_VALUES[chart_version])
    return values


def chart_defaults(chart_version: str) -> dict[str, Any]:
    """The pinned chart's values.yaml (a private copy)."""
    return copy.deepcopy(_chart_defaults(chart_version))


def efa_pool_taints(spec: "PlatformSpec") -> list["TaintSpec"]:
    """Every EFA pool's own taints, each once: what an agent of every EFA node must tolerate besides the GPU
    taint and the acceptance gate's startup taint."""
    taints: list["TaintSpec"] = []
    for pool in efa_pools(spec):
        taints += [t for t in pool.taints if t not in taints]
    return taints


def device_plugin_values(spec: "PlatformSpec") -> dict[str, Any]:
    """Run only on EFA pools' nodes, tolerating the GPU taint and every EFA pool's own taints."""
    defaults = chart_defaults(spec.efa_device_plugin.chart_version)
    return {"nodeSelector": {names.EFA_LABEL: "true"},
            "tolerations": with_tolerations(defaults["tolerations"] or [], efa_pool_taints(spec))}


def unknown_device_plugin_keys(values: dict[str, Any], chart_version: str) -> list[str]:
    return unknown_keys(values, _chart_defaults(chart_version))


def supported_instance_types(chart_version: str) -> list[str]:
    """Instance types the chart's node affinity admits (its `supportedInstanceLabels`)."""
    return list(_chart_defaults(chart_version)["supportedInstanceLabels"]["values"])
