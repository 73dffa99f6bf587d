"""Scale from zero: the Cluster Autoscaler and the Auto Scaling group tags it builds empty pools from.

With no node running, the autoscaler only knows a pool through tags on its Auto Scaling group: the
labels, taints and extended resources (`nvidia.com/gpu`, or `nvidia.com/mig-<profile>` under the mixed
MIG strategy, `vpc.amazonaws.com/efa` on EFA pools) and the ephemeral storage a node would have.
`node_template_tags` renders them from the same functions that label and taint the node group, so the
template and the real nodes cannot drift apart.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Optional

import pulumi

from . import catalog, names
from .capacity import node_resources
from .launch_template import efa_interface_count
from .node_pool import node_labels, node_taints

if TYPE_CHECKING:
    from .spec import NodePoolSpec, PlatformSpec


def ephemeral_storage_gib(pool: "NodePoolSpec") -> int:
    """The node's ephemeral storage: the instance-store array when kubelet lives on it, else the root volume."""
    from .local_storage import pool_local_storage

    scratch = pool_local_storage(pool)
    return scratch.gb_per_node * 10**9 // 2**30 if scratch.mount else pool.disk_size_gib


def node_template_tags(spec: "PlatformSpec", pool: "NodePoolSpec") -> dict[str, str]:
    """Auto Scaling group tags: auto-discovery, then the node template (labels, taints, resources)."""
    tags = {names.CA_ENABLED_TAG: names.CA_ENABLED_VALUE, names.ca_cluster_tag(spec.cluster.name): names.CA_OWNED_VALUE}
    tags.update({names.ca_label_tag(k): v for k, v in node_labels(pool).items()})
    tags.update({names.ca_taint_tag(k): f"{v}:{effect}" for k, v, effect in node_taints(pool)})
    tags.update({names.ca_resource_tag(r): str(n) for r, n in node_resources(pool, spec.mig_strategy).items()})
    tags[names.ca_resource_tag(names.EPHEMERAL_STORAGE)] = f"{ephemeral_storage_gib(pool)}Gi"
    if efa_interface_count(pool):  # pods asking for EFA devices can scale such a pool from zero
        tags[names.ca_resource_tag(names.EFA_RESOURCE)] = str(efa_interface_count(pool))
    return tags


def image_tag(spec: "PlatformSpec") -> str:
    """The autoscaler release matching the cluster's Kubernetes minor (or the stack's explicit pin)."""
    return spec.cluster_autoscaler.image_tag or catalog.CLUSTER_AUTOSCALER_IMAGE_TAGS[spec.cluster.kubernetes_version]


def autoscaler_values(spec: "PlatformSpec", region: str) -> dict[str, Any]:
    """Helm values for the cluster-autoscaler chart."""
    return {
        "cloudProvider": "aws",
        "awsRegion": region,
        "autoDiscovery": {"clusterName": spec.cluster.name},
        "fullnameOverride": names.CA_RELEASE,
        "image": {"repository": catalog.CLUSTER_AUTOSCALER_IMAGE, "tag": image_tag(spec)},
        "rbac": {"serviceAccount": {"create": True, "name": names.CA_RELEASE}},
        "nodeSelector": {names.ROLE_LABEL: names.SYSTEM_ROLE},
        "replicaCount": 2 if spec.prod else 1,  # leader election keeps one active
        "resources": {"requests": {"cpu": "100m", "memory": "600Mi"}, "limits": {"memory": "600Mi"}},
        "extraArgs": {
            # Spread a scale-up over pools of the same shape (e.g. one spot pool per zone).
            "balance-similar-node-groups": True,
            # GPU pods use emptyDir scratch space; that must not pin an idle GPU node forever.
            "skip-nodes-with-local-storage": False,
            # Pick the pool that wastes the least CPU and memory after the GPU request fits.
            "expander": "least-waste",
            # GPU DaemonSets (driver, toolkit, DCGM) are heavy; they should not keep a node "busy".
            "ignore-daemonsets-utilization": True,
            # Large GPU instances and multi-gigabyte images take longer than the 15-minute default to be Ready.
            "max-node-provision-time": "25m0s",
        },
    }


def autoscaler_policy(cluster: str) -> dict:
    """Read anything needed to plan; change only Auto Scaling groups this cluster owns."""
    return {
        "Version": "2012-10-17",
        "Statement": [
            {"Sid": "Discover", "Effect": "Allow", "Resource": "*", "Action": [
                "autoscaling:DescribeAutoScalingGroups", "autoscaling:DescribeAutoScalingInstances",
                "autoscaling:DescribeLaunchConfigurations", "autoscaling:DescribeScalingActivities",
                "autoscaling:DescribeTags", "ec2:DescribeImages", "ec2:DescribeInstanceTypes",
                "ec2:DescribeLaunchTemplateVersions", "ec2:GetInstanceTypesFromInstanceRequirements",
                "eks:DescribeNodegroup"]},
            {"Sid": "ScaleOwnGroups", "Effect": "Allow", "Resource": "*",
             "Action": ["autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"],
             "Condition": {"StringEquals": {f"aws:ResourceTag/{names.ca_cluster_tag(cluster)}": names.CA_OWNED_VALUE}}},
        ],
    }


class ClusterAutoscaler(pulumi.ComponentResource):
    """The Cluster Autoscaler on the system nodes, with a Pod Identity role scoped to this cluster."""

    def __init__(self, name: str, spec: "PlatformSpec", region: str, cluster_name: pulumi.Input[str],
                 k8s_provider: pulumi.ProviderResource, depends_on: list[pulumi.Resource],
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpu-platform:autoscaler:ClusterAutoscaler", name, None, opts)
        from pulumi_aws import eks, iam
        from pulumi_kubernetes.helm.v3 import Release, RepositoryOptsArgs

        from .node_iam import POD_IDENTITY_SERVICE, trust_policy

        child = pulumi.ResourceOptions(parent=self)
        cluster = spec.cluster.name
        self.role = iam.Role(f"{name}-role", name=names.role_name(cluster, names.CA_RELEASE),
                             assume_role_policy=json.dumps(trust_policy(POD_IDENTITY_SERVICE, tag_session=True)),
                             opts=child)
        policy = iam.RolePolicy(f"{name}-policy", role=self.role.name,
                                policy=pulumi.Output.from_input(cluster_name).apply(
                                    lambda c: json.dumps(autoscaler_policy(c))),
                                opts=child)
        association = eks.PodIdentityAssociation(
            f"{name}-identity", cluster_name=cluster_name, namespace=names.CA_NAMESPACE,
            service_account=names.CA_RELEASE, role_arn=self.role.arn, opts=child)
        repo, chart = catalog.CLUSTER_AUTOSCALER_CHART
        self.release = Release(
            name,
            name=names.CA_RELEASE,
            chart=chart,
            version=spec.cluster_autoscaler.chart_version,
            repository_opts=RepositoryOptsArgs(repo=repo),
            namespace=names.CA_NAMESPACE,
            values=autoscaler_values(spec, region),
            opts=pulumi.ResourceOptions(parent=self, provider=k8s_provider,
                                        depends_on=[*depends_on, policy, association]),
        )
        self.register_outputs({"release": self.release.name, "roleArn": self.role.arn})
