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
