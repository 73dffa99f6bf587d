"""A plan no lock holds says so: a prod stack file copied under another name warns that the replacement guard
has nothing to hold it to, `--require-lock` refuses it, and lock advice never names a stack other than the
file planned."""
from __future__ import annotations

import shutil
from pathlib import Path

from gpu_platform.planner.cli import main
from tests.support.stacks import AS_OF, ROOT, STACKS


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(["plan", "--project-dir", str(ROOT), "--as-of", AS_OF, *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def copied_prod(folder: Path) -> Path:
    copy = folder / "Pulumi.prod.head.yaml"
    shutil.copy(STACKS / "Pulumi.prod.yaml", copy)
    return copy


def test_a_prod_stack_with_its_lock_says_nothing_of_locks(capsys):
    code, _, err = run(capsys, "--stack", "prod")
    assert code == 0 and "no node-group lock" not in err


def test_a_copied_prod_stack_without_a_lock_warns_and_names_the_stack_it_copies(tmp_path, capsys):
    code, out, err = run(capsys, "--config", str(copied_prod(tmp_path)))
    assert code == 0 and "Policy: passed" in out
    (line,) = [x for x in err.splitlines() if "no node-group lock" in x]
    assert line.startswith("warning: ") and "is a prod stack" in line and "replacement guard has nothing to hold it to" in line
    assert "a copy of stack 'prod'" in line and "make the change in stacks/Pulumi.prod.yaml and plan `--stack prod`" in line
    assert "gpu-platform lock" not in line and "`--require-lock` makes this an error" in line


def test_require_lock_refuses_it(tmp_path, capsys):
    code, out, _ = run(capsys, "--config", str(copied_prod(tmp_path)), "--require-lock")
    assert code == 1 and "mandatory  locked-node-groups-present  (stack): " in out and "is a prod stack" in out


def test_the_lock_of_the_stack_it_copies_is_a_failed_lookup_with_advice_for_this_file(tmp_path, capsys):
    copy = copied_prod(tmp_path)
    code, _, err = run(capsys, "--config", str(copy), "--lock", str(STACKS / "Pulumi.prod.lock.json"))
    assert code == 2 and "the lock lookup failed" in err and "plan the change as stack 'prod'" in err
    assert f"gpu-platform lock --config {copy}" in err and "--stack prod.head" not in err


def test_a_refusal_advises_locking_the_file_planned_not_another_stack(tmp_path, capsys):
    """A stack file outside the project's stack folder, locked under its own name: the advice to relock it
    names that file, which `gpu-platform lock --stack` would not find."""
    copy = tmp_path / "Pulumi.prod.yaml"
    shutil.copy(STACKS / "Pulumi.prod.yaml", copy)
    copy.write_text(copy.read_text().replace("instanceTypes: [g6.2xlarge, g6.4xlarge]", "instanceTypes: [g6.2xlarge]"))
    code, out, _ = run(capsys, "--config", str(copy), "--lock", str(STACKS / "Pulumi.prod.lock.json"))
    guard = [x for x in out.splitlines() if "node-group-replacement-guard" in x]
    assert code == 1 and guard
    assert all(f"gpu-platform lock --config {copy}" in x and "lock --stack prod" not in x for x in guard)


def test_a_dev_stack_without_a_lock_is_not_warned_about(tmp_path, capsys):
    dev = tmp_path / "Pulumi.dev.copy.yaml"
    shutil.copy(STACKS / "Pulumi.dev.yaml", dev)
    code, _, err = run(capsys, "--config", str(dev))
    assert code == 0 and "no node-group lock" not in err
