"""GPU sharing and the GPU Operator's reach (NVIDIA/gpu-operator v26.7.0 chart values; NVIDIA MIG user guide;
NVIDIA/k8s-device-plugin v0.20.0 api/config/v1; docs/gpu-operator.md).

- MIG only on MIG-capable instances and images; each pool's MIG config exists in the MIG manager's file,
  that file follows mig-parted's rules, and each layout fits one GPU (placement, not just slice counts).
- Each device-plugin config a pool selects (`nvidia.com/device-plugin.config` label), and the release's
  default, is an entry of the device-plugin ConfigMap the GPU Operator release carries.
- Time-slicing (no memory isolation: one tenant can OOM another) is refused where config says: in the
  listed environments, on critical pools, on listed pools.
- The operator's DaemonSets and NFD workers tolerate every taint a GPU pool carries, or its operands
  (device plugin, GFD, DCGM exporter, MIG manager) never land there.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any, Optional

import yaml
from pulumi_policy import PolicyConfigSchema, ResourceValidationArgs, Severity, StackValidationArgs

from gpu_platform.decisions.tolerations import tolerates
from gpu_platform.facts import catalog, mig, names
from gpu_platform.policy.common import (
    CHART_DEFAULT_TOLERATIONS, ENVIRONMENT_PROPERTY, K8S_EFFECTS, NODE_GROUP, applies_in, get, gpu_model_of,
    gpu_operator_release, is_gpu_node_group, node_group_label, release_values, resource_policy, stack_environment,
    stack_policy, truthy,
)
from gpu_platform.policy.pools import pool_resources
from gpu_platform.render.sharing import check_mig_parted_config

NFD = "node-feature-discovery"
Finding = Iterator[tuple[str, Optional[str]]]


def mig_config_of(props: Any) -> Optional[str]:
    """The MIG config a node group's nodes select, None when they select none or `all-disabled`."""
    name = _label(props, names.MIG_CONFIG_LABEL)
    return None if name in (None, names.MIG_ALL_DISABLED) else name


def _label(props: Any, key: str) -> Optional[str]:
    """A node label's value, None unless it is text (another program may register any shape there)."""
    labels = get(props, "labels", {})
    value = labels.get(key) if isinstance(labels, Mapping) else None
    return value if isinstance(value, str) else None


def mig_capable(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    if mig_config_of(args.props) is None:
        return
    who = node_group_label(args.name, args.props)
    types = get(args.props, "instanceTypes", [])
    not_capable = [t for t in types if t not in catalog.INSTANCE_TYPES or not catalog.INSTANCE_TYPES[t].gpu_model.mig_capable]
    gpu = gpu_model_of(args.props) if not types else None  # the type is in the launch template: read the GPU label
    if gpu is not None and not gpu.mig_capable:
        not_capable = [gpu.key]
    if not_capable:
        capable = sorted(n for n, it in catalog.INSTANCE_TYPES.items() if it.gpu_model.mig_capable)
        yield (f"{who} selects a MIG layout ({names.MIG_CONFIG_LABEL} label) but {', '.join(not_capable)} have no MIG: "
               f"drop the label from this node group or use a MIG-capable type ({', '.join(capable)}) (stack file: "
               "sharing mode none or time-slicing)")
    images = {i.eks_ami_type: i for i in catalog.NODE_IMAGES.values() if i.eks_ami_type != "CUSTOM"}
    image = images.get(get(args.props, "amiType"))
    if image is not None and not image.operator_mig:
        yield (f"{who} runs {image.key}, where the GPU Operator's MIG manager is not supported: set amiType "
               "AL2023_x86_64_NVIDIA on this node group, or use an Ubuntu image (stack file: ami.type)")


def _mig_file(release: Any) -> tuple[Optional[dict], list[str]]:
    values = release_values(release.props)
    manager = values.get("migManager") or {}
    if not truthy(manager.get("enabled", True)):
        return None, ["the GPU Operator's MIG manager is disabled (migManager.enabled false)"]
    text = ((manager.get("config") or {}).get("data") or {}).get(names.MIG_PARTED_CONFIG_KEY)
    if not text:
        return None, [f"migManager.config.data has no {names.MIG_PARTED_CONFIG_KEY!r} (the only key the MIG manager reads)"]
    problems = check_mig_parted_config(text)
    return (yaml.safe_load(text) if not problems else None), problems


def mig_layouts_valid(args: StackValidationArgs, config: Mapping[str, Any]) -> Finding:
    groups = [(ng, mig_config_of(ng.props)) for ng in pool_resources(args)]
    groups = [(ng, name) for ng, name in groups if name]
    if not groups:
        return
    release = gpu_operator_release(args)
    if release is None:
        if not config.get(EXISTING_OPERATOR):  # the operator runs already: its MIG manager's file is not ours to read
            yield ("node groups select MIG layouts but the stack installs no GPU Operator (nothing applies them): add "
                   "a GpuOperator serving these pools to the program, or, when the cluster already runs the GPU "
                   f"Operator, set `{EXISTING_OPERATOR}: true` in this policy's config"), None
        return
    doc, problems = _mig_file(release)
    for problem in problems:
        yield f"MIG manager config: {problem}", release.urn
    if doc is None:
        return
    configs = doc.get("mig-configs") or {}
    for ng, name in groups:
        who = node_group_label(ng.name, ng.props)
        if name not in configs:
            yield (f"{who} selects MIG config {name!r}, which the MIG manager's file does not define "
                   f"(defined: {', '.join(configs)})", ng.urn)
            continue
        gpu = gpu_model_of(ng.props)
        if gpu is None or not gpu.mig_capable:
            continue  # reported by mig-on-capable-instances
        for item in configs[name]:
            if item.get("mig-enabled"):
                layout = {p: n for p, n in (item.get("mig-devices") or {}).items()}
                misfit = mig.layout_problem(gpu, layout)
                if misfit:
                    yield (f"{who}: MIG config {name!r} does not fit one {gpu.key}: {misfit}; fix the layout in the "
                           "MIG manager's config (stack file: sharing.layout, valid layouts in docs/gpu-operator.md)",
                           ng.urn)


def _device_plugin_key(props: Any, release_values: Mapping[str, Any]) -> Optional[str]:
    label = _label(props, names.DEVICE_PLUGIN_CONFIG_LABEL)
    if label:
        return label
    default = ((release_values.get("devicePlugin") or {}).get("config") or {}).get("default")
    return default if isinstance(default, str) and default else None


def _device_plugin_entries(values: Mapping[str, Any]) -> Optional[dict]:
    """The entries of the device-plugin ConfigMap the release creates; None when it names one made elsewhere
    (`config.create` false), whose keys the stack does not show."""
    config = (values.get("devicePlugin") or {}).get("config") or {}
    if config.get("name") and not truthy(config.get("create", False)):
        return None
    return dict(config.get("data") or {})


def device_plugin_configs_valid(args: StackValidationArgs, config: Mapping[str, Any]) -> Finding:
    """The device plugin takes the ConfigMap entry a node's label names, else `config.default` (NVIDIA/k8s-device-plugin
    README, "Updating Per-Node Configuration With a Node Label"): a name with no entry leaves the node without the
    sharing the pool was built for, which nothing before boot would show."""
    release = gpu_operator_release(args)
    groups = [(ng, get(ng.props, "labels", {}).get(names.DEVICE_PLUGIN_CONFIG_LABEL)) for ng in pool_resources(args)]
    groups = [(ng, key) for ng, key in groups if key]
    if release is None:
        if groups:
            yield ("node groups select device-plugin configs but the stack installs no GPU Operator (nothing "
                   "creates the ConfigMap they name)", None)
        return
    entries = _device_plugin_entries(release_values(release.props))
    if entries is None:
        return
    defined = ", ".join(entries) or "none"
    default = (((release_values(release.props).get("devicePlugin") or {}).get("config")) or {}).get("default")
    if default and default not in entries:
        yield (f"the GPU Operator's devicePlugin.config.default {default!r} is not an entry of its device-plugin "
               f"ConfigMap (defined: {defined})", release.urn)
    for ng, key in groups:
        if key not in entries:
            yield (f"{node_group_label(ng.name, ng.props)} selects device-plugin config {key!r} "
                   f"({names.DEVICE_PLUGIN_CONFIG_LABEL} label), which the GPU Operator's devicePlugin.config.data "
                   f"does not define (defined: {defined}): name one of them or add the entry (stack file: "
                   "sharing.mode and sharing.replicas)", ng.urn)


def time_slicing_replicas(props: Any, release_values: Mapping[str, Any]) -> int:
    """Replicas per GPU the node group's device-plugin config shares out (0: no time-slicing)."""
    key = _device_plugin_key(props, release_values)
    text = (((release_values.get("devicePlugin") or {}).get("config") or {}).get("data") or {}).get(key) if key else None
    return _replicas_in(text) if isinstance(text, str) and text else 0  # cached by text: a text only


@lru_cache(maxsize=64)
def _replicas_in(text: str) -> int:
    """The most replicas a device-plugin config shares a GPU into. Parsed once per config text: every GPU
    pool of a large stack names the same few configs, and several rules read them."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return 0
    sharing = doc.get("sharing") if isinstance(doc, dict) else None
    slicing = sharing.get("timeSlicing") if isinstance(sharing, dict) else None
    resources = slicing.get("resources") if isinstance(slicing, dict) else None
    counts = [r.get("replicas") for r in resources if isinstance(r, dict)] if isinstance(resources, list) else []
    return max((n for n in counts if isinstance(n, int) and not isinstance(n, bool)), default=0)


def time_slicing_allowed(args: StackValidationArgs, config: Mapping[str, Any]) -> Finding:
    release = gpu_operator_release(args)
    if release is None:
        return
    values = release_values(release.props)
    env = stack_environment(args, config)
    in_env = applies_in(env, config.get("environments", []))
    pools = set(config.get("pools", []))
    for ng in pool_resources(args):
        props = ng.props
        if not is_gpu_node_group(props):
            continue
        replicas = time_slicing_replicas(props, values)
        if replicas < 2:
            continue
        labels = get(props, "labels", {})
        pool = labels.get(names.POOL_LABEL, ng.name)
        reasons = ([f"environment {env or 'unknown (held to prod)'} forbids it"] if in_env else []) \
            + (["the pool is critical"] if config.get("criticalPools", True) and labels.get(names.CRITICAL_LABEL) == "true" else []) \
            + ([f"pool {pool} is listed in the policy config"] if pool in pools else [])
        if reasons:
            yield (f"{node_group_label(ng.name, props)} time-slices each GPU {replicas} ways but {' and '.join(reasons)} "
                   "(time-slicing gives no memory isolation): point this node group's "
                   f"{names.DEVICE_PLUGIN_CONFIG_LABEL} label at a device-plugin config without time-slicing (stack "
                   "file: sharing.mode none or mig on this pool)", ng.urn)


def operator_tolerations(args: StackValidationArgs, config: Mapping[str, Any]) -> Finding:
    release = gpu_operator_release(args)
    if release is None:
        return
    values = release_values(release.props)
    given = {
        "daemonsets.tolerations": (values.get("daemonsets") or {}).get("tolerations"),
        f"{NFD}.worker.tolerations": ((values.get(NFD) or {}).get("worker") or {}).get("tolerations"),
    }
    lists: dict[str, list[Any]] = {k: list(CHART_DEFAULT_TOLERATIONS) if v is None else v for k, v in given.items()}
    for ng in pool_resources(args):
        if not is_gpu_node_group(ng.props):
            continue
        for taint in get(ng.props, "taints", []):
            effect = K8S_EFFECTS.get(taint.get("effect"), taint.get("effect"))
            if effect == "PreferNoSchedule":
                continue  # never keeps a pod away
            key, value = taint.get("key", ""), taint.get("value", "")
            for where, tolerations in lists.items():
                if not tolerates(tolerations, key, value, effect):
                    yield (f"{node_group_label(ng.name, ng.props)} is tainted {key}={value}:{effect} but the GPU "
                           f"Operator's {where} do not tolerate it, so its operands never run there: add "
                           f"{{key: {key}, operator: Exists, effect: {effect}}} to {where}", release.urn)


EXISTING_OPERATOR = "existingGpuOperator"
MIG_LAYOUT_SCHEMA = PolicyConfigSchema({
    EXISTING_OPERATOR: {
        "type": "boolean", "default": False,
        "description": "The cluster already runs the NVIDIA GPU Operator, installed outside this stack: MIG pools "
                       "without a GPU Operator in the stack pass (their layouts are checked against their GPUs when "
                       "the pool is built; the running MIG manager's config is not in the stack to read)."},
})

TIME_SLICING_SCHEMA = PolicyConfigSchema({
    "environments": {"type": "array", "items": {"type": "string"}, "default": ["prod"],
                     "description": "Environments where no pool may time-slice GPUs (an unknown environment counts "
                                    "as prod)."},
    "criticalPools": {"type": "boolean", "default": True,
                      "description": "Forbid time-slicing on pools marked critical."},
    "pools": {"type": "array", "items": {"type": "string"}, "default": [],
              "description": "Pool names that must not time-slice."},
    "environment": ENVIRONMENT_PROPERTY,
})

POLICIES = [
    resource_policy(
        "mig-on-capable-instances", "Node groups select MIG layouts only on MIG-capable instances and images.",
        [NODE_GROUP], mig_capable, severity=Severity.HIGH),
    stack_policy(
        "mig-layout-valid", "Every MIG layout a pool selects exists in the MIG manager's config and fits the GPU.",
        mig_layouts_valid, severity=Severity.HIGH, schema=MIG_LAYOUT_SCHEMA),
    stack_policy(
        "device-plugin-config-valid",
        "Every device-plugin config a pool selects, and the default, is an entry of the GPU Operator's ConfigMap.",
        device_plugin_configs_valid, severity=Severity.HIGH),
    stack_policy(
        "time-slicing-forbidden", "GPU time-slicing is refused where the policy config forbids it.",
        time_slicing_allowed, severity=Severity.HIGH, schema=TIME_SLICING_SCHEMA),
    stack_policy(
        "operator-tolerates-gpu-taints", "The GPU Operator tolerates every taint its GPU pools carry.",
        operator_tolerations, severity=Severity.HIGH),
]
