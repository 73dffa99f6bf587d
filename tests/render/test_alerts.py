"""GPU alert rules, checked by promtool: syntax (`check rules`) and behaviour (`test rules`).

The promtool unit-test files are built (promtool_rules.py) from the same thresholds object the rules are built from,
so moving a threshold moves the input series and evaluation times; the expected labels and summaries
are written out as the alert must show them.
"""
from __future__ import annotations

import re
import subprocess

import pytest
import yaml

from gpu_platform.render import alerts, capacity_alerts
from gpu_platform.render import usage_alerts
from gpu_platform.render.dcgm_metrics import collected_fields, metrics_in
from tests.render.promtool_rules import LONG, PRICES, WORKLOAD, at_percent, description, fb, fired, flat, gpu, group, humanize, run

# --- promtool check rules ---

@pytest.mark.parametrize("prices", [PRICES, {}], ids=["priced", "no-prices"])
def test_promtool_accepts_the_rules_file(promtool, tmp_path, t, prices):
    path = tmp_path / "rules.yaml"
    path.write_text(alerts.rules_file(t, prices))
    result = subprocess.run([promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


# --- GpuMemoryNearLimit ---


def memory_summary(node: str, percent: float, t, workload: str = "") -> str:
    return (f"GPU 0 (NVIDIA A10G, GPU-{node}-0) on node {node} has {humanize(percent)}% of its memory in use"
            f" (limit {t.memory_used_percent:g}%){workload}.")


def test_memory_alert_fires_just_over_the_threshold_once_for_has_elapsed(promtool, tmp_path, t):
    series = fb("node-a", at_percent(t, +1), **WORKLOAD)
    labels = {**gpu("node-a", **WORKLOAD), "node": "node-a", "severity": "warning"}
    alert = fired(labels, memory_summary("node-a", t.memory_used_percent + 0.01, t,
                                         ", used by pod research/train-0"), "GpuMemoryNearLimit")
    checks = [(t.memory_for_minutes, "GpuMemoryNearLimit", [alert])]
    if t.memory_for_minutes:
        checks.insert(0, (t.memory_for_minutes - 1, "GpuMemoryNearLimit", []))
    run(promtool, tmp_path, t, [group(series, checks)])


def test_memory_alert_stays_silent_at_and_under_the_threshold(promtool, tmp_path, t):
    series = fb("node-a", at_percent(t)) + fb("node-b", at_percent(t, -1))
    run(promtool, tmp_path, t, [group(series, [(LONG, "GpuMemoryNearLimit", [])])])


def test_memory_alert_stays_silent_when_usage_drops_before_for_elapses(promtool, tmp_path, t):
    minutes = t.memory_for_minutes
    series = fb("node-a", at_percent(t, +500), minutes=minutes - 1, after=f"{at_percent(t, -500)}x{LONG}")
    checks = [(m, "GpuMemoryNearLimit", []) for m in (minutes, minutes + 1, LONG)]
    run(promtool, tmp_path, t, [group(series, checks)])


# --- GpuTemperatureHigh ---

def temp_summary(node: str, celsius: float, t, idx: int = 0) -> str:
    return (f"GPU {idx} (NVIDIA A10G, GPU-{node}-{idx}) on node {node} is at {celsius:g} C, above"
            f" {t.temperature_celsius:g} C for {t.temperature_for_minutes}m.")


def test_temperature_alert_fires_one_degree_over_once_for_has_elapsed(promtool, tmp_path, t):
    hot = t.temperature_celsius + 1
    series = [("DCGM_FI_DEV_GPU_TEMP", gpu("node-a"), flat(hot))]
    alert = fired({**gpu("node-a"), "node": "node-a", "severity": "warning"},
                  temp_summary("node-a", hot, t), "GpuTemperatureHigh")
    checks = [(t.temperature_for_minutes - 1, "GpuTemperatureHigh", []),
              (t.temperature_for_minutes, "GpuTemperatureHigh", [alert])]
    run(promtool, tmp_path, t, [group(series, checks)])


def test_temperature_alert_stays_silent_at_and_under_the_threshold(promtool, tmp_path, t):
    series = [("DCGM_FI_DEV_GPU_TEMP", gpu("node-a"), flat(t.temperature_celsius)),
              ("DCGM_FI_DEV_GPU_TEMP", gpu("node-b"), flat(t.temperature_celsius - 1))]
    run(promtool, tmp_path, t, [group(series, [(LONG, "GpuTemperatureHigh", [])])])


def test_temperature_alert_stays_silent_when_the_gpu_cools_before_for_elapses(promtool, tmp_path, t):
    minutes = t.temperature_for_minutes
    values = f"{t.temperature_celsius + 5:g}x{minutes - 1} {t.temperature_celsius - 5:g}x{LONG}"
    series = [("DCGM_FI_DEV_GPU_TEMP", gpu("node-a"), values)]
    checks = [(m, "GpuTemperatureHigh", []) for m in (minutes, minutes + 1, LONG)]
    run(promtool, tmp_path, t, [group(series, checks)])


def test_temperature_alert_names_the_node_from_either_host_label_spelling(promtool, tmp_path, t):
    hot = t.temperature_celsius + 1
    upper, lower = gpu("node-a"), gpu("node-b", idx=1, host_label="hostname")
    series = [("DCGM_FI_DEV_GPU_TEMP", upper, flat(hot)), ("DCGM_FI_DEV_GPU_TEMP", lower, flat(hot))]
    expected = [fired({**upper, "node": "node-a", "severity": "warning"}, temp_summary("node-a", hot, t),
                      "GpuTemperatureHigh"),
                fired({**lower, "node": "node-b", "severity": "warning"}, temp_summary("node-b", hot, t, idx=1),
                      "GpuTemperatureHigh")]
    run(promtool, tmp_path, t, [group(series, [(LONG, "GpuTemperatureHigh", expected)])])


# --- GpuIdle ---

def idle_summary(node: str, model: str, util: float, t, cost: str, host_workload: str = "") -> str:
    return (f"GPU 0 ({model}, GPU-{node}-0) on node {node} has been below {t.idle_utilization_percent:g}%"
            f" utilisation for {t.idle_minutes}m (now {util:g}%){host_workload}: {cost}.")


def test_idle_alert_fires_after_idle_minutes_with_the_models_hourly_cost(promtool, tmp_path, t):
    low = t.idle_utilization_percent - 1
    labels = gpu("node-a", **WORKLOAD)
    series = [("DCGM_FI_DEV_GPU_UTIL", labels, flat(low))]
    alert = fired({**labels, "node": "node-a", "hourly_cost_usd": "1.01", "severity": "info"},
                  idle_summary("node-a", "NVIDIA A10G", low, t, "estimated $1.01/h", ", used by pod research/train-0"),
                  "GpuIdle")
    checks = [(t.idle_minutes - 1, "GpuIdle", []), (t.idle_minutes, "GpuIdle", [alert])]
    run(promtool, tmp_path, t, [group(series, checks)])


def test_idle_alert_says_cost_unknown_for_a_model_without_a_price(promtool, tmp_path, t):
    low = t.idle_utilization_percent - 1
    labels = gpu("node-l4", model="NVIDIA L4", host_label="hostname")
    series = [("DCGM_FI_DEV_GPU_UTIL", labels, flat(low))]
    alert = fired({**labels, "node": "node-l4", "hourly_cost_usd": "unknown", "severity": "info"},
                  idle_summary("node-l4", "NVIDIA L4", low, t, "cost unknown (no price for this model)"), "GpuIdle")
    run(promtool, tmp_path, t, [group(series, [(LONG, "GpuIdle", [alert])])])


def test_idle_alert_fires_with_cost_unknown_when_no_prices_are_known(promtool, tmp_path, t):
    low = t.idle_utilization_percent - 1
    labels = gpu("node-a")
    series = [("DCGM_FI_DEV_GPU_UTIL", labels, flat(low))]
    alert = fired({**labels, "node": "node-a", "hourly_cost_usd": "unknown", "severity": "info"},
                  idle_summary("node-a", "NVIDIA A10G", low, t, "cost unknown (no price for this model)"), "GpuIdle")
    run(promtool, tmp_path, t, [group(series, [(LONG, "GpuIdle", [alert])])], prices={})


def test_idle_alert_carries_each_models_own_price(promtool, tmp_path, t):
    low = t.idle_utilization_percent - 1
    a10g, h100 = gpu("node-a"), gpu("node-h", model="NVIDIA H100 80GB HBM3", host_label="hostname")
    series = [("DCGM_FI_DEV_GPU_UTIL", a10g, flat(low)), ("DCGM_FI_DEV_GPU_UTIL", h100, flat(low))]
    expected = [
        fired({**a10g, "node": "node-a", "hourly_cost_usd": "1.01", "severity": "info"},
              idle_summary("node-a", "NVIDIA A10G", low, t, "estimated $1.01/h"), "GpuIdle"),
        fired({**h100, "node": "node-h", "hourly_cost_usd": "6.88", "severity": "info"},
              idle_summary("node-h", "NVIDIA H100 80GB HBM3", low, t, "estimated $6.88/h"), "GpuIdle"),
    ]
    run(promtool, tmp_path, t, [group(series, [(LONG, "GpuIdle", expected)])])


def test_idle_alert_stays_silent_at_and_over_the_threshold(promtool, tmp_path, t):
    series = [("DCGM_FI_DEV_GPU_UTIL", gpu("node-a"), flat(t.idle_utilization_percent)),
              ("DCGM_FI_DEV_GPU_UTIL", gpu("node-b", model="NVIDIA L4"), flat(t.idle_utilization_percent + 1))]
    run(promtool, tmp_path, t, [group(series, [(LONG, "GpuIdle", [])])])


def test_idle_alert_stays_silent_when_work_arrives_before_idle_minutes(promtool, tmp_path, t):
    minutes = t.idle_minutes
    values = f"0x{minutes - 1} 95x{LONG}"
    series = [("DCGM_FI_DEV_GPU_UTIL", gpu("node-a"), values)]
    checks = [(m, "GpuIdle", []) for m in (minutes, minutes + 1, LONG)]
    run(promtool, tmp_path, t, [group(series, checks)])


def test_cost_recording_rules_hold_one_price_per_model(promtool, tmp_path, t):
    spec = {"interval": "1m", "input_series": [], "promql_expr_test": [{
        "expr": alerts.HOURLY_COST, "eval_time": "1m",
        "exp_samples": [
            {"labels": 'gpu_platform:gpu_hourly_cost_usd{modelName="NVIDIA A10G",hourly_cost_usd="1.01"}',
             "value": 1.006},
            {"labels": 'gpu_platform:gpu_hourly_cost_usd{modelName="NVIDIA H100 80GB HBM3",hourly_cost_usd="6.88"}',
             "value": 6.88},
        ]}]}
    run(promtool, tmp_path, t, [spec])


# --- GpuXidError ---

def test_xid_alert_fires_on_the_first_nonzero_code_with_the_code_in_the_summary(promtool, tmp_path, t):
    bad, other = gpu("node-a", **WORKLOAD), gpu("node-b", idx=3, host_label="hostname")
    series = [("DCGM_FI_DEV_XID_ERRORS", bad, f"0x4 79x{LONG}"),
              ("DCGM_FI_DEV_XID_ERRORS", other, f"0x9 13x{LONG}")]
    xid79 = fired({**bad, "node": "node-a", "severity": "critical"},
                  "GPU 0 (NVIDIA A10G, GPU-node-a-0) on node node-a reported XID 79, used by pod research/train-0.",
                  "GpuXidError")
    xid13 = fired({**other, "node": "node-b", "severity": "critical"},
                  "GPU 3 (NVIDIA A10G, GPU-node-b-3) on node node-b reported XID 13.", "GpuXidError")
    checks = [(4, "GpuXidError", []), (5, "GpuXidError", [xid79]), (10, "GpuXidError", [xid79, xid13])]
    run(promtool, tmp_path, t, [group(series, checks)])


def test_xid_alert_stays_silent_while_the_code_is_zero(promtool, tmp_path, t):
    series = [("DCGM_FI_DEV_XID_ERRORS", gpu("node-a"), flat(0))]
    run(promtool, tmp_path, t, [group(series, [(LONG, "GpuXidError", [])])])


def test_xid_description_names_the_common_codes():
    text = description("GpuXidError")
    for code in ("13", "31", "48", "79"):
        assert re.search(rf"\b{code}\b", text), code


# --- GpuCudaOom ---

def container(pod: str, name: str = "trainer", namespace: str = "research") -> dict:
    return {"namespace": namespace, "pod": pod, "uid": f"uid-{pod}", "container": name}


def oom_series(pod: str, reason: str, restarts: str, request: tuple[str, str] | None) -> list:
    c = container(pod)
    series = [("kube_pod_container_status_last_terminated_reason", {**c, "reason": reason}, f"_x4 1x{LONG}"),
              ("kube_pod_container_status_restarts_total", c, restarts)]
    if request:
        resource, node = request
        series.append(("kube_pod_container_resource_requests",
                       {**c, "node": node, "resource": resource, "unit": "integer"}, flat(1)))
    return series


RESTART_AT_5 = f"0x4 1x{LONG}"


def oom_alert(pod: str, node: str) -> dict:
    return fired({**container(pod), "reason": "OOMKilled", "node": node, "severity": "high"},
                 f"GPU pod research/{pod} (container trainer) on node {node} was OOMKilled and restarted.",
                 "GpuCudaOom")


def test_oom_alert_fires_when_a_gpu_or_mig_container_restarts_after_oomkilled(promtool, tmp_path, t):
    series = (oom_series("train-0", "OOMKilled", RESTART_AT_5, ("nvidia_com_gpu", "node-a"))
              + oom_series("mig-0", "OOMKilled", RESTART_AT_5, ("nvidia_com_mig_1g_10gb", "node-h")))
    both = [oom_alert("train-0", "node-a"), oom_alert("mig-0", "node-h")]
    checks = [(4, "GpuCudaOom", []), (5, "GpuCudaOom", both), (10, "GpuCudaOom", both)]
    run(promtool, tmp_path, t, [group(series, checks)])


def test_oom_alert_resolves_once_the_restart_leaves_the_window(promtool, tmp_path, t):
    series = oom_series("train-0", "OOMKilled", RESTART_AT_5, ("nvidia_com_gpu", "node-a"))
    window = int(alerts.OOM_WINDOW.rstrip("m"))
    run(promtool, tmp_path, t, [group(series, [(5 + window + 2, "GpuCudaOom", [])])])


def test_oom_alert_ignores_containers_without_gpu_requests(promtool, tmp_path, t):
    series = oom_series("web-0", "OOMKilled", RESTART_AT_5, ("cpu", "node-c"))
    run(promtool, tmp_path, t, [group(series, [(6, "GpuCudaOom", [])])])


def test_oom_alert_ignores_gpu_restarts_for_other_reasons(promtool, tmp_path, t):
    series = oom_series("train-0", "Error", RESTART_AT_5, ("nvidia_com_gpu", "node-a"))
    run(promtool, tmp_path, t, [group(series, [(6, "GpuCudaOom", [])])])


def test_oom_alert_ignores_an_old_oomkill_without_a_new_restart(promtool, tmp_path, t):
    series = oom_series("train-0", "OOMKilled", flat(1), ("nvidia_com_gpu", "node-a"))
    run(promtool, tmp_path, t, [group(series, [(6, "GpuCudaOom", [])])])


# --- GpuNotDetected ---

def taint(node: str, key: str = "nvidia.com/gpu") -> tuple:
    return ("kube_node_spec_taint", {"node": node, "key": key, "value": "present", "effect": "NoSchedule"}, flat(1))


def allocatable(node: str, resource: str, value: float) -> tuple:
    unit = "core" if resource == "cpu" else "integer"
    return ("kube_node_status_allocatable", {"node": node, "resource": resource, "unit": unit}, flat(value))


def reporting(node: str, host_label: str = "Hostname") -> tuple:
    return ("DCGM_FI_DEV_GPU_TEMP", gpu(node, host_label=host_label), flat(40))


def not_detected(node: str, cause: str) -> dict:
    summary = {"no-allocatable-gpu": f"GPU node {node} advertises no allocatable GPU.",
               "no-exporter-series": f"GPU node {node} advertises GPUs but dcgm-exporter reports none."}[cause]
    return fired({"node": node, "cause": cause, "severity": "critical"}, summary, "GpuNotDetected")


def test_not_detected_fires_for_gpu_nodes_advertising_no_gpu(promtool, tmp_path, t):
    series = [
        taint("node-zero"), allocatable("node-zero", "nvidia_com_gpu", 0), reporting("node-zero"),
        taint("node-missing"), allocatable("node-missing", "cpu", 4),
        ("kube_node_labels", {"node": "node-labelled", "label_nvidia_com_gpu_present": "true"}, flat(1)),
        allocatable("node-labelled", "nvidia_com_gpu", 0),
    ]
    expected = [not_detected(n, "no-allocatable-gpu") for n in ("node-zero", "node-missing", "node-labelled")]
    checks = [(t.not_detected_minutes - 1, "GpuNotDetected", []), (t.not_detected_minutes, "GpuNotDetected", expected)]
    run(promtool, tmp_path, t, [group(series, checks)])


def test_not_detected_fires_when_a_gpu_node_has_no_exporter_series(promtool, tmp_path, t):
    series = [taint("node-quiet"), allocatable("node-quiet", "nvidia_com_gpu", 1)]
    checks = [(t.not_detected_minutes - 1, "GpuNotDetected", []),
              (t.not_detected_minutes, "GpuNotDetected", [not_detected("node-quiet", "no-exporter-series")])]
    run(promtool, tmp_path, t, [group(series, checks)])


def test_not_detected_stays_silent_for_healthy_mig_and_cpu_nodes(promtool, tmp_path, t):
    series = [
        taint("node-ok"), allocatable("node-ok", "nvidia_com_gpu", 4), reporting("node-ok"),
        taint("node-lower"), allocatable("node-lower", "nvidia_com_gpu", 1), reporting("node-lower", "hostname"),
        taint("node-mig"), allocatable("node-mig", "nvidia_com_gpu", 0),
        allocatable("node-mig", "nvidia_com_mig_1g_10gb", 7), reporting("node-mig"),
        taint("node-cpu", key="dedicated"), allocatable("node-cpu", "cpu", 4),
    ]
    run(promtool, tmp_path, t, [group(series, [(LONG, "GpuNotDetected", [])])])


def dra_label(node: str) -> tuple:
    """The node label of a DRA pool's nodes, as kube-state-metrics exports it with the platform's allowlist."""
    return ("kube_node_labels", {"node": node, "label_gpu_platform_io_gpu_allocation": "dra"}, flat(1))


def gb200_node(node: str, gpus: int = 4, host_label: str = "Hostname") -> list[tuple]:
    """A p6e-gb200 node of a DRA pool: tainted and labelled, 4 GPUs in DCGM, only CPU allocatable."""
    reported = [("DCGM_FI_DEV_GPU_TEMP", gpu(node, i, model="NVIDIA GB200", host_label=host_label), flat(45))
                for i in range(gpus)]
    return [taint(node), dra_label(node), allocatable(node, "cpu", 144), *reported]


def test_not_detected_stays_silent_for_a_healthy_dra_node(promtool, tmp_path, t):
    series = gb200_node("node-gb200") + gb200_node("node-gb200-lower", gpus=1, host_label="hostname")
    run(promtool, tmp_path, t, [group(series, [(LONG, "GpuNotDetected", [])])])


def test_not_detected_fires_for_a_dra_node_whose_gpus_are_gone(promtool, tmp_path, t):
    series = gb200_node("node-gone", gpus=0) + gb200_node("node-ok")
    alert = fired({"node": "node-gone", "cause": "no-dra-gpu", "severity": "critical"},
                  "DRA GPU node node-gone: dcgm-exporter reports no GPU.", "GpuNotDetected")
    checks = [(t.not_detected_minutes - 1, "GpuNotDetected", []), (t.not_detected_minutes, "GpuNotDetected", [alert])]
    run(promtool, tmp_path, t, [group(series, checks)])


def test_a_warm_gpu_of_a_healthy_dra_node_raises_its_warning_and_no_node_fault(promtool, tmp_path, t):
    """No node-level fault fires on a healthy DRA node, so the node inhibition rule leaves its warnings alone."""
    hot = t.temperature_celsius + 1
    series = [*gb200_node("node-gb200", gpus=1)[:3],
              ("DCGM_FI_DEV_GPU_TEMP", gpu("node-gb200", model="NVIDIA GB200"), flat(hot))]
    warning = fired({**gpu("node-gb200", model="NVIDIA GB200"), "node": "node-gb200", "severity": "warning"},
                    f"GPU 0 (NVIDIA GB200, GPU-node-gb200-0) on node node-gb200 is at {humanize(hot)} C, above "
                    f"{t.temperature_celsius:g} C for {t.temperature_for_minutes}m.", "GpuTemperatureHigh")
    checks = [(LONG, "GpuNotDetected", []), (LONG, "GpuDevicesUnhealthy", []), (LONG, "GpuTemperatureHigh", [warning])]
    run(promtool, tmp_path, t, [group(series, checks)])


def test_not_detected_tells_each_kind_of_pool_by_its_own_count(promtool, tmp_path, t):
    """Side by side: a device-plugin node that lost its allocatable GPUs fires although DCGM still sees them,
    a DRA node with the same series (none allocatable, DCGM reporting) is healthy."""
    series = [
        taint("node-plugin-ok"), allocatable("node-plugin-ok", "nvidia_com_gpu", 8), reporting("node-plugin-ok"),
        taint("node-plugin-lost"), allocatable("node-plugin-lost", "nvidia_com_gpu", 0), reporting("node-plugin-lost"),
        *gb200_node("node-dra-ok"),
    ]
    expected = [not_detected("node-plugin-lost", "no-allocatable-gpu")]
    run(promtool, tmp_path, t, [group(series, [(LONG, "GpuNotDetected", expected)])])


# --- DcgmExporterDown ---

def target(node: str, ip: str) -> dict:
    return {"job": "nvidia-dcgm-exporter", "instance": f"{ip}:9400", "node": node, "endpoint": "gpu-metrics"}


def test_exporter_down_fires_for_a_target_down_for_the_whole_delay(promtool, tmp_path, t):
    up, down = target("node-a", "10.0.0.1"), target("node-b", "10.0.0.2")
    series = [("up", up, flat(1)), ("up", down, flat(0)), taint("node-a"), taint("node-b")]
    alert = fired({**down, "severity": "critical"}, "dcgm-exporter target 10.0.0.2:9400 on node node-b is down.",
                  "DcgmExporterDown")
    checks = [(t.exporter_down_minutes - 1, "DcgmExporterDown", []),
              (t.exporter_down_minutes, "DcgmExporterDown", [alert])]
    run(promtool, tmp_path, t, [group(series, checks)])


def test_exporter_down_stays_silent_when_the_target_recovers_in_time(promtool, tmp_path, t):
    minutes = t.exporter_down_minutes
    series = [("up", target("node-a", "10.0.0.1"), f"0x{minutes - 1} 1x{LONG}"), taint("node-a")]
    checks = [(m, "DcgmExporterDown", []) for m in (minutes, minutes + 1, LONG)]
    run(promtool, tmp_path, t, [group(series, checks)])


def test_exporter_down_fires_when_gpu_nodes_exist_but_no_exporter_target_does(promtool, tmp_path, t):
    alert = fired({"severity": "critical"}, "dcgm-exporter target (none found) is down.", "DcgmExporterDown")
    series = [taint("node-a")]
    run(promtool, tmp_path, t, [group(series, [(t.exporter_down_minutes, "DcgmExporterDown", [alert])])])


def test_exporter_down_stays_silent_without_gpu_nodes(promtool, tmp_path, t):
    series = [taint("node-cpu", key="dedicated")]  # every GPU pool scaled to zero
    run(promtool, tmp_path, t, [group(series, [(LONG, "DcgmExporterDown", [])])])


# --- the rules as data ---

def test_rules_file_is_the_rule_groups_as_yaml(t):
    assert yaml.safe_load(alerts.rules_file(t, PRICES)) == {"groups": alerts.rule_groups(t, PRICES)}


def test_without_prices_no_price_series_are_recorded(t):
    [group_] = alerts.rule_groups(t, {})
    assert group_["name"] == alerts.ALERT_GROUP and all("alert" in r for r in group_["rules"])


def test_every_alert_has_its_listed_severities(t):
    severities: dict[str, set] = {}
    for r in alerts.alert_rules(t):
        severities.setdefault(r["alert"], set()).add(r["labels"]["severity"])
    assert severities == {"GpuMemoryNearLimit": {"warning", "critical"}, "GpuTemperatureHigh": {"warning", "critical"},
                          "GpuIdle": {"info"}, "GpuXidError": {"critical"}, "GpuCudaOom": {"high"},
                          "GpuNotDetected": {"critical"}, "DcgmExporterDown": {"critical"},
                          "GpuDevicesUnhealthy": {"critical"}, "GpuNodeHardwareUnhealthy": {"critical"},
                          "GpuRowRemapFailure": {"critical"}, "GpuEccUncorrectable": {"critical"},
                          "GpuNvlinkErrors": {"warning"}, "GpuPodPending": {"high"},
                          "GpuScaleUpFailed": {"warning"}, "GpuNodeLaunchFailed": {"warning"},
                          "GpuReservationEnding": {"warning", "critical"}, "GpuNodeAcceptanceFailed": {"critical"},
                          "GpuNodePassiveHealthFailed": {"critical"},
                          "GpuClockThrottled": {"warning"}, "GpuPowerBrake": {"warning"}, "GpuStarvedByCpu": {"warning"}}


def test_descriptions_are_static_runbook_text(t):
    for rule in alerts.alert_rules(t):
        text = rule["annotations"]["description"]
        assert "{{" not in text and len(text) > 100, rule["alert"]


@pytest.mark.parametrize("resource, sanitized", [
    ("nvidia.com/gpu", "nvidia_com_gpu"), ("nvidia.com/mig-1g.10gb", "nvidia_com_mig_1g_10gb"),
    ("nvidia.com/gpu.present", "nvidia_com_gpu_present")])
def test_ksm_name_matches_kube_state_metrics_sanitising(resource, sanitized):
    assert alerts.ksm_name(resource) == sanitized


@pytest.mark.parametrize("resource, matches", [
    ("nvidia_com_gpu", True), ("nvidia_com_gpu_shared", True), ("nvidia_com_mig_3g_40gb", True),
    ("cpu", False), ("memory", False), ("nvidia_com_mig_", False)])
def test_gpu_resource_regex_covers_whole_gpus_and_mig_slices(resource, matches):
    assert bool(re.fullmatch(alerts.GPU_RESOURCES_RE, resource)) is matches


def test_rules_read_only_collected_fields_kube_state_metrics_and_their_own_records(t):
    allowed = ({f.name for f in collected_fields()} | alerts.KSM_METRICS | alerts.RECORDED_METRICS | {"up"}
               | capacity_alerts.AUTOSCALER_METRICS | usage_alerts.CADVISOR_METRICS | usage_alerts.KSM_METRICS)
    for group_ in alerts.rule_groups(t, PRICES):
        for rule in group_["rules"]:
            assert metrics_in(rule["expr"]) <= allowed, rule.get("alert", rule.get("record"))


def test_prices_are_recorded_before_the_alerts_in_one_group(t):
    # Separate groups run independently: an idle alert evaluated before its price would start unpriced
    # and restart its `for:` timer when the price appears.
    [group_] = alerts.rule_groups(t, PRICES)
    kinds = ["record" if "record" in r else "alert" for r in group_["rules"]]
    assert kinds == sorted(kinds, key=lambda k: k != "record") and kinds[0] == "record"


# --- a pool's own memory thresholds (nodePools[].alerts) ---

def test_pool_thresholds_get_rules_of_their_own_and_the_stacks_skip_those_pools(t):
    rules = [r for r in alerts.alert_rules(t, {"l4-inference": (97, 99)}) if r["alert"] == "GpuMemoryNearLimit"]
    stack = [r for r in rules if "pool" not in r["labels"]]
    own = [r for r in rules if r["labels"].get("pool") == "l4-inference"]
    assert len(stack) == len(own) == 2
    assert all('unless on (node)' in r["expr"] and 'label_gpu_platform_io_pool=~"l4-inference"' in r["expr"]
               for r in stack)
    assert {r["expr"].split(" and on (node) ")[0].rsplit(" > ", 1)[1] for r in own} == {"97", "99"}


def test_pool_memory_thresholds_fire_on_their_pool_only(promtool, tmp_path, t):
    """A GPU at 95% on the inference pool (its own warning 97%) stays silent; the same on another pool warns."""
    from tests.render.promtool_rules import fb, selector

    def pool(node: str, name: str) -> tuple[str, dict, str]:
        return ("kube_node_labels", {"node": node, alerts.POOL_KSM_LABEL: name}, "1x60")

    series = [*fb("inf-1", 9500), *fb("train-1", 9500), pool("inf-1", "l4-inference"), pool("train-1", "a100-train")]
    (tmp_path / "rules.yaml").write_text(alerts.rules_file(t, {}, (), {"l4-inference": (97, 99)}))
    import subprocess

    import yaml

    exp_nodes = {"train-1"}
    spec = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": [{
        "interval": "1m",
        "input_series": [{"series": selector(m, lab), "values": v} for m, lab, v in series],
        "promql_expr_test": [{"expr": 'count by (node) (ALERTS{alertname="GpuMemoryNearLimit",alertstate="firing"})',
                              "eval_time": "30m", "exp_samples": [{"labels": f'{{node="{n}"}}', "value": 1}
                                                                  for n in sorted(exp_nodes)]}],
    }]}
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = subprocess.run([promtool, "test", "rules", "tests.yaml"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
