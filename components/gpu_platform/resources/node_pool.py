"""GPU node pools: one EKS managed node group and its launch template per `nodePools[]` entry.

Every node-group input is decided in decisions/node_pool.py from the spec alone; the component only
passes it on, adds the launch template (decisions/launch_template.py, decisions/node_boot.py) and tags
the node group's Auto Scaling group with the autoscaler's node template (managed node group tags never
reach it).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

import pulumi

from gpu_platform.decisions import launch_template as lt
from gpu_platform.decisions import node_boot
from gpu_platform.decisions.node_pool import NodeGroupInputs, node_group_inputs, node_taints, node_template_tags
from gpu_platform.decisions.placement import subnet_indices
from gpu_platform.decisions.sharing import mig_layout_tag
from gpu_platform.facts import names

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec, PlatformSpec

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


def repair_args(config: dict[str, Any]):
    """`eks.NodeGroupNodeRepairConfigArgs` for a `repair_config` result."""
    from pulumi_aws import eks

    overrides = [eks.NodeGroupNodeRepairConfigNodeRepairConfigOverrideArgs(
        **{OVERRIDE_ARG_NAMES[k]: v for k, v in o.items()}) for o in config.get("nodeRepairConfigOverrides", ())]
    return eks.NodeGroupNodeRepairConfigArgs(
        **{ARG_NAMES[k]: v for k, v in config.items() if k in ARG_NAMES},
        node_repair_config_overrides=overrides or None)


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

        image = pool.ami.image
        child = pulumi.ResourceOptions(parent=self)
        efa = lt.efa_interface_count(pool)
        groups = None
        if efa or cluster.extra_security_group_ids:
            # Naming any security group stops EKS adding the cluster one: name it ourselves.
            extra = list(cluster.extra_security_group_ids)
            if efa:
                from gpu_platform.resources.efa import efa_security_group

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
