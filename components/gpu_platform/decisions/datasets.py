"""The datasets file system, decided from the spec: its FSx for Lustre deployment and throughput, its price,
whether it is kept and backed up, which teams claim it and what each claim asks, and which nodes install the
Lustre client (their boot steps). Resources: resources/datasets.py; objects: render/datasets.py.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional

from gpu_platform.facts import catalog

if TYPE_CHECKING:
    from gpu_platform.facts.catalog import NodeImage
    from gpu_platform.spec.models import FsxLustreSpec, NodePoolSpec, PlatformSpec, TeamSpec
    from gpu_platform.spec.pool_context import PoolContext

MOUNT_PATH = "/datasets"


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


def protected(fsx: Optional["FsxLustreSpec"], prod: bool) -> bool:
    """Protected and retained on delete: in prod by default, else as `protect` says."""
    return prod if fsx is None or fsx.protect is None else fsx.protect


def claim_teams(spec: "PlatformSpec") -> list["TeamSpec"]:
    """Teams that get a datasets claim: the listed ones, else every team."""
    fsx = fsx_lustre(spec)
    if fsx is None:
        return []
    return [t for t in spec.teams if fsx.teams is None or t.name in fsx.teams]


def capacity(fsx: "FsxLustreSpec") -> str:
    """The volumes' capacity: the whole file system (every team sees all of it)."""
    return f"{fsx.storage_capacity_gib}Gi"


def claim_size(fsx: "FsxLustreSpec") -> str:
    """What each team's claim asks for, counted by the team's storage quota (like the model cache's claim:
    the file system is shared and provisioned by the stack, not by the claim)."""
    return fsx.claim_size


def mounts_datasets(ctx: "PoolContext", pool: "NodePoolSpec") -> bool:
    """Nodes of this pool install the Lustre client: the platform has a datasets file system."""
    return ctx.lustre_client and bool(pool.ami.image.lustre_client)


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
