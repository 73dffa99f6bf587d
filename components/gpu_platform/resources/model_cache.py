"""ModelCache: one encrypted EFS file system shared ReadWriteMany by every team, through the EFS CSI add-on.

Elastic throughput, because bursting mode starves large model downloads once credits run out. The file
system is protected and retained on delete in every environment: losing it means re-downloading every
model. Teams get per-claim directories through access points (`efs-ap`) under `/models/<ns>/<claim>`.
`ModelCache` takes its own arguments, so it serves any EKS cluster.
"""
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Optional

import pulumi
import pulumi_kubernetes

from gpu_platform.facts import catalog, component_types, names
from gpu_platform.render.iam import pod_identity_trust_policy
from gpu_platform.render.model_cache import storage_class
from gpu_platform.resources import options
from gpu_platform.resources.options import named
from gpu_platform.resources.typed_args import ArgumentsError, Required, TypedDict, argument_problems, as_arguments
from gpu_platform.spec.models import ADDON_VERSION

if TYPE_CHECKING:
    from pulumi_aws import ec2, eks


class ModelCacheArgs(TypedDict, total=False):
    """What the model cache needs from its cluster, and the EFS CSI add-on's version."""

    cluster_name: Required[pulumi.Input[str]]
    """The EKS cluster the cache serves (its name may be an Output)."""
    vpc_id: Required[pulumi.Input[str]]
    """The cluster's VPC: the NFS security group lives there."""
    subnet_ids: Required[pulumi.Input[list[str]]]
    """The private subnets: one mount target each."""
    subnet_count: int
    """How many `subnet_ids` there are, when they come as an Output (one mount target per subnet)."""
    node_security_group_id: Required[pulumi.Input[str]]
    """The nodes' security group: NFS is admitted from it only."""
    addon_version: Required[str]
    """The aws-efs-csi-driver add-on, pinned (e.g. v2.1.13-eksbuild.1)."""
    k8s_provider: pulumi_kubernetes.Provider
    """The cluster's Kubernetes provider (default: the provider the resource options give)."""


class ModelCache(pulumi.ComponentResource):
    """EFS file system, mount targets, NFS security group, EFS CSI add-on with its role, StorageClass."""

    file_system_id: pulumi.Output[str]
    """The EFS file system's id."""
    storage_class_name: pulumi.Output[str]
    """The StorageClass team claims name (ReadWriteMany, one access point per claim)."""

    def __init__(self, name: str, args: ModelCacheArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(component_types.public("ModelCache"), name, None,
                         options.formerly(opts, "ModelCache"))
        from pulumi_aws import efs

        count = _checked(name, args)
        cluster_name = args["cluster_name"]
        physical = named(cluster_name, names.model_cache_name)
        child = options.child(self, opts)
        keep = options.protect(opts, True)
        self.file_system = efs.FileSystem(
            name, creation_token=physical, encrypted=True, performance_mode="generalPurpose",
            throughput_mode="elastic", tags={"Name": physical},
            opts=options.child(self, opts, protect=keep, retain_on_delete=True))
        self.security_group = self._security_group(name, physical, args, child)
        subnets = pulumi.Output.from_input(args["subnet_ids"])
        self.mount_targets = [
            efs.MountTarget(f"{name}-{i}", file_system_id=self.file_system.id,
                            subnet_id=subnets.apply(_item(i)),
                            security_groups=[self.security_group.id], opts=child)
            for i in range(count)
        ]
        self.addon = self._csi_addon(name, args, opts)
        manifest = storage_class(self.file_system.id)
        from pulumi_kubernetes.storage.v1 import StorageClass

        provider = options.kubernetes(args)
        self.storage_class = StorageClass(
            name, metadata=manifest["metadata"], provisioner=manifest["provisioner"],
            parameters=manifest["parameters"], reclaim_policy=manifest["reclaimPolicy"],
            volume_binding_mode=manifest["volumeBindingMode"], opts=options.child(self, opts, **provider))
        self.file_system_id = self.file_system.id
        # Claims bind at once (Immediate): they need the driver running and a mount target in every zone. The
        # name resolves after all of them, so a claim naming it waits for them (URNs: known in a preview too).
        self.ready: list[pulumi.Resource] = [self.addon, self.storage_class, *self.mount_targets]
        self.storage_class_name = pulumi.Output.all(*[r.urn for r in self.ready]).apply(
            lambda _: names.MODEL_CACHE_STORAGE_CLASS)
        self.register_outputs({"fileSystemId": self.file_system.id, "storageClass": self.storage_class_name})

    def _security_group(self, name: str, physical: pulumi.Input[str], args: ModelCacheArgs,
                        child: pulumi.ResourceOptions) -> "ec2.SecurityGroup":
        from pulumi_aws import ec2, vpc

        group = ec2.SecurityGroup(
            name, name=physical, vpc_id=args["vpc_id"], description="NFS to the model cache from cluster nodes only",
            tags={"Name": physical}, opts=child)
        vpc.SecurityGroupIngressRule(
            f"{name}-nfs", security_group_id=group.id, referenced_security_group_id=args["node_security_group_id"],
            ip_protocol="tcp", from_port=catalog.EFS_NFS_PORT, to_port=catalog.EFS_NFS_PORT,
            description="NFS from cluster nodes", opts=child)
        return group

    def _csi_addon(self, name: str, args: ModelCacheArgs, opts: Optional[pulumi.ResourceOptions]) -> "eks.Addon":
        from pulumi_aws import eks, iam

        child = options.child(self, opts)
        role = iam.Role(f"{name}-csi", name=named(args["cluster_name"], lambda c: names.role_name(c, "efs-csi")),
                        assume_role_policy=pod_identity_trust_policy(),
                        description="EFS CSI controller: creates and deletes access points", opts=child)
        attachment = iam.RolePolicyAttachment(
            f"{name}-csi", role=role.name,
            policy_arn=f"{catalog.AWS_MANAGED_POLICY_PREFIX}{catalog.EFS_CSI_MANAGED_POLICY}", opts=child)
        return eks.Addon(
            f"{name}-csi", cluster_name=args["cluster_name"], addon_name=catalog.EFS_CSI_ADDON,
            addon_version=args["addon_version"],
            pod_identity_associations=[eks.AddonPodIdentityAssociationArgs(
                role_arn=role.arn, service_account=catalog.EFS_CSI_CONTROLLER_SERVICE_ACCOUNT)],
            resolve_conflicts_on_create="OVERWRITE", resolve_conflicts_on_update="OVERWRITE",
            opts=options.child(self, opts, depends_on=[attachment, *self.mount_targets]))


def _item(index: int) -> Callable[[Sequence[str]], str]:
    """The subnet at `index` of the list, once it resolves."""
    return lambda ids: ids[index]


def _checked(name: str, args: Mapping[str, Any]) -> int:
    """The mount targets to make; SpecError naming each argument that is wrong."""
    args = as_arguments("ModelCache", name, args, ModelCacheArgs)
    problems = argument_problems(args, ModelCacheArgs)
    version = args.get("addon_version")
    if version is not None and not re.fullmatch(ADDON_VERSION, str(version)):
        problems.append(f"addonVersion: must be an exact add-on version such as v2.1.13-eksbuild.1, not {version!r}")
    subnets = args.get("subnet_ids")
    count: Optional[int] = args.get("subnet_count")
    if isinstance(subnets, (list, tuple)):
        count = len(subnets) if count is None else count
        if count != len(subnets):
            problems.append(f"subnetCount: {count} but subnetIds lists {len(subnets)}")
    elif count is None or count < 1:
        problems.append("subnetCount: required (>= 1) when subnetIds is an Output: one mount target per subnet")
    if problems:
        raise ArgumentsError(f"ModelCache {name!r}: ", problems)
    assert count is not None  # subnetIds listed them, or subnetCount gave them (else refused above)
    return count
