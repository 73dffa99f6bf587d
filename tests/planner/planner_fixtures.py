"""Fixtures for the planner's tests: the fixture program, tiny projects, and recorded runs."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

FIXTURE_PROGRAM = Path(__file__).parent / "fixtures" / "program"
FIXTURE_CONFIG = FIXTURE_PROGRAM / "stacks" / "Pulumi.test.yaml"


def fixture_config(**platform) -> dict[str, str]:
    """The config map the fixture program reads, with `platform` switches added."""
    return {"aws:region": "eu-west-1", "gpu-platform:platform": json.dumps({"name": "box", **platform})}


def run_fixture(**platform):
    from gpu_platform.planner.engine import run_program

    return run_program(FIXTURE_PROGRAM, stack="test", config=fixture_config(**platform))


def by_name(recording, type_: str, name: str):
    found = [r for r in recording.resources if r.type == type_ and r.name == name]
    assert len(found) == 1, f"{type_} {name}: {[r.name for r in recording.resources if r.type == type_]}"
    return found[0]


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


def write_yaml(path: Path, data) -> Path:
    path.write_text(yaml.safe_dump(data))
    return path
