"""The enums of component arguments hold the stack file's own values, a type checker's literal values are the
enums' values, a member passed at run time reaches the rules as its value, and the component package
publishes each as an enum."""
import ast
import json
import typing
from pathlib import Path

import pytest
from pulumi.provider.experimental.component import ComponentProvider

import gpu_platform
from gpu_platform.facts import catalog
from gpu_platform.resources import arg_enums
from gpu_platform.resources.arg_enums import AmiType, CapacityType, SharingMode
from gpu_platform.resources.node_pool import GpuNodePoolArgs
from gpu_platform.resources.pool_args import pool_from_args
from gpu_platform.spec.models import CAPACITY_TYPES, SharingSpec

MODEL_VALUES = {
    CapacityType: CAPACITY_TYPES,
    AmiType: tuple(catalog.NODE_IMAGES),
    SharingMode: typing.get_args(SharingSpec.model_fields["mode"].annotation),
}


@pytest.mark.parametrize("enum", arg_enums.ENUMS, ids=lambda e: e.__name__)
def test_members_are_the_stack_files_values(enum):
    assert [m.value for m in enum] == list(MODEL_VALUES[enum])


def _checked_literals() -> dict[str, list[str]]:
    """Each `...Input` alias of the type-checking branch: its Literal's values."""
    tree = ast.parse(Path(arg_enums.__file__).read_text())
    branch = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    found = {}
    for assign in branch.body:
        assert isinstance(assign, ast.Assign)
        literal = next(n for n in ast.walk(assign.value) if isinstance(n, ast.Subscript) and ast.unparse(n.value) == "Literal")
        found[assign.targets[0].id] = [e.value for e in literal.slice.elts]
    return found


@pytest.mark.parametrize("enum", arg_enums.ENUMS, ids=lambda e: e.__name__)
def test_type_checkers_take_the_members_values_as_text(enum):
    assert _checked_literals()[f"{enum.__name__}Input"] == [m.value for m in enum]


def test_a_member_reaches_the_rules_as_its_value():
    args = GpuNodePoolArgs(
        cluster_name="gpu-dev", node_role_arn="arn:aws:iam::123456789012:role/nodes",
        subnet_ids=["subnet-0123456789abcdef0"], instance_types=["p5.48xlarge"],
        capacity_type=CapacityType.ON_DEMAND, max_size=2, kubernetes_version="1.33",
        ami={"type": AmiType.AL2023_X86_64_NVIDIA, "release_version": "1.33.5-20251120"},
        sharing={"mode": SharingMode.MIG, "layout": {"7g.80gb": 1}})
    pool, _ = pool_from_args(GpuNodePoolArgs, "h100", args, "managed-node-group")
    assert (type(pool.capacity_type), pool.capacity_type, pool.sharing.mode, pool.ami.type) == (
        str, "on-demand", "mig", "AL2023_x86_64_NVIDIA")


def test_the_component_package_publishes_them_as_enums():
    schema = json.loads(ComponentProvider(gpu_platform.component_classes(), "gpu-platform", version="0.1.0").schema)
    for enum in arg_enums.ENUMS:
        published = schema["types"][f"gpu-platform:index:{enum.__name__}"]
        assert [v["value"] for v in published["enum"]] == [m.value for m in enum]
        assert all(v.get("description") for v in published["enum"])
    pool = schema["resources"]["gpu-platform:index:GpuNodePool"]["inputProperties"]
    assert pool["capacityType"]["$ref"] == "#/types/gpu-platform:index:CapacityType"
