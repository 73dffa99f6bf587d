"""The monthly usage report: Prometheus query responses -> one row per team and pool -> CSV.

Standard library only, on purpose: the report job runs this very file (shipped in a ConfigMap beside the
queries it is given) with `python3 usage_report.py`, and `gpu-platform usage-report --from FILE` runs the
same functions on a recorded response. The queries are built from the recorded series' names by
render/usage_report_job.py; this file only reads what comes back.

A response file is a JSON object: query key -> Prometheus' HTTP API answer to an instant query
(`{"status": "success", "data": {"resultType": "vector", "result": [{"metric": {...}, "value": [t, "v"]}]}}`).
"""
from __future__ import annotations

import csv
import io
import json
import os
import sys
import urllib.parse
import urllib.request
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Optional
from collections.abc import Mapping, Sequence

ALLOCATED_GPU_HOURS, ALLOCATED_USD = "allocatedGpuHours", "allocatedUsd"
USED_GPU_HOURS, USED_USD, TEAMS = "usedGpuHours", "usedUsd", "teams"
KEYS = (ALLOCATED_GPU_HOURS, ALLOCATED_USD, USED_GPU_HOURS, USED_USD, TEAMS)
COLUMNS = ("month", "team", "namespace", "pool", "allocated_gpu_hours", "used_gpu_hours", "idle_share",
           "allocated_usd", "used_usd", "idle_usd")


class ReportError(ValueError):
    """A response the report cannot read: names the query key and what is wrong."""


@dataclass(frozen=True)
class UsageRow:
    month: str  # YYYY-MM
    team: str  # the namespace's team, or the namespace itself when no team owns it
    namespace: str
    pool: str
    allocated_gpu_hours: float
    used_gpu_hours: float
    allocated_usd: float
    used_usd: float

    @property
    def idle_share(self) -> Optional[float]:
        """The share of allocated GPU time left idle (None when nothing was allocated)."""
        if self.allocated_gpu_hours <= 0:
            return None
        return max(0.0, 1 - self.used_gpu_hours / self.allocated_gpu_hours)

    @property
    def idle_usd(self) -> float:
        return max(0.0, self.allocated_usd - self.used_usd)


def vector(response: Any, key: str) -> list[tuple[dict[str, str], float]]:
    """(labels, value) of each sample of an instant-query answer."""
    if not isinstance(response, Mapping) or response.get("status") != "success":
        raise ReportError(f"{key}: not a successful Prometheus answer (status {_get(response, 'status')!r})")
    data = response.get("data")
    if not isinstance(data, Mapping) or data.get("resultType") != "vector" or not isinstance(data.get("result"), list):
        raise ReportError(f"{key}: expected data.resultType 'vector' with a result list")
    out = []
    for i, sample in enumerate(data["result"]):
        try:
            labels = {str(k): str(v) for k, v in sample["metric"].items()}
            out.append((labels, float(sample["value"][1])))
        except (KeyError, IndexError, TypeError, ValueError, AttributeError):
            raise ReportError(f"{key}: result[{i}] is not a sample with metric and value") from None
    return out


def _get(obj: Any, key: str) -> Any:
    return obj.get(key) if isinstance(obj, Mapping) else None


def rows(responses: Mapping[str, Any], month: str) -> list[UsageRow]:
    """One row per namespace and pool that held or used GPUs, sorted by team, namespace and pool."""
    missing = [k for k in KEYS if k not in responses]
    if missing:
        raise ReportError(f"missing query results: {', '.join(missing)} (expected keys: {', '.join(KEYS)})")
    teams = {labels.get("namespace", ""): labels.get("team", "") for labels, _ in vector(responses[TEAMS], TEAMS)}
    figures: dict[tuple[str, str], dict[str, float]] = {}
    for key in KEYS[:4]:
        for labels, value in vector(responses[key], key):
            cell = figures.setdefault((labels.get("namespace", ""), labels.get("pool", "")), {})
            cell[key] = cell.get(key, 0.0) + value
    out = [UsageRow(month, teams.get(ns) or ns, ns, pool, f.get(ALLOCATED_GPU_HOURS, 0.0), f.get(USED_GPU_HOURS, 0.0),
                    f.get(ALLOCATED_USD, 0.0), f.get(USED_USD, 0.0)) for (ns, pool), f in figures.items()]
    return sorted(out, key=lambda r: (r.team, r.namespace, r.pool))


def to_csv(report: Sequence[UsageRow]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(COLUMNS)
    for r in report:
        idle = "" if r.idle_share is None else f"{r.idle_share:.4f}"
        writer.writerow([r.month, r.team, r.namespace, r.pool, f"{r.allocated_gpu_hours:.3f}",
                         f"{r.used_gpu_hours:.3f}", idle, f"{r.allocated_usd:.2f}", f"{r.used_usd:.2f}",
                         f"{r.idle_usd:.2f}"])
    return buf.getvalue()


def team_totals(report: Sequence[UsageRow]) -> list[UsageRow]:
    """The rows added up per team (pool and namespace `*`)."""
    sums: dict[str, list[float]] = {}
    for r in report:
        acc = sums.setdefault(r.team, [0.0, 0.0, 0.0, 0.0])
        for i, v in enumerate((r.allocated_gpu_hours, r.used_gpu_hours, r.allocated_usd, r.used_usd)):
            acc[i] += v
    month = report[0].month if report else ""
    return [UsageRow(month, team, "*", "*", *v) for team, v in sorted(sums.items())]


# --- job history: one row per GPU Job that finished in the month ---

JOB_GPUS, JOB_NODES, JOB_STARTS, JOB_COMPLETIONS = "jobGpus", "jobNodes", "jobStarts", "jobCompletions"
JOB_LAST_ACTIVE, JOB_SUCCEEDED, JOB_FAILED, JOB_QUEUES = "jobLastActive", "jobSucceeded", "jobFailed", "jobQueues"
JOB_KEYS = (JOB_GPUS, JOB_NODES, JOB_STARTS, JOB_COMPLETIONS, JOB_LAST_ACTIVE, JOB_SUCCEEDED, JOB_FAILED, JOB_QUEUES)
QUEUE_LABEL = "label_kueue_x_k8s_io_queue_name"  # kube-state-metrics' name for the Job's kueue.x-k8s.io/queue-name
JOB_COLUMNS = ("month", "team", "namespace", "job", "queue", "gpus", "gpu_resources", "kinds", "pools", "nodes",
               "start", "end", "outcome")


@dataclass(frozen=True)
class JobRow:
    month: str
    team: str
    namespace: str
    job: str
    queue: str
    gpus: float  # GPU units held at once at most, every resource added (a MIG slice counts one)
    gpu_resources: str  # kube-state-metrics resource names: `nvidia_com_gpu=8`, `nvidia_com_mig_1g_10gb=2;...`
    kinds: str  # whole, mig, time-sliced or dra: how the pool shares its GPUs
    pools: str
    nodes: str
    start: str  # ISO 8601, UTC
    end: str
    outcome: str  # succeeded or failed


def _by_job(responses: Mapping[str, Any], key: str, name: str = "job_name") -> dict[tuple[str, str], list[tuple[dict[str, str], float]]]:
    out: dict[tuple[str, str], list[tuple[dict[str, str], float]]] = {}
    for labels, value in vector(responses[key], key):
        out.setdefault((labels.get("namespace", ""), labels.get(name, "")), []).append((labels, value))
    return out


def _first(found: dict[tuple[str, str], list[tuple[dict[str, str], float]]], job: tuple[str, str]) -> Optional[float]:
    values = [v for _, v in found.get(job, [])]
    return max(values) if values else None


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _joined(samples: list[tuple[dict[str, str], float]], label: str) -> str:
    return ";".join(sorted({s[label] for s, _ in samples if s.get(label)}))


def job_rows(responses: Mapping[str, Any], month: str, start: float, end: float) -> list[JobRow]:
    """Each Job that held GPUs and finished (succeeded or failed) within [start, end), sorted by team, end."""
    missing = [k for k in (*JOB_KEYS, TEAMS) if k not in responses]
    if missing:
        raise ReportError(f"missing query results: {', '.join(missing)}")
    teams = {labels.get("namespace", ""): labels.get("team", "") for labels, _ in vector(responses[TEAMS], TEAMS)}
    gpus = _by_job(responses, JOB_GPUS, "owner_name")
    nodes = _by_job(responses, JOB_NODES, "owner_name")
    found = {k: _by_job(responses, k) for k in (JOB_STARTS, JOB_COMPLETIONS, JOB_LAST_ACTIVE, JOB_SUCCEEDED,
                                                  JOB_FAILED, JOB_QUEUES)}
    out = []
    for job, held in gpus.items():
        outcome = ("succeeded" if (_first(found[JOB_SUCCEEDED], job) or 0) > 0 else
                   "failed" if (_first(found[JOB_FAILED], job) or 0) > 0 else None)
        finished = _first(found[JOB_COMPLETIONS], job) or _first(found[JOB_LAST_ACTIVE], job)
        began = _first(found[JOB_STARTS], job)
        if outcome is None or finished is None or not start <= finished < end:
            continue  # still running, or finished in another month
        out.append(JobRow(
            month, teams.get(job[0]) or job[0], job[0], job[1], _joined(found[JOB_QUEUES].get(job, []), QUEUE_LABEL),
            sum(v for _, v in held), ";".join(sorted(f"{s.get('resource', '')}={v:g}" for s, v in held)),
            _joined(held, "kind"), _joined(held, "pool"), _joined(nodes.get(job, []), "node"),
            "" if began is None else _iso(began), _iso(finished), outcome))
    return sorted(out, key=lambda r: (r.team, r.end, r.namespace, r.job))


def jobs_csv(report: Sequence[JobRow]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(JOB_COLUMNS)
    for r in report:
        writer.writerow([r.month, r.team, r.namespace, r.job, r.queue, f"{r.gpus:g}", r.gpu_resources, r.kinds,
                         r.pools, r.nodes, r.start, r.end, r.outcome])
    return buf.getvalue()


# --- the report job ---

def previous_month(now: datetime) -> tuple[str, float, int]:
    """The calendar month before `now`'s: its YYYY-MM, its end (seconds since 1970) and its hours."""
    end = datetime(now.year, now.month, 1, tzinfo=timezone.utc)
    start = datetime(end.year - (end.month == 1), end.month - 1 or 12, 1, tzinfo=timezone.utc)
    return f"{start:%Y-%m}", end.timestamp(), int((end - start).total_seconds() // 3600)


def window_queries(templates: Mapping[str, str], hours: int) -> dict[str, str]:
    """The queries over a window of `hours`, written `{minutes}` in the templates: one minute short of the
    hours, so a subquery whose steps divide the hour reads hours x steps-per-hour samples whether the range
    is closed at its start (Prometheus 2) or open (Prometheus 3)."""
    return {key: t.replace("{minutes}", str(hours * 60 - 1)) for key, t in templates.items()}


def query(prometheus_url: str, promql: str, at: float, timeout: float = 300) -> Any:
    """One instant query at `at` (seconds since 1970) against Prometheus' HTTP API."""
    url = f"{prometheus_url.rstrip('/')}/api/v1/query?" + urllib.parse.urlencode({"query": promql, "time": at})
    with urllib.request.urlopen(url, timeout=timeout) as answer:  # noqa: S310 the cluster's Prometheus
        return json.load(answer)


def run_job(env: Mapping[str, str], now: Optional[datetime] = None) -> int:
    """Query last month's figures at its end, keep the answers beside the CSV in OUT_DIR."""
    with open(env["QUERIES_FILE"], encoding="utf-8") as f:
        templates = json.load(f)
    month, at, hours = previous_month(now or datetime.now(timezone.utc))
    responses = {key: query(env["PROMETHEUS_URL"], promql, at)
                 for key, promql in window_queries(templates, hours).items()}
    out = env["OUT_DIR"]
    with open(os.path.join(out, f"gpu-usage-{month}.json"), "w", encoding="utf-8") as f:
        json.dump(responses, f)
    with open(os.path.join(out, f"gpu-usage-{month}.csv"), "w", encoding="utf-8") as f:
        f.write(to_csv(rows(responses, month)))
    if all(k in responses for k in JOB_KEYS):  # the month's finished GPU Jobs, one row each
        with open(os.path.join(out, f"gpu-jobs-{month}.csv"), "w", encoding="utf-8") as f:
            f.write(jobs_csv(job_rows(responses, month, at - hours * 3600, at)))
    print(f"gpu-usage-{month}: {len(responses)} queries over {hours}h")
    return 0


if __name__ == "__main__":
    sys.exit(run_job(os.environ))
