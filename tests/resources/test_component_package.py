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
from gpu_platform.resources.package import PackageProvider, read_inherited_docstrings
from gpu_platform.resources.platform_schema import models, type_token

PROVIDER = Path(__file__).resolve().parents[2] / "provider"


@pytest.fixture(scope="module")
def schema():
    """The schema as provider/__main__.py serves it: inherited keys described where they are declared."""
    read_inherited_docstrings()
    provider = PackageProvider(gpu_platform.component_classes(), "gpu-platform", version="0.1.0")
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
    served = {}
    monkeypatch.setattr("gpu_platform.resources.package.main",
                        lambda provider, args: served.update(provider=provider, args=args))
    monkeypatch.setattr("sys.argv", ["__main__.py", "127.0.0.1:1234"])
    runpy.run_path(str(PROVIDER / "__main__.py"), run_name="__main__")
    provider = served["provider"]
    assert isinstance(provider, PackageProvider) and served["args"] == ["127.0.0.1:1234"]
    schema = json.loads(provider.schema)
    assert schema["name"] == "gpu-platform" and schema["version"] == gpu_platform.__version__
    assert {t.rsplit(":", 1)[-1] for t, r in schema["resources"].items() if r.get("isComponent")} == set(
        gpu_platform.COMPONENTS)
    assert "#/types/gpu-platform:index:PlatformSpec" in json.dumps(schema["resources"])


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


# --- GpuPlatform's `platform`: the stack file's object, typed from the models that validate it ---

def _platform_types(schema):
    return {token: t for token, t in schema["types"].items() if token.startswith("gpu-platform:index:Platform")}


def _model_of(token):
    return {type_token("gpu-platform", name): model for name, model in models().items()}[token]


def test_the_platform_argument_is_the_stack_files_object(schema):
    prop = schema["resources"]["gpu-platform:index:GpuPlatform"]["inputProperties"]["platform"]
    assert prop["$ref"] == "#/types/gpu-platform:index:PlatformSpec" and prop["description"]
    assert "additionalProperties" not in prop


def test_every_model_is_an_object_type_with_its_keys_and_required_keys(schema):
    """One description of the stack file: each model's keys (by alias, as the file spells them) are its type's
    properties, and the keys without a default are its required ones."""
    types = _platform_types(schema)
    assert {_model_of(token) for token in types} == set(models().values())
    assert types["gpu-platform:index:PlatformSpec"]["description"].startswith("The stack file's")
    for token, typ in types.items():
        model = _model_of(token)
        assert set(typ["properties"]) == {f.alias or n for n, f in model.model_fields.items()}, token
        assert set(typ["required"]) == {f.alias or n for n, f in model.model_fields.items() if f.is_required()}, token


@pytest.mark.parametrize("where, expected", [
    (("PlatformSpec", "nodePools"), {"type": "array", "items": {"$ref": "#/types/gpu-platform:index:PlatformNodePool"}}),
    (("PlatformNodePool", "maxSize"), {"type": "integer"}),
    (("PlatformNodePool", "instanceTypes"), {"type": "array", "items": {"type": "string"}}),
    (("PlatformSharing", "layout"), {"type": "object", "additionalProperties": {"type": "integer"}}),
    (("PlatformNodePool", "efa"), {"type": "boolean"}),
    (("PlatformTeam", "services"), {"type": "array", "items": {"$ref": "#/types/gpu-platform:index:PlatformService"}}),
    (("PlatformModel", "weightsGiB"), {"type": "number"}),
    (("PlatformCluster", "create"), {"$ref": "#/types/gpu-platform:index:PlatformCreateCluster"}),
])
def test_stack_file_keys_have_their_types(schema, where, expected):
    prop = dict(schema["types"][f"gpu-platform:index:{where[0]}"]["properties"][where[1]])
    prop.pop("description")
    assert prop == expected


def test_a_key_is_described_by_its_comment_and_its_rules(schema):
    pool = schema["types"]["gpu-platform:index:PlatformNodePool"]["properties"]
    assert pool["capacityType"]["description"].startswith('One of: "spot", "on-demand", "capacity-block".')
    assert "At most 1000." in pool["maxSize"]["description"]
    assert pool["zones"]["description"].startswith("Availability zones of a VPC the stack creates")


def test_a_key_without_a_comment_reaches_the_schema_undescribed():
    """The description check covers the stack file's types: a model key with nothing said of it has none."""
    from pydantic import BaseModel

    from gpu_platform.resources.platform_schema import description

    class Bare(BaseModel):
        plain: str

    assert description(Bare, "plain", Bare.model_json_schema()["properties"]["plain"]) == ""


def test_the_provider_passes_the_platform_object_through_as_written(schema):
    """The typed schema is for SDKs: the component still receives the stack file's camelCase object as it is."""
    provider = PackageProvider(gpu_platform.component_classes(), "gpu-platform", version="0.1.0")
    definition = provider._component_defs["GpuPlatform"]
    mapped = provider.map_inputs({"platform": {"nodePools": [{"maxSize": 2}]}, "region": "us-east-1"}, definition)
    assert mapped["platform"] == {"nodePools": [{"maxSize": 2}]}
