"""GPU monitoring through the real program: the Prometheus stack per mode, the PrometheusRule, the dashboard
ConfigMap and the GPU Operator's ServiceMonitor switch."""
import json

import kubernetes_validate
import pytest
import yaml

from gpu_platform.decisions.acceptance import accepted_pools
from gpu_platform.decisions.cost import gpu_hourly_cost_by_model
from gpu_platform.decisions.tolerations import tolerates
from gpu_platform.decisions.usage import pool_rates, team_namespaces, usage_units
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render import alerts
from gpu_platform.render.dashboard import FILE_NAME, dashboard
from gpu_platform.render.monitoring import DASHBOARD_LABEL_VALUE, MonitoringSettings, prometheus_mode, stack_values
from gpu_platform.render.usage_rules import usage_groups
from gpu_platform.resources.monitoring import POD_SECURITY_LEVEL
from tests.support.stacks import cached_plan, resource, resources, stack_platform, without_services

RELEASE, NAMESPACE, CONFIGMAP = "kubernetes:helm.sh/v3:Release", "kubernetes:core/v1:Namespace", "kubernetes:core/v1:ConfigMap"
RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"
NODE_GROUP, ADDON = "aws:eks/nodeGroup:NodeGroup", "aws:eks/addon:Addon"
SYSTEM = {names.ROLE_LABEL: names.SYSTEM_ROLE}

# Every kube-prometheus-stack value the platform sets, checked by hand against the charts' values.yaml
# (prometheus-community/helm-charts: charts/kube-prometheus-stack, its subcharts kube-state-metrics and
# prometheus-node-exporter; grafana/helm-charts: charts/grafana) with the chart default seen there.
# A key may only be set once it is listed here; re-check the table when the pinned chart version moves.
VERIFIED_KEYS = {
    "prometheus.prometheusSpec.nodeSelector": ("kube-prometheus-stack", "{}"),
    "prometheus.prometheusSpec.ruleSelectorNilUsesHelmValues": ("kube-prometheus-stack", "true"),
    "prometheus.prometheusSpec.serviceMonitorSelectorNilUsesHelmValues": ("kube-prometheus-stack", "true"),
    "prometheus.prometheusSpec.podMonitorSelectorNilUsesHelmValues": ("kube-prometheus-stack", "true"),
    # Both read by templates/prometheus/prometheus.yaml at kube-prometheus-stack-79.5.0 ({}: every namespace).
    "prometheus.prometheusSpec.serviceMonitorNamespaceSelector": ("kube-prometheus-stack", "{}"),
    "prometheus.prometheusSpec.podMonitorNamespaceSelector": ("kube-prometheus-stack", "{}"),
    "alertmanager.alertmanagerSpec.nodeSelector": ("kube-prometheus-stack", "{}"),
    # The whole alertmanager.yaml (tplConfig stays false: its {{ }} templates reach Alertmanager as written).
    "alertmanager.config": ("kube-prometheus-stack", "null receiver, Watchdog route, severity inhibit rules"),
    "alertmanager.alertmanagerSpec.secrets": ("kube-prometheus-stack", "[] (mounted under /etc/alertmanager/secrets/)"),
    "alertmanager.serviceAccount.name": ("kube-prometheus-stack", '"" (the chart names it <release>-alertmanager)'),
    "prometheusOperator.nodeSelector": ("kube-prometheus-stack", "{}"),
    "prometheusOperator.admissionWebhooks.patch.nodeSelector": ("kube-prometheus-stack", "{}"),
    "grafana.nodeSelector": ("grafana", "{}"),
    "grafana.sidecar.dashboards.enabled": ("kube-prometheus-stack", "true"),
    "grafana.sidecar.dashboards.label": ("kube-prometheus-stack", "grafana_dashboard"),
    "grafana.sidecar.dashboards.labelValue": ("kube-prometheus-stack", '"1"'),
    "grafana.sidecar.dashboards.searchNamespace": ("kube-prometheus-stack", "ALL"),
    # Grafana's CloudWatch data source (the file systems' throughput) and the service account Pod Identity names.
    "grafana.additionalDataSources": ("kube-prometheus-stack", "[] (provisioned beside the Prometheus source)"),
    "grafana.serviceAccount.name": ("grafana", '"" (the chart names it <release>-grafana)'),
    "kube-state-metrics.nodeSelector": ("kube-state-metrics", "{}"),
    "kube-state-metrics.metricLabelsAllowlist": ("kube-state-metrics", "[]"),
    "prometheus-node-exporter.tolerations": ("prometheus-node-exporter", "[{effect: NoSchedule, operator: Exists}]"),
    # Metrics that remember: read by templates/prometheus/prometheus.yaml and templates/alertmanager/alertmanager.yaml.
    "prometheus.prometheusSpec.retention": ("kube-prometheus-stack", "10d"),
    "prometheus.prometheusSpec.retentionSize": ("kube-prometheus-stack", '""'),
    "prometheus.prometheusSpec.storageSpec": ("kube-prometheus-stack", "{} (volumeClaimTemplate: a claim per replica)"),
    "alertmanager.alertmanagerSpec.storage": ("kube-prometheus-stack", "{} (volumeClaimTemplate: a claim per replica)"),
}
# Values whose content is data for a pod spec, not further chart keys.
SYSTEM_NODE_SELECTORS = [k for k in VERIFIED_KEYS if k.endswith(".nodeSelector")]


def existing_stack():
    p = stack_platform("dev")
    p["monitoring"] = {"prometheus": {"mode": "existing", "namespace": "observability",
                                      "selectorLabels": {"prometheus": "platform", "team": "sre"},
                                      "grafanaDashboardLabel": "sre_dashboard"},
                       "alerting": p["monitoring"]["alerting"]}
    return p


def no_prometheus():
    p = stack_platform("dev")
    p["monitoring"]["prometheus"] = {"mode": "none"}  # the volume settings go with the installed Prometheus
    return without_services(p)  # services scale on Prometheus


def disabled():
    p = stack_platform("dev")
    p["monitoring"]["enabled"] = False
    return without_services(p)  # services scale on Prometheus


def custom_install():
    p = stack_platform("dev")
    p["monitoring"] = {"prometheus": {"mode": "install", "namespace": "metrics", "chartVersion": "79.4.1",
                                      "selectorLabels": {"prometheus": "gpu"}, "grafanaDashboardLabel": "gpu_dash"},
                       "alerts": {"memoryUsedPercent": 80, "temperatureCelsius": 75, "idleMinutes": 15},
                       "alerting": p["monitoring"]["alerting"]}
    return p


def persistent():
    p = stack_platform("dev")
    p["monitoring"]["prometheus"].update(ebsCsiAddonVersion="v1.0.0-eksbuild.1", retention="90d")
    return p


PLATFORMS = {
    "persistent": persistent,
    "dev": lambda: stack_platform("dev"),
    "prod": lambda: stack_platform("prod"),
    "existing": existing_stack,
    "none": no_prometheus,
    "disabled": disabled,
    "custom-install": custom_install,
}
INSTALL = ("dev", "prod", "custom-install", "persistent")
WITH_PROMETHEUS, WITHOUT = ("dev", "prod", "existing", "custom-install"), ("none", "disabled")


@pytest.fixture(scope="module")
def planned():
    """The plan of each platform variant (cached across the session)."""
    return lambda key: cached_plan(PLATFORMS[key]())


def spec(key):
    return parse_platform(PLATFORMS[key]())


def stack_release(plan):
    return resource(plan, RELEASE, "monitoring-stack")


def rule(plan):
    return resource(plan, RULE, "monitoring-rules")


def dashboard_map(plan):
    return resource(plan, CONFIGMAP, "monitoring-dashboard")


def at(values: dict, dotted: str):
    for key in dotted.split("."):
        values = values[key]
    return values


def set_keys(values: dict, prefix: str = ""):
    """Dotted paths of what is set: verified keys as a whole, other maps walked into."""
    for key, value in values.items():
        path = f"{prefix}{key}"
        if path not in VERIFIED_KEYS and isinstance(value, dict) and value:
            yield from set_keys(value, path + ".")
        else:
            yield path


# --- which objects exist per mode ---

@pytest.mark.parametrize("key", ["dev", "prod"])
def test_dev_and_prod_plans_include_monitoring(planned, key):
    plan = planned(key)
    rules = sorted(r["inputs"]["metadata"]["name"] for r in resources(plan, RULE))
    # the GPU alerts, the log pipeline's alerts counted from logs, and the alerts of the model servers
    assert (plan["outputs"]["monitoring"]["prometheus"], rules) == ("install", [names.GPU_RULES_NAME,
                                                                              names.LOG_RULES_NAME,
                                                                              names.SERVING_RULES_NAME])


@pytest.mark.parametrize("key", INSTALL)
def test_install_mode_installs_the_pinned_chart_in_the_spec_namespace(planned, key):
    inputs, prom = stack_release(planned(key))["inputs"], spec(key).monitoring.prometheus
    repo, chart = catalog.KUBE_PROMETHEUS_STACK_CHART
    assert (inputs["chart"], inputs["version"], inputs["repositoryOpts"]["repo"], inputs["namespace"]) == (
        chart, prom.chart_version, repo, prom.namespace)


@pytest.mark.parametrize("key", INSTALL)
def test_stack_namespace_lets_node_exporter_use_the_host(planned, key):
    ns = resource(planned(key), NAMESPACE, "monitoring-namespace")["inputs"]["metadata"]
    assert ns["name"] == spec(key).monitoring.prometheus.namespace
    assert names.pod_security_labels(POD_SECURITY_LEVEL).items() <= ns["labels"].items()


def test_stack_release_waits_for_its_namespace_and_the_system_nodes(planned):
    plan, s = planned("dev"), spec("dev")
    system = next(r for r in resources(plan, NODE_GROUP)
                  if r["inputs"]["nodeGroupName"] == names.system_node_group_name(s.cluster.name))
    needed = {resource(plan, NAMESPACE, "monitoring-namespace")["urn"], system["urn"],
              resource(plan, ADDON, "cluster-coredns")["urn"]}
    assert needed <= set(stack_release(plan)["options"]["dependsOn"])


@pytest.mark.parametrize("key", ["existing", *WITHOUT])
def test_no_stack_release_or_namespace_unless_installing(planned, key):
    plan = planned(key)
    assert [r["name"] for r in resources(plan, RELEASE) + resources(plan, NAMESPACE)
            if r["name"].startswith("monitoring")] == []


@pytest.mark.parametrize("key", WITHOUT)
def test_no_rules_or_dashboard_without_a_prometheus_operator(planned, key):
    plan = planned(key)
    dashboards = [r for r in resources(plan, CONFIGMAP) if r["name"] == "monitoring-dashboard"]
    assert (resources(plan, RULE), dashboards) == ([], [])


@pytest.mark.parametrize("key", PLATFORMS)
def test_mode_output_says_what_was_built(planned, key):
    assert planned(key)["outputs"]["monitoring"]["prometheus"] == prometheus_mode(spec(key).monitoring)


# --- the stack's chart values ---

@pytest.mark.parametrize("path", SYSTEM_NODE_SELECTORS)
def test_stack_components_run_on_system_nodes(planned, path):
    assert at(stack_release(planned("dev"))["inputs"]["values"], path) == SYSTEM


@pytest.mark.parametrize("key", ["dev", "prod"])
def test_node_exporter_tolerates_every_taint_gpu_pools_carry(planned, key):
    tolerations = at(stack_release(planned(key))["inputs"]["values"], "prometheus-node-exporter.tolerations")
    taints = [(names.GPU_TAINT_KEY, names.GPU_TAINT_VALUE, "NoSchedule")] + [
        (t.key, t.value, t.effect) for p in spec(key).node_pools for t in p.taints]
    assert all(tolerates(tolerations, *taint) for taint in taints)


def test_node_exporter_tolerates_taints_the_stack_does_not_know_yet():
    tolerations = stack_values(MonitoringSettings.of(spec("dev")))["prometheus-node-exporter"]["tolerations"]
    assert tolerates(tolerations, "any-key", "any-value", "NoExecute")


def test_prometheus_selects_rules_and_service_monitors_whatever_their_labels(planned):
    prom_spec = stack_release(planned("custom-install"))["inputs"]["values"]["prometheus"]["prometheusSpec"]
    assert (prom_spec["ruleSelectorNilUsesHelmValues"], prom_spec["serviceMonitorSelectorNilUsesHelmValues"],
            "ruleSelector" in prom_spec, "serviceMonitorSelector" in prom_spec) == (False, False, False, False)


@pytest.mark.parametrize("key", INSTALL)
def test_grafana_sidecar_loads_dashboards_by_the_spec_label(planned, key):
    sidecar = stack_release(planned(key))["inputs"]["values"]["grafana"]["sidecar"]["dashboards"]
    assert (sidecar["enabled"], sidecar["label"], sidecar["labelValue"]) == (
        True, spec(key).monitoring.prometheus.grafana_dashboard_label, DASHBOARD_LABEL_VALUE)


@pytest.mark.parametrize("label, ksm_label", [(names.GPU_PRESENT_LABEL, alerts.GPU_PRESENT_KSM_LABEL),
                                               (names.GPU_ALLOCATION_LABEL, alerts.GPU_ALLOCATION_KSM_LABEL)])
def test_kube_state_metrics_exports_the_node_labels_the_alerts_read(planned, label, ksm_label):
    allowlist = stack_release(planned("dev"))["inputs"]["values"]["kube-state-metrics"]["metricLabelsAllowlist"]
    exprs = " ".join(r["expr"] for r in alerts.alert_rules(spec("dev").monitoring.alerts))
    assert ksm_label in exprs
    assert any(entry.startswith("nodes=[") and label in entry[7:-1].split(",") for entry in allowlist)


@pytest.mark.parametrize("key", INSTALL)
def test_every_stack_value_set_was_checked_against_the_chart(planned, key):
    unchecked = [p for p in set_keys(stack_release(planned(key))["inputs"]["values"]) if p not in VERIFIED_KEYS]
    assert unchecked == []


def test_the_verified_keys_table_lists_only_keys_that_are_set():
    keys = {k for key in ("dev", "persistent")
            for k in set_keys(stack_values(MonitoringSettings.of(spec(key), "us-east-1")))}
    assert keys == set(VERIFIED_KEYS)


def test_the_charts_own_keys_are_in_its_pinned_values_file():
    version = spec("dev").monitoring.prometheus.chart_version
    values = yaml.safe_load((catalog.UPSTREAM / catalog.KUBE_PROMETHEUS_STACK_VALUES[version]).read_text())
    missing = []
    for key, (chart, _) in VERIFIED_KEYS.items():
        node = values
        for part in key.split(".") if chart == "kube-prometheus-stack" else ():
            if not isinstance(node, dict) or part not in node:
                missing.append(key)
                break
            node = node[part]
    assert missing == []


# --- the PrometheusRule ---

@pytest.mark.parametrize("key", WITH_PROMETHEUS)
def test_rules_live_in_the_prometheus_namespace_with_its_selector_labels(planned, key):
    obj, prom = rule(planned(key))["inputs"], spec(key).monitoring.prometheus
    assert (obj["apiVersion"], obj["kind"], obj["metadata"]["name"], obj["metadata"]["namespace"]) == (
        "monitoring.coreos.com/v1", "PrometheusRule", names.GPU_RULES_NAME, prom.namespace)
    assert prom.selector_labels.items() <= obj["metadata"]["labels"].items()


@pytest.mark.parametrize("key", WITH_PROMETHEUS)
def test_rule_groups_come_from_the_stack_thresholds_and_gpu_prices(planned, key):
    s = spec(key)
    timeouts = {gate.pool: gate.timeout_minutes for _, gate in accepted_pools(s)}
    expected = [*alerts.rule_groups(s.monitoring.alerts, gpu_hourly_cost_by_model(s), (), s.pool_memory_limits(), timeouts),
                *usage_groups(tuple(usage_units(s)), tuple(pool_rates(s)), team_namespaces(s))]
    assert rule(planned(key))["inputs"]["spec"]["groups"] == expected


def test_custom_thresholds_reach_the_rules(planned):
    rules = {(r["alert"], r["labels"]["severity"]): r for g in rule(planned("custom-install"))["inputs"]["spec"]["groups"]
             for r in g["rules"] if "alert" in r}
    assert rules["GpuMemoryNearLimit", "warning"]["expr"].endswith("> 80")
    assert rules["GpuMemoryNearLimit", "critical"]["expr"].endswith("> 97")  # the default critical tier
    assert rules["GpuIdle", "info"]["for"] == "15m"


@pytest.mark.parametrize("key", INSTALL)
def test_rules_and_dashboard_wait_for_the_stack_that_brings_the_crds(planned, key):
    plan = planned(key)
    urn = stack_release(plan)["urn"]
    assert (urn in rule(plan)["options"]["dependsOn"], urn in dashboard_map(plan)["options"]["dependsOn"]) == (True, True)


@pytest.mark.parametrize("key", WITH_PROMETHEUS)
def test_rules_and_dashboard_use_the_cluster_provider(planned, key):
    plan = planned(key)
    operator = resource(plan, RELEASE, "gpu-operator")
    assert rule(plan)["provider"] == dashboard_map(plan)["provider"] == operator["provider"] is not None


# --- the dashboard ConfigMap ---

@pytest.mark.parametrize("key", WITH_PROMETHEUS)
def test_dashboard_configmap_carries_the_sidecar_label_in_the_prometheus_namespace(planned, key):
    meta, prom = dashboard_map(planned(key))["inputs"]["metadata"], spec(key).monitoring.prometheus
    assert (meta["namespace"], meta["labels"][prom.grafana_dashboard_label]) == (prom.namespace, DASHBOARD_LABEL_VALUE)


@pytest.mark.parametrize("key", ["dev", "custom-install"])
def test_dashboard_json_follows_the_stack_thresholds(planned, key):
    data = dashboard_map(planned(key))["inputs"]["data"]
    assert json.loads(data[FILE_NAME]) == dashboard(spec(key).monitoring.alerts)


@pytest.mark.parametrize("key", INSTALL)
def test_namespace_and_dashboard_are_valid_kubernetes_objects(planned, key):
    plan, version = planned(key), spec(key).cluster.kubernetes_version
    for obj in (resource(plan, NAMESPACE, "monitoring-namespace"), dashboard_map(plan)):
        kubernetes_validate.validate(obj["inputs"], version, strict=True)


# --- the exporter side, set through the GPU Operator's values ---

def exporter(plan):
    return resource(plan, RELEASE, "gpu-operator")["inputs"]["values"]["dcgmExporter"]


@pytest.mark.parametrize("key", WITH_PROMETHEUS)
def test_exporter_service_monitor_is_on_with_the_stack_selector_labels(planned, key):
    monitor = exporter(planned(key))["serviceMonitor"]
    assert (monitor["enabled"], monitor["additionalLabels"]) == (True, spec(key).monitoring.prometheus.selector_labels)


@pytest.mark.parametrize("key", WITHOUT)
def test_exporter_service_monitor_is_off_without_prometheus_operator_crds(planned, key):
    assert exporter(planned(key))["serviceMonitor"]["enabled"] is False


@pytest.mark.parametrize("key", ["dev", "none"])
def test_metrics_csv_is_created_once_by_the_operator_chart(planned, key):
    plan = planned(key)
    own = [r for r in resources(plan, CONFIGMAP)
           if (r["inputs"].get("metadata") or {}).get("name") == names.DCGM_METRICS_CONFIGMAP]
    config = exporter(plan)["config"]
    assert (own, config["name"], config["create"]) == ([], names.DCGM_METRICS_CONFIGMAP, True)


# --- which namespaces' monitors the platform's Prometheus picks up ---

@pytest.mark.parametrize("key", ["dev", "prod"])
def test_prometheus_picks_up_monitors_only_in_the_platform_s_and_the_teams_namespaces(planned, key):
    plan, s = planned(key), spec(key)
    spec_values = stack_release(plan)["inputs"]["values"]["prometheus"]["prometheusSpec"]
    selectors = [spec_values["serviceMonitorNamespaceSelector"], spec_values["podMonitorNamespaceSelector"]]
    assert selectors[0] == selectors[1] and set(selectors[0]) == {"matchLabels"}
    assert spec_values["podMonitorSelectorNilUsesHelmValues"] is False  # a team's PodMonitor needs no release label
    wanted = selectors[0]["matchLabels"].items()
    selected = {r["inputs"]["metadata"]["name"] for r in resources(plan, NAMESPACE)
                if wanted <= (r["inputs"]["metadata"].get("labels") or {}).items()}
    platform = {s.monitoring.prometheus.namespace, s.gpu_operator.namespace}
    if s.queueing.enabled:
        platform.add(s.queueing.namespace)
    if s.logging.enabled:  # Fluent Bit's counters of GPU failure lines
        platform.add(s.logging.namespace)
    assert selected == platform | {names.team_namespace(t.name) for t in s.teams}


def test_kube_state_metrics_exports_the_queue_label_the_job_history_reads(planned):
    from gpu_platform.facts import names as n
    from gpu_platform.render import usage_report
    from gpu_platform.render.alert_rule import ksm_name

    allowlist = stack_release(planned("dev"))["inputs"]["values"]["kube-state-metrics"]["metricLabelsAllowlist"]
    assert f"jobs=[{n.KUEUE_QUEUE_NAME_LABEL}]" in allowlist
    assert usage_report.QUEUE_LABEL == f"label_{ksm_name(n.KUEUE_QUEUE_NAME_LABEL)}"
