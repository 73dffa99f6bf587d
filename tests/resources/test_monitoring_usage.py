"""GpuMonitoring used on its own records GPU usage from the units, prices and teams its arguments give."""
from __future__ import annotations

from gpu_platform.render.monitoring import gpu_rule_groups
from gpu_platform.render.usage_rules import UNIT_PRICE, USAGE_GROUP
from gpu_platform.resources.monitoring import monitoring_settings


def test_usage_units_given_as_arguments_are_recorded():
    settings = monitoring_settings("m", {
        "prometheus": {"mode": "existing"},
        "usage_units": [{"pool": "a10g", "resource": "nvidia.com/gpu", "kind": "whole", "gpu_share": 1.0,
                         "usd_per_hour": 1.006, "gpu_model": "NVIDIA A10G"}],
        "pool_gpu_prices": {"a10g": 1.006}, "team_namespaces": {"research": "research"}})
    [usage] = [g for g in gpu_rule_groups(settings) if g["name"] == USAGE_GROUP]
    prices = [r for r in usage["rules"] if r.get("record") == UNIT_PRICE]
    assert prices == [{"record": UNIT_PRICE, "expr": "vector(1.006)",
                       "labels": {"pool": "a10g", "resource": "nvidia_com_gpu", "kind": "whole"}}]


def test_without_usage_units_no_usage_is_recorded():
    settings = monitoring_settings("m", {"prometheus": {"mode": "existing"}})
    assert USAGE_GROUP not in [g["name"] for g in gpu_rule_groups(settings)]
