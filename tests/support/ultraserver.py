"""The training-ultraserver example stack (GB200 NVL72 UltraServers on a Capacity Block, GPUs and IMEX channels by
DRA), for the tests of every layer."""
from __future__ import annotations

from tests.support.stacks import stack_platform

STACK = "training-ultraserver"
POOL = "gb200-nvl"


def ultraserver() -> dict:
    return stack_platform(STACK)


def pool_of(platform: dict) -> tuple[int, dict]:
    return next((i, p) for i, p in enumerate(platform["nodePools"]) if p["name"] == POOL)
