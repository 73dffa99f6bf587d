"""Which CUDA versions each pool's driver runs, from what the pool pins (docs/cuda.md).

A pool's driver is the GPU Operator's pinned driver on images without one (Ubuntu), else the branch its
AMI release carries for its instance families (decisions/lifecycle.pool_driver). The same reading serves
the plan (from the spec), the stack-file rule and the pack (from registered resources).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping, Optional

from gpu_platform.decisions.lifecycle import pool_driver
from gpu_platform.decisions.pinned import Pinned, PoolPin
from gpu_platform.facts import catalog, cuda, names

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec, PlatformSpec, TeamSpec


@dataclass(frozen=True)
class PoolCuda:
    """The drivers one pool's nodes run: each certain, or possible (the AMI picks per instance)."""

    pool: str
    drivers: tuple[tuple[str, bool], ...]  # (exact version or branch, certain); empty: not known

    @property
    def known(self) -> bool:
        return bool(self.drivers)

    def ceiling(self) -> Optional[cuda.Ceiling]:
        """The lowest ceiling among the drivers the pool may run (what every node of it runs)."""
        if not self.drivers:
            return None
        return min((cuda.ceiling(d) for d, _ in self.drivers), key=_ceiling_key)

    def shortfalls(self, version: str) -> list[tuple[str, bool]]:
        """The drivers of the pool that cannot run `version`, each with whether the pool surely runs it."""
        return [(d, certain) for d, certain in self.drivers if cuda.how_runs(d, version) == cuda.NOT]

    def describe(self, driver: str, certain: bool) -> str:
        what = f"driver {driver}" if "." in driver else f"driver branch R{driver}"
        return f"pool {self.pool} {'runs' if certain else 'may run (the AMI picks per instance)'} {what}"


def _ceiling_key(c: cuda.Ceiling) -> tuple[int, int, int]:
    native = cuda.parse_cuda(c.native) if c.native else (0, 0)
    return (*native, c.minor_version_major or 0)


def pin_cuda(pin: PoolPin, operator_driver: Optional[str]) -> PoolCuda:
    """A pool's drivers from what it pins: an image without a driver runs the operator's."""
    if pin.custom_image:
        return PoolCuda(pin.name, ((operator_driver, True),) if operator_driver else ())
    found = pool_driver(pin)
    drivers = [(b, True) for b in found.certain] + [(b, False) for b in found.possible if b not in found.certain]
    return PoolCuda(pin.name, tuple(drivers))


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


def min_cuda_rules(spec: "PlatformSpec") -> Iterator[tuple[str, str]]:
    """Teams' and pools' minCuda against the drivers of the pools they reach (decisions.pod_sizing.team_pools)."""
    from gpu_platform.decisions.pod_sizing import team_pools

    chart = spec.gpu_operator.chart_version
    for i, team in enumerate(spec.teams):
        if team.min_cuda:
            pools = [spec_pool_cuda(spec, p) for p in team_pools(spec, team)]
            yield from shortfall_problems(f"teams[{i}].minCuda", f"team {team.name}", team.min_cuda, pools, chart)
    for i, pool in enumerate(spec.node_pools):
        yield from pool_min_cuda_rules(f"nodePools[{i}].minCuda", pool, operator_driver(spec), chart)


def pool_min_cuda_rules(path: str, pool: "NodePoolSpec", driver: Optional[str],
                        chart: Optional[str]) -> Iterator[tuple[str, str]]:
    """A pool's own minCuda against its driver (`driver`: the GPU Operator's, when it installs one)."""
    if pool.min_cuda:
        found = pin_cuda(spec_pin(pool), driver)
        yield from shortfall_problems(path, f"pool {pool.name}", pool.min_cuda, [found], chart)


def shortfall_problems(path: str, who: str, version: str, pools: list[PoolCuda],
                       chart: Optional[str]) -> Iterator[tuple[str, str]]:
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


# --- what the lock records, and the pack's gate ---

NAMESPACE = "kubernetes:core/v1:Namespace"


def team_minimums(resources: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Each team namespace's CUDA minimum and the pools held to it, read from its annotations (the lock's
    `teams` section): {team: {"minCuda": "12.8", "pools": [...]}}, `pools` absent when every pool is."""
    out: dict[str, dict[str, Any]] = {}
    for type_, inputs in resources:
        meta = inputs.get("metadata") if type_ == NAMESPACE else None
        notes = (meta or {}).get("annotations") or {}
        if not isinstance(notes, Mapping) or names.MIN_CUDA_ANNOTATION not in notes:
            continue
        team = ((meta.get("labels") or {}).get(names.TEAM_LABEL)) or meta.get("name")
        entry: dict[str, Any] = {"minCuda": notes[names.MIN_CUDA_ANNOTATION]}
        pools = notes.get(names.MIN_CUDA_POOLS_ANNOTATION)
        if pools is not None:
            entry["pools"] = [p for p in str(pools).split(",") if p]
        out[str(team)] = entry
    return dict(sorted(out.items()))


def below_minimums(teams: Mapping[str, Any], pins: Pinned) -> list[tuple[str, str]]:
    """(pool, message) for each pool whose driver cannot run the CUDA minimum of a team held to it."""
    found = []
    for pin in pins.pools:
        pc = pin_cuda(pin, pins.operator_driver)
        for team, entry in sorted(teams.items()):
            version, pools = entry.get("minCuda"), entry.get("pools")
            if not isinstance(version, str) or cuda.version_problem(version) or (pools is not None and pin.name not in pools):
                continue
            for driver, certain in pc.shortfalls(version):
                found.append((pin.name, f"team {team} needs CUDA {version} (the lock's teams.{team}.minCuda), but "
                                        f"{pc.describe(driver, certain)}, which cannot run it (its ceiling: "
                                        f"{cuda.ceiling_text(cuda.ceiling(driver))})"))
    return found
