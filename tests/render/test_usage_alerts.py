"""GpuStarvedByCpu under promtool: a pod whose GPUs idle while its CPU is saturated alerts its team; a busy GPU,
an idle CPU or a CPU below its limit stays silent. amtool routes it by the pod's namespace."""
from __future__ import annotations

import pytest

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.render.alert_routing import alertmanager_config
from gpu_platform.render.monitoring import MonitoringSettings
from gpu_platform.render.usage_alerts import CPU_THROTTLED_PERCENT
from tests.render.promtool_rules import LONG, description, group, humanize, run
from tests.support.stacks import stack_platform

NAME = "GpuStarvedByCpu"


def pod_series(pod: str, gpu_active: float, cpu_cores: float, limit: float, throttled: float = 0.0) -> list:
    """A pod's GPU activity (0-1), CPU use in cores as a counter rising each minute, its CPU limit, and the
    fraction of its 100 CFS periods a second that were throttled."""
    labels = {"namespace": "research", "pod": pod}
    per_min = cpu_cores * 60
    return [
        ("DCGM_FI_PROF_GR_ENGINE_ACTIVE", {**labels, "gpu": "0", "UUID": f"GPU-{pod}", "modelName": "NVIDIA A10G",
                                           "node": "n1"}, f"{gpu_active:g}x{LONG}"),
        ("container_cpu_usage_seconds_total", {**labels, "container": "main"}, f"0+{per_min:g}x{LONG}"),
        ("container_cpu_cfs_periods_total", {**labels, "container": "main"}, f"0+6000x{LONG}"),
        ("container_cpu_cfs_throttled_periods_total", {**labels, "container": "main"},
         f"0+{6000 * throttled:g}x{LONG}"),
        ("kube_pod_container_resource_limits", {**labels, "container": "main", "resource": "cpu", "unit": "core",
                                                "node": "n1"}, f"{limit:g}x{LONG}"),
    ]


def fired(t, pod: str, busiest_percent: float) -> dict:
    threshold = f"{t.idle_utilization_percent:g}"
    summary = (f"Pod research/{pod}: its GPUs are under {threshold}% busy (busiest {humanize(busiest_percent)}%) "
               f"while its CPU is saturated, for {t.idle_minutes}m.")
    return {"exp_labels": {"severity": "warning", "namespace": "research", "pod": pod},
            "exp_annotations": {"summary": summary, "description": description(NAME)}}


def test_idle_gpus_beside_a_saturated_or_throttled_cpu_alert_the_pod(promtool, tmp_path, t):
    idle = t.idle_utilization_percent / 100 / 2
    series = [*pod_series("starved", idle, 3.9, 4), *pod_series("throttled", idle, 1.0, 4,
                                                                  throttled=CPU_THROTTLED_PERCENT / 100 + 0.1)]
    late = t.idle_minutes + 10
    checks = [(5, NAME, []),  # not yet for idleMinutes
              (late, NAME, [fired(t, "starved", idle * 100), fired(t, "throttled", idle * 100)])]
    run(promtool, tmp_path, t, [group(series, checks)])


@pytest.mark.parametrize("gpu, cpu, limit", [(0.9, 3.9, 4), (0.01, 0.2, 4), (0.01, 3.0, 4)],
                         ids=["gpu-busy", "cpu-idle", "cpu-below-limit"])
def test_a_busy_gpu_or_an_unsaturated_cpu_stays_silent(promtool, tmp_path, t, gpu, cpu, limit):
    run(promtool, tmp_path, t, [group(pod_series("p", gpu, cpu, limit), [(t.idle_minutes + 10, NAME, [])])])


def _routes_to(amtool, tmp_path, platform: dict, receivers: str) -> None:
    import subprocess
    import yaml
    path = tmp_path / "alertmanager.yaml"
    path.write_text(yaml.safe_dump(alertmanager_config(MonitoringSettings.of(parse_platform(platform)))))
    result = subprocess.run([amtool, "config", "routes", "test", f"--config.file={path}",
                             f"--verify.receivers={receivers}", f"alertname={NAME}", "severity=warning",
                             "namespace=research", "pod=train-0"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_it_reaches_the_team_that_takes_warnings_and_the_platform_otherwise(amtool, tmp_path):
    platform = stack_platform("dev")
    platform["teams"][0]["alerting"] = {"critical": "research-chat", "warning": "research-chat"}
    _routes_to(amtool, tmp_path, platform, "research-chat")
    _routes_to(amtool, tmp_path, stack_platform("dev"), "platform-chat")
