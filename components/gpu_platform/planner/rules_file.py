"""`--out` file `prometheus/gpu-rules.yaml`: the plan's Prometheus rule groups as a plain rules file.

Taken from the PrometheusRule objects in the plan (their `spec.groups`, as sent to the cluster), so
`promtool check rules` and `promtool test rules` check exactly what Prometheus will load. A stack with
monitoring on but no Prometheus operator (`monitoring.prometheus.mode: none`) has no PrometheusRule; it
still gets the file, built from its spec the way the component would, for a Prometheus run elsewhere.
"""
from __future__ import annotations

from typing import Any

import yaml

from gpu_platform.planner.sections import PlanContext

PATH = "prometheus/gpu-rules.yaml"
PROMETHEUS_RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
# Prometheus' own order for a rule (the plan's inputs come back with sorted keys).
RULE_KEYS = ("record", "alert", "expr", "for", "keep_firing_for", "labels", "annotations")


def rules_files(ctx: PlanContext) -> dict[str, str]:
    """{PATH: rules file} or {} when the plan has no rules to write."""
    found = [r for r in ctx.plan["resources"] if r["type"] == PROMETHEUS_RULE]
    if found:
        groups = [g for r in found for g in (r["inputs"].get("spec") or {}).get("groups") or []]
        source = "PrometheusRule " + ", ".join(_object_name(r) for r in found)
    elif _monitoring_without_operator(ctx.spec):
        from gpu_platform.render.monitoring import MonitoringSettings, gpu_rule_groups

        groups = gpu_rule_groups(MonitoringSettings.of(ctx.spec))
        source = "the stack file (monitoring.prometheus.mode is none: load this file into your Prometheus)"
    else:
        return {}
    header = f"# Prometheus rule groups from {source}.\n# Check: promtool check rules {PATH.rsplit('/', 1)[-1]}\n"
    return {PATH: header + dump(groups)}


def dump(groups: list[dict[str, Any]]) -> str:
    """A `groups:` rules file, each group and rule in Prometheus' documented key order."""
    ordered = [{"name": g["name"], **{k: v for k, v in g.items() if k not in ("name", "rules")},
                "rules": [_rule(r) for r in g.get("rules") or []]} for g in groups]
    return yaml.safe_dump({"groups": ordered}, sort_keys=False, width=120, allow_unicode=True)


def _rule(rule: dict[str, Any]) -> dict[str, Any]:
    known = {k: rule[k] for k in RULE_KEYS if k in rule}
    return {**known, **{k: v for k, v in sorted(rule.items()) if k not in known}}


def _object_name(resource: dict[str, Any]) -> str:
    meta = resource["inputs"].get("metadata") or {}
    return f"{meta.get('namespace') or 'default'}/{meta.get('name') or resource['name']}"


def _monitoring_without_operator(spec: Any) -> bool:
    monitoring = getattr(spec, "monitoring", None)
    return bool(monitoring and monitoring.enabled and monitoring.prometheus.mode == "none")
