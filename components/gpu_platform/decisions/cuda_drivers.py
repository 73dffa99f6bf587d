"""The drivers each pool's nodes run and the CUDA versions they run, from what the pool pins (docs/cuda.md).

A pool's driver is the GPU Operator's pinned driver on images without one (Ubuntu), else the branch its
AMI release carries for its instance families (decisions/lifecycle.pool_driver). Free of the stack-file
model, so the pack reads registered resources with it; decisions/cuda.py reads the spec with it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional
from collections.abc import Iterable, Mapping

from gpu_platform.decisions.lifecycle import pool_driver
from gpu_platform.decisions.pinned import Pinned, PoolPin
from gpu_platform.facts import cuda, names


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


NAMESPACE = "kubernetes:core/v1:Namespace"


def team_minimums(resources: Iterable[tuple[str, Mapping[str, Any]]]) -> dict[str, dict[str, Any]]:
    """Each team namespace's CUDA minimum and the pools held to it, read from its annotations (the lock's
    `teams` section): {team: {"minCuda": "12.8", "pools": [...]}}, `pools` absent when every pool is."""
    out: dict[str, dict[str, Any]] = {}
    for type_, inputs in resources:
        meta = inputs.get("metadata") if type_ == NAMESPACE else None
        notes = meta.get("annotations") if isinstance(meta, Mapping) else None
        if not isinstance(meta, Mapping) or not isinstance(notes, Mapping) or names.MIN_CUDA_ANNOTATION not in notes:
            continue
        labels = meta.get("labels")
        team = (labels.get(names.TEAM_LABEL) if isinstance(labels, Mapping) else None) or meta.get("name")
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
