"""ModelCache: one encrypted EFS file system shared ReadWriteMany by every team, through the EFS CSI add-on.

Elastic throughput, because bursting mode starves large model downloads once credits run out. The file
system is protected and retained on delete in every environment: losing it means re-downloading every
model. Teams get per-claim directories through access points (`efs-ap`) under `/models/<ns>/<claim>`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pulumi

from gpu_platform.decisions.network import subnet_count
from gpu_platform.facts import catalog, names
from gpu_platform.render.iam import pod_identity_trust_policy
from gpu_platform.render.model_cache import storage_class

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec


@dataclass
class CacheCluster:
    """What the cache needs from the cluster."""

    name: pulumi.Input[str]
    vpc_id: pulumi.Input[str]
    private_subnet_ids: pulumi.Input[list]
    node_security_group_id: pulumi.Input[str]
    k8s_provider: pulumi.ProviderResource
    system_ready: list[pulumi.Resource] = field(default_factory=list)

    @classmethod
    def of(cls, cluster: Any, **extra: Any) -> Any:
        """The view of the platform's Cluster (plus `extra` fields of a subclass)."""
        return cls(name=cluster.name, vpc_id=cluster.vpc_id, private_subnet_ids=cluster.private_subnet_ids,
                   node_security_group_id=cluster.node_security_group_id, k8s_provider=cluster.k8s_provider,
                   system_ready=list(cluster.system_ready), **extra)


class ModelCache(pulumi.ComponentResource):
    """EFS file system, mount targets, NFS security group, EFS CSI add-on with its role, StorageClass."""

    def __init__(self, name: str, spec: "PlatformSpec", cluster: CacheCluster,
                 opts: pulumi.ResourceOptions | None = None):
        super().__init__("gpu-platform:model_cache:ModelCache", name, None, opts)
        from pulumi_aws import efs

        physical = names.model_cache_name(spec.cluster.name)
        child = pulumi.ResourceOptions(parent=self)
        self.file_system = efs.FileSystem(
            name, creation_token=physical, encrypted=True, performance_mode="generalPurpose",
            throughput_mode="elastic", tags={"Name": physical},
            opts=pulumi.ResourceOptions(parent=self, protect=True, retain_on_delete=True))
        self.security_group = self._security_group(name, physical, cluster)
        subnets = pulumi.Output.from_input(cluster.private_subnet_ids)
        self.mount_targets = [
            efs.MountTarget(f"{name}-{i}", file_system_id=self.file_system.id,
                            subnet_id=subnets.apply(lambda ids, i=i: ids[i]),
                            security_groups=[self.security_group.id], opts=child)
            for i in range(subnet_count(spec))
        ]
        self.addon = self._csi_addon(name, spec, cluster)
        manifest = storage_class(self.file_system.id)
        from pulumi_kubernetes.storage.v1 import StorageClass

        self.storage_class = StorageClass(
            name, metadata=manifest["metadata"], provisioner=manifest["provisioner"],
            parameters=manifest["parameters"], reclaim_policy=manifest["reclaimPolicy"],
            volume_binding_mode=manifest["volumeBindingMode"],
            opts=pulumi.ResourceOptions(parent=self, provider=cluster.k8s_provider))
        self.storage_class_name = names.MODEL_CACHE_STORAGE_CLASS
        # Claims bind at once (Immediate): they need the driver running and a mount target in every zone.
        self.ready: list[pulumi.Resource] = [self.addon, self.storage_class, *self.mount_targets]
        self.register_outputs({"fileSystemId": self.file_system.id, "storageClass": self.storage_class_name})

    def _security_group(self, name: str, physical: str, cluster: CacheCluster):
        from pulumi_aws import ec2, vpc

        group = ec2.SecurityGroup(
            name, name=physical, vpc_id=cluster.vpc_id, description="NFS to the model cache from cluster nodes only",
            tags={"Name": physical}, opts=pulumi.ResourceOptions(parent=self))
        vpc.SecurityGroupIngressRule(
            f"{name}-nfs", security_group_id=group.id, referenced_security_group_id=cluster.node_security_group_id,
            ip_protocol="tcp", from_port=catalog.EFS_NFS_PORT, to_port=catalog.EFS_NFS_PORT,
            description="NFS from cluster nodes", opts=pulumi.ResourceOptions(parent=self))
        return group

    def _csi_addon(self, name: str, spec: "PlatformSpec", cluster: CacheCluster):
        from pulumi_aws import eks, iam

        child = pulumi.ResourceOptions(parent=self)
        role = iam.Role(f"{name}-csi", name=names.role_name(spec.cluster.name, "efs-csi"),
                        assume_role_policy=pod_identity_trust_policy(),
                        description="EFS CSI controller: creates and deletes access points", opts=child)
        attachment = iam.RolePolicyAttachment(
            f"{name}-csi", role=role.name,
            policy_arn=f"{catalog.AWS_MANAGED_POLICY_PREFIX}{catalog.EFS_CSI_MANAGED_POLICY}", opts=child)
        return eks.Addon(
            f"{name}-csi", cluster_name=cluster.name, addon_name=catalog.EFS_CSI_ADDON,
            addon_version=spec.model_cache.addon_version,
            pod_identity_associations=[eks.AddonPodIdentityAssociationArgs(
                role_arn=role.arn, service_account=catalog.EFS_CSI_CONTROLLER_SERVICE_ACCOUNT)],
            resolve_conflicts_on_create="OVERWRITE", resolve_conflicts_on_update="OVERWRITE",
            opts=pulumi.ResourceOptions(parent=self, depends_on=[attachment, *self.mount_targets,
                                                                 *cluster.system_ready]))


def build_model_cache(spec: "PlatformSpec", cluster: Any, opts: pulumi.ResourceOptions) -> "ModelCache | None":
    """The cache when the spec enables it; `cluster` is the platform's Cluster."""
    if not spec.model_cache.enabled:
        return None
    return ModelCache("model-cache", spec, CacheCluster.of(cluster), opts=opts)
