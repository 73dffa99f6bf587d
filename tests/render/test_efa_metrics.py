"""The EFA collector's objects (render/efa_metrics.py): Kubernetes' schema strictly, the PodMonitor against the
pinned Prometheus operator CRD, where and how unprivileged the collector runs, and what the PodMonitor scrapes."""
from __future__ import annotations

import kubernetes_validate
import pytest

from gpu_platform.decisions.efa import efa_pools
from gpu_platform.decisions.tolerations import tolerates
from gpu_platform.facts import catalog, names
from gpu_platform.render import efa_exporter
from gpu_platform.render import efa_metrics as r
from gpu_platform.render.monitoring import efa_metrics_wanted
from tests.support.crd_schemas import schema_problems
from tests.support.stacks import spec_of, without_services

CRDS = "prometheus-operator-kube-prometheus-stack-79.5.0"


@pytest.fixture(scope="module")
def prod():
    spec = spec_of("prod")
    return spec, {o["kind"]: o for o in r.efa_metrics_manifests(spec)}


def _with_pool_taint(platform: dict) -> None:
    for pool in platform["nodePools"]:
        if pool.get("efa"):
            pool["taints"] = [*pool.get("taints", []), {"key": "team", "value": "train", "effect": "NoExecute"}]


def test_every_object_validates_strictly(prod):
    spec, objects = prod
    assert list(objects) == ["ConfigMap", "DaemonSet", "PodMonitor"]
    for kind in ("ConfigMap", "DaemonSet"):
        kubernetes_validate.validate(objects[kind], spec.cluster.kubernetes_version, strict=True)
    assert schema_problems(CRDS, objects["PodMonitor"]) == []


def test_a_misspelt_pod_monitor_field_fails_the_crd():
    (_, _, monitor) = r.efa_metrics_manifests(spec_of("prod"))
    monitor["spec"]["podMetricsEndpoints"][0]["relabellings"] = []
    assert schema_problems(CRDS, monitor) != []


def test_it_runs_the_shipped_script_on_the_one_python_image(prod):
    _, objects = prod
    assert objects["ConfigMap"]["data"] == {r.SCRIPT_KEY: r.exporter_source()}
    assert r.exporter_source().startswith('"""The EFA collector')
    [container] = objects["DaemonSet"]["spec"]["template"]["spec"]["containers"]
    assert container["image"] == catalog.PYTHON_IMAGE
    assert container["command"] == ["python3", f"{r.SCRIPT_DIR}/{r.SCRIPT_KEY}"]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["COUNTERS"].split(",") == list(catalog.EFA_PORT_COUNTERS)
    assert (env["SYS_ROOT"], env["PORT"]) == (r.SYS_MOUNT, str(r.PORT))


def test_it_runs_only_on_efa_nodes_through_every_taint_they_carry():
    spec = spec_of("prod", _with_pool_taint)
    pod = r.daemonset(spec)["spec"]["template"]["spec"]
    assert pod["nodeSelector"] == {names.EFA_LABEL: "true"}
    held = pod["tolerations"]
    assert tolerates(held, names.GPU_TAINT_KEY, names.GPU_TAINT_VALUE, "NoSchedule")
    assert tolerates(held, names.ACCEPTANCE_TAINT_KEY, names.ACCEPTANCE_TAINT_VALUE, names.ACCEPTANCE_TAINT_EFFECT)
    assert tolerates(held, "team", "train", "NoExecute")
    assert not tolerates(held, "other", "x", "NoSchedule")  # no blanket toleration: EFA nodes only
    assert efa_pools(spec)


def test_it_is_unprivileged_and_reads_sys_read_only(prod):
    _, objects = prod
    pod = objects["DaemonSet"]["spec"]["template"]["spec"]
    [container] = pod["containers"]
    ctx = container["securityContext"]
    assert ctx["runAsNonRoot"] and ctx["readOnlyRootFilesystem"] and not ctx["allowPrivilegeEscalation"]
    assert ctx["capabilities"] == {"drop": ["ALL"]} and "privileged" not in ctx
    assert not pod.get("hostNetwork") and not pod.get("hostPID") and pod["automountServiceAccountToken"] is False
    assert all(m["readOnly"] for m in container["volumeMounts"])
    host = [v for v in pod["volumes"] if "hostPath" in v]
    assert host == [{"name": "sys", "hostPath": {"path": "/sys", "type": "Directory"}}]
    assert container["resources"]["limits"] == {"cpu": "100m", "memory": "64Mi"}


def test_the_pod_monitor_scrapes_the_collector_s_port_and_names_the_node(prod):
    spec, objects = prod
    monitor, ds = objects["PodMonitor"], objects["DaemonSet"]
    assert monitor["metadata"]["namespace"] == spec.monitoring.prometheus.namespace  # where monitors are read
    assert monitor["metadata"]["labels"] == {"release": "kube-prometheus-stack",
                                             names.MANAGED_BY_LABEL: names.MANAGED_BY}
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [ds["metadata"]["namespace"]]}
    pod_labels = ds["spec"]["template"]["metadata"]["labels"]
    assert monitor["spec"]["selector"]["matchLabels"].items() <= pod_labels.items()
    [endpoint] = monitor["spec"]["podMetricsEndpoints"]
    [container] = ds["spec"]["template"]["spec"]["containers"]
    assert {"name": endpoint["port"], "containerPort": r.PORT, "protocol": "TCP"} in container["ports"]
    assert {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node",
            "action": "replace"} in endpoint["relabelings"]
    assert endpoint["interval"] == f"{catalog.PROMETHEUS_SCRAPE_INTERVAL_SECONDS}s"


def test_the_metric_names_are_the_script_s():
    assert r.EFA_METRICS == {efa_exporter.metric_name(c) for c in catalog.EFA_PORT_COUNTERS} | {
        "gpu_platform_efa_devices"}
    assert all(m.endswith("_total") for m in r.EFA_METRICS - {efa_exporter.DEVICES_METRIC})


def _without_prometheus(platform: dict) -> None:
    platform["monitoring"]["prometheus"] = {"mode": "none"}
    platform["monitoring"].pop("usageReport")  # the report queries Prometheus
    without_services(platform)  # services scale on Prometheus


def _existing_prometheus(platform: dict) -> None:
    platform["monitoring"]["prometheus"] = {"mode": "existing", "namespace": "observability",
                                            "selectorLabels": {"prometheus": "main"}}
    platform["monitoring"]["usageReport"]["prometheusUrl"] = "http://prometheus-operated.observability.svc:9090"


def test_only_stacks_with_efa_pools_and_a_prometheus_get_it():
    assert r.efa_metrics_manifests(spec_of("dev")) == [] and not efa_pools(spec_of("dev"))
    assert r.efa_metrics_manifests(spec_of("prod", _without_prometheus)) == []
    for stack in ("prod", "karpenter", "training-blackwell", "training-ultraserver"):
        assert efa_metrics_wanted(spec_of(stack)), stack


def test_an_existing_prometheus_gets_the_monitor_in_its_namespace_with_its_labels():
    monitor = r.pod_monitor(spec_of("prod", _existing_prometheus))
    assert monitor["metadata"]["namespace"] == "observability"
    assert monitor["metadata"]["labels"]["prometheus"] == "main"


def test_a_changed_script_rolls_the_collector_pods(prod, monkeypatch):
    _, objects = prod
    digest = objects["DaemonSet"]["spec"]["template"]["metadata"]["annotations"][names.SCRIPT_DIGEST_ANNOTATION]
    monkeypatch.setattr(r, "exporter_source", lambda: "print('a newer collector')\n")
    changed = r.daemonset(spec_of("prod"))["spec"]["template"]["metadata"]["annotations"]
    assert len(digest) == 64 and changed[names.SCRIPT_DIGEST_ANNOTATION] != digest
