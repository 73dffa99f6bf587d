"""Cluster: a new EKS cluster with its VPC (or existing subnets), control plane, pinned core add-ons,
system nodes and admin access.

`Cluster` takes its own arguments (the stack file's `cluster.create` block, flattened) and checks them with
the stack file's cluster rules. A cluster that already exists is adopted instead (adopted_cluster.py).
"""
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, cast

import pulumi

from gpu_platform.decisions import node_repair
from gpu_platform.decisions.karpenter import discovery_tag
from gpu_platform.decisions.launch_template import image_volume, metadata_options, service_cidr_for
from gpu_platform.facts import catalog, component_types, names
from gpu_platform.resources import options
from gpu_platform.resources.cluster_base import ClusterBase
from gpu_platform.resources.node_iam import control_plane_role, node_role
from gpu_platform.resources.pool_args import PoolTaintArgs
from gpu_platform.resources.typed_args import (
    ArgumentsError, Required, TypedDict, argument_problems, as_arguments, moved,
)
from gpu_platform.spec.errors import SpecError
from gpu_platform.spec.field_path import REGION, ROOT, FieldPath
from gpu_platform.spec.models import ClusterSpec, TaintSpec
from gpu_platform.spec.parse import read_part
from gpu_platform.spec.rules import cluster_rules, region_rules

if TYPE_CHECKING:
    from pulumi_aws import eks

# Add-ons installed before any node group (DaemonSets: healthy with zero nodes); coredns waits for nodes.
ADDONS_BEFORE_NODES = ("vpc-cni", "kube-proxy", "eks-pod-identity-agent")
NODE_NETWORK_ADDONS = ("vpc-cni", "kube-proxy")  # a node is not Ready without these
# Stands in for subnet ids that come as an Output, so the rules know they are given: an id of the right form
# that names no subnet (the real ids are known only when deployed, and AWS checks them).
_GIVEN_LATER = "subnet-00000000000000000"


def system_node_group_labels(selector: Mapping[str, str]) -> dict[str, str]:
    """The platform's system node group carries its role label and whatever the controllers select."""
    return {**names.SYSTEM_NODE_SELECTOR, **selector}


class VpcArgs(TypedDict, total=False):
    """A VPC made for the cluster: one private and one public subnet per zone, NAT egress."""

    cidr: str
    """An IPv4 block between /16 and /20 (default 10.40.0.0/16)."""
    availability_zones: int
    """Zones to span, 2-6 (default 3)."""
    zones: list[str]
    """Explicit zone names (default: <region>a, b, c...)."""
    single_nat_gateway: bool
    """One NAT gateway for all zones (default: one per zone in prod, one elsewhere)."""
    local_zones: list[str]
    """A Local Zone to reach (e.g. us-east-1-dfw-2a, where GB200 UltraServer blocks are sold): a private subnet
    for node groups, routed through the region's NAT gateway."""


class SystemNodesArgs(TypedDict, total=False):
    """The small on-demand node group the operators and controllers run on."""

    release_version: Required[str]
    """The AL2023 AMI release, pinned (e.g. 1.35.7-20260911)."""
    instance_types: list[str]
    """Default ["m6i.large"]."""
    min_size: int
    """Default 2."""
    max_size: int
    """Default 4."""
    disk_size_gib: int
    """Default 50."""


class ClusterArgs(TypedDict, total=False):
    """A new EKS cluster: its version, network, pinned add-ons and system nodes."""

    cluster_name: Required[str]
    """The EKS cluster's name (lowercase, up to 32 characters): every physical name derives from it."""
    kubernetes_version: Required[str]
    """The control plane's Kubernetes minor, one the catalog supports (e.g. 1.35)."""
    region: Required[str]
    """The region the AWS provider deploys to (zone names and the kubeconfig use it)."""
    addons: Required[dict[str, str]]
    """Add-on -> exact version, for every core add-on (vpc-cni, kube-proxy, coredns, eks-pod-identity-agent)."""
    system_nodes: Required[SystemNodesArgs]
    """The on-demand node group the operators and controllers run on."""
    vpc: VpcArgs
    """Make a VPC (this or `subnetIds`)."""
    subnet_ids: pulumi.Input[list[str]]
    """Private subnets of an existing VPC (this or `vpc`)."""
    endpoint_public_access: bool
    """Default true."""
    public_access_cidrs: list[str]
    """Who reaches the public endpoint (default 0.0.0.0/0, which prod refuses: list networks or close it)."""
    secrets_kms_key_arn: str
    """Envelope-encrypt Kubernetes secrets with this KMS key (cannot be removed once set)."""
    admin_role_arns: list[str]
    """IAM roles made cluster admins through access entries."""
    system_node_selector: dict[str, str]
    """Labels the system nodes carry besides gpu-platform.io/role=system (what the controllers select)."""
    environment: str
    """dev, staging or prod: prod protects the cluster and its system nodes and turns on deletion protection."""
    tags: dict[str, str]
    """Tags for the system nodes' instances and volumes."""
    gpu_taints: list[PoolTaintArgs]
    """Extra taints of the GPU pools: the node monitoring agent's DCGM engine tolerates them."""
    karpenter_discovery: bool
    """Tag the subnets a VPC gets for Karpenter's EC2NodeClasses to find."""


@dataclass(frozen=True)
class ClusterSettings:
    cluster: ClusterSpec
    region: str
    prod: bool = False
    tags: Mapping[str, str] = field(default_factory=dict)
    gpu_taints: tuple[TaintSpec, ...] = ()
    karpenter_discovery: bool = False


class Cluster(ClusterBase):
    """A new EKS cluster (API authentication, control-plane logs, pinned add-ons), its VPC or existing
    subnets, an on-demand system node group and cluster-admin access entries."""

    kubeconfig: pulumi.Output[str]
    """A kubeconfig (secret) that gets a token from `aws eks get-token` with the caller's identity."""

    def __init__(self, name: str, args: ClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        self._build(name, cluster_settings(name, args), args.get("subnet_ids"), opts)

    @classmethod
    def of(cls, name: str, settings: ClusterSettings, opts: Optional[pulumi.ResourceOptions] = None) -> "Cluster":
        """A cluster the stack file's rules already validated (GpuPlatform's), built as it is: not checked again."""
        component = cls.__new__(cls)
        create = settings.cluster.create
        component._build(name, settings, create.subnet_ids if create is not None else None, opts)
        return component

    def _build(self, name: str, settings: ClusterSettings, subnet_ids: Optional[pulumi.Input[list[str]]],
               opts: Optional[pulumi.ResourceOptions]) -> None:
        """`subnet_ids`: the existing subnets as given (Outputs included), or None with a VPC to create."""
        super().__init__(component_types.public("Cluster"), name, None,
                         options.formerly(opts, "Cluster"))
        c = settings.cluster
        role, attachments = node_role(f"{name}-nodes", c.name, options.child(self, opts))
        self.node_role_arn = role.arn
        self.nodes_prerequisites = list(attachments)
        self.extra_node_security_group_ids = []
        self._create(name, settings, subnet_ids, opts)
        self._connect(name, settings.region, None, opts)
        self._register()

    def _create(self, name: str, settings: ClusterSettings, subnet_ids: Optional[pulumi.Input[list[str]]],
                opts: Optional[pulumi.ResourceOptions]) -> None:
        from pulumi_aws import eks

        c, prod = settings.cluster, settings.prod
        create = c.create
        assert create is not None  # a Cluster is built from the stack file's cluster.create block
        child = options.child(self, opts)
        network_config: Optional[eks.ClusterKubernetesNetworkConfigArgs] = None
        private: pulumi.Output[list[str]]
        if create.vpc is not None:
            from gpu_platform.decisions.network import zones
            from gpu_platform.resources.network import Network

            self.network = Network(f"{name}-network", c.name, create.vpc, settings.region, prod,
                                   discovery_tag(c.name) if settings.karpenter_discovery else {}, opts=child)
            private = self.network.private_subnet_ids
            self.zone_names = zones(settings.region, create.vpc)  # the private subnets' zones, in order
            self.local_zone_names = tuple(create.vpc.local_zones or ())
            self.local_zone_subnet_ids = self.network.local_zone_subnet_ids
            network_config = eks.ClusterKubernetesNetworkConfigArgs(
                ip_family="ipv4", service_ipv4_cidr=service_cidr_for(create.vpc.cidr))
        else:
            assert subnet_ids is not None  # the cluster rules: a VPC or subnet ids
            private = pulumi.Output.from_input(subnet_ids)
            self.zone_names = None
        cp_role, cp_attachments = control_plane_role(f"{name}-control-plane", c.name, child)
        encryption: Optional[eks.ClusterEncryptionConfigArgs] = None
        if create.secrets_kms_key_arn:
            encryption = eks.ClusterEncryptionConfigArgs(
                resources=["secrets"], provider=eks.ClusterEncryptionConfigProviderArgs(key_arn=create.secrets_kms_key_arn))
        keep = options.protect(opts, prod)
        self.cluster = eks.Cluster(
            name,
            name=c.name,
            version=c.kubernetes_version,
            role_arn=cp_role.arn,
            vpc_config=eks.ClusterVpcConfigArgs(
                subnet_ids=private, endpoint_private_access=True,
                endpoint_public_access=create.endpoint_public_access,
                public_access_cidrs=create.public_access_cidrs if create.endpoint_public_access else None),
            access_config=eks.ClusterAccessConfigArgs(
                authentication_mode="API", bootstrap_cluster_creator_admin_permissions=True),
            # The core add-ons are installed below as pinned, managed add-ons instead.
            bootstrap_self_managed_addons=False,
            kubernetes_network_config=network_config,
            enabled_cluster_log_types=list(catalog.CLUSTER_LOG_TYPES),
            encryption_config=encryption,
            deletion_protection=keep,
            opts=options.child(self, opts, protect=keep, depends_on=cp_attachments),
        )
        self.cluster_name = self.cluster.name
        self.endpoint = self.cluster.endpoint
        # EKS returns the CA's data and the service range once the cluster exists; the SDK types both Optional.
        self.certificate_authority = self.cluster.certificate_authority.apply(lambda ca: cast(str, ca.data))
        self.vpc_id = self.cluster.vpc_config.vpc_id
        self.node_security_group_id = self.cluster.vpc_config.cluster_security_group_id
        self.service_cidr = self.cluster.kubernetes_network_config.apply(lambda k: cast(str, k.service_ipv4_cidr))
        self.private_subnet_ids = private

        before = {a: self._addon(name, a, create.addons[a], [], opts) for a in ADDONS_BEFORE_NODES}
        # Node groups name the cluster by its plain name (stable), so they wait for it explicitly.
        self.nodes_prerequisites += [self.cluster, *(before[a] for a in NODE_NETWORK_ADDONS)]
        system = self._system_nodes(name, settings, opts)
        coredns = self._addon(name, "coredns", create.addons["coredns"], [system], opts)
        self.system_ready = [system, *before.values(), coredns]
        self._admin_access(name, c, opts)
        if catalog.NODE_MONITORING_AGENT_ADDON in create.addons:  # GPU faults become node conditions repair acts on
            self._addon(name, catalog.NODE_MONITORING_AGENT_ADDON, create.addons[catalog.NODE_MONITORING_AGENT_ADDON],
                        [], opts, config=node_repair.agent_configuration(settings.gpu_taints))

    def _addon(self, name: str, addon: str, version: str, depends_on: Sequence[pulumi.Resource],
               opts: Optional[pulumi.ResourceOptions], config: Optional[Mapping[str, Any]] = None) -> "eks.Addon":
        from pulumi_aws import eks

        config = config or catalog.ADDON_CONFIGURATION.get(addon)
        return eks.Addon(f"{name}-{addon}", cluster_name=self.cluster.name, addon_name=addon, addon_version=version,
                         configuration_values=json.dumps(config) if config else None,
                         resolve_conflicts_on_create="OVERWRITE", resolve_conflicts_on_update="OVERWRITE",
                         opts=options.child(self, opts, depends_on=depends_on))

    def _system_nodes(self, name: str, settings: ClusterSettings,
                      opts: Optional[pulumi.ResourceOptions]) -> "eks.NodeGroup":
        """A small on-demand, untainted node group where the operators and the autoscaler run."""
        from pulumi_aws import ec2, eks

        c, create = settings.cluster, settings.cluster.create
        assert create is not None  # a Cluster is built from the stack file's cluster.create block
        nodes, cluster_name = create.system_nodes, c.name
        volume = image_volume("al2023", nodes.disk_size_gib)
        template = ec2.LaunchTemplate(
            f"{name}-system",
            name=names.launch_template_name(cluster_name, names.SYSTEM_ROLE),
            description=f"system nodes of {cluster_name}",
            metadata_options=ec2.LaunchTemplateMetadataOptionsArgs(**metadata_options()),
            block_device_mappings=[ec2.LaunchTemplateBlockDeviceMappingArgs(
                device_name=volume["device_name"], ebs=ec2.LaunchTemplateBlockDeviceMappingEbsArgs(**volume["ebs"]))],
            tag_specifications=[ec2.LaunchTemplateTagSpecificationArgs(
                resource_type=r, tags={"Name": names.system_node_group_name(cluster_name), **settings.tags})
                for r in ("instance", "volume")],
            update_default_version=True,
            opts=options.child(self, opts),
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
            version=c.kubernetes_version,
            launch_template=eks.NodeGroupLaunchTemplateArgs(
                name=names.launch_template_name(cluster_name, names.SYSTEM_ROLE),
                version=template.latest_version.apply(str)),
            labels=system_node_group_labels(c.system_node_selector),
            scaling_config=eks.NodeGroupScalingConfigArgs(
                min_size=nodes.min_size, max_size=nodes.max_size, desired_size=nodes.min_size),
            update_config=eks.NodeGroupUpdateConfigArgs(max_unavailable=1),
            node_repair_config=eks.NodeGroupNodeRepairConfigArgs(enabled=True),
            opts=options.child(self, opts, protect=options.protect(opts, settings.prod),
                               ignore_changes=["scalingConfig.desiredSize"],
                               depends_on=[template, *self.nodes_prerequisites]),
        )

    def _admin_access(self, name: str, c: ClusterSpec, opts: Optional[pulumi.ResourceOptions]) -> None:
        """Cluster-admin access entries for the admin roles (API authentication mode)."""
        from pulumi_aws import eks

        for i, arn in enumerate(c.admin_role_arns):
            entry = eks.AccessEntry(f"{name}-admin-{i}", cluster_name=self.cluster.name, principal_arn=arn,
                                    type="STANDARD", opts=options.child(self, opts))
            eks.AccessPolicyAssociation(
                f"{name}-admin-{i}", cluster_name=self.cluster.name, principal_arn=arn,
                policy_arn=catalog.EKS_CLUSTER_ADMIN_ACCESS_POLICY,
                access_scope=eks.AccessPolicyAssociationAccessScopeArgs(type="cluster"),
                opts=options.child(self, opts, depends_on=[entry]))


_CREATE_FIELDS = ("vpc", "endpoint_public_access", "public_access_cidrs", "addons", "system_nodes",
                  "secrets_kms_key_arn")


def cluster_settings(name: str, args: Mapping[str, Any]) -> ClusterSettings:
    """The cluster from Cluster's arguments, checked with the stack file's cluster rules; SpecError names
    each argument that is wrong."""
    args = as_arguments("Cluster", name, args, ClusterArgs)
    where = f"Cluster {name!r}: "
    problems = argument_problems(args, ClusterArgs)
    create = {k: args[k] for k in _CREATE_FIELDS if k in args}
    subnets = args.get("subnet_ids")
    if subnets is not None:
        given = list(subnets) if isinstance(subnets, (list, tuple)) else [_GIVEN_LATER]
        create["subnet_ids"] = [s if isinstance(s, str) else _GIVEN_LATER for s in given]
    data: dict[str, Any] = {
        "name": args.get("cluster_name"), "kubernetes_version": args.get("kubernetes_version"), "create": create,
        **{k: args[k] for k in ("admin_role_arns", "system_node_selector") if k in args}}
    try:
        cluster = read_part(ClusterSpec, data)
        taints = [read_part(TaintSpec, t, FieldPath.of("gpuTaints").index(i))
                  for i, t in enumerate(args.get("gpu_taints") or [])]
    except SpecError as err:
        raise ArgumentsError(where, list(dict.fromkeys(_flat(p) for p in [*problems, *err.problems]))) from None
    vpc = cluster.create.vpc if cluster.create else None
    zones = [(FieldPath.of("vpc").field(k).index(j), z)
             for k, found in (("zones", vpc.zones), ("localZones", vpc.local_zones))
             for j, z in enumerate(found or [])] if vpc else []
    found = [*cluster_rules(cluster, at=FieldPath(), prod=args.get("environment") == "prod"),
             *region_rules(args.get("region"), zones)]
    problems += [f"{path}: {message}" for path, message in found if path != REGION]  # the region: above
    if problems:
        raise ArgumentsError(where, [_flat(p) for p in problems])
    return ClusterSettings(cluster, str(args["region"]), args.get("environment") == "prod", dict(args.get("tags") or {}),
                           tuple(taints), bool(args.get("karpenter_discovery")))


def _flat(problem: str) -> str:
    """A model path as the argument's: `create` is flattened into the arguments, `name` is clusterName."""
    return moved(moved(problem, _CREATE, ROOT), _NAME, _CLUSTER_NAME)


_CREATE, _NAME, _CLUSTER_NAME = FieldPath.of("create"), FieldPath.of("name"), FieldPath.of("clusterName")
