"""Tenancy: team-gpu-quota and team-quota-within-capacity (advisory)."""
from __future__ import annotations

from gpu_platform.facts import names
from gpu_platform.policy import BY_NAME
from tests.policy.harness import HELM_RELEASE, NODE_GROUP, gpu_node_group, namespace, operator_release, quota, run_stack, stack_resource

NAMESPACE, QUOTA = "kubernetes:core/v1:Namespace", "kubernetes:core/v1:ResourceQuota"
GPU = names.quota_key(names.GPU_RESOURCE)
MIG_1G = names.quota_key(names.mig_resource("1g.10gb"))
H100_LAYOUT = {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}


def cluster(*teams, groups=None, mig=None, strategy="none"):
    res = [stack_resource(HELM_RELEASE, operator_release(mig=mig, strategy=strategy), "gpu-operator")]
    res += [stack_resource(NODE_GROUP, g, g["labels"][names.POOL_LABEL]) for g in groups or [gpu_node_group(max_size=4)]]
    for team, hard in teams:
        res.append(stack_resource(NAMESPACE, namespace(team), team))
        if hard is not None:
            res.append(stack_resource(QUOTA, quota(team, hard), f"{team}-quota"))
    return res


def mig_cluster(*teams):
    h100 = gpu_node_group("h100", instance_types=("p5.48xlarge",), max_size=2,
                          labels={names.MIG_CONFIG_LABEL: "h100-balanced"})
    return cluster(*teams, groups=[h100], mig={"h100-balanced": H100_LAYOUT}, strategy="mixed")


def test_team_with_gpu_quota_passes():
    assert run_stack("team-gpu-quota", cluster(("research", {GPU: "4", "requests.cpu": "16"}))) == []


def test_team_without_quota_is_refused():
    found = run_stack("team-gpu-quota", cluster(("research", None)))
    assert len(found) == 1 and "no ResourceQuota" in found[0][0] and found[0][1].endswith("::research")


def test_quota_without_gpu_key_is_refused():
    found = run_stack("team-gpu-quota", cluster(("research", {"requests.cpu": "16"})))
    assert len(found) == 1 and GPU in found[0][0]


def test_bare_extended_resource_key_is_explained():
    found = run_stack("team-gpu-quota", cluster(("research", {names.GPU_RESOURCE: "4"})))
    assert len(found) == 1 and "requests.<resource>" in found[0][0]


def test_quota_must_bound_every_offered_mig_profile():
    found = run_stack("team-gpu-quota", mig_cluster(("research", {GPU: "0", MIG_1G: "4"})))
    assert len(found) == 1
    assert "requests.nvidia.com/mig-2g.20gb" in found[0][0] and "requests.nvidia.com/mig-3g.40gb" in found[0][0]


def test_quota_bounding_every_mig_profile_passes():
    hard = {GPU: "0", **{names.quota_key(names.mig_resource(p)): "0" for p in H100_LAYOUT}}
    assert run_stack("team-gpu-quota", mig_cluster(("research", hard))) == []


def test_non_team_namespaces_need_no_quota():
    res = cluster() + [stack_resource(NAMESPACE, {"metadata": {"name": "gpu-operator"}}, "gpu-operator-ns")]
    assert run_stack("team-gpu-quota", res) == []


def test_quotas_within_capacity_pass():
    assert run_stack("team-quota-within-capacity", cluster(("a", {GPU: "2"}), ("b", {GPU: "2"}))) == []


def test_quotas_over_capacity_are_reported():
    found = run_stack("team-quota-within-capacity", cluster(("a", {GPU: "3"}), ("b", {GPU: "2"})))
    assert len(found) == 1 and "ask for 5 nvidia.com/gpu" in found[0][0] and "offer 4" in found[0][0]


def test_capacity_ratio_allows_overcommit():
    assert run_stack("team-quota-within-capacity", cluster(("a", {GPU: "3"}), ("b", {GPU: "2"})),
                     config={"capacityRatio": 1.5}) == []


def test_time_slicing_multiplies_capacity():
    group = gpu_node_group(max_size=1, labels={names.DEVICE_PLUGIN_CONFIG_LABEL: "ts-4"})
    res = [stack_resource(HELM_RELEASE, operator_release(time_slicing={"ts-4": 4}), "gpu-operator"),
           stack_resource(NODE_GROUP, group, "a10g"), stack_resource(NAMESPACE, namespace("a"), "a"),
           stack_resource(QUOTA, quota("a", {GPU: "4"}), "a-quota")]
    assert run_stack("team-quota-within-capacity", res) == []


def test_capacity_rule_is_advisory():
    assert BY_NAME["team-quota-within-capacity"].enforcement_level.value == "advisory"


def test_a_mig_manager_config_is_parsed_once_however_many_rules_and_flavors_read_it(monkeypatch):
    """The capacity rules read the MIG manager's file once per flavor and pool: it is parsed once per text,
    and each reader gets its own copy of the layouts."""
    import yaml

    from gpu_platform.facts import names as fact_names
    from gpu_platform.policy import teams

    parsed: list[str] = []
    real = yaml.safe_load
    monkeypatch.setattr(teams.yaml, "safe_load", lambda text: parsed.append(text) or real(text))
    text = "version: v1\nmig-configs:\n  seven-ways:\n  - devices: all\n    mig-enabled: true\n    mig-devices: {1g.10gb: 7}\n"
    values = {"migManager": {"config": {"data": {fact_names.MIG_PARTED_CONFIG_KEY: text}}}}
    layouts = [teams._mig_layouts(values) for _ in range(20)]
    assert layouts == [{"seven-ways": {"1g.10gb": 7}}] * 20 and parsed == [text]
    layouts[0]["seven-ways"]["1g.10gb"] = 0
    assert teams._mig_layouts(values) == {"seven-ways": {"1g.10gb": 7}}
