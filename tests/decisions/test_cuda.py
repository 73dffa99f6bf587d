"""Each pool's CUDA reach from its driver, and teams' and pools' minCuda refused naming the field, the pool
and its driver."""
import pytest

from gpu_platform.decisions import cuda as pool_cuda
from gpu_platform.decisions.pinned import PoolPin
from gpu_platform.facts import cuda
from tests.planner.test_bad_input import plan
from tests.support.stacks import on_kubernetes, spec_of, spec_problems, stack_platform, write_stack


def at(found: list[str], path: str) -> list[str]:
    return [p for p in found if p.startswith(f"{path}: ")]


def test_an_ami_pool_runs_its_releases_branch_and_an_ubuntu_pool_the_operators_driver():
    dev, prod = spec_of("dev"), spec_of("prod")
    assert pool_cuda.spec_pool_cuda(dev, dev.node_pools[0]).drivers == (("580", True),)
    assert pool_cuda.spec_pool_cuda(prod, prod.node_pools[0]).drivers == (("580.173.02", True),)


def test_a_release_whose_ami_picks_per_instance_is_read_per_family():
    pin = PoolPin("mixed", "AL2023_x86_64_NVIDIA", "1.35.7-20260920", ("g6e.xlarge", "g7.2xlarge"))
    found = pool_cuda.pin_cuda(pin, None)
    assert found.drivers == (("580", True), ("595", True))
    assert found.ceiling() == cuda.ceiling("580")  # the lowest: what every node of the pool runs


def test_a_pool_the_calendar_does_not_know_has_no_ceiling():
    pin = PoolPin("old", "AL2023_x86_64_NVIDIA", "1.31.5-20250101", ("g5.xlarge",))
    assert pool_cuda.pin_cuda(pin, None).ceiling() is None
    assert pool_cuda.pin_cuda(PoolPin("ubuntu", "CUSTOM", None, ("p5.48xlarge",)), None).drivers == ()


def test_a_team_above_its_pools_branch_is_refused_naming_both():
    platform = on_kubernetes("dev", "1.33", "20250901")  # an AMI release of the R570 era
    platform["teams"][0]["minCuda"] = "13.0"
    (msg,) = at(spec_problems(platform), "teams[0].minCuda")
    assert "team research needs CUDA 13.0" in msg and "pool a10g-spot runs driver branch R570" in msg
    assert "12.8 (12.x with minor-version compatibility)" in msg and "ami.releaseVersion" in msg and ">= 580.65.06" in msg


def test_a_team_within_minor_version_compatibility_is_accepted():
    platform = on_kubernetes("dev", "1.33", "20250901")
    platform["teams"][0]["minCuda"] = "12.9"  # R570 runs 12.9 with minor-version compatibility
    assert at(spec_problems(platform), "teams[0].minCuda") == []


def test_an_operator_driver_below_a_teams_minimum_names_the_drivers_that_would_run_it():
    platform = stack_platform("prod")
    platform["environment"] = "staging"
    platform["gpuOperator"]["driver"]["version"] = "535.309.01"
    platform["teams"][0]["minCuda"] = "13.0"
    (msg,) = at(spec_problems(platform), "teams[0].minCuda")
    assert "pool a100-train runs driver 535.309.01" in msg and "gpuOperator.driver.version" in msg
    assert "580.173.02" in msg and "535.309.01)" not in msg


def test_only_the_pools_a_team_reaches_count():
    platform = stack_platform("prod")  # Kueue: research reaches a100-train only
    platform["environment"] = "staging"
    platform["gpuOperator"]["driver"]["version"] = "535.309.01"
    platform["teams"][0]["minCuda"] = "13.0"
    found = at(spec_problems(platform), "teams[0].minCuda")
    assert len(found) == 1 and "h100-mig" not in found[0] and "l4-inference" not in found[0]


def test_a_pools_own_minimum_is_refused_naming_the_pool():
    platform = on_kubernetes("dev", "1.33", "20250901")
    platform["nodePools"][0]["minCuda"] = "13.1"
    (msg,) = at(spec_problems(platform), "nodePools[0].minCuda")
    assert "pool a10g-spot needs CUDA 13.1" in msg and "R570" in msg and ">= 590.44.01" in msg


@pytest.mark.parametrize("value, words", [("13", "write major.minor"), ("14.0", "newer than the compatibility table")])
def test_a_malformed_minimum_is_refused(value, words):
    platform = stack_platform("dev")
    platform["teams"][0]["minCuda"] = value
    (msg,) = at(spec_problems(platform), "teams[0].minCuda")
    assert words in msg


def test_the_planner_exits_2_naming_the_team_field_and_the_pool(tmp_path, capsys):
    platform = on_kubernetes("dev", "1.33", "20250901")
    platform["teams"][0]["minCuda"] = "13.0"
    path = write_stack(tmp_path / "Pulumi.cuda.yaml", platform)
    code, err = plan(capsys, path)
    assert code == 2 and any("teams[0].minCuda" in line and "pool a10g-spot" in line and "R570" in line
                             for line in err), err
