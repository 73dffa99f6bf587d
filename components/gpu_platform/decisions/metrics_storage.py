"""How much disk Prometheus and Alertmanager get: the retention the stack file asks for, times what this
platform's scrape targets ingest, and whether the volumes persist (docs/monitoring.md#metrics-that-remember).

Pure: computed from the stack's monitoring block and the node and GPU counts at max size, so the chart values,
the plan and the cost section show the same numbers.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

from gpu_platform.decisions.launch_template import efa_interface_count
from gpu_platform.facts import catalog

if TYPE_CHECKING:
    from gpu_platform.spec.models import MonitoringSpec, PlatformSpec

_SECONDS = {"h": 3600, "d": 86_400, "w": 7 * 86_400, "y": 365 * 86_400}  # Prometheus' units (y = 365d)
GIB = 2**30


def retention_seconds(retention: str) -> int:
    """`15d` -> 1296000. The stack file's pattern admits only whole h, d, w or y."""
    m = re.fullmatch(r"([1-9][0-9]*)(h|d|w|y)", retention)
    if m is None:
        raise ValueError(f"retention {retention!r}: give a whole number of h, d, w or y such as 15d")
    return int(m.group(1)) * _SECONDS[m.group(2)]


@dataclass(frozen=True)
class MetricsStorage:
    retention: str
    persistent: bool  # False: emptyDir, the history goes with the pod
    series: int  # active series estimated at max size
    estimate_gib: int  # what the retention needs by the estimate
    prometheus_gib: int  # the volume (storageGi, else the estimate)
    alertmanager_gib: int

    @property
    def retention_size(self) -> str:
        """Prometheus' retentionSize: old blocks go before the volume fills, even if the estimate was low."""
        return f"{math.floor(self.prometheus_gib * catalog.PROMETHEUS_RETENTION_SIZE_SHARE)}GiB"

    @property
    def volumes_gib(self) -> int:
        return (self.prometheus_gib + self.alertmanager_gib) if self.persistent else 0


def estimate_gib(retention: str, nodes: int, gpus: int, efa_devices: int = 0) -> tuple[int, int]:
    """(series, GiB) for `nodes` nodes with `gpus` GPUs and `efa_devices` EFA devices kept for `retention`."""
    series = (catalog.PROMETHEUS_BASE_SERIES + nodes * catalog.PROMETHEUS_SERIES_PER_NODE
              + gpus * catalog.PROMETHEUS_SERIES_PER_GPU + efa_devices * catalog.PROMETHEUS_SERIES_PER_EFA_DEVICE)
    samples_per_second = series / catalog.PROMETHEUS_SCRAPE_INTERVAL_SECONDS
    size = retention_seconds(retention) * samples_per_second * catalog.PROMETHEUS_BYTES_PER_SAMPLE
    gib = math.ceil(size * catalog.PROMETHEUS_DISK_HEADROOM / GIB)
    return series, max(gib, catalog.PROMETHEUS_MIN_VOLUME_GIB)


def metrics_storage(monitoring: "MonitoringSpec", nodes: int, gpus: int, efa_devices: int = 0) -> MetricsStorage:
    prom = monitoring.prometheus
    series, gib = estimate_gib(prom.retention, nodes, gpus, efa_devices)
    return MetricsStorage(prom.retention, prom.ebs_csi_addon_version is not None, series, gib,
                          prom.storage_gi or gib, catalog.ALERTMANAGER_VOLUME_GIB)


def scale(spec: "PlatformSpec") -> tuple[int, int]:
    """Nodes and GPUs at max size: every pool and the system nodes the stack creates."""
    system = spec.cluster.create.system_nodes.max_size if spec.cluster.create is not None else 0
    nodes = system + sum(p.max_size for p in spec.node_pools)
    return nodes, sum(p.gpus_per_node * p.max_size for p in spec.node_pools)


def efa_devices_at_max(spec: "PlatformSpec") -> int:
    """EFA devices at max size: each EFA pool's interfaces per node times its nodes (the EFA collector's)."""
    return sum(efa_interface_count(p) * p.max_size for p in spec.node_pools)


def stack_metrics_storage(spec: "PlatformSpec") -> Optional[MetricsStorage]:
    """The stack's metrics storage; None unless it installs Prometheus (existing mode keeps its own). An installed
    Prometheus scrapes the EFA collector wherever the stack has EFA pools (render/efa_metrics.py)."""
    if not spec.monitoring.enabled or spec.monitoring.prometheus.mode != "install":
        return None
    return metrics_storage(spec.monitoring, *scale(spec), efa_devices=efa_devices_at_max(spec))
