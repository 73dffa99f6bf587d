"""The autoscalers' ServiceMonitors: valid against the pinned Prometheus operator CRD, in the namespace
Prometheus reads monitors from, selecting each chart's metrics Service by the labels and port it has."""
from __future__ import annotations

from gpu_platform.facts import catalog, names
from gpu_platform.render.autoscaler_metrics import autoscaler_monitors
from tests.support.crd_schemas import schema_problems
from tests.support.stacks import cached_plan, resources, spec_of, stack_platform, without_services

CRDS = "prometheus-operator-kube-prometheus-stack-79.5.0"
MONITOR = "kubernetes:monitoring.coreos.com/v1:ServiceMonitor"


def by_name(spec) -> dict:
    return {m["metadata"]["name"]: m for m in autoscaler_monitors(spec)}


def test_each_monitor_validates_strictly_against_the_pinned_crd():
    monitors = autoscaler_monitors(spec_of("karpenter"))
    assert len(monitors) == 2
    for m in monitors:
        assert schema_problems(CRDS, m) == []


def test_a_misspelt_field_fails_the_schema():
    (m,) = autoscaler_monitors(spec_of("prod"))
    m["spec"]["endpoints"][0]["intervall"] = "30s"
    assert schema_problems(CRDS, m) != []


def test_the_cluster_autoscaler_s_service_is_selected_in_kube_system():
    m = by_name(spec_of("prod"))[names.CA_RELEASE]
    assert m["metadata"]["namespace"] == "monitoring"  # read by Prometheus: labelled for scraping
    assert m["spec"]["namespaceSelector"] == {"matchNames": ["kube-system"]}
    assert m["spec"]["selector"]["matchLabels"] == {"app.kubernetes.io/instance": "cluster-autoscaler",
                                                    "app.kubernetes.io/name": "aws-cluster-autoscaler"}
    assert m["spec"]["endpoints"] == [{"port": "http", "path": "/metrics", "interval": "30s"}]


def test_karpenter_s_service_is_selected_in_its_namespace():
    spec = spec_of("karpenter")
    m = by_name(spec)[names.KARPENTER_RELEASE]
    assert m["spec"]["namespaceSelector"] == {"matchNames": [spec.karpenter.namespace]}
    assert m["spec"]["selector"]["matchLabels"] == {"app.kubernetes.io/instance": "karpenter",
                                                    "app.kubernetes.io/name": "karpenter"}
    assert m["spec"]["endpoints"][0]["port"] == catalog.KARPENTER_METRICS_PORT == "http-metrics"


def test_monitors_carry_the_prometheus_selector_labels():
    for m in autoscaler_monitors(spec_of("prod")):
        assert m["metadata"]["labels"] == {"release": "kube-prometheus-stack",
                                           names.MANAGED_BY_LABEL: names.MANAGED_BY}


def test_no_prometheus_no_monitors_and_no_autoscaler_no_monitor():
    assert autoscaler_monitors(spec_of("prod", _without_prometheus)) == []
    assert by_name(spec_of("dev", _without_autoscaler)) == {}


def test_the_plan_registers_them_after_the_prometheus_operator_s_crds():
    plan = cached_plan(stack_platform("karpenter"))
    monitors = resources(plan, MONITOR)
    assert {r["name"] for r in monitors} == {"autoscaler-metrics-cluster-autoscaler", "autoscaler-metrics-karpenter"}
    release = next(r for r in plan["resources"] if r["type"] == "kubernetes:helm.sh/v3:Release"
                   and r["name"] == "monitoring-stack")
    assert all(release["urn"] in r["options"]["dependsOn"] for r in monitors)


def test_the_capacity_alerts_read_the_series_the_scraped_autoscalers_export():
    """The names recorded with each chart's Service (catalog: the autoscalers' sources at their pinned versions)
    are the ones the alert expressions read."""
    from gpu_platform.render.capacity_alerts import AUTOSCALER_METRICS, node_launch_failed, scale_up_failed

    assert AUTOSCALER_METRICS == {catalog.CLUSTER_AUTOSCALER_FAILED_SCALE_UPS, catalog.KARPENTER_CLOUDPROVIDER_ERRORS}
    assert catalog.CLUSTER_AUTOSCALER_FAILED_SCALE_UPS in scale_up_failed()["expr"]
    assert catalog.KARPENTER_CLOUDPROVIDER_ERRORS in node_launch_failed()["expr"]


def _without_prometheus(platform: dict) -> None:
    platform["monitoring"]["prometheus"] = {"mode": "none"}
    platform["monitoring"].pop("usageReport")  # the report queries Prometheus
    without_services(platform)  # services scale on Prometheus


def _without_autoscaler(platform: dict) -> None:
    platform["clusterAutoscaler"] = {"enabled": False}
    without_services(platform)  # dev's service scales from zero, which needs an autoscaler
