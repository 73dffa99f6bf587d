"""EfaMetrics: the EFA collector in the cluster (rendered by render/efa_metrics.py): the exporter script's ConfigMap,
its DaemonSet on the EFA pools' nodes and the PodMonitor, registered once the Prometheus operator's CRDs exist."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

import pulumi

from gpu_platform.facts import component_types


class EfaMetrics(pulumi.ComponentResource):
    """The platform's EFA collector and its scrape (docs/monitoring.md#efa-throughput)."""

    def __init__(self, name: str, manifests: Sequence[dict[str, Any]], k8s_provider: pulumi.ProviderResource,
                 depends_on: Sequence[pulumi.Resource] = (), opts: Optional[pulumi.ResourceOptions] = None):
        """`manifests`: render/efa_metrics.py's efa_metrics_manifests (ConfigMap, DaemonSet, PodMonitor)."""
        super().__init__(component_types.INTERNAL["EfaMetrics"], name, None, opts)
        from gpu_platform.resources.kubernetes_object import KubernetesObject

        base = pulumi.ResourceOptions(parent=self, provider=k8s_provider, depends_on=list(depends_on))
        self.objects = [KubernetesObject(f"{name}-{obj['kind'].lower()}", obj, base) for obj in manifests]
        self.register_outputs({"objects": [f"{obj['kind']}/{obj['metadata']['name']}" for obj in manifests]})
