"""GPU node pools: one EKS managed node group and its launch template per `nodePools[]` entry.

Every node-group input is decided by `node_group_inputs(spec, pool)` from the spec alone; the component
only passes it on. Inputs that make EKS replace a node group (amiType, capacityType, clusterName,
instanceTypes, launch template name, nodeGroupName, nodeRoleArn, subnets; disk size lives in the launch
template) therefore change only when the pool's own replace-forcing fields change: a new team, an
alert threshold or another pool never touches them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

import pulumi

from . import names
from .node_repair import repair_args, repair_config
from .sharing import mig_layout_tag, operand_labels, sharing_labels

if TYPE_CHECKING:
    from .spec import NodePoolSpec, PlatformSpec

CAPACITY_TYPES = {"spot": "SPOT", "on-demand": "ON_DEMAND"}


def node_labels(pool: "NodePoolSpec") -> dict[str, str]:
    """Labels every node of the pool carries from registration (agreed with the GPU Operator)."""
    gpu = pool.gpu
    return {
        names.POOL_LABEL: pool.name,
        names.GPU_PRODUCT_LABEL: gpu.product_label,
        names.ACCELERATOR_LABEL: names.accelerator_value(gpu.key),
        **sharing_labels(pool),
        **operand_labels(pool),
        **({names.CRITICAL_LABEL: "true"} if pool.critical else {}),  # policies hold critical pools to on-demand
        **({names.EFA_LABEL: "true"} if pool.efa else {}),  # the EFA device plugin runs here
        **pool.labels,
    }


def node_taints(pool: "NodePoolSpec") -> list[tuple[str, str, str]]:
    """(key, value, Kubernetes effect): the GPU taint first, then the pool's own."""
    return [(names.GPU_TAINT_KEY, names.GPU_TAINT_VALUE, "NoSchedule"),
            *((t.key, t.value, t.effect) for t in pool.taints)]


@dataclass(frozen=True)
class NodeGroupInputs:
    """Everything a GPU pool's node group is created with, in EKS API terms."""

    cluster_name: str
    node_group_name: str
    launch_template_name: str
    capacity_type: str
    instance_types: list[str]
    ami_type: Optional[str]  # None: the image is pinned in the launch template (Ubuntu)
    release_version: Optional[str]
    version: Optional[str]
    labels: dict[str, str]
    taints: list[dict[str, str]]  # EKS API effect spelling
    min_size: int
    max_size: int
    desired_size: int
    update_config: dict[str, Any]  # EKS API terms: maxUnavailable or maxUnavailablePercentage, updateStrategy
    protect: bool
    tags: dict[str, str] = field(default_factory=dict)
    repair: dict = field(default_factory=dict)  # nodeRepairConfig, EKS API field names


def node_group_inputs(spec: "PlatformSpec", pool: "NodePoolSpec") -> NodeGroupInputs:
    cluster, image = spec.cluster.name, pool.ami.image
    custom = image.eks_ami_type == "CUSTOM"
    return NodeGroupInputs(
        cluster_name=cluster,
        node_group_name=names.node_group_name(cluster, pool.name),
        launch_template_name=names.launch_template_name(cluster, pool.name),
        capacity_type=CAPACITY_TYPES[pool.capacity_type],
        instance_types=list(pool.instance_types),
        # EKS rejects amiType, releaseVersion and version when the launch template names an image.
        ami_type=None if custom else image.eks_ami_type,
        release_version=None if custom else pool.ami.release_version,
        version=None if custom else spec.cluster.kubernetes_version,
        labels=node_labels(pool),
        taints=[{"key": k, "value": v, "effect": names.TAINT_EFFECTS[e]} for k, v, e in node_taints(pool)],
        min_size=pool.min_size,
        max_size=pool.max_size,
        desired_size=pool.min_size,  # only at creation: the autoscaler owns it afterwards (ignore_changes)
        update_config=update_config(spec, pool),
        protect=spec.pool_protected(pool),
        tags={names.POOL_LABEL: pool.name},
        repair=repair_config(spec, pool),
    )


_SNAKE = {"maxUnavailable": "max_unavailable", "maxUnavailablePercentage": "max_unavailable_percentage",
          "updateStrategy": "update_strategy"}


def update_config(spec: "PlatformSpec", pool: "NodePoolSpec") -> dict[str, Any]:
    """How EKS rolls the pool's nodes on a new AMI release or launch template version: at most
    `maxUnavailable` nodes (or a percentage) cordoned and drained at once; `MINIMAL` terminates old
    nodes before launching new ones, for pools whose GPUs cannot be doubled during a roll."""
    limit = spec.pool_max_unavailable(pool)
    config: dict[str, Any] = ({"maxUnavailablePercentage": int(limit.rstrip("%"))} if isinstance(limit, str)
                              else {"maxUnavailable": limit})
    config["updateStrategy"] = pool.update_strategy.upper()
    return config


@dataclass
class PoolCluster:
    """What a pool needs from the cluster (all Outputs or plain values)."""

    endpoint: pulumi.Input[str]
    certificate_authority: pulumi.Input[str]
    service_cidr: pulumi.Input[str]
    subnet_ids: pulumi.Input[list]
    node_security_group_id: pulumi.Input[str]
    node_role_arn: pulumi.Input[str]
    extra_security_group_ids: list[str] = field(default_factory=list)
    depends_on: list[pulumi.Resource] = field(default_factory=list)
    vpc_id: Optional[pulumi.Input[str]] = None  # for the EFA security group
    zone_names: Optional[list[str]] = None  # the private subnets' zones in order, when the stack made the VPC


class GpuNodePool(pulumi.ComponentResource):
    """A GPU managed node group, its launch template, and the autoscaler's node-template tags."""

    def __init__(self, name: str, spec: "PlatformSpec", pool: "NodePoolSpec", cluster: PoolCluster,
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpu-platform:node_pool:GpuNodePool", name, None, opts)
        from pulumi_aws import eks

        from .autoscaler import node_template_tags

        from .placement import subnet_indices

        inputs = node_group_inputs(spec, pool)
        template = self._launch_template(name, spec, pool, inputs, cluster)
        chosen = subnet_indices(spec, pool, cluster.zone_names)  # EFA pools: one zone (one placement group)
        subnets = (cluster.subnet_ids if chosen is None else
                   pulumi.Output.from_input(cluster.subnet_ids).apply(lambda ids: [list(ids)[i] for i in chosen]))
        self.node_group = eks.NodeGroup(
            name,
            cluster_name=inputs.cluster_name,
            node_group_name=inputs.node_group_name,
            node_role_arn=cluster.node_role_arn,
            subnet_ids=subnets,
            capacity_type=inputs.capacity_type,
            instance_types=inputs.instance_types,
            ami_type=inputs.ami_type,
            release_version=inputs.release_version,
            version=inputs.version,
            launch_template=eks.NodeGroupLaunchTemplateArgs(
                name=inputs.launch_template_name, version=template.latest_version.apply(str)),
            labels=inputs.labels,
            taints=[eks.NodeGroupTaintArgs(**t) for t in inputs.taints],
            scaling_config=eks.NodeGroupScalingConfigArgs(
                min_size=inputs.min_size, max_size=inputs.max_size, desired_size=inputs.desired_size),
            update_config=eks.NodeGroupUpdateConfigArgs(**{_SNAKE[k]: v for k, v in inputs.update_config.items()}),
            node_repair_config=repair_args(inputs.repair),
            tags=inputs.tags,
            opts=pulumi.ResourceOptions(parent=self, protect=inputs.protect, depends_on=[template, *cluster.depends_on],
                                        ignore_changes=["scalingConfig.desiredSize"]),
        )
        self.asg_name = self.node_group.resources.apply(_first_asg_name)
        self.asg_tags = self._tag_auto_scaling_group(name, node_template_tags(spec, pool))
        self.register_outputs({"nodeGroupName": self.node_group.node_group_name, "autoScalingGroup": self.asg_name})

    def _launch_template(self, name: str, spec: "PlatformSpec", pool: "NodePoolSpec", inputs: NodeGroupInputs,
                         cluster: PoolCluster):
        from pulumi_aws import ec2

        from . import launch_template as lt
        from . import node_boot

        image = pool.ami.image
        child = pulumi.ResourceOptions(parent=self)
        efa = lt.efa_interface_count(pool)
        groups = None
        if efa or cluster.extra_security_group_ids:
            # Naming any security group stops EKS adding the cluster one: name it ourselves.
            extra = list(cluster.extra_security_group_ids)
            if efa:
                from .efa import efa_security_group

                extra.append(efa_security_group(f"{name}-efa-sg", spec, pool, cluster.vpc_id, self).id)
            groups = pulumi.Output.all(cluster.node_security_group_id, *extra)
        placement = None
        if efa:
            group = ec2.PlacementGroup(f"{name}-efa", name=names.placement_group_name(spec.cluster.name, pool.name),
                                       strategy="cluster", opts=child)
            placement = ec2.LaunchTemplatePlacementArgs(group_name=group.name)
        user_data = node_boot.eks_image_user_data(spec, pool)
        if image.eks_ami_type == "CUSTOM":
            taints = node_taints(pool)
            user_data = pulumi.Output.all(cluster.endpoint, cluster.certificate_authority, cluster.service_cidr).apply(
                lambda a: node_boot.ubuntu_user_data(spec, pool, a[0], a[1], a[2], inputs.labels, taints))
        volume = lt.image_volume(image.os, pool.disk_size_gib)
        instance_tags = {"Name": inputs.node_group_name, **spec.tags, **mig_layout_tag(pool)}
        return ec2.LaunchTemplate(
            name,
            name=inputs.launch_template_name,
            description=f"GPU pool {pool.name} of {spec.cluster.name}",
            image_id=pool.ami.image_id if image.eks_ami_type == "CUSTOM" else None,
            user_data=user_data,
            metadata_options=ec2.LaunchTemplateMetadataOptionsArgs(**lt.metadata_options()),
            block_device_mappings=[ec2.LaunchTemplateBlockDeviceMappingArgs(
                device_name=volume["device_name"], ebs=ec2.LaunchTemplateBlockDeviceMappingEbsArgs(**volume["ebs"]))],
            network_interfaces=[ec2.LaunchTemplateNetworkInterfaceArgs(**i, security_groups=groups)
                                for i in lt.efa_interfaces(efa)] or None,
            vpc_security_group_ids=groups if groups is not None and not efa else None,
            placement=placement,
            tag_specifications=[ec2.LaunchTemplateTagSpecificationArgs(resource_type=r, tags=instance_tags)
                                for r in ("instance", "volume")],
            update_default_version=True,
            opts=child,
        )

    def _tag_auto_scaling_group(self, name: str, tags: dict[str, str]) -> list:
        """Managed node group tags never reach the Auto Scaling group: tag the group itself."""
        from pulumi_aws import autoscaling

        return [
            autoscaling.Tag(f"{name}-{key.removeprefix(names.CA_TEMPLATE_PREFIX).replace('/', '-')}",
                            autoscaling_group_name=self.asg_name,
                            tag=autoscaling.TagTagArgs(key=key, value=value, propagate_at_launch=False),
                            opts=pulumi.ResourceOptions(parent=self))
            for key, value in tags.items()
        ]


def _first_asg_name(resources) -> Optional[str]:
    """The node group's Auto Scaling group (EKS creates exactly one per managed node group)."""
    groups = resources[0].autoscaling_groups if resources else None
    return groups[0].name if groups else None
