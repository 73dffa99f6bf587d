"""`gpu-platform plan`: exit codes, messages, and what it writes (on the fixture program)."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from gpu_platform.planner.cli import main
from gpu_platform.planner.plan import schema_problems
from tests.planner.planner_fixtures import FIXTURE_CONFIG, FIXTURE_KEY, FIXTURE_PROGRAM, write_yaml

FIXTURE = ["--project-dir", str(FIXTURE_PROGRAM)]
MANDATORY = {"policy": "p", "level": "mandatory", "urn": None, "message": "no"}


@pytest.fixture(autouse=True)
def no_policies(monkeypatch):
    """The fixture is not a GPU platform: the pack's rules are tested on the real stacks."""
    monkeypatch.setattr("gpu_platform.planner.verdict.evaluate", lambda plan, config_path, **_: [])


def plan(*args: str) -> int:
    return main(["plan", *FIXTURE, *args])


def stack_file(tmp_path, platform=None, **config):
    data = {"aws:region": "eu-west-1", FIXTURE_KEY: platform or {"name": "box"}, **config}
    return str(write_yaml(tmp_path / "Pulumi.test.yaml", {"config": data}))


def errors(capsys) -> list[str]:
    """stderr's lines, less the note every plan of this program prints (test_a_program_without_the_platform_...)."""
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return [line for line in err.splitlines() if not line.startswith(NOTE)]


NOTE = "note: "


def test_clean_plan_exits_0_and_prints_the_tree(capsys):
    assert plan("--stack", "test") == 0
    assert "Plan for fixture-box/test: 11 resources to create" in capsys.readouterr().out


def test_json_plan_validates_against_the_schema(tmp_path):
    assert plan("--stack", "test", "--json", str(tmp_path / "plan.json")) == 0
    assert schema_problems(json.loads((tmp_path / "plan.json").read_text())) == []


def test_config_file_plans_like_the_named_stack(tmp_path):
    plan("--stack", "test", "--json", str(tmp_path / "a.json"))
    plan("--config", str(FIXTURE_CONFIG), "--json", str(tmp_path / "b.json"))
    assert (tmp_path / "a.json").read_text() == (tmp_path / "b.json").read_text()


def test_out_writes_manifests(tmp_path):
    assert plan("--stack", "test", "--out", str(tmp_path / "out")) == 0
    assert len(list((tmp_path / "out" / "manifests").rglob("*.yaml"))) == 3


def test_markdown_format(capsys):
    assert plan("--stack", "test", "--format", "markdown") == 0
    assert capsys.readouterr().out.startswith("### gpu-platform plan: `test`")


def test_mandatory_violation_exits_1(monkeypatch, capsys):
    monkeypatch.setattr("gpu_platform.planner.verdict.evaluate", lambda plan, config_path, **_: [MANDATORY])
    assert plan("--stack", "test") == 1
    assert "Policy: FAILED (1 mandatory)." in capsys.readouterr().out


def test_violations_land_in_the_json(monkeypatch, tmp_path):
    monkeypatch.setattr("gpu_platform.planner.verdict.evaluate", lambda plan, config_path, **_: [MANDATORY])
    plan("--stack", "test", "--json", str(tmp_path / "plan.json"))
    assert json.loads((tmp_path / "plan.json").read_text())["policy"]["violations"] == [MANDATORY]


def test_policy_config_path_reaches_the_verdict(monkeypatch, tmp_path):
    seen = []
    monkeypatch.setattr("gpu_platform.planner.verdict.evaluate", lambda plan, config_path, **_: seen.append(config_path) or [])
    (tmp_path / "policy.json").write_text('{"all": "mandatory"}')
    plan("--stack", "test", "--policy-config", str(tmp_path / "policy.json"))
    assert seen == [tmp_path / "policy.json"]


def test_missing_stack_exits_2_with_one_line(capsys, monkeypatch):
    monkeypatch.chdir(FIXTURE_PROGRAM)
    assert plan("--stack", "nope") == 2
    assert errors(capsys) == ["error: stacks/Pulumi.nope.yaml: no such stack file (stacks here: test)"]


def test_missing_config_file_exits_2(tmp_path, capsys):
    assert plan("--config", str(tmp_path / "missing.yaml")) == 2
    assert len(errors(capsys)) == 1


def test_missing_region_exits_2_naming_the_key(tmp_path, capsys):
    path = tmp_path / "Pulumi.test.yaml"
    write_yaml(path, {"config": {FIXTURE_KEY: {"name": "box"}}})
    assert plan("--config", str(path)) == 2
    assert errors(capsys) == [f"error: {path}: missing config key `aws:region` under `config:`"]


def test_yaml_error_exits_2_with_the_line(tmp_path, capsys):
    path = tmp_path / "Pulumi.test.yaml"
    path.write_text("config:\n  aws:region: [eu-west-1\n")
    assert plan("--config", str(path)) == 2
    (line,) = errors(capsys)
    assert f"{path}:3:" in line and "YAML syntax error" in line


def test_missing_policy_config_exits_2(tmp_path, capsys):
    assert plan("--stack", "test", "--policy-config", str(tmp_path / "none.json")) == 2
    assert errors(capsys) == [f"error: --policy-config {tmp_path / 'none.json'}: no such file"]


def test_policy_config_that_is_not_json_exits_2(tmp_path, capsys):
    (tmp_path / "policy.json").write_text("all: mandatory\n")
    assert plan("--stack", "test", "--policy-config", str(tmp_path / "policy.json")) == 2
    assert "not JSON" in errors(capsys)[0]


def test_spec_error_from_the_program_exits_2_listing_each_problem(tmp_path, capsys):
    path = stack_file(tmp_path, {"name": "box", "invalid": ["nodePools[0].maxSize: too small", "teams: empty"]})
    assert plan("--config", path) == 2
    assert errors(capsys) == [f"error: {path}: nodePools[0].maxSize: too small", f"error: {path}: teams: empty"]


def test_program_failure_exits_3_naming_where(tmp_path, capsys):
    assert plan("--config", stack_file(tmp_path, {"name": "box", "fail": "program"})) == 3
    lines = (FIXTURE_PROGRAM / "__main__.py").read_text().splitlines()
    raising = next(i for i, line in enumerate(lines, 1) if "failed on purpose" in line)
    assert errors(capsys)[0] == (f"error: the program failed at __main__.py:{raising}: "
                                 "RuntimeError: the fixture program failed on purpose")


def test_program_failure_with_debug_shows_the_traceback(tmp_path, capsys):
    plan("--config", stack_file(tmp_path, {"name": "box", "fail": "apply"}), "--debug")
    assert "Traceback" in capsys.readouterr().err


def test_unanswered_invoke_exits_3_naming_the_token(tmp_path, capsys):
    assert plan("--config", stack_file(tmp_path, {"name": "box", "invoke": "aws:ec2/getAmi:getAmi"})) == 3
    assert "does not answer invoke aws:ec2/getAmi:getAmi" in errors(capsys)[0]


def test_internal_error_exits_3_without_a_traceback(monkeypatch, capsys):
    monkeypatch.setattr("gpu_platform.planner.verdict.evaluate", lambda plan, config_path, **_: 1 / 0)
    assert plan("--stack", "test") == 3
    assert errors(capsys)[0] == "error: internal error in gpu-platform: ZeroDivisionError: division by zero"


def test_program_warnings_go_to_stderr(tmp_path, capsys):
    assert plan("--config", stack_file(tmp_path, {"name": "box", "warn": "check the quota"})) == 0
    assert errors(capsys) == ["warning: check the quota"]


def test_stack_and_config_are_exclusive(capsys):
    with pytest.raises(SystemExit) as exit_:
        plan("--stack", "test", "--config", str(FIXTURE_CONFIG))
    assert exit_.value.code == 2


def test_subprocess_bad_input_exits_2_without_traceback(tmp_path):
    path = tmp_path / "Pulumi.test.yaml"
    path.write_text(f"config:\n  {FIXTURE_KEY}: {{name: box}}\n")
    done = subprocess.run([sys.executable, "-m", "gpu_platform.planner", "plan", *FIXTURE, "--config", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert (done.returncode, done.stdout, done.stderr) == (
        2, "", f"error: {path}: missing config key `aws:region` under `config:`\n")


# --- which project, and whether the stack file is a gpu-platform stack file ---

def test_a_program_without_the_platform_object_plans_with_one_note(tmp_path, capsys):
    out = tmp_path / "plan.json"
    assert plan("--stack", "test", "--json", str(out)) == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith(NOTE)]
    assert len(notes) == 1 and "sets no `fixture-box:platform`, so it is not a gpu-platform stack file" in notes[0]
    assert ("the acceptance, capacity, cost, lifecycle, logging, queueing, reservations, serving, training and usage "
            "sections are left out") in notes[0]
    assert not {"acceptance", "capacity", "cost", "training", "lifecycle", "queueing", "logging", "serving"} & set(
        json.loads(out.read_text()))


def test_a_platform_object_is_validated_before_the_program_runs(tmp_path, capsys):
    path = stack_file(tmp_path, **{"fixture-box:platform": {"environment": "moon"}})
    assert plan("--config", path) == 2
    lines = errors(capsys)
    assert lines and all(line.startswith(f"error: {path}: ") for line in lines)
    assert any("environment" in line for line in lines)


def test_the_project_is_found_from_the_config_file_s_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no Pulumi.yaml here or above
    assert main(["plan", "--config", str(FIXTURE_CONFIG)]) == 0


def test_the_project_is_found_above_the_working_directory(monkeypatch):
    monkeypatch.chdir(FIXTURE_PROGRAM / "stacks")
    assert main(["plan", "--stack", "test"]) == 0


def test_without_a_project_the_plan_exits_2_saying_where_it_looked(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    path = stack_file(tmp_path)
    assert main(["plan", "--config", path]) == 2
    (line,) = errors(capsys)
    assert f"no Pulumi.yaml in {tmp_path}" in line and "--project-dir" in line


def test_mocks_answer_an_invoke_the_planner_does_not_know(tmp_path, capsys):
    mocks = tmp_path / "mocks.yaml"
    mocks.write_text("aws:ec2/getAmi:getAmi:\n  result: {id: ami-0abc, imageId: ami-0abc}\n")
    assert plan("--config", stack_file(tmp_path, {"name": "box", "invoke": "aws:ec2/getAmi:getAmi"}),
                "--mocks", str(mocks)) == 0


def test_an_unanswered_invoke_names_the_mocks_option(tmp_path, capsys):
    assert plan("--config", stack_file(tmp_path, {"name": "box", "invoke": "aws:ssm/getParameter:getParameter"})) == 3
    assert "aws:ssm/getParameter:getParameter: give it an answer with `--mocks FILE`" in errors(capsys)[0]


def test_a_bad_mocks_file_exits_2(tmp_path, capsys):
    mocks = tmp_path / "mocks.json"
    mocks.write_text('{"aws:ec2/getAmi:getAmi": {"image_id": "ami-1"}}')
    assert plan("--stack", "test", "--mocks", str(mocks)) == 2
    assert "image_id -> imageId" in errors(capsys)[0]


def test_version_prints_the_packages_version(capsys):
    import gpu_platform

    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out == f"gpu-platform {gpu_platform.__version__}\n"


def test_without_the_program_extra_the_command_names_it(tmp_path):
    """gpu-platform without extras (as the policy pack installs it) cannot plan: it says which extra to add."""
    code = ("import sys; sys.modules['pydantic'] = None; from gpu_platform.planner.cli import main; "
            f"sys.exit(main(['plan', '--stack', 'test', '--project-dir', {str(FIXTURE_PROGRAM)!r}]))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 3, done.stderr
    assert "installed without its `program` extra (no module 'pydantic')" in done.stderr
    assert "pip install 'gpu-platform[program]'" in done.stderr and "Traceback" not in done.stderr


def test_the_program_extra_s_modules_are_the_extra_s_distributions():
    import tomllib
    from pathlib import Path

    from gpu_platform.planner.cli import PROGRAM_EXTRA_MODULES

    pyproject = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())
    extra = pyproject["project"]["optional-dependencies"]["program"]
    names = {re.split(r"[<>=!~ ]", requirement, maxsplit=1)[0].replace("-", "_") for requirement in extra}
    assert names == set(PROGRAM_EXTRA_MODULES)
