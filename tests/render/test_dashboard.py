"""The GPU dashboard: valid JSON, queries that promtool parses and evaluates, only collected metrics."""
from __future__ import annotations

import json
import re
import subprocess

import pytest
import yaml

from gpu_platform.render import alerts, dashboard, usage_rules
from gpu_platform.render.dcgm_metrics import collected_fields, metrics_in
from gpu_platform.render.efa_metrics import EFA_METRICS
from gpu_platform.spec.models import AlertThresholds
from tests.support.promql import check_queries

T = AlertThresholds()
# What Grafana substitutes before a query reaches Prometheus ("All" is the regex .*).
ALL = {"$node": ".*", "$model": ".*"}




def board() -> dict:
    return json.loads(json.dumps(dashboard.dashboard(T)))  # what the sidecar reads: plain JSON


def exprs(d: dict) -> list[str]:
    return [target["expr"] for panel in d["panels"] for target in panel["targets"]]


def substitute(expr: str, values: dict[str, str]) -> str:
    for var, value in values.items():
        expr = expr.replace(var, value)
    return expr


def test_every_query_reads_only_collected_dcgm_fields_or_recorded_series():
    allowed = ({f.name for f in collected_fields()} | alerts.RECORDED_METRICS | usage_rules.RECORDED
               | dashboard.CADVISOR_METRICS)
    for expr in exprs(board()):
        assert metrics_in(expr) <= allowed, expr


def test_every_query_uses_only_defined_variables():
    d = board()
    defined = {v["name"] for v in d["templating"]["list"]}
    assert defined == set(dashboard.VARIABLES)
    for expr in exprs(d):
        assert set(re.findall(r"\$(\w+)", expr)) <= defined, expr


def test_promtool_parses_every_query(promtool, tmp_path):
    check_queries(promtool, tmp_path, [substitute(e, ALL) for e in exprs(board())], "dashboard")


def test_panels_cover_utilisation_memory_temperature_power_and_xid():
    read = set().union(*(metrics_in(e) for e in exprs(board())))
    assert {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_GPU_TEMP",
            "DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_XID_ERRORS"} <= read


def test_xid_is_shown_as_an_instant_table():
    [table] = [p for p in board()["panels"] if p["type"] == "table"]
    assert "DCGM_FI_DEV_XID_ERRORS" in metrics_in(table["targets"][0]["expr"])
    assert table["targets"][0]["instant"] is True and table["targets"][0]["format"] == "table"


def test_threshold_lines_follow_the_alert_thresholds():
    custom = AlertThresholds(memory_used_percent=75, temperature_celsius=70)
    red = {p["title"]: p["fieldConfig"]["defaults"]["thresholds"]["steps"][-1]["value"]
           for p in dashboard.panels(custom)}
    assert red["GPU memory used"] == 75 and red["GPU temperature"] == 70


def test_panel_ids_are_unique_and_panels_fit_the_grid():
    panels = board()["panels"]
    assert len({p["id"] for p in panels}) == len(panels)
    for p in panels:
        assert p["gridPos"]["x"] + p["gridPos"]["w"] <= 24, p["title"]


def test_node_variable_extracts_both_host_label_spellings():
    [node] = [v for v in board()["templating"]["list"] if v["name"] == "node"]
    pattern = node["regex"].strip("/")
    rows = ['{Hostname="ip-10-0-1-5.ec2.internal"} 1 1700000000', '{hostname="ip-10-0-2-7.ec2.internal"} 1 1700000000']
    assert [re.search(pattern, r).group(1) for r in rows] == ["ip-10-0-1-5.ec2.internal", "ip-10-0-2-7.ec2.internal"]


def test_namespace_panel_sums_held_gpus_per_namespace_for_either_host_spelling(promtool, tmp_path):
    [panel] = [p for p in board()["panels"] if p["title"] == "Busy GPUs per team namespace"]
    expr = substitute(panel["targets"][0]["expr"], {"$node": "node-a|node-b", "$model": ".*"})
    util = "DCGM_FI_DEV_GPU_UTIL"
    series = [
        (f'{util}{{gpu="0",modelName="NVIDIA A10G",Hostname="node-a",namespace="research",pod="p0"}}', "80x5"),
        (f'{util}{{gpu="1",modelName="NVIDIA A10G",hostname="node-b",namespace="research",pod="p1"}}', "40x5"),
        (f'{util}{{gpu="0",modelName="NVIDIA L4",hostname="node-b",namespace="vision",pod="p2"}}', "50x5"),
        (f'{util}{{gpu="2",modelName="NVIDIA A10G",Hostname="node-a"}}', "99x5"),  # held by no pod
        (f'{util}{{gpu="0",modelName="NVIDIA A10G",Hostname="node-c",namespace="research",pod="p9"}}', "70x5"),
    ]
    spec = {"rule_files": [], "evaluation_interval": "1m", "tests": [{
        "interval": "1m",
        "input_series": [{"series": s, "values": v} for s, v in series],
        "promql_expr_test": [{"expr": expr, "eval_time": "2m", "exp_samples": [
            {"labels": '{namespace="research"}', "value": 1.2}, {"labels": '{namespace="vision"}', "value": 0.5}]}],
    }]}
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = subprocess.run([promtool, "test", "rules", "tests.yaml"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_usage_panels_draw_the_well_run_line_and_price_idle_gpus():
    panels = {p["title"]: p for p in board()["panels"]}
    fleet = panels["Fleet GPU utilisation (busy / allocated)"]
    assert {"color": "green", "value": 60} in fleet["fieldConfig"]["defaults"]["thresholds"]["steps"]
    assert fleet["fieldConfig"]["defaults"]["custom"]["thresholdsStyle"]["mode"] == "line"
    idle = panels["Idle GPU cost per hour (allocated, not busy)"]["targets"][0]["expr"]
    assert metrics_in(idle) == {usage_rules.ALLOCATED_USD, usage_rules.USED_USD}


# --- EFA throughput beside GPU activity (stacks with EFA pools) ---

def efa_board() -> dict:
    return json.loads(json.dumps(dashboard.dashboard(T, efa=True)))


def test_efa_panels_only_with_efa_pools_and_only_collected_series():
    plain = {p["title"] for p in board()["panels"]}
    with_efa = {p["title"]: p for p in efa_board()["panels"]}
    added = set(with_efa) - plain
    assert added == {"GPU activity on EFA nodes", "EFA bytes per second per node", "EFA RDMA bytes per second per node"}
    allowed = ({f.name for f in collected_fields()} | alerts.RECORDED_METRICS | usage_rules.RECORDED
               | dashboard.CADVISOR_METRICS | EFA_METRICS)
    read = set()
    for expr in exprs(efa_board()):
        assert metrics_in(expr) <= allowed, expr
        read |= metrics_in(expr)
    assert {"gpu_platform_efa_rx_bytes_total", "gpu_platform_efa_tx_bytes_total", "gpu_platform_efa_rdma_read_bytes_total",
            "gpu_platform_efa_rdma_write_bytes_total"} <= read
    assert "no exporter the platform runs counts it" in {p["title"]: p for p in board()["panels"]}[
        "Network received by GPU pods"]["description"]
    assert "the EFA panels show it" in with_efa["Network received by GPU pods"]["description"]


def test_efa_panels_sit_in_one_row_below_the_pod_panels_and_follow_the_node_variable():
    panels = efa_board()["panels"]
    assert len({p["id"] for p in panels}) == len(panels)
    efa = [p for p in panels if "EFA" in p["title"]]
    assert {p["gridPos"]["y"] for p in efa} == {max(p["gridPos"]["y"] for p in board()["panels"]) + 8}
    assert sorted(p["gridPos"]["x"] for p in efa) == [0, 8, 16]
    for p in efa:
        assert [t["refId"] for t in p["targets"]] == ["A", "B"][:len(p["targets"])]
        assert all('node=~"$node"' in t["expr"] for t in p["targets"]), p["title"]


def test_the_query_check_fails_on_a_broken_query(promtool, tmp_path):
    with pytest.raises(AssertionError, match="parse error"):
        check_queries(promtool, tmp_path, ["rate(gpu_platform_efa_rx_bytes_total[5m]"], "dashboard")


def test_promtool_parses_every_query_with_efa(promtool, tmp_path):
    check_queries(promtool, tmp_path, [substitute(e, ALL) for e in exprs(efa_board())], "dashboard")


def _efa_series(metric: str, node: str, device: str, per_minute: int) -> dict:
    """A counter as the EFA collector's scrape labels it, rising by `per_minute` bytes every minute."""
    labels = f'device="{device}",port="1",node="{node}",instance="10.0.0.1:9810",job="kube-system/gpu-platform-efa-metrics"'
    return {"series": f"{metric}{{{labels}}}", "values": f"0+{per_minute}x15"}


def test_efa_queries_give_each_node_s_bytes_per_second_and_its_gpus_activity(promtool, tmp_path):
    """Synthetic counters of two EFA nodes (two devices on one): each panel's query gives the node's bytes per
    second, every device added; the activity panel keeps only nodes with EFA devices and pods' GPUs."""
    panels = {p["title"]: p for p in efa_board()["panels"]}
    node = {"$node": ".*"}
    rx, tx = (substitute(t["expr"], node) for t in panels["EFA bytes per second per node"]["targets"])
    read, write = (substitute(t["expr"], node) for t in panels["EFA RDMA bytes per second per node"]["targets"])
    activity = substitute(panels["GPU activity on EFA nodes"]["targets"][0]["expr"], node)
    efa = "gpu_platform_efa_"
    series = [
        _efa_series(f"{efa}rx_bytes_total", "node-a", "rdmap16s27", 61440),  # 1024 B/s
        _efa_series(f"{efa}rx_bytes_total", "node-a", "rdmap32s27", 122880),  # 2048 B/s
        _efa_series(f"{efa}rx_bytes_total", "node-b", "rdmap16s27", 30720),  # 512 B/s
        _efa_series(f"{efa}tx_bytes_total", "node-a", "rdmap16s27", 245760),  # 4096 B/s
        _efa_series(f"{efa}rdma_read_bytes_total", "node-a", "rdmap16s27", 1_966_080),  # 32768 B/s
        _efa_series(f"{efa}rdma_write_bytes_total", "node-b", "rdmap16s27", 1920),  # 32 B/s
        {"series": f'{efa}devices{{node="node-a"}}', "values": "2x15"},
        {"series": f'{efa}devices{{node="node-b"}}', "values": "1x15"},
        {"series": 'DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",node="node-a",namespace="research",pod="p0"}', "values": "0.25x15"},
        {"series": 'DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="1",node="node-a",namespace="research",pod="p0"}', "values": "0.5x15"},
        {"series": 'DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="2",node="node-a",pod=""}', "values": "0.9x15"},  # held by no pod
        {"series": 'DCGM_FI_PROF_GR_ENGINE_ACTIVE{gpu="0",node="node-c",namespace="research",pod="p1"}', "values": "0.7x15"},
    ]
    tests = [(rx, [('{node="node-a"}', 3072), ('{node="node-b"}', 512)]), (tx, [('{node="node-a"}', 4096)]),
             (read, [('{node="node-a"}', 32768)]), (write, [('{node="node-b"}', 32)]),
             (activity, [('{node="node-a"}', 37.5)])]
    spec = {"rule_files": [], "evaluation_interval": "1m", "tests": [{
        "interval": "1m", "input_series": series,
        "promql_expr_test": [{"expr": expr, "eval_time": "10m",
                              "exp_samples": [{"labels": labels, "value": value} for labels, value in expected]}
                             for expr, expected in tests],
    }]}
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = subprocess.run([promtool, "test", "rules", "tests.yaml"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
