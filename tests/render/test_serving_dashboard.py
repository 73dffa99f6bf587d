"""The serving dashboard: plain JSON the sidecar reads, queries promtool parses, and only metrics the pinned vLLM
exports (besides kube-state-metrics' replicas and DCGM's utilisation)."""
import json
import re
import subprocess

import yaml

from gpu_platform.facts import serving
from gpu_platform.render import serving_dashboard

GRAFANA = {"$team": ".*", "$service": ".*"}  # what Grafana substitutes for "All"


def _exprs():
    board = json.loads(json.dumps(serving_dashboard.dashboard()))
    return [t["expr"] for p in board["panels"] for t in p["targets"]]


def test_queries_read_only_exported_vllm_metrics():
    used = {m.removesuffix("_bucket") for e in _exprs() for m in re.findall(r"vllm:[a-z_]+", e)}
    assert used and used <= serving.RUNTIMES["vllm"].metric_names


def test_promtool_parses_every_query(promtool, tmp_path):
    rules = []
    for i, expr in enumerate(_exprs()):
        for var, value in GRAFANA.items():
            expr = expr.replace(var, value)
        rules.append({"record": f"serving:panel_{i}", "expr": expr})
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": [{"name": "panels", "rules": rules}]}))
    result = subprocess.run([promtool, "check", "rules", "rules.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_variables_filter_by_team_and_service():
    names = [v["name"] for v in serving_dashboard.dashboard()["templating"]["list"]]
    assert names == ["datasource", "team", "service"]
    assert all("$team" in e for e in _exprs())
