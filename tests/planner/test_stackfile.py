"""Loading Pulumi.yaml and stack files into the config map a program sees."""
from __future__ import annotations

import json

import pytest

from gpu_platform.planner.errors import PlannerError
from gpu_platform.planner.stackfile import find_project_dir, load_project, load_stack, stack_name_for, stand_in
from tests.planner.planner_fixtures import write_yaml

PLATFORM = {"environment": "dev", "nodePools": [{"name": "a", "maxSize": 4}]}


def _stack(project, config, stack="dev"):
    write_yaml(project / "stacks" / f"Pulumi.{stack}.yaml", {"config": config})
    return load_stack(load_project(project), stack=stack)


def _problems(project, text, stack="dev"):
    (project / "stacks" / f"Pulumi.{stack}.yaml").write_text(text)
    with pytest.raises(PlannerError) as err:
        load_stack(load_project(project), stack=stack)
    return err.value.problems


def test_objects_become_json_strings(project):
    loaded = _stack(project, {"aws:region": "us-east-1", "gpu-platform:platform": PLATFORM})
    assert json.loads(loaded.config["gpu-platform:platform"]) == PLATFORM


def test_lists_become_json_strings(project):
    loaded = _stack(project, {"aws:region": "us-east-1", "gpu-platform:platform": {}, "gpu-platform:zones": ["a", "b"]})
    assert json.loads(loaded.config["gpu-platform:zones"]) == ["a", "b"]


@pytest.mark.parametrize("value, text", [(True, "true"), (False, "false"), (5, "5"), (1.5, "1.5"), (None, "")])
def test_scalars_become_strings_as_the_cli_passes_them(project, value, text):
    loaded = _stack(project, {"aws:region": "us-east-1", "gpu-platform:platform": {}, "gpu-platform:x": value})
    assert loaded.config["gpu-platform:x"] == text


def test_key_without_namespace_gets_the_project_namespace(project):
    loaded = _stack(project, {"aws:region": "us-east-1", "platform": PLATFORM})
    assert json.loads(loaded.config["gpu-platform:platform"]) == PLATFORM


def test_yaml_is_read_as_yaml_1_2(project):
    text = "config:\n  aws:region: us-east-1\n  gpu-platform:platform: {mode: on, since: 2025-01-01, count: 010}\n"
    (project / "stacks" / "Pulumi.dev.yaml").write_text(text)
    loaded = load_stack(load_project(project), stack="dev")
    assert json.loads(loaded.config["gpu-platform:platform"]) == {"mode": "on", "since": "2025-01-01", "count": 10}


def test_stack_name_resolves_through_stack_config_dir(project):
    loaded = _stack(project, {"aws:region": "us-east-1", "platform": {}}, stack="prod")
    assert loaded.path == project / "stacks" / "Pulumi.prod.yaml"


def test_project_config_is_the_default_and_the_stack_overrides_it(project):
    (project / "Pulumi.yaml").write_text(
        "name: gpu-platform\nstackConfigDir: stacks\nconfig:\n  aws:region: eu-west-1\n"
        "  gpu-platform:owner: {type: string, default: platform-team}\n  gpu-platform:tier: {type: string}\n")
    loaded = _stack(project, {"aws:region": "us-east-1", "platform": {}})
    assert (loaded.config["aws:region"], loaded.config["gpu-platform:owner"]) == ("us-east-1", "platform-team")


def test_typed_project_key_without_default_sets_nothing(project):
    (project / "Pulumi.yaml").write_text(
        "name: gpu-platform\nstackConfigDir: stacks\nconfig:\n  gpu-platform:tier: {type: string}\n")
    loaded = _stack(project, {"aws:region": "us-east-1", "platform": {}})
    assert "gpu-platform:tier" not in loaded.config


def test_secret_key_gets_a_fake_stand_in_and_is_marked_secret(project):
    (project / "stacks" / "Pulumi.dev.yaml").write_text(
        "config:\n  aws:region: us-east-1\n  gpu-platform:platform: {}\n  gpu-platform:token:\n    secure: v1:AAABAC==\n"
        "  gpu-platform:plain: visible\n")
    loaded = load_stack(load_project(project), stack="dev")
    assert loaded.secret_keys == ("gpu-platform:token",)
    assert loaded.config["gpu-platform:token"] == stand_in("gpu-platform:token")
    assert "stand-in" in stand_in("x") and "AAABAC" not in json.dumps(loaded.config)
    assert loaded.config["gpu-platform:plain"] == "visible"


def test_secure_value_nested_in_an_object_is_refused_with_its_path(project):
    problems = _problems(project, "config:\n  aws:region: us-east-1\n  gpu-platform:platform:\n"
                                  "    alerts: {webhook: {secure: AAAB}}\n")
    assert "`gpu-platform:platform.alerts.webhook` is a secret" in problems[0] and "its own config key" in problems[0]


def test_missing_stack_file_names_the_path_and_the_known_stacks(project):
    _stack(project, {"aws:region": "us-east-1", "platform": {}}, stack="prod")
    with pytest.raises(PlannerError) as err:
        load_stack(load_project(project), stack="dev")
    assert "Pulumi.dev.yaml: no such stack file (stacks here: prod)" in err.value.problems[0]


def test_missing_config_file_is_reported(project):
    with pytest.raises(PlannerError) as err:
        load_stack(load_project(project), path=project / "nowhere.yaml")
    assert err.value.problems[0].endswith("nowhere.yaml: no such file")


def test_yaml_syntax_error_names_the_line(project):
    problems = _problems(project, "config:\n  aws:region: us-east-1\n  gpu-platform:platform: {a: [1, 2}\n")
    assert len(problems) == 1 and "Pulumi.dev.yaml:3:" in problems[0] and "YAML syntax error" in problems[0]


def test_a_stack_file_without_the_platform_object_loads(project):
    """Any program's stack file: the planner then plans it with the sections that read resources only."""
    assert _stack(project, {"aws:region": "us-east-1", "gpu-platform:other": "x"}).config["gpu-platform:other"] == "x"


def test_missing_region_is_reported(project):
    assert _problems(project, "config:\n  gpu-platform:platform: {}\n") == [
        "stacks/Pulumi.dev.yaml: missing config key `aws:region` under `config:`"]


def test_every_problem_is_reported_at_once(project):
    text = "config:\n  gpu-platform:platform:\n    alerts: {webhook: {secure: v1:AAABAC==}}\n"
    assert len(_problems(project, text)) == 2


def test_file_that_is_not_a_mapping_is_refused(project):
    assert "must be a YAML mapping" in _problems(project, "- a\n- b\n")[0]



@pytest.fixture(autouse=True)
def _in_project(project, monkeypatch):
    monkeypatch.chdir(project)  # messages show paths relative to the working directory


@pytest.mark.parametrize("file, stack", [("Pulumi.dev.yaml", "dev"), ("Pulumi.team-a.yaml", "team-a"),
                                         ("custom.yaml", "custom")])
def test_stack_name_comes_from_the_file_name(tmp_path, file, stack):
    assert stack_name_for(tmp_path / file) == stack


def test_project_dir_is_found_from_a_subdirectory(project):
    sub = project / "stacks"
    assert find_project_dir(sub) == project


def test_pulumi_yaml_without_name_is_refused(tmp_path):
    (tmp_path / "Pulumi.yaml").write_text("runtime: python\n")
    with pytest.raises(PlannerError, match="needs a `name:`"):
        load_project(tmp_path)
