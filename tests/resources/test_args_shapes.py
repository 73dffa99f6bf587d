"""Every public component, given an argument of the wrong shape (None, a list, a map, a float, a bool, a
string, an Output), either builds or refuses naming that argument: an ArgumentsError (a SpecError), never
another exception (TypeError, AttributeError, KeyError, pydantic's ValidationError), and before any of its
resources registers. Each component runs alone in a user's program under the mock engine."""
from __future__ import annotations

from pathlib import Path
from collections.abc import Callable
from typing import Any, Optional

import pulumi
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import gpu_platform
from gpu_platform.resources.typed_args import ArgumentsError
from gpu_platform.spec.errors import SpecError
from tests.support.programs import run
from tests.support.stacks import stack_platform, stack_secrets

AMI = {"type": "AL2023_x86_64_NVIDIA", "release_version": "1.35.7-20260911"}
ADDONS = {"vpc-cni": "v1.22.4-eksbuild.3", "coredns": "v1.13.2-eksbuild.31",
          "kube-proxy": "v1.35.3-eksbuild.29", "eks-pod-identity-agent": "v1.3.10-eksbuild.3"}
SUBNETS = ["subnet-0aaa1111bbbb2222c", "subnet-0ddd3333eeee4444f"]
SG = "sg-0123456789abcdef0"
POOL = dict(cluster_name="gpus", instance_types=["g5.xlarge"], capacity_type="spot", max_size=2, ami=AMI,
            kubernetes_version="1.35")

# Each component's valid arguments, which each example then spoils in one argument.
VALID: dict[str, dict[str, Any]] = {
    "Cluster": dict(cluster_name="gpus", kubernetes_version="1.35", region="us-east-1", vpc={"availability_zones": 2},
                    addons=ADDONS, system_nodes={"release_version": "1.35.7-20260911"}),
    "AdoptedCluster": dict(cluster_name="shared-gpu", subnet_ids=SUBNETS, region="us-east-1"),
    "GpuNodePool": dict(POOL, node_role_arn="arn:aws:iam::123456789012:role/nodes", subnet_ids=SUBNETS),
    "KarpenterNodePool": dict(POOL, node_role="gpus-karpenter-nodes",
                              ami={"type": "AL2023_x86_64_NVIDIA", "alias": "al2023@v20260911"}),
    "GpuOperator": dict(chart_version="v26.7.0", driver={"source": "ami"}, kubernetes_version="1.35",
                        pools=[{"name": "a10g", "instance_types": ["g5.xlarge"], "ami": AMI}]),
    "GpuMonitoring": dict(prometheus={"mode": "existing", "namespace": "observability",
                                      "selector_labels": {"release": "prom"}},
                          gpu_prices={"NVIDIA A10G": 1.2}, cluster_name="shared-gpu"),
    "ModelCache": dict(cluster_name="shared-gpu", vpc_id="vpc-0123456789abcdef0", subnet_ids=SUBNETS,
                       node_security_group_id=SG, addon_version="v2.1.13-eksbuild.1"),
    "Datasets": dict(cluster_name="shared-gpu", vpc_id="vpc-0123456789abcdef0", subnet_id=SUBNETS[0],
                     node_security_group_id=SG, fsx_lustre={"addon_version": "v1.7.0-eksbuild.1", "claim_size": "1Ti"},
                     team_namespaces={"research": "research"}),
    "TeamNamespace": dict(team="research", quota={"gpus": 8, "mig_slices": {"1g.10gb": 4}, "cpu": "32",
                                                  "memory": "128Gi"},
                          kubernetes_version="1.35", mig_profiles=["1g.10gb", "3g.40gb"]),
    "GpuPlatform": dict(platform=stack_platform("dev"), region="us-east-1", alert_secrets={
        key.split(":")[1]: "https://hooks.example.com/x" for key in stack_secrets()}),
    "PriorityTiers": {},
    "TeamAdmission": {},
    "TeamAccess": dict(cluster_name="shared-gpu", teams=[
        {"name": "research", "developer_role_arns": ["arn:aws:iam::123456789012:role/ml"]}]),
    "KueueQueueing": dict(chart_version="0.19.2", node_pools=[
        {"name": "l4", "instance_types": ["g6.12xlarge"], "capacity_type": "on-demand", "max_size": 2}],
        teams=[{"name": "research", "quota": {"gpus": 2, "cpu": "32", "memory": "128Gi"}}]),
}

# Arguments that are resources, not data, and Pulumi's own types check them.
SKIPPED = {"k8s_provider"}
WRONG_SHAPES: dict[str, Callable[[Any], Any]] = {
    "None": lambda _: None, "a list": lambda _: ["x", 1], "a map": lambda _: {"x": [1]}, "a float": lambda _: 26.7,
    "a bool": lambda _: True, "a string": lambda _: "x", "an Output": lambda valid: pulumi.Output.from_input(valid),
    "an empty string": lambda _: "", "an empty list": lambda _: [],
}

# Values of the right shape that another argument's rule refuses in this combination, and the argument
# the refusal names instead (with why that is the right one to name).
COMBINATIONS = {
    ("GpuNodePool", "critical", "a bool"): "capacity_type",  # critical=True: a spot pool is the wrong one
    ("KarpenterNodePool", "critical", "a bool"): "capacity_type",
    ("TeamNamespace", "mig_profiles", "an empty list"): "quota",  # no MIG pool: the quota's MIG slices are
    ("Cluster", "subnet_ids", "an Output"): "vpc",  # subnets and a VPC to create: one of the two, named both
    ("Cluster", "subnet_ids", "an empty list"): "vpc",  # both given: the message names subnetIds too
    ("ModelCache", "subnet_ids", "an Output"): "subnet_count",  # subnets known later: their count now
}

_build: Optional[Callable[[], None]] = None

PROGRAM = """
    from tests.resources import test_args_shapes

    test_args_shapes.build()
"""


def build() -> None:
    assert _build is not None
    _build()


def arguments(component: str) -> list[str]:
    kind = getattr(gpu_platform, f"{component}Args")
    return sorted(k for k in kind.__annotations__ if k not in SKIPPED)


CASES = [(c, a) for c in VALID for a in arguments(c)]


def test_every_public_component_is_tried():
    assert set(VALID) == set(gpu_platform.COMPONENTS)


def _outcome(tmp_path: Path, component: str, args: dict[str, Any], argument: str = "",
             shape: Optional[str] = None) -> Optional[SpecError]:
    """Run `component` alone on `args`, `argument` replaced by a value of `shape` made in the program (an
    Output belongs to the program's engine); the SpecError it raised, if any."""
    global _build
    cls = getattr(gpu_platform, component)

    def program() -> None:
        given = dict(args, **({argument: WRONG_SHAPES[shape](args.get(argument))} if shape else {}))
        cls("x", given)

    _build = program
    try:
        run(tmp_path, PROGRAM)
    except SpecError as err:
        return err
    finally:
        _build = None
    return None


@pytest.mark.parametrize("component", sorted(VALID))
def test_each_components_valid_arguments_build(tmp_path, component):
    assert _outcome(tmp_path, component, dict(VALID[component])) is None


@settings(max_examples=800, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(case=st.sampled_from(CASES), shape=st.sampled_from(sorted(WRONG_SHAPES)))
def test_an_argument_of_the_wrong_shape_builds_or_is_refused_naming_it(tmp_path, case, shape):
    component, argument = case
    err = _outcome(tmp_path, component, VALID[component], argument, shape)
    if err is not None:
        if (component, argument) == ("GpuPlatform", "platform") and not isinstance(err, ArgumentsError):
            return  # the stack file's object, validated whole: its refusals name the stack file's paths
        named_as = COMBINATIONS.get((component, argument, shape), argument)
        named = [p for p in err.problems if p.startswith((f"{component} 'x': {named_as}", f"{named_as}: "))]
        assert named and (isinstance(err, ArgumentsError) or component == "GpuPlatform"), (shape, err.problems)
