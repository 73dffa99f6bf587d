"""The acceptance and clock-event alerts (render/acceptance_alerts.py), proved with promtool: each fires on a
broken node or GPU and stays silent on a healthy one."""
from __future__ import annotations

import subprocess

import pytest
import yaml

from gpu_platform.facts import names
from gpu_platform.render import acceptance_alerts as a
from gpu_platform.render import alerts
from gpu_platform.render import dcgm_metrics
from gpu_platform.spec.models import AlertThresholds
from tests.render.promtool_rules import LONG, PRICES, description, flat, gpu, group, run

T = AlertThresholds()


def condition(node: str, status: str) -> tuple[str, dict, str]:
    return ("kube_node_status_condition", {"node": node, "condition": names.ACCEPTANCE_CONDITION, "status": status},
            flat(1))


def events(node: str, mask: int) -> tuple[str, dict, str]:
    return (a.CLOCK_EVENTS, gpu(node, model="NVIDIA H100 80GB HBM3"), flat(mask))


def _exp(alert: str, labels: dict, summary: str) -> list[dict]:
    return [{"exp_labels": labels, "exp_annotations": {"summary": summary, "description": description(alert)}}]


def test_the_exporter_collects_the_clock_event_reasons():
    assert a.CLOCK_EVENTS in {f.name for f in dcgm_metrics.collected_fields()}
    assert a.CLOCK_EVENTS in dcgm_metrics.metrics_csv()


def test_acceptance_failure_fires_and_a_passed_node_stays_silent(promtool, tmp_path):
    failed = [condition("ip-10-0-1-7", "false"), condition("ip-10-0-1-8", "true")]
    checks = [(5, "GpuNodeAcceptanceFailed", _exp("GpuNodeAcceptanceFailed", {"node": "ip-10-0-1-7", "severity": "critical"},
              f"Node ip-10-0-1-7 failed its acceptance checks ({names.ACCEPTANCE_CONDITION}=False): it keeps its "
              "startup taint and takes no work."))]
    # kube-state-metrics exports each status as its own series: the passed node's `false` series is 0
    quiet = [("kube_node_status_condition", {"node": "ip-10-0-1-8", "condition": names.ACCEPTANCE_CONDITION,
                                             "status": "false"}, flat(0)), condition("ip-10-0-1-8", "true")]
    run(promtool, tmp_path, T, [group(failed, checks), group(quiet, [(30, "GpuNodeAcceptanceFailed", [])])])


def test_passive_health_failure_fires_and_a_healthy_node_stays_silent(promtool, tmp_path):
    def health(node: str, status: str, value: int) -> tuple[str, dict, str]:
        return ("kube_node_status_condition", {"node": node, "condition": names.HEALTH_CONDITION, "status": status},
                flat(value))
    failed = [health("ip-10-0-1-7", "false", 1), health("ip-10-0-1-7", "true", 0)]
    checks = [(5, "GpuNodePassiveHealthFailed", _exp(
        "GpuNodePassiveHealthFailed", {"node": "ip-10-0-1-7", "severity": "critical"},
        f"Node ip-10-0-1-7 failed its passive GPU health re-check ({names.HEALTH_CONDITION}=False)."))]
    # a healthy node, and a node whose acceptance (not its passive health) is False, do not raise it
    quiet = [health("ip-10-0-1-8", "false", 0), health("ip-10-0-1-8", "true", 1), condition("ip-10-0-1-9", "false")]
    run(promtool, tmp_path, T, [group(failed, checks), group(quiet, [(30, "GpuNodePassiveHealthFailed", [])])])


GPU_LABELS = {"node": "n1", "gpu": "0", "UUID": "GPU-n1-0", "modelName": "NVIDIA H100 80GB HBM3"}
THROTTLED = f"GPU 0 (NVIDIA H100 80GB HBM3, GPU-n1-0) on node n1 has been throttled (thermal or hardware slowdown) " \
            f"for {T.temperature_for_minutes} minutes."


@pytest.mark.parametrize("mask", [a.HW_THERMAL, a.SW_THERMAL, a.HW_SLOWDOWN, a.HW_THERMAL | 0x1 | 0x4])
def test_throttling_fires_on_each_slowdown_reason(promtool, tmp_path, mask):
    checks = [(T.temperature_for_minutes + 2, "GpuClockThrottled",
               _exp("GpuClockThrottled", {**GPU_LABELS, "severity": "warning"}, THROTTLED))]
    run(promtool, tmp_path, T, [group([events("n1", mask)], checks)])


@pytest.mark.parametrize("mask", [0, 0x1, 0x4, 0x1 | 0x4 | 0x2, a.POWER_BRAKE])
def test_idle_power_capped_or_braked_gpus_are_not_throttled(promtool, tmp_path, mask):
    """Idle (0x1), the software power cap a loaded GPU reaches (0x4) and application clocks are normal."""
    run(promtool, tmp_path, T, [group([events("n1", mask)], [(LONG - 1, "GpuClockThrottled", [])])])


def test_power_brake_fires_and_stays_silent_without_it(promtool, tmp_path):
    summary = "GPU 0 (NVIDIA H100 80GB HBM3, GPU-n1-0) on node n1 is held by the hardware power brake."
    braked = group([events("n1", a.POWER_BRAKE | a.HW_SLOWDOWN)],
                   [(3, "GpuPowerBrake", _exp("GpuPowerBrake", {**GPU_LABELS, "severity": "warning"}, summary))])
    calm = group([events("n1", a.HW_THERMAL)], [(30, "GpuPowerBrake", [])])
    run(promtool, tmp_path, T, [braked, calm])


# --- a gate that never reports ---

TIMEOUTS = {"a100-train": 35, "l4-inference": 15}
STUCK_AFTER = TIMEOUTS["a100-train"] + a.STUCK_MARGIN_MINUTES


def stuck_run(promtool, tmp_path, groups: list[dict]) -> None:
    (tmp_path / "rules.yaml").write_text(alerts.rules_file(T, PRICES, (), {}, TIMEOUTS))
    spec = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": groups}
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = subprocess.run([promtool, "test", "rules", "tests.yaml"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def tainted(node: str, minutes: int = 120) -> tuple[str, dict, str]:
    return ("kube_node_spec_taint", {"node": node, "key": names.ACCEPTANCE_TAINT_KEY, "value": "pending",
                                     "effect": "NoSchedule"}, flat(1, minutes))


def in_pool(node: str, pool: str) -> tuple[str, dict, str]:
    return ("kube_node_labels", {"node": node, a.POOL_KSM_LABEL: pool}, flat(1, 120))


def test_a_node_with_no_verdict_past_its_pools_timeout_alerts(promtool, tmp_path):
    [rule] = [r for r in a.rules(T, TIMEOUTS) if r["alert"] == "GpuNodeAcceptanceStuck" and r["labels"]["pool"] == "a100-train"]
    summary = (f"Node ip-10-0-1-9 of pool a100-train has waited {STUCK_AFTER} minutes for its acceptance checks with "
               "no verdict: it keeps its startup taint and takes no work.")
    labels = {"node": "ip-10-0-1-9", "pool": "a100-train", "severity": "critical"}
    exp = [{"exp_labels": labels, "exp_annotations": {"summary": summary, "description": rule["annotations"]["description"]}}]
    waiting = group([tainted("ip-10-0-1-9"), in_pool("ip-10-0-1-9", "a100-train")],
                    [(STUCK_AFTER - 5, "GpuNodeAcceptanceStuck", []), (STUCK_AFTER + 2, "GpuNodeAcceptanceStuck", exp)])
    stuck_run(promtool, tmp_path, [waiting])


def test_a_judged_an_untainted_or_a_quick_node_stays_silent(promtool, tmp_path):
    judged = group([tainted("n1"), in_pool("n1", "a100-train"),
                    ("kube_node_status_condition", {"node": "n1", "condition": names.ACCEPTANCE_CONDITION,
                                                    "status": "false"}, flat(1, 120))],
                   [(100, "GpuNodeAcceptanceStuck", [])])
    # accepted after 20 minutes: the taint goes, its series with it
    quick = group([tainted("n2", 20), in_pool("n2", "a100-train")], [(100, "GpuNodeAcceptanceStuck", [])])
    ungated = group([in_pool("n3", "a100-train")], [(100, "GpuNodeAcceptanceStuck", [])])
    stuck_run(promtool, tmp_path, [judged, quick, ungated])


def test_each_pool_waits_its_own_timeout(promtool, tmp_path):
    short = TIMEOUTS["l4-inference"] + a.STUCK_MARGIN_MINUTES
    rule = next(r for r in a.rules(T, TIMEOUTS) if r.get("labels", {}).get("pool") == "l4-inference")
    assert rule["for"] == f"{short}m"
    inference = group([tainted("n4"), in_pool("n4", "l4-inference")],
                      [(short - 2, "GpuNodeAcceptanceStuck", []), (STUCK_AFTER - 5, "GpuNodeAcceptanceStuck", [
                          {"exp_labels": {"node": "n4", "pool": "l4-inference", "severity": "critical"},
                           "exp_annotations": {"summary": rule["annotations"]["summary"].replace("{{ $labels.node }}", "n4"),
                                               "description": rule["annotations"]["description"]}}])])
    stuck_run(promtool, tmp_path, [inference])


def test_no_gated_pool_no_stuck_rule():
    assert not [r for r in alerts.alert_rules(T) if r["alert"] == "GpuNodeAcceptanceStuck"]
