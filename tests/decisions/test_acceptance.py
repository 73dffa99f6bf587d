"""Which pools gate new nodes, on which checks, how long it takes (decisions/acceptance.py), and the rules of
`nodePools[].acceptance` (spec/acceptance.py)."""
from __future__ import annotations

import copy

import pytest

from gpu_platform.decisions import acceptance as a
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import acceptance as facts
from gpu_platform.facts import names
from gpu_platform.spec.errors import SpecError
from gpu_platform.spec.pool_context import PoolContext
from tests.support.stacks import stack_platform as load_stack


def _spec(stack: str, environment: str | None = None, **acceptance):
    raw = copy.deepcopy(load_stack(stack))
    if environment:
        raw["environment"] = environment
    for pool in raw["nodePools"]:
        pool.pop("acceptance", None)
        if acceptance:
            pool["acceptance"] = dict(acceptance)
    return raw


def _gates(raw):
    spec = parse_platform(raw)
    return {p.name: a.pool_acceptance(PoolContext.of(spec, p), p) for p in spec.node_pools}, spec


def test_dev_pools_take_work_at_once_by_default():
    gates, _ = _gates(_spec("dev"))
    assert set(gates.values()) == {None}


def test_staging_defaults_to_level_1_and_prod_to_level_2():
    assert {g.level for g in _gates(_spec("dev", "staging"))[0].values()} == {1}
    assert {g.level for g in _gates(_spec("prod"))[0].values()} == {2}


def test_prod_pools_run_what_their_hardware_has():
    gates, _ = _gates(_spec("prod"))
    a100, h100_mig = gates["a100-train"], gates["h100-mig"]
    assert a100.checks == ("dcgm", "nccl", "efa") and a100.efa_interfaces == 4
    assert a100.nccl_floor_gbps == facts.nccl_floor_gbps("A100-SXM4-40GB", 8) == 180.0
    assert a100.timeout_minutes == 15 + 15 + 5
    assert h100_mig.checks == ("dcgm",)  # MIG slices cannot all-reduce as whole GPUs


def test_single_gpu_pool_runs_dcgm_only():
    gates, spec = _gates(_spec("dev", "staging"))
    single = [g for g in gates.values() if g.gpus == 1]
    assert single and all(g.checks == ("dcgm",) and g.nccl_floor_gbps is None for g in single)


def test_expected_time_adds_pulls_and_checks():
    gate = a.PoolAcceptance("p", 3, ("dcgm", "nccl", "efa"), 60, 270.0, 32, 8)
    assert gate.expected_seconds == 900 + 120 + 20 + 180
    assert a.scale_up_cost_usd(gate, 55.04) == round(1220 / 3600 * 55.04, 2)


def test_disabled_gate_and_startup_taint():
    raw = _spec("prod", enabled=False)
    gates, spec = _gates(raw)
    assert set(gates.values()) == {None}
    raw = _spec("prod")
    spec = parse_platform(raw)
    pool = spec.node_pools[0]
    assert a.startup_taints(PoolContext.of(spec, pool), pool) == [
        (names.ACCEPTANCE_TAINT_KEY, names.ACCEPTANCE_TAINT_VALUE, "NoSchedule")]


def test_overrides_win():
    gates, _ = _gates(_spec("prod", level=3, timeoutMinutes=90, checks=["dcgm"]))
    assert {(g.level, g.timeout_minutes, g.checks) for g in gates.values()} == {(3, 90, ("dcgm",))}


def _refusal(raw) -> str:
    with pytest.raises(SpecError) as e:
        parse_platform(raw)
    return str(e.value)


def test_check_the_hardware_cannot_run_is_refused_with_its_path():
    raw = _spec("dev", checks=["dcgm", "efa"])
    assert "nodePools[0].acceptance.checks[1]: 'efa' cannot run on this pool" in _refusal(raw)


def test_dcgm_is_required_and_floor_needs_nccl():
    assert "must include dcgm" in _refusal(_spec("prod", checks=["nccl"]))
    msg = _refusal(_spec("dev", ncclBusBandwidthGbps=100))
    assert "nodePools[0].acceptance.ncclBusBandwidthGbps" in msg


def test_idle_rechecks_default_by_environment():
    assert {g.recheck_hours for g in _gates(_spec("prod"))[0].values()} == {a.DEFAULT_RECHECK_HOURS["prod"]} == {24}
    assert {g.recheck_hours for g in _gates(_spec("dev", "staging"))[0].values()} == {None}
    assert {g.recheck_hours for g in _gates(_spec("dev", level=1))[0].values()} == {None}


def test_idle_rechecks_can_be_set_or_turned_off():
    assert {g.recheck_hours for g in _gates(_spec("dev", recheckHours=6))[0].values()} == {6}
    assert {g.recheck_hours for g in _gates(_spec("prod", recheckHours=0))[0].values()} == {None}


def test_idle_recheck_bounds_and_a_disabled_gate_are_refused_with_the_path():
    assert "nodePools[0].acceptance.recheckHours" in _refusal(_spec("prod", recheckHours=facts.RECHECK_MAX_HOURS + 1))
    assert "nodePools[0].acceptance.recheckHours" in _refusal(_spec("prod", recheckHours=-1))
    msg = _refusal(_spec("prod", enabled=False, recheckHours=24))
    assert "nodePools[0].acceptance.recheckHours: applies only with enabled: true" in msg


def test_unknown_level_is_refused():
    assert "acceptance.level" in _refusal(_spec("dev", level=4))


def test_the_startup_taint_is_not_a_pool_taint():
    raw = _spec("dev")
    raw["nodePools"][0]["taints"] = [{"key": names.ACCEPTANCE_TAINT_KEY, "effect": "NoSchedule"}]
    assert "nodePools[0].taints[0].key" in _refusal(raw)


# --- a pool's own memory thresholds (nodePools[].alerts) ---

def test_pool_memory_limits_fall_back_to_the_stacks():
    raw = _spec("prod")
    raw["nodePools"][2]["alerts"] = {"memoryUsedPercent": 95}
    spec = parse_platform(raw)
    assert spec.pool_memory_limits() == {raw["nodePools"][2]["name"]: (95, spec.monitoring.alerts.memory_critical_percent)}


def test_a_pool_warning_above_its_critical_is_refused():
    raw = _spec("prod")
    raw["nodePools"][1]["alerts"] = {"memoryUsedPercent": 98}  # the stack's critical is 97
    assert "nodePools[1].alerts: memoryUsedPercent (98) must be below memoryCriticalPercent (97" in _refusal(raw)
