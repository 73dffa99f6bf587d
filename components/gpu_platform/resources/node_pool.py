"""GPU node pools: one EKS managed node group and its launch template per pool.

Every node-group input is decided in decisions/node_pool.py from the pool alone; the component only
passes it on, adds the launch template (decisions/launch_template.py, decisions/node_boot.py) and tags
the node group's Auto Scaling group with the autoscaler's node template (managed node group tags never
reach it). `GpuNodePool` takes its own arguments (`GpuNodePoolArgs`), so it serves any EKS cluster: the
platform's, or one made with pulumi_aws, pulumi-eks or Terraform.
"""
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional

import pulumi

from gpu_platform.decisions import launch_template as lt
from gpu_platform.decisions import node_boot, reservations
from gpu_platform.decisions.node_pool import NodeGroupInputs, node_group_inputs, node_template_tags, registering_taints
from gpu_platform.decisions.placement import subnet_indices
from gpu_platform.decisions.sharing import mig_layout_tag
from gpu_platform.facts import component_types, names
from gpu_platform.resources import options
from gpu_platform.resources.options import named
from gpu_platform.resources.pool_args import PoolArgs, environment_tag, pool_from_args
from gpu_platform.resources.typed_args import Required, TypedDict
from gpu_platform.spec.models import NodePoolSpec
from gpu_platform.spec.pool_context import PoolContext

if TYPE_CHECKING:
    from pulumi_aws import autoscaling, ec2, eks

_SNAKE = {"maxUnavailable": "max_unavailable", "maxUnavailablePercentage": "max_unavailable_percentage",
          "updateStrategy": "update_strategy"}

# The EKS API field names (botocore) -> pulumi_aws argument names.
ARG_NAMES = {
    "enabled": "enabled", "maxUnhealthyNodeThresholdCount": "max_unhealthy_node_threshold_count",
    "maxUnhealthyNodeThresholdPercentage": "max_unhealthy_node_threshold_percentage",
    "maxParallelNodesRepairedCount": "max_parallel_nodes_repaired_count",
    "maxParallelNodesRepairedPercentage": "max_parallel_nodes_repaired_percentage",
}
OVERRIDE_ARG_NAMES = {"nodeMonitoringCondition": "node_monitoring_condition",
                      "nodeUnhealthyReason": "node_unhealthy_reason",
                      "minRepairWaitTimeMins": "min_repair_wait_time_mins", "repairAction": "repair_action"}


def repair_args(config: Mapping[str, Any]) -> "eks.NodeGroupNodeRepairConfigArgs":
    """`eks.NodeGroupNodeRepairConfigArgs` for a `repair_config` result."""
    from pulumi_aws import eks

    overrides = [eks.NodeGroupNodeRepairConfigNodeRepairConfigOverrideArgs(
        **{OVERRIDE_ARG_NAMES[k]: v for k, v in o.items()}) for o in config.get("nodeRepairConfigOverrides", ())]
    return eks.NodeGroupNodeRepairConfigArgs(
        **{ARG_NAMES[k]: v for k, v in config.items() if k in ARG_NAMES},
        node_repair_config_overrides=overrides or None)


# TypedDict named again as a base: the API reference then finds where each inherited key is declared.
class GpuNodePoolArgs(PoolArgs, TypedDict, total=False):
    """A GPU pool on an EKS managed node group: the pool, and what it needs from its cluster."""

    cluster_name: Required[pulumi.Input[str]]
    """The EKS cluster's name (a plain string, or an Output of the cluster resource)."""
    node_role_arn: Required[pulumi.Input[str]]
    """The IAM role the nodes run as (worker, CNI and ECR read policies)."""
    subnet_ids: Required[pulumi.Input[list[str]]]
    """The private subnets the nodes may run in."""
    subnet_zones: list[str]
    """The subnets' availability zones, in the same order: needed to place a pool by `zones`."""
    node_security_group_id: pulumi.Input[str]
    """The cluster's node security group: named explicitly when the template names any group (EFA pools,
    `security_group_ids`), since EKS then stops adding it."""
    security_group_ids: list[pulumi.Input[str]]
    """More security groups for the nodes."""
    vpc_id: pulumi.Input[str]
    """The cluster's VPC: EFA pools get a self-referencing security group in it."""
    cluster_endpoint: pulumi.Input[str]
    """Ubuntu pools: the API server endpoint their bootstrap joins."""
    cluster_certificate_authority: pulumi.Input[str]
    """Ubuntu pools: the cluster's CA data (base64)."""
    service_cidr: pulumi.Input[str]
    """Ubuntu pools: the cluster's service CIDR (kube-dns is its 10th address)."""
    efa: bool
    """EFA interfaces on every network card, one placement group in one zone."""
    zones: list[str]
    """Availability zones of `subnet_zones` the pool runs in (default all; an EFA pool the first)."""
    update_strategy: str
    """default, or minimal: terminate old nodes before launching new ones in a roll."""


class GpuNodePool(pulumi.ComponentResource):
    """A GPU managed node group, its launch template, and the autoscaler's node-template tags.

    Pass `protect` in the resource options to protect the node group (prod pools are protected by default);
    the caller's provider, depends_on and aliases reach every child.
    """

    node_group_name: pulumi.Output[str]
    """The EKS node group's name."""
    auto_scaling_group_name: pulumi.Output[str]
    """The Auto Scaling group EKS made for the node group (the autoscaler scales it)."""

    def __init__(self, name: str, args: GpuNodePoolArgs, opts: Optional[pulumi.ResourceOptions] = None):
        pool, ctx = pool_from_args(GpuNodePoolArgs, name, args, "managed-node-group")
        self._build(name, pool, ctx, args, opts, environment_tag(args))

    @classmethod
    def of(cls, name: str, pool: NodePoolSpec, context: PoolContext, cluster: Mapping[str, Any],
           opts: Optional[pulumi.ResourceOptions] = None) -> "GpuNodePool":
        """A pool the stack file's rules already validated (GpuPlatform's), on `cluster` (a cluster
        component's `pool_args()`: name, node role, subnets...), built as it is: not checked again."""
        component = cls.__new__(cls)
        component._build(name, pool, context, cluster, opts)
        return component

    def _build(self, name: str, pool: NodePoolSpec, ctx: PoolContext, args: Mapping[str, Any],
               opts: Optional[pulumi.ResourceOptions], own_tags: Optional[Mapping[str, str]] = None) -> None:
        """`args`: what the pool reads of its cluster (GpuNodePoolArgs' cluster keys); the pool is `pool`;
        `own_tags`: more tags on the node group (the environment a program gave the pool)."""
        super().__init__(component_types.public("GpuNodePool"), name, None,
                         options.formerly(opts, "GpuNodePool"))
        from pulumi_aws import eks

        cluster_name = args["cluster_name"]
        inputs = node_group_inputs(ctx, pool)
        group_name = named(cluster_name, lambda c: names.node_group_name(c, pool.name))
        template_name = named(cluster_name, lambda c: names.launch_template_name(c, pool.name))
        template = self._launch_template(name, args, ctx, pool, inputs, group_name, template_name, opts)
        chosen = subnet_indices(ctx, pool, args.get("subnet_zones"))  # EFA pools: one zone (one placement group)
        subnets = (args["subnet_ids"] if chosen is None else
                   pulumi.Output.from_input(args["subnet_ids"]).apply(lambda ids: [list(ids)[i] for i in chosen]))
        self.node_group = eks.NodeGroup(
            name,
            cluster_name=cluster_name,
            node_group_name=group_name,
            node_role_arn=args["node_role_arn"],
            subnet_ids=subnets,
            capacity_type=inputs.capacity_type,
            instance_types=inputs.instance_types,
            ami_type=inputs.ami_type,
            release_version=inputs.release_version,
            version=inputs.version,
            launch_template=eks.NodeGroupLaunchTemplateArgs(
                name=template_name, version=template.latest_version.apply(str)),
            labels=inputs.labels,
            taints=[eks.NodeGroupTaintArgs(**t) for t in inputs.taints],
            scaling_config=eks.NodeGroupScalingConfigArgs(
                min_size=inputs.min_size, max_size=inputs.max_size, desired_size=inputs.desired_size),
            update_config=eks.NodeGroupUpdateConfigArgs(**{_SNAKE[k]: v for k, v in inputs.update_config.items()}),
            node_repair_config=repair_args(inputs.repair),
            tags={**inputs.tags, **(own_tags or {})},
            opts=options.child(self, opts, depends_on=[template], protect=options.protect(opts, inputs.protect),
                               ignore_changes=["scalingConfig.desiredSize"]),
        )
        self.node_group_name = self.node_group.node_group_name
        # EKS makes one per node group: the SDK types each field of its report Optional, as the name is until then
        self.auto_scaling_group_name = self.node_group.resources.apply(_first_asg_name)  # type: ignore[arg-type]
        self.asg_name = self.auto_scaling_group_name
        self.asg_tags = self._tag_auto_scaling_group(name, ctx, pool, cluster_name, opts)
        self.register_outputs({"nodeGroupName": self.node_group.node_group_name, "autoScalingGroup": self.asg_name})

    def _launch_template(self, name: str, args: Mapping[str, Any], ctx: PoolContext, pool: NodePoolSpec,
                         inputs: NodeGroupInputs, group_name: pulumi.Input[str], template_name: pulumi.Input[str],
                         opts: Optional[pulumi.ResourceOptions]) -> "ec2.LaunchTemplate":
        from pulumi_aws import ec2

        image = pool.ami.image
        child = options.child(self, opts)
        efa = lt.efa_interface_count(pool)
        extra: list[pulumi.Input[str]] = list(args.get("security_group_ids") or [])
        groups: Optional[pulumi.Output[list[Any]]] = None
        if efa or extra:
            # Naming any security group stops EKS adding the cluster one: name it ourselves.
            if efa:
                from gpu_platform.resources.efa import efa_security_group

                extra.append(efa_security_group(f"{name}-efa-sg", args["cluster_name"], pool, args.get("vpc_id"),
                                                child).id)
            groups = pulumi.Output.all(args.get("node_security_group_id"), *extra)
        placement = None
        if reservations.placement_group(pool):
            group = ec2.PlacementGroup(
                f"{name}-efa", name=named(args["cluster_name"], lambda c: names.placement_group_name(c, pool.name)),
                strategy="cluster", opts=child)
            placement = ec2.LaunchTemplatePlacementArgs(group_name=group.name)
        user_data: Optional[pulumi.Input[str]] = node_boot.eks_image_user_data(ctx, pool)
        if image.eks_ami_type == "CUSTOM":
            taints = registering_taints(ctx, pool)
            user_data = pulumi.Output.all(args["cluster_name"], args.get("cluster_endpoint"),
                                          args.get("cluster_certificate_authority"), args.get("service_cidr")).apply(
                lambda a: node_boot.ubuntu_user_data(ctx, pool, a[0], a[1], a[2], a[3], inputs.labels, taints))
        volume = lt.image_volume(image.os, pool.disk_size_gib)
        instance_tags = {"Name": group_name, **ctx.tags, **mig_layout_tag(pool)}
        return ec2.LaunchTemplate(
            name,
            name=template_name,
            description=named(args["cluster_name"], lambda c: f"GPU pool {pool.name} of {c}"),
            image_id=pool.ami.image_id if image.eks_ami_type == "CUSTOM" else None,
            user_data=user_data,
            metadata_options=ec2.LaunchTemplateMetadataOptionsArgs(**lt.metadata_options()),
            block_device_mappings=[ec2.LaunchTemplateBlockDeviceMappingArgs(
                device_name=volume["device_name"], ebs=ec2.LaunchTemplateBlockDeviceMappingEbsArgs(**volume["ebs"]))],
            network_interfaces=[ec2.LaunchTemplateNetworkInterfaceArgs(**i, security_groups=groups)
                                for i in lt.efa_interfaces(pool)] or None,
            vpc_security_group_ids=groups if groups is not None and not efa else None,
            placement=placement,
            **_reservation_args(pool),
            tag_specifications=[ec2.LaunchTemplateTagSpecificationArgs(resource_type=r, tags=instance_tags)
                                for r in ("instance", "volume")],
            update_default_version=True,
            opts=child,
        )

    def _tag_auto_scaling_group(self, name: str, ctx: PoolContext, pool: NodePoolSpec,
                                cluster_name: pulumi.Input[str],
                                opts: Optional[pulumi.ResourceOptions]) -> list["autoscaling.Tag"]:
        """Managed node group tags never reach the Auto Scaling group: tag the group itself. A tag is named
        after its key; the cluster's ownership tag, whose key names the cluster, after `owner` when the
        cluster's name is known only at deploy time."""
        from pulumi_aws import autoscaling

        tags: list[tuple[str, pulumi.Input[str], str]] = [
            (key.removeprefix(names.CA_TEMPLATE_PREFIX).replace("/", "-"), key, value)
            for key, value in node_template_tags(ctx, pool).items()]
        if ctx.cluster_name is None:
            owner = pulumi.Output.from_input(cluster_name).apply(names.ca_cluster_tag)
            tags.insert(1, ("cluster-autoscaler-owner", owner, names.CA_OWNED_VALUE))
        return [autoscaling.Tag(f"{name}-{label}", autoscaling_group_name=self.asg_name,
                                tag=autoscaling.TagTagArgs(key=key, value=value, propagate_at_launch=False),
                                opts=options.child(self, opts))
                for label, key, value in tags]


def _reservation_args(pool: NodePoolSpec) -> dict[str, Any]:
    """The launch template's reservation inputs as pulumi_aws Args (decisions/reservations.py decides them)."""
    from pulumi_aws import ec2

    fields = reservations.template_reservation(pool)
    out: dict[str, Any] = {}
    if "capacity_reservation_specification" in fields:
        target = fields["capacity_reservation_specification"]["capacity_reservation_target"]
        out["capacity_reservation_specification"] = ec2.LaunchTemplateCapacityReservationSpecificationArgs(
            capacity_reservation_target=ec2.LaunchTemplateCapacityReservationSpecificationCapacityReservationTargetArgs(
                **target))
    if "instance_market_options" in fields:
        out["instance_market_options"] = ec2.LaunchTemplateInstanceMarketOptionsArgs(**fields["instance_market_options"])
    if "instance_type" in fields:
        out["instance_type"] = fields["instance_type"]
    return out


def _first_asg_name(resources: Sequence["eks.outputs.NodeGroupResource"]) -> Optional[str]:
    """The node group's Auto Scaling group (EKS creates exactly one per managed node group)."""
    groups = resources[0].autoscaling_groups if resources else None
    return groups[0].name if groups else None
