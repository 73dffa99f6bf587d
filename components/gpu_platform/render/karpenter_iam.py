"""What Karpenter's controller may do in AWS, and how interruption events reach it (documents only).

The controller's permissions follow the five policies of Karpenter's v1.14 getting-started CloudFormation
template, narrowed to this cluster: it launches, tags and terminates only instances, volumes, network
interfaces, fleets and launch templates tagged `kubernetes.io/cluster/<cluster>: owned` and
`eks:eks-cluster-name: <cluster>` with a `karpenter.sh/nodepool` tag; it manages only instance profiles
it tagged for this cluster and region; it may pass only the Karpenter node role, describe only this
cluster and read only this cluster's interruption queue. Read-only discovery is limited to the region.

The interruption queue (SQS, server-side encrypted, TLS only) receives the EventBridge events in
catalog.KARPENTER_INTERRUPTION_EVENTS: spot interruption warnings, rebalance recommendations, instance
state changes, scheduled health events and capacity reservation interruptions.
"""
from __future__ import annotations

from typing import Any

from gpu_platform.facts import catalog

OWNED = "owned"
NODEPOOL_TAG = "karpenter.sh/nodepool"
NODECLASS_TAG = "karpenter.k8s.aws/ec2nodeclass"
EKS_CLUSTER_TAG = "eks:eks-cluster-name"
REGION_TAG = "topology.kubernetes.io/region"
LAUNCHED = ("fleet", "instance", "volume", "network-interface", "launch-template", "spot-instances-request")


def _doc(*statements: dict[str, Any]) -> dict[str, Any]:
    return {"Version": "2012-10-17", "Statement": list(statements)}


def _ec2(partition: str, region: str, *kinds: str) -> list[str]:
    return [f"arn:{partition}:ec2:{region}:*:{kind}/*" for kind in kinds]


def node_lifecycle_policy(partition: str, region: str, cluster: str) -> dict[str, Any]:
    """Launch, tag and terminate this cluster's Karpenter nodes, and nothing else."""
    cluster_tag = f"kubernetes.io/cluster/{cluster}"
    owned = {f"aws:ResourceTag/{cluster_tag}": OWNED}
    requested = {f"aws:RequestTag/{cluster_tag}": OWNED, f"aws:RequestTag/{EKS_CLUSTER_TAG}": cluster}
    return _doc(
        {"Sid": "LaunchFromSharedResources", "Effect": "Allow", "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
         "Resource": [f"arn:{partition}:ec2:{region}::image/*", f"arn:{partition}:ec2:{region}::snapshot/*",
                      *_ec2(partition, region, "security-group", "subnet", "capacity-reservation", "placement-group")]},
        {"Sid": "LaunchFromOwnLaunchTemplates", "Effect": "Allow", "Action": ["ec2:RunInstances", "ec2:CreateFleet"],
         "Resource": _ec2(partition, region, "launch-template"),
         "Condition": {"StringEquals": owned, "StringLike": {f"aws:ResourceTag/{NODEPOOL_TAG}": "*"}}},
        {"Sid": "CreateOwnedNodes", "Effect": "Allow",
         "Action": ["ec2:RunInstances", "ec2:CreateFleet", "ec2:CreateLaunchTemplate"],
         "Resource": _ec2(partition, region, *LAUNCHED),
         "Condition": {"StringEquals": requested, "StringLike": {f"aws:RequestTag/{NODEPOOL_TAG}": "*"}}},
        {"Sid": "TagOnCreate", "Effect": "Allow", "Action": "ec2:CreateTags",
         "Resource": _ec2(partition, region, *LAUNCHED),
         "Condition": {"StringEquals": {**requested, "ec2:CreateAction": ["RunInstances", "CreateFleet",
                                                                           "CreateLaunchTemplate"]},
                       "StringLike": {f"aws:RequestTag/{NODEPOOL_TAG}": "*"}}},
        {"Sid": "TagOwnedInstances", "Effect": "Allow", "Action": "ec2:CreateTags",
         "Resource": _ec2(partition, region, "instance"),
         "Condition": {"StringEquals": owned, "StringLike": {f"aws:ResourceTag/{NODEPOOL_TAG}": "*"},
                       "StringEqualsIfExists": {f"aws:RequestTag/{EKS_CLUSTER_TAG}": cluster},
                       "ForAllValues:StringEquals": {"aws:TagKeys": [EKS_CLUSTER_TAG, "karpenter.sh/nodeclaim", "Name"]}}},
        {"Sid": "DeleteOwned", "Effect": "Allow", "Action": ["ec2:TerminateInstances", "ec2:DeleteLaunchTemplate"],
         "Resource": _ec2(partition, region, "instance", "launch-template"),
         "Condition": {"StringEquals": owned, "StringLike": {f"aws:ResourceTag/{NODEPOOL_TAG}": "*"}}},
    )


def iam_integration_policy(partition: str, region: str, account: str, cluster: str, node_role_arn: str) -> dict[str, Any]:
    """Pass the node role to EC2, and manage the instance profiles Karpenter makes from it."""
    profiles = f"arn:{partition}:iam::{account}:instance-profile/*"
    cluster_tag = f"kubernetes.io/cluster/{cluster}"
    requested = {f"aws:RequestTag/{cluster_tag}": OWNED, f"aws:RequestTag/{EKS_CLUSTER_TAG}": cluster,
                 f"aws:RequestTag/{REGION_TAG}": region}
    owned = {f"aws:ResourceTag/{cluster_tag}": OWNED, f"aws:ResourceTag/{REGION_TAG}": region}
    return _doc(
        {"Sid": "PassNodeRole", "Effect": "Allow", "Action": "iam:PassRole", "Resource": node_role_arn,
         "Condition": {"StringEquals": {"iam:PassedToService": ["ec2.amazonaws.com", "ec2.amazonaws.com.cn"]}}},
        {"Sid": "CreateInstanceProfiles", "Effect": "Allow", "Action": "iam:CreateInstanceProfile",
         "Resource": profiles,
         "Condition": {"StringEquals": requested, "StringLike": {f"aws:RequestTag/{NODECLASS_TAG}": "*"}}},
        {"Sid": "TagInstanceProfiles", "Effect": "Allow", "Action": "iam:TagInstanceProfile", "Resource": profiles,
         "Condition": {"StringEquals": {**owned, **requested},
                       "StringLike": {f"aws:ResourceTag/{NODECLASS_TAG}": "*", f"aws:RequestTag/{NODECLASS_TAG}": "*"}}},
        {"Sid": "ManageInstanceProfiles", "Effect": "Allow", "Resource": profiles,
         "Action": ["iam:AddRoleToInstanceProfile", "iam:RemoveRoleFromInstanceProfile", "iam:DeleteInstanceProfile"],
         "Condition": {"StringEquals": owned, "StringLike": {f"aws:ResourceTag/{NODECLASS_TAG}": "*"}}},
    )


def cluster_integration_policy(partition: str, region: str, account: str, cluster: str, queue_arn: str) -> dict[str, Any]:
    """Find the API server and read the interruption queue: this cluster's only (zonal shift, which
    the upstream template also allows, stays off: `settings.enableZonalShift` is not set)."""
    cluster_arn = f"arn:{partition}:eks:{region}:{account}:cluster/{cluster}"
    return _doc(
        {"Sid": "DescribeCluster", "Effect": "Allow", "Action": "eks:DescribeCluster", "Resource": cluster_arn},
        {"Sid": "ReadInterruptionQueue", "Effect": "Allow", "Resource": queue_arn,
         "Action": ["sqs:DeleteMessage", "sqs:GetQueueUrl", "sqs:ReceiveMessage"]},
    )


def discovery_policy(partition: str, region: str, account: str) -> dict[str, Any]:
    """What Karpenter reads to plan: instance types, offerings, prices, images, subnets, security groups."""
    return _doc(
        {"Sid": "RegionalReads", "Effect": "Allow", "Resource": "*",
         "Action": ["ec2:DescribeCapacityReservations", "ec2:DescribeImages", "ec2:DescribeInstances",
                    "ec2:DescribeInstanceStatus", "ec2:DescribeInstanceTypeOfferings", "ec2:DescribeInstanceTypes",
                    "ec2:DescribeLaunchTemplates", "ec2:DescribePlacementGroups", "ec2:DescribeSecurityGroups",
                    "ec2:DescribeSpotPriceHistory", "ec2:DescribeSubnets"],
         "Condition": {"StringEquals": {"aws:RequestedRegion": region}}},
        {"Sid": "PublicParameters", "Effect": "Allow", "Action": "ssm:GetParameter",
         "Resource": f"arn:{partition}:ssm:{region}::parameter/aws/service/*"},
        {"Sid": "Prices", "Effect": "Allow", "Action": "pricing:GetProducts", "Resource": "*"},
        {"Sid": "ListInstanceProfiles", "Effect": "Allow", "Action": "iam:ListInstanceProfiles", "Resource": "*"},
        {"Sid": "ReadInstanceProfiles", "Effect": "Allow", "Action": "iam:GetInstanceProfile",
         "Resource": f"arn:{partition}:iam::{account}:instance-profile/*"},
    )


def controller_policies(node_role_arn: str, queue_arn: str, region: str, cluster: str) -> dict[str, dict[str, Any]]:
    """Every policy document of the controller role, by name; partition and account come from the node
    role's ARN (`arn:<partition>:iam::<account>:role/...`), so nothing is looked up."""
    _, partition, _, _, account, _ = node_role_arn.split(":", 5)
    return {
        "node-lifecycle": node_lifecycle_policy(partition, region, cluster),
        "iam-integration": iam_integration_policy(partition, region, account, cluster, node_role_arn),
        "cluster-integration": cluster_integration_policy(partition, region, account, cluster, queue_arn),
        "discovery": discovery_policy(partition, region, account),
    }


def queue_policy(queue_arn: str) -> dict[str, Any]:
    """EventBridge (and SQS itself) may send; nothing may use the queue without TLS."""
    return {"Version": "2012-10-17", "Id": "KarpenterInterruptionQueue", "Statement": [
        {"Sid": "EventsSend", "Effect": "Allow", "Action": "sqs:SendMessage", "Resource": queue_arn,
         "Principal": {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]}},
        {"Sid": "DenyHTTP", "Effect": "Deny", "Action": "sqs:*", "Resource": queue_arn, "Principal": "*",
         "Condition": {"Bool": {"aws:SecureTransport": "false"}}},
    ]}


def event_pattern(source: str, detail_type: str) -> dict[str, list[str]]:
    return {"source": [source], "detail-type": [detail_type]}


def interruption_rules() -> list[tuple[str, dict[str, list[str]]]]:
    """(rule suffix, event pattern) per interruption event Karpenter handles."""
    return [(suffix, event_pattern(source, detail)) for suffix, source, detail in catalog.KARPENTER_INTERRUPTION_EVENTS]
