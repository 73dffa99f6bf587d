"""The data-feeding dashboard: GPU pods' activity beside the stack's file systems' throughput.

Its JSON (render/data_feeding.py) names the file systems by ID, so the ConfigMap waits for them; Grafana's
CloudWatch data source and its read-only role come with the Prometheus stack (resources/monitoring.py),
because Pod Identity credentials must exist before the Grafana pod starts.
"""
from __future__ import annotations

import json
from typing import Optional

import pulumi

from gpu_platform.facts import component_types, names
from gpu_platform.render.data_feeding import FILE_NAME, FileSystems, dashboard
from gpu_platform.render.monitoring import DASHBOARD_LABEL_VALUE


def dashboard_json(fsx_lustre: Optional[str], efs: Optional[str], efa: bool = False) -> str:
    return json.dumps(dashboard(FileSystems(fsx_lustre, efs), efa), separators=(",", ":"))


class FileSystemMetrics(pulumi.ComponentResource):
    """The data-feeding dashboard's ConfigMap, in the Prometheus namespace with the Grafana sidecar's label."""

    def __init__(self, name: str, namespace: str, dashboard_label: str,
                 fsx_lustre: Optional[pulumi.Input[str]], efs: Optional[pulumi.Input[str]],
                 k8s_provider: Optional[pulumi.ProviderResource], depends_on: list[pulumi.Resource],
                 opts: Optional[pulumi.ResourceOptions] = None, efa: bool = False):
        """`fsx_lustre`, `efs`: the datasets and model-cache file systems' IDs (None: the stack has none); `efa`:
        the stack's EFA nodes are scraped (the EFA throughput panels)."""
        super().__init__(component_types.INTERNAL["FileSystemMetrics"], name, None, opts)
        from pulumi_kubernetes.core.v1 import ConfigMap
        from pulumi_kubernetes.meta.v1 import ObjectMetaArgs

        data = pulumi.Output.all(fsx_lustre, efs).apply(lambda ids: {FILE_NAME: dashboard_json(ids[0], ids[1], efa)})
        self.dashboard = ConfigMap(
            name,
            metadata=ObjectMetaArgs(name=names.DATA_FEEDING_DASHBOARD_CONFIGMAP, namespace=namespace, labels={
                dashboard_label: DASHBOARD_LABEL_VALUE, names.MANAGED_BY_LABEL: names.MANAGED_BY}),
            data=data,
            opts=pulumi.ResourceOptions(parent=self, provider=k8s_provider, depends_on=depends_on))
        self.register_outputs({"dashboard": names.DATA_FEEDING_DASHBOARD_CONFIGMAP})
