"""NVIDIA's DRA driver (Helm chart, pinned) for pools with `gpuAllocation: dra`: its kubelet plugin on those
pools' nodes only, its controller on the system nodes (values rendered in render/dra.py). The release skips
the chart's crds/: the GPU Operator's release owns the ComputeDomain CRDs and comes first
(catalog.COMPUTE_DOMAIN_CRDS_OWNER); callers pass the operator's release in `depends_on`."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

import pulumi

from gpu_platform.facts import catalog, component_types, names

RELEASE_TIMEOUT_SECONDS = 600


class DraDriver(pulumi.ComponentResource):
    """The dra-driver-nvidia-gpu chart in its own namespace."""

    def __init__(self, name: str, version: str, values: dict[str, Any], k8s_provider: pulumi.ProviderResource,
                 depends_on: Sequence[pulumi.Resource] = (), opts: Optional[pulumi.ResourceOptions] = None):
        """`version`: the chart's, pinned; `values`: rendered for the platform's pools (render/dra.py)."""
        super().__init__(component_types.INTERNAL["DraDriver"], name, None, opts)
        from pulumi_kubernetes.helm.v3 import Release

        self.values = values
        self.release = Release(
            name, name=names.DRA_DRIVER_RELEASE, chart=catalog.DRA_DRIVER_CHART, version=version,
            namespace=catalog.DRA_DRIVER_NAMESPACE, create_namespace=True, values=self.values,
            timeout=RELEASE_TIMEOUT_SECONDS, skip_crds=catalog.DRA_DRIVER_SKIPS_CRDS,
            opts=pulumi.ResourceOptions(parent=self, provider=k8s_provider, depends_on=list(depends_on)))
        self.register_outputs({"release": self.release.name})
