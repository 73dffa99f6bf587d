"""The exporter's field list: what the alerts and dashboard read is collected, nothing unsafe is."""
from __future__ import annotations

import re

import pytest
import yaml

from gpu_platform.facts import catalog
from gpu_platform.render import alerts, dashboard, dcgm_metrics
from gpu_platform.render.dcgm_metrics import FIELDS_BY_NAME, exporter_values, metrics_csv, metrics_in
from gpu_platform.spec.models import AlertThresholds

T = AlertThresholds()
UPSTREAM = catalog.UPSTREAM
CHART = catalog.GPU_OPERATOR_CHARTS["v26.7.0"]


def csv_rows(text: str) -> list[list[str]]:
    return [[part.strip() for part in line.split(",")]
            for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def csv_fields() -> set[str]:
    return {row[0] for row in csv_rows(metrics_csv())}


def referenced_dcgm_fields() -> set[str]:
    rule_exprs = [r["expr"] for g in alerts.rule_groups(T, {"NVIDIA A10G": 1.0}) for r in g["rules"]]
    panel_exprs = [tg["expr"] for p in dashboard.dashboard(T)["panels"] for tg in p["targets"]]
    variable_queries = [v["definition"] for v in dashboard.dashboard(T)["templating"]["list"] if "definition" in v]
    found = set()
    for expr in rule_exprs + panel_exprs + variable_queries:
        found |= set(re.findall(r"DCGM_FI_[A-Z0-9_]+", expr))
    return found


def test_every_field_the_rules_and_dashboard_read_is_collected():
    referenced = referenced_dcgm_fields()
    assert {"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_XID_ERRORS"} <= referenced
    assert referenced <= csv_fields()


def test_no_profiling_field_missing_on_some_gpu_is_collected():
    """A profiling field a GPU lacks fails the exporter there; only device fields are skipped when absent."""
    unsafe = {f.name for f in dcgm_metrics.FIELDS if not f.on_all_gpus and not f.skipped_when_absent}
    assert "DCGM_FI_PROF_PIPE_FP64_ACTIVE" in unsafe
    assert not unsafe & csv_fields()
    assert all(name.startswith("DCGM_FI_PROF_") for name in unsafe)


def test_datacenter_health_fields_are_collected_where_the_gpu_has_them():
    health = {"DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_ROW_REMAP_FAILURE",
              "DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL"}
    assert health <= csv_fields()
    for name in health:
        field = FIELDS_BY_NAME[name]
        assert field.skipped_when_absent and not field.on_all_gpus
        assert field.gpus and set(field.gpus) <= set(dcgm_metrics.REVIEWED_GPUS), name


def test_fields_not_on_every_gpu_name_the_gpus_that_have_them():
    for field in dcgm_metrics.FIELDS:
        assert bool(field.gpus) == (not field.on_all_gpus), field.name


def test_every_catalog_gpu_was_reviewed_for_field_support():
    assert set(catalog.GPU_MODELS) <= set(dcgm_metrics.REVIEWED_GPUS)


def test_csv_lines_have_field_type_and_help():
    rows = csv_rows(metrics_csv())
    assert rows and all(len(row) == 3 for row in rows), rows
    for name, prom_type, help_text in rows:
        assert name in FIELDS_BY_NAME and prom_type in ("gauge", "counter") and help_text, name


def test_csv_lists_each_field_once():
    names = [row[0] for row in csv_rows(metrics_csv())]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("expr, expected", [
    ('sum by (namespace) (rate(DCGM_FI_DEV_PCIE_REPLAY_COUNTER{Hostname=~"a|b"}[5m])) > 1e3',
     {"DCGM_FI_DEV_PCIE_REPLAY_COUNTER"}),
    ('label_replace(up{job="x"}, "node", "$1", "Hostname", "(.+)") or absent(kube_node_labels) offset 5m',
     {"up", "kube_node_labels"}),
    ("a * on (modelName) group_left (cost) gpu_platform:gpu_hourly_cost_usd and vector(1)",
     {"a", "gpu_platform:gpu_hourly_cost_usd"}),
])
def test_metrics_in_finds_metric_names_only(expr, expected):
    assert metrics_in(expr) == expected


# --- GPU Operator values ---

def leaf_paths(tree: dict, prefix: tuple = ()) -> list[tuple]:
    """Key paths of chart settings (the keys of additionalLabels are data, not settings)."""
    out = []
    for key, value in tree.items():
        if isinstance(value, dict) and value and key != "additionalLabels":
            out += leaf_paths(value, prefix + (key,))
        else:
            out.append(prefix + (key,))
    return out


def chart_text() -> str:
    return (UPSTREAM / CHART.values_file).read_text()


def dcgm_section(text: str) -> str:
    """The chart's `dcgmExporter:` block, comments included."""
    return re.search(r"^dcgmExporter:\n(.*?)(?=^\S)", text, re.S | re.M).group(1)


def test_every_key_set_exists_in_the_pinned_chart():
    chart = yaml.safe_load(chart_text())["dcgmExporter"]
    values = exporter_values("gpu-platform-dcgm-metrics", True, {"release": "kube-prometheus-stack"})
    for path in leaf_paths(values):
        if path[0] == "config":
            continue  # commented out in values.yaml: checked below
        node = chart
        for key in path:
            assert isinstance(node, dict) and key in node, ".".join(("dcgmExporter",) + path)
            node = node[key]


def test_config_keys_match_the_charts_commented_example():
    # values.yaml documents dcgmExporter.config only as a comment; the chart's templates read it
    # (clusterpolicy.yaml passes it to the ClusterPolicy, and with create=true a template renders
    # config.data under dcgm-metrics.csv in the release namespace).
    section = dcgm_section(chart_text())
    values = exporter_values("gpu-platform-dcgm-metrics", True, {})
    assert set(values["config"]) == {"name", "create", "data"}
    for key in values["config"]:
        assert re.search(rf"^\s*#\s*{key}:", section, re.M), key
    assert f"`{dcgm_metrics.CSV_KEY}`" in section


def test_exporter_values_create_the_csv_configmap_from_the_chart():
    config = exporter_values("gpu-platform-dcgm-metrics", True, {})["config"]
    assert config == {"name": "gpu-platform-dcgm-metrics", "create": True, "data": metrics_csv()}


def test_service_monitor_follows_its_inputs():
    monitor = exporter_values("cm", False, {"release": "prom"})["serviceMonitor"]
    assert monitor["enabled"] is False and monitor["additionalLabels"] == {"release": "prom"}


def test_service_monitor_keeps_the_workloads_pod_labels_and_adds_the_node():
    monitor = exporter_values("cm", True, {})["serviceMonitor"]
    assert monitor["honorLabels"] is True
    assert {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node",
            "action": "replace"} in monitor["relabelings"]
    [drop] = [r for r in monitor["relabelings"] if r["action"] == "labeldrop"]
    assert all(re.fullmatch(drop["regex"], label) for label in ("pod", "namespace", "container"))
    assert not re.fullmatch(drop["regex"], "node")
