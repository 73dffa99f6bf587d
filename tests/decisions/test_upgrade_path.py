"""Upgrade paths between two sets of pins: skipped or reversed versions, driver branch changes, unfit add-ons."""
import dataclasses

import pytest

from gpu_platform.decisions.pinned import Pinned, PoolPin
from gpu_platform.decisions.upgrade_path import ADDON, AUTOSCALER, DRIVER, ERROR, KUBERNETES, OPERATOR, WARNING, compare

ADDONS_133 = {"coredns": "v1.12.2-eksbuild.4", "kube-proxy": "v1.33.3-eksbuild.4", "vpc-cni": "v1.20.4-eksbuild.1",
              "eks-pod-identity-agent": "v1.3.8-eksbuild.2"}
ADDONS_134 = {"coredns": "v1.12.4-eksbuild.10", "kube-proxy": "v1.34.6-eksbuild.2", "vpc-cni": "v1.20.5-eksbuild.1",
              "eks-pod-identity-agent": "v1.3.10-eksbuild.3"}
ADDONS_135 = {"coredns": "v1.13.2-eksbuild.31", "kube-proxy": "v1.35.3-eksbuild.29", "vpc-cni": "v1.22.4-eksbuild.3",
              "eks-pod-identity-agent": "v1.3.10-eksbuild.3"}
BASE = Pinned(kubernetes="1.33", cluster_created=True, operator_chart="v26.7.0", addons=ADDONS_133,
              autoscaler_tag="v1.33.6")


def head(**changes) -> Pinned:
    return dataclasses.replace(BASE, **changes)


def kinds(findings) -> list[tuple[str, str]]:
    return [(f.severity, f.kind) for f in findings]


def test_no_change_no_finding():
    assert compare(BASE, BASE) == []


def test_a_one_minor_upgrade_with_matching_addons_is_clean():
    assert compare(BASE, head(kubernetes="1.34", addons=ADDONS_134, autoscaler_tag="v1.34.5")) == []


def test_a_kubernetes_minor_skipping_a_version_is_named_with_the_first_step():
    (finding,) = compare(BASE, head(kubernetes="1.35", addons=ADDONS_135, autoscaler_tag="v1.35.2"))
    assert (finding.severity, finding.kind, finding.subject) == (ERROR, KUBERNETES, "Kubernetes 1.33 -> 1.35")
    assert "skips 1.34" in finding.message
    assert finding.do_first.startswith("upgrade to 1.34") and "1.33 -> 1.34 -> 1.35" in finding.do_first


def test_skipping_two_minors_lists_both():
    addons = {**ADDONS_135, "kube-proxy": "v1.36.0-eksbuild.17", "coredns": "v1.14.3-eksbuild.14"}
    (finding,) = compare(BASE, head(kubernetes="1.36", addons=addons, autoscaler_tag="v1.36.1"))
    assert "skips 1.34, 1.35" in finding.message


def test_a_kubernetes_downgrade_is_refused():
    (finding,) = compare(head(kubernetes="1.34", addons=ADDONS_134, autoscaler_tag="v1.34.5"), BASE)
    assert (finding.severity, finding.kind) == (ERROR, KUBERNETES) and "downgrade" in finding.message


def test_a_gpu_operator_jump_of_two_release_lines_is_named():
    (finding,) = compare(head(operator_chart="v25.10.1"), head(operator_chart="v26.7.0"))
    assert (finding.severity, finding.kind) == (ERROR, OPERATOR)
    assert "skips v26.3" in finding.message and "v26.3.x" in finding.do_first
    assert "v25.10 -> v26.3 -> v26.7" in finding.do_first


@pytest.mark.parametrize("old, new", [("v26.3.3", "v26.7.0"), ("v26.7.0", "v26.7.1")])
def test_the_next_line_or_a_patch_is_fine(old, new):
    assert compare(head(operator_chart=old), head(operator_chart=new)) == []


def test_an_operator_downgrade_is_refused():
    assert kinds(compare(head(operator_chart="v26.7.0"), head(operator_chart="v26.3.3"))) == [(ERROR, OPERATOR)]


def test_an_operator_line_outside_the_calendar_cannot_be_checked():
    assert kinds(compare(head(operator_chart="v24.9.2"), head(operator_chart="v26.7.0"))) == [(WARNING, OPERATOR)]


def test_an_operator_driver_branch_change_is_named_with_its_end_of_life():
    (finding,) = compare(head(operator_driver="580.173.02"), head(operator_driver="595.91.07"))
    assert (finding.severity, finding.kind) == (WARNING, DRIVER)
    assert "R595 (production, end of life 2027-03-31)" in finding.message
    assert "CUDA" in finding.do_first


def test_a_driver_patch_within_the_branch_is_not_a_branch_change():
    assert compare(head(operator_driver="580.126.16"), head(operator_driver="580.173.02")) == []


def test_an_ami_release_that_changes_the_driver_branch_is_named():
    old = head(pools=(PoolPin("a10g", "AL2023_x86_64_NVIDIA", "1.33.4-20250901", ("g5.xlarge",)),))
    new = head(pools=(PoolPin("a10g", "AL2023_x86_64_NVIDIA", "1.33.5-20251120", ("g5.xlarge",)),))
    (finding,) = compare(old, new)
    assert finding.subject == "NVIDIA driver R570 -> R580 (pool a10g)"
    assert "node group rolls every node" in finding.message


def test_a_dual_driver_ami_keeps_r580_where_its_gpus_are_on_r580s_device_list():
    old = head(pools=(PoolPin("a10g", "AL2023_x86_64_NVIDIA", "1.33.5-20260911", ("g5.xlarge",)),))
    new = head(pools=(PoolPin("a10g", "AL2023_x86_64_NVIDIA", "1.33.5-20260930", ("g5.xlarge",)),))
    assert compare(old, new) == []


def test_a_dual_driver_ami_is_named_as_a_possible_branch_change_when_its_choice_is_undocumented(monkeypatch):
    from gpu_platform.facts import lifecycle_calendar

    eras = tuple(dataclasses.replace(e, family_branches={}, default_branch="") if len(e.branches) > 1 else e
                 for e in lifecycle_calendar.AMI_DRIVER_ERAS)
    monkeypatch.setattr(lifecycle_calendar, "AMI_DRIVER_ERAS", eras)
    old = head(pools=(PoolPin("a10g", "AL2023_x86_64_NVIDIA", "1.33.5-20260911", ("g5.xlarge",)),))
    new = head(pools=(PoolPin("a10g", "AL2023_x86_64_NVIDIA", "1.33.5-20260930", ("g5.xlarge",)),))
    (finding,) = compare(old, new)
    assert finding.subject == "NVIDIA driver R580 -> R580/R595 (pool a10g)"


def test_kube_proxy_for_another_minor_is_an_error():
    findings = compare(BASE, head(kubernetes="1.34", addons={**ADDONS_134, "kube-proxy": "v1.33.3-eksbuild.4"},
                                  autoscaler_tag="v1.34.5"))
    (finding,) = findings
    assert (finding.severity, finding.kind) == (ERROR, ADDON)
    assert "v1.33.3-eksbuild.4 is for 1.33, not 1.34" in finding.message
    assert "cluster.create.addons.kube-proxy" in finding.do_first and "--kubernetes-version 1.34" in finding.do_first


def test_an_addon_line_not_offered_for_the_new_version_names_the_lines_that_are():
    addons = {**ADDONS_135, "coredns": "v1.12.4-eksbuild.10"}
    findings = compare(head(kubernetes="1.34", addons=ADDONS_134, autoscaler_tag="v1.34.5"),
                       head(kubernetes="1.35", addons=addons, autoscaler_tag="v1.35.2"))
    (finding,) = findings
    assert (finding.severity, finding.kind) == (WARNING, ADDON)
    assert "coredns v1.12 is offered for Kubernetes 1.33, 1.34, not 1.35" in finding.message
    assert "v1.13 or v1.14" in finding.do_first


def test_an_addon_without_catalog_data_is_named_only_when_kubernetes_moves():
    efs = {**ADDONS_133, "aws-efs-csi-driver": "v2.1.13-eksbuild.1"}
    assert compare(head(addons=efs), head(addons=efs)) == []
    moved = compare(head(addons=efs), head(kubernetes="1.34", addons={**ADDONS_134, "aws-efs-csi-driver":
                                                                      "v2.1.13-eksbuild.1"}, autoscaler_tag="v1.34.5"))
    (finding,) = moved
    assert "no compatibility data for aws-efs-csi-driver v2.1" in finding.message
    assert "--addon-name aws-efs-csi-driver --kubernetes-version 1.34" in finding.do_first


def test_an_addon_change_on_the_same_version_is_checked_too():
    (finding,) = compare(BASE, head(addons={**ADDONS_133, "coredns": "v1.13.2-eksbuild.31"}))
    assert "not 1.33" in finding.message


def test_an_autoscaler_pinned_to_another_minor_warns():
    (finding,) = compare(head(kubernetes="1.34", addons=ADDONS_134, autoscaler_tag="v1.34.5"),
                         head(kubernetes="1.34", addons=ADDONS_134, autoscaler_tag="v1.33.6"))
    assert (finding.severity, finding.kind) == (WARNING, AUTOSCALER) and "v1.34.5" in finding.do_first


def test_errors_come_first():
    findings = compare(head(operator_driver="580.173.02"),
                       head(kubernetes="1.35", operator_driver="595.91.07", addons=ADDONS_135, autoscaler_tag="v1.35.2"))
    assert kinds(findings) == [(ERROR, KUBERNETES), (WARNING, DRIVER)]
