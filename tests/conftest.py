"""Fixtures every layer's tests share: the example stacks' specs, the offline plan of any platform
description, the real validators (promtool, amtool) and the checkout's wheel. Helpers are in tests/support/."""
from __future__ import annotations

import os
import shutil

import pytest

from tests.support.installed import build_wheel
from tests.support.stacks import cached_plan, spec_of


@pytest.fixture(scope="session")
def wheel(tmp_path_factory):
    """This checkout's wheel (`pip wheel --no-deps`), built once for the tests marked `installs`."""
    return build_wheel(tmp_path_factory.mktemp("wheel"))


@pytest.fixture(scope="session")
def dev():
    """The validated spec of stacks/Pulumi.dev.yaml."""
    return spec_of("dev")


@pytest.fixture(scope="session")
def prod():
    """The validated spec of stacks/Pulumi.prod.yaml."""
    return spec_of("prod")


@pytest.fixture
def plan_of():
    """Run the real program offline on `platform` and return the plan JSON (raises on exit 2)."""

    def run(platform: dict, stack: str = "test", region: str = "us-east-1", extra: list[str] | None = None) -> dict:
        return cached_plan(platform, stack, region, tuple(extra or ()))

    return run


def _tool(name: str, package: str) -> str:
    """A validator's path; skipped locally without it, a failure under CI (which installs it)."""
    path = shutil.which(name)
    if path:
        return path
    if os.environ.get("CI"):
        pytest.fail(f"{name} is required under CI: install the Debian package `{package}`")
    pytest.skip(f"{name} not installed (apt-get install {package}); under CI=true this fails instead")


@pytest.fixture
def promtool() -> str:
    return _tool("promtool", "prometheus")


@pytest.fixture
def amtool() -> str:
    return _tool("amtool", "prometheus-alertmanager")
