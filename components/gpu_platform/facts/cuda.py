"""CUDA compatibility: which CUDA toolkit versions an NVIDIA driver runs, and how.

Data and look-ups only (docs/cuda.md explains the rules). Three of NVIDIA's rules, each with its source:
- a toolkit release runs natively on a driver at or above its GA minimum (CUDA Toolkit release notes,
  "CUDA Toolkit and Corresponding Driver Versions", Linux column; NVIDIA's data-center drivers carry one
  version number for x86_64 and aarch64, docs.nvidia.com/datacenter/tesla/drivers);
- minor-version compatibility: from CUDA 11, an application built with any toolkit of a major family
  runs on a driver at or above that family's floor, without the features that need a newer driver and
  without JIT-compiling PTX newer than the driver's (CUDA Compatibility guide, "Minor Version
  Compatibility");
- forward compatibility: the cuda-compat-<major>-<minor> package, installed in the image, lets a newer
  toolkit run on an older driver branch across major families, on data-center GPUs only (CUDA
  Compatibility guide, "Forward Compatibility"). The platform never installs it: it is the image's choice,
  so it never counts as "runs" here.
A driver branch without its exact version (an AMI's branch) is taken at its production releases, which are
at or above the GA minimum of the toolkit released with the branch.
"""
from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Optional
from collections.abc import Mapping

from gpu_platform.facts.catalog import version_key

CHECKED = "2026-11-27"  # the day every entry below was last checked against its source
RELEASE_NOTES = "https://docs.nvidia.com/cuda/archive/{v}/cuda-toolkit-release-notes/index.html"
COMPATIBILITY_GUIDE = "https://docs.nvidia.com/deploy/cuda-compatibility/minor-version-compatibility.html"
FORWARD_GUIDE = "https://docs.nvidia.com/deploy/cuda-compatibility/forward-compatibility.html"

NATIVE, MINOR_VERSION, NOT = "native", "minor-version-compatibility", "not"


@dataclass(frozen=True)
class CudaRelease:
    version: str  # "major.minor"
    min_driver: str  # the Linux x86_64 / aarch64 driver of the GA release ("CUDA x.y GA >= ...")
    source: str
    checked: str = CHECKED


def _release(version: str, min_driver: str, archive: str) -> CudaRelease:
    return CudaRelease(version, min_driver, RELEASE_NOTES.format(v=archive))


# Table 3 of each release's notes, its GA row. CUDA 12.7 was never released.
CUDA_RELEASES: Mapping[str, CudaRelease] = MappingProxyType({
    r.version: r
    for r in (
        _release("12.0", "525.60.13", "12.0.0"),
        _release("12.1", "530.30.02", "12.1.0"),
        _release("12.2", "535.54.03", "12.2.0"),
        _release("12.3", "545.23.06", "12.3.0"),
        _release("12.4", "550.54.14", "12.4.0"),
        _release("12.5", "555.42.02", "12.5.0"),
        _release("12.6", "560.28.03", "12.6.0"),
        _release("12.8", "570.26", "12.8.0"),
        _release("12.9", "575.51.03", "12.9.0"),
        _release("13.0", "580.65.06", "13.0.0"),
        _release("13.1", "590.44.01", "13.1.0"),
    )
})


@dataclass(frozen=True)
class MinorVersionFloor:
    major: int
    floor: str  # the oldest driver that runs every toolkit of the family through minor-version compatibility
    source: str = COMPATIBILITY_GUIDE
    checked: str = CHECKED


# The guide's table ("CUDA Toolkit 11.x, 12.x, and 13.x Driver Version Ranges"): 11.x >= 450.80.02 (its note),
# 12.x >= 525.60.13, 13.x >= 580.
MINOR_VERSION_FLOORS: Mapping[int, MinorVersionFloor] = MappingProxyType({
    f.major: f for f in (MinorVersionFloor(11, "450.80.02"), MinorVersionFloor(12, "525.60.13"),
                         MinorVersionFloor(13, "580"))
})
# What minor-version compatibility does not give (the guide's "Application Considerations").
MINOR_VERSION_LIMITS = ("APIs and features that need the newer driver fail with cudaErrorCallRequiresNewerDriver",
                        "PTX newer than the driver's cannot be JIT-compiled: the image must carry SASS for its GPUs")


@dataclass(frozen=True)
class ForwardCompatibility:
    package: str
    gpus: str
    limits: tuple[str, ...]
    source: str = FORWARD_GUIDE
    checked: str = CHECKED


FORWARD_COMPATIBILITY = ForwardCompatibility(
    "cuda-compat-<major>-<minor>, installed in the container image (never by the platform)",
    "NVIDIA data-center GPUs and select NGC Server Ready RTX SKUs only",
    ("only onto a driver branch NVIDIA still supports",
     "some features are excluded (the guide's 'Feature Exceptions')",
     "the package must match the toolkit's minor version"),
)


def parse_cuda(version: str) -> tuple[int, int]:
    """`"12.8"` -> (12, 8); ValueError naming the form for anything else."""
    parts = version.split(".") if isinstance(version, str) else []
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"{version!r} is not a CUDA version: write major.minor, e.g. \"12.8\"")
    return int(parts[0]), int(parts[1])


def known_major(version: str) -> bool:
    return parse_cuda(version)[0] in MINOR_VERSION_FLOORS


def _meets(driver: str, minimum: str) -> bool:
    """A driver (exact `580.173.02`, or a branch `580`) at or above `minimum`."""
    if "." not in driver:  # a branch: its production releases meet a minimum of the same branch
        return int(driver) >= version_key(minimum)[0]
    return version_key(driver) >= version_key(minimum)


def how_runs(driver: str, cuda: str) -> str:
    """How a driver (exact version or branch) runs a CUDA version: NATIVE, MINOR_VERSION or NOT."""
    major, _ = parse_cuda(cuda)
    release = CUDA_RELEASES.get(cuda)
    if release is not None and _meets(driver, release.min_driver):
        return NATIVE
    # a driver of a newer family runs every older toolkit (binary backward compatibility)
    if any(f.major > major and _meets(driver, f.floor) for f in MINOR_VERSION_FLOORS.values()):
        return NATIVE
    floor = MINOR_VERSION_FLOORS.get(major)
    return MINOR_VERSION if floor is not None and _meets(driver, floor.floor) else NOT


def newest_major() -> int:
    return max(MINOR_VERSION_FLOORS)


@dataclass(frozen=True)
class Ceiling:
    native: Optional[str]  # the newest toolkit of the table whose GA minimum the driver meets
    minor_version_major: Optional[int]  # every toolkit of this major runs with minor-version compatibility


def ceiling(driver: str) -> Ceiling:
    """The CUDA ceiling of a driver version or branch."""
    native = [v for v, r in CUDA_RELEASES.items() if _meets(driver, r.min_driver)]
    majors = [m for m, f in MINOR_VERSION_FLOORS.items() if _meets(driver, f.floor)]
    best = max(native, key=parse_cuda) if native else None
    return Ceiling(best, max(majors) if majors else None)


def ceiling_text(c: Ceiling) -> str:
    """`13.0 (13.x with minor-version compatibility)`, or `-` when the driver runs none of the table."""
    if c.native is None and c.minor_version_major is None:
        return "-"
    mvc = f"{c.minor_version_major}.x with minor-version compatibility" if c.minor_version_major else ""
    return f"{c.native} ({mvc})" if c.native and mvc else c.native or mvc


def version_problem(value: object) -> Optional[str]:
    """Why `value` is not a CUDA version the table can judge (None: it is)."""
    try:
        major, _ = parse_cuda(value)  # type: ignore[arg-type]
    except ValueError as err:
        return str(err)
    if major > newest_major():
        return (f"CUDA {major}.x is newer than the compatibility table (CUDA {newest_major()}.x at most, checked "
                f"{CHECKED}); see docs/cuda.md")
    return None
