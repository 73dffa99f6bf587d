"""Karpenter pools in the disruption model: which NodePool and EC2NodeClass changes drift nodes.

Karpenter replaces a drifted node within the NodePool's disruption budgets, launching the replacement
first and draining the old node (karpenter.sh v1.14, Disruption: Drift). What drifts, and so counts as
a `node-roll` here:
- NodePool `spec.template`: Karpenter hashes the template (labels, annotations, taints, startup taints,
  expireAfter, terminationGracePeriod, nodeClassRef) and a node whose hash differs drifts. Unlike a
  managed node group, nothing is relabelled in place: a new sharing label drifts the node too.
- NodePool requirements: a node drifts only when the new requirements no longer admit it; a change that
  only drops a requirement or adds values to an `In` list is `none`, any other change is counted as a
  roll (conservative: nodes whose instance and capacity type still match stay).
- EC2NodeClass: its spec is hashed (block devices, user data, metadata options, role, tags, kubelet...)
  and its subnet, security group and AMI selectors are resolved and compared. Every field is counted as
  a roll (conservative for selectors: a new selector that resolves to the same subnets drifts nothing).
Behavioral fields (`limits`, `disruption`, `weight`) and the NodePool's own labels and annotations are
applied in place (`none`). A NodePool renamed or removed is a `replacement`: Karpenter drains and
terminates every node of a deleted NodePool.

The pool is named by its `gpu-platform.io/pool` template label; its size is `limits.nodes`.
"""
from __future__ import annotations

from typing import Any, Optional
from collections.abc import Iterable, Mapping

from gpu_platform.decisions.disruption_model import (
    DRIFT_TAG, UNKNOWN, Effect, Pool, Resource, Rule, config_data, digest, get, mig_layout, operator_values,
    user_data_values,
)
from gpu_platform.facts import catalog, names
from gpu_platform.facts.karpenter import NODE_CLASS, NODE_POOL, max_nodes, requirement_values

BEHAVIORAL = ("limits", "disruption", "weight", "metadata")  # NodePool fields that drift no node
TEMPLATE_READ = ("requirements",)  # template.spec fields with their own rule


def _requirements(value: Any) -> dict[Any, tuple[Any, frozenset[Any]]]:
    """key -> (operator, values) of a NodePool's requirements as read back (any value: the pack reads any program)."""
    return {r.get("key"): (r.get("operator"), frozenset(r.get("values") or ()))
            for r in value if isinstance(r, Mapping)} if isinstance(value, list) else {}


def _requirements_change(before: Any, after: Any) -> Effect:
    """`none` when requirements are only dropped or widened (every running node still matches)."""
    if before == UNKNOWN or after == UNKNOWN:
        return Effect.NODE_ROLL
    old, new = _requirements(before), _requirements(after)
    for key, (op, values) in new.items():
        was = old.get(key)
        if was == (op, values) or (was is not None and op == was[0] == "In" and values >= was[1]):
            continue
        return Effect.NODE_ROLL
    return Effect.NONE


def rule_for(key: str) -> Rule:
    area, _, item = key.partition(".")
    if area == "nodePool":
        if item == "name":
            return Rule(Effect.REPLACEMENT, "NodePool (replaced: Karpenter drains and terminates its nodes)", False)
        if item.split(".", 1)[0] in BEHAVIORAL:
            return Rule(Effect.NONE, "NodePool, in place", False, item)
        if item == "requirements":
            return Rule(_requirements_change, "NodePool requirements (nodes they no longer admit drift)", True)
        return Rule(Effect.NODE_ROLL, "NodePool template (nodes drift)", True, item.removeprefix("template."))
    if item == "userData.kubelet":  # read from user data: the EC2NodeClass has no field for them
        return Rule(Effect.NODE_ROLL, "kubelet CPU and topology managers (EC2NodeClass user data; nodes drift)", True)
    if item.startswith("userData."):
        return Rule(Effect.NODE_ROLL, f"EC2NodeClass user data ({item.split('.', 1)[1]}; nodes drift)", True)
    return Rule(Effect.NODE_ROLL, "EC2NodeClass (nodes drift)", True, item)


def karpenter_pools(resources: Iterable[Resource], release: Optional[Mapping[str, Any]]) -> dict[str, Pool]:
    """Every NodePool's pool, by pool name, with its EC2NodeClass and the GPU Operator's facts."""
    resources = list(resources)
    classes = {get(i, "metadata.name"): i for t, _, i in resources if t == NODE_CLASS}
    out = {}
    for type_, name, inputs in resources:
        if type_ != NODE_POOL:
            continue
        labels = get(inputs, "spec.template.metadata.labels", {})
        labels = labels if isinstance(labels, Mapping) else {}
        node_class = classes.get(get(inputs, "spec.template.spec.nodeClassRef.name"))
        types = requirement_values(inputs, names.INSTANCE_TYPE_LABEL) if isinstance(inputs.get("spec"), Mapping) else []
        first = catalog.INSTANCE_TYPES.get(types[0]) if types else None
        gpus = first.gpu_count if first else 0
        values = {**_node_pool_values(inputs), **_node_class_values(node_class)}
        if gpus:
            values.update(operator_values(labels, None, release))
            if release is not None and values.get("sharing.mig") != UNKNOWN:
                values["sharing.mig"] = _mig_values(labels, node_class, get(release, "values", {}))
        pool = labels.get(names.POOL_LABEL) or get(inputs, "metadata.name") or name
        out[pool] = Pool(pool, name, max_nodes(inputs) if isinstance(inputs.get("spec"), Mapping) else 0, gpus,
                         values, kind="NodePool")
    return out


def _node_pool_values(inputs: Mapping[str, Any]) -> dict[str, Any]:
    spec = get(inputs, "spec", {})
    if spec == UNKNOWN:
        return {"nodePool.name": get(inputs, "metadata.name"), "nodePool.template": UNKNOWN}
    values: dict[str, Any] = {"nodePool.name": get(inputs, "metadata.name"),
                              "nodePool.metadata": digest(get(inputs, "metadata", {}))}
    template = spec.get("template") or {}
    meta = template.get("metadata") or {}
    for key, value in (meta.get("labels") or {}).items():
        values[f"nodePool.labels.{key}"] = value
    if meta.get("annotations"):
        values["nodePool.annotations"] = meta["annotations"]
    for key, value in (template.get("spec") or {}).items():
        values["nodePool.requirements" if key in TEMPLATE_READ else f"nodePool.template.{key}"] = value
    for key in ("limits", "disruption", "weight"):
        if key in spec:
            values[f"nodePool.{key}"] = spec[key]
    return values


def _node_class_values(node_class: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    if node_class is None:
        return {"nodeClass.spec": None}
    spec = get(node_class, "spec", {})
    if spec == UNKNOWN or not isinstance(spec, Mapping):
        return {"nodeClass.spec": UNKNOWN}
    values: dict[str, Any] = {}
    for key, value in spec.items():
        if key == "userData":
            values.update({k.replace("launchTemplate.", "nodeClass."): v for k, v in user_data_values(value).items()})
        elif key == "tags" and isinstance(value, Mapping):
            values["nodeClass.tags"] = {k: v for k, v in value.items() if k != names.MIG_LAYOUT_TAG}
        else:
            values[f"nodeClass.{key}"] = value
    return values


def _mig_values(labels: Mapping[str, str], node_class: Optional[Mapping[str, Any]], values: Any) -> Any:
    """The MIG config the pool's nodes select, its layout, and the EC2NodeClass's layout tag."""
    label = labels.get(names.MIG_CONFIG_LABEL)
    tags = get(node_class or {}, "spec.tags", {})
    tag = tags.get(names.MIG_LAYOUT_TAG) if isinstance(tags, Mapping) else UNKNOWN
    if label is None and tag is None:
        return None
    data = config_data(values, "migManager") if isinstance(values, Mapping) else UNKNOWN
    text = (data or {}).get(names.MIG_PARTED_CONFIG_KEY) if isinstance(data, Mapping) and label else None
    return {"label": label, "layout": mig_layout(text, label), DRIFT_TAG: tag}
