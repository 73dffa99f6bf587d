"""The data-feeding dashboard: Prometheus queries promtool parses, CloudWatch queries of the stack's file
systems only, the read-only policy botocore accepts, and when the stack gets any of it."""
from __future__ import annotations

import json

import pytest

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render import dashboard as gpu_dashboard
from gpu_platform.render.data_feeding import (
    CLOUDWATCH, FileSystems, cloudwatch_datasource, dashboard, data_feeding_wanted, read_policy,
)
from gpu_platform.render.dcgm_metrics import collected_fields, metrics_in
from gpu_platform.render.efa_metrics import EFA_METRICS
from gpu_platform.render.monitoring import MonitoringSettings, stack_values
from tests.support.promql import check_queries
from tests.support.aws_api import api_problems, service_model
from tests.support.stacks import stack_platform, without_services

BOTH = FileSystems(fsx_lustre="fs-0123456789abcdef0", efs="fs-89abcdef")


def board(file_systems: FileSystems = BOTH) -> dict:
    return json.loads(json.dumps(dashboard(file_systems)))  # what the sidecar reads: plain JSON


def targets(d: dict, source: str) -> list[dict]:
    return [t for p in d["panels"] for t in p["targets"] if t["datasource"]["type"] == source]


def test_prometheus_queries_read_only_collected_series_and_promtool_parses_them(promtool, tmp_path):
    exprs = [t["expr"] for t in targets(board(), "prometheus")]
    allowed = {f.name for f in collected_fields()} | gpu_dashboard.CADVISOR_METRICS
    assert exprs and all(metrics_in(e) <= allowed for e in exprs)
    check_queries(promtool, tmp_path, exprs, "data-feeding")


def test_gpu_activity_throttling_and_network_sit_above_the_file_systems():
    titles = [p["title"] for p in board()["panels"]]
    assert titles[:3] == ["GPU activity per pod", "CPU throttled share of GPU pods", "Network received by GPU pods"]
    assert [p["datasource"]["type"] for p in board()["panels"][3:]] == ["cloudwatch", "cloudwatch"]


@pytest.mark.parametrize(("file_systems", "metrics"), [
    (FileSystems(fsx_lustre="fs-0123456789abcdef0"), [catalog.FSX_LUSTRE_THROUGHPUT_METRICS]),
    (FileSystems(efs="fs-89abcdef"), [catalog.EFS_THROUGHPUT_METRICS]),
    (BOTH, [catalog.FSX_LUSTRE_THROUGHPUT_METRICS, catalog.EFS_THROUGHPUT_METRICS]),
])
def test_each_file_system_the_stack_has_gets_its_metrics_by_its_id(file_systems, metrics):
    sums = [t for t in targets(board(file_systems), "cloudwatch") if "metricName" in t]
    ids = [i for i in (file_systems.fsx_lustre, file_systems.efs) if i is not None]
    expected = [(ns, name, {dim: fs}) for (ns, dim, metric_names), fs in zip(metrics, ids, strict=True) for name in metric_names]
    assert [(t["namespace"], t["metricName"], t["dimensions"]) for t in sums] == expected
    assert all(t["statistic"] == "Sum" and t["matchExact"] for t in sums)


def test_throughput_is_each_hidden_sum_over_its_period_in_bytes_per_second():
    for panel in board()["panels"][3:]:
        sums = {t["id"] for t in panel["targets"] if t.get("hide")}
        shown = [t for t in panel["targets"] if not t.get("hide")]
        assert {t["expression"] for t in shown} == {f"{i}/PERIOD({i})" for i in sums}
        assert panel["fieldConfig"]["defaults"]["unit"] == "Bps"
        assert len({t["refId"] for t in panel["targets"]}) == len(panel["targets"])


def test_panel_ids_are_unique_and_panels_fit_the_grid():
    panels = board()["panels"]
    assert [p["id"] for p in panels] == list(range(1, len(panels) + 1))
    assert all(p["gridPos"]["x"] + p["gridPos"]["w"] <= 24 for p in panels)


def test_the_data_source_grafana_gets_is_the_one_the_panels_name():
    source = cloudwatch_datasource("eu-west-1")
    assert (source["type"], source["uid"]) == (CLOUDWATCH["type"], CLOUDWATCH["uid"])
    assert source["jsonData"] == {"authType": "default", "defaultRegion": "eu-west-1"}


def test_the_policy_only_reads_cloudwatch_metrics_and_passes_botocore():
    doc = json.loads(read_policy())
    [statement] = doc["Statement"]
    assert statement["Effect"] == "Allow" and statement["Action"] == list(catalog.CLOUDWATCH_READ_ACTIONS)
    operations = set(service_model("cloudwatch").operation_names)
    assert {a.split(":", 1)[1] for a in statement["Action"]} <= operations
    # IAM's prefix for CloudWatch is its service ID (the API signs as `monitoring`).
    assert {a.split(":", 1)[0] for a in statement["Action"]} == {service_model("cloudwatch").service_id.lower()}
    put = service_model("iam").operation_model("PutRolePolicy").input_shape
    assert api_problems({"RoleName": "r", "PolicyName": "p", "PolicyDocument": json.dumps(doc)}, put) == []


def with_monitoring(mode: str, model_cache: bool, fsx: bool) -> dict:
    p = stack_platform("prod")
    if mode == "existing":  # an existing stack brings its own volumes and answers the report at its URL
        p["monitoring"]["prometheus"] = {"mode": "existing", "namespace": "observability"}
        p["monitoring"].pop("usageReport", None)
    p["modelCache"]["enabled"] = model_cache
    if not model_cache:
        p = without_services(p)  # services load their weights from the model cache
    if not fsx:
        p.get("datasets", {}).pop("fsxLustre", None)
    return p


@pytest.mark.parametrize(("mode", "model_cache", "fsx", "wanted"), [
    ("install", True, True, True), ("install", True, False, True), ("install", False, True, True),
    ("install", False, False, False), ("existing", True, True, False),
])
def test_only_stacks_with_a_file_system_and_an_installed_grafana_get_it(mode, model_cache, fsx, wanted):
    spec = parse_platform(with_monitoring(mode, model_cache, fsx))
    assert data_feeding_wanted(spec) is wanted
    grafana = stack_values(MonitoringSettings.of(spec, "us-west-2"))["grafana"]
    assert ("additionalDataSources" in grafana) is (wanted and mode == "install")
    if wanted:
        assert grafana["additionalDataSources"] == [cloudwatch_datasource("us-west-2")]
        assert grafana["serviceAccount"] == {"name": names.GRAFANA_SERVICE_ACCOUNT}


def test_no_region_no_data_source():
    grafana = stack_values(MonitoringSettings.of(parse_platform(stack_platform("prod"))))["grafana"]
    assert "additionalDataSources" not in grafana


def test_with_efa_pools_each_efa_node_s_throughput_sits_between_the_pods_and_the_file_systems(promtool, tmp_path):
    d = json.loads(json.dumps(dashboard(BOTH, efa=True)))
    rows = [(p["gridPos"]["y"], p["title"], p["datasource"]["type"]) for p in d["panels"]]
    assert [t for y, t, _ in rows if y == 8] == ["GPU activity on EFA nodes", "EFA bytes per second per node",
                                                  "EFA RDMA bytes per second per node"]
    assert all(source == "cloudwatch" for y, _, source in rows if y > 8)
    assert [p["id"] for p in d["panels"]] == list(range(1, len(d["panels"]) + 1))
    exprs = [t["expr"] for t in targets(d, "prometheus")]
    allowed = {f.name for f in collected_fields()} | gpu_dashboard.CADVISOR_METRICS | EFA_METRICS
    assert all(metrics_in(e) <= allowed for e in exprs) and "$" not in "".join(exprs)  # no variables here
    check_queries(promtool, tmp_path, exprs, "data-feeding")


def test_without_efa_pools_no_efa_panel():
    assert not [p for p in board()["panels"] if "EFA" in p["title"]]
