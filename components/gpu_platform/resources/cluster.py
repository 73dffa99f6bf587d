"""The EKS cluster: created (VPC, control plane, core add-ons, system nodes) or adopted by name.

Either way the component exposes the same attributes, including the Kubernetes provider every
Kubernetes resource of the platform must use explicitly (token from `aws eks get-token`).
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Optional

import pulumi

from gpu_platform.decisions import node_repair
from gpu_platform.decisions.launch_template import image_volume, metadata_options, service_cidr_for
from gpu_platform.facts import catalog, names
from gpu_platform.render.kubeconfig import kubeconfig_json
from gpu_platform.resources.node_iam import control_plane_role, node_role

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec

# Add-ons installed before any node group (DaemonSets: healthy with zero nodes); coredns waits for nodes.
ADDONS_BEFORE_NODES = ("vpc-cni", "kube-proxy", "eks-pod-identity-agent")
NODE_NETWORK_ADDONS = ("vpc-cni", "kube-proxy")  # a node is not Ready without these


def system_node_group_labels(selector: dict[str, str]) -> dict[str, str]:
    """The platform's system node group carries its role label and whatever the controllers select."""
    return {**names.SYSTEM_NODE_SELECTOR, **selector}


class Cluster(pulumi.ComponentResource):
    """Attributes: name, endpoint, certificate_authority, k8s_provider, vpc_id, private_subnet_ids,
    node_security_group_id, node_role_arn, service_cidr, kubeconfig (secret), system_ready
    (what Kubernetes workloads wait for) and nodes_prerequisites (what node groups wait for)."""

    def __init__(self, name: str, spec: "PlatformSpec", region: str, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpu-platform:cluster:Cluster", name, None, opts)
        self.spec = spec
        child = pulumi.ResourceOptions(parent=self)
        role, attachments = node_role(f"{name}-nodes", spec.cluster.name, child)
        self.node_role_arn = role.arn
        self.nodes_prerequisites: list[pulumi.Resource] = list(attachments)
        self.system_ready: list[pulumi.Resource] = []
        if spec.cluster.create is not None:
            self._create(name, spec, region)
        else:
            self._adopt(spec)
        self.kubeconfig = pulumi.Output.secret(pulumi.Output.all(self.name, self.endpoint, self.certificate_authority).apply(
            lambda a: kubeconfig_json(a[0], a[1], a[2], region)))
        from pulumi_kubernetes import Provider

        self.k8s_provider = Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, opts=child)
        self.register_outputs({"name": self.name, "endpoint": self.endpoint, "vpcId": self.vpc_id,
                               "nodeRoleArn": self.node_role_arn})

    def pool_args(self) -> dict:
        """What a GPU pool component needs from this cluster (GpuNodePoolArgs and KarpenterNodePoolArgs)."""
        return {"cluster_name": self.spec.cluster.name, "node_role_arn": self.node_role_arn,
                "subnet_ids": self.private_subnet_ids, "subnet_zones": self.zone_names,
                "node_security_group_id": self.node_security_group_id,
                "security_group_ids": list(self.extra_node_security_group_ids), "vpc_id": self.vpc_id,
                "cluster_endpoint": self.endpoint, "cluster_certificate_authority": self.certificate_authority,
                "service_cidr": self.service_cidr}

    # --- existing cluster ---

    def _adopt(self, spec: "PlatformSpec") -> None:
        from pulumi_aws import eks

        found = eks.get_cluster_output(name=spec.cluster.name, opts=pulumi.InvokeOutputOptions(parent=self))
        self.name = found.name
        self.endpoint = found.endpoint
        self.certificate_authority = found.certificate_authorities.apply(lambda cas: cas[0].data)
        self.vpc_id = found.vpc_config.vpc_id
        self.node_security_group_id = found.vpc_config.cluster_security_group_id
        self.service_cidr = found.kubernetes_network_configs.apply(lambda k: k[0].service_ipv4_cidr)
        self.private_subnet_ids = pulumi.Output.from_input(list(spec.cluster.existing.subnet_ids))
        self.extra_node_security_group_ids = list(spec.cluster.existing.node_security_group_ids)
        self.zone_names = None  # existing subnets: used in the order listed

    # --- created cluster ---

    def _create(self, name: str, spec: "PlatformSpec", region: str) -> None:
        from pulumi_aws import eks

        create, cluster_name = spec.cluster.create, spec.cluster.name
        child = pulumi.ResourceOptions(parent=self)
        network_config = None
        if create.vpc is not None:
            from gpu_platform.decisions.network import zones
            from gpu_platform.resources.network import Network

            self.network = Network(f"{name}-network", spec, region, opts=child)
            subnet_ids = self.network.private_subnet_ids
            self.zone_names = zones(region, create.vpc)  # the private subnets' zones, in order
            network_config = eks.ClusterKubernetesNetworkConfigArgs(
                ip_family="ipv4", service_ipv4_cidr=service_cidr_for(create.vpc.cidr))
        else:
            subnet_ids = pulumi.Output.from_input(list(create.subnet_ids))
            self.zone_names = None
        cp_role, cp_attachments = control_plane_role(f"{name}-control-plane", cluster_name, child)
        encryption = None
        if create.secrets_kms_key_arn:
            encryption = eks.ClusterEncryptionConfigArgs(
                resources=["secrets"], provider=eks.ClusterEncryptionConfigProviderArgs(key_arn=create.secrets_kms_key_arn))
        self.cluster = eks.Cluster(
            name,
            name=cluster_name,
            version=spec.cluster.kubernetes_version,
            role_arn=cp_role.arn,
            vpc_config=eks.ClusterVpcConfigArgs(
                subnet_ids=subnet_ids, endpoint_private_access=True,
                endpoint_public_access=create.endpoint_public_access,
                public_access_cidrs=create.public_access_cidrs if create.endpoint_public_access else None),
            access_config=eks.ClusterAccessConfigArgs(
                authentication_mode="API", bootstrap_cluster_creator_admin_permissions=True),
            # The core add-ons are installed below as pinned, managed add-ons instead.
            bootstrap_self_managed_addons=False,
            kubernetes_network_config=network_config,
            enabled_cluster_log_types=list(catalog.CLUSTER_LOG_TYPES),
            encryption_config=encryption,
            deletion_protection=spec.prod,
            opts=pulumi.ResourceOptions(parent=self, protect=spec.prod, depends_on=cp_attachments),
        )
        self.name = self.cluster.name
        self.endpoint = self.cluster.endpoint
        self.certificate_authority = self.cluster.certificate_authority.apply(lambda ca: ca.data)
        self.vpc_id = self.cluster.vpc_config.vpc_id
        self.node_security_group_id = self.cluster.vpc_config.cluster_security_group_id
        self.service_cidr = self.cluster.kubernetes_network_config.apply(lambda k: k.service_ipv4_cidr)
        self.private_subnet_ids = subnet_ids
        self.extra_node_security_group_ids = []

        before = {a: self._addon(name, a, create.addons[a], []) for a in ADDONS_BEFORE_NODES}
        # Node groups name the cluster by its spec name (stable), so they wait for it explicitly.
        self.nodes_prerequisites += [self.cluster, *(before[a] for a in NODE_NETWORK_ADDONS)]
        system = self._system_nodes(name, spec)
        coredns = self._addon(name, "coredns", create.addons["coredns"], [system])
        self.system_ready = [system, *before.values(), coredns]
        self._admin_access(name, spec)
        if node_repair.agent_installed(spec):  # turns GPU faults into node conditions repair acts on
            self._addon(name, catalog.NODE_MONITORING_AGENT_ADDON, create.addons[catalog.NODE_MONITORING_AGENT_ADDON],
                        [], config=node_repair.agent_configuration(spec))

    def _addon(self, name: str, addon: str, version: str, depends_on: list, config: Optional[dict] = None):
        from pulumi_aws import eks

        config = config or catalog.ADDON_CONFIGURATION.get(addon)
        return eks.Addon(f"{name}-{addon}", cluster_name=self.cluster.name, addon_name=addon, addon_version=version,
                         configuration_values=json.dumps(config) if config else None,
                         resolve_conflicts_on_create="OVERWRITE", resolve_conflicts_on_update="OVERWRITE",
                         opts=pulumi.ResourceOptions(parent=self, depends_on=depends_on))

    def _system_nodes(self, name: str, spec: "PlatformSpec"):
        """A small on-demand, untainted node group where the operators and the autoscaler run."""
        from pulumi_aws import ec2, eks

        nodes, cluster_name = spec.cluster.create.system_nodes, spec.cluster.name
        volume = image_volume("al2023", nodes.disk_size_gib)
        template = ec2.LaunchTemplate(
            f"{name}-system",
            name=names.launch_template_name(cluster_name, names.SYSTEM_ROLE),
            description=f"system nodes of {cluster_name}",
            metadata_options=ec2.LaunchTemplateMetadataOptionsArgs(**metadata_options()),
            block_device_mappings=[ec2.LaunchTemplateBlockDeviceMappingArgs(
                device_name=volume["device_name"], ebs=ec2.LaunchTemplateBlockDeviceMappingEbsArgs(**volume["ebs"]))],
            tag_specifications=[ec2.LaunchTemplateTagSpecificationArgs(
                resource_type=r, tags={"Name": names.system_node_group_name(cluster_name), **spec.tags})
                for r in ("instance", "volume")],
            update_default_version=True,
            opts=pulumi.ResourceOptions(parent=self),
        )
        return eks.NodeGroup(
            f"{name}-system",
            cluster_name=cluster_name,
            node_group_name=names.system_node_group_name(cluster_name),
            node_role_arn=self.node_role_arn,
            subnet_ids=self.private_subnet_ids,
            capacity_type="ON_DEMAND",
            instance_types=list(nodes.instance_types),
            ami_type=catalog.SYSTEM_NODE_AMI_TYPE,
            release_version=nodes.release_version,
            version=spec.cluster.kubernetes_version,
            launch_template=eks.NodeGroupLaunchTemplateArgs(
                name=names.launch_template_name(cluster_name, names.SYSTEM_ROLE),
                version=template.latest_version.apply(str)),
            labels=system_node_group_labels(spec.cluster.system_node_selector),
            scaling_config=eks.NodeGroupScalingConfigArgs(
                min_size=nodes.min_size, max_size=nodes.max_size, desired_size=nodes.min_size),
            update_config=eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
            node_repair_config=eks.NodeGroupNodeRepairConfigArgs(enabled=True),
            opts=pulumi.ResourceOptions(parent=self, protect=spec.prod, ignore_changes=["scalingConfig.desiredSize"],
                                        depends_on=[template, *self.nodes_prerequisites]),
        )

    def _admin_access(self, name: str, spec: "PlatformSpec") -> None:
        """Cluster-admin access entries for the stack's admin roles (API authentication mode)."""
        from pulumi_aws import eks

        for i, arn in enumerate(spec.cluster.admin_role_arns):
            entry = eks.AccessEntry(f"{name}-admin-{i}", cluster_name=self.cluster.name, principal_arn=arn,
                                    type="STANDARD", opts=pulumi.ResourceOptions(parent=self))
            eks.AccessPolicyAssociation(
                f"{name}-admin-{i}", cluster_name=self.cluster.name, principal_arn=arn,
                policy_arn=catalog.EKS_CLUSTER_ADMIN_ACCESS_POLICY,
                access_scope=eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
                opts=pulumi.ResourceOptions(parent=self, depends_on=[entry]))
