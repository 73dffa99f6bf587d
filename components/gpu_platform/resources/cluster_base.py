"""What every cluster component gives the rest of the platform, created or adopted.

A GPU pool, the operator, monitoring, the model cache and the teams read the same attributes of either:
the cluster's name and endpoint, its network, the node role, a kubeconfig and the Kubernetes provider
every Kubernetes resource of the platform uses explicitly (token from `aws eks get-token`).
"""
from typing import TYPE_CHECKING, Any, Optional

import pulumi

from gpu_platform.render.kubeconfig import kubeconfig_json
from gpu_platform.resources import options

if TYPE_CHECKING:
    import pulumi_kubernetes


class ClusterBase(pulumi.ComponentResource):
    """The outputs Cluster and AdoptedCluster share, and what the platform's other parts wait for."""

    cluster_name: pulumi.Output[str]
    """The EKS cluster's name, for node pools and add-ons that name their cluster."""
    endpoint: pulumi.Output[str]
    """The Kubernetes API server's URL."""
    certificate_authority: pulumi.Output[str]
    """The cluster's CA bundle, base64 PEM as EKS returns it."""
    vpc_id: pulumi.Output[str]
    """The cluster's VPC."""
    private_subnet_ids: pulumi.Output[list[str]]
    """The subnets GPU nodes launch in."""
    node_security_group_id: pulumi.Output[str]
    """The cluster security group nodes join (EKS creates it)."""
    service_cidr: pulumi.Output[str]
    """The cluster's Kubernetes service CIDR (kube-dns is its 10th address)."""
    node_role_arn: pulumi.Output[str]
    """The IAM role GPU node groups run as."""
    kubeconfig: Optional[pulumi.Output[str]]
    """A kubeconfig (secret) that gets a token from `aws eks get-token` with the caller's identity (an adopted
    cluster given a Kubernetes provider and no region has none)."""

    if TYPE_CHECKING:  # set by each subclass; not annotated at run time, for the schema reads annotations as outputs
        system_ready: list[pulumi.Resource]
        """What Kubernetes workloads wait for (system nodes, CoreDNS)."""
        nodes_prerequisites: list[pulumi.Resource]
        """What node groups wait for (cluster, node role, network add-ons)."""
        zone_names: Optional[list[str]]
        """The private subnets' zones in order, when the component decides them."""
        extra_node_security_group_ids: list[pulumi.Input[str]]
        """Security groups GPU nodes join besides the cluster's."""
        local_zone_names: tuple[str, ...]
        local_zone_subnet_ids: Optional[pulumi.Output[list[str]]]

    def _connect(self, name: str, region: Optional[str], k8s_provider: Optional["pulumi_kubernetes.Provider"],
                 opts: Optional[pulumi.ResourceOptions]) -> None:
        """The kubeconfig, and the caller's Kubernetes provider or one made from it."""
        if region is not None:
            self.kubeconfig = pulumi.Output.secret(pulumi.Output.all(
                self.cluster_name, self.endpoint, self.certificate_authority).apply(
                lambda a: kubeconfig_json(a[0], a[1], a[2], region)))
        if k8s_provider is None:
            from pulumi_kubernetes import Provider

            k8s_provider = Provider(f"{name}-k8s", kubeconfig=self.kubeconfig, opts=options.child(self, opts))
        self.k8s_provider: pulumi_kubernetes.Provider = k8s_provider

    # Local Zone subnets the VPC made (node groups only: never the control plane's or a mount target's); typed
    # above, for the schema reads annotations as outputs.
    local_zone_names = ()
    local_zone_subnet_ids = None

    def pool_args(self, cluster_name: Optional[str] = None) -> dict[str, Any]:
        """What a GPU pool component needs from this cluster (GpuNodePoolArgs and KarpenterNodePoolArgs).
        `cluster_name` is the name as a plain string when it is known, so physical names need no Output.
        Pools get the Local Zone subnets after the private ones; only a pool naming a Local Zone uses its."""
        subnets, zones = self.private_subnet_ids, self.zone_names
        if self.local_zone_names and zones is not None:
            subnets = pulumi.Output.all(subnets, self.local_zone_subnet_ids).apply(lambda a: [*a[0], *a[1]])
            zones = [*zones, *self.local_zone_names]
        return {"cluster_name": cluster_name if cluster_name is not None else self.cluster_name,
                "node_role_arn": self.node_role_arn, "subnet_ids": subnets,
                "subnet_zones": zones, "node_security_group_id": self.node_security_group_id,
                "security_group_ids": list(self.extra_node_security_group_ids), "vpc_id": self.vpc_id,
                "cluster_endpoint": self.endpoint, "cluster_certificate_authority": self.certificate_authority,
                "service_cidr": self.service_cidr}

    def _register(self) -> None:
        self.register_outputs({"name": self.cluster_name, "endpoint": self.endpoint, "vpcId": self.vpc_id,
                               "nodeRoleArn": self.node_role_arn})
