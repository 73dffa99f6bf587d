"""The resource types the pack reads, by their Pulumi type tokens (one place for rules and shapes), and the
resource policy that names the types it reads."""
from pulumi_policy import ResourceValidationPolicy

# The type tokens are the module's reference; TypedResourcePolicy is the pack's own plumbing (and pdoc cannot
# place the SDK's name-mangled methods it inherits), so the API reference lists the tokens only.
__all__ = ["NODE_GROUP", "LAUNCH_TEMPLATE", "NODE_POOL", "NODE_CLASS", "KARPENTER_VIEW", "HELM_RELEASE", "ADDON",
           "FILE_SYSTEM", "LUSTRE", "NAMESPACE", "RESOURCE_QUOTA", "CLUSTER", "NAT_GATEWAY", "AWS_PROVIDER", "STACK"]

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
KARPENTER_VIEW = "karpenterNodePool"  # set on a NodePool seen in node-group terms (pools.pool_resources)
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
ADDON = "aws:eks/addon:Addon"
FILE_SYSTEM = "aws:efs/fileSystem:FileSystem"
LUSTRE = "aws:fsx/lustreFileSystem:LustreFileSystem"
NAMESPACE = "kubernetes:core/v1:Namespace"
RESOURCE_QUOTA = "kubernetes:core/v1:ResourceQuota"
CLUSTER = "aws:eks/cluster:Cluster"
NAT_GATEWAY = "aws:ec2/natGateway:NatGateway"
AWS_PROVIDER = "pulumi:providers:aws"
STACK = "pulumi:pulumi:Stack"


class TypedResourcePolicy(ResourceValidationPolicy):
    """A resource policy that says which resource types its rule reads: the CLI still calls it for every
    resource (it returns at once for the others), the offline verdict builds arguments only for these."""

    resource_types: frozenset[str]
