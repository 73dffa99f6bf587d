"""EFA end to end for `efa: true` pools: what multi-node NCCL needs besides the interfaces themselves.

- Interfaces: one `efa` interface per network card the instance type has (catalog; the launch template
  attaches them, see launch_template.efa_interfaces) and a cluster placement group in one zone.
- Security group: EFA's OS-bypass traffic is only delivered between interfaces whose security group
  allows all traffic to and from itself (AWS EC2 user guide, "Prepare an EFA-enabled security group").
  Each EFA pool gets such a group beside the cluster's, on every EFA interface (resources/efa.py).
- Driver: AL2023 NVIDIA and Bottlerocket AMIs ship the host components (AWS EKS user guide, "Manage EFA
  devices"). On Ubuntu the AWS kernel's `efa` module is loaded at boot and the node refuses to join unless
  every interface's device shows up, and containerd gets unlimited locked memory (EFA registers buffers).
- Device plugin: the official `aws-efa-k8s-device-plugin` chart, pinned, only on EFA pools (node label
  `gpu-platform.io/efa`), tolerating the GPU taint and the pools' own taints, advertising
  `vpc.amazonaws.com/efa` (render/efa.py).
- Workloads: `gpu_pod_spec` requests EFA devices and sets the libfabric/NCCL environment (see workloads).
"""
from __future__ import annotations

from typing import TYPE_CHECKING
from collections.abc import Sequence

from gpu_platform.decisions.launch_template import efa_interface_count
from gpu_platform.facts import catalog

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec, PlatformSpec


def efa_pools(spec: "PlatformSpec") -> list["NodePoolSpec"]:
    return [p for p in spec.node_pools if p.efa]


def rdma(pool: "NodePoolSpec") -> bool:
    """GPUDirect RDMA over EFA: every instance type of the pool supports it."""
    return pool.efa and all(it.family in catalog.EFA_RDMA_FAMILIES for it in pool.instances)


def pod_env(pools: Sequence["NodePoolSpec"]) -> list[dict[str, str]]:
    """libfabric/NCCL environment for pods that may land on any of these EFA pools. Device RDMA only when
    every one of them has it: libfabric aborts a process asking for it on a device without RDMA read."""
    pairs = [*catalog.EFA_ENV, *(catalog.EFA_RDMA_ENV if all(rdma(p) for p in pools) else ())]
    return [{"name": k, "value": v} for k, v in pairs]


def pod_devices(pool: "NodePoolSpec", units: int, units_per_node: int) -> int:
    """EFA devices for a pod with `units` of the node's `units_per_node` GPUs (or time-sliced replicas):
    the node's interfaces in proportion, rounded down, so pods filling a node never ask for more
    devices than it has. A pod whose share is under one interface asks for none (an interface cannot
    be shared between pods)."""
    return efa_interface_count(pool) * units // units_per_node if units_per_node else 0


# --- Ubuntu boot ---

def ubuntu_boot_lines(pool: "NodePoolSpec") -> list[str]:
    """Bash for the Ubuntu boot script of an EFA pool: the driver, every device, unlimited memlock."""
    expected = efa_interface_count(pool)
    return [
        f"# EFA: the kernel driver and all {expected} devices, or the node never joins (no silent TCP fallback).",
        "modprobe efa",
        "efa_devices() { find /sys/class/infiniband -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }",
        f"for _ in $(seq 60); do (( $(efa_devices) >= {expected} )) && break; sleep 1; done",
        f'if (( $(efa_devices) < {expected} )); then echo "EFA: expected {expected} devices, found $(efa_devices)" >&2; exit 1; fi',
        "mkdir -p /etc/systemd/system/containerd.service.d",
        "printf '[Service]\\nLimitMEMLOCK=infinity\\n' > /etc/systemd/system/containerd.service.d/50-efa-memlock.conf",
        "systemctl daemon-reload",
        "systemctl restart containerd",
    ]
