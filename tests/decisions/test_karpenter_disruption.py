"""Karpenter pools in the disruption model: NodePool template and EC2NodeClass changes drift nodes (node
roll), behavioral fields apply in place, a removed NodePool is a replacement; sizes come from limits."""
from __future__ import annotations

import copy

import pytest

from gpu_platform.decisions.disruption import HELM_RELEASE, classify, compare, lock_entry, pool_from_lock, pools_of
from gpu_platform.decisions.disruption_model import UNKNOWN, Effect
from gpu_platform.decisions.karpenter_disruption import rule_for
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.facts.karpenter import NODE_CLASS, NODE_POOL
from gpu_platform.render.karpenter import node_class_object, node_pool_object
from gpu_platform.render.operator_values import OperatorSettings, operator_values
from gpu_platform.spec.pool_context import PoolContext
from tests.support.stacks import stack_platform


def resources(platform: dict) -> list[tuple[str, str, dict]]:
    """The pool resources the program registers for `platform`, as the model reads them."""
    spec = parse_platform(platform)
    out = [(HELM_RELEASE, "gpu-operator", {"chart": catalog.GPU_OPERATOR_CHART, "version": spec.gpu_operator.chart_version,
                                           "values": operator_values(OperatorSettings.of(spec))})]
    for pool in spec.node_pools:
        if pool.provisioner == "karpenter":
            out += [(NODE_POOL, pool.name, node_pool_object(PoolContext.of(spec, pool), pool)),
                    (NODE_CLASS, f"{pool.name}-class", node_class_object(PoolContext.of(spec, pool), pool))]
    return out


def pools(edit=None) -> dict:
    platform = stack_platform("karpenter")
    if edit:
        edit(platform)
    return pools_of(resources(platform))


def pool_edit(name: str, **changes):
    def edit(platform):
        next(p for p in platform["nodePools"] if p["name"] == name).update(copy.deepcopy(changes))
    return edit


def change(edit, pool: str = "h100-mig"):
    return classify(pools()[pool], pools(edit)[pool])


def test_karpenter_pools_are_named_by_their_label_and_sized_by_their_limits():
    found = pools()
    assert {"l4-inference", "h100-mig"} <= set(found)
    h100 = found["h100-mig"]
    assert (h100.node_group, h100.kind, h100.nodes, h100.gpus_per_node, h100.gpus) == ("h100-mig", "NodePool", 2, 8, 16)


@pytest.mark.parametrize("what, edit", [
    ("alias", pool_edit("h100-mig", ami={"type": "AL2023_x86_64_NVIDIA", "alias": "al2023@v20251201"})),
    ("disk", pool_edit("h100-mig", diskSizeGiB=800)),
    ("taint", pool_edit("h100-mig", taints=[{"key": "dedicated", "value": "ml", "effect": "NoSchedule"}])),
    ("label", pool_edit("h100-mig", labels={"team": "vision"})),
    ("stack tags", lambda p: p.update(tags={"cost-center": "ml"})),
])
def test_template_and_node_class_changes_roll_the_pool(what, edit):
    found = change(edit)
    assert found.effect is Effect.NODE_ROLL and (found.nodes, found.gpus) == (2, 16), what
    assert "nodes drift" in found.cause


def test_a_new_mig_layout_drifts_the_nodes_instead_of_relabelling_them():
    found = change(pool_edit("h100-mig", sharing={"mode": "mig", "strategy": "single", "layout": {"1g.20gb": 4}}))
    assert found.effect is Effect.NODE_ROLL
    mig = next(c for c in found.causes if c.key == "sharing.mig")
    assert mig.effect is Effect.NODE_ROLL and "Karpenter replaces them" in mig.text


def test_a_sharing_label_change_is_drift_not_a_relabel():
    before = {"label": "pool-a", "layout": {"1g.10gb": 7}, "nodeClassTag": "t"}
    from gpu_platform.decisions.disruption import effect_of

    assert effect_of("sharing.mig", before, {**before, "label": "pool-b"}) is Effect.NODE_ROLL
    managed = {"label": "pool-a", "layout": {"1g.10gb": 7}, "launchTemplateTag": "t"}
    assert effect_of("sharing.mig", managed, {**managed, "label": "pool-b"}) is Effect.GPU_POD_EVICTION


@pytest.mark.parametrize("edit", [
    pool_edit("h100-mig", maxSize=4),
    pool_edit("h100-mig", maxUnavailable=2),
    pool_edit("h100-mig", karpenter={"consolidateAfter": "1h", "weight": 10}),
    lambda p: p["karpenter"].update(disruptionWindow={"schedule": "0 3 * * sat", "duration": "6h"}),
])
def test_behavioral_fields_apply_in_place(edit):
    found = change(edit)
    assert found.effect is Effect.NONE and (found.nodes, found.gpus) == (0, 0)


def test_widening_the_instance_types_drifts_nothing_narrowing_does():
    widen = change(pool_edit("l4-inference", instanceTypes=["g6.2xlarge", "g6.4xlarge", "g6.8xlarge"]), "l4-inference")
    assert widen.effect is Effect.NONE
    narrow = change(pool_edit("l4-inference", instanceTypes=["g6.4xlarge"]), "l4-inference")
    assert narrow.effect is Effect.NODE_ROLL and "no longer admit" in narrow.cause


def test_requirement_rules_read_keys_and_operators():
    from gpu_platform.decisions.karpenter_disruption import _requirements_change

    base = [{"key": "a", "operator": "In", "values": ["x"]}]
    assert _requirements_change(base, []) is Effect.NONE  # a dropped constraint admits every node
    assert _requirements_change(base, base + [{"key": "b", "operator": "In", "values": ["y"]}]) is Effect.NODE_ROLL
    assert _requirements_change(base, [{"key": "a", "operator": "NotIn", "values": ["z"]}]) is Effect.NODE_ROLL
    assert _requirements_change(base, UNKNOWN) is Effect.NODE_ROLL


def test_switching_capacity_type_rolls_the_pool():
    assert change(pool_edit("l4-inference", capacityType="spot", critical=False), "l4-inference").effect is Effect.NODE_ROLL


def test_a_removed_node_pool_is_a_replacement_of_all_its_nodes():
    base = pools()
    head = pools(lambda p: p.update(nodePools=[x for x in p["nodePools"] if x["name"] != "l4-inference"]))
    (found,) = [d for d in compare(base, head) if d.pool == "l4-inference"]
    assert found.effect is Effect.REPLACEMENT and (found.nodes, found.gpus) == (8, 8)
    assert found.cause == "pool removed: NodePool l4-inference is deleted"


def test_a_renamed_node_pool_is_a_replacement():
    assert rule_for("nodePool.name").effect is Effect.REPLACEMENT and not rule_for("nodePool.name").locked


def test_an_operator_driver_upgrade_evicts_gpu_pods_on_karpenter_pools_too():
    def ubuntu(version):
        platform = stack_platform("prod")
        platform["nodePools"].append({"name": "l4-k", "provisioner": "karpenter", "instanceTypes": ["g6.xlarge"],
                                      "capacityType": "on-demand", "minSize": 0, "maxSize": 3,
                                      "ami": {"type": "UBUNTU_24_04", "imageId": "ami-0c3f9e8a1b2d4e567"}})
        platform["karpenter"] = {"disruptionWindow": {"schedule": "0 2 * * sun", "duration": "4h"}}
        platform["gpuOperator"]["driver"]["version"] = version
        return pools_of(resources(platform))["l4-k"]

    found = classify(ubuntu("580.173.02"), ubuntu("595.91.07"))
    assert found.effect is Effect.GPU_POD_EVICTION and (found.nodes, found.gpus) == (3, 3)


def test_the_lock_records_drift_inputs_but_not_behavioral_ones():
    entry = lock_entry(pools()["h100-mig"])
    keys = set(entry["fingerprint"])
    assert {"nodeClass.amiSelectorTerms", "nodeClass.blockDeviceMappings", "nodePool.requirements",
            "nodePool.template.taints", "sharing.mig"} <= keys
    assert not keys & {"nodePool.limits", "nodePool.disruption", "nodePool.name", "nodePool.metadata"}
    assert entry["nodeGroup"] == "h100-mig"


def test_a_head_equal_to_its_lock_is_approved_and_an_alias_change_is_not():
    locked = pool_from_lock("h100-mig", lock_entry(pools()["h100-mig"]), pools()["h100-mig"])
    assert classify(locked, pools()["h100-mig"], locked_only=True) is None
    head = pools(pool_edit("h100-mig", ami={"type": "AL2023_x86_64_NVIDIA", "alias": "al2023@v20251201"}))["h100-mig"]
    assert classify(locked, head, locked_only=True).effect is Effect.NODE_ROLL


def test_an_unknown_node_class_during_a_preview_cannot_be_proven_unchanged():
    res = resources(stack_platform("karpenter"))
    res = [(t, n, {**i, "spec": UNKNOWN} if t == NODE_CLASS else i) for t, n, i in res]
    locked = pool_from_lock("h100-mig", lock_entry(pools()["h100-mig"]))
    found = classify(locked, pools_of(res)["h100-mig"], locked_only=True)
    assert found.effect is Effect.NODE_ROLL


def test_ubuntu_user_data_is_read_for_labels_taints_and_the_bootstrap():
    spec = parse_platform(stack_platform("karpenter"))
    pool = next(p for p in spec.node_pools if p.name == "l4-inference")
    node_class = node_class_object(PoolContext.of(spec, pool), pool, "#!/bin/bash\n/etc/eks/bootstrap.sh c --kubelet-extra-args "
                                               "'--node-labels=a=b --register-with-taints=k=v:NoSchedule'\n")
    node_pool = node_pool_object(PoolContext.of(spec, pool), pool)
    values = pools_of([(NODE_POOL, "p", node_pool), (NODE_CLASS, "c", node_class)])["l4-inference"].values
    assert values["nodeClass.userData.labels"] == {"a": "b"} and values["nodeClass.userData.taints"] == ["k=v:NoSchedule"]
    assert values["nodeClass.userData.bootstrap"].startswith("sha256:")
    assert rule_for("nodeClass.userData.taints").effect is Effect.NODE_ROLL


def test_every_template_label_is_read_as_drift():
    values = pools()["h100-mig"].values
    assert values["nodePool.labels." + names.POOL_LABEL] == "h100-mig"
    assert values["nodePool.labels." + names.MIG_CONFIG_LABEL] == "pool-h100-mig"
    assert rule_for("nodePool.labels." + names.MIG_CONFIG_LABEL).effect is Effect.NODE_ROLL
