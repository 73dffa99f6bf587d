"""The NVIDIA GPU Operator: one Helm release in its own namespace, values decided in operator_values.

The chart creates the device-plugin and MIG ConfigMaps from the rendered sharing files; nodes pick their
entries by the labels their pool carries from birth. The operator itself runs on the system nodes and
waits for the GPU node pools it serves.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Optional, Sequence

import pulumi

from gpu_platform.facts import catalog, names
from gpu_platform.render.operator_values import driver_summary, operator_values

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec

# Operator install plus CRDs and NFD on fresh system nodes; Helm's wait covers the chart's own workloads.
RELEASE_TIMEOUT_SECONDS = 1200
# The operands need host access (driver, toolkit, device plugin, MIG manager): Pod Security must allow it.
POD_SECURITY_LEVEL = "privileged"


@dataclass
class GpuOperatorArgs:
    spec: "PlatformSpec"
    k8s_provider: pulumi.ProviderResource
    depends_on: Sequence[pulumi.Resource] = field(default_factory=list)  # GPU node groups, system nodes, add-ons


class GpuOperator(pulumi.ComponentResource):
    def __init__(self, name: str, args: GpuOperatorArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpu-platform:gpu_operator:GpuOperator", name, None, opts)
        from pulumi_kubernetes.core.v1 import Namespace
        from pulumi_kubernetes.helm.v3 import Release, RepositoryOptsArgs
        from pulumi_kubernetes.meta.v1 import ObjectMetaArgs

        spec, op = args.spec, args.spec.gpu_operator
        chart = catalog.GPU_OPERATOR_CHARTS[op.chart_version]
        k8s = pulumi.ResourceOptions(parent=self, provider=args.k8s_provider)
        self.namespace = Namespace(
            name,
            metadata=ObjectMetaArgs(name=op.namespace, labels={
                **names.pod_security_labels(POD_SECURITY_LEVEL), names.MANAGED_BY_LABEL: names.MANAGED_BY}),
            opts=k8s,
        )
        self.values = operator_values(spec)
        self.release = Release(
            name,
            name=names.GPU_OPERATOR_RELEASE,
            chart=catalog.GPU_OPERATOR_CHART,
            version=op.chart_version,
            repository_opts=RepositoryOptsArgs(repo=chart.repository),
            namespace=self.namespace.metadata.name,
            create_namespace=False,
            values=self.values,
            skip_await=False,
            timeout=RELEASE_TIMEOUT_SECONDS,
            opts=pulumi.ResourceOptions.merge(k8s, pulumi.ResourceOptions(depends_on=[self.namespace, *args.depends_on])),
        )
        self.driver = driver_summary(spec)
        self.register_outputs({"namespace": self.namespace.metadata.name, "release": self.release.name,
                               "chartVersion": op.chart_version, "driver": self.driver})
