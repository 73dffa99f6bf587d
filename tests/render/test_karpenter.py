"""Karpenter pools: the rendered EC2NodeClass and NodePool (against Karpenter's CRDs at the pinned release),
what they share with managed node groups, and the plan's Karpenter resources and their options."""
from __future__ import annotations

import copy

import pytest

from gpu_platform.decisions.capacity import platform_capacity
from gpu_platform.decisions.cost import estimate_spec
from gpu_platform.decisions.karpenter import discovery_tags
from gpu_platform.decisions.node_pool import node_labels, node_taints
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.facts.karpenter import NODE_CLASS, NODE_POOL, node_group_view
from gpu_platform.facts.karpenter_window import active, first_open_minute
from gpu_platform.render.karpenter import block_device_mappings, budgets, custom_user_data, node_class_object, node_pool_object
from gpu_platform.render.operator_values import OperatorSettings
from gpu_platform.spec.pool_context import PoolContext
from tests.support.crd_schemas import cel_problems, schema_problems
from tests.support.stacks import cached_plan, resources, stack_platform

CRDS = catalog.KARPENTER_RELEASES["1.14.1"].crds
AL2023 = {"type": "AL2023_x86_64_NVIDIA", "alias": "al2023@v20251120"}


def karpenter_pool(**extra) -> dict:
    pool = {"name": "l4-k", "provisioner": "karpenter", "instanceTypes": ["g6.xlarge", "g6.2xlarge"],
            "capacityType": "spot", "minSize": 0, "maxSize": 4, "ami": dict(AL2023)}
    pool.update(extra)
    return pool


def dev_with(*pools: dict, **platform_edits) -> dict:
    platform = stack_platform("dev")
    platform["nodePools"] += list(pools)
    platform.update(platform_edits)
    return platform


def spec_and_pool(platform: dict, name: str = "l4-k"):
    spec = parse_platform(platform)
    return spec, next(p for p in spec.node_pools if p.name == name)


VARIANTS = {
    "al2023-spot": dev_with(karpenter_pool()),
    "bottlerocket": dev_with(karpenter_pool(ami={"type": "BOTTLEROCKET_x86_64_NVIDIA", "alias": "bottlerocket@v1.50.0"},
                                            taints=[{"key": "reserved", "effect": "NoSchedule"}])),
    "al2023-image-id": dev_with(karpenter_pool(ami={"type": "AL2023_x86_64_NVIDIA", "imageId": "ami-0123456789abcdef0"},
                                               karpenter={"weight": 50, "expireAfter": "720h",
                                                          "consolidationPolicy": "WhenEmptyOrUnderutilized"})),
    "time-slicing": dev_with(karpenter_pool(sharing={"mode": "time-slicing", "replicas": 4},
                                            labels={"team": "vision"})),
    "mig-single": dev_with(karpenter_pool(name="l4-k", instanceTypes=["p5.48xlarge"], capacityType="on-demand",
                                          sharing={"mode": "mig", "strategy": "single", "layout": {"1g.10gb": 7}})),
    "prod-window": stack_platform("karpenter"),
    "al2023-datasets": dev_with(karpenter_pool(), datasets=stack_platform("prod")["datasets"]),
}


def _objects(platform: dict) -> list[dict]:
    spec = parse_platform(platform)
    out = []
    for pool in (p for p in spec.node_pools if p.provisioner == "karpenter"):
        user_data = custom_user_data(PoolContext.of(spec, pool), pool, "https://EXAMPLE.eks.amazonaws.com", "Q0E=", "172.20.0.0/16") \
            if pool.ami.type.startswith("UBUNTU") else None
        out += [node_pool_object(PoolContext.of(spec, pool), pool), node_class_object(PoolContext.of(spec, pool), pool, user_data)]
    return out


def ubuntu_platform() -> dict:
    platform = stack_platform("prod")
    platform["nodePools"].append(karpenter_pool(
        name="l4-k", capacityType="on-demand", ami={"type": "UBUNTU_24_04", "imageId": "ami-0c3f9e8a1b2d4e567"},
        taints=[{"key": "workload", "value": "inference", "effect": "NoSchedule"}]))
    platform["karpenter"] = {"disruptionWindow": {"schedule": "0 2 * * *", "duration": "3h"}}
    return platform


# --- the objects against Karpenter's own schemas ---

@pytest.mark.parametrize("variant", [*VARIANTS, "ubuntu"])
def test_every_rendered_object_matches_karpenter_s_crds(variant):
    platform = ubuntu_platform() if variant == "ubuntu" else copy.deepcopy(VARIANTS[variant])
    objects = _objects(platform)
    assert objects
    for obj in objects:
        assert schema_problems(CRDS, obj) == [], obj["kind"]
        assert cel_problems(obj) == [], obj["kind"]


def test_the_strict_schema_refuses_a_misspelt_field():
    spec, pool = spec_and_pool(VARIANTS["al2023-spot"])
    obj = node_pool_object(PoolContext.of(spec, pool), pool)
    obj["spec"]["disruption"]["consolidationPolicyy"] = "WhenEmpty"
    assert any("consolidationPolicyy" in p for p in schema_problems(CRDS, obj))


def test_the_strict_schema_keeps_free_form_maps_open():
    """Labels, tags and limits are maps: any key is valid there, only values are checked."""
    spec, pool = spec_and_pool(VARIANTS["al2023-spot"])
    obj = node_class_object(PoolContext.of(spec, pool), pool)
    obj["spec"]["tags"]["cost-center"] = "ml"
    assert schema_problems(CRDS, obj) == []


# --- what a Karpenter pool shares with a managed node group ---

def test_nodes_carry_the_node_group_s_labels_and_taints():
    spec, pool = spec_and_pool(VARIANTS["time-slicing"])
    template = node_pool_object(PoolContext.of(spec, pool), pool)["spec"]["template"]
    assert template["metadata"]["labels"] == node_labels(pool)
    assert template["metadata"]["labels"][names.DEVICE_PLUGIN_CONFIG_LABEL] == "ts-4"
    assert [(t["key"], t.get("value", ""), t["effect"]) for t in template["spec"]["taints"]] == node_taints(pool)


def test_a_taint_without_a_value_leaves_the_value_out():
    spec, pool = spec_and_pool(VARIANTS["bottlerocket"])
    taints = node_pool_object(PoolContext.of(spec, pool), pool)["spec"]["template"]["spec"]["taints"]
    assert {"key": "reserved", "effect": "NoSchedule"} in taints


def test_mig_pools_select_their_own_config_and_tag_the_layout_on_the_node_class():
    spec, pool = spec_and_pool(VARIANTS["mig-single"])
    labels = node_pool_object(PoolContext.of(spec, pool), pool)["spec"]["template"]["metadata"]["labels"]
    assert labels[names.MIG_CONFIG_LABEL] == names.mig_config_name("l4-k")
    tags = node_class_object(PoolContext.of(spec, pool), pool)["spec"]["tags"]
    assert tags[names.MIG_LAYOUT_TAG] == names.mig_layout_id("H100-80GB-HBM3", {"1g.10gb": 7})


def test_bottlerocket_keeps_its_operands_off_and_declares_both_volumes_encrypted():
    spec, pool = spec_and_pool(VARIANTS["bottlerocket"])
    labels = node_pool_object(PoolContext.of(spec, pool), pool)["spec"]["template"]["metadata"]["labels"]
    assert labels[names.gpu_deploy_label("device-plugin")] == "false"
    assert [(m["deviceName"], m["ebs"]["volumeSize"], m["ebs"]["encrypted"]) for m in block_device_mappings(pool)] == [
        ("/dev/xvda", "4Gi", True), ("/dev/xvdb", "200Gi", True)]


def test_the_node_class_pins_the_image_requires_imdsv2_and_finds_the_network_by_tag():
    spec, pool = spec_and_pool(VARIANTS["al2023-spot"])
    node_class = node_class_object(PoolContext.of(spec, pool), pool)["spec"]
    assert node_class["amiSelectorTerms"] == [{"alias": "al2023@v20251120"}] and "amiFamily" not in node_class
    assert node_class["metadataOptions"]["httpTokens"] == "required"
    assert node_class["metadataOptions"]["httpPutResponseHopLimit"] == 2
    discovery = [{"tags": {names.KARPENTER_DISCOVERY_TAG: "gpu-dev"}}]
    assert node_class["subnetSelectorTerms"] == node_class["securityGroupSelectorTerms"] == discovery
    assert node_class["role"] == "gpu-dev-karpenter-nodes"


def test_an_image_id_names_its_family():
    spec, pool = spec_and_pool(VARIANTS["al2023-image-id"])
    node_class = node_class_object(PoolContext.of(spec, pool), pool)["spec"]
    assert (node_class["amiFamily"], node_class["amiSelectorTerms"]) == ("AL2023", [{"id": "ami-0123456789abcdef0"}])


def test_ubuntu_nodes_bootstrap_themselves_and_register_under_karpenter_s_taint():
    spec, pool = spec_and_pool(ubuntu_platform())
    script = custom_user_data(PoolContext.of(spec, pool), pool, "https://EXAMPLE.eks.amazonaws.com", "Q0E=", "172.20.0.0/16")
    assert script.startswith("#!/bin/bash") and catalog.UBUNTU_EKS_BOOTSTRAP in script
    assert f"{names.KARPENTER_UNREGISTERED_TAINT}=:NoExecute" in script
    assert "workload=inference:NoSchedule" in script and f"{names.POOL_LABEL}=l4-k" in script
    assert node_class_object(PoolContext.of(spec, pool), pool, script)["spec"]["amiFamily"] == "Custom"


# --- what nodes do at boot, as on node groups: the instance-store array and the Lustre client ---

def test_al2023_pools_stripe_the_instance_store_through_karpenter():
    spec, pool = spec_and_pool(VARIANTS["al2023-spot"])  # g6.xlarge: one 250 GB NVMe disk
    assert node_class_object(PoolContext.of(spec, pool), pool)["spec"]["instanceStorePolicy"] == "RAID0"
    spec, pool = spec_and_pool(dev_with(karpenter_pool(localStorage="none")))
    assert "instanceStorePolicy" not in node_class_object(PoolContext.of(spec, pool), pool)["spec"]
    spec, pool = spec_and_pool(VARIANTS["bottlerocket"])
    assert "instanceStorePolicy" not in node_class_object(PoolContext.of(spec, pool), pool)["spec"]


def test_al2023_pools_install_the_lustre_client_only_with_a_datasets_file_system():
    spec, pool = spec_and_pool(VARIANTS["al2023-spot"])
    assert "userData" not in node_class_object(PoolContext.of(spec, pool), pool)["spec"]
    spec, pool = spec_and_pool(VARIANTS["al2023-datasets"])
    user_data = node_class_object(PoolContext.of(spec, pool), pool)["spec"]["userData"]
    assert user_data.startswith("MIME-Version: 1.0") and "dnf install -y -q lustre-client" in user_data
    assert "NodeConfig" not in user_data  # instanceStorePolicy has Karpenter write the local-storage setting


def test_ubuntu_pools_run_the_node_group_s_boot_steps_before_bootstrap():
    spec, pool = spec_and_pool(ubuntu_platform())  # prod: a datasets file system; g6.xlarge: instance store
    script = custom_user_data(PoolContext.of(spec, pool), pool, "https://EXAMPLE.eks.amazonaws.com", "Q0E=", "172.20.0.0/16")
    bootstrap = script.index(catalog.UBUNTU_EKS_BOOTSTRAP)
    assert 0 < script.index("mkfs.ext4") < bootstrap and 0 < script.index("lustre") < bootstrap
    assert "instanceStorePolicy" not in node_class_object(PoolContext.of(spec, pool), pool, script)["spec"]


def test_requirements_name_the_instance_and_capacity_types():
    spec, pool = spec_and_pool(VARIANTS["al2023-spot"])
    view = node_group_view(node_pool_object(PoolContext.of(spec, pool), pool))
    assert (view["instanceTypes"], view["capacityType"]) == (["g6.xlarge", "g6.2xlarge"], "SPOT")
    assert view["scalingConfig"] == {"minSize": 0, "maxSize": 4}


def test_capacity_and_cost_equal_the_same_pool_on_a_managed_node_group():
    platform = VARIANTS["al2023-spot"]
    managed = copy.deepcopy(platform)
    pool = managed["nodePools"][-1]
    pool.pop("provisioner")
    pool["ami"] = {"type": "AL2023_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"}
    karp, mng = parse_platform(platform), parse_platform(managed)
    assert platform_capacity(karp) == platform_capacity(mng)
    a, b = estimate_spec(karp), estimate_spec(mng)
    assert (a.monthly_at_min, a.monthly_at_max) == (b.monthly_at_min, b.monthly_at_max)
    assert [p.monthly_at_max for p in a.pools] == [p.monthly_at_max for p in b.pools]


# --- disruption settings ---

def test_without_a_window_drift_and_consolidation_take_max_unavailable_nodes():
    spec, pool = spec_and_pool(VARIANTS["al2023-spot"])
    disruption = node_pool_object(PoolContext.of(spec, pool), pool)["spec"]["disruption"]
    assert disruption["consolidationPolicy"] == "WhenEmpty" and disruption["consolidateAfter"] == "10m"
    assert disruption["budgets"] == [{"nodes": "25%", "reasons": ["Drifted", "Underutilized"]},
                                     {"nodes": "100%", "reasons": ["Empty"]}]
    assert node_pool_object(PoolContext.of(spec, pool), pool)["spec"]["template"]["spec"]["expireAfter"] == "Never"


def test_prod_pools_roll_one_node_at_a_time_and_only_inside_the_window():
    spec = parse_platform(VARIANTS["prod-window"])
    pool = next(p for p in spec.node_pools if p.name == "h100-mig")
    found = budgets(PoolContext.of(spec, pool), pool)
    assert found[0] == {"nodes": "1", "reasons": ["Drifted", "Underutilized"]}
    assert {"nodes": "0", "reasons": ["Drifted", "Underutilized"], "schedule": "0 6 * * sun", "duration": "164h"} in found
    window = active("0 2 * * sun", "4h")
    assert first_open_minute(found, window, "Drifted") is None and first_open_minute(found, window, "Empty") == 0
    meta = node_pool_object(PoolContext.of(spec, pool), pool)["metadata"]
    assert meta["annotations"] == {names.DISRUPTION_WINDOW_SCHEDULE_ANNOTATION: "0 2 * * sun",
                                   names.DISRUPTION_WINDOW_DURATION_ANNOTATION: "4h"}


def test_pool_settings_reach_the_node_pool():
    spec, pool = spec_and_pool(VARIANTS["al2023-image-id"])
    obj = node_pool_object(PoolContext.of(spec, pool), pool)["spec"]
    assert (obj["weight"], obj["template"]["spec"]["expireAfter"], obj["disruption"]["consolidationPolicy"]) == (
        50, "720h", "WhenEmptyOrUnderutilized")


def test_discovery_tags_only_when_a_pool_uses_karpenter():
    assert discovery_tags(parse_platform(stack_platform("dev"))) == {}
    assert discovery_tags(parse_platform(VARIANTS["al2023-spot"])) == {names.KARPENTER_DISCOVERY_TAG: "gpu-dev"}


# --- the plan: Karpenter pools are Kubernetes objects, never node groups ---

@pytest.fixture(scope="module")
def prod_plan():
    return cached_plan(stack_platform("karpenter"), stack="karpenter")


def _named(plan: dict, type_: str) -> dict[str, dict]:
    return {r["name"]: r for r in resources(plan, type_)}


def test_karpenter_pools_get_no_node_group_and_no_autoscaler_tags(prod_plan):
    groups = {r["inputs"]["labels"].get(names.POOL_LABEL) for r in resources(prod_plan, "aws:eks/nodeGroup:NodeGroup")}
    assert groups == {"a100-train", None}  # the EFA pool and the system nodes
    tagged = {r["name"] for r in resources(prod_plan, "aws:autoscaling/tag:Tag")}
    assert tagged and all(name.startswith("a100-train-") for name in tagged)


def test_node_pools_and_classes_are_protected_and_wait_for_karpenter_and_the_operator(prod_plan):
    pools, classes = _named(prod_plan, NODE_POOL), _named(prod_plan, NODE_CLASS)
    assert set(pools) == {"l4-inference", "h100-mig"} and set(classes) == {"l4-inference-class", "h100-mig-class"}
    release = {r["name"]: r["urn"] for r in resources(prod_plan, "kubernetes:helm.sh/v3:Release")}
    for r in [*pools.values(), *classes.values()]:
        assert r["options"]["protect"] is True
        assert {release["karpenter"], release["gpu-operator"]} <= set(r["options"]["dependsOn"])
    assert classes["h100-mig-class"]["urn"] in pools["h100-mig"]["options"]["dependsOn"]


def test_node_pools_use_the_cluster_s_kubernetes_provider(prod_plan):
    for r in [*resources(prod_plan, NODE_POOL), *resources(prod_plan, NODE_CLASS)]:
        assert "pulumi:providers:kubernetes::cluster-k8s" in r["provider"]


def test_objects_in_the_plan_are_the_rendered_ones(prod_plan):
    spec = parse_platform(stack_platform("karpenter"))
    pool = next(p for p in spec.node_pools if p.name == "l4-inference")
    assert _named(prod_plan, NODE_POOL)["l4-inference"]["inputs"] == node_pool_object(PoolContext.of(spec, pool), pool)
    assert _named(prod_plan, NODE_CLASS)["l4-inference-class"]["inputs"] == node_class_object(PoolContext.of(spec, pool), pool)


def test_an_unprotected_dev_pool_stays_unprotected():
    plan = cached_plan(VARIANTS["al2023-spot"])
    assert _named(plan, NODE_POOL)["l4-k"]["options"]["protect"] is False


def test_ubuntu_pools_bootstrap_from_the_cluster_s_endpoint():
    plan = cached_plan(ubuntu_platform())
    node_class = _named(plan, NODE_CLASS)["l4-k-class"]["inputs"]["spec"]
    cluster = resources(plan, "aws:eks/cluster:Cluster")[0]
    assert node_class["amiFamily"] == "Custom" and "--apiserver-endpoint" in node_class["userData"]
    assert f"{names.KARPENTER_UNREGISTERED_TAINT}=:NoExecute" in node_class["userData"]
    assert cluster["inputs"]["name"] in node_class["userData"]


def test_stack_outputs_name_the_karpenter_pools(prod_plan):
    assert prod_plan["outputs"]["karpenterNodePools"] == ["l4-inference", "h100-mig"]
    assert "karpenterNodePools" not in cached_plan(stack_platform("dev"))["outputs"]


def test_the_gpu_operator_serves_karpenter_pools_like_node_groups():
    """Tolerations for the pool's taints, its MIG config and its time-slicing entry reach the operator."""
    import yaml

    from gpu_platform.render.operator_values import operator_values

    spec = parse_platform(dev_with(
        karpenter_pool(taints=[{"key": "reserved", "value": "vision", "effect": "NoSchedule"}],
                       sharing={"mode": "time-slicing", "replicas": 8}),
        karpenter_pool(name="h100-k", instanceTypes=["p5.48xlarge"], capacityType="on-demand",
                       sharing={"mode": "mig", "strategy": "single", "layout": {"1g.10gb": 7}})))
    values = operator_values(OperatorSettings.of(spec))
    assert {"key": "reserved", "operator": "Equal", "value": "vision", "effect": "NoSchedule"} in \
        values["daemonsets"]["tolerations"]
    assert "ts-8" in values["devicePlugin"]["config"]["data"]
    configs = yaml.safe_load(values["migManager"]["config"]["data"][names.MIG_PARTED_CONFIG_KEY])["mig-configs"]
    assert configs[names.mig_config_name("h100-k")][0]["mig-devices"] == {"1g.10gb": 7}
