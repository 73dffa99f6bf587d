"""The autoscalers' ServiceMonitors (render/autoscaler_metrics.py), registered once the Prometheus operator's
CRDs exist, so the capacity alerts have the series they read."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

import pulumi

from gpu_platform.facts import component_types


class AutoscalerMetrics(pulumi.ComponentResource):
    """One ServiceMonitor per autoscaler the stack runs."""

    def __init__(self, name: str, monitors: Sequence[dict[str, Any]], k8s_provider: pulumi.ProviderResource,
                 depends_on: Sequence[pulumi.Resource], opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(component_types.INTERNAL["AutoscalerMetrics"], name, None, opts)
        from pulumi_kubernetes.apiextensions import CustomResource

        after = pulumi.ResourceOptions(parent=self, provider=k8s_provider, depends_on=list(depends_on))
        self.monitors = [
            CustomResource(f"{name}-{m['metadata']['name']}", api_version=m["apiVersion"], kind=m["kind"],
                           metadata=m["metadata"], spec=m["spec"], opts=after)
            for m in monitors]
        self.register_outputs({"serviceMonitors": [m["metadata"]["name"] for m in monitors]})
