"""Node acceptance facts: DCGM's diagnostic levels, the images the checks run, the in-node NCCL bandwidth
floors, and the node readiness controller release that lifts the startup taint (docs/acceptance.md).

Sources:
- DCGM levels: NVIDIA DCGM user guide, "DCGM Diagnostics", run levels of `dcgmi diag -r`: 1 quick (system
  validation, seconds), 2 medium (extended system validation, about 2 minutes), 3 long (system hardware
  diagnostics, about 15 minutes). Active levels need the GPUs to themselves.
- Link bandwidth per GPU: NVIDIA's data sheets (NVLink 3 600 GB/s, NVLink 4 900 GB/s, NVLink 5 1.8 TB/s, each
  the total of both directions); PCIe 4.0 x16 32 GB/s and PCIe 5.0 x16 64 GB/s per direction (PCI-SIG).
  nccl-tests reports all-reduce "busbw", comparable with one direction of the links (NVIDIA/nccl-tests
  doc/PERFORMANCE.md). The floor is a share of it: a healthy node clears it with room, a degraded link or a
  GPU on a slow PCIe path does not.
- EFA loopback transfer: the EFA installer puts libfabric's fabtests in /opt/amazon/efa/bin (its own
  verification, efa_test.sh, runs `/opt/amazon/efa/bin/fi_pingpong -e rdm -p efa` as server and client on the
  one instance; the NCCL tests image installs EFA 1.43.2 with `efa_installer.sh -y -g -d --skip-kmod
  --skip-limit-conf --no-verify`, which installs it and skips only that run). fi_pingpong prints one row per
  message size: bytes, #sent, #ack, total, time, MB/sec, usec/xfer, Mxfers/sec (libfabric fi_pingpong(1)).
  The aws/aws-cdi-sdk guide's efa_test.sh sample shows 2359 MB/s at 1m; the floor is a share of it.
- node-readiness-controller: kubernetes-sigs/node-readiness-controller v0.4.1 (the release whose images are
  published; facts/upstream/crds/README.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Optional
from collections.abc import Mapping

from gpu_platform.facts import catalog

CHECKS = ("dcgm", "nccl", "efa", "imex")  # in the order they run


@dataclass(frozen=True)
class DiagLevel:
    level: int  # dcgmi diag -r <level>
    name: str
    expected_seconds: int  # the user guide's duration
    default_timeout_minutes: int  # the check gives up after this (the node stays tainted and alerts)


DCGM_LEVELS: Mapping[int, DiagLevel] = MappingProxyType({d.level: d for d in (
    DiagLevel(1, "quick: software and deployment checks", 30, 10),
    DiagLevel(2, "medium: adds PCIe, memory and short stress tests", 120, 15),
    DiagLevel(3, "long: adds targeted stress, power and memory bandwidth tests", 900, 45),
)})
FULL_LEVEL = 3  # the level a failed node must pass before it may take work again

# What each check costs besides DCGM's own time (seconds): the NCCL all-reduce sweep up to 8 GiB, the EFA
# listing and transfer, the IMEX domain query. Estimates for the plan; the check's timeout bounds them.
CHECK_SECONDS: Mapping[str, int] = MappingProxyType({"nccl": 120, "efa": 20, "imex": 15})
# Pulling the check images on a fresh node (estimates: the DCGM image is about 1 GB, the NCCL tests image
# with EFA's libraries several GB; the reporter's is small).
PULL_SECONDS: Mapping[str, int] = MappingProxyType({"dcgm": 60, "nccl": 180, "efa": 0, "imex": 0})
CHECK_TIMEOUT_MINUTES: Mapping[str, int] = MappingProxyType({"nccl": 15, "efa": 5, "imex": 5})

# The DCGM image the GPU Operator v26.7.0 chart pins for its host engine (`dcgm.version`); a test holds them equal.
DCGM_IMAGE = "nvcr.io/nvidia/cloud-native/dcgm:4.6.0-1-ubuntu24.04"
# AWS's NCCL tests image (aws-samples/awsome-distributed-training micro-benchmarks/nccl-tests): CUDA 12.8.1
# (runs on R570 and later drivers), EFA installer 1.43.2 (fi_info), aws-ofi-nccl 1.16.3, NCCL 2.27.7,
# nccl-tests 2.16.9 (all_reduce_perf).
NCCL_TESTS_IMAGE = ("public.ecr.aws/hpc-cloud/nccl-tests:"
                    "cuda12.8.1-efa1.43.2-ofiv1.16.3-ncclv2.27.7-1-testsv2.16.9")
# The reporter judges the recorded outputs and writes the node's condition and labels (Python standard library).
REPORTER_IMAGE = catalog.PYTHON_IMAGE
# Pinned by tag only, with no digest that could be verified from a public source: the DCGM image (NVIDIA's
# catalog publishes none, and it must equal the GPU Operator chart's own `dcgm` reference, also tag-only), the
# NCCL tests image, and the node readiness controller (its release notes list tags; registry.k8s.io's promotion
# manifest was not checked for v0.4.1). docs/acceptance.md says so.

# The EFA transfer: fi_pingpong over the RDM endpoint, the server on the node's first EFA domain, the client
# on its last (the same one on a single-interface node), shared memory off so the bytes cross the device.
EFA_BIN = "/opt/amazon/efa/bin"
EFA_PINGPONG_BYTES = 1048576  # one message size, 1 MiB: large enough that a path falling back to a slow route shows
EFA_PINGPONG_ITERATIONS = 100
EFA_PINGPONG_SAMPLE_MBPS = 2359.0  # aws/aws-cdi-sdk USER_GUIDE: efa_test.sh on one instance, 1m row
EFA_FLOOR_SHARE = 0.4  # a 100-iteration pingpong varies; a healthy path clears this with room
EFA_FLOOR_MBPS = round(EFA_PINGPONG_SAMPLE_MBPS * EFA_FLOOR_SHARE)

# Passive re-checks of idle accepted nodes: `dcgmi health -c` reads the health watches DCGM keeps in the
# background (DCGM user guide, "Health and Diagnostics": background health checks are non-invasive and do not
# need the GPUs to themselves), after `dcgmi health -s a` set them and they had a while to sample.
RECHECK_MAX_HOURS = 168  # a week: beyond it the re-check no longer says a node "stays proven"
HEALTH_WATCH_SECONDS = 60  # the watches sample this long before the report is read
HEALTH_TIMEOUT_MINUTES = 5

NODE_READINESS_VERSION = "v0.4.1"
NODE_READINESS_IMAGE = f"registry.k8s.io/node-readiness-controller/node-readiness-controller:{NODE_READINESS_VERSION}"
NODE_READINESS_CRDS = f"node-readiness-controller-{NODE_READINESS_VERSION}"  # folder under facts/upstream/crds


@dataclass(frozen=True)
class GpuLink:
    kind: str  # nvlink | pcie
    gbps_per_direction: float  # GB/s one way, per GPU
    source: str


_NVLINK = "NVIDIA data sheet: NVLink {} {} GB/s per GPU, both directions"
_PCIE = "PCI-SIG: PCIe {} x16, {} GB/s per direction"
GPU_LINKS: Mapping[str, GpuLink] = MappingProxyType({
    "A10G": GpuLink("pcie", 32, _PCIE.format("4.0", 32)),
    "L4": GpuLink("pcie", 32, _PCIE.format("4.0", 32)),
    "L40S": GpuLink("pcie", 32, _PCIE.format("4.0", 32)),
    "RTX-PRO-6000": GpuLink("pcie", 64, _PCIE.format("5.0", 64)),
    "A100-SXM4-40GB": GpuLink("nvlink", 300, _NVLINK.format(3, 600)),
    "A100-SXM4-80GB": GpuLink("nvlink", 300, _NVLINK.format(3, 600)),
    "H100-80GB-HBM3": GpuLink("nvlink", 450, _NVLINK.format(4, 900)),
    "H200": GpuLink("nvlink", 450, _NVLINK.format(4, 900)),
    "B200": GpuLink("nvlink", 900, _NVLINK.format(5, 1800)),
    "B300": GpuLink("nvlink", 900, _NVLINK.format(5, 1800)),
    "GB200": GpuLink("nvlink", 900, _NVLINK.format(5, 1800)),
})
# The all-reduce busbw floor as a share of one direction of the GPU's links. NVLink nodes run all-reduce
# near link speed (NVSwitch); PCIe nodes share root complexes and land well below it.
FLOOR_SHARE: Mapping[str, float] = MappingProxyType({"nvlink": 0.6, "pcie": 0.15})


def nccl_floor_gbps(gpu: str, gpu_count: int) -> Optional[float]:
    """The in-node all-reduce busbw floor (GB/s) of a node with `gpu_count` of these GPUs; None for one GPU."""
    if gpu_count < 2:
        return None
    link = GPU_LINKS[gpu]
    return round(link.gbps_per_direction * FLOOR_SHARE[link.kind], 1)
