"""The Cluster Autoscaler's chart values and AWS permissions (the node template it builds empty pools
from is decided with the node group, in decisions/node_pool.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpu_platform.decisions.acceptance import accepted_pools
from gpu_platform.facts import catalog, names

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec


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
        "nodeSelector": dict(spec.cluster.system_node_selector),
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
            # Accepted pools' nodes register with the startup taint and lose it once they pass: a node scaled up
            # for a pod is simulated without it (--startup-taint: a flag of every pinned release, and the chart
            # passes extraArgs as --key=value; facts/upstream/cluster-autoscaler-flags.json).
            **({"startup-taint": names.ACCEPTANCE_TAINT_KEY} if accepted_pools(spec) else {}),
        },
    }


def autoscaler_policy(cluster: str) -> dict[str, Any]:
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
