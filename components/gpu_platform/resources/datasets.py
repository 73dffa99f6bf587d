"""Datasets: one FSx for Lustre file system for training data and checkpoints, claimed by each team.

`datasets: {fsxLustre: {...}}` makes:
- the file system (PERSISTENT_2 by default: data survives a file server failure), SSD, encrypted at rest
  (always: the AWS-managed FSx key or the stack's KMS key), Lustre 2.15, in the zone of the first EFA
  pool (training nodes read it without crossing zones), protected and retained on delete in prod (a
  final backup on delete when kept and not linked to S3: FSx does not back up linked file systems);
- optionally data repository associations, one per team directory and one for the shared area: each
  directory appears under the same path below the S3 prefix (auto import) and a team's directory exports
  to its own prefix what its jobs write (auto export, e.g. checkpoints); the shared area only imports;
- a security group with the Lustre ports (988, 1018-1023) between the file servers and the nodes;
- the FSx CSI driver add-on, pinned, its controller on EKS Pod Identity with a describe-only role: the
  volumes are static (the stack owns the file system), so the driver never creates or deletes one;
- per team a PersistentVolume of its own directory (`<base>/teams/<team>`, a Lustre subdirectory mount)
  bound to a `datasets` claim in the team's namespace, mounted by the workload helper at /datasets; with
  `shared`, a read-only volume of the shared area bound to a `datasets-shared` claim;
- a Job in kube-system, on the only claim of the whole file system, that makes those directories owned by
  `owner` (never root).
Nodes mount Lustre with a host kernel module: the boot script installs the client (node_boot).
`Datasets` takes its own arguments, so it serves any EKS cluster whose GPU nodes have the Lustre client.
"""
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional

import pulumi
import pulumi_kubernetes

from gpu_platform.decisions.datasets import (
    associations, deployment, final_backup, protected, shared_path, team_path, throughput,
)
from gpu_platform.decisions.validation import link_path_problems
from gpu_platform.facts import catalog, component_types, names
from gpu_platform.render.datasets import (
    claim, controller_policy, mount_source, persistent_volume, setup_claim, setup_job, setup_volume, shared_claim,
    shared_volume, volume_handle,
)
from gpu_platform.render.iam import pod_identity_trust_policy
from gpu_platform.resources import options
from gpu_platform.resources.options import named
from gpu_platform.resources.typed_args import ArgumentsError, Required, TypedDict, argument_problems, as_arguments
from gpu_platform.spec.field_path import FieldPath, quoted
from gpu_platform.spec.errors import SpecError
from gpu_platform.spec.models import FsxLustreSpec
from gpu_platform.spec.parse import read_part
from gpu_platform.spec.rules_training import file_system_rules

if TYPE_CHECKING:
    from pulumi_aws import ec2, eks
    from pulumi_aws import fsx as aws_fsx
    from pulumi_kubernetes.batch.v1 import Job
    from pulumi_kubernetes.core.v1 import PersistentVolume, PersistentVolumeClaim

TCP = "tcp"
SETUP_NAMESPACE = "kube-system"  # where the FSx CSI driver runs: no team reaches the setup claim there
S3_EVENTS = ("NEW", "CHANGED", "DELETED")


class _PortRange(TypedDict):
    """A Lustre port range as a security group rule takes it."""

    ip_protocol: str
    from_port: int
    to_port: int


class DataRepositoryArgs(TypedDict, total=False):
    """An S3 prefix linked to the file system (a data repository association)."""

    s3_path: Required[str]
    """The linked S3 prefix, s3://bucket/prefix."""
    file_system_path: str
    """Where in the file system the prefix appears (default /)."""
    auto_import: bool
    """Objects new or changed in S3 appear in the file system."""
    auto_export: bool
    """Files new or changed in the file system are written back to S3."""


class FsxLustreArgs(TypedDict, total=False):
    """The FSx for Lustre file system (the stack file's datasets.fsxLustre)."""

    deployment_type: str
    """PERSISTENT_2 (default), PERSISTENT_1, SCRATCH_2 or SCRATCH_1."""
    storage_capacity_gib: int
    """The file system's size in GiB (the deployment type sets the steps)."""
    throughput_per_tib: int
    """Throughput in MB/s per TiB of storage (PERSISTENT deployment types)."""
    kms_key_arn: str
    """A customer-managed KMS key for the data at rest (default: the key FSx uses by default)."""
    addon_version: Required[str]
    """The aws-fsx-csi-driver add-on, pinned (e.g. v1.7.0-eksbuild.1)."""
    data_repository: DataRepositoryArgs
    """The S3 prefix the file system is linked to."""
    claim_size: str
    """What each team's claim asks for (its storage quota counts it), e.g. 1Ti."""
    shared: str
    """A directory every team mounts read-only at /datasets-shared (default: none)."""
    owner: dict[str, int]
    """`uid` and `gid` owning the directories the platform makes (default 1000:1000; never 0)."""


class DatasetsArgs(TypedDict, total=False):
    """A datasets file system for training data and checkpoints, claimed by each team."""

    cluster_name: Required[pulumi.Input[str]]
    """The EKS cluster the file system serves (its name may be an Output)."""
    vpc_id: Required[pulumi.Input[str]]
    """The cluster's VPC: the Lustre security group lives there."""
    subnet_id: Required[pulumi.Input[str]]
    """The subnet the file system lives in (training nodes in the same zone read it without crossing zones)."""
    node_security_group_id: Required[pulumi.Input[str]]
    """The nodes' security group: Lustre is admitted between it and the file servers."""
    fsx_lustre: Required[FsxLustreArgs]
    """The FSx for Lustre file system: deployment type, size, throughput and its S3 links."""
    team_namespaces: dict[str, pulumi.Input[str]]
    """Team name -> the namespace its `datasets` claim goes in."""
    k8s_provider: pulumi_kubernetes.Provider
    """The cluster's Kubernetes provider (default: the provider the resource options give)."""
    environment: str
    """prod: the file system is protected and retained on delete (unless the options say otherwise)."""


class Datasets(pulumi.ComponentResource):
    """FSx for Lustre file system, its S3 link, security group, the FSx CSI add-on, per-team volume and claim."""

    file_system_id: pulumi.Output[str]
    """The FSx for Lustre file system's id."""
    dns_name: pulumi.Output[str]
    """The file system's DNS name, which a Lustre client mounts."""
    mount_name: pulumi.Output[str]
    """The file system's mount name (`<dns name>@tcp:/<mount name>`)."""

    def __init__(self, name: str, args: DatasetsArgs, opts: Optional[pulumi.ResourceOptions] = None):
        self._build(name, _file_system(name, args), args, opts)

    @classmethod
    def of(cls, name: str, config: FsxLustreSpec, cluster: Mapping[str, Any],
           opts: Optional[pulumi.ResourceOptions] = None) -> "Datasets":
        """A file system the stack file's rules already validated (GpuPlatform's), on `cluster` (DatasetsArgs
        less fsx_lustre), built as it is: not checked again."""
        component = cls.__new__(cls)
        component._build(name, config, cluster, opts)
        return component

    def _build(self, name: str, config: FsxLustreSpec, args: Mapping[str, Any],
               opts: Optional[pulumi.ResourceOptions]) -> None:
        super().__init__(component_types.public("Datasets"), name, None,
                         options.formerly(opts, "Datasets"))
        from pulumi_aws import fsx as aws_fsx

        cluster_name = args["cluster_name"]
        physical = named(cluster_name, names.datasets_name)
        keep = options.protect(opts, protected(config, args.get("environment") == "prod"))
        self.security_group = self._security_group(name, physical, args, options.child(self, opts))
        persistent = deployment(config).persistent
        self.file_system = aws_fsx.LustreFileSystem(
            name, subnet_ids=args["subnet_id"], security_group_ids=[self.security_group.id],
            deployment_type=config.deployment_type, storage_type="SSD", storage_capacity=config.storage_capacity_gib,
            per_unit_storage_throughput=throughput(config), kms_key_id=config.kms_key_arn,
            file_system_type_version=catalog.FSX_LUSTRE_VERSION,
            metadata_configuration=(aws_fsx.LustreFileSystemMetadataConfigurationArgs(mode="AUTOMATIC")
                                    if config.deployment_type == "PERSISTENT_2" else None),
            skip_final_backup=not final_backup(config, keep) if persistent else None,
            tags={"Name": physical},
            opts=options.child(self, opts, protect=keep, retain_on_delete=keep))
        teams = dict(args.get("team_namespaces") or {})
        self.associations = self._data_repositories(name, config, list(teams), keep, opts)
        self.addon = self._csi_addon(name, args, config, opts)
        self.setup = self._setup(name, args, config, list(teams), opts)
        self.volumes, self.claims = self._team_claims(name, args, config, opts)
        self.file_system_id = self.file_system.id
        self.dns_name = self.file_system.dns_name
        self.mount_name = self.file_system.mount_name
        self.register_outputs({"fileSystemId": self.file_system.id, "dnsName": self.file_system.dns_name,
                               "mountName": self.file_system.mount_name})

    def _security_group(self, name: str, physical: pulumi.Input[str], args: Mapping[str, Any],
                        child: pulumi.ResourceOptions) -> "ec2.SecurityGroup":
        from pulumi_aws import ec2, vpc

        group = ec2.SecurityGroup(name, name=physical, vpc_id=args["vpc_id"], tags={"Name": physical},
                                  description="Lustre between the datasets file servers and cluster nodes",
                                  opts=child)
        peers = {"self": group.id, "nodes": args["node_security_group_id"]}
        for low, high in catalog.FSX_LUSTRE_PORTS:
            ports = _PortRange(ip_protocol=TCP, from_port=low, to_port=high)
            for peer, peer_id in peers.items():
                vpc.SecurityGroupIngressRule(f"{name}-{low}-from-{peer}", security_group_id=group.id,
                                             referenced_security_group_id=peer_id,
                                             description=f"Lustre from {peer}", opts=child, **ports)
                vpc.SecurityGroupEgressRule(f"{name}-{low}-to-{peer}", security_group_id=group.id,
                                            referenced_security_group_id=peer_id,
                                            description=f"Lustre to {peer}", opts=child, **ports)
            # Lustre servers also connect back to clients: the nodes' group admits them.
            vpc.SecurityGroupIngressRule(f"{name}-{low}-nodes-from-servers",
                                         security_group_id=args["node_security_group_id"],
                                         referenced_security_group_id=group.id,
                                         description="Lustre from the datasets file servers", opts=child, **ports)
        return group

    def _data_repositories(self, name: str, config: FsxLustreSpec, teams: list[str], keep: bool,
                           opts: Optional[pulumi.ResourceOptions]) -> dict[str, "aws_fsx.DataRepositoryAssociation"]:
        """One association per team directory and the shared area (decisions.datasets.associations)."""
        from pulumi_aws import fsx as aws_fsx

        out: dict[str, aws_fsx.DataRepositoryAssociation] = {}
        for link in associations(config, teams):
            events = aws_fsx.DataRepositoryAssociationS3AutoImportPolicyArgs
            s3 = aws_fsx.DataRepositoryAssociationS3Args(
                auto_import_policy=events(events=list(S3_EVENTS)) if link.auto_import else None,
                auto_export_policy=(aws_fsx.DataRepositoryAssociationS3AutoExportPolicyArgs(events=list(S3_EVENTS))
                                    if link.auto_export else None))
            out[link.key] = aws_fsx.DataRepositoryAssociation(
                f"{name}-s3-{link.key}", file_system_id=self.file_system.id, data_repository_path=link.s3_path,
                file_system_path=link.file_system_path, batch_import_meta_data_on_create=True,
                delete_data_in_filesystem=False, s3=s3,
                opts=options.child(self, opts, protect=keep))
        return out

    def _source(self, path: str) -> pulumi.Output[str]:
        return self.file_system.mount_name.apply(lambda m: mount_source(m, path))

    def _handle(self, key: str) -> pulumi.Output[str]:
        return self.file_system.id.apply(lambda fs_id: volume_handle(fs_id, key))

    def _setup(self, name: str, args: Mapping[str, Any], config: FsxLustreSpec, teams: list[str],
               opts: Optional[pulumi.ResourceOptions]) -> "Job":
        """The directories, made before any team claim mounts one; the only volume of the file system's root."""
        from pulumi_kubernetes.batch.v1 import Job
        from pulumi_kubernetes.core.v1 import PersistentVolume, PersistentVolumeClaim

        provider = options.kubernetes(args)
        fs, namespace = self.file_system, SETUP_NAMESPACE
        pv = setup_volume(config, namespace, self._handle("setup"), fs.dns_name, self._source("/"))
        volume = PersistentVolume(f"{name}-setup", metadata=pv["metadata"], spec=pv["spec"],
                                  opts=options.child(self, opts, depends_on=[self.addon], **provider))
        pvc = setup_claim(namespace)
        claim_ = PersistentVolumeClaim(f"{name}-setup", metadata=pvc["metadata"], spec=pvc["spec"],
                                       opts=options.child(self, opts, depends_on=[volume], **provider))
        job = setup_job(config, teams, namespace)
        # Repository associations first: a directory an association makes is then only re-owned.
        return Job(f"{name}-setup", metadata=job["metadata"], spec=job["spec"],
                   opts=options.child(self, opts, depends_on=[claim_, *self.associations.values()], **provider))

    def _csi_addon(self, name: str, args: Mapping[str, Any], config: FsxLustreSpec,
                   opts: Optional[pulumi.ResourceOptions]) -> "eks.Addon":
        from pulumi_aws import eks, iam

        child = options.child(self, opts)
        role = iam.Role(f"{name}-csi", name=named(args["cluster_name"], lambda c: names.role_name(c, "fsx-csi")),
                        assume_role_policy=pod_identity_trust_policy(),
                        description="FSx CSI controller: static volumes only, describe access", opts=child)
        policy = iam.RolePolicy(f"{name}-csi", role=role.name, policy=json.dumps(controller_policy()), opts=child)
        return eks.Addon(
            f"{name}-csi", cluster_name=args["cluster_name"], addon_name=catalog.FSX_CSI_ADDON,
            addon_version=config.addon_version,
            pod_identity_associations=[eks.AddonPodIdentityAssociationArgs(
                role_arn=role.arn, service_account=catalog.FSX_CSI_CONTROLLER_SERVICE_ACCOUNT)],
            resolve_conflicts_on_create="OVERWRITE", resolve_conflicts_on_update="OVERWRITE",
            opts=options.child(self, opts, depends_on=[policy]))

    def _team_claims(
            self, name: str, args: Mapping[str, Any], config: FsxLustreSpec, opts: Optional[pulumi.ResourceOptions],
    ) -> tuple[dict[str, "PersistentVolume"], dict[str, "PersistentVolumeClaim"]]:
        from pulumi_kubernetes.core.v1 import PersistentVolume, PersistentVolumeClaim

        fs = self.file_system
        provider = options.kubernetes(args)
        shared = shared_path(config)
        volumes: dict[str, PersistentVolume] = {}
        claims: dict[str, PersistentVolumeClaim] = {}
        for team, namespace in (args.get("team_namespaces") or {}).items():
            made = options.child(self, opts, depends_on=[self.addon, self.setup], **provider)
            pv = persistent_volume(config, team, namespace, self._handle(team), fs.dns_name,
                                   self._source(team_path(config, team)))
            volumes[team] = PersistentVolume(f"{name}-{team}", metadata=pv["metadata"], spec=pv["spec"], opts=made)
            pvc = claim(config, team, namespace)
            claims[team] = PersistentVolumeClaim(
                f"{name}-{team}-claim", metadata=pvc["metadata"], spec=pvc["spec"],
                opts=options.child(self, opts, depends_on=[volumes[team]], **provider))
            if shared:
                key = f"shared-{team}"
                pv = shared_volume(config, team, namespace, self._handle(key), fs.dns_name, self._source(shared))
                volumes[key] = PersistentVolume(f"{name}-{key}", metadata=pv["metadata"], spec=pv["spec"], opts=made)
                pvc = shared_claim(team, namespace)
                claims[key] = PersistentVolumeClaim(
                    f"{name}-{key}-claim", metadata=pvc["metadata"], spec=pvc["spec"],
                    opts=options.child(self, opts, depends_on=[volumes[key]], **provider))
        return volumes, claims


def _file_system(name: str, args: Mapping[str, Any]) -> FsxLustreSpec:
    """The file system's settings, checked with the stack file's rules; SpecError naming each argument."""
    where = f"Datasets {name!r}: "
    args = as_arguments("Datasets", name, args, DatasetsArgs)
    problems = argument_problems(args, DatasetsArgs)
    try:
        config = read_part(FsxLustreSpec, args.get("fsx_lustre") or {}, FieldPath.of("fsxLustre"))
    except SpecError as err:
        raise ArgumentsError(where, [*problems, *err.problems]) from None
    problems += [f"{path}: {message}" for path, message in
                 file_system_rules(config, args.get("environment") == "prod", FieldPath.of("fsxLustre"))]
    problems += [f"{path}: {message}" for path, message in  # each team's link, made from the paths given
                 link_path_problems(config, list(args.get("team_namespaces") or {}),
                                    FieldPath.of("fsxLustre.dataRepository"))]
    problems += shared_namespaces(args.get("team_namespaces") or {})
    if problems:
        raise ArgumentsError(where, problems)
    return config


def shared_namespaces(team_namespaces: Mapping[str, Any]) -> list[str]:
    """Two teams mapped to one namespace: each gets a claim of the same name there, and the second fails at
    `pulumi up` with AlreadyExists (a namespace is one team's, as a stack file's team names its own)."""
    first: dict[str, str] = {}
    found = []
    for team, namespace in team_namespaces.items():
        if isinstance(namespace, str) and namespace in first:
            found.append(f"teamNamespaces[{quoted(str(team))}]: namespace {namespace!r} is team "
                         f"{first[namespace]!r}'s already; map each team to its own namespace")
        elif isinstance(namespace, str):
            first[namespace] = str(team)
    return found
