"""The lifecycle calendar's data: sourced, dated, consistent with AWS's and NVIDIA's own rules and with the
rest of the catalog."""
from datetime import date
from pathlib import Path

import pytest

from gpu_platform.facts import catalog
from gpu_platform.facts.lifecycle_calendar import (
    ADDON_KUBERNETES, AMI_DRIVER_ERAS, CHECKED, DRIVER_BRANCHES, EKS_KUBERNETES, OPERATOR_LINES, addon_line,
    ami_driver_era, operator_line, release_date,
)
from tests.support.stacks import spec_of

ENTRIES = [*EKS_KUBERNETES.values(), *OPERATOR_LINES.values(), *DRIVER_BRANCHES.values(), *AMI_DRIVER_ERAS]


def months_between(a: date, b: date) -> int:
    return (b.year - a.year) * 12 + b.month - a.month


@pytest.mark.parametrize("entry", ENTRIES, ids=repr)
def test_every_entry_names_its_source_and_the_day_it_was_checked(entry):
    assert entry.source and date.fromisoformat(entry.checked) <= date.fromisoformat(CHECKED)


@pytest.mark.parametrize("entry", [e for e in ENTRIES if not e.confirmed], ids=repr)
def test_unconfirmed_entries_say_why(entry):
    assert entry.note


@pytest.mark.parametrize("release", EKS_KUBERNETES.values(), ids=lambda r: r.version)
def test_eks_gives_14_months_of_standard_and_12_of_extended_support(release):
    assert release.upstream_release < release.eks_release < release.end_of_standard < release.end_of_extended
    assert months_between(release.eks_release, release.end_of_standard) == 14
    assert months_between(release.end_of_standard, release.end_of_extended) == 12
    assert release.end_of_extended.day == release.end_of_standard.day


def test_eks_versions_follow_each_other():
    versions = list(EKS_KUBERNETES)
    assert versions == sorted(versions, key=lambda v: tuple(map(int, v.split("."))))
    releases = [r.eks_release for r in EKS_KUBERNETES.values()]
    assert releases == sorted(releases)


def test_every_version_the_platform_accepts_is_in_the_calendar():
    assert set(catalog.KUBERNETES_VERSIONS) <= set(EKS_KUBERNETES)
    assert set(catalog.CLUSTER_AUTOSCALER_IMAGE_TAGS) <= set(EKS_KUBERNETES)


def test_the_issues_reference_dates():
    """1.33 left standard support on 2026-07-29 and 1.34 leaves it on 2026-12-02 (AWS calendar)."""
    assert (EKS_KUBERNETES["1.33"].end_of_standard, EKS_KUBERNETES["1.34"].end_of_standard) == (
        date(2026, 7, 29), date(2026, 12, 2))


def test_operator_lines_are_in_release_order_and_cover_every_chart():
    released = [o.released for o in OPERATOR_LINES.values()]
    assert released == sorted(released)
    assert {operator_line(v) for v in catalog.GPU_OPERATOR_CHARTS} <= set(OPERATOR_LINES)


def test_every_driver_a_chart_supports_has_a_branch_in_the_calendar():
    for chart in catalog.GPU_OPERATOR_CHARTS.values():
        for version in chart.supported_drivers:
            assert catalog.driver_branch(version) in DRIVER_BRANCHES, version


def test_driver_branch_ends_are_month_ends():
    for branch in DRIVER_BRANCHES.values():
        assert date.fromordinal(branch.eol.toordinal() + 1).day == 1, branch


def test_ami_eras_carry_known_branches_and_document_families_within_them():
    for era in AMI_DRIVER_ERAS:
        assert set(era.branches) <= set(DRIVER_BRANCHES)
        assert set(era.family_branches.values()) <= set(era.branches)
        assert len(era.branches) == 1 or era.family_branches or not era.confirmed
        assert era.default_branch in ("", *era.branches)


def test_the_dual_driver_ami_runs_r580_but_on_g7():
    era = ami_driver_era("AL2023_x86_64_NVIDIA", "1.35.8-20260917")
    assert {f: era.branch_for(f) for f in ("g7", "g7e", "p6-b200", "p6-b300", "g5", "p5")} == {
        "g7": "595", "g7e": "580", "p6-b200": "580", "p6-b300": "580", "g5": "580", "p5": "580"}
    assert ami_driver_era("AL2023_x86_64_NVIDIA", "1.35.7-20260911").branch_for("g7") == "580"


@pytest.mark.parametrize("release, branches", [
    ("1.33.5-20250731", None),  # before the calendar
    ("1.33.5-20250801", ("570",)),
    # each Kubernetes version's images moved to R580 in its own release (amazon-eks-ami CHANGELOG.md)
    ("1.34.1-20251016", ("570",)),
    ("1.34.1-20251023", ("580",)),
    ("1.33.5-20251023", ("570",)),
    ("1.33.5-20251029", ("580",)),
    ("1.32.9-20251029", ("570",)),
    ("1.32.9-20251108", ("580",)),
    ("1.30.14-20251112", ("570",)),
    ("1.30.14-20251120", ("580",)),
    ("1.35.7-20260911", ("580",)),
    ("1.35.8-20260917", ("580", "595")),
])
def test_an_ami_release_falls_in_the_era_of_its_date(release, branches):
    era = ami_driver_era("AL2023_x86_64_NVIDIA", release)
    assert (era.branches if era else None) == branches


def test_a_karpenter_alias_names_no_kubernetes_version_and_gets_only_eras_of_every_version():
    assert ami_driver_era("AL2023_x86_64_NVIDIA", "al2023@v20251110").branches == ("570",)
    assert ami_driver_era("AL2023_x86_64_NVIDIA", "al2023@v20251120").branches == ("580",)


def test_other_ami_types_have_no_era():
    assert ami_driver_era("BOTTLEROCKET_x86_64_NVIDIA", "1.35.7-20260911") is None


@pytest.mark.parametrize("text, day", [("1.35.8-20260930", date(2026, 9, 30)), ("1.35.8-20261332", None),
                                       ("1.35.8", None), ("", None)])
def test_release_date(text, day):
    assert release_date(text) == day


def test_version_lines():
    assert (addon_line("v1.13.2-eksbuild.31"), operator_line("v26.7.0")) == ("v1.13", "v26.7")


def test_addon_lines_name_calendar_versions():
    for lines in ADDON_KUBERNETES.values():
        for versions in lines.values():
            assert set(versions) <= set(EKS_KUBERNETES)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_example_stacks_pin_addons_listed_for_their_kubernetes_version(stack):
    spec = spec_of(stack)
    k8s = spec.cluster.kubernetes_version
    for name, version in spec.cluster.create.addons.items():
        if name in catalog.ADDONS_MATCHING_CLUSTER_MINOR:
            assert addon_line(version) == f"v{k8s}", name
        else:
            assert k8s in ADDON_KUBERNETES[name][addon_line(version)], name


def test_the_documented_calendar_matches_the_data():
    doc = (Path(__file__).resolve().parents[2] / "docs" / "lifecycle.md").read_text()
    for r in EKS_KUBERNETES.values():
        assert f"| {r.version} | {r.eks_release} | {r.end_of_standard} | {r.end_of_extended} |" in doc, r.version
    for b in DRIVER_BRANCHES.values():
        assert f"| R{b.branch} | {b.kind.replace('-', ' ')} | {b.eol}" in doc, b.branch
    for era in AMI_DRIVER_ERAS:
        assert f"| {era.first_release} | " in doc, era
