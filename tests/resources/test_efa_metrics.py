"""EfaMetrics in a plan: the EFA collector's objects registered as rendered, parented to the component, after the
Prometheus operator's CRDs (its PodMonitor), and the dashboards' EFA panels only on stacks that have it."""
from __future__ import annotations

import json

from gpu_platform.facts import component_types, names
from gpu_platform.render.efa_metrics import efa_metrics_manifests
from tests.support.stacks import cached_plan, resource, resources, spec_of, stack_platform

KINDS = ("kubernetes:core/v1:ConfigMap", "kubernetes:apps/v1:DaemonSet", "kubernetes:monitoring.coreos.com/v1:PodMonitor")


def test_the_plan_registers_the_collector_as_rendered_after_the_crds():
    plan = cached_plan(stack_platform("prod"))
    [component] = resources(plan, component_types.INTERNAL["EfaMetrics"])
    release = resource(plan, "kubernetes:helm.sh/v3:Release", "monitoring-stack")
    rendered = {o["kind"]: o for o in efa_metrics_manifests(spec_of("prod"))}
    for type_ in KINDS:
        kind = type_.rsplit(":", 1)[1]
        registered = resource(plan, type_, f"efa-metrics-{kind.lower()}")
        assert registered["parent"] == component["urn"]
        assert release["urn"] in registered["options"]["dependsOn"]
        assert registered["inputs"]["metadata"]["name"] == names.EFA_METRICS_NAME
        assert registered["inputs"]["spec" if kind != "ConfigMap" else "data"] == rendered[kind][
            "spec" if kind != "ConfigMap" else "data"]


def _dashboard_titles(plan: dict, configmap: str) -> set[str]:
    [cm] = [r for r in resources(plan, "kubernetes:core/v1:ConfigMap") if r["inputs"]["metadata"]["name"] == configmap]
    [board] = cm["inputs"]["data"].values()
    return {p["title"] for p in json.loads(board)["panels"]}


def test_the_dashboards_show_efa_throughput_only_on_stacks_with_efa_pools():
    prod, dev = cached_plan(stack_platform("prod")), cached_plan(stack_platform("dev"))
    assert "EFA bytes per second per node" in _dashboard_titles(prod, names.GPU_DASHBOARD_CONFIGMAP)
    assert "EFA bytes per second per node" in _dashboard_titles(prod, names.DATA_FEEDING_DASHBOARD_CONFIGMAP)
    assert not any("EFA" in t for t in _dashboard_titles(dev, names.GPU_DASHBOARD_CONFIGMAP))
    assert not resources(dev, component_types.INTERNAL["EfaMetrics"])
