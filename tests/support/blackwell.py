"""Blackwell pools and reserved capacity, for the tests of every layer.

- `blackwell()`: the training-blackwell example stack (b200-train on a Capacity Block with EFA, rtx-serve on an
  On-Demand Capacity Reservation with RTX PRO 6000 MIG slices).
- `block_pool()` / `odcr_pool()`: pool dicts on reserved capacity, to add to any stack.
- `karpenter_twin()`: the example with b200-train as a Karpenter pool (no EFA: Karpenter pools take none).
"""
from __future__ import annotations

from tests.support.stacks import stack_platform

STACK = "training-blackwell"
DUAL_DRIVER_AMI = {"type": "AL2023_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260917"}
BLOCK = {"id": "cr-0b2c4d6e8f0a1b3c5", "start": "2026-11-16T11:30:00Z", "end": "2026-12-14T11:30:00Z",
         "instanceCount": 4}
ODCR = {"id": "cr-0e7e12b0d5a4c3f21", "instanceCount": 2}


def blackwell() -> dict:
    return stack_platform(STACK)


def block_pool(name: str = "b200-block", instance_type: str = "p6-b200.48xlarge", **extra) -> dict:
    pool = {"name": name, "instanceTypes": [instance_type], "capacityType": "capacity-block",
            "reservation": dict(BLOCK), "zones": ["us-east-1a"], "minSize": 0, "maxSize": 4,
            "ami": dict(DUAL_DRIVER_AMI)}
    pool.update(extra)
    return pool


def odcr_pool(name: str = "rtx-odcr", instance_type: str = "g7e.12xlarge", **extra) -> dict:
    pool = {"name": name, "instanceTypes": [instance_type], "capacityType": "on-demand", "reservation": dict(ODCR),
            "zones": ["us-east-1b"], "minSize": 0, "maxSize": 2, "ami": dict(DUAL_DRIVER_AMI)}
    pool.update(extra)
    return pool


def karpenter_twin() -> dict:
    """The example with its block pool and its ODCR pool provisioned by Karpenter (prod: a disruption window).
    Karpenter pools take no EFA, and Karpenter knows GPUs only whole (or under the single MIG strategy): the
    serving pool runs whole GPUs here, and its team asks for them."""
    platform = blackwell()
    platform["karpenter"] = {"chartVersion": "1.14.1", "disruptionWindow": {"schedule": "0 2 * * sun", "duration": "4h"}}
    for pool in platform["nodePools"]:
        pool.update(provisioner="karpenter", ami={"type": "AL2023_x86_64_NVIDIA", "alias": "al2023@v20260917"})
        for key in ("efa", "zones", "sharing"):
            pool.pop(key, None)
        pool["minSize"] = 0
    platform["teams"][1]["quota"] = {"gpus": 4, "cpu": "64", "memory": "256Gi"}
    return platform
