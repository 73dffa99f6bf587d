"""gpu-platform as a user gets it: this checkout's wheel, pip-installed into a fresh virtualenv outside it.

The tests marked `installs` use these helpers. They need pip to reach PyPI for the dependencies: without
it they are skipped locally and fail under CI (CI=true), like the promtool tests.
"""
from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
OFFLINE = ("NewConnectionError", "Temporary failure in name resolution", "Could not fetch URL",
           "No matching distribution found", "Network is unreachable")


def build_wheel(out: Path) -> Path:
    """`pip wheel --no-deps` of the checkout into `out`; the wheel's path. The build writes into the checkout
    (build/, the egg-info), so builds by parallel test workers take turns."""
    lock = ROOT / "build" / ".wheel.lock"
    lock.parent.mkdir(exist_ok=True)
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(out), str(ROOT)],
                              capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    (path,) = out.glob("gpu_platform-*.whl")
    return path


def fresh_venv(where: Path, *pip_args: str) -> Path:
    """A virtualenv at `where` (outside the checkout) with `pip install *pip_args`; its bin folder."""
    assert not where.resolve().is_relative_to(ROOT), "the virtualenv must live outside the checkout"
    subprocess.run([sys.executable, "-m", "venv", str(where)], check=True, capture_output=True, timeout=300)
    bin_dir = where / "bin"
    # --no-compile: the SDKs hold thousands of modules; the few a run imports compile on first use.
    done = subprocess.run([str(bin_dir / "python"), "-m", "pip", "install", "--quiet", "--no-compile", *pip_args],
                          capture_output=True, text=True, timeout=1200, env=clean_env(bin_dir))
    if done.returncode != 0:
        if any(word in done.stderr for word in OFFLINE) and not os.environ.get("CI"):
            pytest.skip(f"pip cannot reach the package index (under CI=true this fails): {done.stderr[-300:]}")
        pytest.fail(f"pip install {' '.join(pip_args)} failed:\n{done.stderr[-3000:]}")
    return bin_dir


def clean_env(bin_dir: Path) -> dict[str, str]:
    """The environment of a shell with only this virtualenv active: nothing points back at the checkout."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")}
    env["PATH"] = os.pathsep.join([str(bin_dir), *(p for p in env.get("PATH", "").split(os.pathsep)
                                                   if not p.startswith(str(ROOT)))])
    env["VIRTUAL_ENV"] = str(bin_dir.parent)
    return env


def run(bin_dir: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`args` (the first resolved in `bin_dir`) in `cwd` with only that virtualenv active."""
    return subprocess.run([str(bin_dir / args[0]), *args[1:]], cwd=cwd, capture_output=True, text=True, timeout=600,
                          env=clean_env(bin_dir))
