"""promtool unit tests for the severity tiers, idle MIG slices and time-sliced GPUs, and the GPU health
alerts (unhealthy devices, the node monitoring agent's condition, row remapping, ECC, NVLink).

Built like tests/render/test_alerts.py: from the same thresholds the rules are built from, with the
expected labels and summaries written out as the alert must show them.
"""
from __future__ import annotations

from gpu_platform.render import alerts
from tests.render.promtool_rules import LONG, WORKLOAD, fb, fired, flat, gpu, group, humanize, run

H100 = "NVIDIA H100 80GB HBM3"  # priced at 6.88/h in PRICES
A100 = "NVIDIA A100-SXM4-80GB"  # not priced in PRICES


# --- memory and temperature: warning and critical tiers ---

def memory_summary(node: str, percent: float, limit: float) -> str:
    return (f"GPU 0 (NVIDIA A10G, GPU-{node}-0) on node {node} has {humanize(percent)}% of its memory in use"
            f" (limit {limit:g}%).")


def test_memory_critical_fires_above_its_tier_beside_the_warning(promtool, tmp_path, t):
    used = int(t.memory_critical_percent * 100) + 1  # MiB of 10000: just over the critical limit
    percent = used / 100
    labels = {**gpu("node-a"), "node": "node-a"}
    both = [fired({**labels, "severity": "warning"}, memory_summary("node-a", percent, t.memory_used_percent),
                  "GpuMemoryNearLimit"),
            fired({**labels, "severity": "critical"}, memory_summary("node-a", percent, t.memory_critical_percent),
                  "GpuMemoryNearLimit")]
    checks = [(t.memory_for_minutes, "GpuMemoryNearLimit", both)]
    if t.memory_for_minutes:
        checks.insert(0, (t.memory_for_minutes - 1, "GpuMemoryNearLimit", []))
    run(promtool, tmp_path, t, [group(fb("node-a", used), checks)])


def test_memory_at_the_critical_limit_is_only_a_warning(promtool, tmp_path, t):
    used = int(t.memory_critical_percent * 100)
    warning = fired({**gpu("node-a"), "node": "node-a", "severity": "warning"},
                    memory_summary("node-a", used / 100, t.memory_used_percent), "GpuMemoryNearLimit")
    run(promtool, tmp_path, t, [group(fb("node-a", used), [(LONG, "GpuMemoryNearLimit", [warning])])])


def temp_summary(node: str, celsius: float, limit: float, t) -> str:
    return (f"GPU 0 (NVIDIA A10G, GPU-{node}-0) on node {node} is at {celsius:g} C, above {limit:g} C"
            f" for {t.temperature_for_minutes}m.")


def test_temperature_critical_fires_one_degree_over_its_tier(promtool, tmp_path, t):
    hot = t.temperature_critical_celsius + 1
    labels = {**gpu("node-a"), "node": "node-a"}
    both = [fired({**labels, "severity": "warning"}, temp_summary("node-a", hot, t.temperature_celsius, t),
                  "GpuTemperatureHigh"),
            fired({**labels, "severity": "critical"}, temp_summary("node-a", hot, t.temperature_critical_celsius, t),
                  "GpuTemperatureHigh")]
    series = [("DCGM_FI_DEV_GPU_TEMP", gpu("node-a"), flat(hot))]
    checks = [(t.temperature_for_minutes - 1, "GpuTemperatureHigh", []), (t.temperature_for_minutes, "GpuTemperatureHigh", both)]
    run(promtool, tmp_path, t, [group(series, checks)])


def test_temperature_at_the_critical_limit_is_only_a_warning(promtool, tmp_path, t):
    at = t.temperature_critical_celsius
    warning = fired({**gpu("node-a"), "node": "node-a", "severity": "warning"},
                    temp_summary("node-a", at, t.temperature_celsius, t), "GpuTemperatureHigh")
    run(promtool, tmp_path, t, [group([("DCGM_FI_DEV_GPU_TEMP", gpu("node-a"), flat(at))],
                                      [(LONG, "GpuTemperatureHigh", [warning])])])


# --- idle MIG slices (per slice) and time-sliced GPUs (per physical GPU) ---

def mig(node: str, profile: str, instance: int, model: str = H100, idx: int = 0, **workload) -> dict:
    return {**gpu(node, idx=idx, model=model), "GPU_I_PROFILE": profile, "GPU_I_ID": str(instance), **workload}


def mig_summary(node: str, profile: str, instance: int, activity: float, t, cost: str, model: str = H100,
                workload: str = "") -> str:
    return (f"MIG slice {profile} (instance {instance}) of GPU 0 ({model}, GPU-{node}-0) on node {node} has been "
            f"below {t.idle_utilization_percent:g}% activity for {t.idle_minutes}m (now {humanize(activity)}%)"
            f"{workload}: {cost}.")


def mig_idle(labels: dict, node: str, activity: float, t, cost_label: str, cost: str, model: str = H100,
             workload: str = "") -> dict:
    return fired({**labels, "node": node, "hourly_cost_usd": cost_label, "severity": "info", "scope": "mig-slice"},
                 mig_summary(node, labels["GPU_I_PROFILE"], int(labels["GPU_I_ID"]), activity, t, cost, model,
                             workload), "GpuIdle")


def test_an_idle_mig_slice_alerts_with_its_share_of_the_gpus_price(promtool, tmp_path, t):
    low = t.idle_utilization_percent - 1
    small = mig("node-h", "1g.10gb", 9, **WORKLOAD)
    series = [("DCGM_FI_PROF_GR_ENGINE_ACTIVE", small, flat(low / 100))]
    share = f"{6.88 / 7:.2f}"  # one compute slice of seven
    alert = mig_idle(small, "node-h", low, t, share, f"estimated ${share}/h", workload=", used by pod research/train-0")
    checks = [(t.idle_minutes - 1, "GpuIdle", []), (t.idle_minutes, "GpuIdle", [alert])]
    run(promtool, tmp_path, t, [group(series, checks)])


def test_each_slice_alerts_on_its_own_and_busy_slices_stay_silent(promtool, tmp_path, t):
    low = t.idle_utilization_percent - 1
    idle_slice, busy_slice = mig("node-h", "3g.40gb", 1), mig("node-h", "2g.20gb", 5)
    at_threshold = mig("node-h", "1g.10gb", 13)
    series = [("DCGM_FI_PROF_GR_ENGINE_ACTIVE", idle_slice, flat(low / 100)),
              ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", busy_slice, flat(0.9)),
              ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", at_threshold, flat(t.idle_utilization_percent / 100))]
    share = f"{6.88 * 3 / 7:.2f}"
    alert = mig_idle(idle_slice, "node-h", low, t, share, f"estimated ${share}/h")
    run(promtool, tmp_path, t, [group(series, [(LONG, "GpuIdle", [alert])])])


def test_a_slice_of_an_unpriced_model_says_cost_unknown(promtool, tmp_path, t):
    low = t.idle_utilization_percent - 1
    labels = mig("node-p", "1g.10gb", 7, model=A100)
    series = [("DCGM_FI_PROF_GR_ENGINE_ACTIVE", labels, flat(low / 100))]
    alert = mig_idle(labels, "node-p", low, t, "unknown", "cost unknown (no price for this model)", model=A100)
    run(promtool, tmp_path, t, [group(series, [(LONG, "GpuIdle", [alert])])])


def test_whole_gpu_engine_activity_is_not_read_as_an_idle_slice(promtool, tmp_path, t):
    """Without GPU_I_ID the series is a whole GPU's: its idleness comes from DCGM_FI_DEV_GPU_UTIL."""
    labels = gpu("node-a")
    series = [("DCGM_FI_PROF_GR_ENGINE_ACTIVE", labels, flat(0)),
              ("DCGM_FI_DEV_GPU_UTIL", labels, flat(t.idle_utilization_percent + 40))]
    run(promtool, tmp_path, t, [group(series, [(LONG, "GpuIdle", [])])])


def test_a_time_sliced_gpu_alerts_once_per_physical_gpu_only_when_all_sharers_are_idle(promtool, tmp_path, t):
    """DCGM measures the physical GPU; the exporter attributes it to one of the pods sharing it."""
    low = t.idle_utilization_percent - 1
    shared_idle = gpu("node-ts", **WORKLOAD)
    shared_busy = gpu("node-ts", idx=1, pod="serve-1", namespace="applied-ml", container="server")
    series = [("DCGM_FI_DEV_GPU_UTIL", shared_idle, flat(low)),
              ("DCGM_FI_DEV_GPU_UTIL", shared_busy, flat(t.idle_utilization_percent + 5))]
    alert = fired({**shared_idle, "node": "node-ts", "hourly_cost_usd": "1.01", "severity": "info"},
                  f"GPU 0 (NVIDIA A10G, GPU-node-ts-0) on node node-ts has been below {t.idle_utilization_percent:g}%"
                  f" utilisation for {t.idle_minutes}m (now {low:g}%), used by pod research/train-0: estimated $1.01/h.",
                  "GpuIdle")
    run(promtool, tmp_path, t, [group(series, [(LONG, "GpuIdle", [alert])])])


def test_mig_slice_prices_are_recorded_per_profile(promtool, tmp_path, t):
    spec = {"interval": "1m", "input_series": [], "promql_expr_test": [{
        "expr": f'{alerts.MIG_SLICE_COST}{{GPU_I_PROFILE=~"3g.40gb|7g.80gb"}}', "eval_time": "1m",
        "exp_samples": [
            {"labels": f'{alerts.MIG_SLICE_COST}{{modelName="{H100}",GPU_I_PROFILE="3g.40gb",hourly_cost_usd="2.95"}}',
             "value": round(6.88 * 3 / 7, 6)},
            {"labels": f'{alerts.MIG_SLICE_COST}{{modelName="{H100}",GPU_I_PROFILE="7g.80gb",hourly_cost_usd="6.88"}}',
             "value": 6.88},
        ]}]}
    run(promtool, tmp_path, t, [spec])


def test_no_slice_prices_for_models_without_mig():
    records = [r for r in alerts.cost_rules({"NVIDIA A10G": 1.0}) if r["record"] == alerts.MIG_SLICE_COST]
    assert records == []


# --- GPU health ---

def node_resource(metric: str, node: str, resource: str, value: float) -> tuple:
    return (metric, {"node": node, "resource": resource, "unit": "integer"}, flat(value))


def test_gpus_leaving_the_allocatable_count_alert_per_node_and_resource(promtool, tmp_path, t):
    series = [node_resource("kube_node_status_capacity", "node-a", "nvidia_com_gpu", 8),
              node_resource("kube_node_status_allocatable", "node-a", "nvidia_com_gpu", 7),
              node_resource("kube_node_status_capacity", "node-m", "nvidia_com_mig_1g_10gb", 4),
              node_resource("kube_node_status_allocatable", "node-m", "nvidia_com_mig_1g_10gb", 2),
              node_resource("kube_node_status_capacity", "node-ok", "nvidia_com_gpu", 8),
              node_resource("kube_node_status_allocatable", "node-ok", "nvidia_com_gpu", 8),
              node_resource("kube_node_status_capacity", "node-cpu", "cpu", 8),
              node_resource("kube_node_status_allocatable", "node-cpu", "cpu", 7)]

    def alert(node, resource, n):
        return fired({"node": node, "resource": resource, "severity": "critical"},
                     f"Node {node} has {n} {resource} out of its allocatable count: the NVIDIA device plugin marked "
                     "GPUs unhealthy.", "GpuDevicesUnhealthy")

    expected = [alert("node-a", "nvidia_com_gpu", 1), alert("node-m", "nvidia_com_mig_1g_10gb", 2)]
    checks = [(t.gpu_unhealthy_minutes, "GpuDevicesUnhealthy", expected)]
    if t.gpu_unhealthy_minutes:
        checks.insert(0, (t.gpu_unhealthy_minutes - 1, "GpuDevicesUnhealthy", []))
    run(promtool, tmp_path, t, [group(series, checks)])


def condition(node: str, status: str, value: float) -> tuple:
    return ("kube_node_status_condition", {"node": node, "condition": "AcceleratedHardwareReady", "status": status},
            flat(value))


def test_the_node_monitoring_agents_gpu_fault_condition_alerts(promtool, tmp_path, t):
    series = [condition("node-bad", "false", 1), condition("node-bad", "true", 0),
              condition("node-ok", "false", 0), condition("node-ok", "true", 1),
              ("kube_node_status_condition", {"node": "node-ok", "condition": "Ready", "status": "false"}, flat(1))]
    alert = fired({"node": "node-bad", "severity": "critical"},
                  "Node node-bad reports AcceleratedHardwareReady=False: the EKS node monitoring agent found a GPU "
                  "fault.", "GpuNodeHardwareUnhealthy")
    checks = [(t.gpu_unhealthy_minutes, "GpuNodeHardwareUnhealthy", [alert])]
    if t.gpu_unhealthy_minutes:
        checks.insert(0, (t.gpu_unhealthy_minutes - 1, "GpuNodeHardwareUnhealthy", []))
    run(promtool, tmp_path, t, [group(series, checks)])


def test_a_row_remapping_failure_is_critical_at_once(promtool, tmp_path, t):
    bad, ok = gpu("node-h", model=H100, **WORKLOAD), gpu("node-h", idx=1, model=H100)
    series = [("DCGM_FI_DEV_ROW_REMAP_FAILURE", bad, f"0x4 1x{LONG}"), ("DCGM_FI_DEV_ROW_REMAP_FAILURE", ok, flat(0))]
    alert = fired({**bad, "node": "node-h", "severity": "critical"},
                  f"GPU 0 ({H100}, GPU-node-h-0) on node node-h failed to remap a faulty memory row, used by pod "
                  "research/train-0.", "GpuRowRemapFailure")
    run(promtool, tmp_path, t, [group(series, [(4, "GpuRowRemapFailure", []), (5, "GpuRowRemapFailure", [alert])])])


def counter_alert(name: str, metric: str, summary_tail: str, severity: str, promtool, tmp_path, t) -> None:
    """A counter that rises at minute 5 alerts then, and resolves once the rise leaves the 10m window."""
    bad, ok = gpu("node-h", model=H100), gpu("node-h", idx=1, model=H100)
    series = [(metric, bad, f"0x4 1x{LONG}"), (metric, ok, flat(3))]  # ok: an old count that no longer rises
    alert = fired({**bad, "node": "node-h", "severity": severity},
                  f"GPU 0 ({H100}, GPU-node-h-0) on node node-h{summary_tail}", name)
    window = int(alerts.HEALTH_WINDOW.rstrip("m"))
    checks = [(4, name, []), (5, name, [alert]), (5 + window - 1, name, [alert]), (5 + window + 2, name, [])]
    run(promtool, tmp_path, t, [group(series, checks)])


def test_uncorrectable_ecc_errors_alert_while_they_rise(promtool, tmp_path, t):
    counter_alert("GpuEccUncorrectable", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL",
                  f" had uncorrectable (double-bit) ECC errors in the last {alerts.HEALTH_WINDOW}.", "critical",
                  promtool, tmp_path, t)


def test_nvlink_recoveries_warn_while_they_rise(promtool, tmp_path, t):
    counter_alert("GpuNvlinkErrors", "DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL",
                  f": an NVLink link went down and recovered in the last {alerts.HEALTH_WINDOW}.", "warning",
                  promtool, tmp_path, t)
