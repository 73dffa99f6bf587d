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

The same model compares two plans (`gpu-platform diff`), a plan and the committed lock (the policy pack
and `gpu-platform plan`), and the old and new states of a real preview (`gpu-platform check-preview`).
Resources come in as (type, logical name, inputs) with plain camelCase inputs; a value unknown during a
preview is UNKNOWN and never equals anything, so an unprovable input counts as changed.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Callable, Iterable, Mapping, Optional, Union

import yaml

from . import catalog, names
from .launch_template import read_user_data

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
UNKNOWN = "[unknown]"  # how plans write a value the engine does not know yet
SYSTEM_POOL = names.SYSTEM_ROLE
MISSING = object()


class Effect(IntEnum):
    NONE = 0
    OPERAND_RESTART = 1
    GPU_POD_EVICTION = 2
    NODE_ROLL = 3
    REPLACEMENT = 4

    @property
    def label(self) -> str:
        return self.name.lower().replace("_", "-")

    @classmethod
    def parse(cls, text: str) -> "Effect":
        return cls[text.upper().replace("-", "_")]


# Changes at or above this evict GPU pods or replace nodes: in prod they need the lock's approval.
NEEDS_APPROVAL = Effect.GPU_POD_EVICTION

# --- what each input does when it changes ---

EffectRule = Union[Effect, Callable[[Any, Any], Effect]]
# Node group inputs that carry another resource's id or ARN: plans only have stand-ins for them.
REFERENCE_INPUTS = ("launchTemplate.id", "nodeRoleArn", "subnetIds")
REPLACE_INPUTS = catalog.REPLACE_FORCING_INPUTS[NODE_GROUP]
# Launch template inputs that make no new template version (its own tags, version pointers); `name`
# and `namePrefix` replace the template and, through launchTemplate.name, the node group (read there).
TEMPLATE_NOT_CONTENT = ("tags", "tagsAll", "updateDefaultVersion", "defaultVersion")
# Top-level node group inputs the model reads on its own; every other one is applied in place.
# The driver's upgrade policy steers how a reload happens, not whether one does.
DRIVER_IDENTITY_EXCLUDED = ("upgradePolicy",)
KARPENTER_AREAS = ("nodePool", "nodeClass")  # fingerprint keys of Karpenter pools (karpenter_disruption)
NODE_GROUP_READ = frozenset({p.split(".", 1)[0] for p in REPLACE_INPUTS} | {"releaseVersion", "version", "labels", "taints"})


def _added_no_execute(before: Any, after: Any) -> Effect:
    """A NoExecute taint evicts every running pod that does not tolerate it; removing one evicts nothing."""
    if after == UNKNOWN:
        return Effect.GPU_POD_EVICTION
    if not isinstance(after, list):
        return Effect.NONE
    return Effect.GPU_POD_EVICTION if set(after) - set(before if isinstance(before, list) else []) else Effect.NONE


DRIFT_TAG = "nodeClassTag"  # a Karpenter pool's MIG layout tag: on its EC2NodeClass, not a launch template


def _mig_change(before: Any, after: Any) -> Effect:
    """Relabelling a running node makes its MIG manager repartition it at once (GPU pods die with the
    reboot); a new layout tag rolls the pool; a changed config under the same name reaches nodes only
    when their MIG manager restarts, which may be any time: counted as an eviction."""
    b, a = (before if isinstance(before, dict) else {}), (after if isinstance(after, dict) else {})
    effects = [Effect.NONE]
    drift = DRIFT_TAG in b or DRIFT_TAG in a  # Karpenter never relabels a node: a new label drifts it
    if b.get("label") != a.get("label"):
        effects.append(Effect.NODE_ROLL if drift else Effect.GPU_POD_EVICTION)
    if b.get("launchTemplateTag") != a.get("launchTemplateTag") or b.get(DRIFT_TAG) != a.get(DRIFT_TAG):
        effects.append(Effect.NODE_ROLL)
    if b.get("layout") != a.get("layout") and len(effects) == 1:
        effects.append(Effect.GPU_POD_EVICTION)
    return max(effects)


@dataclass(frozen=True)
class Rule:
    effect: EffectRule
    what: str  # how a cause names the input
    locked: bool  # recorded in the lock (replace-forcing inputs have their own guard and lock section)
    path: str = ""  # leaf paths in causes start here


def rule_for(key: str) -> Rule:
    """What a change to the fingerprint `key` does."""
    area, _, item = key.partition(".")
    if area in KARPENTER_AREAS:
        from .karpenter_disruption import rule_for as karpenter_rule

        return karpenter_rule(key)
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
        if item.startswith("userData."):
            return Rule(Effect.NODE_ROLL, f"launch template user data ({item.split('.', 1)[1]})", True)
        return Rule(Effect.NODE_ROLL, "launch template", True, item)
    if key == "sharing.mig":
        return Rule(_mig_change, "MIG layout", True)
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


# --- a pool, as the model sees it ---

@dataclass(frozen=True)
class Pool:
    name: str
    node_group: str  # the node group's logical (Pulumi) name
    nodes: int  # at max size
    gpus_per_node: int
    values: dict[str, Any] = field(default_factory=dict)  # fingerprint key -> plain JSON value
    kind: str = "node group"  # or "NodePool" (Karpenter): how causes name the pool's resource

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node

    def locked(self) -> dict[str, Any]:
        """The values the lock records: those whose change needs a restart, an eviction or a roll."""
        return {k: v for k, v in sorted(self.values.items()) if rule_for(k).locked}


@dataclass(frozen=True)
class Cause:
    key: str
    effect: Effect
    text: str

    def to_json(self) -> dict[str, str]:
        return {"input": self.key, "effect": self.effect.label, "detail": self.text}


@dataclass(frozen=True)
class Disruption:
    pool: str
    effect: Effect
    causes: tuple[Cause, ...]
    nodes: int
    gpus: int

    @property
    def cause(self) -> str:
        """The causes that make the effect, worst first."""
        return "; ".join(c.text for c in self.causes if c.effect == self.effect)

    def to_json(self) -> dict[str, Any]:
        return {"pool": self.pool, "effect": self.effect.label, "cause": self.cause, "nodes": self.nodes,
                "gpus": self.gpus, "causes": [c.to_json() for c in self.causes]}


# --- reading pools from resources ---

Resource = tuple[str, str, Mapping[str, Any]]  # (type, logical name, plain inputs)


def _get(inputs: Any, path: str, default: Any = None) -> Any:
    node = inputs
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return default
        node = node[part]
    return default if node is None else node


def _digest(value: Any) -> str:
    if value == UNKNOWN:
        return UNKNOWN
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def pools_of(resources: Iterable[Resource]) -> dict[str, Pool]:
    """Every node group's pool, by pool name, with its node group, launch template and operator facts;
    and every Karpenter NodePool's, with its EC2NodeClass (components/karpenter_disruption.py)."""
    resources = list(resources)
    templates = {_get(i, "name"): i for t, _, i in resources if t == LAUNCH_TEMPLATE}
    release = next((i for t, _, i in resources if t == HELM_RELEASE and _get(i, "chart") == catalog.GPU_OPERATOR_CHART),
                   None)
    out = {}
    for type_, name, inputs in resources:
        if type_ != NODE_GROUP:
            continue
        pool = _pool_of(name, inputs, templates.get(_get(inputs, "launchTemplate.name")), release)
        out[pool.name] = pool
    from .karpenter_disruption import karpenter_pools

    out.update(karpenter_pools(resources, release))
    return out


def _pool_name(name: str, labels: Mapping[str, str]) -> str:
    if labels.get(names.POOL_LABEL):
        return labels[names.POOL_LABEL]
    return SYSTEM_POOL if labels.get(names.ROLE_LABEL) == names.SYSTEM_ROLE else name


def _gpus_per_node(inputs: Mapping[str, Any]) -> int:
    types = _get(inputs, "instanceTypes", [])
    first = catalog.INSTANCE_TYPES.get(types[0]) if isinstance(types, list) and types else None
    return first.gpu_count if first else 0


def _pool_of(name: str, ng: Mapping[str, Any], template: Optional[Mapping[str, Any]],
             release: Optional[Mapping[str, Any]]) -> Pool:
    labels = _get(ng, "labels", {})
    labels = labels if isinstance(labels, Mapping) else {}
    gpus = _gpus_per_node(ng)
    max_size = _get(ng, "scalingConfig.maxSize", 0)
    values: dict[str, Any] = {}
    values.update(_node_group_values(ng))
    values.update(_template_values(template))
    if gpus:
        values.update(_operator_values(labels, template, release))
    return Pool(_pool_name(name, labels), name, max_size if isinstance(max_size, int) else 0, gpus, values)


def _node_group_values(ng: Mapping[str, Any]) -> dict[str, Any]:
    values = {f"nodeGroup.{p}": _get(ng, p) for p in (*REPLACE_INPUTS, "releaseVersion", "version")}
    taints = _get(ng, "taints", [])
    if isinstance(taints, list):
        values["nodeGroup.noExecuteTaints"] = sorted(
            f"{t.get('key')}={t.get('value', '')}" for t in taints if isinstance(t, Mapping) and t.get("effect") == "NO_EXECUTE")
    else:
        values["nodeGroup.noExecuteTaints"] = UNKNOWN if taints == UNKNOWN else []
    values["nodeGroup.taints"] = taints
    labels = _get(ng, "labels", {})
    if isinstance(labels, Mapping):  # applied in place; the sharing labels are read with their configs
        values.update({f"nodeGroup.labels.{k}": v for k, v in labels.items()
                       if k not in (names.MIG_CONFIG_LABEL, names.DEVICE_PLUGIN_CONFIG_LABEL)})
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
            values.update(_user_data_values(value))
        elif key == "tagSpecifications":
            values[f"launchTemplate.{key}"] = _without_mig_tag(value)
        elif key == "vpcSecurityGroupIds":  # ids of other resources: only how many can be compared
            values[f"launchTemplate.{key}"] = UNKNOWN if value == UNKNOWN else len(value or [])
        elif key == "networkInterfaces":
            values[f"launchTemplate.{key}"] = _interfaces(value)
        else:
            values[f"launchTemplate.{key}"] = value
    return values


def _user_data_values(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if value == UNKNOWN:
        return {f"launchTemplate.userData.{k}": UNKNOWN for k in ("labels", "taints", "bootstrap")}
    facts = read_user_data(value)
    values: dict[str, Any] = {"launchTemplate.userData.bootstrap": _digest(facts.bootstrap)}
    if facts.labels:  # only a bootstrap that registers the node lists labels and taints (Ubuntu)
        values["launchTemplate.userData.labels"] = dict(sorted(facts.labels.items()))
    if facts.taints:
        values["launchTemplate.userData.taints"] = facts.taints
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


def _mig_tag(template: Optional[Mapping[str, Any]]) -> Optional[str]:
    for spec in _get(template or {}, "tagSpecifications", []) or []:
        if isinstance(spec, Mapping) and spec.get("resourceType") == "instance":
            tags = spec.get("tags")
            if isinstance(tags, Mapping) and names.MIG_LAYOUT_TAG in tags:
                return tags[names.MIG_LAYOUT_TAG]
    return None


def _interfaces(value: Any) -> Any:
    if not isinstance(value, list):
        return value
    return [{**i, "securityGroups": len(i.get("securityGroups") or [])} if isinstance(i, Mapping)
            and i.get("securityGroups") != UNKNOWN else i for i in value]


def _operator_values(labels: Mapping[str, str], template: Optional[Mapping[str, Any]],
                     release: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """What the GPU Operator makes this GPU pool's nodes run: driver, sharing entries, other operands."""
    if release is None:
        return {}
    values = _get(release, "values", {})
    if values == UNKNOWN or not isinstance(values, Mapping):
        return {k: UNKNOWN for k in ("gpuOperator.driver", "sharing.mig", "sharing.devicePlugin")}
    chart = _get(release, "version")
    driver = values.get("driver") if isinstance(values.get("driver"), Mapping) else {}
    owns_driver = _truthy(driver.get("enabled", True)) and labels.get(names.gpu_deploy_label("driver")) != "false"
    out: dict[str, Any] = {
        "gpuOperator.driver": ({**{k: v for k, v in sorted(driver.items()) if k not in DRIVER_IDENTITY_EXCLUDED},
                                "chartVersion": chart} if owns_driver else None),
        "gpuOperator.upgradePolicy": driver.get("upgradePolicy"),
        "sharing.mig": _mig_values(labels, template, values),
        "sharing.devicePlugin": _device_plugin_values(labels, values),
    }
    for key, value in sorted(_operand_values(values).items()):
        out[f"gpuOperator.operands.{key}"] = value
    if not owns_driver:
        out["gpuOperator.operands.chartVersion"] = chart
    return out


def _config_data(values: Mapping[str, Any], operand: str) -> Any:
    return _get(values, f"{operand}.config.data", {})


def _mig_values(labels: Mapping[str, str], template: Optional[Mapping[str, Any]], values: Mapping[str, Any]) -> Any:
    label = labels.get(names.MIG_CONFIG_LABEL)
    tag = _mig_tag(template)
    if label is None and tag is None:
        return None
    text = (_config_data(values, "migManager") or {}).get(names.MIG_PARTED_CONFIG_KEY) if label else None
    return {"label": label, "layout": _mig_layout(text, label), "launchTemplateTag": tag}


def _mig_layout(text: Any, label: Optional[str]) -> Any:
    """The layout a MIG config names, as `{profile: count}` or "disabled" (None: no such config)."""
    if text == UNKNOWN:
        return UNKNOWN
    try:
        items = ((yaml.safe_load(text) or {}).get("mig-configs") or {}).get(label) if text else None
    except yaml.YAMLError:
        return None
    if not items:
        return None
    enabled = [i for i in items if isinstance(i, Mapping) and i.get("mig-enabled")]
    return dict(enabled[0].get("mig-devices") or {}) if enabled else "disabled"


def _device_plugin_values(labels: Mapping[str, str], values: Mapping[str, Any]) -> Any:
    config = _get(values, "devicePlugin.config", {}) or {}
    entry = labels.get(names.DEVICE_PLUGIN_CONFIG_LABEL) or config.get("default")
    data = config.get("data") if isinstance(config, Mapping) else None
    text = data.get(entry) if isinstance(data, Mapping) and entry else None
    try:
        doc = yaml.safe_load(text) if isinstance(text, str) and text != UNKNOWN else text
    except yaml.YAMLError:
        doc = text
    return {"config": entry, "content": doc}


def _operand_values(values: Mapping[str, Any]) -> dict[str, Any]:
    """Every other top-level value, as a short digest: a change restarts the operator's DaemonSets."""
    out = {}
    for key, value in values.items():
        if key == "driver":
            continue
        if key in ("devicePlugin", "migManager") and isinstance(value, Mapping):
            config = value.get("config")
            if isinstance(config, Mapping):  # each pool's own entry is read above
                value = {**value, "config": {k: v for k, v in config.items() if k != "data"}}
        out[key] = _digest(value)
    return out


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
        for i, (b, a) in enumerate(zip(before, after)):
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
    effect = _mig_change(before, after)
    if effect == Effect.NODE_ROLL and DRIFT_TAG in ((after or {}) if isinstance(after, dict) else {}):
        return " (the nodes drift: Karpenter replaces them within the NodePool's budgets and they partition their GPUs at boot)"
    if effect == Effect.NODE_ROLL:
        return " (a new launch template version: nodes are replaced one batch at a time and partition their GPUs at boot)"
    if effect == Effect.GPU_POD_EVICTION:
        return " (running nodes are repartitioned in place, every node at once)"
    return ""


def classify(base: Optional[Pool], head: Optional[Pool], *, locked_only: bool = False) -> Optional[Disruption]:
    """The disruption a change from `base` to `head` makes to one pool (None: nothing changed)."""
    if base is None and head is None:
        return None
    if head is None:
        cause = Cause("nodeGroup", Effect.REPLACEMENT, f"pool removed: {base.kind} {base.node_group} is deleted")
        return Disruption(base.name, Effect.REPLACEMENT, (cause,), base.nodes, base.gpus)
    if base is None:
        cause = Cause("nodeGroup", Effect.NONE, "new pool: no node or job runs there yet")
        return Disruption(head.name, Effect.NONE, (cause,), 0, 0)
    old, new = (base.locked(), head.locked()) if locked_only else (base.values, head.values)
    causes = []
    for key in sorted(set(old) | set(new)):
        before, after = old.get(key, MISSING), new.get(key, MISSING)
        if before == after or (before is MISSING and after is None) or (after is MISSING and before is None):
            continue
        b, a = (None if before is MISSING else before), (None if after is MISSING else after)
        causes.append(Cause(key, effect_of(key, b, a), describe(key, b, a)))
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
    return {"nodeGroup": pool.node_group, "fingerprint": pool.locked()}


def pool_from_lock(name: str, entry: Mapping[str, Any], head: Optional[Pool] = None) -> Pool:
    """A locked pool; its size comes from the head plan (the lock records no sizes)."""
    return Pool(name, entry.get("nodeGroup", name), head.nodes if head else 0, head.gpus_per_node if head else 0,
                dict(entry.get("fingerprint") or {}))
