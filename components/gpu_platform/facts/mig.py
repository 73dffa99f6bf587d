"""MIG placement: does a layout (profile -> count) fit on one GPU?

Counting compute slices is not enough (4g + 4g fits 7 slices yet cannot be placed): every instance
needs one of its allowed start slots with its memory range [start, start + memory) free inside the
GPU's memory slices (0..7 on 7-slice GPUs, 0..3 on 4-slice ones: catalog.MIG_GRIDS).
"""
from __future__ import annotations

from collections.abc import Mapping

from gpu_platform.facts.catalog import GpuModel, MigClass, mig_class


def layout_problem(gpu: GpuModel, layout: Mapping[str, int]) -> str | None:
    """Why `layout` does not fit one `gpu`, or None when it does."""
    if not gpu.mig_capable:
        return f"{gpu.key} has no MIG"
    unknown = [p for p in layout if p not in gpu.mig_profiles]
    if unknown:
        return f"{', '.join(sorted(unknown))} not a MIG profile of {gpu.key}; valid: {', '.join(gpu.mig_profiles)}"
    if any(n < 0 for n in layout.values()):
        return "counts must not be negative"
    instances = [mig_class(gpu, p) for p, n in layout.items() for _ in range(n)]
    if not instances:
        return "the layout is empty"
    for cls in {c.key: c for c in instances}.values():
        used = sum(1 for c in instances if c.key == cls.key)
        if used > cls.max_per_gpu:
            return f"at most {cls.max_per_gpu} {cls.key} instance(s) per GPU, layout asks for {used}"
    problem = _media_problem(instances)
    if problem:
        return problem
    grid = gpu.grid
    if sum(c.compute for c in instances) > grid.compute_slices:
        return f"needs {sum(c.compute for c in instances)} compute slices, a GPU has {grid.compute_slices}"
    if place(instances, grid.memory_slices) is None:
        return "the instances cannot all be given non-overlapping memory slots (placement rules)"
    return None


def _media_problem(instances: list[MigClass]) -> str | None:
    """A GPU has one optical-flow accelerator (one `+me` or `+me.all` instance), and an instance holding
    every media engine (`+me.all`) leaves none for the others (they must be `-me` profiles)."""
    if sum(1 for c in instances if c.media_extensions) > 1:
        return "at most one +me or +me.all profile per GPU"
    if any(c.media == "all" for c in instances) and any(c.media != "none" for c in instances if c.media != "all"):
        return "a +me.all instance holds every media engine: the other instances on the GPU must be -me profiles"
    return None


def fits(gpu: GpuModel, layout: Mapping[str, int]) -> bool:
    return layout_problem(gpu, layout) is None


def place(instances: list[MigClass], memory_slices: int = 8) -> list[int] | None:
    """Start slot per instance (same order), or None. Largest first keeps the search tiny."""
    order = sorted(range(len(instances)), key=lambda i: -instances[i].memory)
    starts: dict[int, int] = {}

    def search(k: int, used: int) -> bool:
        if k == len(order):
            return True
        cls = instances[order[k]]
        for start in cls.starts:
            mask = ((1 << cls.memory) - 1) << start
            if start + cls.memory <= memory_slices and not used & mask:
                starts[order[k]] = start
                if search(k + 1, used | mask):
                    return True
        return False

    return [starts[i] for i in range(len(instances))] if search(0, 0) else None


def compute_slices(gpu: GpuModel, layout: Mapping[str, int]) -> int:
    return sum(mig_class(gpu, p).compute * n for p, n in layout.items())
