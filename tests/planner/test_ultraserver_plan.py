"""The UltraServer example planned end to end: clean with its Capacity Block, ComputeDomains and EFA; MIG or
an R595 driver on it exits 2 naming the field."""
from __future__ import annotations

import json

import pytest

from gpu_platform.planner.cli import main
from tests.support.stacks import AS_OF, ROOT, resources, write_stack
from tests.support.ultraserver import POOL, STACK, pool_of, ultraserver

POLICY = ROOT / "policies" / f"config.{STACK}.json"


@pytest.fixture(scope="module")
def plan(tmp_path_factory):
    out = tmp_path_factory.mktemp("plan") / "plan.json"
    assert main(["plan", "--project-dir", str(ROOT), "--stack", STACK, "--policy-config", str(POLICY),
                 "--as-of", AS_OF, "--json", str(out)]) == 0
    return json.loads(out.read_text())


def test_the_example_plans_clean_with_a_block_compute_domains_and_efa(plan):
    assert plan["policy"]["violations"] == []
    group = next(r for r in resources(plan, "aws:eks/nodeGroup:NodeGroup") if POOL in r["name"])
    assert group["inputs"]["capacityType"] == "CAPACITY_BLOCK"
    assert group["inputs"]["amiType"] == "AL2023_ARM_64_NVIDIA"
    template = next(
        r for r in resources(plan, "aws:ec2/launchTemplate:LaunchTemplate") if POOL in r["name"])
    interfaces = template["inputs"]["networkInterfaces"]
    assert [i["interfaceType"] for i in interfaces] == ["interface", *["efa"] * 16]
    assert template["inputs"]["instanceMarketOptions"] == {"marketType": "capacity-block"}
    domains = resources(plan, "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain")
    teams = {t["name"] for t in ultraserver()["teams"]}
    assert sorted((d["inputs"]["metadata"]["namespace"], d["inputs"]["spec"]["numNodes"]) for d in domains) == sorted(
        (team, n) for team in teams for n in (2, 4, 8, 16, 18))
    releases = {r["name"] for r in resources(plan, "kubernetes:helm.sh/v3:Release")}
    assert {"efa-device-plugin", "dra-driver"} <= releases


def test_one_release_owns_the_compute_domain_crds_and_installs_first(plan):
    """Both charts ship the ComputeDomain CRD in crds/ and the copies differ: the operator's release installs
    it, the DRA driver's skips its copy and waits for the operator's, so the served schema is always the same."""
    releases = {r["name"]: r for r in resources(plan, "kubernetes:helm.sh/v3:Release")}
    operator, dra = releases["gpu-operator"], releases["dra-driver"]
    assert dra["inputs"].get("skipCrds") is True
    assert not operator["inputs"].get("skipCrds")
    assert operator["urn"] in dra["options"]["dependsOn"]


def _plan_of(tmp_path, platform) -> int:
    stack = write_stack(tmp_path / f"Pulumi.{STACK}.yaml", platform)
    return main(["plan", "--config", str(stack), "--as-of", AS_OF])


def test_mig_on_it_exits_2_naming_the_field(tmp_path, capsys):
    platform = ultraserver()
    i, pool = pool_of(platform)
    pool["sharing"] = {"mode": "mig", "strategy": "mixed", "layout": {"1g.23gb": 7}}
    assert _plan_of(tmp_path, platform) == 2
    assert f"nodePools[{i}].sharing.mode: " in capsys.readouterr().err


def test_an_r595_driver_on_it_exits_2_naming_the_field(tmp_path, capsys):
    platform = ultraserver()
    platform["gpuOperator"]["driver"] = {"source": "operator", "version": "595.91.07"}
    assert _plan_of(tmp_path, platform) == 2
    err = capsys.readouterr().err
    assert "gpuOperator.driver.version: " in err and "R595" in err


def _by_name(plan: dict, kind: str) -> dict[str, dict]:
    return {r["name"]: r for r in resources(plan, kind)}


def test_the_block_runs_in_the_dallas_local_zone_and_nothing_else_does(tmp_path):
    """The pool's only subnet is the Local Zone's (AWS sells GB200 blocks there); the control plane, the system
    nodes and the mount targets stay in the region's zones; the Local Zone routes through the region's NAT."""
    out = tmp_path / "plan.json"
    assert main(["plan", "--project-dir", str(ROOT), "--stack", STACK, "--as-of", AS_OF, "--json", str(out)]) == 0
    plan = json.loads(out.read_text())
    subnets = _by_name(plan, "aws:ec2/subnet:Subnet")
    local = subnets["cluster-network-private-us-east-1-dfw-2a"]["inputs"]
    assert local["availabilityZone"] == "us-east-1-dfw-2a" and local["cidrBlock"] == "10.72.240.0/20"
    assert not any(k.startswith("karpenter.sh/") for k in local.get("tags", {}))
    groups = _by_name(plan, "aws:eks/nodeGroup:NodeGroup")
    cluster = resources(plan, "aws:eks/cluster:Cluster")[0]["inputs"]["vpcConfig"]["subnetIds"]
    assert len(groups[POOL]["inputs"]["subnetIds"]) == 1 and groups[POOL]["inputs"]["subnetIds"][0] not in cluster
    assert groups["cluster-system"]["inputs"]["subnetIds"] == cluster and len(cluster) == 3
    route = _by_name(plan, "aws:ec2/route:Route")["cluster-network-private-us-east-1-dfw-2a-default"]["inputs"]
    assert "natGatewayId" in route


def test_a_block_pool_in_an_availability_zone_is_refused(tmp_path, capsys):
    platform = ultraserver()
    i, pool = pool_of(platform)
    pool["zones"] = ["us-east-1a"]
    assert _plan_of(tmp_path, platform) == 2
    assert f"nodePools[{i}].zones: p6e-gb200.36xlarge Capacity Blocks live in the Local Zone us-east-1-dfw-2a" in \
        capsys.readouterr().err


def test_a_local_zone_the_vpc_does_not_reach_is_refused(tmp_path, capsys):
    platform = ultraserver()
    i, _ = pool_of(platform)
    del platform["cluster"]["create"]["vpc"]["localZones"]
    assert _plan_of(tmp_path, platform) == 2
    assert f"nodePools[{i}].zones: us-east-1-dfw-2a is a Local Zone the VPC does not reach" in capsys.readouterr().err


def test_a_block_pool_on_existing_subnets_is_refused_naming_its_zones(tmp_path, capsys):
    platform = ultraserver()
    i, _ = pool_of(platform)
    create = platform["cluster"]["create"]
    del create["vpc"]
    create["subnetIds"] = ["subnet-0a1b2c3d4e5f60718", "subnet-0a1b2c3d4e5f60719"]
    assert _plan_of(tmp_path, platform) == 2
    assert f"nodePools[{i}].zones: applies to a VPC this stack creates" in capsys.readouterr().err


def test_on_the_device_plugin_it_plans_clean_and_the_plan_says_so(tmp_path):
    platform = ultraserver()
    _, pool = pool_of(platform)
    pool["gpuAllocation"] = "device-plugin"
    stack = write_stack(tmp_path / "Pulumi.ultraserver-device-plugin.yaml", platform)  # a new stack: no lock to roll
    out = tmp_path / "plan.json"
    assert main(["plan", "--config", str(stack), "--as-of", AS_OF, "--json", str(out)]) == 0
    plan = json.loads(out.read_text())
    assert plan["policy"]["violations"] == []
    row = next(p for p in plan["capacity"]["pools"] if p["name"] == POOL)
    assert (row["gpuAllocation"], row["computeDomains"]) == ("device-plugin", True)
    driver = next(r for r in resources(plan, "kubernetes:helm.sh/v3:Release") if r["name"] == "dra-driver")
    assert driver["inputs"]["values"]["resources"]["gpus"] == {"enabled": False}
    assert resources(plan, "kubernetes:resource.nvidia.com/v1beta1:ComputeDomain")


def test_the_example_says_its_pool_allocates_by_dra_with_compute_domains(tmp_path):
    out = tmp_path / "plan.json"
    assert main(["plan", "--project-dir", str(ROOT), "--stack", STACK, "--as-of", AS_OF, "--json", str(out)]) == 0
    row = next(p for p in json.loads(out.read_text())["capacity"]["pools"] if p["name"] == POOL)
    assert (row["gpuAllocation"], row["computeDomains"]) == ("dra", True)
