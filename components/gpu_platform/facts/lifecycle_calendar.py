"""The lifecycle calendar: when each version the platform pins leaves support, and where each date comes from.

Data only (decisions/lifecycle.py decides what a date means on a given day). Every entry names its
source and the day it was checked. `confirmed=False` marks a forecast, or a date known only to the
month: such dates use the FIRST day of the month for starts and ends of support (a warning comes early,
never late) and are shown as unconfirmed in the plan. End-of-life months of NVIDIA driver branches use
the last day of the month, as NVIDIA states them by month. catalog.py re-exports these tables.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from types import MappingProxyType
from typing import Any, Optional
from collections.abc import Mapping

CHECKED = "2026-11-23"  # the day every entry below was last checked against its source

# --- EKS Kubernetes versions (14 months of standard support from the EKS release, then 12 of extended) ---

EKS_CALENDAR = ("AWS EKS user guide, 'Understand the Kubernetes version lifecycle on EKS', Kubernetes release "
                "calendar (awsdocs/amazon-eks-user-guide kubernetes-versions.adoc)")
EKS_SECONDARY = ("endoflife.date/amazon-eks (copy of the AWS calendar) and the AWS samples EKS operation review "
                 "calendar (verified 2026-04-24); dates agree with AWS's 14 + 12 month rule")


@dataclass(frozen=True)
class KubernetesRelease:
    version: str  # minor, as the stack file's cluster.kubernetesVersion
    upstream_release: date
    eks_release: date
    end_of_standard: date  # extended support (and its price) starts this day, 00:00 UTC
    end_of_extended: date  # EKS stops creating clusters and upgrades existing control planes itself
    source: str = EKS_CALENDAR
    checked: str = CHECKED
    confirmed: bool = True
    note: str = ""


def _k8s(version: str, upstream: date, eks: date, standard: date, extended: date, **kw: Any) -> KubernetesRelease:
    return KubernetesRelease(version, upstream, eks, standard, extended, **kw)


EKS_KUBERNETES: Mapping[str, KubernetesRelease] = MappingProxyType({
    r.version: r
    for r in (
        _k8s("1.29", date(2023, 12, 13), date(2024, 1, 23), date(2025, 3, 23), date(2026, 3, 23)),
        _k8s("1.30", date(2024, 4, 17), date(2024, 5, 23), date(2025, 7, 23), date(2026, 7, 23)),
        _k8s("1.31", date(2024, 8, 13), date(2024, 9, 26), date(2025, 11, 26), date(2026, 11, 26)),
        _k8s("1.32", date(2024, 12, 11), date(2025, 1, 23), date(2026, 3, 23), date(2027, 3, 23)),
        _k8s("1.33", date(2025, 4, 23), date(2025, 5, 29), date(2026, 7, 29), date(2027, 7, 29)),
        _k8s("1.34", date(2025, 8, 27), date(2025, 10, 2), date(2026, 12, 2), date(2027, 12, 2)),
        # The AWS calendar page's 1.35 row was not in the copies of the page that could be read (docs/lifecycle.md);
        # the two secondary sources agree with each other and with the 14 + 12 month rule.
        _k8s("1.35", date(2025, 12, 17), date(2026, 1, 27), date(2027, 3, 27), date(2028, 3, 27),
             source=EKS_SECONDARY),
        _k8s("1.36", date(2026, 4, 22), date(2026, 6, 1), date(2027, 8, 1), date(2028, 8, 1),
             source="kubernetes.io release blog (upstream); EKS availability by June 2026 from secondary sources",
             confirmed=False,
             note="forecast: EKS release known to the month only; end dates follow the 14 + 12 month rule. "
                  "Check `aws eks describe-cluster-versions --cluster-version 1.36`"),
    )
})

# --- NVIDIA GPU Operator release lines (major versions YY.MM) ---
# NVIDIA: when a major version is released, the previous one enters maintenance (critical bug and CVE fixes
# only) and every older one is end of life. Upgrades are supported within a major version or to the next one.

OPERATOR_POLICY = "NVIDIA GPU Operator docs, 'Life Cycle Policy' (NVIDIA/cloud-native-docs life-cycle-policy.rst)"


@dataclass(frozen=True)
class OperatorLine:
    line: str  # "v26.7": the chart version without its patch
    released: date
    source: str
    checked: str = CHECKED
    confirmed: bool = True
    note: str = ""


OPERATOR_LINES: Mapping[str, OperatorLine] = MappingProxyType({
    o.line: o
    for o in (
        OperatorLine("v25.3", date(2025, 3, 1), "NVIDIA/cloud-native-docs pull request 165 (25.3.0 release docs)",
                     confirmed=False, note="release month only"),
        OperatorLine("v25.10", date(2025, 10, 1), "NVIDIA GPU Operator release notes 25.10.0",
                     confirmed=False, note="release month only"),
        OperatorLine("v26.3", date(2026, 3, 1), "NVIDIA/cloud-native-docs pull request 353 (26.3.0 release docs, "
                     "March 2026)", confirmed=False, note="release month only"),
        OperatorLine("v26.7", date(2026, 8, 20), "NVIDIA GPU Operator release notes 26.7.0 (tag v26.7.0)"),
    )
})

# --- NVIDIA data center driver branches ---

DRIVER_SUPPORT_MATRIX = ("NVIDIA Data Center Drivers, 'Supported Drivers and CUDA Toolkit Versions' "
                         "(docs.nvidia.com/datacenter/tesla/drivers)")


@dataclass(frozen=True)
class DriverBranch:
    branch: str
    kind: str  # LTSB | production | new-feature
    eol: date  # last day of the end-of-life month NVIDIA states
    source: str = DRIVER_SUPPORT_MATRIX
    checked: str = CHECKED
    confirmed: bool = True
    note: str = ""


DRIVER_BRANCHES: Mapping[str, DriverBranch] = MappingProxyType({
    b.branch: b
    for b in (
        DriverBranch("535", "LTSB", date(2026, 6, 30)),
        DriverBranch("570", "production", date(2026, 2, 28)),
        DriverBranch("580", "LTSB", date(2028, 6, 30),
                     note="an earlier edition of the matrix said August 2028; the current one says June 2028"),
        DriverBranch("595", "production", date(2027, 3, 31)),
        DriverBranch("610", "new-feature", date(2026, 8, 31)),
    )
})

# --- Which driver branch an EKS-optimized NVIDIA AMI release carries ---
# An AMI release version is `<kubelet version>-<YYYYMMDD>`; the date selects the era below (the latest era
# starting on or before it). Eras list the branches the AMI carries; when it carries several, it picks one
# per instance at first boot: `family_branches` holds the families that resolve to another branch than
# `default_branch` ("" when how the AMI picks is not documented: the plan then names every branch).


@dataclass(frozen=True)
class AmiDriverEra:
    ami_type: str  # managed node group amiType
    first_release: date  # the first AMI release date this era covers
    branches: tuple[str, ...]  # every branch the AMI carries
    family_branches: Mapping[str, str] = field(default_factory=dict)  # instance family -> branch, documented
    default_branch: str = ""  # the branch every other family runs (several branches only)
    source: str = ""
    checked: str = CHECKED
    confirmed: bool = True
    note: str = ""
    kubernetes: tuple[str, ...] = ()  # the Kubernetes minors whose images it covers (empty: every one)

    def covers(self, minor: Optional[str]) -> bool:
        """Whether the era holds for a release built for Kubernetes `minor` (None: unknown, as in a Karpenter
        alias: only eras that hold for every version, so a release is never placed in an era it may miss)."""
        return not self.kubernetes or minor in self.kubernetes

    def branch_for(self, family: str) -> Optional[str]:
        """The branch an instance family's nodes run, None when the era does not say."""
        if len(self.branches) == 1:
            return self.branches[0]
        return self.family_branches.get(family) or self.default_branch or None


AMI_RELEASES = "awslabs/amazon-eks-ami releases and pull requests"
AMI_CHANGELOG = "awslabs/amazon-eks-ami CHANGELOG.md @81fec2e8"

AMI_DRIVER_ERAS: tuple[AmiDriverEra, ...] = (
    AmiDriverEra("AL2023_x86_64_NVIDIA", date(2025, 8, 1), ("570",),
                 source=f"{AMI_RELEASES}: pull request 2346 (back to the 570 driver, 2025-08-01)",
                 note="releases before this date are not in the calendar (R575 in some June-July 2025 releases)"),
    # R580 reached each Kubernetes version's images in a different release (the changelog's package tables):
    # 1.34 in v20251023, 1.33 in v20251029, 1.31 and 1.32 in v20251108, every version from v20251120.
    AmiDriverEra("AL2023_x86_64_NVIDIA", date(2025, 10, 23), ("580",), kubernetes=("1.34",),
                 source=f"{AMI_CHANGELOG}, release v20251023 (kmod-nvidia-latest-dkms 580.95.05 on 1.34)"),
    AmiDriverEra("AL2023_x86_64_NVIDIA", date(2025, 10, 29), ("580",), kubernetes=("1.33", "1.34"),
                 source=f"{AMI_CHANGELOG}, release v20251029 (580.95.05 on 1.33 and 1.34); pull request 2484"),
    AmiDriverEra("AL2023_x86_64_NVIDIA", date(2025, 11, 8), ("580",), kubernetes=("1.31", "1.32", "1.33", "1.34"),
                 source=f"{AMI_CHANGELOG}, release v20251108 (580.95.05 on 1.31 to 1.34); pull request 2496"),
    AmiDriverEra("AL2023_x86_64_NVIDIA", date(2025, 11, 20), ("580",),
                 source=f"{AMI_CHANGELOG}, release v20251120 (580.105.08 on every version it builds, 1.29 to 1.34; "
                        "1.29 and 1.30 were still on 570.195.03 in v20251112); pull request 2509"),
    # The two trees are R580 (LTS) and R595 (production branch). At first boot resolve-nvidia-driver.sh picks
    # the LTS tree when every GPU of the instance is on R580's open-kernel-module device list, else the
    # production tree when they are on R595's, else LTS with the proprietary modules (g4dn, g5 and g5g are
    # always LTS). Every GPU of the catalog (A10G to B300 and the RTX PRO 6000) is on R580's list; g7's RTX
    # PRO 4500 (0x2C3A) is only on R595's.
    AmiDriverEra("AL2023_x86_64_NVIDIA", date(2026, 9, 17), ("580", "595"),
                 MappingProxyType({"g7": "595"}), default_branch="580",
                 source=f"{AMI_RELEASES}: pull request 2819 (two driver trees baked, one resolved at boot, merged "
                        "2026-09-15) and the maintainers' note on pull request 2808 that release v20260917 carries "
                        "both; issue 2768; templates/al2023/runtime/gpu/resolve-nvidia-driver.sh @46d3c70a and "
                        "nvidia-open-supported-devices-580.txt / -595.txt @81fec2e8",
                 note="the branch per instance follows the resolve script's device lists"),
)

# --- EKS add-ons: the Kubernetes versions each add-on line is offered for ---
# kube-proxy follows the cluster's minor exactly (its add-on versions are built per Kubernetes version).
# Lines not listed here are unknown to the calendar, not unsupported.

ADDONS_MATCHING_CLUSTER_MINOR = ("kube-proxy",)
ADDON_SOURCE = ("AWS EKS user guide add-on version tables (CoreDNS, kube-proxy) and pinned, describe-addon-versions-"
                "verified add-on sets per Kubernetes version in public EKS configurations (2026)")
ADDON_KUBERNETES: Mapping[str, Mapping[str, tuple[str, ...]]] = MappingProxyType({
    "coredns": MappingProxyType({
        "v1.11": ("1.29", "1.30", "1.31", "1.32"),
        "v1.12": ("1.33", "1.34"),
        "v1.13": ("1.34", "1.35"),
        "v1.14": ("1.35", "1.36"),
    }),
    "vpc-cni": MappingProxyType({
        "v1.20": ("1.31", "1.32", "1.33", "1.34"),
        "v1.21": ("1.34", "1.35"),
        "v1.22": ("1.35", "1.36"),
        "v1.23": ("1.35", "1.36"),
    }),
    "eks-pod-identity-agent": MappingProxyType({
        "v1.3": ("1.29", "1.30", "1.31", "1.32", "1.33", "1.34", "1.35", "1.36"),
    }),
    # Inferred, not read from describe-addon-versions: the agent is version-independent DaemonSets and
    # its v1.6 releases (March-July 2026, aws/eks-node-monitoring-agent) postdate EKS 1.35.
    "eks-node-monitoring-agent": MappingProxyType({
        "v1.6": ("1.32", "1.33", "1.34", "1.35"),
    }),
})


def addon_line(version: str) -> str:
    """`v1.13.2-eksbuild.31` -> `v1.13`."""
    return ".".join(version.split("-", 1)[0].split(".")[:2])


def operator_line(chart_version: str) -> str:
    """`v26.7.0` -> `v26.7`."""
    return ".".join(chart_version.split(".")[:2])


def release_date(release_version: str) -> Optional[date]:
    """The AMI build date of an EKS AMI release version (`1.35.8-20260930` -> 2026-09-30) or Karpenter
    alias (`al2023@v20260930`), or None."""
    stamp = release_version.rsplit("-", 1)[-1].rsplit("@v", 1)[-1]
    try:
        return date(int(stamp[:4]), int(stamp[4:6]), int(stamp[6:8])) if len(stamp) == 8 else None
    except ValueError:
        return None


def ami_driver_era(ami_type: str, release_version: str) -> Optional[AmiDriverEra]:
    """The era an AMI release falls in, or None when the calendar does not cover it."""
    built, minor = release_date(release_version), release_minor(release_version)
    eras = [e for e in AMI_DRIVER_ERAS
            if e.ami_type == ami_type and built is not None and e.first_release <= built and e.covers(minor)]
    return max(eras, key=lambda e: e.first_release) if eras else None


def release_minor(release_version: str) -> Optional[str]:
    """`1.33` of an EKS AMI release version `1.33.5-20251120`; None for a Karpenter alias (`al2023@v20251120`)."""
    head = release_version.rsplit("-", 1)[0] if "-" in release_version else ""
    parts = head.split(".")
    return ".".join(parts[:2]) if len(parts) == 3 and all(p.isdigit() for p in parts) else None
