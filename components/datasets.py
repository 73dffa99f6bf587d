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

from . import catalog, names
from .model_cache import CacheCluster, pod_identity_trust_policy

if TYPE_CHECKING:
    from .catalog import NodeImage
    from .spec import FsxLustreSpec, NodePoolSpec, PlatformSpec, TeamSpec

MOUNT_PATH = "/datasets"
TCP = "tcp"
S3_EVENTS = ("NEW", "CHANGED", "DELETED")


def fsx_lustre(spec: "PlatformSpec") -> Optional["FsxLustreSpec"]:
    return spec.datasets.fsx_lustre


def deployment(fsx: "FsxLustreSpec") -> catalog.FsxLustreDeployment:
    return catalog.FSX_LUSTRE_DEPLOYMENTS[fsx.deployment_type]


def throughput(fsx: "FsxLustreSpec") -> Optional[int]:
    """MB/s per TiB of storage: the stack's, else the deployment type's lowest; None for scratch."""
    tiers = deployment(fsx).throughputs
    return (fsx.throughput_per_tib or tiers[0]) if tiers else None


def aggregate_throughput_mbps(fsx: "FsxLustreSpec") -> Optional[int]:
    per_tib = throughput(fsx)
    return None if per_tib is None else fsx.storage_capacity_gib * per_tib // 1024


def price(fsx: "FsxLustreSpec") -> catalog.Price:
    return deployment(fsx).prices[throughput(fsx) or 0]


def final_backup(fsx: "FsxLustreSpec", keep: bool) -> bool:
    """Whether deleting the file system takes a final backup: kept persistent file systems, unless linked to
    S3 (FSx backs up only persistent file systems without a data repository: CreateBackup; there S3 holds
    what auto export wrote)."""
    return keep and deployment(fsx).persistent and fsx.data_repository is None


def protected(spec: "PlatformSpec") -> bool:
    fsx = fsx_lustre(spec)
    return spec.prod if fsx is None or fsx.protect is None else fsx.protect


def claim_teams(spec: "PlatformSpec") -> list["TeamSpec"]:
    """Teams that get a datasets claim: the listed ones, else every team."""
    fsx = fsx_lustre(spec)
    if fsx is None:
        return []
    return [t for t in spec.teams if fsx.teams is None or t.name in fsx.teams]


def capacity(spec: "PlatformSpec") -> str:
    """The volumes' capacity: the whole file system (every team sees all of it)."""
    return f"{fsx_lustre(spec).storage_capacity_gib}Gi"


def claim_size(spec: "PlatformSpec") -> str:
    """What each team's claim asks for, counted by the team's storage quota (like the model cache's claim:
    the file system is shared and provisioned by the stack, not by the claim)."""
    return fsx_lustre(spec).claim_size


def mounts_datasets(spec: "PlatformSpec", pool: "NodePoolSpec") -> bool:
    """Nodes of this pool install the Lustre client: the stack has a datasets file system."""
    return fsx_lustre(spec) is not None and bool(pool.ami.image.lustre_client)


def lustre_boot_lines(image: "NodeImage") -> list[str]:
    """Bash installing the Lustre client kernel module at boot (the FSx CSI driver mounts with the host's)."""
    if image.lustre_client == "dnf":
        return ["# FSx for Lustre client for the datasets file system (AL2023 repository of this AMI release).",
                "dnf install -y -q lustre-client"]
    if image.lustre_client == "apt":
        keyring = "/etc/apt/keyrings/fsx-lustre.asc"
        return [
            "# FSx for Lustre client for the datasets file system: AWS's module package for this kernel.",
            "mkdir -p /etc/apt/keyrings",
            f"curl -fsSL --retry 5 -o {keyring} {catalog.FSX_UBUNTU_KEY}",
            "# shellcheck source=/dev/null",
            ". /etc/os-release",
            f'echo "deb [signed-by={keyring}] {catalog.FSX_UBUNTU_REPOSITORY} ${{VERSION_CODENAME}} main" '
            "> /etc/apt/sources.list.d/fsx-lustre.list",
            "apt-get update -qq",
            'DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "lustre-client-modules-$(uname -r)"',
        ]
    return []


def subnet_index(spec: "PlatformSpec", zone_names: Optional[Sequence[str]]) -> int:
    """The file system's subnet: the first EFA pool's, else the cluster's first."""
    from .placement import subnet_indices

    for pool in spec.node_pools:
        if pool.efa:
            return (subnet_indices(spec, pool, zone_names) or [0])[0]
    return 0


def controller_policy() -> dict:
    """The CSI controller may look at file systems, never create or delete one (static volumes only)."""
    return {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Action": ["fsx:DescribeFileSystems", "fsx:DescribeDataRepositoryAssociations"],
        "Resource": "*"}]}


# --- Kubernetes objects (values may be Outputs when registered) ---

def _labels(team: "TeamSpec") -> dict[str, str]:
    return {names.MANAGED_BY_LABEL: names.MANAGED_BY, names.TEAM_LABEL: team.name}


def persistent_volume(spec: "PlatformSpec", team: "TeamSpec", file_system_id: Any, dns_name: Any,
                      mount_name: Any) -> dict:
    """The team's view of the file system, reserved for its `datasets` claim. The handle is unique per
    volume (kubelet keys mounts by it); the driver mounts by `dnsname` and `mountname`."""
    handle = pulumi.Output.concat(file_system_id, "::", team.name) if isinstance(file_system_id, pulumi.Output) \
        else f"{file_system_id}::{team.name}"
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": names.datasets_volume(team.name), "labels": _labels(team)},
            "spec": {"capacity": {"storage": capacity(spec)}, "volumeMode": "Filesystem",
                     "accessModes": ["ReadWriteMany"], "persistentVolumeReclaimPolicy": "Retain",
                     "storageClassName": "", "mountOptions": ["flock"],
                     "claimRef": {"namespace": names.team_namespace(team.name), "name": names.DATASETS_PVC},
                     "csi": {"driver": catalog.FSX_CSI_DRIVER, "volumeHandle": handle,
                             "volumeAttributes": {"dnsname": dns_name, "mountname": mount_name}}}}


def claim(spec: "PlatformSpec", team: "TeamSpec") -> dict:
    """The team's claim, bound to its own volume (no dynamic provisioning: empty storage class)."""
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": names.DATASETS_PVC, "namespace": names.team_namespace(team.name),
                         "labels": _labels(team)},
            "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "",
                     "volumeName": names.datasets_volume(team.name),
                     "resources": {"requests": {"storage": claim_size(spec)}}}}


# --- resources ---

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
            pv = persistent_volume(spec, team, fs.id, fs.dns_name, fs.mount_name)
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
