"""The datasets file system, decided from the spec: its FSx for Lustre deployment and throughput, its price,
whether it is kept and backed up, which teams claim it and what each claim asks, and which nodes install the
Lustre client (their boot steps). Resources: resources/datasets.py; objects: render/datasets.py.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass
from collections.abc import Sequence
from typing import TYPE_CHECKING, Optional

from gpu_platform.facts import catalog, names

if TYPE_CHECKING:
    from gpu_platform.facts.catalog import NodeImage
    from gpu_platform.spec.models import FsxLustreSpec, NodePoolSpec, PlatformSpec, TeamSpec
    from gpu_platform.spec.pool_context import PoolContext

MOUNT_PATH = "/datasets"
SHARED_MOUNT_PATH = "/datasets-shared"  # the shared area, read-only
TEAMS_DIR = names.DATASETS_TEAMS_DIR
SHARED_CLAIM_SIZE = "1Gi"  # the shared claim's request: the area is read-only, so it is counted at a token size
TEAM_DIR_MODE = "2775"  # group-writable, new files keep the directory's group
SHARED_DIR_MODE = "0755"


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
    """The volumes' capacity: the whole file system's (a directory has no size of its own)."""
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


# --- the layout: a directory per team, an optional shared area, each linked to the same path in S3 ---

def base_path(fsx: "FsxLustreSpec") -> str:
    """Where the platform's directories live: where the S3 prefix appears (`dataRepository.fileSystemPath`),
    else the root."""
    return fsx.data_repository.file_system_path if fsx.data_repository else "/"


def team_path(fsx: "FsxLustreSpec", team: str) -> str:
    """The team's directory: all its claim mounts."""
    return posixpath.join(base_path(fsx), TEAMS_DIR, team)


def shared_path(fsx: "FsxLustreSpec") -> Optional[str]:
    """The shared area every claiming team mounts read-only (None without `shared`)."""
    return posixpath.join(base_path(fsx), fsx.shared) if fsx.shared else None


@dataclass(frozen=True)
class Association:
    """A data repository association: a directory of the file system linked to the same path under s3Path."""

    key: str  # the team's name, or "shared"
    file_system_path: str
    s3_path: str
    auto_import: bool
    auto_export: bool


def associations(fsx: "FsxLustreSpec", teams: Sequence[str]) -> list[Association]:
    """One per team directory (its own export prefix, the block's import and export), and one importing the
    shared area (teams cannot write there, so nothing is exported). None without `dataRepository`."""
    repo = fsx.data_repository
    if repo is None:
        return []
    base = base_path(fsx)

    def s3(path: str) -> str:
        return f"{repo.s3_path.rstrip('/')}/{posixpath.relpath(path, base)}/"

    out = [Association(t, team_path(fsx, t), s3(team_path(fsx, t)), repo.auto_import, repo.auto_export) for t in teams]
    shared = shared_path(fsx)
    if shared:
        out.append(Association("shared", shared, s3(shared), True, False))
    return out


def association_count(fsx: "FsxLustreSpec", teams: Sequence[str]) -> int:
    return len(teams) + int(bool(fsx.shared)) if fsx.data_repository else 0


def claims_per_team(fsx: Optional["FsxLustreSpec"]) -> int:
    """Claims each claiming team holds on the file system: its own, and the shared area's."""
    return 0 if fsx is None else 1 + int(bool(fsx.shared))
