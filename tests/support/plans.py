"""Offline plans of stack files for the tests of every layer, computed once per distinct input, and the
Kubernetes objects `gpu-platform plan --out` writes for each example stack.

The same thing the `plan_of` fixture does (the real program through `gpu-platform plan --json`), cached
for the session: many tests read the same dev/prod plans and each run costs about a second.
"""
from __future__ import annotations

from pathlib import Path

from gpu_platform.facts import catalog
from tests.support.stacks import AS_OF, STACKS, cached_plan, resources, stack_platform, without_services

# Inputs EKS cannot change in place (Terraform AWS provider ForceNew, internal/service/eks/node_group.go), as plan keys.
REPLACE_FORCING = catalog.REPLACE_FORCING_INPUTS["aws:eks/nodeGroup:NodeGroup"]


def plan(platform: dict, region: str = "us-east-1") -> dict:
    """The plan JSON of `platform` (a fresh copy each call: tests may mutate it)."""
    return cached_plan(platform, region=region)


def stack_plan(stack: str) -> dict:
    return plan(stack_platform(stack))


def node_groups(plan_: dict) -> dict[str, dict]:
    """GPU pool node groups by pool name (the system node group lives under the cluster)."""
    return {r["name"]: r for r in resources(plan_, "aws:eks/nodeGroup:NodeGroup")
            if "GpuNodePool" in (r["parent"] or "")}


def get(inputs: dict, path: str):
    for part in path.split("."):
        inputs = (inputs or {}).get(part)
    return inputs


def replace_forcing(node_group: dict) -> dict:
    return {k: get(node_group["inputs"], k) for k in REPLACE_FORCING}


def children(plan_: dict, parent: dict, type_: str) -> list[dict]:
    return [r for r in resources(plan_, type_) if r["parent"] == parent["urn"]]


def component(plan_: dict, type_: str, name: str) -> dict:
    found = [r for r in plan_["resources"] if r["type"] == type_ and r["name"] == name]
    assert len(found) == 1, f"{type_} {name}: {len(found)} found"
    return found[0]


def existing_cluster_platform() -> dict:
    """dev adopting an existing cluster: name, version and the subnets its node groups go into."""
    platform = stack_platform("dev")
    platform["cluster"] = {"name": "shared-gpu", "kubernetesVersion": "1.35",
                           "existing": {"subnetIds": ["subnet-0aaa1111bbbb2222c", "subnet-0ddd3333eeee4444f"]}}
    platform["modelCache"] = {"enabled": False}
    without_services(platform)
    return platform


STACK_NAMES = sorted(p.name.removeprefix("Pulumi.").removesuffix(".yaml") for p in STACKS.glob("Pulumi.*.yaml"))


def written_manifests(stack: str, out: Path) -> list[Path]:
    from gpu_platform.planner.cli import main

    config = STACKS / f"Pulumi.{stack}.yaml"
    code = main(["plan", "--config", str(config), "--out", str(out), "--json", str(out.parent / "plan.json"),
                 "--as-of", AS_OF])
    assert code == 0, f"plan of {stack} exited {code}"
    return sorted((out / "manifests").rglob("*.yaml"))
