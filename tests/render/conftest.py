"""Fixtures of the rendering tests: the alert thresholds the rule tests run under."""
from __future__ import annotations

import pytest

from gpu_platform.spec.models import AlertThresholds
from tests.render.promtool_rules import THRESHOLDS


@pytest.fixture(params=list(THRESHOLDS), ids=list(THRESHOLDS))
def t(request) -> AlertThresholds:
    return THRESHOLDS[request.param]
