"""The CUDA compatibility table and its look-ups: every release, every floor, each way a driver runs a version."""
import pytest

from gpu_platform.facts import catalog, cuda


def test_every_release_is_dated_and_sourced():
    for version, release in cuda.CUDA_RELEASES.items():
        assert release.version == version and cuda.parse_cuda(version)
        assert release.source.startswith("https://docs.nvidia.com/cuda/archive/") and release.checked
        assert cuda.MINOR_VERSION_FLOORS[cuda.parse_cuda(version)[0]]  # every release has its family's floor


def test_minimum_drivers_rise_with_the_release():
    ordered = sorted(cuda.CUDA_RELEASES.values(), key=lambda r: cuda.parse_cuda(r.version))
    drivers = [catalog.version_key(r.min_driver) for r in ordered]
    assert drivers == sorted(drivers)


@pytest.mark.parametrize("version", list(cuda.CUDA_RELEASES))
def test_each_release_runs_natively_on_its_own_minimum_and_not_just_below(version):
    release = cuda.CUDA_RELEASES[version]
    assert cuda.how_runs(release.min_driver, version) == cuda.NATIVE
    below = release.min_driver.split(".")
    below[-1] = str(int(below[-1]) - 1)
    floor = cuda.MINOR_VERSION_FLOORS[cuda.parse_cuda(version)[0]].floor
    expected = cuda.MINOR_VERSION if catalog.version_key(".".join(below)) >= catalog.version_key(floor) else cuda.NOT
    assert cuda.how_runs(".".join(below), version) == expected


def test_floors_are_nvidias():
    assert {m: f.floor for m, f in cuda.MINOR_VERSION_FLOORS.items()} == {11: "450.80.02", 12: "525.60.13", 13: "580"}


@pytest.mark.parametrize("driver, version, how", [
    ("570", "12.8", cuda.NATIVE),  # the branch of 12.8's minimum
    ("570", "12.9", cuda.MINOR_VERSION),  # a later 12.x on a 12.x driver
    ("570", "13.0", cuda.NOT),  # across the major: only the forward-compatibility package
    ("535", "12.2", cuda.NATIVE),
    ("535", "12.8", cuda.MINOR_VERSION),
    ("580", "12.9", cuda.NATIVE),  # a 13.x driver runs every 12.x toolkit (backward compatibility)
    ("580", "13.0", cuda.NATIVE),
    ("580", "13.1", cuda.MINOR_VERSION),
    ("580.173.02", "13.1", cuda.MINOR_VERSION),
    ("595", "13.1", cuda.NATIVE),
    ("595", "13.2", cuda.MINOR_VERSION),  # not in the table: the family's floor decides
    ("580", "11.8", cuda.NATIVE),
    ("450.80.02", "11.4", cuda.MINOR_VERSION),
    ("450.80.01", "11.4", cuda.NOT),
    ("525.60.12", "12.0", cuda.NOT),
    ("610", "10.2", cuda.NATIVE),
])
def test_how_a_driver_runs_a_version(driver, version, how):
    assert cuda.how_runs(driver, version) == how


@pytest.mark.parametrize("driver, native, family, text", [
    ("535", "12.2", 12, "12.2 (12.x with minor-version compatibility)"),
    ("570", "12.8", 12, "12.8 (12.x with minor-version compatibility)"),
    ("580", "13.0", 13, "13.0 (13.x with minor-version compatibility)"),
    ("580.173.02", "13.0", 13, "13.0 (13.x with minor-version compatibility)"),
    ("595", "13.1", 13, "13.1 (13.x with minor-version compatibility)"),
    ("610", "13.1", 13, "13.1 (13.x with minor-version compatibility)"),
    ("470.82.01", None, 11, "11.x with minor-version compatibility"),
    ("440.33", None, None, "-"),
])
def test_ceiling_of_a_driver(driver, native, family, text):
    c = cuda.ceiling(driver)
    assert (c.native, c.minor_version_major, cuda.ceiling_text(c)) == (native, family, text)


def test_every_catalog_branch_has_a_ceiling():
    for branch in catalog.DRIVER_BRANCHES:
        assert cuda.ceiling(branch).native is not None


@pytest.mark.parametrize("value, problem", [
    ("12.8", None), ("11.0", None), ("13.9", None),
    ("13", "is not a CUDA version"), ("12.8.1", "is not a CUDA version"), (12.8, "is not a CUDA version"),
    ("14.0", "newer than the compatibility table"),
])
def test_version_problem(value, problem):
    found = cuda.version_problem(value)
    assert (found is None) if problem is None else (problem in found)


def test_forward_compatibility_is_data_center_only_and_never_counted():
    assert "data-center" in cuda.FORWARD_COMPATIBILITY.gpus and cuda.FORWARD_COMPATIBILITY.source == cuda.FORWARD_GUIDE
    assert cuda.how_runs("570", "13.0") == cuda.NOT  # the package is the image's choice, not the platform's
