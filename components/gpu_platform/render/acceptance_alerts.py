"""Alerts the acceptance gate and DCGM's clock-event reasons raise (docs/acceptance.md, docs/monitoring.md).

- GpuNodeAcceptanceFailed: a node's `GpuAcceptance` condition is False (kube-state-metrics exports every node
  condition): it failed a check, keeps its startup taint and takes no work. No namespace: the platform's.
- GpuNodePassiveHealthFailed: an accepted node's `GpuHealthPassive` condition is False: the idle re-check's
  `dcgmi health -c` found a failure (or gave no report) on a node that passed its acceptance checks.
- GpuClockThrottled: DCGM_FI_DEV_CLOCKS_EVENT_REASONS (a bitmask of NVML's clocks-event reasons, DCGM field
  112) holds a thermal or hardware-slowdown reason for minutes: the GPU runs slower than it should.
- GpuPowerBrake: the hardware power brake reason: an external signal (the node's power supply or cooling)
  cut the GPU's clocks, a power anomaly of the host, not of the workload.

The bits (NVML nvmlClocksEventReasons): 0x8 hardware slowdown, 0x20 software thermal slowdown, 0x40 hardware
thermal slowdown, 0x80 hardware power brake slowdown. PromQL has no bitwise operators: a bit b is set when
floor(v / b) % 2 == 1.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Mapping

from gpu_platform.facts import names
from gpu_platform.render.alert_rule import alerting_rule as _alert
from gpu_platform.render.alert_rule import ksm_name

CLOCK_EVENTS = "DCGM_FI_DEV_CLOCKS_EVENT_REASONS"
HW_SLOWDOWN, SW_THERMAL, HW_THERMAL, POWER_BRAKE = 0x8, 0x20, 0x40, 0x80
THROTTLE_REASONS = {HW_SLOWDOWN: "hardware slowdown", SW_THERMAL: "software thermal slowdown",
                    HW_THERMAL: "hardware thermal slowdown"}
_GPU = "GPU {{ $labels.gpu }} ({{ $labels.modelName }}, {{ $labels.UUID }}) on node {{ $labels.node }}"


def _with_node(expr: str) -> str:
    inner = f'label_replace({expr}, "node", "$1", "Hostname", "(.+)")'
    return f'label_replace({inner}, "node", "$1", "hostname", "(.+)")'


def bit_set(bit: int) -> str:
    return f"floor({CLOCK_EVENTS} / {bit}) % 2 == 1"


def acceptance_failed() -> dict[str, Any]:
    return _alert(
        "GpuNodeAcceptanceFailed",
        f'max by (node) (kube_node_status_condition{{condition="{names.ACCEPTANCE_CONDITION}",status="false"}}) == 1',
        0, "critical",
        f"Node {{{{ $labels.node }}}} failed its acceptance checks ({names.ACCEPTANCE_CONDITION}=False): it keeps "
        "its startup taint and takes no work.",
        f"A new GPU node failed a check before taking work. `kubectl describe node` shows the "
        f"{names.ACCEPTANCE_CONDITION} condition's reason (DcgmFailed, NcclFailed, EfaFailed, ImexFailed, or "
        f"FullCheckRequired after an earlier failure) and the failing check's summary; the node label "
        f"{names.ACCEPTANCE_CHECK_LABEL} names the check. With the pool's repair on, the checker replaces the node "
        "(Karpenter: deletes its NodeClaim; managed node groups: terminates the instance in its Auto Scaling group, "
        "keeping the group's size) unless more of the pool's nodes failed than its repair limit: then the "
        "condition's message says the node was held, and a cause common to the pool (AMI, driver, check image) is "
        "likelier. With repair off, replace the instance yourself, or run the full check by hand to clear a false "
        "alarm (docs/acceptance.md).",
    )


def passive_health_failed() -> dict[str, Any]:
    return _alert(
        "GpuNodePassiveHealthFailed",
        f'max by (node) (kube_node_status_condition{{condition="{names.HEALTH_CONDITION}",status="false"}}) == 1',
        0, "critical",
        f"Node {{{{ $labels.node }}}} failed its passive GPU health re-check ({names.HEALTH_CONDITION}=False).",
        f"An accepted GPU node, re-checked while idle, failed DCGM's background health watches (`dcgmi health -c`: "
        f"memory, PCIe, NVLink, thermal, power, InfoROM or driver). `kubectl describe node` shows the "
        f"{names.HEALTH_CONDITION} condition's reason (Failure, NoReport, TimedOut) and DCGM's incident text. The "
        "node still takes work: cordon and drain it, run the full acceptance check by hand (docs/acceptance.md) and "
        "replace the instance if it fails. The next idle re-check sets the condition again.",
    )


# Beyond a pool's timeout: image pulls (facts/acceptance.py PULL_SECONDS, at most 3 minutes), scheduling the
# checker, and the reporter's write; a checker that ran out of time reports a failure well inside it.
STUCK_MARGIN_MINUTES = 15
POOL_KSM_LABEL = f"label_{ksm_name(names.POOL_LABEL)}"


def acceptance_stuck(pool: str, timeout_minutes: int) -> dict[str, Any]:
    """One rule per gated pool: its nodes wait out the pool's own timeout before the alert."""
    tainted = f'max by (node) (kube_node_spec_taint{{key="{names.ACCEPTANCE_TAINT_KEY}"}})'
    judged = f'max by (node) (kube_node_status_condition{{condition="{names.ACCEPTANCE_CONDITION}"}})'
    in_pool = f'max by (node) (kube_node_labels{{{POOL_KSM_LABEL}="{pool}"}})'
    minutes = timeout_minutes + STUCK_MARGIN_MINUTES
    rule = _alert(
        "GpuNodeAcceptanceStuck", f"({tainted} unless on (node) {judged}) and on (node) {in_pool}", minutes,
        "critical",
        f"Node {{{{ $labels.node }}}} of pool {pool} has waited {minutes} minutes for its acceptance checks with no "
        f"verdict: it keeps its startup taint and takes no work.",
        f"The acceptance checker never reported on a node of a gated pool (no {names.ACCEPTANCE_CONDITION} "
        f"condition past the pool's timeout). Look at the checker's pod on the node (namespace "
        f"{names.ACCEPTANCE_NAMESPACE}): an image that cannot be pulled, a pod that cannot be scheduled, a check "
        "container that crashes, or the GPU Operator's RuntimeClass missing. Every new node of the pool waits the "
        "same way, so scale-ups add no capacity until it is fixed (docs/acceptance.md).",
    )
    rule["labels"]["pool"] = pool
    return rule


def clock_throttled(t: Any) -> dict[str, Any]:
    reasons = " or ".join(f"({_with_node(bit_set(b))})" for b in THROTTLE_REASONS)
    return _alert(
        "GpuClockThrottled", f"max by (node, gpu, UUID, modelName) ({reasons})", t.temperature_for_minutes,
        "warning", f"{_GPU} has been throttled (thermal or hardware slowdown) for "
                   f"{t.temperature_for_minutes} minutes.",
        "DCGM reports a clocks-event reason that slows the GPU regardless of its work: software or hardware "
        "thermal slowdown (the GPU or its memory is too hot), or hardware slowdown (a thermal or power event of "
        "the board). Jobs on it run slower and multi-GPU jobs wait for it. Check DCGM_FI_DEV_GPU_TEMP and "
        "DCGM_FI_DEV_MEMORY_TEMP on the node; a single hot GPU among cool ones points at the board or its "
        "cooling: drain the node and replace the instance. Delay: monitoring.alerts.temperatureForMinutes.",
    )


def power_brake(_t: Any) -> dict[str, Any]:
    return _alert(
        "GpuPowerBrake", f"max by (node, gpu, UUID, modelName) ({_with_node(bit_set(POWER_BRAKE))})", 1, "warning",
        f"{_GPU} is held by the hardware power brake.",
        "The hardware power brake slowdown is asserted by a signal outside the GPU (the host's power supply or "
        "chassis management), a power anomaly of the instance, not of the job: the GPU's clocks are cut hard. "
        "If it lasts, drain the node and replace the instance; report recurring cases to AWS.",
    )


def rules(t: Any, timeouts: Mapping[str, int]) -> list[dict[str, Any]]:
    """`timeouts`: each gated pool's acceptance timeout in minutes."""
    stuck = [acceptance_stuck(pool, minutes) for pool, minutes in sorted(timeouts.items())]
    return [acceptance_failed(), passive_health_failed(), *stuck, clock_throttled(t), power_brake(t)]
