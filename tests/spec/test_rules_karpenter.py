"""The stack file's rules for Karpenter pools: each refused setting names its field and what is valid."""
from __future__ import annotations

import pytest

from gpu_platform.decisions.validation import parse_platform
from tests.support.stacks import spec_problems as problems
from tests.support.stacks import stack_platform

AL2023 = {"type": "AL2023_x86_64_NVIDIA", "alias": "al2023@v20251120"}


def pool(**extra) -> dict:
    out = {"name": "l4-k", "provisioner": "karpenter", "instanceTypes": ["g6.xlarge"], "capacityType": "on-demand",
           "minSize": 0, "maxSize": 4, "ami": dict(AL2023)}
    out.update(extra)
    return out


def dev(*pools: dict, **edits) -> dict:
    platform = stack_platform("dev")
    platform["nodePools"] += list(pools)
    platform.update(edits)
    return platform


def prod(*pools: dict, window=True, **edits) -> dict:
    platform = stack_platform("karpenter")
    platform["nodePools"] = list(pools) or platform["nodePools"]
    if not window:
        platform["karpenter"].pop("disruptionWindow")
    platform.update(edits)
    return platform


def the_problem(platform: dict, field: str) -> str:
    found = [p for p in problems(platform) if p.startswith(field + ":")]
    assert len(found) == 1, problems(platform)
    return found[0]


def test_the_example_stacks_are_valid():
    assert problems(dev(pool())) == [] and problems(prod()) == []


def test_the_provisioner_defaults_to_managed_node_groups():
    assert {p.provisioner for p in parse_platform(stack_platform("prod")).node_pools} == {"managed-node-group"}


def test_an_unknown_provisioner_is_refused():
    assert any(p.startswith("nodePools[1].provisioner:") for p in problems(dev(pool(provisioner="cluster-autoscaler"))))


def test_min_size_above_zero_is_refused_with_the_reason():
    message = the_problem(dev(pool(minSize=1)), "nodePools[1].minSize")
    assert "no minimum size" in message and "managed-node-group" in message


def test_efa_pools_stay_on_managed_node_groups():
    assert "managed-node-group" in the_problem(dev(pool(instanceTypes=["p5.48xlarge"], efa=True)), "nodePools[1].efa")


def test_the_minimal_update_strategy_is_a_node_group_setting():
    the_problem(dev(pool(updateStrategy="minimal")), "nodePools[1].updateStrategy")


@pytest.mark.parametrize("ami, field, words", [
    ({"type": "AL2023_x86_64_NVIDIA", "alias": "al2023@latest"}, "nodePools[1].ami.alias", "not an exact release"),
    ({"type": "AL2023_x86_64_NVIDIA", "alias": "al2023@v2025"}, "nodePools[1].ami.alias", "not an exact release"),
    ({"type": "AL2023_x86_64_NVIDIA", "alias": "bottlerocket@v1.50.0"}, "nodePools[1].ami.alias", "al2023@... alias"),
    ({"type": "BOTTLEROCKET_x86_64_NVIDIA", "alias": "bottlerocket@latest"}, "nodePools[1].ami.alias", "exact release"),
    ({"type": "AL2023_x86_64_NVIDIA"}, "nodePools[1].ami", "exactly one of alias"),
    ({"type": "AL2023_x86_64_NVIDIA", "alias": "al2023@v20251120", "imageId": "ami-0123456789abcdef0"},
     "nodePools[1].ami", "exactly one of alias"),
    ({"type": "AL2023_x86_64_NVIDIA", "alias": "al2023@v20251120", "releaseVersion": "1.33.5-20251120"},
     "nodePools[1].ami.releaseVersion", "al2023@v20251120 for this release"),
    ({"type": "AL2_x86_64_GPU", "alias": "al2@v20250101"}, "nodePools[1].ami.type", "not supported"),
])
def test_the_image_is_pinned_by_an_exact_alias_or_an_id(ami, field, words):
    assert words in the_problem(dev(pool(ami=ami)), field)


def test_an_alias_is_at_most_30_characters_as_the_crd_allows():
    assert any(p.startswith("nodePools[1].ami.alias:") for p in problems(dev(pool(ami={
        "type": "AL2023_x86_64_NVIDIA", "alias": "al2023@v20251120-and-much-more-text"}))))


def test_ubuntu_pools_follow_the_operator_driver_and_pin_an_id():
    platform = stack_platform("prod")
    platform["nodePools"].append(pool(ami={"type": "UBUNTU_24_04"}))
    platform["karpenter"] = {"disruptionWindow": {"schedule": "0 2 * * sun", "duration": "4h"}}
    assert "pin the UBUNTU_24_04 EKS image id" in the_problem(platform, "nodePools[3].ami.imageId")
    platform["nodePools"][-1]["ami"] = {"type": "UBUNTU_24_04", "alias": "al2023@v20251120", "imageId": "ami-0123456789abcdef0"}
    assert "no EKS alias" in the_problem(platform, "nodePools[3].ami.alias")


def test_driver_ownership_is_the_same_as_on_node_groups():
    platform = stack_platform("prod")
    platform["nodePools"].append(pool())  # an AMI-owned driver image with the operator's driver
    platform["karpenter"] = {"disruptionWindow": {"schedule": "0 2 * * sun", "duration": "4h"}}
    assert "ships its own NVIDIA driver" in the_problem(platform, "nodePools[3].ami.type")


def test_mig_slices_under_the_mixed_strategy_are_refused_with_the_way_out():
    mig = pool(instanceTypes=["p5.48xlarge"], sharing={"mode": "mig", "layout": {"3g.40gb": 2}})
    message = the_problem(dev(mig), "nodePools[1].sharing.strategy")
    assert "strategy single" in message and "managed-node-group" in message


def test_prod_needs_a_disruption_window():
    assert "0 2 * * sun" in the_problem(prod(window=False), "karpenter.disruptionWindow")


def test_a_window_is_optional_outside_prod():
    assert problems(dev(pool())) == []


@pytest.mark.parametrize("window, words", [
    ({"schedule": "0 2 1 * *", "duration": "4h"}, "repeat every week"),
    ({"schedule": "0 * * * *", "duration": "2h"}, "always open"),
    ({"schedule": "0 2 * * sun", "duration": "0m"}, "never opens"),
    ({"schedule": "*/5 * * * *", "duration": "1m"}, "closed budgets"),
])
def test_an_unusable_window_is_refused(window, words):
    platform = prod()
    platform["karpenter"]["disruptionWindow"] = window
    assert words in the_problem(platform, "karpenter.disruptionWindow")


def test_a_window_duration_is_hours_and_minutes():
    platform = prod()
    platform["karpenter"]["disruptionWindow"]["duration"] = "1d"
    assert any(p.startswith("karpenter.disruptionWindow.duration:") for p in problems(platform))


@pytest.mark.parametrize("setting, value", [("consolidationPolicy", "WhenEmptyOrUnderutilized"), ("expireAfter", "720h")])
def test_prod_pools_never_consolidate_busy_nodes_nor_expire(setting, value):
    platform = prod()
    platform["nodePools"][0]["karpenter"] = {setting: value}
    the_problem(platform, f"nodePools[0].karpenter.{setting}")


def test_the_same_settings_are_allowed_outside_prod():
    assert problems(dev(pool(karpenter={"consolidationPolicy": "WhenEmptyOrUnderutilized", "expireAfter": "720h"}))) == []


def test_karpenter_settings_on_a_node_group_are_refused():
    platform = stack_platform("dev")
    platform["nodePools"][0]["karpenter"] = {"weight": 10}
    platform["nodePools"][0]["ami"]["alias"] = "al2023@v20251120"
    assert {p.split(":")[0] for p in problems(platform)} == {"nodePools[0].karpenter", "nodePools[0].ami.alias"}


@pytest.mark.parametrize("key", ["karpenter.sh/nodepool", "kubernetes.io/cluster/other", "eks:eks-cluster-name"])
def test_stack_tags_karpenter_owns_are_refused(key):
    assert "Karpenter sets itself" in the_problem(dev(pool(), tags={key: "x"}), f'tags["{key}"]')


def test_the_chart_version_must_be_one_whose_crds_are_checked():
    assert "1.14.1" in the_problem(prod(karpenter={"chartVersion": "1.15.0",
                                                   "disruptionWindow": {"schedule": "@weekly", "duration": "4h"}}),
                                   "karpenter.chartVersion")


def test_the_cluster_version_must_be_one_karpenter_supports():
    platform = prod()
    platform["cluster"]["kubernetesVersion"] = "1.36"
    for p in platform["nodePools"]:
        p["ami"].pop("releaseVersion", None)
    platform["cluster"]["create"]["systemNodes"]["releaseVersion"] = "1.36.1-20260101"
    next(p for p in platform["nodePools"] if p["name"] == "a100-train")["ami"]["releaseVersion"] = "1.36.1-20260101"
    assert "Karpenter 1.14.1 supports Kubernetes 1.32, 1.33, 1.34, 1.35" in the_problem(platform, "cluster.kubernetesVersion")


@pytest.mark.parametrize("value", ["10m", "1h30m", "Never"])
def test_durations_follow_karpenter_s_pattern(value):
    assert problems(dev(pool(karpenter={"consolidateAfter": value}))) == []


def test_a_bad_duration_is_refused():
    assert any("consolidateAfter" in p for p in problems(dev(pool(karpenter={"consolidateAfter": "ten minutes"}))))


# --- node repair: Karpenter's feature gate, one switch, fixed policies ---

@pytest.mark.parametrize("repair, field", [
    ({"maxUnhealthyNodes": 2}, "maxUnhealthyNodes"),
    ({"maxParallelPercent": 10}, "maxParallelPercent"),
    ({"overrides": [{"condition": "AcceleratedHardwareReady", "reason": "NvidiaXID31Error", "waitMinutes": 10,
                     "action": "NoAction"}]}, "overrides"),
])
def test_node_group_repair_settings_on_a_karpenter_pool_are_refused_with_karpenter_s_policies(repair, field):
    message = the_problem(dev(pool(repair=repair)), f"nodePools[1].repair.{field}")
    assert "applies to managed node groups only" in message
    assert "AcceleratedHardwareReady=False for 10 minutes" in message and "more than 20%" in message


def test_karpenter_pools_must_agree_on_repair():
    platform = prod()
    platform["nodePools"][1]["repair"] = {"enabled": False}  # h100-mig; l4-inference keeps the default (on)
    message = the_problem(platform, "nodePools[1].repair.enabled")
    assert "one switch for every Karpenter pool" in message and "nodePools[0]" in message


def test_karpenter_pools_may_all_turn_repair_off():
    platform = prod()
    for p in platform["nodePools"]:
        if p.get("provisioner") == "karpenter":
            p["repair"] = {"enabled": False}
    assert problems(platform) == []
