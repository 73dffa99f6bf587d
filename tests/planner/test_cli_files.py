"""The files and options the commands read beside the stack file: each is refused naming it (exit 2), or
works; never exit 3 and never a traceback. The lock a policy config names, Pulumi.yaml's `main:`, `--as-of`
at the calendar's end, `lock --out`, user mocks of the wrong types, and an empty preview under `--lock`."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpu_platform.planner.cli import main
from gpu_platform.policy.locks import LockError, resolve
from tests.planner.planner_fixtures import FIXTURE_KEY, FIXTURE_PROGRAM, write_yaml
from tests.support.stacks import AS_OF, ROOT


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    err = capsys.readouterr().err
    assert "Traceback" not in err and code != 3, err
    return code, err


# --- a lock the policy config names ---

@pytest.mark.parametrize("make, words", [
    (lambda tmp: tmp / "missing.lock.json", "no such file"),
    (lambda tmp: tmp, "is a directory"),
], ids=["missing", "directory"])
def test_a_named_lock_file_that_cannot_be_read_is_refused_not_taken_for_no_lock(tmp_path, make, words):
    with pytest.raises(LockError, match=words):
        resolve({"lockFile": str(make(tmp_path))}, "dev")


@pytest.mark.parametrize("name", ["missing.lock.json", "."])
def test_plan_exits_2_on_a_lock_file_it_cannot_read_outside_prod(tmp_path, capsys, name):
    config = tmp_path / "policy.json"
    config.write_text(json.dumps({"node-group-replacement-guard": {"lockFile": str(tmp_path / name)}}))
    code, err = run(capsys, "plan", "--stack", "dev", "--project-dir", str(ROOT), "--as-of", AS_OF,
                    "--policy-config", str(config))
    assert code == 2 and "the policy config's `lockFile`" in err, err


# --- Pulumi.yaml's main: ---

def _project(tmp_path: Path, main_line: str) -> Path:
    project = tmp_path / "project"
    shutil.copytree(FIXTURE_PROGRAM, project, ignore=shutil.ignore_patterns("__pycache__", "stacks"))
    text = (project / "Pulumi.yaml").read_text()
    (project / "Pulumi.yaml").write_text(text + main_line)
    (project / "stacks").mkdir()
    write_yaml(project / "stacks" / "Pulumi.test.yaml", {"config": {"aws:region": "eu-west-1", FIXTURE_KEY: {"name": "box"}}})
    return project


def test_a_main_that_points_nowhere_is_refused_naming_it(tmp_path, capsys):
    project = _project(tmp_path, "main: src/\n")
    code, err = run(capsys, "plan", "--project-dir", str(project), "--stack", "test")
    assert code == 2 and "`main: src/` points nowhere" in err, err


@pytest.mark.parametrize("layout", ["folder", "file"])
def test_a_main_naming_the_program_runs_that_program(tmp_path, capsys, layout):
    project = _project(tmp_path, "main: src/\n" if layout == "folder" else "main: src/program.py\n")
    (project / "src").mkdir()
    body = (project / "__main__.py").read_text()
    (project / "__main__.py").write_text("raise SystemExit('the folder program ran, not main:')\n")
    (project / "src" / ("__main__.py" if layout == "folder" else "program.py")).write_text(body)
    shutil.copy(project / "fixture_box.py", project / "src" / "fixture_box.py")
    code, err = run(capsys, "plan", "--project-dir", str(project), "--stack", "test")
    assert code in (0, 1), err  # planned (1: the pack's verdict on a program that is no GPU platform)


# --- --as-of at the end of the calendar ---

def test_as_of_the_last_day_of_the_calendar_judges_a_capacity_block_stack(capsys):
    code, err = run(capsys, "plan", "--stack", "training-blackwell", "--project-dir", str(ROOT),
                    "--as-of", "9999-12-31")
    # a refusal naming the fields, never a crash: the block's 2026 window is no block bought in 9999
    assert code == 2 and "nodePools[0].reservation.start" in err and "Traceback" not in err, err


# --- lock --out ---

def test_lock_out_a_directory_is_refused_before_the_program_runs(tmp_path, capsys):
    code, err = run(capsys, "lock", "--stack", "dev", "--project-dir", str(ROOT), "--out", str(tmp_path))
    assert code == 2 and f"--out {tmp_path}: is a directory" in err, err


# --- user mocks of the wrong types ---

def test_a_mock_answer_of_the_wrong_types_is_refused_naming_the_mock(tmp_path, capsys):
    mocks = tmp_path / "mocks.json"
    mocks.write_text(json.dumps({"aws:eks/getCluster:getCluster": {"result": {"name": 5, "endpoint": ["x"]}}}))
    stack = write_yaml(tmp_path / "Pulumi.test.yaml", {"config": {
        "aws:region": "eu-west-1", FIXTURE_KEY: {"name": "box", "existingCluster": "prod-eks"}}})
    code, err = run(capsys, "plan", "--project-dir", str(FIXTURE_PROGRAM), "--config", str(stack), "--mocks", str(mocks))
    assert code == 2 and f"--mocks {mocks}" in err and "aws:eks/getCluster:getCluster" in err, err


# --- check-preview of an empty preview ---

def test_check_preview_passes_an_empty_preview_with_an_explicit_lock(tmp_path, capsys):
    preview = tmp_path / "preview.json"
    preview.write_text(json.dumps({"steps": []}))
    code = main(["check-preview", str(preview), "--project-dir", str(ROOT),
                 "--lock", str(ROOT / "stacks" / "Pulumi.dev.lock.json")])
    out, err = capsys.readouterr()
    assert code == 0 and "Preview gate: passed" in out, err
