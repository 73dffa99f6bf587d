"""The plan's `usage` section: what the platform records about GPU use and where, each pool's unit prices the
records multiply by, and the monthly report's schedule and destination (docs/usage.md).

Prices are the cost section's (decisions/usage.py over decisions/cost.py), so a month of a team's quota in use
records what the cost section's team row says. JSON shape in docs/usage.md; `VERSION` changes only when a field
changes meaning.
"""
from __future__ import annotations

from typing import Any, Optional

from gpu_platform.decisions.usage import report_plan, unplaced_mig_slices, usage_units
from gpu_platform.facts import catalog, names
from gpu_platform.planner.sections import PlanContext, Section, register
from gpu_platform.planner.tables import md_table, text_table
from gpu_platform.render import usage_report
from gpu_platform.render import usage_rules as rec
from gpu_platform.render.monitoring import prometheus_mode
from gpu_platform.spec.models import PlatformSpec

NAME = "usage"
TITLE = "GPU usage: what is recorded, at which prices, and the monthly report"
VERSION = 1
RECORDS = {
    rec.ALLOCATED_GPUS: "GPUs held by running pods, per namespace, pool, resource and kind (GPU-equivalents)",
    rec.ALLOCATED_USD: "the same in dollars per hour at the pool's unit price",
    rec.USED_GPUS: "GPUs busy (DCGM graphics-engine activity), per namespace and pool (GPU-equivalents)",
    rec.USED_USD: "the same in dollars per hour at the pool's GPU-hour price",
}


def build(ctx: PlanContext) -> Optional[dict[str, Any]]:
    if ctx.spec is None:
        return None
    return from_spec(ctx.spec, ctx.as_of)


def from_spec(spec: PlatformSpec, as_of: Any = None) -> Optional[dict[str, Any]]:
    mode = prometheus_mode(spec.monitoring)
    units = usage_units(spec, as_of)
    if mode == "none" or not units:
        return None
    rows = [{"pool": u.pool, "resource": u.resource, "kind": u.kind, "gpuShare": round(u.gpu_share, 6),
             "usdPerUnitHour": None if u.usd_per_hour is None else round(u.usd_per_hour, 6),
             "usdPerUnitMonth": None if u.usd_per_hour is None else round(u.usd_per_hour * catalog.HOURS_PER_MONTH, 2)}
            for u in units]
    plan = report_plan(spec.monitoring, spec.cluster.name)
    report: dict[str, Any] = {"enabled": False}
    if plan is not None:
        bucket = plan.bucket_name or f"{plan.bucket_prefix}<suffix S3 adds>"
        report = {"enabled": True, "schedule": plan.schedule, "timeZone": "Etc/UTC",
                  "destination": f"s3://{bucket}/{plan.prefix}/", "retentionDays": plan.retention_days,
                  "prometheusUrl": plan.prometheus_url, "cronJob": f"{plan.namespace}/{names.USAGE_REPORT_NAME}",
                  "files": "gpu-usage-YYYY-MM.csv and gpu-usage-YYYY-MM.json (the Prometheus answers)",
                  # One row per GPU Job finished in the month, beside the usage CSV and kept as long.
                  "jobHistory": {"file": "gpu-jobs-YYYY-MM.csv", "destination": f"s3://{bucket}/{plan.prefix}/",
                                 "retentionDays": plan.retention_days, "columns": list(usage_report.JOB_COLUMNS)}}
    return {"version": VERSION, "rules": f"{spec.monitoring.prometheus.namespace}/{names.GPU_RULES_NAME}",
            "group": rec.USAGE_GROUP, "retention": spec.monitoring.prometheus.retention,
            "records": [{"series": k, "meaning": v} for k, v in RECORDS.items()], "units": rows, "report": report,
            **({"warnings": warnings} if (warnings := unplaced_warnings(spec)) else {})}


def unplaced_warnings(spec: PlatformSpec) -> list[str]:
    """MIG capacity at max size that no team's quota can reach."""
    out = []
    for u in unplaced_mig_slices(spec):
        cost = "" if u.usd_per_month is None else f", ${u.usd_per_month:,.0f}/month if the pools run at max size"
        out.append(f"{u.count} x {u.resource.removeprefix('nvidia.com/mig-')} MIG slices at max size are in no team's "
                   f"quota (pools offer {u.capacity_at_max}, teams[].quota.migSlices add up to {u.quota_total}"
                   f"{cost}): no team can hold them; raise a quota, or change the pool's layout or maxSize")
    return out


HEADERS = ["Pool", "Resource", "Kind", "GPUs per unit", "$/unit-hour", "$/unit-month"]


def _rows(section: dict[str, Any]) -> list[list[str]]:
    def usd(v: Optional[float], fmt: str) -> str:
        return "unknown" if v is None else format(v, fmt)
    return [[u["pool"], u["resource"], u["kind"], f"{u['gpuShare']:.4g}", usd(u["usdPerUnitHour"], ",.4f"),
             usd(u["usdPerUnitMonth"], ",.2f")] for u in section["units"]]


def _notes(section: dict[str, Any]) -> list[str]:
    lines = [f"Recorded by the rule group {section['group']} in PrometheusRule {section['rules']}, kept "
             f"{section['retention']}:", *(f"- {r['series']}: {r['meaning']}" for r in section["records"])]
    r = section["report"]
    if r["enabled"]:
        lines.append(f"Monthly report: CronJob {r['cronJob']} at `{r['schedule']}` ({r['timeZone']}) writes last "
                     f"month's CSV to {r['destination']} (kept {r['retentionDays']} days), from {r['prometheusUrl']}.")
        jobs = r.get("jobHistory")
        if jobs:
            lines.append(f"Job history: {jobs['file']} beside it, one row per GPU Job finished in the month "
                         f"({', '.join(jobs['columns'][1:])}), kept {jobs['retentionDays']} days.")
    else:
        lines.append("Monthly report: off (monitoring.usageReport.enabled); `gpu-platform usage-report` reads a "
                     "recorded answer.")
    return lines


def text(section: dict[str, Any]) -> str:
    warnings = ["  Warnings:", *(f"    - {w}" for w in section["warnings"])] if section.get("warnings") else []
    return "\n".join([*text_table(HEADERS, _rows(section), right=(3, 4, 5)), *(f"  {n}" for n in _notes(section)),
                      *warnings])


def markdown(section: dict[str, Any]) -> str:
    return "\n".join([*md_table(HEADERS, _rows(section), right=(3, 4, 5)), "", *_notes(section),
                      *(f"⚠️ {w}" for w in section.get("warnings") or [])])


SECTION = register(Section(NAME, TITLE, build, text, markdown, needs_platform=True))
