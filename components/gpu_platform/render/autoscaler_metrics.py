"""ServiceMonitors that let Prometheus scrape the autoscalers, whose series the capacity alerts read
(render/capacity_alerts.py: `cluster_autoscaler_failed_scale_ups_total`, `karpenter_cloudprovider_errors_total`).

Both controllers run outside the namespaces Prometheus reads monitors from (kube-system by default, which the
platform does not label), so the monitors live in Prometheus' own namespace and select each chart's metrics
Service across namespaces; they carry the Prometheus' selector labels for `existing` mode. The charts' own
ServiceMonitor switches would put Karpenter's in its release namespace, where no monitor is read.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpu_platform.decisions.karpenter import karpenter_pools
from gpu_platform.facts import catalog, names
from gpu_platform.render.monitoring import scraping_namespace

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec

SCRAPE_INTERVAL = f"{catalog.PROMETHEUS_SCRAPE_INTERVAL_SECONDS}s"  # as every other target, as the sizing assumes


def service_monitor(name: str, namespace: str, labels: dict[str, str], target_namespace: str,
                    selector: dict[str, str], port: str) -> dict[str, Any]:
    return {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"namespaceSelector": {"matchNames": [target_namespace]},
                     "selector": {"matchLabels": selector},
                     "endpoints": [{"port": port, "path": "/metrics", "interval": SCRAPE_INTERVAL}]}}


def autoscaler_monitors(spec: "PlatformSpec") -> list[dict[str, Any]]:
    """One per autoscaler the stack runs; none without a Prometheus to read them."""
    namespace = scraping_namespace(spec.monitoring)
    if namespace is None:
        return []
    labels = {**spec.monitoring.prometheus.selector_labels, names.MANAGED_BY_LABEL: names.MANAGED_BY}
    out = []
    if spec.cluster_autoscaler.enabled:
        out.append(service_monitor(names.CA_RELEASE, namespace, labels, names.CA_NAMESPACE,
                                   {"app.kubernetes.io/instance": names.CA_RELEASE,
                                    "app.kubernetes.io/name": catalog.CLUSTER_AUTOSCALER_APP_NAME},
                                   catalog.CLUSTER_AUTOSCALER_METRICS_PORT))
    if karpenter_pools(spec):
        out.append(service_monitor(names.KARPENTER_RELEASE, namespace, labels, spec.karpenter.namespace,
                                   {"app.kubernetes.io/instance": names.KARPENTER_RELEASE,
                                    "app.kubernetes.io/name": catalog.KARPENTER_APP_NAME},
                                   catalog.KARPENTER_METRICS_PORT))
    return out
