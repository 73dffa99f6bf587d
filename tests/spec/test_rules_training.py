"""The stack file's rules for training pools: EFA only on instance types that have it and in one zone
(`gpu-platform plan` exits 2 naming the field), zones, the instance-store RAID0 where it is set up, and
the EFA device plugin's chart version."""
from __future__ import annotations

import pytest

from tests.support.stacks import AS_OF, stack_platform, without_services, write_stack
from tests.support.stacks import spec_problems as problems
from tests.support.training import AL2023, training_pool

BOTTLEROCKET = {"type": "BOTTLEROCKET_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"}


def plan_exit(tmp_path, platform: dict, capsys) -> tuple[int, list[str]]:
    from gpu_platform.planner.cli import main

    code = main(["plan", "--config", str(write_stack(tmp_path / "Pulumi.test.yaml", platform)), "--as-of", AS_OF])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, [line for line in err.splitlines() if line.startswith("error:")]


def _prod(edit) -> dict:
    platform = stack_platform("prod")
    edit(platform)
    return platform


# --- gpu-platform plan exits 2 naming the field ---

@pytest.mark.parametrize("instance_types", [["g6.2xlarge", "g6.4xlarge"], ["g6.xlarge"]])
def test_efa_on_a_g6_pool_without_efa_exits_2_naming_the_field(tmp_path, capsys, instance_types):
    def edit(p):
        p["nodePools"][2].update(efa=True, instanceTypes=instance_types)

    code, errors = plan_exit(tmp_path, _prod(edit), capsys)
    assert code == 2
    (line,) = errors
    assert f"nodePools[2].efa: {', '.join(instance_types)} have no EFA; EFA instance types: " in line
    assert "p4d.24xlarge" in line and "p5.48xlarge" in line and "g6.8xlarge" in line


def test_an_efa_pool_across_three_zones_exits_2_naming_the_field(tmp_path, capsys):
    code, errors = plan_exit(
        tmp_path, _prod(lambda p: p["nodePools"][1].update(zones=["us-east-1a", "us-east-1b", "us-east-1c"])), capsys)
    assert code == 2
    assert errors == [f"error: {tmp_path / 'Pulumi.test.yaml'}: nodePools[1].zones: an EFA pool runs in one cluster "
                      "placement group, and a placement group lives in one availability zone: list one zone, not 3"]


def test_an_efa_pool_in_one_listed_zone_plans(tmp_path, capsys):
    code, errors = plan_exit(tmp_path, _prod(lambda p: p["nodePools"][1].update(zones=["us-east-1c"])), capsys)
    assert (code, errors) == (0, [])


# --- EFA ---

def test_efa_is_accepted_on_the_g6_sizes_that_have_it():
    platform = stack_platform("dev")
    platform["nodePools"] += [training_pool("l4-efa", ["g6.8xlarge", "g6.16xlarge"], AL2023),
                              training_pool("l4x4-efa", ["g6.12xlarge"], AL2023)]
    assert problems(platform) == []


def test_a_pool_mixing_types_with_and_without_efa_names_those_without():
    platform = stack_platform("dev")
    platform["nodePools"].append(training_pool("l4-efa", ["g6.8xlarge", "g6.4xlarge"], AL2023))  # 1 x L4 each
    (found,) = problems(platform)
    assert found.startswith("nodePools[1].efa: g6.4xlarge have no EFA; EFA instance types: ")


def test_an_unchecked_device_plugin_chart_version_is_refused_only_with_efa_pools():
    prod = _prod(lambda p: p.update(efaDevicePlugin={"chartVersion": "v0.5.99"}))
    assert [p for p in problems(prod) if p.startswith("efaDevicePlugin")] == [
        "efaDevicePlugin.chartVersion: must be one of v0.5.30 (the chart versions whose values are checked)"]
    dev = stack_platform("dev")
    dev["efaDevicePlugin"] = {"chartVersion": "v0.5.99"}
    assert problems(dev) == []  # nothing installs the chart without an EFA pool


# --- zones ---

@pytest.mark.parametrize("zones, message", [
    (["us-east-1a", "us-east-1a"], "lists a zone twice"),
    (["us-east-1d"], "'us-east-1d' is not one of the VPC's zones: <region>a to <region>c (3 availabilityZones)"),
])
def test_zones_must_be_the_vpcs(zones, message):
    found = problems(_prod(lambda p: p["nodePools"][0].update(zones=zones)))
    assert [p for p in found if p.startswith("nodePools[0].zones: ") and message in p] != [], found


def test_a_zone_that_is_not_a_zone_name_is_refused_where_it_is_written():
    found = problems(_prod(lambda p: p["nodePools"][0].update(zones=["east"])))
    assert found == ["nodePools[0].zones[0]: 'east' is not a zone name such as us-east-1a (a region and one letter) "
                     "or a Local Zone such as us-east-1-dfw-2a"]


def test_named_vpc_zones_are_the_only_ones_a_pool_may_list():
    def edit(p):
        p["cluster"]["create"]["vpc"]["zones"] = ["us-east-1a", "us-east-1d"]
        p["nodePools"][0]["zones"] = ["us-east-1b"]

    assert "nodePools[0].zones: us-east-1b not in cluster.create.vpc.zones (us-east-1a, us-east-1d)" in problems(_prod(edit))


def test_zones_need_a_vpc_the_stack_creates():
    platform = stack_platform("dev")
    platform["cluster"] = {"name": "shared-gpu", "kubernetesVersion": "1.35",
                           "existing": {"subnetIds": ["subnet-0aaa1111bbbb2222c", "subnet-0ddd3333eeee4444f"]}}
    platform["modelCache"] = {"enabled": False}
    without_services(platform)
    platform["nodePools"][0]["zones"] = ["us-east-1a"]
    assert [p for p in problems(platform) if p.startswith("nodePools[0].zones: applies to a VPC this stack creates")]


# --- local storage ---

def test_raid0_is_refused_where_the_image_configures_its_own_storage():
    platform = stack_platform("dev")
    platform["nodePools"][0].update(ami=dict(BOTTLEROCKET), sharing={"mode": "none"}, localStorage="raid0")
    assert ("nodePools[0].localStorage: the instance-store RAID0 is set up on AL2023 and Ubuntu pools; "
            "BOTTLEROCKET_x86_64_NVIDIA configures its own storage: use none") in problems(platform)
    platform["nodePools"][0]["localStorage"] = "none"
    assert [p for p in problems(platform) if "localStorage" in p] == []
