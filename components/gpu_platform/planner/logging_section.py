"""The plan's `logging` section: a row per destination (each team namespace, and the platform's namespaces with
the nodes' kernel logs): its log group, retention, and a monthly cost estimate from the stated ingestion.

The volumes are decisions/log_volume.py's (the cost section's totals and the budget count the same figures).
Prices: CloudWatch Logs Standard in the catalog's region.
JSON shape in docs/logging.md; `VERSION` changes only when a field changes meaning.
"""
from __future__ import annotations

from typing import Any, Optional

from gpu_platform.facts import catalog
from gpu_platform.planner.sections import PlanContext, Section, register
from gpu_platform.planner.tables import md_table, text_table
from gpu_platform.decisions.log_volume import LogVolume, log_volumes, retention_days
from gpu_platform.render.logging import destinations
from gpu_platform.spec.models import PlatformSpec

NAME = "logging"
TITLE = "Logs: destination, retention and cost per namespace"
VERSION = 1


def build(ctx: PlanContext) -> Optional[dict[str, Any]]:
    if ctx.spec is None or not ctx.spec.logging.enabled:
        return None
    return from_spec(ctx.spec)


def _row(group: str, volume: LogVolume) -> dict[str, Any]:
    ingest = volume.ingested_gb_per_month * catalog.CLOUDWATCH_LOGS_INGEST.usd_per_hour
    storage = volume.stored_gb * catalog.CLOUDWATCH_LOGS_STORAGE.usd_per_hour
    return {"namespace": volume.key, "logGroup": group, "retentionDays": volume.retention_days,
            "ingestGbPerDay": volume.gb_per_day, "storedGb": round(volume.stored_gb, 2),
            "monthlyIngestUsd": round(ingest, 2), "monthlyStorageUsd": round(storage, 2),
            "monthlyUsd": round(ingest + storage, 2)}


def from_spec(spec: PlatformSpec) -> dict[str, Any]:
    groups = destinations(spec)
    rows = [_row(groups[v.key].group, v) for v in log_volumes(spec)]
    return {"version": VERSION, "chartVersion": spec.logging.chart_version, "retentionDays": retention_days(spec),
            "kmsKey": spec.logging.kms_key_arn or "created by the stack",
            "prices": {"ingestUsdPerGb": catalog.CLOUDWATCH_LOGS_INGEST.usd_per_hour,
                       "storageUsdPerGbMonth": catalog.CLOUDWATCH_LOGS_STORAGE.usd_per_hour,
                       "region": catalog.PRICE_REGION, "source": catalog.CLOUDWATCH_LOGS_PRICE_SOURCE},
            "destinations": rows, "unmatched": sorted(set(spec.logging.ingest_gb_per_day) - set(groups)),
            "monthlyUsd": round(sum(r["monthlyUsd"] for r in rows), 2)}


HEADERS = ["Namespace", "Log group", "Retention", "GB/day", "Stored GB", "$/month ingest", "$/month storage",
           "$/month"]


def _rows(section: dict[str, Any]) -> list[list[str]]:
    return [[r["namespace"], r["logGroup"], f"{r['retentionDays']} days", f"{r['ingestGbPerDay']:g}",
             f"{r['storedGb']:,.0f}", f"{r['monthlyIngestUsd']:,.2f}", f"{r['monthlyStorageUsd']:,.2f}",
             f"{r['monthlyUsd']:,.2f}"] for r in section["destinations"]]


def _note(section: dict[str, Any]) -> str:
    p = section["prices"]
    return (f"Fluent Bit chart {section['chartVersion']}; KMS key {section['kmsKey']}. Total ${section['monthlyUsd']:,.2f}"
            f"/month at ${p['ingestUsdPerGb']:g}/GB ingested and ${p['storageUsdPerGbMonth']:g}/GB-month stored "
            f"({p['source']}); ingestion from logging.ingestGbPerDay (default "
            f"{catalog.DEFAULT_LOG_INGEST_GB_PER_DAY:g} GB/day), storage at ingested size (an upper bound).")


def _unmatched(section: dict[str, Any]) -> list[str]:
    """Ingestion stated for a name that is no destination (a typo, or a team since removed): not priced."""
    keys = section.get("unmatched") or []
    return [f"logging.ingestGbPerDay names no destination, not priced: {', '.join(keys)}"] if keys else []


def text(section: dict[str, Any]) -> str:
    return "\n".join([*text_table(HEADERS, _rows(section), right=(3, 4, 5, 6, 7)), f"  {_note(section)}",
                      *(f"  {n}" for n in _unmatched(section))])


def markdown(section: dict[str, Any]) -> str:
    return "\n".join([*md_table(HEADERS, _rows(section), right=(3, 4, 5, 6, 7)), "", _note(section),
                      *_unmatched(section)])


SECTION = register(Section(NAME, TITLE, build, text, markdown, needs_platform=True))
