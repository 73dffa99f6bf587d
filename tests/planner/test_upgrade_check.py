"""`gpu-platform upgrade-check BASE.json HEAD.json` on real plans of the example stacks."""
from __future__ import annotations

import copy
import json

import pytest

from gpu_platform.planner.cli import main
from gpu_platform.planner.upgrade_check import compare
from tests.support.stacks import on_kubernetes, resource, stack_platform

RELEASE = "kubernetes:helm.sh/v3:Release"


def write(tmp_path, name: str, plan: dict) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(plan))
    return str(path)


def check(tmp_path, base: dict, head: dict, *args: str) -> int:
    return main(["upgrade-check", write(tmp_path, "base.json", base), write(tmp_path, "head.json", head), *args])


@pytest.fixture
def prod_133(plan_of):
    return plan_of(on_kubernetes("prod", "1.33"), "prod")


@pytest.fixture
def prod(plan_of):
    return plan_of(stack_platform("prod"), "prod")


def with_operator(plan: dict, version: str) -> dict:
    plan = copy.deepcopy(plan)
    resource(plan, RELEASE, "gpu-operator")["inputs"]["version"] = version
    return plan


def test_the_same_plan_is_a_clean_path(tmp_path, prod, capsys):
    assert check(tmp_path, prod, prod) == 0
    assert "Upgrade path: OK" in capsys.readouterr().out


def test_1_33_to_1_35_is_named_with_the_first_step(tmp_path, prod_133, prod, capsys):
    assert check(tmp_path, prod_133, prod) == 1
    out = capsys.readouterr().out
    assert "error: Kubernetes 1.33 -> 1.35: skips 1.34" in out and "first: upgrade to 1.34" in out
    assert "Kubernetes          1.33 -> 1.35" in out  # the pinned versions that change


def test_a_gpu_operator_jump_of_two_release_lines_is_named(tmp_path, prod, capsys):
    assert check(tmp_path, with_operator(prod, "v25.10.1"), prod) == 1
    assert "error: GPU Operator v25.10.1 -> v26.7.0: skips v26.3" in capsys.readouterr().out


def test_markdown_for_the_pull_request(tmp_path, prod_133, prod, capsys):
    assert check(tmp_path, prod_133, prod, "--format", "markdown") == 1
    out = capsys.readouterr().out
    assert out.startswith("#### Upgrade check: `prod`") and "❌ **Kubernetes 1.33 -> 1.35**" in out
    assert "| Kubernetes | 1.33 | 1.35 |" in out


def test_warnings_alone_do_not_fail(tmp_path, plan_of, capsys):
    base = plan_of(on_kubernetes("dev", "1.34"), "dev")
    head = plan_of(stack_platform("dev"), "dev")
    findings = compare(base, head)
    # the EBS and EFS CSI add-ons have no compatibility data in the catalog
    assert [(f.severity, f.subject.split()[0]) for f in findings] == [("warning", "aws-ebs-csi-driver"),
                                                                       ("warning", "aws-efs-csi-driver")]
    assert check(tmp_path, base, head) == 0


def test_an_unreadable_plan_is_an_input_error(tmp_path, prod, capsys):
    (tmp_path / "broken.json").write_text("{")
    assert main(["upgrade-check", str(tmp_path / "broken.json"), write(tmp_path, "head.json", prod)]) == 2
    assert main(["upgrade-check", write(tmp_path, "list.json", []), write(tmp_path, "head.json", prod)]) == 2
    err = capsys.readouterr().err
    assert "cannot read a plan" in err and "not a plan written by `gpu-platform plan --json`" in err
