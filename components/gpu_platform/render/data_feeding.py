"""File-system throughput beside GPU activity: Grafana's CloudWatch data source, the read-only policy it uses
through EKS Pod Identity, and the data-feeding dashboard (Grafana JSON, a dict).

FSx for Lustre and EFS publish their throughput only to CloudWatch, so the dashboard mixes two data sources:
each GPU pod's activity and network intake from Prometheus, and the stack's file systems' bytes read and
written per second from CloudWatch. A pod whose GPU activity drops while the file system it reads is flat at
its limit is waiting for data. Only when the stack has a file system and installs Grafana
(`data_feeding_wanted`).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from gpu_platform.facts import catalog, names
from gpu_platform.render.dashboard import efa_panels, pod_activity_panels

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec

UID = "gpu-platform-data-feeding"
FILE_NAME = f"{UID}.json"  # key in the dashboard ConfigMap
CLOUDWATCH = {"type": "cloudwatch", "uid": names.CLOUDWATCH_DATASOURCE_UID}


@dataclass(frozen=True)
class FileSystems:
    """The stack's file systems' IDs (None: the stack has no such file system)."""
    fsx_lustre: Optional[str] = None  # the datasets file system
    efs: Optional[str] = None  # the model cache


def data_feeding_wanted(spec: "PlatformSpec") -> bool:
    """A file system to watch and a Grafana to draw it: the platform installs kube-prometheus-stack."""
    installs_grafana = spec.monitoring.enabled and spec.monitoring.prometheus.mode == "install"
    return installs_grafana and (spec.datasets.fsx_lustre is not None or spec.model_cache.enabled)


def cloudwatch_datasource(region: str) -> dict[str, Any]:
    """A Grafana data source provisioning entry: the AWS SDK's default credentials (Pod Identity's)."""
    return {"name": "CloudWatch", "uid": names.CLOUDWATCH_DATASOURCE_UID, "type": "cloudwatch",
            "access": "proxy", "editable": False,
            "jsonData": {"authType": "default", "defaultRegion": region}}


def read_policy() -> str:
    """Read CloudWatch metrics, nothing else (JSON)."""
    return json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Action": list(catalog.CLOUDWATCH_READ_ACTIONS), "Resource": "*"}]})


def _metric_targets(metrics: tuple[str, str, tuple[str, ...]], file_system: str) -> list[dict[str, Any]]:
    """Per metric: the hidden per-period Sum, and the expression dividing it by the period (bytes per second)."""
    namespace, dimension, metric_names = metrics
    targets: list[dict[str, Any]] = []
    for i, metric in enumerate(metric_names):
        sum_id = f"m{i}"
        targets.append({"refId": f"S{i}", "datasource": CLOUDWATCH, "queryMode": "Metrics", "metricQueryType": 0,
                        "metricEditorMode": 0, "id": sum_id, "region": "default", "namespace": namespace,
                        "metricName": metric, "dimensions": {dimension: file_system}, "matchExact": True,
                        "statistic": "Sum", "period": "", "hide": True})
        targets.append({"refId": f"R{i}", "datasource": CLOUDWATCH, "queryMode": "Metrics", "metricQueryType": 0,
                        "metricEditorMode": 1, "id": f"r{i}", "region": "default",
                        "expression": f"{sum_id}/PERIOD({sum_id})", "label": metric})
    return targets


def _throughput_panel(title: str, metrics: tuple[str, str, tuple[str, ...]], file_system: str,
                      grid: tuple[int, int, int, int], description: str) -> dict[str, Any]:
    x, y, w, h = grid
    return {"type": "timeseries", "title": title, "description": description, "datasource": CLOUDWATCH,
            "gridPos": {"x": x, "y": y, "w": w, "h": h}, "targets": _metric_targets(metrics, file_system),
            "fieldConfig": {"defaults": {"unit": "Bps"}, "overrides": []}}


def file_system_panels(file_systems: FileSystems, top: int) -> list[dict[str, Any]]:
    """A throughput panel per file system the stack has, side by side."""
    panels: list[dict[str, Any]] = []
    if file_systems.fsx_lustre is not None:
        panels.append(_throughput_panel(
            "Datasets file system (FSx for Lustre) throughput", catalog.FSX_LUSTRE_THROUGHPUT_METRICS,
            file_systems.fsx_lustre, (0, top, 12, 8),
            "Bytes per second the clients read and wrote (CloudWatch, AWS/FSx). Flat at the file system's "
            "throughput while GPU activity drops: the file system is the bottleneck."))
    if file_systems.efs is not None:
        panels.append(_throughput_panel(
            "Model cache (EFS) throughput", catalog.EFS_THROUGHPUT_METRICS, file_systems.efs,
            (12 if panels else 0, top, 12, 8),
            "Bytes per second read, written and spent on metadata (CloudWatch, AWS/EFS): model loads show "
            "as read bursts."))
    return panels


def dashboard(file_systems: FileSystems, efa: bool = False) -> dict[str, Any]:
    """The data-feeding dashboard: GPU pods' activity, CPU throttling and network intake (Prometheus), then with
    EFA pools (`efa`) each EFA node's GPU activity beside its EFA throughput (Prometheus, the platform's EFA
    collector), above the stack's file systems' throughput (CloudWatch)."""
    panels = [*pod_activity_panels(0, efa), *(efa_panels(8) if efa else []), *file_system_panels(file_systems, 16)]
    for panel_id, panel in enumerate(panels, start=1):
        panel["id"] = panel_id
    return {
        "uid": UID, "title": "GPU platform: data feeding", "tags": ["gpu-platform", "gpu", "storage"],
        "timezone": "browser", "schemaVersion": 39, "version": 1, "editable": True, "refresh": "1m",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {"list": [{"type": "datasource", "name": "datasource", "label": "Data source",
                                 "query": "prometheus"}]},
        "annotations": {"list": []}, "panels": panels,
    }
