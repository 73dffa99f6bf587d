"""Datasets: one FSx for Lustre file system for training data and checkpoints, claimed by each team.

`datasets: {fsxLustre: {...}}` makes:
- the file system (PERSISTENT_2 by default: data survives a file server failure), SSD, encrypted at rest
  (always: the AWS-managed FSx key or the stack's KMS key), Lustre 2.15, in the zone of the first EFA
  pool (training nodes read it without crossing zones), protected and retained on delete in prod (a
  final backup on delete when kept and not linked to S3: FSx does not back up linked file systems);
- optionally a data repository association: an S3 prefix that appears in the file system (auto import)
  and receives what jobs write there (auto export, e.g. checkpoints);
- a security group with the Lustre ports (988, 1018-1023) between the file servers and the nodes;
- the FSx CSI driver add-on, pinned, its controller on EKS Pod Identity with a describe-only role: the
  volumes are static (the stack owns the file system), so the driver never creates or deletes one;
- per team a PersistentVolume bound to a `datasets` claim in the team's namespace, mounted by the
  workload helper at /datasets. Every team sees the same files (Lustre has POSIX permissions only).
Nodes mount Lustre with a host kernel module: the boot script installs the client (node_boot).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Sequence

import pulumi

from gpu_platform.decisions.datasets import claim_teams, deployment, final_backup, fsx_lustre, protected, throughput
from gpu_platform.decisions.placement import subnet_index
from gpu_platform.facts import catalog, names
from gpu_platform.render.datasets import claim, controller_policy, persistent_volume, volume_handle
from gpu_platform.render.iam import pod_identity_trust_policy
from gpu_platform.resources.model_cache import CacheCluster

if TYPE_CHECKING:
    from gpu_platform.spec.models import FsxLustreSpec, PlatformSpec

TCP = "tcp"
S3_EVENTS = ("NEW", "CHANGED", "DELETED")


@dataclass
class DatasetsCluster(CacheCluster):
    """What the datasets need from the cluster (as the model cache) and the teams."""

    zone_names: Optional[list[str]] = None
    team_ready: dict[str, list[pulumi.Resource]] = field(default_factory=dict)  # team -> namespace, quota...


class Datasets(pulumi.ComponentResource):
    """FSx for Lustre file system, its S3 link, security group, the FSx CSI add-on, per-team volume and claim."""

    def __init__(self, name: str, spec: "PlatformSpec", cluster: DatasetsCluster,
                 opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpu-platform:datasets:Datasets", name, None, opts)
        from pulumi_aws import fsx as aws_fsx

        config = fsx_lustre(spec)
        physical = names.datasets_name(spec.cluster.name)
        keep = protected(spec)
        self.security_group = self._security_group(name, physical, cluster)
        subnet = pulumi.Output.from_input(cluster.private_subnet_ids).apply(
            lambda ids, i=subnet_index(spec, cluster.zone_names): ids[i])
        persistent = deployment(config).persistent
        self.file_system = aws_fsx.LustreFileSystem(
            name, subnet_ids=subnet, security_group_ids=[self.security_group.id],
            deployment_type=config.deployment_type, storage_type="SSD", storage_capacity=config.storage_capacity_gib,
            per_unit_storage_throughput=throughput(config), kms_key_id=config.kms_key_arn,
            file_system_type_version=catalog.FSX_LUSTRE_VERSION,
            metadata_configuration=(aws_fsx.LustreFileSystemMetadataConfigurationArgs(mode="AUTOMATIC")
                                    if config.deployment_type == "PERSISTENT_2" else None),
            skip_final_backup=not final_backup(config, keep) if persistent else None,
            tags={"Name": physical},
            opts=pulumi.ResourceOptions(parent=self, protect=keep, retain_on_delete=keep))
        self.association = self._data_repository(name, config, keep)
        self.addon = self._csi_addon(name, spec, cluster)
        self.volumes, self.claims = self._team_claims(name, spec, cluster)
        self.register_outputs({"fileSystemId": self.file_system.id, "dnsName": self.file_system.dns_name,
                               "mountName": self.file_system.mount_name})

    def _security_group(self, name: str, physical: str, cluster: DatasetsCluster):
        from pulumi_aws import ec2, vpc

        child = pulumi.ResourceOptions(parent=self)
        group = ec2.SecurityGroup(name, name=physical, vpc_id=cluster.vpc_id, tags={"Name": physical},
                                  description="Lustre between the datasets file servers and cluster nodes",
                                  opts=child)
        peers = {"self": group.id, "nodes": cluster.node_security_group_id}
        for low, high in catalog.FSX_LUSTRE_PORTS:
            ports = dict(ip_protocol=TCP, from_port=low, to_port=high)
            for peer, peer_id in peers.items():
                vpc.SecurityGroupIngressRule(f"{name}-{low}-from-{peer}", security_group_id=group.id,
                                             referenced_security_group_id=peer_id,
                                             description=f"Lustre from {peer}", opts=child, **ports)
                vpc.SecurityGroupEgressRule(f"{name}-{low}-to-{peer}", security_group_id=group.id,
                                            referenced_security_group_id=peer_id,
                                            description=f"Lustre to {peer}", opts=child, **ports)
            # Lustre servers also connect back to clients: the nodes' group admits them.
            vpc.SecurityGroupIngressRule(f"{name}-{low}-nodes-from-servers",
                                         security_group_id=cluster.node_security_group_id,
                                         referenced_security_group_id=group.id,
                                         description="Lustre from the datasets file servers", opts=child, **ports)
        return group

    def _data_repository(self, name: str, config: "FsxLustreSpec", keep: bool):
        from pulumi_aws import fsx as aws_fsx

        repo = config.data_repository
        if repo is None:
            return None
        events = aws_fsx.DataRepositoryAssociationS3AutoImportPolicyArgs
        s3 = aws_fsx.DataRepositoryAssociationS3Args(
            auto_import_policy=events(events=list(S3_EVENTS)) if repo.auto_import else None,
            auto_export_policy=(aws_fsx.DataRepositoryAssociationS3AutoExportPolicyArgs(events=list(S3_EVENTS))
                                if repo.auto_export else None))
        return aws_fsx.DataRepositoryAssociation(
            f"{name}-s3", file_system_id=self.file_system.id, data_repository_path=repo.s3_path,
            file_system_path=repo.file_system_path, batch_import_meta_data_on_create=True,
            delete_data_in_filesystem=False, s3=s3,
            opts=pulumi.ResourceOptions(parent=self, protect=keep))

    def _csi_addon(self, name: str, spec: "PlatformSpec", cluster: DatasetsCluster):
        from pulumi_aws import eks, iam

        child = pulumi.ResourceOptions(parent=self)
        role = iam.Role(f"{name}-csi", name=names.role_name(spec.cluster.name, "fsx-csi"),
                        assume_role_policy=pod_identity_trust_policy(),
                        description="FSx CSI controller: static volumes only, describe access", opts=child)
        policy = iam.RolePolicy(f"{name}-csi", role=role.name, policy=json.dumps(controller_policy()), opts=child)
        return eks.Addon(
            f"{name}-csi", cluster_name=cluster.name, addon_name=catalog.FSX_CSI_ADDON,
            addon_version=fsx_lustre(spec).addon_version,
            pod_identity_associations=[eks.AddonPodIdentityAssociationArgs(
                role_arn=role.arn, service_account=catalog.FSX_CSI_CONTROLLER_SERVICE_ACCOUNT)],
            resolve_conflicts_on_create="OVERWRITE", resolve_conflicts_on_update="OVERWRITE",
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy, *cluster.system_ready]))

    def _team_claims(self, name: str, spec: "PlatformSpec", cluster: DatasetsCluster):
        from pulumi_kubernetes.core.v1 import PersistentVolume, PersistentVolumeClaim

        fs = self.file_system
        volumes, claims = {}, {}
        for team in claim_teams(spec):
            k8s = pulumi.ResourceOptions(parent=self, provider=cluster.k8s_provider)
            handle = fs.id.apply(lambda fs_id, team=team.name: volume_handle(fs_id, team))
            pv = persistent_volume(spec, team, handle, fs.dns_name, fs.mount_name)
            volumes[team.name] = PersistentVolume(f"{name}-{team.name}", metadata=pv["metadata"], spec=pv["spec"],
                                                  opts=pulumi.ResourceOptions.merge(
                                                      k8s, pulumi.ResourceOptions(depends_on=[self.addon])))
            pvc = claim(spec, team)
            after = [volumes[team.name], *cluster.team_ready.get(names.team_namespace(team.name), [])]
            claims[team.name] = PersistentVolumeClaim(
                f"{name}-{team.name}-claim", metadata=pvc["metadata"], spec=pvc["spec"],
                opts=pulumi.ResourceOptions.merge(k8s, pulumi.ResourceOptions(depends_on=after)))
        return volumes, claims


def build_datasets(spec: "PlatformSpec", cluster: Any, teams: Sequence[Any],
                   opts: pulumi.ResourceOptions) -> Optional[Datasets]:
    """The datasets when the spec has them; `cluster` is the platform's Cluster, `teams` its TeamNamespaces."""
    if fsx_lustre(spec) is None:
        return None
    ready = {t.namespace_name: [t.namespace, t.quota, t.limits] for t in teams}
    return Datasets("datasets", spec, DatasetsCluster.of(cluster, zone_names=cluster.zone_names, team_ready=ready),
                    opts=opts)
