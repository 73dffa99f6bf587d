"""Stack files with DRA pools, built from the shipped stacks."""
from __future__ import annotations

from tests.support.stacks import stack_platform, without_services

DRA_POOL = "a100-train"  # the prod stack's training pool, moved to DRA in the variant


def prod_with_dra(pool: str = DRA_POOL) -> dict:
    """The prod stack with one pool on `gpuAllocation: dra` at a fixed size (its maxSize)."""
    platform = stack_platform("prod")
    chosen = next(p for p in platform["nodePools"] if p["name"] == pool)
    chosen.update(gpuAllocation="dra", minSize=chosen["maxSize"])
    return platform


def dra_pool_of(platform: dict, pool: str = DRA_POOL) -> tuple[int, dict]:
    return next((i, p) for i, p in enumerate(platform["nodePools"]) if p["name"] == pool)


def bottlerocket_dra(release: str) -> dict:
    """The dev stack with its pool on Bottlerocket (pinned to `release`) and `gpuAllocation: dra`."""
    platform = stack_platform("dev")
    pool = platform["nodePools"][0]
    # Whole GPUs instead of the dev pool's time slices: as many single-GPU nodes as the teams' quotas ask.
    pool.update(gpuAllocation="dra", minSize=12, maxSize=12, sharing={"mode": "none"},
                ami={"type": "BOTTLEROCKET_x86_64_NVIDIA", "releaseVersion": release})
    return without_services(platform)  # a DRA pool takes no services
