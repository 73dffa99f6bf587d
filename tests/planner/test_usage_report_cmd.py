"""`gpu-platform usage-report --from FILE`: the report printed from a response the report job keeps beside its CSV
(Prometheus' HTTP API answers by query key), and bad files refused with exit 2."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from gpu_platform.planner.cli import main

RESPONSE = Path(__file__).parent / "fixtures" / "usage" / "gpu-usage-2026-10.json"


def test_the_csv_has_a_row_per_namespace_and_pool_with_idle_shares_and_dollars(capsys):
    assert main(["usage-report", "--from", str(RESPONSE), "--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    by = {(r["namespace"], r["pool"]): r for r in rows}
    assert [(r["team"], r["pool"]) for r in rows] == [
        ("inference", "l4-inference"), ("research", "a100-train"), ("research", "h100-mig"), ("scratch", "l4-inference")]
    a100 = by[("research", "a100-train")]
    assert a100["month"] == "2026-10" and a100["allocated_gpu_hours"] == "4464.000" and a100["used_gpu_hours"] == "3124.800"
    assert a100["idle_share"] == "0.3000"  # 1 - 3124.8 / 4464
    assert a100["allocated_usd"] == "18291.40" and a100["idle_usd"] == f"{18291.4 - 12803.98:.2f}"
    # a namespace no team owns is reported under its own name, with nothing used
    scratch = by[("scratch", "l4-inference")]
    assert scratch["used_gpu_hours"] == "0.000" and scratch["idle_share"] == "1.0000" and scratch["idle_usd"] == "9.57"


def test_the_text_report_leads_with_team_totals(capsys):
    assert main(["usage-report", "--from", str(RESPONSE)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("GPU usage 2026-10\n")
    research = next(line for line in out.splitlines() if line.startswith("research") and " * " in line)
    assert "4,782.9" in research and "20,911.00" in research  # a100-train + h100-mig


def test_a_file_that_is_no_prometheus_answer_is_refused_naming_the_query(tmp_path, capsys):
    bad = json.loads(RESPONSE.read_text())
    bad["usedUsd"] = {"status": "error", "error": "query timed out"}
    path = tmp_path / "gpu-usage-2026-10.json"
    path.write_text(json.dumps(bad))
    assert main(["usage-report", "--from", str(path)]) == 2
    assert "usedUsd: not a successful Prometheus answer" in capsys.readouterr().err
    del bad["teams"]
    path.write_text(json.dumps(bad))
    assert main(["usage-report", "--from", str(path)]) == 2
    assert "missing query results: teams" in capsys.readouterr().err
