"""The component package other Pulumi languages use: the schema Pulumi's component provider host infers
from the components' annotations, offline, and the host entry in provider/."""
import json
import re
import runpy
import typing
from pathlib import Path
from typing import Optional

import pulumi
import pytest
import yaml
from pulumi.provider.experimental.analyzer import camel_case
from pulumi.provider.experimental.component import ComponentProvider

import gpu_platform
from gpu_platform.resources.package import read_inherited_docstrings

PROVIDER = Path(__file__).resolve().parents[2] / "provider"


@pytest.fixture(scope="module")
def schema():
    """The schema as provider/__main__.py serves it: inherited keys described where they are declared."""
    read_inherited_docstrings()
    provider = ComponentProvider(gpu_platform.component_classes(), "gpu-platform", version="0.1.0")
    return json.loads(provider.schema)


def _properties(schema):
    """(where, property) for every input and output of every component, and every property of every type."""
    for token, resource in schema["resources"].items():
        for kind in ("inputProperties", "properties"):
            for key, prop in resource.get(kind, {}).items():
                yield f"{token}.{kind}.{key}", prop
    for token, typ in schema["types"].items():
        for key, prop in typ.get("properties", {}).items():
            yield f"{token}.{key}", prop


def args_type(component: type) -> type:
    return typing.get_type_hints(component.__init__)["args"]


def test_every_public_component_is_in_the_schema(schema):
    tokens = {t for t, r in schema["resources"].items() if r.get("isComponent")}
    assert tokens == {f"gpu-platform:index:{name}" for name in gpu_platform.COMPONENTS}


@pytest.mark.parametrize("name", gpu_platform.COMPONENTS)
def test_inputs_are_the_args_keys_and_required_only_where_the_args_say(schema, name):
    component = getattr(gpu_platform, name)
    args = args_type(component)
    resource = schema["resources"][f"gpu-platform:index:{name}"]
    assert set(resource["inputProperties"]) == {camel_case(k) for k in args.__annotations__}
    assert set(resource.get("requiredInputs", [])) == {camel_case(k) for k in args.__required_keys__}


@pytest.mark.parametrize("name", gpu_platform.COMPONENTS)
def test_outputs_are_the_annotated_attributes(schema, name):
    component = getattr(gpu_platform, name)
    annotated = {k for cls in component.__mro__ for k in vars(cls).get("__annotations__", {}) if not k.startswith("_")}
    resource = schema["resources"][f"gpu-platform:index:{name}"]
    assert annotated and set(resource["properties"]) == {camel_case(k) for k in annotated}


def test_nested_args_keep_their_optional_keys(schema):
    """Python 3.11+: typing's TypedDict, so a pool's sharing block is optional and its taints' keys are not."""
    pool = schema["resources"]["gpu-platform:index:GpuNodePool"]
    assert "sharing" not in pool["requiredInputs"] and "instanceTypes" in pool["requiredInputs"]
    assert set(schema["types"]["gpu-platform:index:PoolTaintArgs"]["required"]) == {"key", "effect"}


def test_every_input_output_and_nested_property_is_described(schema):
    """Descriptions come from the docstring under each key, written once where the key is declared: the pool
    keys both pool components share (PoolArgs) and the outputs both clusters share (ClusterBase) included."""
    undescribed = [where for where, prop in _properties(schema) if not (prop.get("description") or "").strip()]
    assert undescribed == []
    assert all(r.get("description") for r in schema["resources"].values())
    assert all(t.get("description") for t in schema["types"].values())


def test_a_missing_docstring_fails_the_description_check(schema):
    """The check above is not vacuous: a key without a docstring reaches the schema without a description."""
    from typing import TypedDict

    class UndescribedArgs(TypedDict):
        """Args with one undocumented key."""

        size: int

    class Undescribed(pulumi.ComponentResource):
        """A component of the test."""

        def __init__(self, name: str, args: UndescribedArgs, opts: Optional[pulumi.ResourceOptions] = None):
            super().__init__("gpu-platform:index:Undescribed", name, {}, opts)

    read_inherited_docstrings()
    extra = json.loads(ComponentProvider([Undescribed], "gpu-platform", version="0.1.0").schema)
    assert [where for where, prop in _properties(extra) if not prop.get("description")] == [
        "gpu-platform:index:Undescribed.inputProperties.size"]


def test_pool_keys_are_described_once_in_the_shared_pool_args(schema):
    from gpu_platform.resources.pool_args import PoolArgs

    for token in ("gpu-platform:index:GpuNodePool", "gpu-platform:index:KarpenterNodePool"):
        assert schema["resources"][token]["inputProperties"]["maxSize"]["description"] == "Nodes at most (1-1000)."
    assert "max_size" in PoolArgs.__annotations__


# Inputs whose value names another resource (a cluster, subnets, roles, security groups, keys): a program
# in any language may pass the other resource's Output. Those left plain are checked against the stack
# file's rules (name and ARN syntax, the cluster's own name) before any resource exists.
REFERENCE = re.compile(r"([cC]lusterName|Id|Ids|Arn|Arns|Endpoint|Authority|Cidr|Role)$")
CHECKED_WHEN_PLANNED = {
    "Cluster.clusterName",  # the name of the cluster being created: tags and child names derive from it
    "Cluster.secretsKmsKeyArn", "Cluster.adminRoleArns",  # ARN syntax is checked by the cluster rules
    "GpuMonitoring.clusterName",  # names the EBS CSI add-on's role, derived at plan time
    "KarpenterNodePool.nodeRole",  # the EC2NodeClass's role name, checked against the pool rules
}


def _plain(prop: dict) -> bool:
    """Takes no Output: plain, and for a list, plain items too (a plain list of Inputs takes Outputs)."""
    return bool(prop.get("plain")) and (prop.get("type") != "array" or bool(prop["items"].get("plain")))


def test_references_to_other_resources_take_outputs(schema):
    plain = {f"{token.rsplit(':', 1)[-1]}.{key}" for token, r in schema["resources"].items()
             for key, prop in r["inputProperties"].items() if REFERENCE.search(key) and _plain(prop)}
    assert plain == CHECKED_WHEN_PLANNED
    pool = schema["resources"]["gpu-platform:index:GpuNodePool"]["inputProperties"]
    assert not any(pool[key].get("plain") for key in ("clusterName", "nodeRoleArn", "subnetIds"))


def test_the_plugin_folder_hosts_every_component(monkeypatch):
    assert yaml.safe_load((PROVIDER / "PulumiPlugin.yaml").read_text()) == {"runtime": "python"}
    hosted = {}
    monkeypatch.setattr("pulumi.provider.experimental.component_provider_host",
                        lambda components, name, **kw: hosted.update(components=components, name=name, **kw))
    runpy.run_path(str(PROVIDER / "__main__.py"), run_name="__main__")
    assert hosted["name"] == "gpu-platform" and hosted["version"] == gpu_platform.__version__
    assert [c.__name__ for c in hosted["components"]] == list(gpu_platform.COMPONENTS)


def test_the_plugin_installs_this_package():
    lines = [ln for ln in (PROVIDER / "requirements.txt").read_text().splitlines() if ln and not ln.startswith("#")]
    assert lines == ["-e ..[program]"]


@pytest.mark.parametrize("where, enum", [
    (("resources", "gpu-platform:index:GpuNodePool", "inputProperties", "capacityType"), "CapacityType"),
    (("resources", "gpu-platform:index:KarpenterNodePool", "inputProperties", "capacityType"), "CapacityType"),
    (("types", "gpu-platform:index:PoolAmiArgs", "properties", "type"), "AmiType"),
    (("types", "gpu-platform:index:PoolSharingArgs", "properties", "mode"), "SharingMode"),
])
def test_closed_sets_are_enums_in_every_language(schema, where, enum):
    prop = schema[where[0]][where[1]][where[2]][where[3]]
    assert prop["$ref"] == f"#/types/gpu-platform:index:{enum}"
    values = schema["types"][f"gpu-platform:index:{enum}"]["enum"]
    assert len(values) >= 3 and all(v.get("value") for v in values)
