"""Karpenter GPU pools: per pool an EC2NodeClass and a NodePool (rendered by render/karpenter.py).

Both wait for the Karpenter release (its chart installs their CRDs), the node role's access entry, the
discovery tags and, like managed node groups, the GPU Operator's release: the sharing configs nodes
select by label exist before the first node boots. In prod both are protected: deleting a NodePool
makes Karpenter drain and terminate every node it launched. `KarpenterNodePool` takes its own arguments,
so it serves any cluster running Karpenter v1 (the platform's controller, or one already installed).
"""
import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional

import pulumi
import pulumi_kubernetes

from gpu_platform.decisions.karpenter import needs_user_data
from gpu_platform.facts import component_types
from gpu_platform.render.karpenter import custom_user_data, node_class_head, node_class_object, node_pool_object
from gpu_platform.resources import options
from gpu_platform.resources.pool_args import DisruptionWindowArgs, KarpenterSettingsArgs, PoolArgs, pool_from_args
from gpu_platform.resources.typed_args import Required, TypedDict
from gpu_platform.spec.models import NodePoolSpec
from gpu_platform.spec.pool_context import PoolContext

if TYPE_CHECKING:
    from pulumi_kubernetes.apiextensions import CustomResource


def _custom_resource(name: str, obj: Mapping[str, Any], spec_value: pulumi.Input[Any],
                     opts: pulumi.ResourceOptions) -> "CustomResource":
    from pulumi_kubernetes.apiextensions import CustomResource

    return CustomResource(name, api_version=obj["apiVersion"], kind=obj["kind"],
                          metadata=obj["metadata"], spec=spec_value, opts=opts)


# TypedDict named again as a base: the API reference then finds where each inherited key is declared.
class KarpenterNodePoolArgs(PoolArgs, TypedDict, total=False):
    """A GPU pool Karpenter provisions: the pool, and what its EC2NodeClass needs from the cluster."""

    cluster_name: Required[pulumi.Input[str]]
    """The EKS cluster's name: subnets and security groups are found by its `karpenter.sh/discovery` tag."""
    k8s_provider: pulumi_kubernetes.Provider
    """The cluster's Kubernetes provider (default: the provider the resource options give)."""
    node_role: str
    """The IAM role (name) Karpenter's nodes run as (default: the one the platform's controller makes)."""
    cluster_endpoint: pulumi.Input[str]
    """Ubuntu pools: the API server endpoint their bootstrap joins."""
    cluster_certificate_authority: pulumi.Input[str]
    """Ubuntu pools: the cluster's CA data (base64)."""
    service_cidr: pulumi.Input[str]
    """Ubuntu pools: the cluster's service CIDR."""
    karpenter: KarpenterSettingsArgs
    """How Karpenter consolidates and expires the pool's nodes."""
    disruption_window: DisruptionWindowArgs
    """When Karpenter may drift or consolidate nodes running pods (prod pools need one)."""


class KarpenterNodePool(pulumi.ComponentResource):
    """One pool: its EC2NodeClass (`<pool>-class`) and NodePool (`<pool>`), both named after the pool."""

    node_pool_name: pulumi.Output[str]
    """The NodePool's name (the pool's)."""

    def __init__(self, name: str, args: KarpenterNodePoolArgs, opts: Optional[pulumi.ResourceOptions] = None):
        pool, ctx = pool_from_args(KarpenterNodePoolArgs, name, args, "karpenter")
        self._build(name, pool, ctx, args, opts)

    @classmethod
    def of(cls, name: str, pool: NodePoolSpec, context: PoolContext, cluster: Mapping[str, Any],
           opts: Optional[pulumi.ResourceOptions] = None) -> "KarpenterNodePool":
        """A pool the stack file's rules already validated (GpuPlatform's), on `cluster` (its name, endpoint,
        CA, service range and Kubernetes provider), built as it is: not checked again."""
        component = cls.__new__(cls)
        component._build(name, pool, context, cluster, opts)
        return component

    def _build(self, name: str, pool: NodePoolSpec, ctx: PoolContext, args: Mapping[str, Any],
               opts: Optional[pulumi.ResourceOptions]) -> None:
        super().__init__(component_types.public("KarpenterNodePool"), name, None,
                         options.formerly(opts, "KarpenterNodePool"))
        provider = options.kubernetes(args)
        k8s = options.child(self, opts, protect=options.protect(opts, ctx.protected(pool)), **provider)
        self.node_class = _custom_resource(f"{name}-class", node_class_head(pool), self._class_spec(args, ctx, pool), k8s)
        node_pool = node_pool_object(ctx, pool)
        self.node_pool = _custom_resource(name, node_pool, node_pool["spec"], pulumi.ResourceOptions.merge(
            k8s, pulumi.ResourceOptions(depends_on=[self.node_class])))
        self.node_pool_name = pulumi.Output.from_input(pool.name)
        self.register_outputs({"nodePool": pool.name, "nodeClass": pool.name})

    @staticmethod
    def _class_spec(args: Mapping[str, Any], ctx: PoolContext, pool: NodePoolSpec) -> pulumi.Input[dict[str, Any]]:
        """The EC2NodeClass spec: plain when the cluster is named and the image needs no bootstrap, else
        once the cluster's name, endpoint, CA and service range resolve."""
        role = args.get("node_role")
        if not needs_user_data(pool) and ctx.cluster_name is not None:
            plain: dict[str, Any] = node_class_object(ctx, pool, role=role)["spec"]
            return plain

        def spec(a: list[Any]) -> dict[str, Any]:
            named = _named_context(ctx, a[0])
            user_data = custom_user_data(named, pool, a[1], a[2], a[3]) if needs_user_data(pool) else None
            made: dict[str, Any] = node_class_object(named, pool, user_data, role)["spec"]
            return made

        return pulumi.Output.all(args["cluster_name"], args.get("cluster_endpoint"),
                                 args.get("cluster_certificate_authority"), args.get("service_cidr")).apply(spec)


def _named_context(ctx: PoolContext, cluster_name: str) -> PoolContext:
    return ctx if ctx.cluster_name is not None else dataclasses.replace(ctx, cluster_name=cluster_name)
