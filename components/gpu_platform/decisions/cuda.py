"""Which CUDA versions each stack-file pool runs, and the minCuda rules (docs/cuda.md).

The drivers come from decisions/cuda_drivers.py, read from what a pool pins, exactly as the pack reads them
from the registered node groups.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional
from collections.abc import Iterator

from gpu_platform.decisions.cuda_drivers import PoolCuda, pin_cuda
from gpu_platform.decisions.pinned import PoolPin
from gpu_platform.facts import catalog, cuda
from gpu_platform.spec.field_path import NODE_POOLS, TEAMS, FieldPath, Problem

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec, PlatformSpec, TeamSpec


def spec_pin(pool: "NodePoolSpec") -> PoolPin:
    """What a stack-file pool pins, as the pack reads it from the registered node group."""
    image = pool.ami.image
    ami_type = None if image.eks_ami_type == "CUSTOM" else image.key if pool.provisioner == "karpenter" \
        else image.eks_ami_type
    return PoolPin(pool.name, ami_type, pool.ami.release_version or pool.ami.alias, tuple(pool.instance_types))


def operator_driver(spec: "PlatformSpec") -> Optional[str]:
    driver = spec.gpu_operator.driver
    return driver.version if driver.source == "operator" else None


def spec_pool_cuda(spec: "PlatformSpec", pool: "NodePoolSpec") -> PoolCuda:
    return pin_cuda(spec_pin(pool), operator_driver(spec))


def fix_text(chart_version: Optional[str], driver: str, version: str) -> str:
    """What would let a pool whose driver is `driver` run `version`."""
    needed = cuda.CUDA_RELEASES.get(version)
    floor = cuda.MINOR_VERSION_FLOORS.get(cuda.parse_cuda(version)[0])
    want = needed.min_driver if needed else floor.floor if floor else ""
    if "." in driver:  # the GPU Operator's driver
        chart = catalog.GPU_OPERATOR_CHARTS.get(chart_version or "")
        fits = [d for d in (chart.supported_drivers if chart else ()) if cuda.how_runs(d, version) != cuda.NOT]
        return (f"set gpuOperator.driver.version to a driver >= {want}"
                + (f" ({chart_version} supports {', '.join(fits)})" if fits else ""))
    return (f"pin a newer ami.releaseVersion whose AMI carries a driver >= {want} (R{want.split('.')[0]} or later), "
            "or lower the minimum to what the branch runs (docs/cuda.md)")


def min_cuda_rules(spec: "PlatformSpec") -> Iterator[Problem]:
    """Teams' and pools' minCuda against the drivers of the pools they reach (decisions.pod_sizing.team_pools)."""
    from gpu_platform.decisions.pod_sizing import team_pools

    chart = spec.gpu_operator.chart_version
    for i, team in enumerate(spec.teams):
        if team.min_cuda:
            pools = [spec_pool_cuda(spec, p) for p in team_pools(spec, team)]
            yield from shortfall_problems(TEAMS.index(i) / "minCuda", f"team {team.name}", team.min_cuda, pools, chart)
    for i, pool in enumerate(spec.node_pools):
        yield from pool_min_cuda_rules(NODE_POOLS.index(i) / "minCuda", pool, operator_driver(spec), chart)


def pool_min_cuda_rules(path: FieldPath, pool: "NodePoolSpec", driver: Optional[str],
                        chart: Optional[str]) -> Iterator[Problem]:
    """A pool's own minCuda against its driver (`driver`: the GPU Operator's, when it installs one)."""
    if pool.min_cuda:
        found = pin_cuda(spec_pin(pool), driver)
        yield from shortfall_problems(path, f"pool {pool.name}", pool.min_cuda, [found], chart)


def shortfall_problems(path: FieldPath, who: str, version: str, pools: list[PoolCuda],
                       chart: Optional[str]) -> Iterator[Problem]:
    for pc in pools:
        for driver, certain in pc.shortfalls(version):
            yield (path, f"{who} needs CUDA {version}, but {pc.describe(driver, certain)}, which cannot run it "
                         f"(its ceiling: {cuda.ceiling_text(cuda.ceiling(driver))}); {fix_text(chart, driver, version)}")


def team_min_cuda(spec: "PlatformSpec", team: "TeamSpec") -> Optional[tuple[str, list[str]]]:
    """A team's CUDA minimum and the pools it reaches (what the team's namespace records for the pack)."""
    from gpu_platform.decisions.pod_sizing import team_pools

    if not team.min_cuda:
        return None
    return team.min_cuda, [p.name for p in team_pools(spec, team)]
