"""Node groups and their launch templates: safe to keep, safe to scale, safe to run.

- GPU pools carry the `nvidia.com/gpu` NoSchedule taint, so only GPU workloads land on GPU nodes.
- Node groups are protected where config says (prod by default): the engine then refuses to replace or
  delete them; `deleteBeforeReplace` (downtime on every replacement) is forbidden.
- The autoscaler owns `scalingConfig.desiredSize`: the program must ignore it.
- Critical pools (node label `gpu-platform.io/critical=true`) are on-demand (not spot, not a Capacity
  Block, which ends on a date); every instance type, a node group's or its launch template's, is on the
  allow-list.
- Launch templates require IMDSv2 and encrypt every EBS volume they declare.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Iterator, Mapping

from pulumi_policy import PolicyConfigSchema, ResourceValidationArgs, Severity

from gpu_platform.facts import catalog, names
from gpu_platform.policy.common import (
    K8S_EFFECTS, LAUNCH_TEMPLATE, NODE_GROUP, applies_in, environment_phrase, environment_properties, get,
    is_gpu_node_group, node_group_label, resource_environment, resource_policy, truthy,
)

DESIRED_SIZE = "scalingConfig.desiredSize"
DEFAULT_ALLOWED_TYPES = sorted(catalog.INSTANCE_TYPES) + sorted(catalog.SYSTEM_INSTANCE_PRICES)


def gpu_taint(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    if not is_gpu_node_group(args.props):
        return
    taints = get(args.props, "taints", [])
    if not any(t.get("key") == names.GPU_TAINT_KEY and K8S_EFFECTS.get(t.get("effect"), t.get("effect")) == "NoSchedule"
               for t in taints):
        yield (f"{node_group_label(args.name, args.props)} has no {names.GPU_TAINT_KEY} NoSchedule taint: any pod could "
               f"land on its GPU nodes; add the taint {{key: {names.GPU_TAINT_KEY}, value: {names.GPU_TAINT_VALUE}, "
               "effect: NO_SCHEDULE} to this node group (GpuNodePool sets it)")


def protected(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    env = resource_environment(args, config)
    if not applies_in(env, config.get("environments", ["prod"])):
        return
    if not args.opts.protect:
        yield (f"{node_group_label(args.name, args.props)} is not protected {environment_phrase(env)}: a replace or "
               "delete would drain its nodes; set protect=True on this node group (stack file: remove `protect: false` "
               "from the pool; prod protects pools by default)")


def no_delete_before_replace(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    if args.opts.delete_before_replace:
        yield (f"{node_group_label(args.name, args.props)} sets deleteBeforeReplace: a replacement would remove every "
               "node before new ones exist; drop delete_before_replace from this node group (create-before-destroy is "
               "the safe default)")


def desired_size_ignored(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    if get(args.props, "scalingConfig") is None:
        return
    ignored = set(args.opts.ignore_changes or [])
    if DESIRED_SIZE not in ignored and "scalingConfig" not in ignored:
        yield (f"{node_group_label(args.name, args.props)} does not ignore {DESIRED_SIZE}: every `pulumi up` would reset "
               f"the size the autoscaler chose; add ignore_changes=[\"{DESIRED_SIZE}\"]")


# Why a critical pool may not run on each capacity type but on-demand (an ODCR's reserved capacity is on-demand).
NOT_FOR_CRITICAL = {"SPOT": "which AWS can reclaim at any time",
                    "CAPACITY_BLOCK": "which ends on a date (its nodes are drained 40 minutes before)"}


def critical_on_demand(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    if get(args.props, "labels", {}).get(names.CRITICAL_LABEL) != "true":
        return
    capacity = get(args.props, "capacityType", "ON_DEMAND")
    if capacity != "ON_DEMAND":
        why = NOT_FOR_CRITICAL.get(capacity, "which may not be on-demand")
        yield (f"{node_group_label(args.name, args.props)} is critical but uses {capacity} capacity, {why}: set "
               f"capacityType ON_DEMAND on this node group (an On-Demand Capacity Reservation may hold it), or drop "
               f"its {names.CRITICAL_LABEL} label (stack file: capacityType: on-demand, or drop critical)")


def instance_types_allowed(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    """A node group's instance types, or the one a launch template names (a Capacity Block group's)."""
    allowed = set(config.get("allowedInstanceTypes") or DEFAULT_ALLOWED_TYPES)
    if getattr(args, "resource_type", None) == LAUNCH_TEMPLATE:
        who, types = f"launch template {args.name!r}", [t for t in [get(args.props, "instanceType")] if t]
    else:
        who, types = node_group_label(args.name, args.props), get(args.props, "instanceTypes", [])
    refused = [t for t in types if t not in allowed]
    if refused:
        yield (f"{who} uses {', '.join(refused)}, not on the allowed list: pick from "
               f"{', '.join(sorted(allowed))} or extend allowedInstanceTypes in the policy config")


def imdsv2_findings(who: str, tokens: Any) -> Iterator[str]:
    """Launch templates and EC2NodeClasses alike: instance metadata only with a session token."""
    if tokens != "required":
        yield (f"{who} does not require IMDSv2 (metadataOptions.httpTokens is {tokens!r}): pods could read the node "
               "role's credentials without a session token; set httpTokens to \"required\"")


def encryption_findings(who: str, mappings: Any, undeclared: str) -> Iterator[str]:
    """Every EBS volume of a launch template or EC2NodeClass encrypted; `undeclared`: who decides when none is."""
    volumes = [m for m in mappings or [] if m.get("ebs") is not None]
    if not volumes:
        yield (f"{who} declares no EBS volume, so {undeclared}: declare the volumes in blockDeviceMappings with "
               "ebs.encrypted true")
    for m in volumes:
        if not truthy(m["ebs"].get("encrypted")):
            yield f"{who} volume {m.get('deviceName', '?')} is not encrypted: set ebs.encrypted to true"


def imdsv2(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    yield from imdsv2_findings(f"launch template {args.name!r}", get(args.props, "metadataOptions.httpTokens"))


def volumes_encrypted(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    yield from encryption_findings(f"launch template {args.name!r}", get(args.props, "blockDeviceMappings", []),
                                   "the root volume's encryption depends on the account default")


PROTECT_SCHEMA = PolicyConfigSchema({
    **environment_properties("Environments where every node group must be protected."),
})
INSTANCE_SCHEMA = PolicyConfigSchema({
    "allowedInstanceTypes": {"type": "array", "items": {"type": "string"}, "default": DEFAULT_ALLOWED_TYPES,
                             "description": "Instance types node groups may use (default: the catalog's)."},
})

POLICIES = [
    resource_policy(
        "gpu-pool-tainted", f"GPU node groups carry the {names.GPU_TAINT_KEY} NoSchedule taint.",
        [NODE_GROUP], gpu_taint, severity=Severity.HIGH),
    resource_policy(
        "node-group-protected", "Node groups are protected (mandatory in the configured environments).",
        [NODE_GROUP], protected, severity=Severity.CRITICAL, schema=PROTECT_SCHEMA,
        remediation="Set protect=True on node groups in the configured environments (stack file: remove "
                    "`protect: false` from nodePools[])."),
    resource_policy(
        "node-group-no-delete-before-replace", "Node groups never delete before their replacement exists.",
        [NODE_GROUP], no_delete_before_replace, severity=Severity.HIGH),
    resource_policy(
        "node-group-ignores-desired-size", "Node groups leave scalingConfig.desiredSize to the autoscaler.",
        [NODE_GROUP], desired_size_ignored, severity=Severity.MEDIUM),
    resource_policy(
        "critical-pool-on-demand", "Pools marked critical run on on-demand capacity.",
        [NODE_GROUP], critical_on_demand, severity=Severity.HIGH),
    resource_policy(
        "instance-types-allowed", "Node groups (and the launch templates naming their type) use only allowed "
        "instance types.", [NODE_GROUP, LAUNCH_TEMPLATE], instance_types_allowed, severity=Severity.MEDIUM,
        schema=INSTANCE_SCHEMA),
    resource_policy(
        "launch-template-imdsv2", "Launch templates require IMDSv2 (httpTokens required).",
        [LAUNCH_TEMPLATE], imdsv2, severity=Severity.HIGH),
    resource_policy(
        "launch-template-volumes-encrypted", "Launch templates declare their EBS volumes encrypted.",
        [LAUNCH_TEMPLATE], volumes_encrypted, severity=Severity.HIGH),
]
