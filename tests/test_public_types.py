"""The public API as type checkers and `help()` see it: `from gpu_platform import GpuNodePoolArgs` is typed for
mypy and pyright (the engine behind VS Code's Python support), a misspelt argument or value is an error
there, and each argument's documentation is listed by help(). The import itself stays lazy."""
from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.pyright import cache_dir, pyright

ROOT = Path(__file__).resolve().parent.parent
COMPONENTS = ROOT / "components"

# A user's program: a misspelt argument, a misspelt value, the same arguments written correctly (as text and
# as enums), and a component output read as the wrong type.
PROGRAM = """\
from gpu_platform import AmiType, CapacityType, GpuNodePool, GpuNodePoolArgs, SharingMode

CLUSTER = "gpu-dev"
misspelt_name = GpuNodePoolArgs(
    cluster_name=CLUSTER, node_role_arn="arn", subnet_ids=["subnet-0123456789abcdef0"],
    instance_types=["p5.48xlarge"], capacity_type="on-demand", max_szie=2, ami={"type": "AL2023_x86_64_NVIDIA"})
misspelt_value = GpuNodePoolArgs(
    cluster_name=CLUSTER, node_role_arn="arn", subnet_ids=["subnet-0123456789abcdef0"],
    instance_types=["p5.48xlarge"], capacity_type="ondemand", max_size=2, ami={"type": "AL2023_x86_64_NVIDIA"})
as_text = GpuNodePoolArgs(
    cluster_name=CLUSTER, node_role_arn="arn", subnet_ids=["subnet-0123456789abcdef0"],
    instance_types=["g5.xlarge"], capacity_type="spot", max_size=2, ami={"type": "AL2023_x86_64_NVIDIA"},
    sharing={"mode": "time-slicing", "replicas": 4})
as_enums = GpuNodePoolArgs(
    cluster_name=CLUSTER, node_role_arn="arn", subnet_ids=["subnet-0123456789abcdef0"],
    instance_types=["g5.xlarge"], capacity_type=CapacityType.SPOT, max_size=2,
    ami={"type": AmiType.AL2023_X86_64_NVIDIA}, sharing={"mode": SharingMode.MIG})
pool = GpuNodePool("a10g", as_text)
wrong_type: str = pool.node_group_name
"""
# The statements the checkers must refuse; `wrong_type` proves an output is typed (an Output, not Any).
REFUSED = {"misspelt_name", "misspelt_value", "wrong_type"}


def _statement_at(line: int) -> str:
    """The name the program's statement spanning `line` assigns."""
    for node in ast.parse(PROGRAM).body:
        if node.lineno <= line <= (node.end_lineno or node.lineno) and isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            return ast.unparse(target)
    return f"line {line}"


@pytest.fixture
def program(tmp_path: Path) -> Path:
    path = tmp_path / "program.py"
    path.write_text(PROGRAM)
    return path


def test_mypy_finds_both_typos_through_the_top_level_import(program: Path) -> None:
    env = {**os.environ, "MYPYPATH": str(COMPONENTS)}
    done = subprocess.run([sys.executable, "-m", "mypy", "--follow-imports=silent", "--python-version", "3.11",
                           "--cache-dir", str(cache_dir() / "mypy-cache"), "--no-error-summary", str(program)],
                          cwd=program.parent, capture_output=True, text=True, timeout=900, env=env)
    errors: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        if ": error: " in line:
            errors.setdefault(_statement_at(int(line.split(":")[1])), []).append(line)
    assert set(errors) == REFUSED, done.stdout + done.stderr
    assert any('Extra key "max_szie"' in e for e in errors["misspelt_name"]), errors
    assert any("Literal['ondemand']" in e and "CapacityType" in e for e in errors["misspelt_value"]), errors


def test_pyright_finds_both_typos_through_the_top_level_import(program: Path) -> None:
    config = program.parent / "pyrightconfig.json"
    config.write_text(json.dumps({"extraPaths": [str(COMPONENTS)], "pythonVersion": "3.11"}))
    done = subprocess.run([str(pyright()), "--outputjson", "--pythonpath", sys.executable, "-p", str(config),
                           str(program)], cwd=program.parent, capture_output=True, text=True, timeout=600)
    found = json.loads(done.stdout)["generalDiagnostics"]
    errors: dict[str, list[str]] = {}
    for d in found:
        if d["severity"] == "error":
            errors.setdefault(_statement_at(d["range"]["start"]["line"] + 1), []).append(d["message"])
    assert set(errors) == REFUSED, found
    assert any("ondemand" in e and "capacity_type" in e for e in errors["misspelt_value"]), errors


def test_the_import_stays_lazy() -> None:
    """Static imports are for type checkers only: importing the package loads no component or provider SDK."""
    code = "import sys, gpu_platform; print(sorted(m for m in sys.modules if m.startswith(('pulumi', 'gpu_platform.'))))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(COMPONENTS)})
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_help_lists_each_argument_with_its_documentation() -> None:
    import pydoc

    import gpu_platform

    text = pydoc.render_doc(gpu_platform.GpuNodePoolArgs, renderer=pydoc.plaintext)
    assert "max_size (required): Nodes at most (1-1000)." in text  # declared on the shared pool Args
    assert "cluster_name (required): The EKS cluster's name" in text  # declared on GpuNodePoolArgs
    assert "sharing: How pods share the GPUs" in text


def test_type_checkers_see_every_public_name_where_it_is_loaded() -> None:
    import gpu_platform

    tree = ast.parse(Path(gpu_platform.__file__).read_text())
    branch = next(n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING")
    static = {a.name: node.module for node in branch.body if isinstance(node, ast.ImportFrom) for a in node.names
              if a.asname == a.name}  # `X as X`: re-exported, as strict checkers require
    assert static == gpu_platform._MODULE_OF
