"""The house rules: gpu_platform's layers, checked with import-linter's contracts from pyproject.toml.

A change that adds an upward import or an import cycle fails here, naming the import. The contracts are
described in docs/architecture.md; `.venv/bin/lint-imports` prints the same report.
"""
from __future__ import annotations

from pathlib import Path

from importlinter import cli

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10: import-linter brings tomli
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "components" / "gpu_platform"
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def test_import_linter_contracts_are_kept(capsys):
    code = cli.lint_imports(config_filename=str(ROOT / "pyproject.toml"))
    report = capsys.readouterr().out
    assert code == 0, report


def test_every_part_of_the_package_sits_in_a_layer():
    layers = next(c for c in CONFIG["contracts"] if c["type"] == "layers")
    named = {part.strip() for layer in layers["layers"] for part in layer.split("|")}
    parts = {p.stem for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    parts |= {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert parts == named


def test_layers_run_from_the_planner_down_to_the_facts():
    layers = next(c for c in CONFIG["contracts"] if c["type"] == "layers")["layers"]
    assert layers == ["planner", "policy | platform", "resources", "render", "decisions", "spec", "facts"]
