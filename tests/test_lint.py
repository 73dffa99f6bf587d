"""The linter holds: ruff, configured in pyproject.toml ([tool.ruff]), finds nothing in the package, the tests,
the benchmark and the three programs. docs/architecture.md, "The checks", says what it checks."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LINTED = ("components", "tests", "benchmarks", "provider", "policies", "__main__.py")


def test_ruff_finds_nothing() -> None:
    command = [sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise", *LINTED]
    result = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=300, env=dict(os.environ))
    assert result.returncode == 0, f"ruff check {' '.join(LINTED)}:\n{result.stdout}{result.stderr}"
