"""Warm capacity: placeholder pods that hold nodes of the pools that set `warm` (render/warm_capacity.py),
registered once the cluster's system nodes run."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Optional

import pulumi

from gpu_platform.decisions.warm import WarmPool
from gpu_platform.facts import component_types
from gpu_platform.render.warm_capacity import deployment, namespace, priority_class


class WarmCapacity(pulumi.ComponentResource):
    """The placeholders' namespace and PriorityClass, and one Deployment per warm pool."""

    def __init__(self, name: str, pools: Sequence[WarmPool], k8s_provider: pulumi.ProviderResource,
                 depends_on: Sequence[pulumi.Resource], opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(component_types.INTERNAL["WarmCapacity"], name, None, opts)
        from pulumi_kubernetes.apps.v1 import Deployment
        from pulumi_kubernetes.core.v1 import Namespace
        from pulumi_kubernetes.scheduling.v1 import PriorityClass

        def after(*waits: pulumi.Resource) -> pulumi.ResourceOptions:
            return pulumi.ResourceOptions(parent=self, provider=k8s_provider, depends_on=[*depends_on, *waits])

        ns, pc = namespace(), priority_class()
        self.namespace = Namespace(f"{name}-namespace", metadata=ns["metadata"], opts=after())
        self.priority_class = PriorityClass(
            f"{name}-priority", metadata=pc["metadata"], value=pc["value"], preemption_policy=pc["preemptionPolicy"],
            global_default=pc["globalDefault"], description=pc["description"], opts=after())
        self.deployments = {}
        for warm in pools:
            d = deployment(warm)
            self.deployments[warm.pool] = Deployment(f"{name}-{warm.pool}", metadata=d["metadata"], spec=d["spec"],
                                                     opts=after(self.namespace, self.priority_class))
        self.register_outputs({"pools": {w.pool: w.nodes for w in pools}})
