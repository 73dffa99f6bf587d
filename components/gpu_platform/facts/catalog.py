"""The catalog: every GPU, instance, driver, AMI and chart fact the platform relies on.

Data, not branches: validation, rendering and cost read these tables and never spell a fact again.
Each table names its source; figures that drift (prices) carry a date and are overridable per stack.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from collections.abc import Mapping
from typing import Any, Literal, Optional, get_args

import yaml

# The dated lifecycle calendar (EKS Kubernetes versions, GPU Operator lines, driver branches, AMI driver eras,
# add-on lines) is kept in its own module and re-exported here.
from gpu_platform.facts.lifecycle_calendar import (
    ADDON_KUBERNETES as ADDON_KUBERNETES,
    ADDONS_MATCHING_CLUSTER_MINOR as ADDONS_MATCHING_CLUSTER_MINOR,
    AMI_DRIVER_ERAS as AMI_DRIVER_ERAS,
    DRIVER_BRANCHES as DRIVER_BRANCHES,
    EKS_KUBERNETES as EKS_KUBERNETES,
    OPERATOR_LINES as OPERATOR_LINES,
    DriverBranch as DriverBranch,
)

# Upstream files kept beside the catalog: each chart version's values.yaml (its keys are checked), the
# default MIG configs, and the CRDs custom objects are validated against (upstream/crds/README.md).
UPSTREAM = Path(__file__).resolve().parent / "upstream"
# Pinned upstream files read the same on libyaml as on PyYAML's own parser (tests/facts/test_catalog.py), faster.
_UPSTREAM_LOADER = yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader


def upstream_yaml(name: str) -> Any:
    """The pinned upstream YAML file `name` (in facts/upstream/), as data."""
    return yaml.load((UPSTREAM / name).read_text(), Loader=_UPSTREAM_LOADER)


# --- MIG: instance shapes on a grid of compute and memory slices (NVIDIA MIG user guide; NVML placement API,
# nvmlDeviceGetGpuInstancePossiblePlacements; Blackwell profile names from NVIDIA/gpu-operator v26.7.0
# assets/state-mig-manager/0400_configmap.yaml) ---


@dataclass(frozen=True)
class MigClass:
    """A MIG instance shape, independent of the GPU's memory size."""

    key: str
    compute: int  # compute slices of the grid
    memory: int  # memory slices of the grid
    starts: tuple[int, ...]  # allowed start memory slots
    max_per_gpu: int
    # The media engines (decoders, encoders, JPEG, OFA) the instance holds: "" its share, "me" the extension
    # with the GPU's one OFA (at most one per GPU), "all" every media engine of the GPU (the others on that
    # GPU must then hold none), "none" no media engine ("-me" profiles).
    media: str = ""

    @property
    def media_extensions(self) -> bool:
        """Holds the GPU's one optical-flow accelerator: at most one such instance per GPU."""
        return self.media in ("me", "all")


@dataclass(frozen=True)
class MigGrid:
    """How a GPU model is sliced: its compute and memory slices and the instance shapes placed on them."""

    key: str
    compute_slices: int
    memory_slices: int
    classes: Mapping[str, MigClass]
    source: str


def _grid(key: str, compute: int, memory: int, source: str, *classes: MigClass) -> MigGrid:
    return MigGrid(key, compute, memory, MappingProxyType({c.key: c for c in classes}), source)


MIG_GRIDS: Mapping[str, MigGrid] = MappingProxyType({g.key: g for g in (
    # A100, H100 and H200: NVIDIA's published placements (MIG user guide, Supported MIG Profiles). B200 and B300
    # have the same shapes (1/8, 2/8, 4/8, 8/8 of memory; at most 7 instances: MIG user guide, Supported GPUs; the GPU
    # Operator v26.7.0 default mig-parted config) but NVIDIA publishes no Blackwell placement table: they
    # use this grid too, as the NVML mock's B200 placements do (NVIDIA/mig-parted
    # vendor/github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus/b200.go @bd7160f4). Check a new layout
    # on one node with `nvidia-smi mig -lgipp`.
    _grid("7-slice", 7, 8, "NVIDIA MIG user guide, Supported MIG Profiles (A100, H100 placements); Blackwell "
                           "7-instance GPUs placed alike (inferred: NVIDIA publishes no B200/B300 placements)",
          MigClass("1g", 1, 1, (0, 1, 2, 3, 4, 5, 6), 7),
          MigClass("1g+me", 1, 1, (0, 1, 2, 3, 4, 5, 6), 1, media="me"),
          MigClass("1g-2m", 1, 2, (0, 2, 4, 6), 4),
          MigClass("2g", 2, 2, (0, 2, 4), 3),
          MigClass("3g", 3, 4, (0, 4), 2),
          MigClass("4g", 4, 4, (0,), 1),
          MigClass("7g", 7, 8, (0,), 1)),
    # RTX PRO 6000 Blackwell Server Edition: at most 4 instances (MIG user guide, Supported GPUs); profiles
    # 1g.24gb x4, 2g.48gb x2, 4g.96gb x1 with +gfx, -me, +me and +me.all variants (GPU Operator v26.7.0
    # default mig-parted config). NVIDIA publishes no placement table for it: the grid is the A30's, the
    # other 4-instance GPU, whose published placements are 1g at 0-3, 2g at 0 and 2, 4g at 0 (inferred).
    _grid("4-slice", 4, 4, "NVIDIA MIG user guide, Supported MIG Profiles (A30 placements); RTX PRO 6000 placed "
                           "alike (inferred: NVIDIA publishes no RTX PRO 6000 placements)",
          MigClass("1g", 1, 1, (0, 1, 2, 3), 4),
          MigClass("1g+gfx", 1, 1, (0, 1, 2, 3), 4),
          MigClass("1g-me", 1, 1, (0, 1, 2, 3), 4, media="none"),
          MigClass("1g+me", 1, 1, (0, 1, 2, 3), 1, media="me"),
          MigClass("1g+me.all", 1, 1, (0, 1, 2, 3), 1, media="all"),
          MigClass("2g", 2, 2, (0, 2), 2),
          MigClass("2g+gfx", 2, 2, (0, 2), 2),
          MigClass("2g-me", 2, 2, (0, 2), 2, media="none"),
          MigClass("2g+me.all", 2, 2, (0, 2), 1, media="all"),
          MigClass("4g", 4, 4, (0,), 1),
          MigClass("4g+gfx", 4, 4, (0,), 1)),
)})

# --- GPU models (NVIDIA data sheets, CUDA release notes, NVIDIA MIG user guide "Supported GPUs"; product labels:
# GPU feature discovery's sanitised NVML name, NVIDIA/k8s-device-plugin internal/lm/resource.go) ---


@dataclass(frozen=True)
class GpuModel:
    key: str
    nvml_name: str  # NVML device name; dcgm-exporter's modelName label
    memory_gb: int
    compute_capability: str
    min_driver: str  # the oldest driver that runs the GPU, whoever installs it
    mig_profiles: Mapping[str, str] = field(default_factory=dict)  # profile name -> MigClass key of `mig_grid`
    profile_min_driver: Mapping[str, str] = field(default_factory=dict)
    mig_grid: str = "7-slice"
    source: str = ""  # where the figures come from when not only the sources in the heading above

    @property
    def product_label(self) -> str:
        """GPU feature discovery's `nvidia.com/gpu.product` value: the NVML name, spaces to dashes."""
        return self.nvml_name.replace(" ", "-")

    @property
    def mig_capable(self) -> bool:
        return bool(self.mig_profiles)

    @property
    def grid(self) -> MigGrid:
        return MIG_GRIDS[self.mig_grid]

    @property
    def min_branch(self) -> str:
        """The oldest driver branch that runs the GPU: `570` for B200."""
        return driver_branch(self.min_driver)


def _profiles(**names: str) -> Mapping[str, str]:
    """Profile names per class of the 7-slice grid; keyword names are class keys with `_` for `+`/`-`."""
    keys = {"g1": "1g", "g1_me": "1g+me", "g1_2m": "1g-2m", "g2": "2g", "g3": "3g", "g4": "4g", "g7": "7g"}
    out = {}
    for kw, name in names.items():
        out[name] = keys[kw]
        if kw == "g1":
            out[f"{name}+me"] = "1g+me"
    return MappingProxyType(out)


def _variants(**sizes: str) -> Mapping[str, str]:
    """Profile names per class of the 4-slice grid: each size with the variants of its class, e.g.
    `1g.24gb`, `1g.24gb+gfx`, `1g.24gb-me`, `1g.24gb+me`, `1g.24gb+me.all`."""
    grid = MIG_GRIDS["4-slice"].classes
    out = {}
    for kw, name in sizes.items():
        base = kw.lstrip("g") + "g"
        for key in grid:
            if key == base or key.startswith(base + "+") or key.startswith(base + "-"):
                out[name + key[len(base):]] = key
    return MappingProxyType(out)


# The MIG user guide's Blackwell driver floor is R575 (575.51.03), but NVIDIA's GPU Operator platform notes
# say MIG does not work on RTX PRO 6000 with 575.57.08, the driver that GPU needs: MIG on it needs the next
# branch the operator and the EKS AMIs ship, R580 (NVIDIA/cloud-native-docs platform-support.rst @52dcb7b8).
_RTX_PRO_MIG_DRIVER = "580.65.06"
_BLACKWELL = ("MIG user guide, Supported GPUs and Deployment Considerations; GPU Operator v26.7.0 default "
              "mig-parted config; NVIDIA/cloud-native-docs gpu-operator/platform-support.rst @52dcb7b8; "
              "amazon-eks-ami nvidia-open-supported-devices-*.txt @81fec2e8")

GPU_MODELS: Mapping[str, GpuModel] = MappingProxyType({
    g.key: g
    for g in (
        GpuModel("A10G", "NVIDIA A10G", 24, "8.6", "450.80.02"),
        GpuModel("L4", "NVIDIA L4", 24, "8.9", "525.60.13"),
        GpuModel("L40S", "NVIDIA L40S", 48, "8.9", "535.54.03"),
        GpuModel(
            "A100-SXM4-40GB", "NVIDIA A100-SXM4-40GB", 40, "8.0", "450.80.02",
            _profiles(g1="1g.5gb", g1_2m="1g.10gb", g2="2g.10gb", g3="3g.20gb", g4="4g.20gb", g7="7g.40gb"),
            # The double-memory 1g profile arrived with R525 on A100-40GB.
            MappingProxyType({"1g.10gb": "525.60.13"}),
        ),
        GpuModel(
            "A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", 80, "8.0", "450.80.02",
            _profiles(g1="1g.10gb", g1_2m="1g.20gb", g2="2g.20gb", g3="3g.40gb", g4="4g.40gb", g7="7g.80gb"),
        ),
        GpuModel(
            "H100-80GB-HBM3", "NVIDIA H100 80GB HBM3", 80, "9.0", "525.60.13",
            _profiles(g1="1g.10gb", g1_2m="1g.20gb", g2="2g.20gb", g3="3g.40gb", g4="4g.40gb", g7="7g.80gb"),
        ),
        GpuModel(
            "H200", "NVIDIA H200", 141, "9.0", "550.54.14",
            _profiles(g1="1g.18gb", g1_2m="1g.35gb", g2="2g.35gb", g3="3g.71gb", g4="4g.71gb", g7="7g.141gb"),
        ),
        # HGX B200 needs driver 570.133.20 or later (GPU Operator platform notes; also the MIG guide's B200
        # floor); R570 is the first branch whose open kernel modules list it (0x2901).
        GpuModel(
            "B200", "NVIDIA B200", 180, "10.0", "570.133.20",
            _profiles(g1="1g.23gb", g1_2m="1g.45gb", g2="2g.45gb", g3="3g.90gb", g4="4g.90gb", g7="7g.180gb"),
            source=_BLACKWELL,
        ),
        # B300 SXM6 AC (0x3182): first listed by R580's open kernel modules; 580.65.06 is R580's first
        # release. Profiles as the GPU Operator's config names them (about 269 GB usable of 288 GB HBM3e).
        GpuModel(
            "B300", "NVIDIA B300 SXM6 AC", 269, "10.3", "580.65.06",
            _profiles(g1="1g.34gb", g1_2m="1g.67gb", g2="2g.67gb", g3="3g.135gb", g4="4g.135gb", g7="7g.269gb"),
            source=_BLACKWELL,
        ),
        # RTX PRO 6000 Blackwell Server Edition (g7e, 0x2BB5): driver 575.57.08 or later (GPU Operator platform
        # notes); every MIG profile needs R580 (see _RTX_PRO_MIG_DRIVER).
        GpuModel(
            "RTX-PRO-6000", "NVIDIA RTX PRO 6000 Blackwell Server Edition", 96, "12.0", "575.57.08",
            _variants(g1="1g.24gb", g2="2g.48gb", g4="4g.96gb"),
            MappingProxyType(dict.fromkeys(_variants(g1="1g.24gb", g2="2g.48gb", g4="4g.96gb"), _RTX_PRO_MIG_DRIVER)),
            mig_grid="4-slice", source=_BLACKWELL,
        ),
        # GB200 (0x2941) of the p6e-gb200 UltraServers: 186 GB (MIG user guide, Supported GPUs). No MIG profiles:
        # the EKS AMI's R580 driver runs it with coherent driver-based memory (CDMM), under which MIG and vGPU are
        # not supported (AWS EKS user guide, ml-eks-nvidia-ultraserver @00e3293d; the AMI sets
        # NVreg_CoherentGPUMemoryMode=driver unconditionally, nvidia-kmod-load.sh @81fec2e8). R570 first lists
        # it, but AWS runs UltraServers on R580 only: its floor is R580's first release (the stricter source).
        GpuModel("GB200", "NVIDIA GB200", 186, "10.0", "580.65.06", source=_BLACKWELL),
    )
})

# --- Prices (on-demand, us-east-1, Linux; estimates: stacks may override every figure) ---


@dataclass(frozen=True)
class Price:
    usd_per_hour: float
    source: str
    as_of: str
    verified: bool = False


_EC2_PAGE = "AWS EC2 On-Demand pricing page, us-east-1 Linux"
_P_CUT = "after the June 2025 P4/P5 on-demand reduction"


def _price(usd: float, verified: bool = False, note: str = "") -> Price:
    source = f"{_EC2_PAGE}{' (' + note + ')' if note else ''}"
    return Price(usd, source, "2026-06" if verified else "2025-06", verified)


# Karpenter's generated on-demand price table: AWS Price List data for us-east-1 (aws/karpenter-provider-aws
# pkg/providers/pricing/zz_generated.pricing_aws.go @1d927085, "generated at 2026-07-20T13:44:30Z").
_PRICE_LIST = "AWS Price List on-demand rate, us-east-1 Linux, as Karpenter v1.14 ships it (zz_generated.pricing_aws.go)"


def _listed(usd: float) -> Price:
    return Price(usd, _PRICE_LIST, "2026-07")


# --- Instance types (AWS instance type pages; Blackwell types: aws/karpenter-provider-aws
# website/content/en/v1.14/reference/instance-types.md @1d927085, generated from DescribeInstanceTypes) ---

# Node images every GPU instance type runs (the EKS-optimized NVIDIA AMIs, and Canonical's Ubuntu with the
# operator's driver); an instance type lists its own when it differs.
ALL_GPU_IMAGES = ("AL2023_x86_64_NVIDIA", "BOTTLEROCKET_x86_64_NVIDIA", "UBUNTU_22_04", "UBUNTU_24_04")


@dataclass(frozen=True)
class InstanceType:
    name: str
    gpu: str  # GpuModel key
    gpu_count: int
    vcpu: int
    memory_gib: int
    efa_interfaces: int  # 0: no EFA; else one per network card that takes one
    price: Price
    network_cards: int = 0  # 0: one, or one per EFA interface (every card takes one)
    ami_types: tuple[str, ...] = ALL_GPU_IMAGES  # the images the instance type runs (spec ami.type)

    @property
    def gpu_model(self) -> GpuModel:
        return GPU_MODELS[self.gpu]

    @property
    def family(self) -> str:
        return self.name.split(".", 1)[0]

    @property
    def cards(self) -> int:
        """Network cards: the primary interface sits on card 0, each EFA interface on a card of its own."""
        return self.network_cards or max(1, self.efa_interfaces)

    @property
    def first_efa_card(self) -> int:
        """The first card taking an EFA interface: 0, or 1 where card 0 takes only the primary ENA interface
        (p6-b300: 17 cards, 16 EFA)."""
        return self.cards - self.efa_interfaces if self.efa_interfaces else 0


# (size, gpus, vcpu, RAM GiB) per family; the g-family ladders share sizes and GPU counts.
_G_SIZES = (
    ("xlarge", 1, 4), ("2xlarge", 1, 8), ("4xlarge", 1, 16), ("8xlarge", 1, 32), ("16xlarge", 1, 64),
    ("12xlarge", 4, 48), ("24xlarge", 4, 96), ("48xlarge", 8, 192),
)
_G_RAM_PER_VCPU = {"g5": 4, "g6": 4, "g6e": 8}
# EFA interfaces (one per network card with EFA) of the g sizes that have any: the 8xlarge and larger
# (AWS EC2 user guide, "Supported instance types" for EFA, and the network specifications; 2025-06).
_G_EFA_INTERFACES = {"8xlarge": 1, "12xlarge": 1, "16xlarge": 1, "24xlarge": 1, "48xlarge": 1}
_G6E_EFA_INTERFACES = {**_G_EFA_INTERFACES, "24xlarge": 2, "48xlarge": 4}
_G_GPU = {"g5": "A10G", "g6": "L4", "g6e": "L40S"}
_G_PRICES = {
    "g5": (1.006, 1.212, 1.624, 2.448, 4.096, 5.672, 8.144, 16.288),
    "g6": (0.8048, 0.9776, 1.3232, 2.0144, 3.3968, 4.6016, 6.6752, 13.3504),
    "g6e": (1.861, 2.24208, 3.00424, 4.52856, 7.57719, 10.49264, 15.06559, 30.13118),
}


def _g_family(family: str) -> list[InstanceType]:
    out = []
    for (size, gpus, vcpu), usd in zip(_G_SIZES, _G_PRICES[family], strict=True):
        name = f"{family}.{size}"
        verified = name == "g5.xlarge"  # the one point checked against the pricing page (June 2026)
        efa = (_G6E_EFA_INTERFACES if family == "g6e" else _G_EFA_INTERFACES).get(size, 0)
        out.append(InstanceType(name, _G_GPU[family], gpus, vcpu, vcpu * _G_RAM_PER_VCPU[family], efa,
                                _price(usd, verified)))
    return out


# g7e (RTX PRO 6000 Blackwell Server Edition), from Karpenter v1.14's instance-type reference (EC2
# DescribeInstanceTypes: GPUs, vCPU, memory, EFA) and its generated VPC limits (network cards)
# @1d927085: size, GPUs, vCPU, RAM GiB, EFA interfaces, network cards, on-demand USD/h.
_G7E = (
    ("2xlarge", 1, 8, 64, 0, 1, 3.36312), ("4xlarge", 1, 16, 128, 0, 1, 3.99816),
    ("8xlarge", 1, 32, 256, 1, 1, 5.26824), ("12xlarge", 2, 48, 512, 1, 1, 8.28608),
    ("24xlarge", 4, 96, 1024, 2, 2, 16.57216), ("48xlarge", 8, 192, 2048, 4, 4, 33.14432),
)
# AL2023 and Bottlerocket NVIDIA AMIs list p6-b200, p6-b300 and g7e (AWS EKS user guide, ml-eks-optimized-ami
# @07d09a00); NVIDIA supports their operator-owned drivers on Ubuntu 22.04 and 24.04 (platform-support.rst).
INSTANCE_TYPES: Mapping[str, InstanceType] = MappingProxyType({
    i.name: i
    for i in (
        *_g_family("g5"), *_g_family("g6"), *_g_family("g6e"),
        *(InstanceType(f"g7e.{size}", "RTX-PRO-6000", gpus, vcpu, ram, efa, _listed(usd), cards)
          for size, gpus, vcpu, ram, efa, cards, usd in _G7E),
        InstanceType("p4d.24xlarge", "A100-SXM4-40GB", 8, 96, 1152, 4, _price(21.96, note=_P_CUT)),
        InstanceType("p4de.24xlarge", "A100-SXM4-80GB", 8, 96, 1152, 4, _price(27.45, note=_P_CUT)),
        InstanceType("p5.48xlarge", "H100-80GB-HBM3", 8, 192, 2048, 32, _price(55.04, note=_P_CUT)),
        InstanceType("p5e.48xlarge", "H200", 8, 192, 2048, 32, _price(63.30, note=_P_CUT)),
        InstanceType("p5en.48xlarge", "H200", 8, 192, 2048, 16, _price(63.30, note=_P_CUT)),
        # 8 EFA on 8 cards; p6-b300: 16 EFA on 17 cards, card 0 holding only the primary ENA interface.
        InstanceType("p6-b200.48xlarge", "B200", 8, 192, 2048, 8, _listed(113.9328), 8),
        InstanceType("p6-b300.48xlarge", "B300", 8, 192, 4096, 16, _listed(142.416), 17),
        # p6e-gb200.36xlarge: 4 GB200 GPUs, only inside UltraServers, only as Capacity Blocks, up to 17 network
        # cards with card 0 a plain ENA interface (AWS EKS user guide, ml-eks-nvidia-ultraserver @00e3293d);
        # the other 16 take one EFA interface each, as AWS's multi-card guidance recommends (inferred: AWS's
        # UltraServer example puts one efa-only interface per card group, 4 in all). vCPU and RAM are not in
        # Karpenter's EC2 data (the type is not in its catalog): 144 vCPU / 960 GiB from a third-party
        # compilation (2026-10-03, not AWS text), to be checked with `aws ec2 describe-instance-types`. No
        # on-demand rate exists: the price is the Capacity Block rate per instance (below).
        InstanceType("p6e-gb200.36xlarge", "GB200", 4, 144, 960, 16,
                     Price(42.328, "EC2 Capacity Blocks pricing page snapshot (third-party copy): u-p6e-gb200x72 "
                           "at 761.904 USD/h over its 18 instances; no on-demand rate", "2026-06"),
                     17, ami_types=("AL2023_ARM_64_NVIDIA",)),
    )
})


@dataclass(frozen=True)
class UltraServer:
    """An instance type sold only inside UltraServers: one NVLink domain across nodes, shared through IMEX
    channels that NVIDIA's DRA driver hands out as ComputeDomains."""

    instance_type: str
    sizes: Mapping[str, int]  # UltraServer type -> instances it holds
    driver_branches: tuple[str, ...]  # the driver branches it runs with EFA
    block_termination_minutes: int  # EC2 terminates a Capacity Block's instances this long before its end


# AWS EKS user guide, ml-eks-nvidia-ultraserver @00e3293d: u-p6e-gb200x36 holds 9 instances, x72 18; DRA is
# required; R580 only: R595 drops NVreg_GrdmaPciTopoCheckOverride and NCCL over EFA aborts on P6e (NVIDIA/aicr
# PR#2439, measured on GB300; it holds 580.173.02). EC2 ends UltraServer blocks 60 minutes early (Karpenter
# docs, tasks/odcrs @1d927085; EC2 user guide). GB300 (p6e-gb300) is left out: AWS documents no EKS instance
# type name for it consistently yet (AWS PCS user guide, capacity-blocks-nvidia-imex, names p6e-gb300.36xlarge and
# .72xlarge; the EKS UltraServer guide's sample only the first).
ULTRASERVERS: Mapping[str, UltraServer] = MappingProxyType({u.instance_type: u for u in (
    UltraServer("p6e-gb200.36xlarge", MappingProxyType({"u-p6e-gb200x36": 9, "u-p6e-gb200x72": 18}), ("580",), 60),
)})
# Instance types whose Capacity Blocks are sold in a Local Zone, not the region's Availability Zones: type ->
# parent region -> Local Zones. "To use P6e-GB200 UltraServer Capacity Blocks, you must be opted in to the
# Dallas Local Zone", and an instance "can't launch in a subnet in a different Availability Zone from the
# Capacity Block" (EC2 user guide, capacity-blocks-launch.html); the Dallas zone of us-east-1 is
# us-east-1-dfw-2a (EC2 Capacity Blocks pricing page, "US East (Dallas) Local Zone").
LOCAL_ZONE_BLOCKS: Mapping[str, Mapping[str, tuple[str, ...]]] = MappingProxyType({
    "p6e-gb200.36xlarge": MappingProxyType({"us-east-1": ("us-east-1-dfw-2a",)}),
})
# What a Local Zone lacks that the platform would otherwise put in each zone: NAT gateways only in some Local
# Zones (Local Zones user guide, local-zones-connectivity-nat.html, and the "AWS Local Zones features" list),
# so a Local Zone subnet routes through the parent region's NAT gateway in its VPC; EFS mount targets and FSx
# for Lustre file systems are made in Availability Zones (EFS user guide, "Managing mount targets": "one mount
# target in each Availability Zone"; neither service is on the Local Zones features list), so the model cache
# and the datasets file system stay in the region's zones, which Local Zone nodes reach through the VPC.
ULTRASERVER_MIN_KUBERNETES = "1.33"  # AWS EKS user guide, ml-eks-nvidia-ultraserver (DRA's own floor is higher)

# --- Reserved capacity: EC2 Capacity Blocks for ML and On-Demand Capacity Reservations ---

# Capacity Block rates (USD per instance-hour, US Regions). A block is priced per offering and paid up front
# when bought; these are planning figures from a snapshot of aws.amazon.com/ec2/capacityblocks/pricing
# (2026-06-19, a third-party copy of that page), not verified: set pricing.capacityBlockUsdPerHour to
# the offering's UpfrontFee over its hours.
CAPACITY_BLOCK_PRICE_SOURCE = "EC2 Capacity Blocks pricing page snapshot (third-party copy, US Regions; rates change quarterly)"
CAPACITY_BLOCK_PRICES: Mapping[str, Price] = MappingProxyType({
    t: Price(usd, CAPACITY_BLOCK_PRICE_SOURCE, "2026-06") for t, usd in (
        ("p5e.48xlarge", 39.799), ("p5en.48xlarge", 45.768), ("p6-b200.48xlarge", 82.368),
        ("p6-b300.48xlarge", 93.60), ("p6e-gb200.36xlarge", 42.328),  # u-p6e-gb200x72 761.904 / 18 (Dallas LZ)
    )
})
# EC2 starts terminating a block's instances 30 minutes before its end (60 for UltraServers); EKS scales a
# Capacity Block node group to zero 40 minutes before the end with the scheduled action named below
# (AWS EKS user guide, capacity-blocks-mng @0a7189e9), and Karpenter drains its nodes 10 minutes before EC2
# begins terminating (karpenter.sh v1.14, Utilizing ODCRs and Capacity Blocks): either way nodes go 40
# minutes before the end.
CAPACITY_BLOCK_TERMINATION_MINUTES = 30
CAPACITY_BLOCK_DRAIN_MINUTES = 40
CAPACITY_BLOCK_SCALE_DOWN_ACTION = "Amazon EKS Node Group Capacity Scaledown Before Reservation End"
CAPACITY_RESERVATION_ID = r"^cr-[0-9a-z]+$"  # Karpenter's EC2NodeClass pattern for capacityReservationSelectorTerms[].id
# Families Capacity Blocks are sold for (AWS PCS user guide, "Using Amazon EC2 Capacity Blocks for ML":
# P6-B300, P6-B200, P5en, P5e, P5 and P4d; the EC2 user guide, "Capacity Blocks for ML", also lists P4de;
# P6e-GB200 UltraServers are sold only so, ml-eks-nvidia-ultraserver, one UltraServer per block: "each
# UltraServer corresponds to one Capacity Block", EC2 user guide, how Capacity Blocks work). A block holds at
# most 64 instances and lives in one zone, as a targeted reservation (EC2 user guide, "Capacity Blocks for ML"
# and "Work with Capacity Blocks"). On-Demand Capacity Reservations cover every family.
CAPACITY_BLOCK_FAMILIES = ("p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300", "p6e-gb200")
CAPACITY_BLOCK_MAX_INSTANCES = 64
# The windows AWS sells (EC2 user guide, "Find and purchase Capacity Blocks",
# docs.aws.amazon.com/AWSEC2/latest/UserGuide/capacity-blocks-purchase.html): durations "in 1-day increments up
# to 14 days, and in 7-day increments up to 182 days", and "All Capacity Blocks end at 11:30AM UTC". A block
# bought to start at once starts when bought, so its first day may be short (EC2 API reference,
# CapacityBlockOffering: "if a Capacity Block starts at 04:55 and ends at 11:30, the hours field would be 6").
CAPACITY_BLOCK_DAILY_MAX_DAYS = 14
CAPACITY_BLOCK_WEEKLY_STEP_DAYS = 7
CAPACITY_BLOCK_MAX_DAYS = 182
CAPACITY_BLOCK_BOUNDARY_UTC = (11, 30)  # hour, minute
# A window's years are this close to the plan's date: a block is bought at most weeks ahead and lasts at most
# 26 weeks, so a year far from today is a typo (year 1, 9999), never a block.
CAPACITY_BLOCK_YEARS_AROUND = 2
# A catalog block rate older than this (against the plan's date) is named when it prices a block: offerings
# are priced per purchase and AWS reviews its rates quarterly.
CAPACITY_BLOCK_RATE_MAX_AGE_DAYS = 90
# Non-GPU instances the platform itself runs (system node group) and their prices.
SYSTEM_INSTANCE_PRICES: Mapping[str, Price] = MappingProxyType({
    "m6i.large": _price(0.096), "m6i.xlarge": _price(0.192), "m6i.2xlarge": _price(0.384),
    "m7i.large": _price(0.1008), "m7i.xlarge": _price(0.2016), "m7i.2xlarge": _price(0.4032),
})

# Fixed platform costs (AWS pricing pages for EKS, VPC NAT gateway and EFS; us-east-1).
EKS_CONTROL_PLANE = Price(0.10, "AWS EKS pricing page (standard support)", "2025-06")
# A cluster on a Kubernetes version past its end of standard support (decisions/lifecycle.py decides when).
EKS_CONTROL_PLANE_EXTENDED = Price(0.60, "AWS EKS pricing page (extended support)", "2026-11", verified=True)
NAT_GATEWAY = Price(0.045, "AWS VPC pricing page, NAT gateway hourly charge (data processing excluded)", "2025-06")
EFS_STANDARD_GB_MONTH = Price(0.30, "AWS EFS pricing page, Standard storage per GB-month", "2025-06")
EBS_GP3_GB_MONTH = Price(0.08, "AWS EBS pricing page, gp3 storage per GB-month (baseline IOPS and throughput)", "2025-06")
PRICE_REGION = "us-east-1"  # every price above is for this region
DEFAULT_SPOT_DISCOUNT = 0.60  # fraction off on-demand; spot prices move hourly, so this is a planning figure
HOURS_PER_MONTH = 730

# --- Drivers: DRIVER_BRANCHES and their end-of-life dates are in the lifecycle calendar (imported above) ---


@dataclass(frozen=True)
class OperatorChart:
    version: str
    repository: str
    default_driver: str
    supported_drivers: tuple[str, ...]
    values_file: str  # the chart's values.yaml kept beside the catalog for the Helm-keys guard
    kubernetes_versions: tuple[str, ...]  # EKS + Ubuntu platform support for operator-owned drivers
    # Folder under facts/upstream/crds/ holding the resource.nvidia.com CRDs the chart's crds/ installs
    # (ComputeDomain, ComputeDomainClique): the schema a cluster serves (COMPUTE_DOMAIN_CRDS_OWNER below).
    compute_domain_crds: str = ""


GPU_OPERATOR_REPO = "https://helm.ngc.nvidia.com/nvidia"
GPU_OPERATOR_CHART = "gpu-operator"
GPU_OPERATOR_CHARTS: Mapping[str, OperatorChart] = MappingProxyType({
    c.version: c
    for c in (
        OperatorChart(
            "v26.7.0", GPU_OPERATOR_REPO, "595.91.07",
            ("610.57.04", "595.91.07", "580.173.02", "535.309.01"),
            "gpu-operator-values-v26.7.0.yaml",
            ("1.33", "1.34", "1.35", "1.36"),
            compute_domain_crds="gpu-operator-v26.7.0",
        ),
    )
})

# --- Node images: who owns the driver (AWS EKS user guide, ml-eks-optimized-ami and device-management-nvidia-mig;
# NVIDIA cloud-native-docs gpu-operator/platform-support.rst and amazon-eks; NVIDIA/gpu-operator issue 686) ---


@dataclass(frozen=True)
class NodeImage:
    key: str  # the spec's `ami.type`
    eks_ami_type: str  # managed node group amiType ("CUSTOM": image pinned in the launch template)
    os: str  # al2023 | bottlerocket | al2 | ubuntu
    driver_owner: str  # ami | operator
    operator_mig: bool  # the GPU Operator's MIG manager may run here
    operator_device_plugin: bool  # False: the image ships its own device plugin
    supported: bool = True
    note: str = ""
    ssm_parameter: str = ""  # where the pinned image id or release comes from
    # How the instance-store NVMe becomes kubelet and container storage: "nodeadm" (AL2023 NodeConfig
    # localStorage), "script" (the platform's boot script before Canonical's bootstrap), "" (not offered).
    local_storage: str = ""
    # The EFA kernel driver: "image" (the AMI ships it: AWS EKS user guide, "Manage EFA devices"),
    # "boot-check" (the Ubuntu AWS kernel's module, loaded and counted at boot before the node joins).
    efa_driver: str = "image"
    # The FSx for Lustre client (a host kernel module): "dnf" (AL2023 repository, locked to the AMI
    # release), "apt" (AWS's FSx apt repository, built per Ubuntu AWS kernel), "" (not offered).
    lustre_client: str = ""
    # Images that ship their own device plugin: the first image release whose user data can turn it off
    # (BOTTLEROCKET_DEVICE_PLUGIN_OFF), "" when it cannot be turned off.
    own_device_plugin_off_from: str = ""


# Bottlerocket's own NVIDIA device plugin stops with this setting in the node's user data (TOML), from
# Bottlerocket 1.63.0 (AWS EKS user guide, device-management-nvidia-time-slicing: "you must disable the
# built-in NVIDIA device plugin before you use the NVIDIA DRA driver"; bottlerocket-os/bottlerocket-core-kit
# PR #914 added the setting). (table, key, value)
BOTTLEROCKET_DEVICE_PLUGIN_OFF = ("settings.kubelet-device-plugins.nvidia", "enabled", "false")
# An EKS managed node group's release of a Bottlerocket image is the Bottlerocket release and its build,
# e.g. 1.63.0-18d04e52 (SSM /aws/service/bottlerocket/aws-k8s-<minor>-nvidia/x86_64/latest/image_version);
# an EKS-optimized Amazon Linux release is the Kubernetes version and the build date, e.g. 1.35.7-20260911.
BOTTLEROCKET_RELEASE = r"^(\d+\.\d+\.\d+)-[0-9a-f]{8}$"


def bottlerocket_version(release_version: str) -> Optional[str]:
    """The Bottlerocket release of a node group's Bottlerocket release version (1.63.0-18d04e52 -> 1.63.0)."""
    found = re.match(BOTTLEROCKET_RELEASE, release_version)
    return found.group(1) if found else None

NODE_IMAGES: Mapping[str, NodeImage] = MappingProxyType({
    i.key: i
    for i in (
        NodeImage("AL2023_x86_64_NVIDIA", "AL2023_x86_64_NVIDIA", "al2023", "ami", True, True, local_storage="nodeadm",
                  lustre_client="dnf",
                  ssm_parameter="/aws/service/eks/optimized-ami/{k8s}/amazon-linux-2023/x86_64/nvidia/recommended/release_version"),
        # The ARM image for GB200 UltraServers: driver, fabric manager, IMEX, NVLink subnet manager and EFA in the
        # image (AWS EKS user guide, ml-eks-nvidia-ultraserver @00e3293d; ml-eks-optimized-ami @07d09a00). No MIG
        # manager: GB200 runs with coherent memory there, which rules MIG out.
        NodeImage("AL2023_ARM_64_NVIDIA", "AL2023_ARM_64_NVIDIA", "al2023", "ami", False, True, local_storage="nodeadm",
                  lustre_client="dnf",
                  ssm_parameter="/aws/service/eks/optimized-ami/{k8s}/amazon-linux-2023/arm64/nvidia/recommended/release_version"),
        NodeImage("BOTTLEROCKET_x86_64_NVIDIA", "BOTTLEROCKET_x86_64_NVIDIA", "bottlerocket", "ami", False, False,
                  note="ships its own device plugin and MIG manager", own_device_plugin_off_from="1.63.0"),
        NodeImage("AL2_x86_64_GPU", "AL2_x86_64_GPU", "al2", "ami", False, True, supported=False,
                  note="AWS stopped publishing AL2 AMIs on 2025-11-26; use AL2023_x86_64_NVIDIA"),
        NodeImage("UBUNTU_22_04", "CUSTOM", "ubuntu", "operator", True, True, local_storage="script",
                  efa_driver="boot-check", lustre_client="apt",
                  ssm_parameter="/aws/service/canonical/ubuntu/eks/22.04/{k8s}/stable/current/amd64/hvm/ebs-gp2/ami-id"),
        NodeImage("UBUNTU_24_04", "CUSTOM", "ubuntu", "operator", True, True, local_storage="script",
                  efa_driver="boot-check", lustre_client="apt",
                  ssm_parameter="/aws/service/canonical/ubuntu/eks/24.04/{k8s}/stable/current/amd64/hvm/ebs-gp3/ami-id"),
    )
})

# --- Karpenter (aws/karpenter-provider-aws; docs karpenter.sh v1.14: NodeClasses, NodePools, Disruption) ---
KARPENTER_CHART = "oci://public.ecr.aws/karpenter/karpenter"  # OCI chart: no repository to name


@dataclass(frozen=True)
class KarpenterRelease:
    version: str  # chart and controller version
    crds: str  # folder under facts/upstream/crds/ holding the CRDs this chart installs
    kubernetes_versions: tuple[str, ...]  # Karpenter's compatibility matrix (karpenter.sh, Upgrading: Compatibility)
    values_file: str  # the chart's values.yaml kept in facts/upstream/ for the Helm-keys guard


# Kubernetes 1.35 needs Karpenter >= 1.9; 1.36 is left out until the matrix lists it for this release.
# Values: aws/karpenter-provider-aws charts/karpenter/values.yaml at tag v1.14.1 (its image tag still reads
# 1.13.0 there: the release stamps versions into the published chart; the keys are what the guard reads).
KARPENTER_RELEASES: Mapping[str, KarpenterRelease] = MappingProxyType({
    r.version: r for r in (KarpenterRelease("1.14.1", "karpenter-v1.14.1", ("1.32", "1.33", "1.34", "1.35"),
                                            "karpenter-values-1.14.1.yaml"),)
})


@dataclass(frozen=True)
class KarpenterImage:
    """How an EC2NodeClass selects a node image: Karpenter's AMI family and its `alias` (family@version).

    AMI-owned driver images are pinned by alias (an exact release, never `latest`) or by ids; Ubuntu is
    the `Custom` family (ids only) and brings its own bootstrap, as on managed node groups."""

    ami_family: str
    alias_family: str = ""  # "" : no alias (ids only)
    alias_version: str = ""  # the exact-release pattern of that family's alias versions
    alias_example: str = ""
    root_volume_gib: int = 0  # a separate root volume next to the image volume (Bottlerocket's OS volume)


KARPENTER_IMAGES: Mapping[str, KarpenterImage] = MappingProxyType({
    "AL2023_x86_64_NVIDIA": KarpenterImage("AL2023", "al2023", r"v\d{8}", "al2023@v20260911"),
    "BOTTLEROCKET_x86_64_NVIDIA": KarpenterImage("Bottlerocket", "bottlerocket", r"v\d+\.\d+\.\d+",
                                                 "bottlerocket@v1.50.0", root_volume_gib=4),
    "UBUNTU_22_04": KarpenterImage("Custom"),
    "UBUNTU_24_04": KarpenterImage("Custom"),
})
# EventBridge events Karpenter handles through its interruption queue (rule suffix, source, detail-type),
# as its v1.14 getting-started CloudFormation template routes them; the queue keeps a message 5 minutes.
KARPENTER_INTERRUPTION_EVENTS = (
    ("health", "aws.health", "AWS Health Event"),
    ("spot-interruption", "aws.ec2", "EC2 Spot Instance Interruption Warning"),
    ("rebalance", "aws.ec2", "EC2 Instance Rebalance Recommendation"),
    ("instance-state-change", "aws.ec2", "EC2 Instance State-change Notification"),
    ("capacity-reservation-interruption", "aws.ec2", "EC2 Capacity Reservation Instance Interruption Warning"),
)
KARPENTER_QUEUE_RETENTION_SECONDS = 300
# Tag keys an EC2NodeClass may not set (its CRD's validation rules): Karpenter owns them.
KARPENTER_RESTRICTED_TAGS = ("eks:eks-cluster-name", "karpenter.sh/nodepool", "karpenter.sh/nodeclaim",
                             "karpenter.k8s.aws/ec2nodeclass")
KARPENTER_RESTRICTED_TAG_PREFIX = "kubernetes.io/cluster"

# --- EKS ---
KUBERNETES_VERSIONS = ("1.32", "1.33", "1.34", "1.35", "1.36")
ADDON_VERSION_PATTERN = r"^v\d+\.\d+\.\d+-eksbuild\.\d+$"  # an exact EKS add-on version: v1.20.4-eksbuild.1
CORE_ADDONS = ("vpc-cni", "coredns", "kube-proxy", "eks-pod-identity-agent")
# Add-on configuration the platform relies on (EKS add-on configuration schemas). Without the network
# policy agent, vpc-cni accepts the teams' NetworkPolicies but never enforces them.
ADDON_CONFIGURATION = MappingProxyType({"vpc-cni": {"enableNetworkPolicy": "true"}})
EFS_CSI_ADDON = "aws-efs-csi-driver"
# The EBS CSI driver is not part of an EKS cluster; it needs this managed policy on its controller's
# service account (https://docs.aws.amazon.com/eks/latest/userguide/ebs-csi.html).
EBS_CSI_ADDON = "aws-ebs-csi-driver"
EBS_CSI_CONTROLLER_SERVICE_ACCOUNT = "ebs-csi-controller-sa"
EBS_CSI_PROVISIONER = "ebs.csi.aws.com"
EBS_CSI_MANAGED_POLICY = "service-role/AmazonEBSCSIDriverPolicy"
# The add-on's controller creates access points under this service account; the node service account
# needs no AWS permissions (AWS EKS user guide, "Use Amazon EFS storage"; aws-efs-csi-driver docs).
EFS_CSI_CONTROLLER_SERVICE_ACCOUNT = "efs-csi-controller-sa"
EFS_CSI_PROVISIONER = "efs.csi.aws.com"
EFS_CSI_MANAGED_POLICY = "service-role/AmazonEFSCSIDriverPolicy"
EFS_NFS_PORT = 2049
EKS_POD_IDENTITY_PRINCIPAL = "pods.eks.amazonaws.com"

# Python for the platform's own standard-library scripts (the acceptance reporter, the usage report), pinned by
# tag and digest: the multi-platform index of the Docker official image `python:3.12.11-slim-bookworm` (its last
# build: 3.12.11 is superseded), as several public Dockerfiles pin it; ECR Public's docker/library mirror serves
# Docker's official images under the same digests. Not read from the registry here: re-resolve with
# `crane digest` when bumping.
PYTHON_IMAGE = ("public.ecr.aws/docker/library/python:3.12.11-slim-bookworm"
                "@sha256:519591d6871b7bc437060736b9f7456b8731f1499a57e22e6c285135ae657bf7")
EKS_NODE_GROUP_NAME_MAX = 63

# --- Node health: the EKS node monitoring agent and managed node group auto repair (AWS EKS user guide,
# "Detect node health issues with the EKS node monitoring agent" and "Automatically repair nodes in EKS
# clusters"; botocore eks NodeRepairConfig). Only reasons of severity "Condition" set a node condition
# and so trigger repair; "Event" reasons never do. ---
NODE_MONITORING_AGENT_ADDON = "eks-node-monitoring-agent"
OPTIONAL_ADDONS = (NODE_MONITORING_AGENT_ADDON,)  # may be pinned beside the core add-ons
NodeRepairAction = Literal["Replace", "Reboot", "NoAction"]
NODE_REPAIR_ACTIONS: tuple[NodeRepairAction, ...] = get_args(NodeRepairAction)
# Default wait before repair per condition (minutes) and the actions AWS documents for it.
NODE_REPAIR_CONDITIONS: Mapping[str, tuple[int, str]] = MappingProxyType({
    "AcceleratedHardwareReady": (10, "Replace or Reboot"),
    "ContainerRuntimeReady": (30, "Replace"),
    "KernelReady": (30, "Replace"),
    "NetworkingReady": (30, "Replace"),
    "StorageReady": (30, "Replace"),
})
# Well-known NVIDIA XIDs that set AcceleratedHardwareReady=False (reason NvidiaXID<code>Error) and the
# default repair action; any other XID is only an event (NvidiaXID<code>Warning).
NVIDIA_REPAIR_XIDS: Mapping[int, str] = MappingProxyType({
    13: "Reboot", 31: "Reboot", 48: "Reboot", 63: "Reboot", 64: "Reboot", 74: "Replace", 79: "Replace",
    94: "Reboot", 95: "Reboot", 119: "Replace", 120: "Replace", 121: "Replace", 140: "Replace",
})
NODE_REPAIR_REASONS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "AcceleratedHardwareReady": (
        "DCGMDiagnosticFailure", "DCGMError", "NvidiaDoubleBitError", "NvidiaNVLinkError", "NeuronDMAError",
        "NeuronHBMUncorrectableError", "NeuronNCUncorrectableError", "NeuronSRAMUncorrectableError",
        *(f"NvidiaXID{code}Error" for code in NVIDIA_REPAIR_XIDS)),
    "ContainerRuntimeReady": ("PodStuckTerminating",),
    "KernelReady": ("ForkFailedOutOfPIDs",),
    "NetworkingReady": ("IPAMDNotReady", "IPAMDNotRunning", "InterfaceNotRunning", "InterfaceNotUp",
                        "MissingLoopbackInterface"),
    "StorageReady": (),
})
# DCGM health failures are reported with their code (DCGMHealthCode<code>); fatal ones are conditions.
NODE_REPAIR_REASON_PATTERNS: Mapping[str, str] = MappingProxyType({"AcceleratedHardwareReady": r"DCGMHealthCode\d+"})

# Other Helm charts the platform installs (repository, chart).
# Warm capacity's placeholder: the pause image, by tag and digest (the multi-arch index of registry.k8s.io/pause:3.10,
# as pinned e.g. in cilium/cilium's images/runtime Dockerfile).
PAUSE_IMAGE = "registry.k8s.io/pause:3.10@sha256:ee6521f290b2168b6e0935a181d4cff9be1ac3f505666ef0e3c98fae8199917a"
# The placeholders' priority: below every team tier (render/team_objects.PRIORITY_TIERS, lowest 100) so any tier
# that may preempt takes their nodes, and not below the Cluster Autoscaler's --expendable-pods-priority-cutoff
# (default -10): pods under it "don't trigger scale-ups" (cluster-autoscaler FAQ, 1.35.2), so -10 is the lowest
# priority that still makes the autoscaler hold nodes for them (the FAQ's own overprovisioning class).
WARM_PRIORITY = -10
CLUSTER_AUTOSCALER_CHART = ("https://kubernetes.github.io/autoscaler", "cluster-autoscaler")
# Its metrics Service (chart 9.52.1, templates/service.yaml and _helpers.tpl "cluster-autoscaler.instance-name"):
# selected by app.kubernetes.io/instance=<release> and app.kubernetes.io/name=<cloudProvider>-cluster-autoscaler,
# port named by values `service.portName` (default `http`, port 8085). Failed scale-ups are
# `cluster_autoscaler_failed_scale_ups_total{reason}` (cluster-autoscaler-1.35.2, metrics/metrics.go).
CLUSTER_AUTOSCALER_APP_NAME = "aws-cluster-autoscaler"
CLUSTER_AUTOSCALER_FAILED_SCALE_UPS = "cluster_autoscaler_failed_scale_ups_total"
CLUSTER_AUTOSCALER_METRICS_PORT = "http"
# Karpenter's metrics Service (aws/karpenter-provider-aws v1.14.1, charts/karpenter/templates/service.yaml):
# selected by app.kubernetes.io/name=karpenter (the chart's name) and app.kubernetes.io/instance=<release>,
# port `http-metrics` (controller.metrics.port 8080); `karpenter_cloudprovider_errors_total` is in its
# metrics reference at that tag (website/content/en/docs/reference/metrics.md).
KARPENTER_APP_NAME = "karpenter"
KARPENTER_CLOUDPROVIDER_ERRORS = "karpenter_cloudprovider_errors_total"
KARPENTER_METRICS_PORT = "http-metrics"

# --- Cluster, node and autoscaler facts (AWS EKS user guide; kubernetes/autoscaler releases) ---
# The autoscaler's minor must match the cluster's. Latest patch per minor as promoted to registry.k8s.io
# (kubernetes/k8s.io PRs 8815 and 9760, 2026-07); verify before raising a stack's Kubernetes version.
CLUSTER_AUTOSCALER_IMAGE = "registry.k8s.io/autoscaling/cluster-autoscaler"
CLUSTER_AUTOSCALER_IMAGE_TAGS: Mapping[str, str] = MappingProxyType({
    "1.32": "v1.32.5", "1.33": "v1.33.6", "1.34": "v1.34.5", "1.35": "v1.35.2", "1.36": "v1.36.1",
})
AWS_MANAGED_POLICY_PREFIX = "arn:aws:iam::aws:policy/"
# Nodes need exactly these (AWS EKS user guide, "Amazon EKS node IAM role"; ECR pull-only is the
# least-privilege replacement for ECR read-only). No SSM, no admin: add them per stack if ever needed.
NODE_MANAGED_POLICIES = ("AmazonEKSWorkerNodePolicy", "AmazonEKS_CNI_Policy", "AmazonEC2ContainerRegistryPullOnly")
CLUSTER_MANAGED_POLICIES = ("AmazonEKSClusterPolicy",)
EKS_CLUSTER_ADMIN_ACCESS_POLICY = "arn:aws:eks::aws:cluster-access-policy/AmazonEKSClusterAdminPolicy"
CLUSTER_LOG_TYPES = ("api", "audit", "authenticator", "controllerManager", "scheduler")
SYSTEM_NODE_AMI_TYPE = "AL2023_x86_64_STANDARD"
# Service CIDRs EKS picks from when none is given: 10.100.0.0/16, or 172.20.0.0/16 if the VPC overlaps it.
SERVICE_CIDRS = ("10.100.0.0/16", "172.20.0.0/16")
# The volume container images live on, per node OS (AMI block device mappings; Bottlerocket keeps its OS
# on /dev/xvda and images on the data volume /dev/xvdb).
IMAGE_VOLUME_DEVICE: Mapping[str, str] = MappingProxyType({
    "al2023": "/dev/xvda", "al2": "/dev/xvda", "bottlerocket": "/dev/xvdb", "ubuntu": "/dev/sda1",
})
# Canonical's EKS images join a cluster through this script (documentation.ubuntu.com/aws, "Deploy
# managed Ubuntu nodes on EKS"); kubelet runs from the kubelet-eks snap.
UBUNTU_EKS_BOOTSTRAP = "/etc/eks/bootstrap.sh"
KUBE_PROMETHEUS_STACK_CHART = ("https://prometheus-community.github.io/helm-charts", "kube-prometheus-stack")
# The chart's values.yaml by version, kept in facts/upstream/ for the chart-keys check: prometheus-community/
# helm-charts charts/kube-prometheus-stack/values.yaml at tag kube-prometheus-stack-79.5.0.
KUBE_PROMETHEUS_STACK_VALUES = MappingProxyType({"79.5.0": "kube-prometheus-stack-values-79.5.0.yaml"})

# Sizing Prometheus' volume (docs/monitoring.md#metrics-that-remember). Disk = retention x samples per second x
# bytes per sample (https://prometheus.io/docs/prometheus/latest/storage/#operational-aspects: "on average,
# Prometheus uses only around 1-2 bytes per sample"; the upper figure is used), plus headroom for the WAL and
# compaction. Series counts are planning figures for this platform's scrape targets, not measurements.
PROMETHEUS_SCRAPE_INTERVAL_SECONDS = 30  # the operator's default interval, which the chart leaves unset
PROMETHEUS_BYTES_PER_SAMPLE = 2
PROMETHEUS_BASE_SERIES = 20_000  # control plane, kube-state-metrics, the operators, Kueue, Alertmanager
PROMETHEUS_SERIES_PER_NODE = 1_500  # node-exporter and kubelet/cAdvisor of one node and its pods
PROMETHEUS_SERIES_PER_GPU = 60  # dcgm-exporter's fields for one GPU (or MIG slice), with their labels
PROMETHEUS_DISK_HEADROOM = 1.25  # the WAL, the head block and space for compaction
PROMETHEUS_MIN_VOLUME_GIB = 10
PROMETHEUS_RETENTION_SIZE_SHARE = 0.9  # retentionSize: blocks go before the volume fills, whatever the estimate
ALERTMANAGER_VOLUME_GIB = 2  # silences and the notification log: a few MiB (gp3 volumes start at 1 GiB)


# --- Training: instance-store NVMe, EFA, FSx for Lustre ---


@dataclass(frozen=True)
class InstanceStore:
    disks: int
    gb_each: int  # decimal GB, as AWS lists instance store volumes

    @property
    def total_gb(self) -> int:
        return self.disks * self.gb_each


INSTANCE_STORE_SOURCE = "AWS EC2 user guide, instance store volume specifications (accelerated computing), 2025-06"
_G_STORE = {"xlarge": (1, 250), "2xlarge": (1, 450), "4xlarge": (1, 600), "8xlarge": (1, 900)}
_STORES = {
    "g5": {**_G_STORE, "16xlarge": (1, 1900), "12xlarge": (1, 3800), "24xlarge": (1, 3800), "48xlarge": (2, 3800)},
    "g6": {**_G_STORE, "8xlarge": (2, 450), "16xlarge": (2, 940), "12xlarge": (4, 940), "24xlarge": (4, 940),
           "48xlarge": (8, 940)},
    "g6e": {**_G_STORE, "16xlarge": (1, 1900), "12xlarge": (2, 1900), "24xlarge": (2, 1900), "48xlarge": (4, 1900)},
}
# p6-b200, p6-b300 and g7e: totals as EC2 DescribeInstanceTypes reports them (Karpenter v1.14 instance-type
# reference, instance-local-nvme, @1d927085); disks per size as AWS's instance type pages list them
# (p6: 8 x 3800 GB; g7e: one 1900 GB disk up to 8xlarge, then 3800 GB disks).
BLACKWELL_INSTANCE_STORE: Mapping[str, InstanceStore] = MappingProxyType({
    "p6-b200.48xlarge": InstanceStore(8, 3800), "p6-b300.48xlarge": InstanceStore(8, 3800),
    "g7e.2xlarge": InstanceStore(1, 1900), "g7e.4xlarge": InstanceStore(1, 1900), "g7e.8xlarge": InstanceStore(1, 1900),
    "g7e.12xlarge": InstanceStore(1, 3800), "g7e.24xlarge": InstanceStore(2, 3800), "g7e.48xlarge": InstanceStore(4, 3800),
})
INSTANCE_STORE: Mapping[str, InstanceStore] = MappingProxyType({
    **{f"{family}.{size}": InstanceStore(*disks) for family, sizes in _STORES.items() for size, disks in sizes.items()},
    "p4d.24xlarge": InstanceStore(8, 1000), "p4de.24xlarge": InstanceStore(8, 1000),
    **{f"{family}.48xlarge": InstanceStore(8, 3840) for family in ("p5", "p5e", "p5en")},
    **BLACKWELL_INSTANCE_STORE,
    "p6e-gb200.36xlarge": InstanceStore(3, 7500),  # 3 x 7.5 TB (ml-eks-nvidia-ultraserver @00e3293d)
})
# nodeadm's NodeConfig `spec.instance.localStorage.strategy` (amazon-eks-ami nodeadm API reference); RAID0
# stripes every instance-store disk into one array and bind-mounts kubelet, containerd and pod logs onto it.
NODEADM_API_VERSION = "node.eks.aws/v1alpha1"
NODEADM_CONTENT_TYPE = "application/node.eks.aws"
NODEADM_LOCAL_STORAGE_STRATEGIES = ("RAID0", "RAID10", "Mount")
LOCAL_STORAGE_MOUNT = "/mnt/k8s-disks/0"  # nodeadm's array mount; the Ubuntu boot script uses the same path
LOCAL_STORAGE_BIND_DIRS = ("/var/lib/kubelet", "/var/lib/containerd", "/var/log/pods")
# Instance store disks appear under this by-id prefix (the NVMe model name AWS gives them).
INSTANCE_STORE_DISK_GLOB = "/dev/disk/by-id/nvme-Amazon_EC2_NVMe_Instance_Storage_*"

# EFA: GPUDirect RDMA over EFA on these families (AWS EC2 user guide, EFA supported instance types: RDMA read
# on p4d/p4de and Nitro v4+; p6-b200, p6-b300 and g7e.8xlarge and larger are Nitro v6 with RDMA read and write).
EFA_RDMA_FAMILIES = ("p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300", "g7e")
EFA_DEVICE_PLUGIN_CHART = ("https://aws.github.io/eks-charts", "aws-efa-k8s-device-plugin")
EFA_DEVICE_PLUGIN_NAMESPACE = "kube-system"
# Chart version -> its values.yaml kept in facts/upstream/ for the Helm-keys guard.
EFA_DEVICE_PLUGIN_VALUES: Mapping[str, str] = MappingProxyType({
    "v0.5.30": "aws-efa-k8s-device-plugin-values-v0.5.30.yaml",
})
# libfabric/NCCL settings for EFA (AWS EC2 user guide, "Get started with EFA and NCCL"; aws-ofi-nccl):
# use the EFA provider, keep registered memory safe across fork (PyTorch data loaders fork), and on
# RDMA-capable instances let NCCL move GPU memory over EFA directly.
EFA_ENV = (("FI_PROVIDER", "efa"), ("FI_EFA_FORK_SAFE", "1"))
EFA_RDMA_ENV = (("FI_EFA_USE_DEVICE_RDMA", "1"),)
# The EFA kernel driver's per-port counters the platform's EFA collector reads, in
# /sys/class/infiniband/<device>/ports/<port>/hw_counters/ (amzn/amzn-drivers, tag efa_linux_3.1.0,
# kernel/linux/efa/src/efa_verbs.c, EFA_DEFINE_PORT_STATS; the Linux kernel's drivers/infiniband/hw/efa names
# the same files). node_exporter 1.10.2, the one kube-prometheus-stack 79.5.0 runs, reads hw_counters through
# prometheus/procfs v0.19.0, whose parser knows none of these names, so none reaches Prometheus without it.
EFA_PORT_COUNTERS = ("tx_bytes", "tx_pkts", "rx_bytes", "rx_pkts", "rx_drops", "send_bytes", "recv_bytes",
                     "rdma_read_bytes", "rdma_read_resp_bytes", "rdma_write_bytes", "rdma_write_recv_bytes")
# What the platform's EFA collector adds to Prometheus per EFA device (one port each): its counters.
PROMETHEUS_SERIES_PER_EFA_DEVICE = len(EFA_PORT_COUNTERS)


@dataclass(frozen=True)
class FsxLustreDeployment:
    key: str  # the API's DeploymentType
    persistent: bool  # data survives a file server failure; customer KMS keys and backups allowed
    throughputs: tuple[int, ...]  # PerUnitStorageThroughput, MB/s per TiB; () when not settable
    prices: Mapping[int, Price]  # per GB-month, by throughput (0 for scratch)
    data_repository_associations: bool  # linked S3 prefixes through CreateDataRepositoryAssociation


_FSX_PAGE = "AWS FSx for Lustre pricing page, us-east-1 SSD storage per GB-month (throughput included)"


def _fsx(usd: float) -> Price:
    # Not verified: the pricing page's table could not be read when these were last checked (2026-11);
    # secondary sources agree on SCRATCH_2 0.14 and PERSISTENT_2 at 125 MB/s/TiB 0.145. Stacks may override.
    return Price(usd, _FSX_PAGE, "2025-06", verified=False)


# Throughputs from the FSx API reference (CreateFileSystem PerUnitStorageThroughput, SSD storage). Data
# repository associations: every Lustre 2.12/2.15 file system but SCRATCH_1 (CreateDataRepositoryAssociation;
# the stack always creates 2.15). tests/resources/test_datasets.py holds both to botocore's FSx model.
FSX_LUSTRE_DEPLOYMENTS: Mapping[str, FsxLustreDeployment] = MappingProxyType({d.key: d for d in (
    FsxLustreDeployment("PERSISTENT_2", True, (125, 250, 500, 1000),
                        {125: _fsx(0.145), 250: _fsx(0.21), 500: _fsx(0.34), 1000: _fsx(0.60)}, True),
    FsxLustreDeployment("PERSISTENT_1", True, (50, 100, 200), {50: _fsx(0.145), 100: _fsx(0.20), 200: _fsx(0.29)},
                        True),
    FsxLustreDeployment("SCRATCH_2", False, (), {0: _fsx(0.14)}, True),
)})
# SSD capacities for these deployment types: 1200 GiB, 2400 GiB, then increments of 2400 GiB (API reference).
FSX_LUSTRE_CAPACITY_GIB = (1200, 2400)
FSX_LUSTRE_CAPACITY_STEP_GIB = 2400
FSX_LUSTRE_VERSION = "2.15"  # metadata configuration and current clients need 2.15
# The file systems' throughput in CloudWatch: (namespace, dimension, byte metrics read and written). FSx for Lustre
# "Amazon FSx for Lustre metrics" and EFS "Amazon CloudWatch metrics for Amazon EFS" (AWS user guides): both are
# bytes per period under the Sum statistic, so bytes per second is the Sum over the period's seconds.
FSX_LUSTRE_THROUGHPUT_METRICS = ("AWS/FSx", "FileSystemId", ("DataReadBytes", "DataWriteBytes"))
EFS_THROUGHPUT_METRICS = ("AWS/EFS", "FileSystemId", ("DataReadIOBytes", "DataWriteIOBytes", "MetadataIOBytes"))
# What Grafana's CloudWatch data source needs to draw metrics (read only; neither action takes a resource ARN).
CLOUDWATCH_READ_ACTIONS = ("cloudwatch:GetMetricData", "cloudwatch:ListMetrics")
# LNet ports between clients and file servers, and among the servers (FSx user guide, "File system access
# control with Amazon VPC").
FSX_LUSTRE_PORTS = ((988, 988), (1018, 1023))
FSX_CSI_ADDON = "aws-fsx-csi-driver"
FSX_CSI_DRIVER = "fsx.csi.aws.com"
FSX_CSI_CONTROLLER_SERVICE_ACCOUNT = "fsx-csi-controller-sa"
# A static volume's `mountname` attribute is the Lustre source after `<dnsname>@tcp:/`, so `<mountname>/<dir>`
# mounts that directory only (a Lustre subdirectory mount; the approach kubernetes-sigs/aws-fsx-csi-driver
# issue #247 describes for one volume per application). The directory must exist first.
FSX_LUSTRE_MAX_DATA_REPOSITORY_ASSOCIATIONS = 8  # per file system (FSx API reference, CreateDataRepositoryAssociation)
# The image of the Job that makes the team directories: mkdir, chown and chmod only. Docker's official busybox.
DATASETS_SETUP_IMAGE = "public.ecr.aws/docker/library/busybox:1.37.0"
# AWS's Lustre client packages for Ubuntu (FSx user guide, "Installing the Lustre client"), one module
# package per Ubuntu AWS kernel release.
FSX_UBUNTU_REPOSITORY = "https://fsx-lustre-client-repo.s3.amazonaws.com/ubuntu"
FSX_UBUNTU_KEY = "https://fsx-lustre-client-repo-public-keys.s3.amazonaws.com/fsx-ubuntu-public-key.asc"


# --- Inputs whose change REPLACES a resource (Terraform AWS provider ForceNew, which pulumi-aws inherits:
# internal/service/eks/node_group.go and cluster.go, efs/file_system.go, ec2 vpc.go and subnet.go, and
# ec2 launch template name; botocore eks 2017-11-01 model). Wire (camelCase) names; `a.b` is a nested field. ---
REPLACE_FORCING_INPUTS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "aws:eks/nodeGroup:NodeGroup": (
        "amiType", "capacityType", "clusterName", "diskSize", "instanceTypes", "launchTemplate.id",
        "launchTemplate.name", "nodeGroupName", "nodeGroupNamePrefix", "nodeRoleArn", "remoteAccess", "subnetIds",
    ),
    "aws:eks/cluster:Cluster": (
        "name", "roleArn", "bootstrapSelfManagedAddons", "accessConfig.bootstrapClusterCreatorAdminPermissions",
        "kubernetesNetworkConfig.ipFamily", "kubernetesNetworkConfig.serviceIpv4Cidr",
    ),
    "aws:efs/fileSystem:FileSystem": ("availabilityZoneName", "creationToken", "encrypted", "kmsKeyId", "performanceMode"),
    "aws:fsx/lustreFileSystem:LustreFileSystem": (
        "deploymentType", "efaEnabled", "kmsKeyId", "securityGroupIds", "storageType", "subnetIds",
    ),
    "aws:ec2/launchTemplate:LaunchTemplate": ("name", "namePrefix"),
    "aws:ec2/vpc:Vpc": ("cidrBlock",),
    "aws:ec2/subnet:Subnet": ("availabilityZone", "cidrBlock", "vpcId"),
    # Kubernetes objects are replaced when their name changes (pulumi-kubernetes).
    "kubernetes:karpenter.sh/v1:NodePool": ("metadata.name",),
    "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass": ("metadata.name",),
})

# --- Look-ups (errors list what is valid, so callers can pass them straight to users) ---

def block_local_zones(instance_type: str) -> tuple[str, ...]:
    """The Local Zones where the type's Capacity Blocks are sold, in every region (empty: its blocks are in
    Availability Zones). A Local Zone's name carries its parent region."""
    return tuple(z for zones in LOCAL_ZONE_BLOCKS.get(instance_type, {}).values() for z in zones)


def local_zones_with_blocks() -> tuple[str, ...]:
    """Every Local Zone the catalog knows blocks in."""
    return tuple(sorted({z for t in LOCAL_ZONE_BLOCKS for z in block_local_zones(t)}))


def instance_type(name: str) -> InstanceType:
    try:
        return INSTANCE_TYPES[name]
    except KeyError:
        raise KeyError(f"unknown GPU instance type {name!r}; known: {', '.join(INSTANCE_TYPES)}") from None


def driver_branch(version: str) -> str:
    return version.split(".", 1)[0]


def version_key(version: str) -> tuple[int, ...]:
    """Numeric sort key for dotted versions such as driver `580.173.02`."""
    return tuple(int(p) for p in version.lstrip("v").split(".") if p.isdigit())


def mig_class(gpu: GpuModel, profile: str) -> MigClass:
    return gpu.grid.classes[gpu.mig_profiles[profile]]


def mig_compute_share(gpu: GpuModel, profile: str) -> float:
    """The fraction of the GPU's compute one instance of `profile` holds (3g on a 7-slice GPU: 3/7)."""
    return mig_class(gpu, profile).compute / gpu.grid.compute_slices


def mig_memory_share(gpu: GpuModel, profile: str) -> float:
    """The fraction of the GPU's memory one instance of `profile` holds (3g on a 7-slice GPU: 4/8)."""
    return mig_class(gpu, profile).memory / gpu.grid.memory_slices


# --- The NVIDIA Container Toolkit: what selects GPUs for a container besides the device plugin ---
# Environment variables the toolkit reads to pick devices (NVIDIA/nvidia-container-toolkit v1.20.0,
# internal/config/image/envvars.go): a container that sets one reaches devices the kubelet never allocated
# wherever the runtime honours them. NVIDIA_DRIVER_CAPABILITIES and NVIDIA_REQUIRE_* choose libraries and
# checks, not devices.
NVIDIA_DEVICE_ENV_VARS = ("NVIDIA_VISIBLE_DEVICES", "NVIDIA_MIG_CONFIG_DEVICES", "NVIDIA_MIG_MONITOR_DEVICES",
                          "NVIDIA_IMEX_CHANNELS")
# CDI device requests a container runtime reads from annotations with this prefix (the device plugin's
# cdi-annotations strategy, containerd's and the NVIDIA runtime's CDI support).
CDI_ANNOTATION_PREFIX = "cdi.k8s.io/"
# RuntimeClasses the GPU Operator creates for its own operands (nvidia, nvidia-cdi, nvidia-legacy): the NVIDIA
# runtime, which honours the variables above. Workloads get GPUs from the device plugin, without one.
NVIDIA_RUNTIME_CLASS_PREFIX = "nvidia"
# The toolkit setting that makes it ignore those variables in unprivileged containers, so only the device
# plugin's allocation reaches one (NVIDIA GPU Operator docs, "Security Considerations": "Preventing
# Unprivileged Access to GPUs"; the toolkit container reads the config option
# accept-nvidia-visible-devices-envvar-when-unprivileged from this variable, default true). With CDI on (the
# chart's default from v25.10) the operator gives the device plugin the cdi-annotations,cdi-cri list strategy,
# so allocated GPUs do not travel in the variable and NVIDIA's volume-mounts strategy is not needed.
TOOLKIT_ENVVAR_WHEN_UNPRIVILEGED = "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED"


# --- Kueue: queueing and fair sharing (kubernetes-sigs/kueue releases; chart README "Installing the chart") ---


@dataclass(frozen=True)
class KueueRelease:
    chart_version: str  # the OCI chart's version (no "v")
    app_version: str  # the controller image tag the chart deploys
    crds: str  # folder under facts/upstream/crds holding the release's CRDs (tests validate against them)
    # Topology-aware scheduling on without a feature gate: the TopologyAwareScheduling gate is alpha (off) from
    # 0.9 and beta, on by default, from 0.14 (kubernetes-sigs/kueue pkg/features/kube_features.go at v0.19.2).
    topology_aware_scheduling: bool = False


# The official chart is published only as an OCI artifact; Helm takes the reference as the chart name.
KUEUE_CHART = "oci://registry.k8s.io/kueue/charts/kueue"
KUEUE_API_VERSION = "kueue.x-k8s.io/v1beta2"  # the storage version of every Kueue CRD at these releases
KUEUE_CONFIG_API_VERSION = "config.kueue.x-k8s.io/v1beta2"  # the controller's Configuration (apis/config/v1beta2)
KUEUE_RELEASES: Mapping[str, KueueRelease] = MappingProxyType({
    r.chart_version: r for r in (KueueRelease("0.19.2", "v0.19.2", "kueue-v0.19.2", topology_aware_scheduling=True),)
})
# Workload kinds Kueue admits (Configuration.integrations.frameworks). "pod", "deployment" and "statefulset"
# are opt-in: without "pod" a plain Pod carrying the queue label would run unqueued. Kinds whose CRDs are
# not installed are skipped by the controller.
KUEUE_FRAMEWORKS = ("batch/job", "pod", "deployment", "statefulset", "jobset.x-k8s.io/jobset",
                    "kubeflow.org/pytorchjob", "kubeflow.org/mpijob", "trainer.kubeflow.org/trainjob",
                    "ray.io/rayjob", "ray.io/raycluster", "leaderworkerset.x-k8s.io/leaderworkerset")
# Requests Kueue does not count (Configuration.resources.excludeResourcePrefixes): node-local resources that
# come with the node, not with a quota. A ClusterQueue refuses any request it does not cover, so an EFA
# request (vpc.amazonaws.com/efa) would otherwise keep a training Job pending forever.
KUEUE_EXCLUDED_RESOURCE_PREFIXES = ("vpc.amazonaws.com/", "ephemeral-storage", "hugepages-")


# Instance types EC2 DescribeInstanceTopology describes, hence whose nodes the cloud controller labels with
# their network layers (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ec2-instance-topology-prerequisites.html,
# "Instance types": those the catalog has). p6-b200 and p6-b300 have a fourth layer, below the three used here.
TOPOLOGY_INSTANCE_TYPES = frozenset({
    *(f"g6e.{s}" for s in ("xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "48xlarge")),
    *(f"g7e.{s}" for s in ("2xlarge", "4xlarge", "8xlarge", "12xlarge", "24xlarge", "48xlarge")),
    "p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge",
    "p6e-gb200.36xlarge", "p6-b200.48xlarge", "p6-b300.48xlarge",
})


# --- Dynamic Resource Allocation: NVIDIA's DRA driver (kubernetes-sigs/dra-driver-nvidia-gpu; AWS EKS user
# guide, device-management-nvidia-dra-device-plugin @43d79bdb; kubernetes-sigs/dra-driver-nvidia-gpu README.md) ---


@dataclass(frozen=True)
class DraDriverRelease:
    version: str  # the chart's version (no "v"); the image tag defaults to v<version>
    values_file: str  # the chart's values.yaml kept in facts/upstream/ for the Helm-keys guard
    crds: str  # folder under facts/upstream/crds/ holding the ComputeDomain CRD the chart installs
    # NVIDIA's own word on GPU allocation (not ComputeDomains) at this release: its README's support line.
    gpu_allocation_supported: bool


# The chart AWS documents for EKS (`--version 0.4.1`). Registry: the OCI artifact at registry.k8s.io.
# 0.4.1's README (tag v0.4.1): ComputeDomains "officially supported"; GPU allocation features "can be tried
# out" but "are not yet officially supported". NVIDIA's table listing GPU allocation as supported is for 0.5.0
# (released 2026-08-19, kubernetes-sigs/dra-driver-nvidia-gpu PR #1367), pinned only once its chart's
# values.yaml and CRDs at tag v0.5.0 are copied into facts/upstream/.
DRA_DRIVER_CHART = "oci://registry.k8s.io/dra-driver-nvidia/charts/dra-driver-nvidia-gpu"
DRA_DRIVER_RELEASES: Mapping[str, DraDriverRelease] = MappingProxyType({
    r.version: r for r in (DraDriverRelease("0.4.1", "dra-driver-nvidia-gpu-values-0.4.1.yaml",
                                            "dra-driver-nvidia-gpu-v0.4.1", gpu_allocation_supported=False),)
})
DRA_DRIVER_NAMESPACE = "nvidia-dra-driver-gpu"
# Floors, the most conservative of the sources: Kubernetes made DRA stable (resource.k8s.io/v1) in 1.34 and
# AWS recommends the driver from 1.34; NVIDIA's operator-managed path needs 1.34.2 (EKS runs patch releases
# past it on 1.34) and a driver of branch R580 or newer (GPU Operator 26.7 dra-intro-install.rst @52dcb7b8).
DRA_MIN_KUBERNETES = "1.34"
DRA_MIN_DRIVER_BRANCH = "580"
# The Kubernetes API version of DeviceClass, ResourceClaim and ResourceClaimTemplate from DRA_MIN_KUBERNETES.
RESOURCE_API_VERSION = "resource.k8s.io/v1"
# NVIDIA's ComputeDomain (the driver's CRD at the pinned release; AWS EKS user guide, ml-eks-nvidia-ultraserver).
COMPUTE_DOMAIN_API_VERSION = "resource.nvidia.com/v1beta1"
# Who installs the ComputeDomain and ComputeDomainClique CRDs. Both charts carry them in crds/ (gpu-operator
# v26.7.0 deployments/gpu-operator/crds/; dra-driver-nvidia-gpu deployments/helm/dra-driver-nvidia-gpu/crds/)
# and the copies differ: the operator's requires spec.numNodes. Helm installs crds/ only when a CRD is missing
# and never updates it (https://helm.sh/docs/chart_best_practices/custom_resource_definitions/), so the
# schema a cluster serves would depend on which release came first. The operator's release owns them: it is
# installed on every cluster, and its crds/ cannot be skipped alone (ClusterPolicy is there too). The DRA
# driver's release skips its crds/ (Helm --skip-crds) and is installed after the operator's.
COMPUTE_DOMAIN_CRDS_OWNER = GPU_OPERATOR_CHART
DRA_DRIVER_SKIPS_CRDS = COMPUTE_DOMAIN_CRDS_OWNER == GPU_OPERATOR_CHART

# --- Logs: the Fluent Bit chart and CloudWatch Logs ---

# fluent/helm-charts, charts/fluent-bit (tag fluent-bit-0.58.1, Fluent Bit 5.1.1): the upstream image has the
# cloudwatch_logs output and the log_to_metrics filter; values.yaml at the tag is kept in facts/upstream/.
FLUENT_BIT_CHART = ("https://fluent.github.io/helm-charts", "fluent-bit")
FLUENT_BIT_VALUES: Mapping[str, str] = MappingProxyType({
    "0.58.1": "fluent-bit-values-0.58.1.yaml",
})
# The values PutRetentionPolicy accepts (CloudWatch Logs API reference, PutRetentionPolicy retentionInDays).
LOG_RETENTION_DAYS = (1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922,
                      3288, 3653)
# What a stack keeps when it names no retention: short where logs only help debugging, a year in prod.
DEFAULT_LOG_RETENTION_DAYS: Mapping[str, int] = MappingProxyType({"dev": 14, "staging": 30, "prod": 365})
# Amazon CloudWatch pricing page, us-east-1, Logs Standard class: ingestion per GB, storage per GB-month.
CLOUDWATCH_LOGS_PRICE_SOURCE = "Amazon CloudWatch pricing page (aws.amazon.com/cloudwatch/pricing), us-east-1, Standard"
CLOUDWATCH_LOGS_INGEST_USD_PER_GB = 0.50
CLOUDWATCH_LOGS_STORAGE_USD_PER_GB_MONTH = 0.03
# The same two prices as the cost model quotes them (usd_per_hour holds USD per GB ingested, per GB-month stored).
CLOUDWATCH_LOGS_INGEST = Price(CLOUDWATCH_LOGS_INGEST_USD_PER_GB, f"{CLOUDWATCH_LOGS_PRICE_SOURCE}, ingestion per GB",
                               "2026-11")
CLOUDWATCH_LOGS_STORAGE = Price(CLOUDWATCH_LOGS_STORAGE_USD_PER_GB_MONTH,
                                f"{CLOUDWATCH_LOGS_PRICE_SOURCE}, storage per GB-month", "2026-11")
# What a namespace is assumed to write when the stack file states nothing (logging.ingestGbPerDay; docs/logging.md).
DEFAULT_LOG_INGEST_GB_PER_DAY = 1.0
