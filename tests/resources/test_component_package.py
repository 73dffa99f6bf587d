"""The component package other Pulumi languages use: the schema Pulumi's component provider host infers
from the components' annotations, offline, and the host entry in provider/."""
import json
import runpy
import typing
from pathlib import Path

import pytest
import yaml
from pulumi.provider.experimental.analyzer import camel_case
from pulumi.provider.experimental.component import ComponentProvider

import gpu_platform

PROVIDER = Path(__file__).resolve().parents[2] / "provider"


@pytest.fixture(scope="module")
def schema():
    provider = ComponentProvider(gpu_platform.component_classes(), "gpu-platform", version="0.1.0")
    return json.loads(provider.schema)


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


def test_arguments_and_components_are_documented(schema):
    """Descriptions come from the docstring under each key. The host reads a class's own source only, so
    the pool keys GpuNodePool and KarpenterNodePool share (PoolArgs) carry theirs in the Python API only."""
    from gpu_platform.resources.pool_args import PoolArgs

    shared = {camel_case(k) for k in PoolArgs.__annotations__}
    undocumented = [f"{token}.{key}" for token, r in schema["resources"].items()
                    for key, prop in r["inputProperties"].items()
                    if not prop.get("description") and not (token.endswith("NodePool") and key in shared)]
    assert undocumented == []
    assert all(r.get("description") for r in schema["resources"].values())


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
