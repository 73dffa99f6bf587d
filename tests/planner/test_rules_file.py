"""`gpu-platform plan --out`: the Prometheus rules file, checked with promtool and held equal to the rules
the cluster gets (the plan's PrometheusRule) and to the pure layer's rules for the stack."""
import json
import shutil
import subprocess

import pytest
import yaml

from gpu_platform.decisions.acceptance import accepted_pools
from gpu_platform.decisions.cost import gpu_hourly_cost_by_model
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.planner import rules_file
from gpu_platform.planner.sections import PlanContext
from gpu_platform.render import alerts
from gpu_platform.decisions.serving import plans
from gpu_platform.render.log_alerts import log_rule_group
from gpu_platform.render.serving_scaling import rule_group as serving_rules
from gpu_platform.render.monitoring import MonitoringSettings, gpu_rule_groups
from gpu_platform.decisions.usage import pool_rates, team_namespaces, usage_units
from gpu_platform.render.usage_rules import usage_groups
from tests.support.stacks import AS_OF, resources, stack_platform, without_services, write_stack

RULE = rules_file.PROMETHEUS_RULE


def with_monitoring(**monitoring):
    def build():
        p = stack_platform("dev")
        p["monitoring"] = {**monitoring, "alerting": p["monitoring"]["alerting"]}  # the team's routes name its receivers
        if monitoring.get("enabled") is False or monitoring.get("prometheus", {}).get("mode") == "none":
            without_services(p)  # services scale on Prometheus
        return p
    return build


PLATFORMS = {
    "dev": lambda: stack_platform("dev"),
    "prod": lambda: stack_platform("prod"),
    "existing": with_monitoring(prometheus={"mode": "existing", "selectorLabels": {"prometheus": "main"}}),
    "custom": with_monitoring(alerts={"memoryUsedPercent": 85, "temperatureCelsius": 78, "idleUtilizationPercent": 5,
                                      "idleMinutes": 20, "notDetectedMinutes": 15}),
    "none": with_monitoring(prometheus={"mode": "none"}, alerts={"idleMinutes": 45}),
    "disabled": with_monitoring(enabled=False),
}
WITH_RULE = ("dev", "prod", "existing", "custom")


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """(plan JSON, --out directory) of each platform, planned once per module."""
    from gpu_platform.planner.cli import main

    cache: dict[str, tuple[dict, object]] = {}

    def run(key: str):
        if key not in cache:
            folder = tmp_path_factory.mktemp(key)
            cfg = write_stack(folder / "Pulumi.test.yaml", PLATFORMS[key]())
            try:
                code = main(["plan", "--config", str(cfg), "--json", str(folder / "plan.json"),
                             "--out", str(folder / "out"), "--as-of", AS_OF])
            except SystemExit as exit_:
                code = exit_.code
            assert code == 0, f"plan of {key} exited {code}"
            cache[key] = (json.loads((folder / "plan.json").read_text()), folder / "out")
        return cache[key]

    return run




def spec(key):
    return parse_platform(PLATFORMS[key]())


def rules_path(key, written):
    return written(key)[1] / rules_file.PATH


def groups_in(path):
    return yaml.safe_load(path.read_text())["groups"]


# --- what is written ---

@pytest.mark.parametrize("key", WITH_RULE)
def test_rules_file_holds_the_groups_of_the_plans_prometheus_rule(written, key):
    plan, _ = written(key)
    # the GPU alerts, the log pipeline's alerts counted from logs, then the model servers' alerts
    gpu, logs, served = resources(plan, RULE)
    assert groups_in(rules_path(key, written)) == (gpu["inputs"]["spec"]["groups"] + logs["inputs"]["spec"]["groups"]
                                                   + served["inputs"]["spec"]["groups"])


@pytest.mark.parametrize("key", WITH_RULE)
def test_rules_file_equals_the_pure_rules_for_the_stacks_thresholds_and_prices(written, key):
    s = spec(key)
    timeouts = {gate.pool: gate.timeout_minutes for _, gate in accepted_pools(s)}
    expected = yaml.safe_load(alerts.rules_file(s.monitoring.alerts, gpu_hourly_cost_by_model(s), (),
                                                s.pool_memory_limits(), timeouts))
    expected["groups"] += usage_groups(tuple(usage_units(s)), tuple(pool_rates(s)), team_namespaces(s))
    expected["groups"].append(log_rule_group(alerts.gpu_nodes()))  # logging is on in every stack here
    expected["groups"].append(serving_rules(plans(s)))  # every stack here serves a model
    assert yaml.safe_load(rules_path(key, written).read_text()) == expected


def test_without_a_prometheus_operator_the_file_is_built_from_the_spec(written):
    plan, _ = written("none")
    assert resources(plan, RULE) == []
    assert groups_in(rules_path("none", written)) == gpu_rule_groups(MonitoringSettings.of(spec("none")))


def test_without_a_prometheus_operator_the_file_says_where_it_came_from(written):
    assert "mode is none" in rules_path("none", written).read_text().splitlines()[0]


def test_disabled_monitoring_writes_no_rules_file(written):
    _, out = written("disabled")
    assert (out / rules_file.PATH).exists() is False


def test_the_out_marker_lists_the_rules_file_so_the_next_run_replaces_it(written):
    _, out = written("dev")
    from gpu_platform.planner.outputs import MARKER

    assert rules_file.PATH in (out / MARKER).read_text().split()


# --- the file as Prometheus reads it ---

@pytest.mark.parametrize("key", ["dev", "prod", "none"])
def test_promtool_accepts_the_written_rules_file(written, promtool, key):
    path = rules_path(key, written)
    result = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def firing(alertname: str, labels: dict, minute: int, fires: bool) -> dict:
    """A promql test: the alert is (or is not) firing with exactly these labels at `minute`."""
    selector = f'ALERTS{{alertname="{alertname}", alertstate="firing"}}'
    sample = ",".join(f'{k}="{v}"' for k, v in {"alertname": alertname, "alertstate": "firing", **labels}.items())
    return {"expr": selector, "eval_time": f"{minute}m",
            "exp_samples": [{"labels": f"ALERTS{{{sample}}}", "value": 1}] if fires else []}


def test_written_rules_fire_on_synthetic_dcgm_series_at_the_stacks_thresholds(written, promtool, tmp_path):
    """The dev stack's file as written: an idle A10G alerts with the stack's price once idleMinutes
    have passed, a GPU at the temperature threshold stays silent and one degree above it alerts."""
    s, t = spec("dev"), spec("dev").monitoring.alerts
    [a10g_price] = [r["labels"][alerts.COST_LABEL] for r in alerts.cost_rules(gpu_hourly_cost_by_model(s))
                    if r["labels"]["modelName"] == "NVIDIA A10G"]
    gpu = {"gpu": "0", "UUID": "GPU-1", "modelName": "NVIDIA A10G", "Hostname": "node-a"}
    hot = {**gpu, "UUID": "GPU-2", "Hostname": "node-b"}
    at_limit = {**gpu, "UUID": "GPU-3", "Hostname": "node-c"}

    def series(metric, labels, value):
        inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
        return {"series": f"{metric}{{{inner}}}", "values": f"{value:g}x90"}

    idle_labels = {**gpu, "node": "node-a", "severity": "info", alerts.COST_LABEL: a10g_price}
    hot_labels = {**hot, "node": "node-b", "severity": "warning"}
    test = {
        "interval": "1m",
        "input_series": [
            series("DCGM_FI_DEV_GPU_UTIL", gpu, t.idle_utilization_percent - 1),
            series("DCGM_FI_DEV_GPU_TEMP", hot, t.temperature_celsius + 1),
            series("DCGM_FI_DEV_GPU_TEMP", at_limit, t.temperature_celsius),
        ],
        "promql_expr_test": [
            firing("GpuIdle", idle_labels, t.idle_minutes - 1, False),
            firing("GpuIdle", idle_labels, t.idle_minutes, True),
            firing("GpuTemperatureHigh", hot_labels, t.temperature_for_minutes - 1, False),
            firing("GpuTemperatureHigh", hot_labels, 60, True),
        ],
    }
    shutil.copy(rules_path("dev", written), tmp_path / "gpu-rules.yaml")
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(
        {"rule_files": ["gpu-rules.yaml"], "evaluation_interval": "1m", "tests": [test]}, sort_keys=False))
    result = subprocess.run([promtool, "test", "rules", "tests.yaml"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


# --- the writer itself ---

def context(*rules) -> PlanContext:
    return PlanContext(plan={"resources": list(rules)}, recording=None, stack=None, platform=None, spec=None)


def prometheus_rule(name, groups):
    return {"type": RULE, "name": name, "inputs": {"metadata": {"name": name, "namespace": "monitoring"},
                                                   "spec": {"groups": groups}}}


def test_rules_of_every_prometheus_rule_in_the_plan_are_written():
    a = {"name": "a", "rules": [{"record": "x:a", "expr": "vector(1)"}]}
    b = {"name": "b", "rules": [{"record": "x:b", "expr": "vector(2)"}]}
    [text] = rules_file.rules_files(context(prometheus_rule("one", [a]), prometheus_rule("two", [b]))).values()
    assert yaml.safe_load(text)["groups"] == [a, b]


def test_no_prometheus_rule_and_no_spec_writes_nothing():
    assert rules_file.rules_files(context()) == {}


def test_rules_are_written_in_prometheus_key_order():
    engine_order = {"annotations": {"summary": "s"}, "expr": "up == 0", "for": "5m", "labels": {"severity": "x"},
                    "alert": "A"}
    [group] = yaml.safe_load(rules_file.dump([{"rules": [engine_order], "name": "g"}]))["groups"]
    assert (list(group), list(group["rules"][0])) == (["name", "rules"], ["alert", "expr", "for", "labels", "annotations"])
