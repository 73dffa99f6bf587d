"""One Prometheus alerting rule as data, and kube-state-metrics' spelling of the GPU resources rules match."""
from __future__ import annotations

import re
from typing import Any
from collections.abc import Mapping

from gpu_platform.facts import names


def ksm_name(key: str) -> str:
    """kube-state-metrics' spelling of a resource or label key: `nvidia.com/gpu` -> `nvidia_com_gpu`."""
    return re.sub(r"[^a-zA-Z0-9_]", "_", key)


# Resource values of every way to ask for a GPU: whole (or time-sliced) GPUs and MIG slices.
GPU_RESOURCES_RE = f"{ksm_name(names.GPU_RESOURCE)}.*|{ksm_name(names.MIG_RESOURCE_PREFIX)}.+"


def alerting_rule(name: str, expr: str, minutes: int, severity: str, summary: str, description: str,
           extra_labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    return {
        "alert": name,
        "expr": expr,
        "for": f"{minutes}m",
        "labels": {"severity": severity, **(extra_labels or {})},
        "annotations": {"summary": summary, "description": description},
    }
