"""Karpenter pools (NodePools and EC2NodeClasses): the same guarantees as managed node groups.

- EC2NodeClasses pin their image (an exact alias such as `al2023@v20251120`, or AMI ids; never `latest`,
  never a name, tag or SSM selector that follows new AMIs), require IMDSv2 and encrypt every volume.
- GPU NodePools carry the `nvidia.com/gpu` NoSchedule taint, name their instance types (on the
  allow-list), and critical ones run on demand; MIG only on MIG-capable instances.
- In the configured environments (default prod): NodePools and EC2NodeClasses are protected (deleting a
  NodePool terminates its nodes), and a GPU NodePool never disrupts a node running pods outside its
  disruption window: only empty nodes are consolidated, nothing expires, and for Drifted and
  Underutilized its budgets allow zero nodes at every minute outside the window.
- The driver has one owner: no operator driver on NVIDIA AMI families, no driverless custom image.
The pool rules on stacks (MIG layouts, time-slicing, tolerations, quotas, budget) read NodePools too
(policy.pools).
"""
from __future__ import annotations

import re
from types import SimpleNamespace
from typing import Any, Optional
from collections.abc import Iterator, Mapping

from pulumi_policy import PolicyConfigSchema, ResourceValidationArgs, Severity, StackValidationArgs

from gpu_platform.facts import catalog, names
from gpu_platform.facts.karpenter import POD_EVICTING_REASONS
from gpu_platform.facts.karpenter_window import WindowError, active, describe_minute, first_open_minute
from gpu_platform.policy.common import (
    ENVIRONMENT_PROPERTY, NODE_CLASS, NODE_POOL, applies_in, environment_phrase, get, gpu_operator_release,
    is_gpu_node_group, node_group_label, of_type, pool_environment, release_values, resource_policy, stack_policy,
)
from gpu_platform.policy.driver import operator_driver_enabled
from gpu_platform.policy.node_groups import (
    INSTANCE_SCHEMA, critical_on_demand, encryption_findings, imdsv2_findings, instance_types_allowed,
)
from gpu_platform.policy.pools import node_class_of, node_pool_view
from gpu_platform.policy.sharing import mig_capable

Finding = Iterator[tuple[str, Optional[str]]]
AMI_ID = re.compile(r"^ami-[0-9a-z]+$")
ALIASES = {i.alias_family: i for i in catalog.KARPENTER_IMAGES.values() if i.alias_family}
AMI_OWNED_FAMILIES = frozenset(i.ami_family for i in catalog.KARPENTER_IMAGES.values() if i.alias_family)
PROD_CONSOLIDATION, PROD_EXPIRY = "WhenEmpty", "Never"


def _view(args: ResourceValidationArgs) -> Any:
    return SimpleNamespace(name=args.name, props=node_pool_view(args).props)


def _class_name(args: ResourceValidationArgs) -> str:
    return f"EC2NodeClass {get(args.props, 'metadata.name', args.name)!r}"


# --- EC2NodeClass ---

def ami_pinned(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    who = _class_name(args)
    terms = get(args.props, "spec.amiSelectorTerms", [])
    if not terms:
        yield f"{who} selects no AMI: pin one with an exact alias (e.g. al2023@v20251120) or an AMI id"
    for term in terms:
        alias, other = term.get("alias"), sorted(k for k in term if k not in ("alias", "id"))
        if other:
            yield (f"{who} selects AMIs by {', '.join(other)}, which matches whatever AMI is newest at launch and drifts "
                   "every node when one appears: pin an exact alias or AMI ids")
        elif alias is not None:
            family, _, version = str(alias).partition("@")
            image = ALIASES.get(family)
            if image is None:
                yield f"{who} alias {alias!r} is not a GPU image family the platform supports ({', '.join(ALIASES)})"
            elif not re.fullmatch(image.alias_version, version):
                yield (f"{who} alias {alias!r} is not pinned: `{family}@latest` (or any inexact version) drifts every "
                       f"node whenever AWS publishes an AMI; pin an exact release such as {image.alias_example}")
        elif not AMI_ID.match(str(term.get("id", ""))):
            yield f"{who} AMI id {term.get('id')!r} is not an AMI id (ami-...)"


def node_class_imdsv2(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    yield from imdsv2_findings(_class_name(args), get(args.props, "spec.metadataOptions.httpTokens"))


def node_class_volumes_encrypted(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    yield from encryption_findings(_class_name(args), get(args.props, "spec.blockDeviceMappings", []),
                                   "Karpenter's defaults decide them")


# --- NodePool ---

def gpu_pool_tainted(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    view = _view(args)
    if not is_gpu_node_group(view.props):
        return
    taints = get(args.props, "spec.template.spec.taints", [])
    if not any(t.get("key") == names.GPU_TAINT_KEY and t.get("effect") == "NoSchedule" for t in taints):
        yield (f"{node_group_label(args.name, view.props)} has no {names.GPU_TAINT_KEY} NoSchedule taint: Karpenter would "
               "launch GPU nodes for any pending pod and any pod could land there; add {key: nvidia.com/gpu, value: "
               "present, effect: NoSchedule} to this NodePool's spec.template.spec.taints (KarpenterNodePool sets it)")


def node_pool_critical_on_demand(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    yield from critical_on_demand(_view(args), config)


def node_pool_instance_types(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    view = _view(args)
    if not get(view.props, "instanceTypes") and is_gpu_node_group(view.props):
        yield (f"{node_group_label(args.name, view.props)} names no instance types (no node.kubernetes.io/instance-type In "
               "requirement), so Karpenter may launch any type: add a node.kubernetes.io/instance-type In requirement "
               "listing them (stack file: instanceTypes)")
    yield from instance_types_allowed(view, config)


def node_pool_mig_capable(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    yield from mig_capable(_view(args), config)


# --- stack rules ---

def _environment(args: StackValidationArgs, config: Mapping[str, Any], resource: Any) -> Optional[str]:
    """A NodePool's or EC2NodeClass's environment: its pool's own (its EC2NodeClass's tag), else the stack's."""
    node_class = resource if resource.resource_type == NODE_CLASS else node_class_of(args, resource)
    return pool_environment(args, config, node_class)


def pools_protected(args: StackValidationArgs, config: Mapping[str, Any]) -> Finding:
    for r in [*of_type(args, NODE_POOL), *of_type(args, NODE_CLASS)]:
        env = _environment(args, config, r)
        if not r.opts.protect and applies_in(env, config.get("environments", ["prod"])):
            kind = "NodePool" if r.resource_type == NODE_POOL else "EC2NodeClass"
            yield (f"{kind} {r.name!r} is not protected {environment_phrase(env)}: deleting or replacing it makes "
                   f"Karpenter drain and terminate the pool's nodes; set protect=True on this {kind} (stack file: "
                   "remove `protect: false` from the pool)", r.urn)


def _window(config: Mapping[str, Any], props: Any) -> tuple[Optional[bytearray], str]:
    """The disruption window (config first, else the NodePool's annotations) as minutes, and how to name it."""
    given = config.get("disruptionWindow") or {}
    annotations = get(props, "metadata.annotations", {})
    schedule = given.get("schedule") or annotations.get(names.DISRUPTION_WINDOW_SCHEDULE_ANNOTATION)
    duration = given.get("duration") or annotations.get(names.DISRUPTION_WINDOW_DURATION_ANNOTATION)
    if not schedule or not duration:
        return None, ""
    return active(str(schedule), str(duration)), f"{schedule} for {duration}"


def disruption_in_window(args: StackValidationArgs, config: Mapping[str, Any]) -> Finding:
    for pool in of_type(args, NODE_POOL):
        view = node_pool_view(pool)
        if not is_gpu_node_group(view.props) or not applies_in(_environment(args, config, pool),
                                                               config.get("environments", ["prod"])):
            continue
        who = node_group_label(pool.name, view.props)
        yield from ((f"{who} {problem}", pool.urn) for problem in _disruption_problems(config, pool.props))


def _disruption_problems(config: Mapping[str, Any], props: Any) -> Iterator[str]:
    disruption = get(props, "spec.disruption", {})
    policy = disruption.get("consolidationPolicy", "WhenEmptyOrUnderutilized")
    if policy != PROD_CONSOLIDATION:
        yield (f"consolidates {policy} nodes, which evicts running GPU pods to save money: set "
               f"spec.disruption.consolidationPolicy {PROD_CONSOLIDATION} (stack file: karpenter.consolidationPolicy)")
    expiry = get(props, "spec.template.spec.expireAfter", "720h")
    if expiry != PROD_EXPIRY:
        yield (f"expires nodes after {expiry}; expiry ignores disruption budgets, so nodes would be drained at any time: "
               f"set spec.template.spec.expireAfter {PROD_EXPIRY} (stack file: karpenter.expireAfter)")
    try:
        window, shown = _window(config, props)
    except WindowError as err:
        yield f"has a disruption window Karpenter cannot keep to: {err}"
        return
    if window is None:
        yield ("declares no disruption window: annotate the NodePool with "
               f"{names.DISRUPTION_WINDOW_SCHEDULE_ANNOTATION} and -duration, or set disruptionWindow in the policy "
               "config (stack file: karpenter.disruptionWindow)")
        return
    budgets = disruption.get("budgets") or [{"nodes": "10%"}]  # Karpenter's default budget when none is given
    for reason in POD_EVICTING_REASONS:
        minute = first_open_minute(budgets, window, reason)
        if minute is not None:
            yield (f"allows voluntary disruption ({reason}) outside its window ({shown}), e.g. at {describe_minute(minute)}: "
                   "set spec.disruption.budgets to allow nodes: \"0\" at every minute outside the window (stack file: "
                   "karpenter.disruptionWindow writes them)")


def driver_consistent(args: StackValidationArgs, config: Mapping[str, Any]) -> Finding:
    release = gpu_operator_release(args)
    if release is None:
        return
    operator_driver = operator_driver_enabled(release_values(release.props, ("driver",)))
    for pool in of_type(args, NODE_POOL):
        view = node_pool_view(pool)
        node_class = node_class_of(args, pool)
        if node_class is None or not is_gpu_node_group(view.props):
            continue
        aliases = [str(t.get("alias")).split("@")[0] for t in get(node_class.props, "spec.amiSelectorTerms", []) if t.get("alias")]
        family = get(node_class.props, "spec.amiFamily") or (ALIASES[aliases[0]].ami_family if aliases and aliases[0] in ALIASES else None)
        who = node_group_label(pool.name, view.props)
        driver_off = get(view.props, "labels", {}).get(names.gpu_deploy_label("driver")) == "false"
        if operator_driver and family in AMI_OWNED_FAMILIES and not driver_off:
            yield (f"{who} runs {family} images, which ship their own NVIDIA driver, but the GPU Operator also installs "
                   f"one (values driver.enabled): set driver.enabled false in the values of operator release "
                   f"{release.name!r} (stack file: gpuOperator.driver.source ami), or use Ubuntu images", pool.urn)
        if not operator_driver and family == "Custom":
            yield (f"{who} runs a custom (Ubuntu) image, which has no NVIDIA driver, and the GPU Operator's driver is "
                   "disabled: enable the driver with a pinned driver.version in the values of operator release "
                   f"{release.name!r} (stack file: gpuOperator.driver.source operator), or use AL2023 images", pool.urn)


ENVIRONMENTS_PROPERTY = {"type": "array", "items": {"type": "string"}, "default": ["prod"],
                "description": "Environments where the rule applies (an unknown environment counts as prod)."}
PROTECT_SCHEMA = PolicyConfigSchema({"environments": ENVIRONMENTS_PROPERTY, "environment": ENVIRONMENT_PROPERTY})
WINDOW_SCHEMA = PolicyConfigSchema({
    "environments": ENVIRONMENTS_PROPERTY,
    "environment": ENVIRONMENT_PROPERTY,
    "disruptionWindow": {"type": "object", "properties": {"schedule": {"type": "string"}, "duration": {"type": "string"}},
                         "description": "The window (cron schedule, UTC, and duration) every GPU NodePool must keep to; "
                                        "default: the window each NodePool declares in its annotations."},
})

POLICIES = [
    resource_policy("karpenter-ami-pinned", "EC2NodeClasses pin their AMI by an exact alias or ids (never latest).",
                    [NODE_CLASS], ami_pinned, severity=Severity.HIGH,
                    remediation="Select the AMI by an exact alias (al2023@vYYYYMMDD) or AMI ids (stack file: ami.alias "
                                "or ami.imageId)."),
    resource_policy("karpenter-node-class-imdsv2", "EC2NodeClasses require IMDSv2 (httpTokens required).",
                    [NODE_CLASS], node_class_imdsv2, severity=Severity.HIGH),
    resource_policy("karpenter-node-class-volumes-encrypted", "EC2NodeClasses declare their EBS volumes encrypted.",
                    [NODE_CLASS], node_class_volumes_encrypted, severity=Severity.HIGH),
    resource_policy("karpenter-gpu-pool-tainted", f"GPU NodePools carry the {names.GPU_TAINT_KEY} NoSchedule taint.",
                    [NODE_POOL], gpu_pool_tainted, severity=Severity.HIGH),
    resource_policy("karpenter-critical-pool-on-demand", "NodePools marked critical launch on-demand capacity only.",
                    [NODE_POOL], node_pool_critical_on_demand, severity=Severity.HIGH),
    resource_policy("karpenter-instance-types-allowed", "GPU NodePools name their instance types, all on the allowed list.",
                    [NODE_POOL], node_pool_instance_types, severity=Severity.MEDIUM, schema=INSTANCE_SCHEMA),
    resource_policy("karpenter-mig-on-capable-instances", "NodePools select MIG layouts only on MIG-capable instances.",
                    [NODE_POOL], node_pool_mig_capable, severity=Severity.HIGH),
    stack_policy("karpenter-pool-protected", "NodePools and EC2NodeClasses are protected (configured environments).",
                 pools_protected, severity=Severity.CRITICAL, schema=PROTECT_SCHEMA),
    stack_policy("karpenter-disruption-window",
                 "GPU NodePools disrupt no node running pods outside their window (configured environments).",
                 disruption_in_window, severity=Severity.CRITICAL, schema=WINDOW_SCHEMA,
                 remediation="Declare a disruption window with zero-node budgets outside it, consolidationPolicy "
                             "WhenEmpty and expireAfter Never (stack file: karpenter.disruptionWindow)."),
    stack_policy("karpenter-driver-ami-consistency",
                 "Exactly one owner per GPU driver on Karpenter pools: no operator driver on NVIDIA AMI families.",
                 driver_consistent, severity=Severity.CRITICAL),
]
