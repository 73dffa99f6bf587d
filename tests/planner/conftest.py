"""Fixtures of the planner's tests: one recorded run of the fixture program, and empty Pulumi projects."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.planner.planner_fixtures import run_fixture


@pytest.fixture(scope="module")
def recording():
    """One clean run of the fixture program (shared: runs are read-only)."""
    return run_fixture()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An empty Pulumi project `gpu-platform` with stackConfigDir `stacks`."""
    (tmp_path / "Pulumi.yaml").write_text("name: gpu-platform\nruntime: python\nstackConfigDir: stacks\n")
    (tmp_path / "stacks").mkdir()
    return tmp_path
