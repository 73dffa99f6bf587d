"""What scales and watches a team's servers: KEDA's values are keys of its pinned chart, each ScaledObject fits
KEDA's CRD (schema, strict, and its CEL rules), the queries read metrics the pinned vLLM exports, the team's own
admission policies admit the servers, and the serving alerts fire on broken servers, stay silent on healthy
ones (promtool) and reach the team (amtool)."""
import copy
import subprocess

import pytest
import yaml

from gpu_platform.decisions.serving import plans
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, serving
from gpu_platform.render import admission, serving_scaling as scaling
from gpu_platform.render.alert_routing import alertmanager_config
from gpu_platform.render.monitoring import MonitoringSettings
from gpu_platform.render.serving import deployment, prefetch_job
from tests.support.admission import applies, denials
from tests.support.chart_values import key_paths
from tests.support.crd_schemas import schema_problems
from tests.support.kueue_crds import cel_problems, rule_count
from tests.support.stacks import spec_of, stack_platform

KEDA = serving.KEDA_CRDS


@pytest.fixture(params=["dev", "prod"])
def planned(request):
    spec = spec_of(request.param)
    [plan] = plans(spec)
    return spec, plan


def test_keda_values_are_keys_of_the_pinned_chart():
    chart = yaml.safe_load((catalog.UPSTREAM / f"keda-values-{serving.KEDA_CHART_VERSION}.yaml").read_text())
    values = scaling.keda_values({"gpu-platform.io/role": "system"})
    assert chart["nodeSelector"] == {}  # a free-form map: its keys are the caller's
    assert key_paths({**values, "nodeSelector": {}}) - key_paths(chart) == set()
    assert values["nodeSelector"] == {"gpu-platform.io/role": "system"}


def test_each_scaled_object_fits_kedas_crd_strictly(planned):
    spec, plan = planned
    obj = scaling.scaled_object(plan, "monitoring")
    assert schema_problems(KEDA, obj) == []
    assert rule_count(KEDA, obj) >= 1 and cel_problems(KEDA, obj) == []


def test_the_crd_check_refuses_what_keda_would():
    spec = spec_of("prod")
    [plan] = plans(spec)
    obj = scaling.scaled_object(plan, "monitoring")
    bad = copy.deepcopy(obj)
    bad["spec"]["minReplicaCount"] = 5  # above maxReplicaCount: KEDA's CEL rule
    assert cel_problems(KEDA, bad)
    bad = copy.deepcopy(obj)
    bad["spec"]["triggers"][0]["metricTyp"] = "Value"
    assert schema_problems(KEDA, bad)


def test_replicas_agree_with_the_service_and_scale_on_its_queue_and_gpus(planned):
    spec, plan = planned
    s = scaling.scaled_object(plan, "monitoring")["spec"]
    assert (s["minReplicaCount"], s["maxReplicaCount"]) == (plan.service.replicas.min, plan.service.replicas.max)
    queue, gpu = s["triggers"]
    assert queue["metadata"]["query"] == (f'sum(vllm:num_requests_waiting{{namespace="research",'
                                          f'model_name="{plan.service.name}"}})')
    assert queue["metricType"] == "AverageValue" and queue["metadata"]["threshold"] == "4"
    assert "DCGM_FI_DEV_GPU_UTIL" in gpu["metadata"]["query"] and gpu["metadata"]["threshold"] == "80"
    assert queue["metadata"]["serverAddress"] == "http://prometheus-operated.monitoring.svc:9090"


def test_time_to_first_token_scales_on_its_p90():
    def ttft(platform):
        platform["teams"][0]["services"][0]["autoscaling"] = {"signal": "ttft", "target": 1.5}
    spec = spec_of("prod", ttft)
    [plan] = plans(spec)
    obj = scaling.scaled_object(plan, "monitoring")
    trigger = obj["spec"]["triggers"][0]
    assert trigger["metricType"] == "Value" and trigger["metadata"]["threshold"] == "1.5"
    assert "histogram_quantile(0.9" in trigger["metadata"]["query"]
    assert schema_problems(KEDA, obj) == [] and cel_problems(KEDA, obj) == []


def test_every_vllm_metric_read_is_one_the_pinned_version_exports(planned):
    spec, plan = planned
    exported = serving.RUNTIMES["vllm"].metric_names
    texts = [t["metadata"]["query"] for t in scaling.scaled_object(plan, "m")["spec"]["triggers"]]
    texts += [r["expr"] for r in scaling.service_alerts(plan)]
    import re
    used = {m for t in texts for m in re.findall(r"vllm:[a-z_]+", t)}
    assert used and {m.removesuffix("_bucket") for m in used} <= exported


def test_autoscaling_needs_a_prometheus():
    platform = stack_platform("dev")
    platform["monitoring"]["prometheus"] = {"mode": "none"}
    platform["monitoring"].pop("alerting")
    platform["teams"][0].pop("alerting")
    from tests.support.stacks import only_spec_problem
    only_spec_problem(platform, "teams[0].services[0].autoscaling")


def test_the_teams_admission_policies_admit_the_server_the_prefetch_and_the_monitor(planned):
    spec, plan = planned
    namespace = {"metadata": {"name": "research", "labels": {"gpu-platform.io/team": "research",
                                                             "gpu-platform.io/priority-tier": "standard"}}}
    pods = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "research", **m["spec"]["template"]["metadata"]},
             "spec": m["spec"]["template"]["spec"]} for m in (deployment(spec, plan), prefetch_job(spec, plan))]
    monitor = scaling.pod_monitor(plan, {"release": "kube-prometheus-stack"})
    requests = [(pod, "", "pods") for pod in pods] + [(monitor, "monitoring.coreos.com", "podmonitors")]
    checked = 0
    for build in admission.POLICIES.values():
        policy = build()
        for obj, group, resource in requests:
            if applies(policy, admission.binding(policy), group=group, resource=resource, operation="CREATE",
                       namespace=namespace):
                checked += 1
                assert denials(policy, obj, namespace) == [], (policy["metadata"]["name"], obj["kind"])
    assert checked >= 5  # the GPU-node, device, tier and queue rules on both pods, the monitor rule on the monitor


# --- alerts: promtool proves each fires on a broken server and stays silent on a healthy one ---

SERVER = {"namespace": "research", "model_name": "qwen3-8b"}


def _rules_file(tmp_path):
    [plan] = plans(spec_of("prod"))
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": [scaling.rule_group([plan])]}, sort_keys=False))
    return plan


def _series(metric, labels, values):
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{metric}{{{inner}}}", "values": values}


def _ttft_buckets(slow: bool):
    """Histogram buckets rising at 10 requests a minute: all under 0.5 s, or all between 5 and 10 s."""
    out = []
    for le in ("0.5", "5", "10", "+Inf"):
        fast_count = "0+10x60"
        counts = ("0x60" if le in ("0.5", "5") else fast_count) if slow else fast_count
        out.append(_series("vllm:time_to_first_token_seconds_bucket", {**SERVER, "le": le}, counts))
    return out


BROKEN_VALUES = {"ServingTimeToFirstTokenHigh": "9.5", "ServingQueueDeep": "25", "ServingKvCacheFull": "99"}


def _expected(name, severity, plan):
    rule = next(r for r in scaling.service_alerts(plan) if r["alert"] == name)
    value = BROKEN_VALUES.get(name, "")
    description = rule["annotations"]["description"].replace("{{ $value | humanize }}", value).replace(
        "{{ $value }}", value)
    return {"exp_labels": {**({"deployment": "qwen3-8b"} if name == "ServingReplicasAtMax" else SERVER),
                           "namespace": "research", "severity": severity},
            "exp_annotations": {**rule["annotations"], "description": description}}


def _promtool(promtool, tmp_path, tests):
    spec = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": tests}
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = subprocess.run([promtool, "test", "rules", "tests.yaml"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    return result


def _checks(plan, broken: bool):
    at = "40m"
    names = [("ServingTimeToFirstTokenHigh", "critical"), ("ServingQueueDeep", "high"), ("ServingKvCacheFull", "high"),
             ("ServingReplicasAtMax", "high")]
    return [{"eval_time": at, "alertname": n, "exp_alerts": [_expected(n, sev, plan)] if broken else []}
            for n, sev in names]


def _inputs(broken: bool):
    deployment_labels = {"namespace": "research", "deployment": "qwen3-8b"}
    return [*_ttft_buckets(slow=broken),
            _series("vllm:num_requests_waiting", {**SERVER, "pod": "qwen3-8b-a-1"}, "25x60" if broken else "2x60"),
            _series("vllm:kv_cache_usage_perc", {**SERVER, "pod": "qwen3-8b-a-1"}, "0.99x60" if broken else "0.6x60"),
            _series("kube_deployment_spec_replicas", deployment_labels, "2x60" if broken else "1x60")]


def test_serving_alerts_fire_on_a_broken_server(promtool, tmp_path):
    plan = _rules_file(tmp_path)
    result = _promtool(promtool, tmp_path, [{"interval": "1m", "input_series": _inputs(True),
                                              "alert_rule_test": _checks(plan, True)}])
    assert result.returncode == 0, result.stdout + result.stderr


def test_serving_alerts_stay_silent_on_a_healthy_server(promtool, tmp_path):
    plan = _rules_file(tmp_path)
    result = _promtool(promtool, tmp_path, [{"interval": "1m", "input_series": _inputs(False),
                                              "alert_rule_test": _checks(plan, False)}])
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_would_catch_a_silent_rule(promtool, tmp_path):
    """The check itself: expecting a broken server's alerts from a healthy one fails."""
    plan = _rules_file(tmp_path)
    result = _promtool(promtool, tmp_path, [{"interval": "1m", "input_series": _inputs(False),
                                              "alert_rule_test": _checks(plan, True)}])
    assert result.returncode != 0


def test_promtool_checks_the_rules(promtool, tmp_path):
    _rules_file(tmp_path)
    result = subprocess.run([promtool, "check", "rules", "rules.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(("stack", "alert", "severity", "receiver"), [
    ("dev", "ServingTimeToFirstTokenHigh", "critical", "research-chat"),
    ("prod", "ServingTimeToFirstTokenHigh", "critical", "research-chat"),
])
def test_serving_alerts_reach_the_team(amtool, tmp_path, stack, alert, severity, receiver):
    config = alertmanager_config(MonitoringSettings.of(parse_platform(stack_platform(stack))))
    path = tmp_path / "alertmanager.yaml"
    path.write_text(yaml.safe_dump(config))
    result = subprocess.run([amtool, "config", "routes", "test", f"--config.file={path}", f"alertname={alert}",
                             f"severity={severity}", "namespace=research", "model_name=x"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == receiver
