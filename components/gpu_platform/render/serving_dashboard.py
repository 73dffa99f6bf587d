"""The serving dashboard: Grafana JSON for the sidecar, one row of panels over every team's model servers, filtered
by team (namespace) and service (vLLM's `model_name`, the service's name). Panels read only metrics the pinned
vLLM exports (facts/upstream/vllm-*/metrics.txt), kube-state-metrics' Deployment replicas and DCGM's GPU use.
"""
from __future__ import annotations

from typing import Any

from gpu_platform.facts import serving
from gpu_platform.render.dashboard import DATASOURCE, _panel

UID = "gpu-platform-serving"
FILE_NAME = f"{UID}.json"  # key in the dashboard ConfigMap
CONFIGMAP = "gpu-platform-serving-dashboard"
SERVER = 'namespace=~"$team",model_name=~"$service"'
LEGEND = "{{namespace}}/{{model_name}}"


def _ttft(quantile: str) -> str:
    return (f"histogram_quantile({quantile}, sum by (namespace, model_name, le) "
            f"(rate({serving.VLLM_TTFT}_bucket{{{SERVER}}}[5m])))")


def panels() -> list[dict[str, Any]]:
    return [
        _panel("timeseries", "Time to first token, p90", _ttft("0.9"), (0, 0, 12, 8), unit="s", legend=LEGEND,
               description="What a user waits for the first token; ServingTimeToFirstTokenHigh fires above alerts.ttftSeconds."),
        _panel("timeseries", "Time to first token, p50", _ttft("0.5"), (12, 0, 12, 8), unit="s", legend=LEGEND),
        _panel("timeseries", "Requests waiting", f"sum by (namespace, model_name) ({serving.VLLM_WAITING}{{{SERVER}}})",
               (0, 8, 8, 8), legend=LEGEND, description="The queue the autoscaler reads (signal: queue)."),
        _panel("timeseries", "Requests running", f"sum by (namespace, model_name) ({serving.VLLM_RUNNING}{{{SERVER}}})",
               (8, 8, 8, 8), legend=LEGEND),
        _panel("timeseries", "KV cache used", f"max by (namespace, model_name) ({serving.VLLM_KV_CACHE_USAGE}{{{SERVER}}})",
               (16, 8, 8, 8), unit="percentunit", red_at=0.95, legend=LEGEND),
        _panel("timeseries", "Replicas", 'max by (namespace, deployment) (kube_deployment_status_replicas'
               '{namespace=~"$team",deployment=~"$service"})', (0, 16, 12, 8),
               legend="{{namespace}}/{{deployment}}"),
        _panel("timeseries", "GPU utilisation of the servers",
               'avg by (namespace, pod) (DCGM_FI_DEV_GPU_UTIL{namespace=~"$team",pod=~"($service)-.*"})',
               (12, 16, 12, 8), unit="percent", legend="{{namespace}}/{{pod}}",
               description="GPU activity, the autoscaler's second trigger."),
    ]


def _variable(name: str, label: str, source: str) -> dict[str, Any]:
    query = f"label_values({serving.VLLM_RUNNING}, {source})"
    return {"type": "query", "name": name, "label": label, "datasource": DATASOURCE, "refresh": 2,
            "includeAll": True, "multi": True, "allValue": ".*", "current": {"text": "All", "value": "$__all"},
            "sort": 1, "query": {"query": query, "refId": name}, "definition": query}


def dashboard() -> dict[str, Any]:
    return {
        "uid": UID, "title": "GPU platform: model serving", "tags": ["gpu-platform", "serving", "vllm"],
        "timezone": "browser", "schemaVersion": 39, "version": 1, "editable": True, "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {"list": [{"type": "datasource", "name": "datasource", "label": "Data source",
                                 "query": "prometheus"},
                                _variable("team", "Team", "namespace"), _variable("service", "Service", "model_name")]},
        "annotations": {"list": []},
        "panels": panels(),
    }
