"""`gpu-platform usage-report --from FILE`: the monthly GPU usage report from a recorded Prometheus response.

FILE is what the report job keeps beside each CSV (`gpu-usage-YYYY-MM.json`: query key -> Prometheus' answer),
so a month can be re-read, or checked, without the cluster. Prints the per-team totals and the rows per
namespace and pool as text, or the job's CSV with `--format csv`. Exit 2 when the file is not such a response.
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path
from typing import Any
from collections.abc import Sequence

from gpu_platform.facts import input_files
from gpu_platform.planner.errors import PlannerError
from gpu_platform.render.usage_report import ReportError, UsageRow, rows, team_totals, to_csv

MONTH_IN_NAME = re.compile(r"(\d{4}-\d{2})")


def add_command(commands: Any) -> None:
    p = commands.add_parser(
        "usage-report", help="print the monthly GPU usage report from a recorded Prometheus response",
        description="Read a response the usage report job recorded (gpu-usage-YYYY-MM.json) and print the report.")
    p.add_argument("--from", dest="source", type=Path, required=True, metavar="FILE")
    p.add_argument("--month", default=None, help="YYYY-MM (default: the one in FILE's name)")
    p.add_argument("--format", choices=("text", "csv"), default="text")
    p.set_defaults(run=run_usage_report)


def run_usage_report(args: argparse.Namespace) -> int:
    try:
        responses = input_files.read_json(args.source, str(args.source), input_files.MAX_DOCUMENT_BYTES)
    except input_files.InputError as exc:
        raise PlannerError(f"{exc} (cannot read a usage response)") from None
    found = MONTH_IN_NAME.search(args.source.name)
    month = args.month or (found.group(1) if found else "")
    if not isinstance(responses, dict):
        raise PlannerError(f"{args.source}: expected a JSON object of query key -> Prometheus answer")
    try:
        report = rows(responses, month)
    except ReportError as exc:
        raise PlannerError(f"{args.source}: {exc}") from None
    print(to_csv(report) if args.format == "csv" else text(report), end="")
    return 0


def text(report: Sequence[UsageRow]) -> str:
    head = ("team", "namespace", "pool", "GPU-h allocated", "GPU-h used", "idle", "allocated $", "used $", "idle $")
    lines = [f"GPU usage {report[0].month if report else ''}".rstrip(), ""]
    table = [head] + [_cells(r) for r in [*team_totals(report), *report]]
    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    for row in table:
        lines.append("  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))))
    return "\n".join(lines) + "\n"


def _cells(r: UsageRow) -> tuple[str, ...]:
    idle = "-" if r.idle_share is None else f"{r.idle_share:.0%}"
    return (r.team, r.namespace, r.pool, f"{r.allocated_gpu_hours:,.1f}", f"{r.used_gpu_hours:,.1f}", idle,
            f"{r.allocated_usd:,.2f}", f"{r.used_usd:,.2f}", f"{r.idle_usd:,.2f}")
