"""Log lines the platform counts as GPU failures, as the software that writes them spells them.

- CUDA out of memory: PyTorch's `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ...`
  (pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp) and the CUDA runtime's `cudaErrorMemoryAllocation`
  (`CUDA error: out of memory`, CUDA Runtime API, error types).
- NCCL errors: NCCL's `NCCL WARN` lines and its result codes (`ncclUnhandledCudaError`, `ncclSystemError`,
  `ncclInternalError`, `ncclRemoteError`, NCCL docs, ncclResult_t), and PyTorch's `NCCL error` exceptions.
- NCCL timeouts: PyTorch's watchdog, `Watchdog caught collective operation timeout: WorkNCCL(...)`
  (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp).
- Xid: the driver's kernel line `NVRM: Xid (PCI:0000:10:1c): 79, pid=..., ...` (NVIDIA Xid Errors guide).
- OOM kill: the kernel's `Memory cgroup out of memory: Killed process N (name)` (linux mm/oom_kill.c).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LogPattern:
    metric: str  # Fluent Bit's log_to_metrics metric_name
    regex: str  # Onigmo syntax (Fluent Bit) that Python's re also reads the same way
    source: str  # "containers" (team and platform pods) or "kernel" (the node's kernel journal)
    description: str


CUDA_OOM = LogPattern(
    "cuda_oom", r"CUDA out of memory|CUDA error: out of memory|cudaErrorMemoryAllocation", "containers",
    "CUDA out-of-memory errors in container logs")
NCCL_ERROR = LogPattern(
    "nccl_error", r"NCCL WARN|NCCL error|ncclUnhandledCudaError|ncclSystemError|ncclInternalError|ncclRemoteError",
    "containers", "NCCL errors in container logs")
NCCL_TIMEOUT = LogPattern(
    "nccl_timeout", r"Watchdog caught collective operation timeout|WorkNCCL\(.*\) ran for \d+ milliseconds before timing out",
    "containers", "NCCL collective timeouts in container logs")
XID = LogPattern("xid", r"NVRM: Xid \(PCI:[0-9a-fA-F:.]+\): \d+", "kernel", "NVIDIA Xid lines in the kernel log")
OOM_KILL = LogPattern("oom_kill", r"Memory cgroup out of memory: Killed process \d+", "kernel",
                      "containers killed by the kernel's OOM killer")
LOG_PATTERNS = (CUDA_OOM, NCCL_ERROR, NCCL_TIMEOUT, XID, OOM_KILL)
# log_to_metrics names its counters <metric_namespace>_<metric_subsystem>_<metric_name> (Fluent Bit manual,
# filters/log_to_metrics: defaults `log_metric` and the mode, `counter`).
METRIC_PREFIX = "log_metric_counter_"
