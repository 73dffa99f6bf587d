"""How the lifecycle rules name what to change: after where each pin was set in the program the pack reads.

- Below a `GpuPlatform` (gpu-platform's program from a stack file, or a program's own platform object): the
  platform object's field (`cluster.kubernetesVersion`), decisions/lifecycle.py's default.
- Set by one of the library's components in a program of its own: that component's Python argument
  (`kubernetes_version of Cluster 'gpu'`, `ami.release_version of GpuNodePool 'h100'`).
- On a resource no component of the library made: that resource's own input (`version of
  aws:eks/cluster:Cluster 'gpu'`).
"""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Optional

from pulumi_policy import StackValidationArgs
from pulumi_policy.proxy import UnknownValueError

from gpu_platform.decisions import lifecycle, pinned
from gpu_platform.facts import component_types, names
from gpu_platform.policy.common import get, is_operator_release, of_type
from gpu_platform.policy.pools import node_class_of

AMI = "ami"  # a pool's AMI release (lifecycle's driver verdicts of pools)
PLATFORM = frozenset({component_types.public("GpuPlatform"), *component_types.FORMER["GpuPlatform"]})

# The input of each kind of resource that pins each thing.
INPUTS: Mapping[tuple[str, str], str] = {
    (lifecycle.KUBERNETES, pinned.CLUSTER): "version",
    (lifecycle.KUBERNETES, pinned.NODE_GROUP): "version",
    (lifecycle.OPERATOR, pinned.HELM_RELEASE): "version",
    (lifecycle.DRIVER, pinned.HELM_RELEASE): "values.driver.version",
    (AMI, pinned.NODE_GROUP): "releaseVersion",
    (AMI, pinned.NODE_CLASS): "spec.amiSelectorTerms[].alias",
}
# The library's components and the Python argument with which each sets a pin of its resources.
ARGUMENTS: Mapping[str, Mapping[str, str]] = {
    "Cluster": {lifecycle.KUBERNETES: "kubernetes_version"},
    "GpuNodePool": {lifecycle.KUBERNETES: "kubernetes_version", AMI: "ami.release_version"},
    "KarpenterNodePool": {AMI: "ami.alias"},
    "GpuOperator": {lifecycle.OPERATOR: "chart_version", lifecycle.DRIVER: "driver.version"},
}
COMPONENTS = {token: name for name in ARGUMENTS
              for token in (component_types.public(name), *component_types.FORMER.get(name, ()))}


def _ancestors(resource: Any) -> Iterable[Any]:
    parent = resource.parent
    while parent is not None:
        yield parent
        parent = parent.parent


def setter(resource: Any, pin: str) -> Optional[str]:
    """What set `pin` on `resource`: None below a GpuPlatform (the platform object's field), else the argument
    of the library component nearest above it, else the resource's own input."""
    chain = list(_ancestors(resource))
    if any(a.resource_type in PLATFORM for a in chain):
        return None
    for component in chain:
        name = COMPONENTS.get(component.resource_type)
        if name is not None and pin in ARGUMENTS[name]:
            return f"{ARGUMENTS[name][pin]} of {name} {component.name!r}"
    return f"{INPUTS[(pin, resource.resource_type)]} of {resource.resource_type} {resource.name!r}"


def _named(resources: Iterable[Any], pin: str, default: str) -> str:
    """The setters of `pin` on `resources`, in order; `default` (the stack file's) when a platform set them."""
    found = [setter(r, pin) for r in resources]
    named = list(dict.fromkeys(s for s in found if s is not None))
    return " and ".join(named) if named and None not in found else default


def _value(resource: Any, path: str) -> Any:
    try:
        return get(resource.props, path)
    except UnknownValueError:
        return None


def _kubernetes(args: StackValidationArgs, version: Optional[str]) -> str:
    """Who pins the version the verdicts judge: the clusters of that version, else the node groups (pinned.py)."""
    clusters = [r for r in of_type(args, pinned.CLUSTER) if _value(r, "version")]
    groups = clusters or [r for r in of_type(args, pinned.NODE_GROUP) if _value(r, "version")]
    return _named([r for r in groups if str(_value(r, "version")) == version], lifecycle.KUBERNETES,
                  lifecycle.KUBERNETES_FIELD)


def _pool_setters(args: StackValidationArgs) -> Iterable[tuple[str, Any]]:
    """(pool, the resource pinning its AMI) as pinned.py names pools: a node group's pool label, else its name;
    a Karpenter pool's template label, pinned by its EC2NodeClass."""
    for group in of_type(args, pinned.NODE_GROUP):
        labels = _value(group, "labels") or {}
        yield str(labels.get(names.POOL_LABEL) or _value(group, "nodeGroupName") or "node-group"), group
    for pool in of_type(args, pinned.NODE_POOL):
        label = (_value(pool, "spec.template.metadata.labels") or {}).get(names.POOL_LABEL)
        node_class = node_class_of(args, pool)
        if label and node_class is not None:
            yield str(label), node_class


def fields(args: StackValidationArgs, pins: pinned.Pinned) -> lifecycle.Fields:
    """How the verdicts on `pins` name each field to change in the program `args` holds."""
    operators = [r for r in of_type(args, pinned.HELM_RELEASE) if is_operator_release(r.props)]
    amis: dict[str, list[Any]] = {}
    for pool, resource in _pool_setters(args):
        amis.setdefault(pool, []).append(resource)
    return lifecycle.Fields(
        kubernetes=_kubernetes(args, pins.kubernetes),
        operator=_named(operators, lifecycle.OPERATOR, lifecycle.OPERATOR_FIELD),
        driver=_named(operators, lifecycle.DRIVER, lifecycle.DRIVER_FIELD),
        amis={pool: named for pool, resources in amis.items()
              if (named := _named(resources, AMI, lifecycle.AMI_FIELD)) != lifecycle.AMI_FIELD})
