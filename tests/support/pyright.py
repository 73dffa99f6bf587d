"""pyright, the type checker behind VS Code's Python support, pinned and installed from npm into a cache
folder outside the checkout on first use. Without npm or the registry it is skipped locally and fails under
CI (CI=true), like the other validators."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

VERSION = "1.1.414"


def cache_dir() -> Path:
    """Where tools the suite installs live: $GPU_PLATFORM_TOOL_CACHE, else the user's cache folder."""
    base = os.environ.get("GPU_PLATFORM_TOOL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "gpu-platform-tools")
    return Path(base)


def _unavailable(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"pyright {VERSION} is required under CI: {why}")
    pytest.skip(f"pyright {VERSION} unavailable ({why}); under CI=true this fails instead")


def pyright() -> Path:
    """The pinned pyright's executable, installed with npm if it is not yet in the cache."""
    prefix = cache_dir() / f"pyright-{VERSION}"
    binary = prefix / "node_modules" / ".bin" / "pyright"
    if binary.exists():
        return binary
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        _unavailable("node and npm are not installed")
    done = subprocess.run([str(npm), "install", "--prefix", str(prefix), "--no-save", "--no-audit", "--no-fund",
                           f"pyright@{VERSION}"], capture_output=True, text=True, timeout=600)
    if done.returncode != 0 or not binary.exists():
        _unavailable(f"npm install pyright@{VERSION} failed: {done.stderr[-500:]}")
    return binary
