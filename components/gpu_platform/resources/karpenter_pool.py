"""Karpenter GPU pools: per pool an EC2NodeClass and a NodePool (rendered by components/karpenter.py).

Both wait for the Karpenter release (its chart installs their CRDs), the node role's access entry, the
discovery tags and, like managed node groups, the GPU Operator's release: the sharing configs nodes
select by label exist before the first node boots. In prod both are protected: deleting a NodePool
makes Karpenter drain and terminate every node it launched.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import pulumi

from gpu_platform.decisions.karpenter import karpenter_pools, needs_user_data
from gpu_platform.render.karpenter import custom_user_data, node_class_object, node_pool_object

if TYPE_CHECKING:
    from gpu_platform.resources.cluster import Cluster
    from gpu_platform.resources.karpenter_controller import KarpenterController
    from gpu_platform.resources.node_pool import PoolCluster
    from gpu_platform.spec.models import NodePoolSpec, PlatformSpec


def _custom_resource(name: str, obj: dict, spec_value, opts: pulumi.ResourceOptions):
    from pulumi_kubernetes.apiextensions import CustomResource
    from pulumi_kubernetes.meta.v1 import ObjectMetaArgs

    return CustomResource(name, api_version=obj["apiVersion"], kind=obj["kind"],
                          metadata=ObjectMetaArgs(**obj["metadata"]), spec=spec_value, opts=opts)


class KarpenterNodePool(pulumi.ComponentResource):
    """One pool: its EC2NodeClass (`<pool>-class`) and NodePool (`<pool>`), both named after the pool."""

    def __init__(self, name: str, spec: "PlatformSpec", pool: "NodePoolSpec", cluster: "PoolCluster",
                 k8s_provider: pulumi.ProviderResource, depends_on: list[pulumi.Resource],
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpu-platform:karpenter:KarpenterNodePool", name, None, opts)
        protect = spec.pool_protected(pool)
        k8s = pulumi.ResourceOptions(parent=self, provider=k8s_provider, protect=protect, depends_on=depends_on)
        node_class = node_class_object(spec, pool)
        class_spec = node_class["spec"]
        if needs_user_data(pool):
            class_spec = pulumi.Output.all(cluster.endpoint, cluster.certificate_authority, cluster.service_cidr).apply(
                lambda a: node_class_object(spec, pool, custom_user_data(spec, pool, a[0], a[1], a[2]))["spec"])
        self.node_class = _custom_resource(f"{name}-class", node_class, class_spec, k8s)
        node_pool = node_pool_object(spec, pool)
        self.node_pool = _custom_resource(name, node_pool, node_pool["spec"], pulumi.ResourceOptions.merge(
            k8s, pulumi.ResourceOptions(depends_on=[self.node_class])))
        self.register_outputs({"nodePool": pool.name, "nodeClass": pool.name})


@dataclass
class KarpenterPools:
    controller: "KarpenterController"
    pools: list[KarpenterNodePool]


def build_karpenter(spec: "PlatformSpec", region: str, cluster: "Cluster", pool_cluster: "PoolCluster",
                    opts: pulumi.ResourceOptions) -> Optional[KarpenterPools]:
    """The controller and every Karpenter pool (None when no pool uses Karpenter)."""
    pools = karpenter_pools(spec)
    if not pools:
        return None
    from gpu_platform.resources.karpenter_controller import KarpenterController

    controller = KarpenterController("karpenter", spec, region, cluster, depends_on=cluster.system_ready, opts=opts)
    after = [*pool_cluster.depends_on, *controller.ready]
    parent = pulumi.ResourceOptions(parent=opts.parent)
    return KarpenterPools(controller, [KarpenterNodePool(p.name, spec, p, pool_cluster, cluster.k8s_provider, after,
                                                         opts=parent) for p in pools])
