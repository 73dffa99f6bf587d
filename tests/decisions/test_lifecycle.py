"""Lifecycle verdicts: every support window, boundary and severity, on fixed as-of dates."""
from datetime import date, timedelta

import pytest

from gpu_platform.decisions import lifecycle
from gpu_platform.decisions.lifecycle import (
    DEPRECATED, END_OF_LIFE, ERROR, EXTENDED, STANDARD, SUPPORTED, UNKNOWN, UNRELEASED, WARNING, control_plane_price,
    kubernetes_window, operator_status, pool_driver, standings, verdicts,
)
from gpu_platform.decisions.pinned import Pinned, PoolPin
from gpu_platform.facts import catalog
from gpu_platform.facts.lifecycle_calendar import EKS_KUBERNETES

TODAY = date(2026, 11, 23)
NVIDIA = "AL2023_x86_64_NVIDIA"


def k8s(version: str, created: bool = True) -> Pinned:
    return Pinned(kubernetes=version, cluster_created=created)


def only(found: list) -> lifecycle.Verdict:
    assert len(found) == 1, found
    return found[0]


def pool(release: str, *types: str, ami: str = NVIDIA, name: str = "gpu") -> PoolPin:
    return PoolPin(name, ami, release, types or ("g5.xlarge",))


# --- Kubernetes windows ---

@pytest.mark.parametrize("version, day, window", [
    ("1.35", date(2026, 1, 26), UNRELEASED),
    ("1.35", date(2026, 1, 27), STANDARD),
    ("1.35", date(2027, 3, 26), STANDARD),
    ("1.35", date(2027, 3, 27), EXTENDED),  # billing for extended support starts that day (UTC)
    ("1.35", date(2028, 3, 26), EXTENDED),
    ("1.35", date(2028, 3, 27), END_OF_LIFE),
    ("1.33", TODAY, EXTENDED),
    ("1.34", TODAY, STANDARD),
    ("1.30", TODAY, END_OF_LIFE),
    ("1.28", TODAY, UNKNOWN),
    (None, TODAY, UNKNOWN),
])
def test_kubernetes_window(version, day, window):
    assert kubernetes_window(version, day) == window


@pytest.mark.parametrize("version, day, usd", [
    ("1.35", TODAY, 0.10), ("1.33", TODAY, 0.60), ("1.30", TODAY, 0.60), ("1.36", date(2026, 1, 1), 0.10),
    ("9.99", TODAY, 0.10),
])
def test_control_plane_price_follows_the_window(version, day, usd):
    assert control_plane_price(version, day).usd_per_hour == usd


def test_extended_support_costs_365_more_a_month():
    assert lifecycle.extended_support_surcharge() == pytest.approx(365.0)


def test_1_33_on_2026_11_23_is_in_extended_support_with_its_cost():
    v = only(verdicts(k8s("1.33"), TODAY, strict=True))
    assert (v.severity, v.kind, v.field, v.date, v.monthly_usd) == (
        WARNING, "kubernetes", "cluster.kubernetesVersion", date(2026, 7, 29), pytest.approx(365.0))
    assert "$0.60/h instead of $0.10/h, $365.00 more a month" in v.message
    assert "extended support ends 2027-07-29" in v.message and "to 1.34" in v.message


def test_1_34_within_60_days_of_the_end_of_standard_support_warns_with_the_date():
    v = only(verdicts(k8s("1.34"), TODAY, strict=True))
    assert (v.severity, v.date) == (WARNING, date(2026, 12, 2))
    assert "leaves EKS standard support on 2026-12-02 (in 9 days)" in v.message


@pytest.mark.parametrize("days_before, says", [
    (61, None), (60, "leaves EKS standard support on 2027-03-27 (in 60 days)"),
    (1, "(in 1 day)"), (0, "is in EKS extended support"),
])
def test_the_standard_support_warning_starts_60_days_before(days_before, says):
    end = EKS_KUBERNETES["1.35"].end_of_standard
    found = verdicts(k8s("1.35"), end - timedelta(days=days_before), strict=True)
    assert (says in only(found).message) if says else found == []


def test_warn_days_is_configurable():
    assert verdicts(k8s("1.35"), date(2027, 1, 1), strict=True, warn_days=30) == []
    assert verdicts(k8s("1.35"), date(2027, 1, 1), strict=True, warn_days=90)


def test_extended_support_ending_soon_says_so():
    v = only(verdicts(k8s("1.33"), date(2027, 7, 1), strict=True))
    assert "extended support ends 2027-07-29 (in 28 days)" in v.message


@pytest.mark.parametrize("strict, severity", [(True, ERROR), (False, WARNING)])
def test_past_extended_support_is_an_error_only_when_strict(strict, severity):
    v = only(verdicts(k8s("1.33"), date(2027, 8, 1), strict=strict))
    assert (v.severity, v.date) == (severity, date(2027, 7, 29))
    assert "reached the end of EKS extended support on 2027-07-29" in v.message and "next 1.34" in v.message


@pytest.mark.parametrize("strict, severity", [(True, ERROR), (False, WARNING)])
def test_a_version_eks_does_not_offer_yet(strict, severity):
    v = only(verdicts(k8s("1.36"), date(2026, 5, 1), strict=strict))
    assert v.severity == severity and "not available on EKS on 2026-05-01" in v.message
    assert "(unconfirmed)" in v.message  # 1.36's EKS date is known to the month only


def test_a_version_missing_from_the_calendar_warns():
    v = only(verdicts(k8s("1.28"), TODAY, strict=True))
    assert v.severity == WARNING and "not in the lifecycle calendar" in v.message


def test_an_adopted_cluster_is_billed_to_its_owner():
    assert "billed to the adopted cluster's owner" in only(verdicts(k8s("1.33", created=False), TODAY, True)).message


def test_no_kubernetes_no_verdict():
    assert verdicts(Pinned(), TODAY, strict=True) == []


# --- GPU Operator lines ---

@pytest.mark.parametrize("chart, day, status, since", [
    ("v26.7.0", TODAY, SUPPORTED, None),
    ("v26.3.3", TODAY, DEPRECATED, "v26.7"),
    ("v25.10.1", TODAY, END_OF_LIFE, "v26.7"),
    ("v25.3.4", TODAY, END_OF_LIFE, "v26.3"),
    ("v26.3.0", date(2026, 8, 19), SUPPORTED, None),
    ("v26.3.0", date(2026, 8, 20), DEPRECATED, "v26.7"),
    ("v26.7.0", date(2026, 8, 1), UNRELEASED, None),
    ("v24.9.2", TODAY, UNKNOWN, None),
])
def test_operator_status(chart, day, status, since):
    found, _, superseded = operator_status(chart, day)
    assert (found, superseded.line if superseded else None) == (status, since)


def test_a_line_in_maintenance_warns_and_names_the_next_line():
    v = only(verdicts(Pinned(operator_chart="v26.3.3"), TODAY, strict=True))
    assert (v.severity, v.field, v.date) == (WARNING, "gpuOperator.chartVersion", date(2026, 8, 20))
    assert "in maintenance since v26.7 was released" in v.message and "to v26.7.x" in v.message


@pytest.mark.parametrize("strict, severity", [(True, ERROR), (False, WARNING)])
def test_an_end_of_life_line_names_the_next_step(strict, severity):
    v = only(verdicts(Pinned(operator_chart="v25.10.1"), TODAY, strict=strict))
    assert v.severity == severity
    assert "reached end of life when v26.7 was released" in v.message and "next v26.3.x" in v.message


def test_an_unknown_operator_chart_warns():
    assert only(verdicts(Pinned(operator_chart="v24.9.2"), TODAY, True)).severity == WARNING


def test_a_supported_or_future_line_says_nothing():
    assert verdicts(Pinned(operator_chart="v26.7.0"), TODAY, True) == []
    assert verdicts(Pinned(operator_chart="v26.7.0"), date(2026, 8, 1), True) == []


# --- driver branches ---

@pytest.mark.parametrize("strict, severity", [(True, ERROR), (False, WARNING)])
def test_an_operator_driver_past_end_of_life(strict, severity):
    v = only(verdicts(Pinned(operator_driver="535.309.01"), TODAY, strict=strict))
    assert (v.severity, v.field, v.date) == (severity, "gpuOperator.driver.version", date(2026, 6, 30))
    assert "the GPU Operator's driver runs R535, which reached end of life on 2026-06-30" in v.message
    assert "R580 (LTSB) is supported until 2028-06-30" in v.message


def test_a_driver_branch_within_60_days_of_its_end_warns_with_the_date():
    v = only(verdicts(Pinned(operator_driver="595.91.07"), date(2027, 2, 1), strict=True))
    assert (v.severity, v.date) == (WARNING, date(2027, 3, 31))
    assert "reaches end of life on 2027-03-31 (in 58 days)" in v.message


def test_a_supported_driver_far_from_its_end_says_nothing():
    assert verdicts(Pinned(operator_driver="580.173.02"), TODAY, True) == []


def test_an_unknown_driver_branch_warns():
    v = only(verdicts(Pinned(operator_driver="590.48.01"), TODAY, True))
    assert v.severity == WARNING and "R590, a branch the lifecycle calendar does not know" in v.message


def test_an_ami_release_carrying_an_end_of_life_branch():
    v = only(verdicts(Pinned(pools=(pool("1.33.4-20250901"),)), TODAY, strict=True))
    assert (v.severity, v.field) == (ERROR, "nodePools[].ami.releaseVersion")
    assert "pool gpu runs R570, which reached end of life on 2026-02-28" in v.message
    assert "pin a newer ami.releaseVersion" in v.message


def test_pools_on_the_same_branch_share_one_verdict():
    v = only(verdicts(Pinned(pools=(pool("1.33.4-20250901", name="a"), pool("1.33.4-20250901", name="b"))), TODAY, True))
    assert "pool a and pool b run R570" in v.message


def test_current_ami_releases_carry_r580():
    assert pool_driver(pool("1.35.7-20260911")).certain == ("580",)
    assert verdicts(Pinned(pools=(pool("1.35.7-20260911"),)), TODAY, strict=True) == []


def test_a_dual_driver_ami_runs_r580_on_every_family_whose_gpus_are_on_its_device_list():
    # resolve-nvidia-driver.sh: the LTS tree when every GPU is on R580's open-kernel-module list.
    for instance in ("g5.xlarge", "p3.2xlarge", "p6-b200.48xlarge", "p6-b300.48xlarge", "g7e.12xlarge"):
        assert pool_driver(pool("1.35.8-20260930", instance)).certain == ("580",), instance


def test_a_dual_driver_ami_uses_the_documented_branch_per_family():
    assert pool_driver(pool("1.35.8-20260930", "g7.4xlarge")).certain == ("595",)
    assert pool_driver(pool("1.35.8-20260930", "g7.4xlarge", "g6.xlarge")).certain == ("595", "580")


@pytest.fixture
def undocumented_era(monkeypatch):
    """A dual-driver era whose choice per instance type is not documented."""
    import dataclasses

    from gpu_platform.facts import lifecycle_calendar

    eras = tuple(dataclasses.replace(e, family_branches={}, default_branch="") if len(e.branches) > 1 else e
                 for e in lifecycle_calendar.AMI_DRIVER_ERAS)
    monkeypatch.setattr(lifecycle_calendar, "AMI_DRIVER_ERAS", eras)


def test_a_dual_driver_ami_names_both_branches_when_its_choice_is_undocumented(undocumented_era):
    pd = pool_driver(pool("1.35.8-20260930", "g5.xlarge"))
    assert (pd.certain, pd.possible) == ((), ("580", "595"))


def test_a_branch_a_pool_only_may_run_warns_but_never_fails(undocumented_era):
    day = date(2027, 4, 15)  # R595 is past end of life, R580 is not
    v = only(verdicts(Pinned(pools=(pool("1.35.8-20260930", "g5.xlarge"),)), day, strict=True))
    assert v.severity == WARNING and "may run R595" in v.message


def test_a_branch_a_pool_surely_runs_fails_past_its_end_of_life():
    day = date(2027, 4, 15)  # R595 is past end of life
    certain = only(verdicts(Pinned(pools=(pool("1.35.8-20260930", "g7.4xlarge"),)), day, strict=True))
    assert certain.severity == ERROR


@pytest.mark.parametrize("gpu_pool", [
    pool("1.33.4-20250601"),  # before the calendar
    pool("1.35.7-20260911", ami="BOTTLEROCKET_x86_64_NVIDIA"),
    PoolPin("ubuntu", None, None, ("g5.xlarge",)),  # the image is in the launch template: the operator's driver
])
def test_pools_the_calendar_cannot_place_give_no_verdict(gpu_pool):
    assert verdicts(Pinned(pools=(gpu_pool,)), TODAY, strict=True) == []


# --- everything together ---

def test_errors_come_first():
    found = verdicts(Pinned(kubernetes="1.33", operator_chart="v25.10.1", cluster_created=True), TODAY, strict=True)
    assert [v.severity for v in found] == [ERROR, WARNING]


def test_standings_show_each_pinned_version():
    pins = Pinned(kubernetes="1.35", cluster_created=True, operator_chart="v26.7.0", operator_driver="580.173.02",
                  pools=(pool("1.35.8-20260930", name="a10g"), PoolPin("ubuntu", None, None, ("g6.xlarge",))))
    rows = {(s.subject, s.status, s.until) for s in standings(pins, TODAY)}
    assert rows == {("EKS Kubernetes", STANDARD, date(2027, 3, 27)), ("GPU Operator", SUPPORTED, None),
                    ("operator driver", SUPPORTED, date(2028, 6, 30)),
                    ("AMI driver, pool a10g", SUPPORTED, date(2028, 6, 30))}


def test_standings_mark_unconfirmed_calendar_entries():
    rows = standings(Pinned(kubernetes="1.36", pools=(pool("1.33.4-20250601"),)), TODAY)
    assert [(r.subject, r.confirmed) for r in rows] == [("EKS Kubernetes", False), ("AMI driver, pool gpu", False)]
    assert rows[1].status == UNKNOWN


def test_prices_come_from_the_catalog():
    assert control_plane_price("1.33", TODAY) is catalog.EKS_CONTROL_PLANE_EXTENDED
