"""Stack files that import Pulumi ESC environments (`environment:`): the offline planner takes the opened
values from `--esc-values` files or from the `esc` CLI, and refuses clearly when it has neither."""
from __future__ import annotations

import json
import os
import stat

import pytest
import yaml

from gpu_platform.planner.cli import main
from gpu_platform.planner.errors import PlannerError
from gpu_platform.planner.esc import merge
from gpu_platform.planner.stackfile import load_project, load_stack
from tests.support.installed import ROOT


@pytest.fixture
def project(tmp_path):
    """An empty Pulumi project `gpu-platform` with stackConfigDir `stacks`, in tmp_path/project."""
    path = tmp_path / "project"
    (path / "stacks").mkdir(parents=True)
    (path / "Pulumi.yaml").write_text("name: gpu-platform\nruntime: python\nstackConfigDir: stacks\n")
    return path

DEV = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())["config"]


@pytest.fixture(autouse=True)
def no_esc_cli(tmp_path, monkeypatch):
    """A PATH without the esc CLI (tests that want one put it in `bin`, see `esc_cli`), in the project's
    parent folder: messages show paths relative to the working directory."""
    (tmp_path / "bin").mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    monkeypatch.chdir(tmp_path)


def esc_cli(tmp_path, environments: dict[str, dict], fail: str = "") -> os.PathLike:
    """A stand-in `esc` on PATH: `esc open NAME --format json` prints `environments[NAME]` and logs its
    arguments; with `fail`, it exits 1 saying that."""
    script = tmp_path / "bin" / "esc"
    log = tmp_path / "esc.log"
    body = (f"echo '{fail}' >&2; exit 1" if fail else
            "case \"$2\" in\n" + "".join(f"  {name}) echo '{json.dumps(values)}' ;;\n"
                                        for name, values in environments.items()) + "  *) exit 3 ;;\nesac")
    script.write_text(f"#!/bin/sh\necho \"$@\" >> {log}\n{body}\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return log


def write(path, data) -> str:
    path.write_text(json.dumps(data) if path.suffix == ".json" else yaml.safe_dump(data))
    return str(path)


def load(project, stack: dict, *esc_values):
    write(project / "stacks" / "Pulumi.dev.yaml", stack)
    return load_stack(load_project(project), stack="dev", esc_values=list(esc_values))


def problems(project, stack: dict, *esc_values) -> list[str]:
    with pytest.raises(PlannerError) as err:
        load(project, stack, *esc_values)
    return err.value.problems


def test_the_environment_s_pulumi_config_becomes_stack_config(project, tmp_path):
    opened = write(tmp_path / "dev.json", {"pulumiConfig": {"aws:region": "eu-west-1", "greeting": "hi"},
                                           "environmentVariables": {"AWS_PROFILE": "x"}})
    config = load(project, {"environment": ["acme/dev"]}, opened).config
    assert config["aws:region"] == "eu-west-1"
    assert config["gpu-platform:greeting"] == "hi", "keys without a namespace are the project's, as in config:"
    assert "AWS_PROFILE" not in json.dumps(config), "only pulumiConfig reaches the program"


def test_the_stack_file_s_own_keys_win(project, tmp_path):
    opened = write(tmp_path / "dev.yaml", {"pulumiConfig": {"aws:region": "eu-west-1", "team": "a"}})
    config = load(project, {"environment": ["acme/dev"], "config": {"aws:region": "us-east-1"}}, opened).config
    assert (config["aws:region"], config["gpu-platform:team"]) == ("us-east-1", "a")


def test_later_environments_win_and_objects_merge_key_by_key(project, tmp_path):
    common = write(tmp_path / "common.json", {"pulumiConfig": {"aws:region": "us-east-1", "tags": {"a": 1, "b": 1}}})
    dev = write(tmp_path / "dev.json", {"pulumiConfig": {"aws:region": "us-west-2", "tags": {"b": 2}}})
    config = load(project, {"environment": ["acme/common", "acme/dev"]}, common, dev).config
    assert config["aws:region"] == "us-west-2"
    assert json.loads(config["gpu-platform:tags"]) == {"a": 1, "b": 2}


def test_merge_replaces_lists_and_scalars():
    assert merge({"a": [1, 2], "b": {"c": 1}, "d": 1}, {"a": [3], "b": 5}) == {"a": [3], "b": 5, "d": 1}


def test_an_imports_mapping_names_the_environments_too(project, tmp_path):
    opened = write(tmp_path / "dev.json", {"pulumiConfig": {"aws:region": "us-east-2"}})
    assert load(project, {"environment": {"imports": ["acme/dev"]}}, opened).config["aws:region"] == "us-east-2"


def test_without_values_or_the_cli_the_stack_is_refused_saying_how(project):
    (message,) = problems(project, {"environment": ["acme/dev"], "config": {"aws:region": "us-east-1"}})
    assert message.startswith("project/stacks/Pulumi.dev.yaml: `environment:` imports Pulumi ESC environments (acme/dev)")
    assert "--esc-values FILE" in message and "`esc` CLI" in message


def test_the_esc_cli_opens_each_environment_in_order(project, tmp_path):
    log = esc_cli(tmp_path, {"acme/common": {"pulumiConfig": {"aws:region": "us-east-1", "x": "common"}},
                             "acme/dev": {"pulumiConfig": {"x": "dev"}}})
    config = load(project, {"environment": ["acme/common", "acme/dev"]}).config
    assert (config["aws:region"], config["gpu-platform:x"]) == ("us-east-1", "dev")
    assert log.read_text().splitlines() == ["open acme/common --format json", "open acme/dev --format json"]


def test_a_failing_esc_open_is_refused_with_its_reason(project, tmp_path):
    esc_cli(tmp_path, {}, fail="error: no credentials")
    (message,) = problems(project, {"environment": ["acme/dev"]})
    assert "`esc open acme/dev` failed: error: no credentials" in message and "--esc-values" in message


def test_values_files_win_over_the_cli(project, tmp_path):
    log = esc_cli(tmp_path, {"acme/dev": {"pulumiConfig": {"aws:region": "us-east-1"}}})
    opened = write(tmp_path / "dev.json", {"pulumiConfig": {"aws:region": "eu-west-1"}})
    assert load(project, {"environment": ["acme/dev"]}, opened).config["aws:region"] == "eu-west-1"
    assert not log.exists()


@pytest.mark.parametrize("environment", [{"values": {"pulumiConfig": {"a": 1}}}, "acme/dev", [], [""], [1]])
def test_an_environment_that_names_no_environments_is_refused(project, tmp_path, environment):
    opened = write(tmp_path / "dev.json", {"pulumiConfig": {"aws:region": "us-east-1"}})
    stack = {"environment": environment, "config": {"aws:region": "us-east-1"}}
    if environment == []:  # an empty list imports nothing: the option has nothing to give values to
        assert "imports no environment" in problems(project, stack, opened)[0]
    else:
        assert "`environment:` must list the Pulumi ESC environments" in problems(project, stack, opened)[0]


def test_values_for_a_stack_without_environments_are_refused(project, tmp_path):
    opened = write(tmp_path / "dev.json", {"pulumiConfig": {}})
    (message,) = problems(project, {"config": {"aws:region": "us-east-1"}}, opened)
    assert "--esc-values gives Pulumi ESC values, but the stack file imports no environment" in message


@pytest.mark.parametrize("content, expected", [
    ("[1, 2]", "an opened environment is a mapping"),
    ('{"pulumiConfig": [1]}', "`pulumiConfig` must map config keys to values"),
    ("{", "--esc-values"),
])
def test_a_values_file_that_is_not_an_opened_environment_is_refused(project, tmp_path, content, expected):
    (tmp_path / "bad.json").write_text(content)
    with pytest.raises(Exception) as err:
        load(project, {"environment": ["acme/dev"]}, tmp_path / "bad.json")
    assert expected in str(err.value)


def test_plan_reads_the_platform_from_an_environment(tmp_path, capsys):
    """The dev stack with its platform and region in an environment plans exactly like the dev stack."""
    values = {"pulumiConfig": {k: v for k, v in DEV.items() if not isinstance(v, dict) or "secure" not in v},
              "environmentVariables": {"AWS_REGION": DEV["aws:region"]}}
    secrets = {k: v for k, v in DEV.items() if isinstance(v, dict) and "secure" in v}
    stack = write(tmp_path / "Pulumi.dev.yaml", {"environment": ["gpu-platform/dev"], "config": secrets})
    opened = write(tmp_path / "opened.json", values)
    common = ["--project-dir", str(ROOT), "--as-of", "2026-11-20"]
    assert main(["plan", "--stack", "dev", "--json", str(tmp_path / "a.json"), *common]) == 0
    assert main(["plan", "--config", stack, "--esc-values", opened, "--json", str(tmp_path / "b.json"), *common]) == 0
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()


def test_plan_without_values_exits_2(tmp_path, capsys):
    stack = write(tmp_path / "Pulumi.dev.yaml", {"environment": ["gpu-platform/dev"]})
    assert main(["plan", "--config", stack, "--project-dir", str(ROOT)]) == 2
    assert "--esc-values FILE" in capsys.readouterr().err
