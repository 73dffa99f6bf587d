"""How much the log pipeline sends to CloudWatch Logs and keeps there: per destination (each team, and the
platform's namespaces with the nodes' kernel logs), from the stack file's stated ingestion and retention.

Pure, so the plan's logging rows, the cost section's totals and the budget all read the same figures.
Ingestion per day is `logging.ingestGbPerDay[<team or platform>]`, else catalog.DEFAULT_LOG_INGEST_GB_PER_DAY;
storage is taken at steady state (every day of the retention kept) at the ingested size: an upper bound, since
CloudWatch Logs bills stored data after compression (docs/logging.md).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from gpu_platform.facts import catalog, names

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec

DAYS_PER_MONTH = catalog.HOURS_PER_MONTH / 24


@dataclass(frozen=True)
class LogVolume:
    key: str  # a team's name, or names.PLATFORM_LOG_GROUP
    gb_per_day: float
    retention_days: int

    @property
    def ingested_gb_per_month(self) -> float:
        return self.gb_per_day * DAYS_PER_MONTH

    @property
    def stored_gb(self) -> float:
        return self.gb_per_day * self.retention_days


def retention_days(spec: "PlatformSpec") -> int:
    given = spec.logging.retention_days
    return given if given is not None else catalog.DEFAULT_LOG_RETENTION_DAYS[spec.environment]


def destination_keys(spec: "PlatformSpec") -> list[str]:
    """Each team's key, then the platform's: one log group each."""
    return [*(t.name for t in spec.teams), names.PLATFORM_LOG_GROUP]


def log_volumes(spec: "PlatformSpec") -> list[LogVolume]:
    """Per destination, in destination order; none when the stack runs no log pipeline."""
    if not spec.logging.enabled:
        return []
    days, given = retention_days(spec), spec.logging.ingest_gb_per_day
    return [LogVolume(key, given.get(key, catalog.DEFAULT_LOG_INGEST_GB_PER_DAY), days)
            for key in destination_keys(spec)]
