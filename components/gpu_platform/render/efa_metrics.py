"""The EFA collector's objects: the exporter script's ConfigMap, its DaemonSet on the EFA pools' nodes and the
PodMonitor that has Prometheus scrape it.

EFA traffic bypasses the kernel, so cAdvisor's network series never count it, and node_exporter's InfiniBand
collector parses the hw_counters of Mellanox and Intel devices only (facts/catalog.py EFA_PORT_COUNTERS says
where that was read). The only public EFA exporter is a node_exporter fork published as an unversioned
`latest` image, which cannot be pinned. So the platform runs its own: the standard-library script
render/efa_exporter.py on the catalog's one pinned Python image, reading /sys through a read-only mount,
unprivileged. Only when the stack has EFA pools and a Prometheus to scrape them (`efa_metrics_wanted`, in
render/monitoring.py beside the scrape namespace it reads).

The DaemonSet runs in kube-system beside the EFA device plugin; the PodMonitor lives in Prometheus' namespace
(the one it reads monitors from) and selects the collector's pods across namespaces, as the autoscalers'
ServiceMonitors do. Its relabelling names each series' `node`, as dcgm-exporter's ServiceMonitor does, so the
dashboards join GPU activity and EFA throughput on the node.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from gpu_platform.facts import catalog, names
from gpu_platform.render import efa_exporter as exporter
from gpu_platform.render.efa import efa_pool_taints
from gpu_platform.render.monitoring import efa_metrics_wanted, scraping_namespace
from gpu_platform.render.operator_values import with_tolerations

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec

NAMESPACE = catalog.EFA_DEVICE_PLUGIN_NAMESPACE  # beside the EFA device plugin
PORT = 9810
PORT_NAME = "metrics"
SCRIPT_KEY = "efa_exporter.py"
SCRIPT_DIR = "/opt/gpu-platform"
SYS_MOUNT = "/host/sys"
SCRAPE_INTERVAL = f"{catalog.PROMETHEUS_SCRAPE_INTERVAL_SECONDS}s"  # as every other target, as the sizing assumes
POD_MONITOR_API = ("monitoring.coreos.com/v1", "PodMonitor")
SELECTOR = {"app.kubernetes.io/name": names.EFA_METRICS_NAME}
LABELS = {**SELECTOR, names.MANAGED_BY_LABEL: names.MANAGED_BY}
# The series the collector serves: one counter per driver counter, and the node's EFA device count.
EFA_METRICS = frozenset({*(exporter.metric_name(c) for c in catalog.EFA_PORT_COUNTERS), exporter.DEVICES_METRIC})


def exporter_source() -> str:
    return Path(exporter.__file__).read_text()


def config_map() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": names.EFA_METRICS_NAME, "namespace": NAMESPACE, "labels": dict(LABELS)},
            "data": {SCRIPT_KEY: exporter_source()}}


def _container() -> dict[str, Any]:
    env = {"PORT": str(PORT), "SYS_ROOT": SYS_MOUNT, "COUNTERS": ",".join(catalog.EFA_PORT_COUNTERS),
           "PYTHONDONTWRITEBYTECODE": "1"}
    return {
        "name": "collector", "image": catalog.PYTHON_IMAGE, "command": ["python3", f"{SCRIPT_DIR}/{SCRIPT_KEY}"],
        "env": [{"name": k, "value": v} for k, v in env.items()],
        "ports": [{"name": PORT_NAME, "containerPort": PORT, "protocol": "TCP"}],
        "readinessProbe": {"httpGet": {"path": "/metrics", "port": PORT_NAME}, "periodSeconds": 30},
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"cpu": "100m", "memory": "64Mi"}},
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "runAsNonRoot": True, "runAsUser": 65534, "runAsGroup": 65534,
                            "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "sys", "mountPath": SYS_MOUNT, "readOnly": True},
                         {"name": "script", "mountPath": SCRIPT_DIR, "readOnly": True}],
    }


def daemonset(spec: "PlatformSpec") -> dict[str, Any]:
    """On every EFA pool's node (the EFA label), through the GPU taint, the startup taint (it serves before the
    node's checks pass: a node failing its EFA check shows its counters) and the EFA pools' own taints."""
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": names.EFA_METRICS_NAME, "namespace": NAMESPACE, "labels": dict(LABELS)},
            "spec": {
                "selector": {"matchLabels": dict(SELECTOR)},
                "template": {"metadata": {"labels": dict(LABELS), "annotations": names.script_digest(exporter_source())},
                             "spec": {
                    "nodeSelector": {names.EFA_LABEL: "true"},
                    "tolerations": with_tolerations([], efa_pool_taints(spec)),
                    "priorityClassName": "system-node-critical",  # placed before work on a new node; 10m CPU
                    "automountServiceAccountToken": False,  # reads /sys only, never the API
                    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                    "containers": [_container()],
                    "volumes": [{"name": "sys", "hostPath": {"path": "/sys", "type": "Directory"}},
                                {"name": "script", "configMap": {"name": names.EFA_METRICS_NAME}}]}}}}


def pod_monitor(spec: "PlatformSpec") -> dict[str, Any]:
    """In Prometheus' namespace, with its selector labels (for `existing`); each series gets its `node`, and the
    collector pod's own namespace, pod and container labels are dropped (they name the collector, not the work)."""
    namespace = scraping_namespace(spec.monitoring)
    api_version, kind = POD_MONITOR_API
    labels = {**spec.monitoring.prometheus.selector_labels, names.MANAGED_BY_LABEL: names.MANAGED_BY}
    return {"apiVersion": api_version, "kind": kind,
            "metadata": {"name": names.EFA_METRICS_NAME, "namespace": namespace, "labels": labels},
            "spec": {"namespaceSelector": {"matchNames": [NAMESPACE]},
                     "selector": {"matchLabels": dict(SELECTOR)},
                     "podMetricsEndpoints": [{
                         "port": PORT_NAME, "path": "/metrics", "interval": SCRAPE_INTERVAL,
                         "relabelings": [
                             {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node",
                              "action": "replace"},
                             {"regex": "pod|namespace|container", "action": "labeldrop"}]}]}}


def efa_metrics_manifests(spec: "PlatformSpec") -> list[dict[str, Any]]:
    """The ConfigMap, DaemonSet and PodMonitor, in that order; none when `efa_metrics_wanted` is false."""
    if not efa_metrics_wanted(spec):
        return []
    return [config_map(), daemonset(spec), pod_monitor(spec)]
