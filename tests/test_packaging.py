"""What `pip install` puts on a user's machine: one top-level import package, `gpu_platform`, with its data."""
from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    out = tmp_path_factory.mktemp("wheel")
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (path,) = out.glob("gpu_platform-*.whl")
    return zipfile.ZipFile(path)


def test_the_wheel_installs_one_import_package(wheel):
    tops = {name.split("/")[0] for name in wheel.namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"gpu_platform"}


def test_the_wheel_carries_the_command(wheel):
    (entry_points,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    assert "gpu-platform = gpu_platform.planner.cli:main" in wheel.read(entry_points).decode()


def test_the_wheel_carries_the_upstream_files_and_the_plan_schema(wheel):
    names = set(wheel.namelist())
    source = ROOT / "components"
    data = [p for p in (source / "gpu_platform" / "facts" / "upstream").rglob("*") if p.is_file()]
    data.append(source / "gpu_platform" / "planner" / "plan.schema.json")
    assert {p.relative_to(source).as_posix() for p in data} <= names


def test_the_wheel_carries_every_module(wheel):
    source = ROOT / "components"
    modules = {p.relative_to(source).as_posix() for p in (source / "gpu_platform").rglob("*.py")}
    assert modules <= set(wheel.namelist())
