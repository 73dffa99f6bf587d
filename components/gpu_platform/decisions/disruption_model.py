"""The disruption model's vocabulary: effects, rules, pools, causes, and the fingerprint values every
kind of pool shares (pure, no Pulumi).

A pool (a GPU node group, a Karpenter NodePool or the system node group) is reduced to the inputs that
decide what its nodes run: its fingerprint, a map of keys to plain JSON values. Each key has a rule
saying what a change to it does (decisions/disruption.py for node groups, decisions/karpenter_disruption.py
for NodePools), on one scale:

  none < operand-restart < gpu-pod-eviction < node-roll < replacement

Both kinds of pool read what the GPU Operator makes their nodes run (driver, sharing entries, other
operands) and what their user data registers the same way: those readers are here.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, Optional, Union
from collections.abc import Callable, Mapping

import yaml

from gpu_platform.decisions.launch_template import read_user_data
from gpu_platform.facts import names

UNKNOWN = "[unknown]"  # how plans write a value the engine does not know yet

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
DRIFT_TAG = "nodeClassTag"  # a Karpenter pool's MIG layout tag: on its EC2NodeClass, not a launch template


def mig_change(before: Any, after: Any) -> Effect:
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
    teams_act: bool = False  # a change teams must act on: named even when another cause is worse


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


@dataclass(frozen=True)
class Cause:
    key: str
    effect: Effect
    text: str
    teams_act: bool = False  # from its rule

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
        """The causes that make the effect, worst first, and those that ask the teams to act whatever else
        disrupts the pool (a switch of GPU allocation: jobs come back with the other mode's claims)."""
        return "; ".join(c.text for c in self.causes if c.effect == self.effect or c.teams_act)

    def to_json(self) -> dict[str, Any]:
        return {"pool": self.pool, "effect": self.effect.label, "cause": self.cause, "nodes": self.nodes,
                "gpus": self.gpus, "causes": [c.to_json() for c in self.causes]}


# --- reading values ---

Resource = tuple[str, str, Mapping[str, Any]]  # (type, logical name, plain inputs)


def get(inputs: Any, path: str, default: Any = None) -> Any:
    node = inputs
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return default
        node = node[part]
    return default if node is None else node


def digest(value: Any) -> str:
    if value == UNKNOWN:
        return UNKNOWN
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


def truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


# The driver's upgrade policy steers how a reload happens, not whether one does.
DRIVER_IDENTITY_EXCLUDED = ("upgradePolicy",)


def user_data_values(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if value == UNKNOWN:
        return {f"launchTemplate.userData.{k}": UNKNOWN for k in ("labels", "taints", "bootstrap", "kubelet")}
    facts = read_user_data(value)
    values: dict[str, Any] = {"launchTemplate.userData.bootstrap": digest(facts.bootstrap)}
    if facts.labels:  # only a bootstrap that registers the node lists labels and taints (Ubuntu)
        values["launchTemplate.userData.labels"] = dict(sorted(facts.labels.items()))
    if facts.taints:
        values["launchTemplate.userData.taints"] = facts.taints
    if facts.kubelet:  # the CPU and topology managers, however the node format spells them
        values["launchTemplate.userData.kubelet"] = facts.kubelet
    return values


def _mig_tag(template: Optional[Mapping[str, Any]]) -> Any:
    """The launch template's MIG layout tag as registered (a string, or unknown in a preview), None without one."""
    for spec in get(template or {}, "tagSpecifications", []) or []:
        if isinstance(spec, Mapping) and spec.get("resourceType") == "instance":
            tags = spec.get("tags")
            if isinstance(tags, Mapping) and names.MIG_LAYOUT_TAG in tags:
                return tags[names.MIG_LAYOUT_TAG]
    return None


def operator_values(labels: Mapping[str, str], template: Optional[Mapping[str, Any]],
                     release: Optional[Mapping[str, Any]]) -> dict[str, Any]:
    """What the GPU Operator makes this GPU pool's nodes run: driver, sharing entries, other operands."""
    if release is None:
        return {}
    values = get(release, "values", {})
    if values == UNKNOWN or not isinstance(values, Mapping):
        return {k: UNKNOWN for k in ("gpuOperator.driver", "sharing.mig", "sharing.devicePlugin")}
    chart = get(release, "version")
    raw_driver = values.get("driver")
    driver: Mapping[str, Any] = raw_driver if isinstance(raw_driver, Mapping) else {}
    owns_driver = truthy(driver.get("enabled", True)) and labels.get(names.gpu_deploy_label("driver")) != "false"
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


def config_data(values: Mapping[str, Any], operand: str) -> Any:
    return get(values, f"{operand}.config.data", {})


def _mig_values(labels: Mapping[str, str], template: Optional[Mapping[str, Any]], values: Mapping[str, Any]) -> Any:
    label = labels.get(names.MIG_CONFIG_LABEL)
    tag = _mig_tag(template)
    if label is None and tag is None:
        return None
    text = (config_data(values, "migManager") or {}).get(names.MIG_PARTED_CONFIG_KEY) if label else None
    return {"label": label, "layout": mig_layout(text, label), "launchTemplateTag": tag}


def mig_layout(text: Any, label: Optional[str]) -> Any:
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
    config = get(values, "devicePlugin.config", {}) or {}
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
        out[key] = digest(value)
    return out
