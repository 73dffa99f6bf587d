"""The disruption model: each input's effect on a pool, how causes read, and the lock's record."""
from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_platform.decisions.disruption import (
    HELM_RELEASE,
    LAUNCH_TEMPLATE,
    NODE_GROUP,
    REFERENCE_INPUTS,
    REPLACE_INPUTS,
    classify,
    compare,
    lock_entry,
    pool_from_lock,
    pools_of,
    rule_for,
)
from gpu_platform.decisions.disruption import locked as locked_values
from gpu_platform.decisions.disruption_model import NEEDS_APPROVAL, UNKNOWN, Effect
from gpu_platform.decisions.launch_template import ubuntu_user_data
from gpu_platform.facts import catalog, names

LT_NAME = "c-h100"
MIG_FILE = ("version: v1\nmig-configs:\n  all-disabled:\n  - devices: all\n    mig-enabled: false\n"
            "  pool-h100:\n  - devices: all\n    mig-enabled: true\n    mig-devices:\n      3g.40gb: 2\n")


def node_group(**extra):
    inputs = {
        "capacityType": "ON_DEMAND", "clusterName": "c", "instanceTypes": ["p5.48xlarge"],
        "labels": {names.POOL_LABEL: "h100", names.GPU_PRODUCT_LABEL: "NVIDIA-H100-80GB-HBM3",
                   names.MIG_CONFIG_LABEL: "pool-h100"},
        "launchTemplate": {"name": LT_NAME, "version": "1"}, "nodeGroupName": "c-h100",
        "nodeRoleArn": "arn:aws:iam::123456789012:role/c-nodes", "subnetIds": ["subnet-1"],
        "amiType": "AL2023_x86_64_NVIDIA", "releaseVersion": "1.33.5-20251120", "version": "1.33",
        "scalingConfig": {"desiredSize": 0, "maxSize": 2, "minSize": 0},
        "taints": [{"effect": "NO_SCHEDULE", "key": names.GPU_TAINT_KEY, "value": names.GPU_TAINT_VALUE}],
        "updateConfig": {"maxUnavailable": 1, "updateStrategy": "DEFAULT"}, "nodeRepairConfig": {"enabled": True},
        "tags": {names.POOL_LABEL: "h100"},
    }
    inputs.update(extra)
    return inputs


def template(**extra):
    inputs = {
        "name": LT_NAME, "description": "GPU pool h100 of c", "updateDefaultVersion": True,
        "metadataOptions": {"httpEndpoint": "enabled", "httpPutResponseHopLimit": 2, "httpTokens": "required"},
        "blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": "true", "volumeSize": 500,
                                                                    "volumeType": "gp3"}}],
        "tagSpecifications": [{"resourceType": "instance", "tags": {"Name": "c-h100", names.MIG_LAYOUT_TAG: "h100-2x3g"}},
                              {"resourceType": "volume", "tags": {"Name": "c-h100"}}],
    }
    inputs.update(extra)
    return inputs


def release(**values):
    base = {
        "driver": {"enabled": True, "version": "580.173.02", "kernelModuleType": "auto",
                   "upgradePolicy": {"autoUpgrade": True}},
        "mig": {"strategy": "mixed"},
        "devicePlugin": {"config": {"default": "default", "data": {
            "default": "version: v1\nflags:\n  migStrategy: mixed\n",
            "ts-4": "version: v1\nflags:\n  migStrategy: mixed\nsharing:\n  timeSlicing:\n    resources:\n"
                    "    - name: nvidia.com/gpu\n      replicas: 4\n"}}},
        "migManager": {"config": {"default": "all-disabled", "data": {"config.yaml": MIG_FILE}}},
        "dcgmExporter": {"config": {"name": "metrics"}},
    }
    for key, value in values.items():
        base[key] = value
    return {"chart": catalog.GPU_OPERATOR_CHART, "version": "v26.7.0", "values": base}


def system_group(**extra):
    return {**node_group(instanceTypes=["m6i.large"], labels={names.ROLE_LABEL: names.SYSTEM_ROLE},
                         launchTemplate={"name": "c-system", "version": "1"}, nodeGroupName="c-system",
                         scalingConfig={"maxSize": 3, "minSize": 2, "desiredSize": 2}, taints=None), **extra}


def pools(ng=None, lt=None, rel=None, system=None):
    res = [(NODE_GROUP, "h100", ng if ng is not None else node_group()),
           (LAUNCH_TEMPLATE, "h100", lt if lt is not None else template()),
           (HELM_RELEASE, "gpu-operator", rel if rel is not None else release()),
           (NODE_GROUP, "cluster-system", system if system is not None else system_group()),
           (LAUNCH_TEMPLATE, "cluster-system", template(name="c-system", tagSpecifications=[]))]
    return pools_of(res)


def change(base=None, **parts):
    """The one pool's disruption when the named parts are swapped for the given ones."""
    return classify(pools(**(base or {}))["h100"], pools(**parts)["h100"])


# --- the scale and its names ---

def test_effects_are_ordered_and_named_as_the_contract_says():
    assert [e.label for e in sorted(Effect)] == ["none", "operand-restart", "gpu-pod-eviction", "node-roll", "replacement"]
    assert all(Effect.parse(e.label) is e for e in Effect)
    assert NEEDS_APPROVAL is Effect.GPU_POD_EVICTION


def test_pools_are_named_by_their_pool_label_and_system_role():
    found = pools()
    assert set(found) == {"h100", "system"}
    assert (found["h100"].node_group, found["h100"].nodes, found["h100"].gpus) == ("h100", 2, 16)
    assert (found["system"].nodes, found["system"].gpus) == (3, 0)


def test_nothing_changed_is_no_disruption():
    assert classify(pools()["h100"], pools()["h100"]) is None and compare(pools(), pools()) == []


# --- node group inputs ---

@pytest.mark.parametrize("path", REPLACE_INPUTS)
def test_every_replace_forcing_input_replaces_the_pool(path):
    ng = node_group()
    top, _, leaf = path.partition(".")
    if leaf:
        ng[top] = {**ng[top], leaf: "other"}
    else:
        ng[top] = "other"
    found = change(ng=ng)
    assert found.effect is Effect.REPLACEMENT and (found.nodes, found.gpus) == (2, 16)
    assert not rule_for(f"nodeGroup.{path}").locked  # the replacement guard's own lock section holds them


@pytest.mark.parametrize("field, value, what", [
    ("releaseVersion", "1.33.5-20260101", "AMI release"),
    ("version", "1.34", "Kubernetes version of the nodes"),
])
def test_a_new_ami_release_or_kubernetes_version_rolls_the_nodes(field, value, what):
    found = change(ng=node_group(**{field: value}))
    assert found.effect is Effect.NODE_ROLL and found.cause.startswith(what)


@pytest.mark.parametrize("edit", [
    {"scalingConfig": {"desiredSize": 1, "maxSize": 4, "minSize": 1}},
    {"updateConfig": {"maxUnavailablePercentage": 25, "updateStrategy": "MINIMAL"}},
    {"nodeRepairConfig": {"enabled": False}},
    {"tags": {"team": "ml"}},
    {"labels": {**node_group()["labels"], "workload": "training"}},
    {"taints": [*node_group()["taints"], {"effect": "NO_SCHEDULE", "key": "dedicated", "value": "ml"}]},
    {"launchTemplate": {"name": LT_NAME, "version": "7"}},  # derived: the template's content decides
])
def test_in_place_node_group_changes_disrupt_nothing(edit):
    found = change(ng=node_group(**edit))
    assert found is None or (found.effect is Effect.NONE and (found.nodes, found.gpus) == (0, 0))


def test_an_added_no_execute_taint_evicts_pods_and_a_removed_one_does_not():
    tainted = node_group(taints=[*node_group()["taints"], {"effect": "NO_EXECUTE", "key": "drain", "value": "x"}])
    assert change(ng=tainted).effect is Effect.GPU_POD_EVICTION
    assert classify(pools(ng=tainted)["h100"], pools()["h100"]).effect is Effect.NONE


# --- launch template content: a new version rolls the pool ---

@pytest.mark.parametrize("edit", [
    {"blockDeviceMappings": [{"deviceName": "/dev/xvda", "ebs": {"encrypted": "true", "volumeSize": 800,
                                                                 "volumeType": "gp3"}}]},
    {"metadataOptions": {"httpEndpoint": "enabled", "httpPutResponseHopLimit": 1, "httpTokens": "required"}},
    {"imageId": "ami-0123456789abcdef0"},
    {"description": "changed"},
    {"placement": {"groupName": "c-h100"}},
    {"networkInterfaces": [{"deviceIndex": 0, "interfaceType": "efa", "securityGroups": ["sg-1"]}]},
    {"vpcSecurityGroupIds": ["sg-1", "sg-2"]},
    {"tagSpecifications": [{"resourceType": "instance", "tags": {"Name": "c-h100", "cost-center": "42",
                                                                 names.MIG_LAYOUT_TAG: "h100-2x3g"}}]},
])
def test_launch_template_content_rolls_the_pool(edit):
    found = change(lt=template(**edit))
    assert found.effect is Effect.NODE_ROLL and found.cause.startswith("launch template")


def test_cause_names_the_changed_leaf():
    edit = template()
    edit["blockDeviceMappings"][0]["ebs"]["volumeSize"] = 800
    assert change(lt=edit).cause == "launch template: blockDeviceMappings[0].ebs.volumeSize 500 -> 800"


@pytest.mark.parametrize("edit", [{"tags": {"owner": "x"}}, {"updateDefaultVersion": False}])
def test_template_settings_that_make_no_version_disrupt_nothing(edit):
    assert change(lt=template(**edit)).effect is Effect.NONE


def test_security_group_ids_compare_by_count_only():
    """Plans hold stand-ins for other resources' ids; the same number of groups is no change."""
    assert change(lt=template(vpcSecurityGroupIds=["sg-real"])) == change(lt=template(vpcSecurityGroupIds=["sg-mock"]))


def _ubuntu(endpoint="https://a.eks", ca="Q0E=", labels=None, taints=(("nvidia.com/gpu", "present", "NoSchedule"),)):
    return template(userData=ubuntu_user_data("c", endpoint, ca, "10.100.0.0/16", labels or {"a": "b"}, list(taints)))


def test_user_data_is_fingerprinted_without_the_clusters_identity():
    base = pools(lt=_ubuntu())["h100"]
    assert classify(base, pools(lt=_ubuntu(endpoint="https://b.eks", ca="Q0I="))["h100"]) is None


@pytest.mark.parametrize("edit, part", [({"labels": {"a": "c"}}, "labels"), ({"taints": ()}, "taints")])
def test_user_data_labels_and_taints_roll_the_pool(edit, part):
    found = classify(pools(lt=_ubuntu())["h100"], pools(lt=_ubuntu(**edit))["h100"])
    assert found.effect is Effect.NODE_ROLL and f"launch template user data ({part})" in found.cause


# --- MIG ---

def _mig(ng_label="pool-h100", tag="h100-2x3g", layout_file=MIG_FILE):
    lt = template()
    lt["tagSpecifications"][0]["tags"][names.MIG_LAYOUT_TAG] = tag
    ng = node_group(labels={**node_group()["labels"], names.MIG_CONFIG_LABEL: ng_label})
    return {"ng": ng, "lt": lt, "rel": release(migManager={"config": {"data": {"config.yaml": layout_file}}})}


def test_a_new_layout_tag_rolls_the_pool_one_batch_at_a_time():
    found = change(_mig(), **_mig(tag="h100-7x1g", layout_file=MIG_FILE.replace("3g.40gb: 2", "1g.10gb: 7")))
    assert found.effect is Effect.NODE_ROLL
    assert found.cause.startswith("MIG layout 2x3g.40gb -> 7x1g.10gb (a new launch template version")


def test_relabelling_running_nodes_to_another_config_evicts_their_pods():
    found = change(_mig(), **_mig(ng_label="pool-other"))
    assert found.effect is Effect.GPU_POD_EVICTION and "repartitioned in place" in found.cause


def test_a_changed_config_under_the_same_name_counts_as_an_eviction():
    assert change(_mig(), **_mig(layout_file=MIG_FILE.replace("3g.40gb: 2", "7g.80gb: 1"))).effect is Effect.GPU_POD_EVICTION


def test_another_pools_mig_config_leaves_this_pool_alone():
    extra = MIG_FILE + "  pool-b:\n  - devices: all\n    mig-enabled: true\n    mig-devices:\n      7g.80gb: 1\n"
    assert change(_mig(), **_mig(layout_file=extra)) is None


# --- the GPU Operator ---

@pytest.mark.parametrize("driver", [
    {"enabled": True, "version": "595.91.07", "kernelModuleType": "auto"},
    {"enabled": True, "version": "580.173.02", "kernelModuleType": "open"},
    {"enabled": False},
])
def test_an_operator_driver_change_evicts_gpu_pods(driver):
    found = change(rel=release(driver=driver))
    assert found.effect is Effect.GPU_POD_EVICTION and found.cause.startswith("GPU driver (operator-owned)")
    assert (found.nodes, found.gpus) == (2, 16)


def test_the_upgrade_policy_itself_disrupts_nothing():
    driver = {**release()["values"]["driver"], "upgradePolicy": {"autoUpgrade": False}}
    assert change(rel=release(driver=driver)).effect is Effect.NONE


def test_a_chart_upgrade_reloads_an_operator_owned_driver():
    """A new chart brings a new driver manager, which the upgrade controller treats as a driver upgrade."""
    after = {**release(), "version": "v26.10.0"}
    assert classify(pools()["h100"], pools(rel=after)["h100"]).effect is Effect.GPU_POD_EVICTION


def test_with_an_ami_owned_driver_a_chart_upgrade_only_restarts_operands():
    ami = release(driver={"enabled": False})
    found = classify(pools(rel=ami)["h100"], pools(rel={**ami, "version": "v26.10.0"})["h100"])
    assert found.effect is Effect.OPERAND_RESTART


def test_a_pool_that_turns_the_driver_operand_off_ignores_the_operator_driver():
    ng = node_group(labels={**node_group()["labels"], names.gpu_deploy_label("driver"): "false"})
    after = release(driver={**release()["values"]["driver"], "version": "595.91.07"})
    assert classify(pools(ng=ng)["h100"], pools(ng=ng, rel=after)["h100"]) is None


def test_other_operator_values_restart_operands_on_gpu_pools_only():
    found = compare(pools(), pools(rel=release(dcgmExporter={"config": {"name": "other"}})))
    assert [(d.pool, d.effect) for d in found] == [("h100", Effect.OPERAND_RESTART)]
    assert found[0].cause.startswith("GPU Operator values: dcgmExporter")


def test_a_time_slicing_change_restarts_the_device_plugin():
    ng = node_group(labels={**node_group()["labels"], names.DEVICE_PLUGIN_CONFIG_LABEL: "ts-4"})
    found = change(ng=ng)
    assert found.effect is Effect.OPERAND_RESTART and "device-plugin config" in found.cause


# --- unknowns, pools coming and going, ordering ---

def test_an_unknown_input_cannot_be_proven_unchanged():
    found = change(lt=template(imageId=UNKNOWN))
    assert found.effect is Effect.NODE_ROLL and "unknown during preview" in found.cause


def test_a_new_pool_disrupts_nothing_and_a_removed_one_is_replaced():
    base, head = pools(), pools()
    assert classify(None, head["h100"]).effect is Effect.NONE
    removed = classify(base["h100"], None)
    assert removed.effect is Effect.REPLACEMENT and (removed.nodes, removed.gpus) == (2, 16)


def test_compare_lists_the_worst_first():
    head = pools(ng=node_group(releaseVersion="1.33.5-20260101"), rel=release(dcgmExporter={"x": 1}),
                 system=system_group(releaseVersion="1.33.5-20260101"))
    assert [(d.pool, d.effect.label) for d in compare(pools(), head)] == [("h100", "node-roll"), ("system", "node-roll")]


def test_disruption_json_carries_the_contract_fields():
    doc = change(ng=node_group(releaseVersion="x")).to_json()
    assert {"pool", "effect", "cause", "nodes", "gpus"} <= set(doc) and doc["effect"] == "node-roll"
    assert json.loads(json.dumps(doc)) == doc


# --- the lock's record ---

def test_lock_entry_round_trips_through_json():
    pool = pools()["h100"]
    entry = json.loads(json.dumps(lock_entry(pool)))
    assert classify(pool_from_lock("h100", entry, pool), pool, locked_only=True) is None


def test_the_lock_records_no_in_place_or_replace_forcing_input():
    locked = locked_values(pools()["h100"])
    fixed = [rule_for(k).effect for k in locked if isinstance(rule_for(k).effect, Effect)]
    assert fixed and all(Effect.NONE < e < Effect.REPLACEMENT for e in fixed)
    assert not any(k.startswith("nodeGroup.scalingConfig") or k.startswith("nodeGroup.labels") for k in locked)
    assert not any(f"nodeGroup.{r}" in locked for r in REFERENCE_INPUTS)


def test_against_the_lock_an_in_place_change_is_invisible():
    pool = pools()["h100"]
    locked = pool_from_lock("h100", lock_entry(pool), pool)
    head = pools(ng=node_group(scalingConfig={"maxSize": 9, "minSize": 0, "desiredSize": 0}))["h100"]
    assert classify(locked, head, locked_only=True) is None


# --- the effect of several changes is the worst of each ---

EDITS = {
    "release": ("ng", {"releaseVersion": "x"}, Effect.NODE_ROLL),
    "maxSize": ("ng", {"scalingConfig": {"maxSize": 5, "minSize": 0, "desiredSize": 0}}, Effect.NONE),
    "disk": ("lt", {"description": "other"}, Effect.NODE_ROLL),
    "driver": ("rel", {"driver": {"enabled": True, "version": "595.91.07"}}, Effect.GPU_POD_EVICTION),
    "dcgm": ("rel", {"dcgmExporter": {"x": 2}}, Effect.OPERAND_RESTART),
    "capacity": ("ng", {"capacityType": "SPOT"}, Effect.REPLACEMENT),
}


@settings(max_examples=60, deadline=None)
@given(st.sets(st.sampled_from(sorted(EDITS)), min_size=1))
def test_the_effect_of_several_changes_is_the_worst_one(chosen):
    parts = {"ng": node_group(), "lt": template(), "rel": release()}
    for name in chosen:
        part, edit, _ = EDITS[name]
        if part == "rel":
            parts["rel"] = {**parts["rel"], "values": {**parts["rel"]["values"], **copy.deepcopy(edit)}}
        else:
            parts[part] = {**parts[part], **copy.deepcopy(edit)}
    found = change(**parts)
    assert found.effect is max(EDITS[n][2] for n in chosen)


def test_a_gpu_allocation_switch_is_named_beside_a_worse_cause_and_lesser_causes_are_not():
    from gpu_platform.decisions.disruption_model import Pool

    values = {"nodeGroup.releaseVersion": "1.35.7-20260911", "launchTemplate.userData.labels": "a", "sharing.devicePlugin": "x"}
    base = Pool("train", "ng", 2, 8, values)
    head = Pool("train", "ng", 2, 8, {**values, "launchTemplate.userData.labels": "b", "sharing.devicePlugin": "y", "gpuAllocation": "dra"})
    found = classify(base, head)
    assert found.effect == Effect.NODE_ROLL
    assert rule_for("gpuAllocation").what in found.cause  # an eviction teams act on, under the roll
    assert rule_for("sharing.devicePlugin").what not in found.cause  # an operand restart is not named
