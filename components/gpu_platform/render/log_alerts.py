"""Alerts counted from logs: Fluent Bit's log_to_metrics counters (render/logging.py) as Prometheus rules.

Container counters carry the pod's `namespace_name`, `pod_name` and `container_name` (log_to_metrics'
kubernetes_mode); the rules relabel them to `namespace`, `pod` and `container`, so Alertmanager routes each
alert to the team of the namespace like the metric alerts. Kernel counters carry the `node`: they go to the
platform. A counter appears at 1 with its first line, which `increase()` cannot see, so a series new within
the window counts as a rise too.
"""
from __future__ import annotations

from typing import Any

from gpu_platform.facts.log_patterns import CUDA_OOM, METRIC_PREFIX, NCCL_ERROR, NCCL_TIMEOUT, OOM_KILL, XID, LogPattern

LOG_ALERT_GROUP = "gpu-platform.log-alerts"
WINDOW = "10m"
_POD = "pod {{ $labels.namespace }}/{{ $labels.pod }} (container {{ $labels.container }})"


def _rise(p: LogPattern) -> str:
    m = METRIC_PREFIX + p.metric
    return f"(increase({m}[{WINDOW}]) > 0 or ({m} unless {m} offset {WINDOW}))"


def _relabel(expr: str, pairs: tuple[tuple[str, str], ...]) -> str:
    for target, source in pairs:
        expr = f'label_replace({expr}, "{target}", "$1", "{source}", "(.+)")'
    return expr


def container_expr(p: LogPattern) -> str:
    pairs = (("namespace", "namespace_name"), ("pod", "pod_name"), ("container", "container_name"))
    return f"sum by (namespace, pod, container) ({_relabel(_rise(p), pairs)}) > 0"


def node_expr(p: LogPattern) -> str:
    return f"sum by (node) ({_rise(p)}) > 0"


def _alert(name: str, expr: str, severity: str, summary: str, runbook: str) -> dict[str, Any]:
    return {"alert": name, "expr": expr, "for": "0m", "labels": {"severity": severity, "source": "logs"},
            "annotations": {"summary": summary, "description": runbook}}


def log_alert_rules(gpu_nodes: str) -> list[dict[str, Any]]:
    """`gpu_nodes`: a vector by `node` of the nodes meant to have GPUs (render/alerts.py)."""
    return [
        _alert("GpuLogCudaOutOfMemory", container_expr(CUDA_OOM), "high",
               f"{_POD} logged CUDA out of memory.",
               "The process asked the GPU for more memory than it had free. Reduce the batch size, sequence "
               "length or KV-cache budget; enable activation checkpointing; or move to a GPU (or MIG profile) "
               "with more memory. On a time-sliced GPU the pods sharing it share its memory: give this one a "
               "whole GPU. The full line is in the team's log group (docs/logging.md)."),
        _alert("GpuLogNcclError", container_expr(NCCL_ERROR), "high",
               f"{_POD} logged an NCCL error.",
               "A collective failed. Read the lines around it in the team's log group: `ncclSystemError` or "
               "`ncclRemoteError` point at the network (EFA, a peer that died), `ncclUnhandledCudaError` at the "
               "GPU (look for an Xid on the node). Restart from the last checkpoint; if one node repeats, "
               "cordon it."),
        _alert("GpuLogNcclTimeout", container_expr(NCCL_TIMEOUT), "high",
               f"{_POD} hit an NCCL collective timeout.",
               "PyTorch's watchdog gave up on a collective: a rank stopped (crashed, was evicted, or its node "
               "was repaired) or the network stalled. Find the rank that failed first in the team's log group; "
               "the job resumes from its last checkpoint once every rank is back."),
        _alert("GpuLogXid", node_expr(XID), "critical",
               "Node {{ $labels.node }} logged an NVIDIA Xid error in its kernel log.",
               "The driver reported an Xid. The line (in the platform's log group, `NVRM: Xid`) has the code: "
               "13 and 31 are usually the application; 48, 63, 64, 74, 79, 92, 94, 95 and 119 are hardware or "
               "the driver: cordon and drain the node and let node repair replace it."),
        _alert("GpuLogOomKill", f"{node_expr(OOM_KILL)} and on (node) ({gpu_nodes})", "high",
               "The kernel's OOM killer killed a process on GPU node {{ $labels.node }}.",
               "A container hit its memory limit (host RAM, not GPU memory): often while loading weights or "
               "pinning buffers. GpuCudaOom names the pod when kube-state-metrics saw it; raise the container's "
               "memory limit or load weights incrementally."),
    ]


def log_rule_group(gpu_nodes: str) -> dict[str, Any]:
    return {"name": LOG_ALERT_GROUP, "rules": log_alert_rules(gpu_nodes)}
