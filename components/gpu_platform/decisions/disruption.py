"""What a change does to GPU nodes and the work on them: the disruption model (pure, no Pulumi).

Each pool (every GPU node group, every Karpenter NodePool and the system node group) is reduced to the
inputs that decide what its nodes run, each tagged with the effect a change to it has (docs/policies.md
cites the sources; Karpenter's drift rules are in karpenter_disruption):

  none < operand-restart < gpu-pod-eviction < node-roll < replacement

- replacement: an input the provider marks ForceNew changes; the node group is deleted and created.
- node-roll: EKS's managed update replaces every node (a new AMI release or Kubernetes version, or a new
  launch template version: any content change, including user data and the pool's MIG layout tag),
  `maxUnavailable` nodes at a time, draining each (managed node update behaviour).
- gpu-pod-eviction: nodes stay, GPU pods go: the GPU Operator's upgrade controller reloads the driver
  (a new version, kernel module type or chart of an operator-owned driver), a running node is relabelled
  to another MIG config, or a NoExecute taint is added.
- operand-restart: the operator's DaemonSets restart (device plugin, GFD, DCGM exporter, MIG manager);
  running pods keep their GPUs.
- none: applied in place (sizes, labels, NoSchedule taints, tags, update and repair settings).

The vocabulary (effects, rules, pools) and the readers both kinds of pool share are in disruption_model.
The same model compares two plans (`gpu-platform diff`), a plan and the committed lock (the policy pack
and `gpu-platform plan`), and the old and new states of a real preview (`gpu-platform check-preview`).
Resources come in as (type, logical name, inputs) with plain camelCase inputs; a value unknown during a
preview is UNKNOWN and never equals anything, so an unprovable input counts as changed.
"""
from __future__ import annotations

import json
from typing import Any, Optional
from collections.abc import Iterable, Mapping

from gpu_platform.decisions import karpenter_disruption
from gpu_platform.decisions.disruption_model import (
    DRIFT_TAG, MISSING, UNKNOWN, Cause, Disruption, Effect, Pool, Resource, Rule, get, mig_change, operator_values,
    user_data_values,
)
from gpu_platform.facts import catalog, names
from gpu_platform.facts.recognise import is_gpu_operator_chart, node_group_instance_types

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
SYSTEM_POOL = names.SYSTEM_ROLE


# --- what each input does when it changes ---

# Node group inputs that carry another resource's id or ARN: plans only have stand-ins for them.
REFERENCE_INPUTS = ("launchTemplate.id", "nodeRoleArn", "subnetIds")
REPLACE_INPUTS = catalog.REPLACE_FORCING_INPUTS[NODE_GROUP]
# Launch template inputs that make no new template version (its own tags, version pointers); `name`
# and `namePrefix` replace the template and, through launchTemplate.name, the node group (read there).
TEMPLATE_NOT_CONTENT = ("tags", "tagsAll", "updateDefaultVersion", "defaultVersion")
# The kubelet's CPU and topology managers as read from user data (docs/numa.md): a change is a new template
# version, so every node rolls; the kubelet applies them only at start.
KUBELET_USER_DATA = "userData.kubelet"
KARPENTER_AREAS = ("nodePool", "nodeClass")  # fingerprint keys of Karpenter pools (karpenter_disruption)
# Top-level node group inputs the model reads on its own; every other one is applied in place.
NODE_GROUP_READ = frozenset({p.split(".", 1)[0] for p in REPLACE_INPUTS} | {"releaseVersion", "version", "labels", "taints"})


def _added_no_execute(before: Any, after: Any) -> Effect:
    """A NoExecute taint evicts every running pod that does not tolerate it; removing one evicts nothing."""
    if after == UNKNOWN:
        return Effect.GPU_POD_EVICTION
    if not isinstance(after, list):
        return Effect.NONE
    return Effect.GPU_POD_EVICTION if set(after) - set(before if isinstance(before, list) else []) else Effect.NONE


def rule_for(key: str) -> Rule:
    """What a change to the fingerprint `key` does."""
    area, _, item = key.partition(".")
    if area in KARPENTER_AREAS:
        return karpenter_disruption.rule_for(key)
    if area == "nodeGroup":
        if item in REPLACE_INPUTS:
            return Rule(Effect.REPLACEMENT, "node group (replaced)", False, item)
        if item == "releaseVersion":
            return Rule(Effect.NODE_ROLL, "AMI release", True)
        if item == "version":
            return Rule(Effect.NODE_ROLL, "Kubernetes version of the nodes", True)
        if item == "noExecuteTaints":
            return Rule(_added_no_execute, "NoExecute taints", True)
        return Rule(Effect.NONE, "node group, in place", False, item)
    if area == "launchTemplate":
        if item in TEMPLATE_NOT_CONTENT:
            return Rule(Effect.NONE, "launch template, no new version", False, item)
        if item == KUBELET_USER_DATA:
            return Rule(Effect.NODE_ROLL, "kubelet CPU and topology managers (launch template user data)", True)
        if item.startswith("userData."):
            return Rule(Effect.NODE_ROLL, f"launch template user data ({item.split('.', 1)[1]})", True)
        return Rule(Effect.NODE_ROLL, "launch template", True, item)
    if key == "gpuAllocation":  # no node serves both: the pool's GPU pods hold the other mode's GPUs
        return Rule(Effect.GPU_POD_EVICTION, "GPU allocation (device plugin <-> DRA): every GPU pod on the pool is "
                    "evicted and must be resubmitted with the other mode's requests or claims", True, teams_act=True)
    if key == "sharing.mig":
        return Rule(mig_change, "MIG layout", True)
    if key == "sharing.devicePlugin":
        return Rule(Effect.OPERAND_RESTART, "device-plugin config (time-slicing)", True)
    if key == "gpuOperator.driver":
        return Rule(Effect.GPU_POD_EVICTION, "GPU driver (operator-owned)", True)
    if key.startswith("gpuOperator.operands."):
        return Rule(Effect.OPERAND_RESTART, "GPU Operator values", True, key.rsplit(".", 1)[1])
    if key == "gpuOperator.upgradePolicy":
        return Rule(Effect.NONE, "driver upgrade policy", False)
    return Rule(Effect.NONE, key, False)


def effect_of(key: str, before: Any, after: Any) -> Effect:
    rule = rule_for(key).effect
    return rule if isinstance(rule, Effect) else rule(before, after)


def locked(pool: Pool) -> dict[str, Any]:
    """The values the lock records: those whose change needs a restart, an eviction or a roll."""
    return {k: v for k, v in sorted(pool.values.items()) if rule_for(k).locked}


# --- a pool, as the model sees it ---


# --- reading pools from resources ---


def pools_of(resources: Iterable[Resource]) -> dict[str, Pool]:
    """Every node group's pool, by pool name, with its node group, launch template and operator facts;
    and every Karpenter NodePool's, with its EC2NodeClass (decisions/karpenter_disruption.py)."""
    resources = list(resources)
    templates = {get(i, "name"): i for t, _, i in resources if t == LAUNCH_TEMPLATE}
    release = next((i for t, _, i in resources if t == HELM_RELEASE and is_gpu_operator_chart(get(i, "chart"))), None)
    out = {}
    for type_, name, inputs in resources:
        if type_ != NODE_GROUP:
            continue
        pool = _pool_of(name, inputs, templates.get(get(inputs, "launchTemplate.name")), release)
        out[pool.name] = pool
    out.update(karpenter_disruption.karpenter_pools(resources, release))
    return out


def unreadable(resources: Iterable[Resource]) -> Optional[str]:
    """What keeps pools_of from reading `resources` that come from a file (a plan or a preview; None: it
    reads them). The inputs are the providers', of many shapes: a value of the wrong type is named."""
    try:
        pools_of(resources)
    except (TypeError, AttributeError, ValueError, KeyError) as exc:
        return f"its node groups, launch templates, NodePools or GPU Operator values hold a value of the wrong type ({exc})"
    return None


def _pool_name(name: str, labels: Mapping[str, str]) -> str:
    if labels.get(names.POOL_LABEL):
        return labels[names.POOL_LABEL]
    return SYSTEM_POOL if labels.get(names.ROLE_LABEL) == names.SYSTEM_ROLE else name


def _gpus_per_node(inputs: Mapping[str, Any], template: Optional[Mapping[str, Any]]) -> int:
    types = node_group_instance_types(inputs, template)
    first = catalog.INSTANCE_TYPES.get(types[0]) if types else None
    return first.gpu_count if first else 0


def _pool_of(name: str, ng: Mapping[str, Any], template: Optional[Mapping[str, Any]],
             release: Optional[Mapping[str, Any]]) -> Pool:
    labels = get(ng, "labels", {})
    labels = labels if isinstance(labels, Mapping) else {}
    gpus = _gpus_per_node(ng, template)
    max_size = get(ng, "scalingConfig.maxSize", 0)
    values: dict[str, Any] = {}
    values.update(_node_group_values(ng))
    values.update(_template_values(template))
    if gpus:
        values.update(operator_values(labels, template, release))
    return Pool(_pool_name(name, labels), name, max_size if isinstance(max_size, int) else 0, gpus, values)


def _node_group_values(ng: Mapping[str, Any]) -> dict[str, Any]:
    values = {f"nodeGroup.{p}": get(ng, p) for p in (*REPLACE_INPUTS, "releaseVersion", "version")}
    taints = get(ng, "taints", [])
    if isinstance(taints, list):
        values["nodeGroup.noExecuteTaints"] = sorted(
            f"{t.get('key')}={t.get('value', '')}" for t in taints if isinstance(t, Mapping) and t.get("effect") == "NO_EXECUTE")
    else:
        values["nodeGroup.noExecuteTaints"] = UNKNOWN if taints == UNKNOWN else []
    values["nodeGroup.taints"] = taints
    labels = get(ng, "labels", {})
    if isinstance(labels, Mapping):  # applied in place; the sharing labels are read with their configs
        values.update({f"nodeGroup.labels.{k}": v for k, v in labels.items()
                       if k not in (names.MIG_CONFIG_LABEL, names.DEVICE_PLUGIN_CONFIG_LABEL, names.GPU_ALLOCATION_LABEL)})
        if names.GPU_ALLOCATION_LABEL in labels:  # DRA pools only: device-plugin pools keep the fingerprint they had
            values["gpuAllocation"] = labels[names.GPU_ALLOCATION_LABEL]
    values.update({f"nodeGroup.{k}": v for k, v in ng.items() if k not in NODE_GROUP_READ})
    return values


def _template_values(template: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    if template is None:
        return {}
    values: dict[str, Any] = {}
    for key, value in template.items():
        if key in ("name", "namePrefix"):  # a new name replaces the group: read as launchTemplate.name
            continue
        if key == "userData":
            values.update(user_data_values(value))
        elif key == "tagSpecifications":
            values[f"launchTemplate.{key}"] = _without_mig_tag(value)
        elif key == "vpcSecurityGroupIds":  # ids of other resources: only how many can be compared
            values[f"launchTemplate.{key}"] = UNKNOWN if value == UNKNOWN else len(value or [])
        elif key == "networkInterfaces":
            values[f"launchTemplate.{key}"] = _interfaces(value)
        else:
            values[f"launchTemplate.{key}"] = value
    return values


def _without_mig_tag(specs: Any) -> Any:
    """Tag specifications without the MIG layout tag, which the model reads as the pool's MIG layout."""
    if not isinstance(specs, list):
        return specs
    out = []
    for spec in specs:
        if isinstance(spec, Mapping) and isinstance(spec.get("tags"), Mapping):
            spec = {**spec, "tags": {k: v for k, v in spec["tags"].items() if k != names.MIG_LAYOUT_TAG}}
        out.append(spec)
    return out


def _interfaces(value: Any) -> Any:
    if not isinstance(value, list):
        return value
    return [{**i, "securityGroups": len(i.get("securityGroups") or [])} if isinstance(i, Mapping)
            and i.get("securityGroups") != UNKNOWN else i for i in value]


# --- comparing ---

def _show(value: Any) -> str:
    if value is MISSING or value is None:
        return "(none)"
    if value == UNKNOWN:
        return "(unknown during preview: cannot be proven unchanged)"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def leaf_changes(before: Any, after: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """(path, before, after) for each changed leaf: `blockDeviceMappings[0].ebs.volumeSize`."""
    if isinstance(before, Mapping) and isinstance(after, Mapping):
        out = []
        for key in sorted(set(before) | set(after), key=str):
            out += leaf_changes(before.get(key, MISSING), after.get(key, MISSING), f"{path}.{key}" if path else str(key))
        return out
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        out = []
        for i, (b, a) in enumerate(zip(before, after, strict=True)):
            out += leaf_changes(b, a, f"{path}[{i}]")
        return out
    return [] if before == after else [(path, before, after)]


def describe(key: str, before: Any, after: Any) -> str:
    rule = rule_for(key)
    if key == "sharing.mig":
        return f"{rule.what} {_layout_text(before)} -> {_layout_text(after)}{_mig_how(before, after)}"
    changes = leaf_changes(before, after, rule.path)
    if not changes or len(changes) > 3 or any(p == "" for p, _, _ in changes):
        where = f" {rule.path}" if rule.path else ""
        return f"{rule.what}:{where} {_show(before)} -> {_show(after)}"
    return f"{rule.what}: " + ", ".join(f"{p} {_show(b)} -> {_show(a)}" for p, b, a in changes)


def _layout_text(value: Any) -> str:
    if not isinstance(value, Mapping):
        return _show(value)
    layout = value.get("layout")
    if isinstance(layout, Mapping):
        return "+".join(f"{n}x{p}" for p, n in sorted(layout.items())) or "disabled"
    return _show(layout)


def _mig_how(before: Any, after: Any) -> str:
    effect = mig_change(before, after)
    if effect == Effect.NODE_ROLL and DRIFT_TAG in ((after or {}) if isinstance(after, dict) else {}):
        return " (the nodes drift: Karpenter replaces them within the NodePool's budgets and they partition their GPUs at boot)"
    if effect == Effect.NODE_ROLL:
        return " (a new launch template version: nodes are replaced one batch at a time and partition their GPUs at boot)"
    if effect == Effect.GPU_POD_EVICTION:
        return " (running nodes are repartitioned in place, every node at once)"
    return ""


def classify(base: Optional[Pool], head: Optional[Pool], *, locked_only: bool = False) -> Optional[Disruption]:
    """The disruption a change from `base` to `head` makes to one pool (None: nothing changed)."""
    if head is None:
        if base is None:
            return None
        cause = Cause("nodeGroup", Effect.REPLACEMENT, f"pool removed: {base.kind} {base.node_group} is deleted")
        return Disruption(base.name, Effect.REPLACEMENT, (cause,), base.nodes, base.gpus)
    if base is None:
        cause = Cause("nodeGroup", Effect.NONE, "new pool: no node or job runs there yet")
        return Disruption(head.name, Effect.NONE, (cause,), 0, 0)
    old, new = (locked(base), locked(head)) if locked_only else (base.values, head.values)
    causes = []
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key, MISSING), new.get(key, MISSING)
        if before == after or (before is MISSING and after is None) or (after is MISSING and before is None):
            continue
        b, a = (None if before is MISSING else before), (None if after is MISSING else after)
        causes.append(Cause(key, effect_of(key, b, a), describe(key, b, a), rule_for(key).teams_act))
    if not causes:
        return None
    causes.sort(key=lambda c: -c.effect)
    effect = causes[0].effect
    touched = effect > Effect.NONE  # the nodes and GPUs running now (the base) are the ones disrupted
    return Disruption(head.name, effect, tuple(causes), base.nodes if touched else 0, base.gpus if touched else 0)


def compare(base: Mapping[str, Pool], head: Mapping[str, Pool], *, locked_only: bool = False) -> list[Disruption]:
    """Every pool that changed, worst effect first, then by name."""
    found = [classify(base.get(n), head.get(n), locked_only=locked_only) for n in sorted(set(base) | set(head))]
    return sorted((d for d in found if d is not None), key=lambda d: (-d.effect, d.pool))


# --- the lock's record of each pool ---

def lock_entry(pool: Pool) -> dict[str, Any]:
    return {"nodeGroup": pool.node_group, "fingerprint": locked(pool)}


def pool_from_lock(name: str, entry: Mapping[str, Any], head: Optional[Pool] = None) -> Pool:
    """A locked pool; its size comes from the head plan (the lock records no sizes)."""
    return Pool(name, entry.get("nodeGroup", name), head.nodes if head else 0, head.gpus_per_node if head else 0,
                dict(entry.get("fingerprint") or {}))
