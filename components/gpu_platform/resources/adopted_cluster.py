"""AdoptedCluster: an EKS cluster that already exists (made by pulumi-eks, pulumi_aws, Terraform or by
hand), looked up by name, so GPU pools and the rest of the platform can be added to it.

Nothing of the cluster itself is created or changed: the component reads the endpoint, CA, VPC, cluster
security group and service CIDR from EKS, and makes the GPU nodes' IAM role unless one is given. What the
cluster must already provide is in docs/library.md ("An adopted cluster").
"""
from collections.abc import Mapping
from typing import Any, Optional

import pulumi
import pulumi_kubernetes

from gpu_platform.facts import component_types
from gpu_platform.resources import options
from gpu_platform.resources.cluster_base import ClusterBase
from gpu_platform.resources.node_iam import node_role
from gpu_platform.resources.typed_args import ArgumentsError, Required, TypedDict, argument_problems, as_arguments

# Adopted clusters were registered as Cluster before this component had a type of its own: the alias keeps
# an existing stack's adopted cluster, and everything parented to it, in place.


class AdoptedClusterArgs(TypedDict, total=False):
    """An existing EKS cluster, by name, and where its GPU nodes go."""

    cluster_name: Required[pulumi.Input[str]]
    """The cluster's name (an Output of the program that made it is fine)."""
    subnet_ids: Required[pulumi.Input[list[str]]]
    """Private subnets GPU nodes launch in."""
    node_security_group_ids: list[pulumi.Input[str]]
    """Security groups GPU nodes join besides the cluster security group."""
    node_role_arn: pulumi.Input[str]
    """The IAM role GPU node groups run as (default: a role made here with the worker, CNI and ECR policies)."""
    region: str
    """The cluster's region, for the kubeconfig (required unless `k8sProvider` is given)."""
    k8s_provider: pulumi_kubernetes.Provider
    """A Kubernetes provider for the cluster (default: one made from the kubeconfig)."""


class AdoptedCluster(ClusterBase):
    """An existing EKS cluster, read by name: the same outputs as Cluster, nothing of the cluster changed."""

    def __init__(self, name: str, args: AdoptedClusterArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(component_types.public("AdoptedCluster"), name, None, options.formerly(opts, "AdoptedCluster"))
        from pulumi_aws import eks

        _check(name, args)
        found = eks.get_cluster_output(name=args["cluster_name"], opts=pulumi.InvokeOutputOptions(parent=self))
        self.cluster_name = found.name
        self.endpoint = found.endpoint
        self.certificate_authority = found.certificate_authorities.apply(lambda cas: cas[0].data)
        self.vpc_id = found.vpc_config.vpc_id
        self.node_security_group_id = found.vpc_config.cluster_security_group_id
        self.service_cidr = found.kubernetes_network_configs.apply(lambda k: k[0].service_ipv4_cidr)
        self.private_subnet_ids = pulumi.Output.from_input(args["subnet_ids"])
        self.extra_node_security_group_ids = list(args.get("node_security_group_ids") or [])
        self.zone_names = None  # existing subnets: used in the order listed
        self.system_ready = []  # the cluster's own system nodes already run
        self.nodes_prerequisites = []
        if args.get("node_role_arn") is not None:
            self.node_role_arn = pulumi.Output.from_input(args["node_role_arn"])
        else:
            role, attachments = node_role(f"{name}-nodes", args["cluster_name"], options.child(self, opts))
            self.node_role_arn = role.arn
            self.nodes_prerequisites = list(attachments)
        self.kubeconfig = None  # without a region, only the caller's Kubernetes provider reaches the cluster
        self._connect(name, args.get("region"), args.get("k8s_provider"), opts)
        self._register()


def _check(name: str, args: Mapping[str, Any]) -> None:
    args = as_arguments("AdoptedCluster", name, args, AdoptedClusterArgs)
    problems = argument_problems(args, AdoptedClusterArgs)
    if args.get("region") is None and args.get("k8s_provider") is None:
        problems.append("region: required unless k8sProvider is given (the kubeconfig names it)")
    subnets = args.get("subnet_ids")
    if isinstance(subnets, (list, tuple)) and not subnets:
        problems.append("subnetIds: list at least one private subnet")
    if problems:
        raise ArgumentsError(f"AdoptedCluster {name!r}: ", problems)
