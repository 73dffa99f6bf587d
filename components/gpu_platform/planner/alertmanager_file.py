"""`--out` file `alertmanager/alertmanager.yaml`: the Alertmanager configuration of the stack.

Taken from the kube-prometheus-stack release's `alertmanager.config` values, as sent to Helm, so
`amtool check-config` and `amtool config routes test` check exactly what Alertmanager loads. With
`monitoring.prometheus.mode` existing or none the platform configures no Alertmanager; the file is then
built from the stack file, for the Alertmanager you run. It holds no secrets: receivers read those from
files (mounted from the receiver Secret, see docs/monitoring.md).
"""
from __future__ import annotations

from typing import Any, Optional

import yaml

from gpu_platform.planner.mocks import HELM_RELEASE
from gpu_platform.planner.sections import PlanContext

PATH = "alertmanager/alertmanager.yaml"
STACK_CHART = "kube-prometheus-stack"


def alertmanager_config(plan: dict[str, Any]) -> Optional[dict[str, Any]]:
    """The `alertmanager.config` values of the plan's kube-prometheus-stack release, or None."""
    for resource in plan["resources"]:
        inputs = resource["inputs"]
        if resource["type"] == HELM_RELEASE and inputs.get("chart") == STACK_CHART:
            return ((inputs.get("values") or {}).get("alertmanager") or {}).get("config")
    return None


def alertmanager_files(ctx: PlanContext) -> dict[str, str]:
    config = alertmanager_config(ctx.plan)
    source = "the kube-prometheus-stack release values (alertmanager.config)"
    if config is None and _alerting_for_own_alertmanager(ctx.spec):
        from gpu_platform.render.alert_routing import alertmanager_config as from_spec
        from gpu_platform.render.monitoring import MonitoringSettings

        config = from_spec(MonitoringSettings.of(ctx.spec))
        source = (f"the stack file (monitoring.prometheus.mode is {ctx.spec.monitoring.prometheus.mode}: load it into "
                  "your Alertmanager and mount the receiver secrets under /etc/alertmanager/secrets/)")
    if config is None:
        return {}
    header = f"# Alertmanager configuration from {source}.\n# Check: amtool check-config alertmanager.yaml\n"
    return {PATH: header + yaml.safe_dump(config, sort_keys=False, width=1000, allow_unicode=True)}


def _alerting_for_own_alertmanager(spec: Any) -> bool:
    monitoring = getattr(spec, "monitoring", None)
    return bool(monitoring and monitoring.enabled and monitoring.alerting is not None
                and monitoring.prometheus.mode != "install")
