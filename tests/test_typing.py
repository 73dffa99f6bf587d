"""The type checker holds: mypy, configured in pyproject.toml, finds no error in the checked modules, and the
strict layers (facts, spec, decisions, render, resources, platform) are checked with every flag of
`mypy --strict` and no other layer is. docs/architecture.md, "The checks", says which modules are strict
and why."""
from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from mypy.config_parser import parse_config_file
from mypy.main import define_options
from mypy.options import PER_MODULE_OPTIONS, Options

ROOT = Path(__file__).resolve().parent.parent

# The packages and modules mypy checks here (their own errors; what they import is checked where it is listed).
CHECKED_MODULES = (
    "gpu_platform.facts",
    "gpu_platform.spec",
    "gpu_platform.decisions",
    "gpu_platform.render",
    "gpu_platform.resources",
    "gpu_platform.platform",
    "gpu_platform.policy",
    "gpu_platform.planner",
)
# The Pulumi program, the policy pack's and the component provider's entry points, and the benchmark.
PROGRAMS = ("__main__.py", "policies/__main__.py", "provider/__main__.py", "benchmarks/plan_bench.py")
STRICT_LAYERS = ("gpu_platform.facts", "gpu_platform.spec", "gpu_platform.decisions", "gpu_platform.render",
                 "gpu_platform.resources", "gpu_platform.platform")


def _mypy(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), *args]
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=540, env=dict(os.environ))


def _options_for(module: str) -> Options:
    """The options mypy checks `module` with, read from pyproject.toml as mypy reads them."""
    options = Options()
    _, _, strict_assignments = define_options()

    def set_strict_flags() -> None:  # what `strict = true` does, wherever it is written
        for dest, value in strict_assignments:
            setattr(options, dest, value)

    stderr = io.StringIO()
    parse_config_file(options, set_strict_flags, str(ROOT / "pyproject.toml"), io.StringIO(), stderr)
    assert not stderr.getvalue(), stderr.getvalue()
    return options.clone_for_module(module)


def _strict_flags() -> list[tuple[str, bool]]:
    """The per-module flags `mypy --strict` sets, and their values, as the installed mypy defines them."""
    _, _, assignments = define_options()
    return [(dest, value) for dest, value in assignments if dest in PER_MODULE_OPTIONS]


def test_checked_modules_have_no_type_errors() -> None:
    packages = [arg for module in CHECKED_MODULES for arg in ("-p", module)]
    result = _mypy(*packages)
    assert result.returncode == 0, f"mypy {' '.join(packages)}:\n{result.stdout}{result.stderr}"


def test_programs_beside_the_package_have_no_type_errors() -> None:
    for program in PROGRAMS:  # one at a time: each is a module named __main__
        result = _mypy(program)
        assert result.returncode == 0, f"mypy {program}:\n{result.stdout}{result.stderr}"


def test_image_decisions_refuse_kueues_view_of_a_pool(tmp_path: Path) -> None:
    # Kueue's view of a pool (QueuePoolSpec) has no image: asking what its image decides must not type-check
    program = tmp_path / "asks_kueue_pool.py"
    program.write_text("from gpu_platform.decisions.sharing import operator_mig\n"
                       "from gpu_platform.spec.models import QueuePoolSpec\n\n\n"
                       "def mig(pool: QueuePoolSpec) -> bool:\n"
                       "    return operator_mig(pool)\n")
    result = _mypy(str(program))
    assert 'incompatible type "QueuePoolSpec"' in result.stdout, result.stdout + result.stderr


def test_strict_layers_use_every_strict_flag() -> None:
    for layer in STRICT_LAYERS:
        options = _options_for(f"{layer}.any_module")
        assert options.follow_imports == "normal", f"{layer}'s errors are silenced where it is imported"
        missing = [(dest, value) for dest, value in _strict_flags() if getattr(options, dest) != value]
        assert not missing, f"{layer} is not checked with {missing} (pyproject.toml [[tool.mypy.overrides]])"


def test_strictness_stays_in_its_layers() -> None:
    # `strict = true` in an override would turn it on for every module (mypy reads it as a global flag)
    for module in ("gpu_platform.planner.plan", "gpu_platform.planner.cli", "gpu_platform.policy.common"):
        options = _options_for(module)
        assert not options.disallow_untyped_defs, f"{module} is checked strictly: pyproject.toml's overrides leak"
