"""The GPU pools the pack's pool rules read: managed node groups, and Karpenter NodePools in node-group terms.

A NodePool becomes a node-group-shaped view (facts.karpenter.node_group_view: instance types and
capacity type from its requirements, `limits.nodes` as max size, template labels, taints in the EKS
spelling), so MIG, time-slicing, toleration, quota-capacity and budget rules hold both provisioners to
the same checks. Values unknown during a preview raise UnknownValueError, as on node groups.
"""
from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pulumi_policy import StackValidationArgs

from gpu_platform.facts.karpenter import node_group_view
from gpu_platform.policy.common import KARPENTER_VIEW, LAUNCH_TEMPLATE, NODE_CLASS, NODE_GROUP, NODE_POOL, get, of_type, plain

GIB = {"Gi": 1, "G": 1000**3 / 1024**3, "Ti": 1024, "T": 1000**4 / 1024**3}


def node_pool_view(resource: Any) -> SimpleNamespace:
    props = {**node_group_view(plain(resource.props)), KARPENTER_VIEW: True}
    return SimpleNamespace(name=resource.name, urn=resource.urn, props=props, resource_type=resource.resource_type)


def with_template_type(resource: Any, templates: dict[str, Any]) -> Any:
    """A node group as it is, or, when it names its instance type in its launch template only (a Capacity Block
    group), a view with that type as its instanceTypes."""
    if get(resource.props, "instanceTypes"):
        return resource
    template = templates.get(get(resource.props, "launchTemplate.name", ""))
    instance_type = get(template.props, "instanceType") if template is not None else None
    if not instance_type:
        return resource
    props = {key: resource.props[key] for key in resource.props}
    props["instanceTypes"] = [instance_type]
    return SimpleNamespace(name=resource.name, urn=resource.urn, props=props, resource_type=resource.resource_type)


def pool_resources(args: StackValidationArgs) -> list[Any]:
    """Node groups (with a launch template's instance type where only it names one), then NodePools as views
    (each with name, urn and props)."""
    templates = {get(t.props, "name", t.name): t for t in of_type(args, LAUNCH_TEMPLATE)}
    return [*(with_template_type(r, templates) for r in of_type(args, NODE_GROUP)),
            *(node_pool_view(r) for r in of_type(args, NODE_POOL))]


def volume_gib(size: Any) -> float:
    """An EC2NodeClass volume size (`200Gi`, `1Ti`, `500G`) in GiB (0 when unreadable)."""
    text = str(size or "")
    for suffix in sorted(GIB, key=len, reverse=True):
        if text.endswith(suffix) and text[: -len(suffix)].isdigit():
            return int(text[: -len(suffix)]) * GIB[suffix]
    return 0.0


def node_class_of(args: StackValidationArgs, node_pool: Any) -> Any:
    """The EC2NodeClass a NodePool's template names (None when the stack has none of that name)."""
    name = get(node_pool.props, "spec.template.spec.nodeClassRef.name")
    return next((c for c in of_type(args, NODE_CLASS) if get(c.props, "metadata.name") == name), None)


def karpenter_disks(args: StackValidationArgs) -> list[tuple[float, int, int]]:
    """(GiB per node, min nodes, max nodes) of every NodePool, from its EC2NodeClass's volumes."""
    out = []
    for pool in of_type(args, NODE_POOL):
        node_class = node_class_of(args, pool)
        volumes = get(node_class.props, "spec.blockDeviceMappings", []) if node_class is not None else []
        gib = sum(volume_gib((m.get("ebs") or {}).get("volumeSize")) for m in volumes)
        out.append((gib, 0, int(get(node_pool_view(pool).props, "scalingConfig.maxSize", 0))))
    return out
