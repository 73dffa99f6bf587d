"""Building promtool unit-test files for the GPU alert rules: input series and expected alerts, written from
the same thresholds object the rules are built from (tests/render/test_alerts.py, test_alert_tiers.py)."""
from __future__ import annotations

import subprocess

import yaml

from gpu_platform.render import alerts
from gpu_platform.spec.models import AlertThresholds

PRICES = {"NVIDIA A10G": 1.006, "NVIDIA H100 80GB HBM3": 6.88}  # no price for NVIDIA L4
LONG = 60  # minutes of input series: longer than any `for:` under test

THRESHOLDS = {
    "defaults": AlertThresholds(),
    "custom": AlertThresholds(memory_used_percent=80, memory_critical_percent=95, memory_for_minutes=2,
                              temperature_celsius=75, temperature_critical_celsius=85, temperature_for_minutes=3,
                              idle_utilization_percent=20, idle_minutes=15, exporter_down_minutes=2,
                              not_detected_minutes=4, gpu_unhealthy_minutes=3),
}


def selector(metric: str, labels: dict[str, str]) -> str:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return f"{metric}{{{inner}}}"


def flat(value: float, minutes: int = LONG) -> str:
    """One sample per minute of `value` for `minutes` minutes (promtool's `axn` notation)."""
    return f"{value:g}x{minutes}"


def group(series: list[tuple[str, dict, str]], checks: list[tuple[int, str, list[dict]]]) -> dict:
    return {
        "interval": "1m",
        "input_series": [{"series": selector(m, labels), "values": v} for m, labels, v in series],
        "alert_rule_test": [{"eval_time": f"{minute}m", "alertname": name, "exp_alerts": exp}
                            for minute, name, exp in checks],
    }


def description(alertname: str, **labels: str) -> str:
    rules = [r for r in alerts.alert_rules(AlertThresholds())
             if r["alert"] == alertname and labels.items() <= r["labels"].items()]
    if len(rules) > 1:  # e.g. GpuIdle of a whole GPU (no `scope`) beside the MIG-slice rule
        rules = [r for r in rules if set(r["labels"]) - {"severity"} <= set(labels)]
    [rule] = rules
    return rule["annotations"]["description"]


def fired(labels: dict, summary: str, alertname: str) -> dict:
    rule_labels = {k: v for k, v in labels.items() if k in ("cause", "severity", "scope")}
    return {"exp_labels": labels, "exp_annotations": {"summary": summary,
                                                      "description": description(alertname, **rule_labels)}}


def run(promtool: str, tmp_path, t, groups: list[dict], prices=PRICES, reservation_ends=()) -> None:
    (tmp_path / "rules.yaml").write_text(alerts.rules_file(t, prices, reservation_ends))
    spec = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": groups}
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = subprocess.run([promtool, "test", "rules", "tests.yaml"], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def gpu(node: str, idx: int = 0, model: str = "NVIDIA A10G", host_label: str = "Hostname", **workload) -> dict:
    return {"gpu": str(idx), "UUID": f"GPU-{node}-{idx}", "device": f"nvidia{idx}", "modelName": model,
            host_label: node, **workload}


def humanize(value: float) -> str:
    """Prometheus' `humanize` for values in [1, 1000)."""
    return f"{value:.4g}"


WORKLOAD = {"pod": "train-0", "namespace": "research", "container": "trainer"}


def fb(node: str, used_mib: int, total_mib: int = 10000, minutes: int = LONG, after: str = "",
       **kw) -> list[tuple[str, dict, str]]:
    labels = gpu(node, **kw)
    return [("DCGM_FI_DEV_FB_USED", labels, f"{used_mib}x{minutes} {after}".strip()),
            ("DCGM_FI_DEV_FB_FREE", labels, f"{total_mib - used_mib}x{minutes} {after}".strip())]


def at_percent(t, delta_hundredths: int = 0) -> int:
    """MiB used out of 10000 for memory_used_percent + delta/100 percent."""
    used = t.memory_used_percent * 100
    assert used == int(used), "choose thresholds with at most two decimals"
    return int(used) + delta_hundredths
