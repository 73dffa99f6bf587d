"""The example stacks' plan JSON, byte for byte: a refactoring that changes what the program registers fails here.

The fixtures in fixtures/plans/ are `gpu-platform plan --stack NAME --as-of <AS_OF> --json FILE` of each
example stack. A deliberate change to what a stack plans refreshes them with
`UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/planner/test_plan_fixtures.py`; review the diff like code.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpu_platform.planner.cli import main
from tests.support.stacks import AS_OF, ROOT

FIXTURES = Path(__file__).parent / "fixtures" / "plans"


@pytest.mark.parametrize("stack", ["dev", "prod", "karpenter", "training-blackwell", "training-ultraserver",
                                   "mig-slices"])
def test_example_plan_is_byte_identical_to_its_fixture(stack, tmp_path):
    out = tmp_path / f"{stack}.json"
    assert main(["plan", "--project-dir", str(ROOT), "--stack", stack, "--as-of", AS_OF, "--json", str(out)]) == 0
    fixture = FIXTURES / f"{stack}.json"
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        fixture.write_bytes(out.read_bytes())
    assert out.read_bytes() == fixture.read_bytes(), f"{fixture.name} differs: review, then refresh with UPDATE_SNAPSHOTS=1"
