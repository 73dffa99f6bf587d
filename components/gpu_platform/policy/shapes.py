"""The shape of every property the pack reads, per resource type, and the view of a resource its rules see.

Any program may register these types, with any JSON at any property: a Helm release whose `values.driver`
is a bool, a node group whose labels are a list, a ClusterQueue with a null resource group. A rule that
raised on such a shape would fail the user's whole `pulumi preview`, so rules never see it: `view` gives
them the resource with each value of the wrong shape taken out, as if it were unset, and the list of what
was taken out. The rules judge what is left; the advisory `readable-properties` policy names each
property taken out (policy/readable.py). Values of the right shape are passed on unchanged (the
replacement guard compares them with the lock), and values unknown during a preview stay unknown.

Shapes: a Kind (string, number, boolean, scalar), a dict of named keys (an object; keys not named are
passed on unchecked), MapOf (an object of any keys), ListOf, or None (anything). Shapes follow the
providers' schemas (pulumi-aws `aws:eks/nodeGroup:NodeGroup`, `aws:ec2/launchTemplate:LaunchTemplate`),
the Kubernetes API and the CRDs of Karpenter v1 and Kueue v1beta2, and the GPU Operator chart's values.yaml.
"""
from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional, Union
from collections.abc import Callable

from pulumi_policy import EnforcementLevel, ReportViolation, ResourceValidationArgs, Severity
from pulumi_policy.proxy import _DictProxy, _ListProxy, _is_unknown, unknown_checking_proxy

from gpu_platform.policy import resource_types as c

UNREADABLE_PREFIX = "could not read"
INTEGER_TEXT = re.compile(r"^-?\d{1,18}$")  # numbers some providers send as strings, read by int()


@dataclass(frozen=True)
class Kind:
    name: str  # how messages call it ("a string")
    test: Callable[[Any], bool]


def _is_number(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    return isinstance(v, (int, float)) or (isinstance(v, str) and bool(INTEGER_TEXT.match(v)))


STR = Kind("a string", lambda v: isinstance(v, str))
NUM = Kind("a number", _is_number)
BOOL = Kind("a boolean", lambda v: isinstance(v, bool) or (isinstance(v, str) and v.lower() in ("true", "false")))
SCALAR = Kind("a string, number or boolean", lambda v: isinstance(v, (str, int, float, bool)))
QUANTITY = Kind("a quantity (a string or number)", lambda v: isinstance(v, str) or _is_number(v))


@dataclass(frozen=True)
class MapOf:
    values: "Shape"


@dataclass(frozen=True)
class ListOf:
    items: "Shape"


Shape = Union[Kind, dict, MapOf, ListOf, None]


@dataclass(frozen=True)
class Unreadable:
    path: str  # where in the inputs, e.g. `values.driver` or `taints[1]`
    found: str  # what is there ("a bool")
    expected: str  # what the pack reads there ("an object")


# --- shapes shared by several types ---

LABELS = MapOf(STR)
METADATA = {"name": STR, "namespace": STR, "labels": LABELS, "annotations": LABELS}
EKS_TAINT = {"key": STR, "value": STR, "effect": STR}
K8S_TAINT = {"key": STR, "value": STR, "effect": STR}
TOLERATION = {"key": STR, "operator": STR, "value": STR, "effect": STR, "tolerationSeconds": NUM}
REQUIREMENT = {"key": STR, "operator": STR, "values": ListOf(STR), "minValues": NUM}
SELECTOR = {"matchLabels": LABELS, "matchExpressions": ListOf(REQUIREMENT)}
EBS = {"volumeSize": NUM, "volumeType": STR, "encrypted": BOOL, "deleteOnTermination": BOOL, "iops": NUM,
       "throughput": NUM, "kmsKeyId": STR, "snapshotId": STR}
BLOCK_DEVICE = {"deviceName": STR, "ebs": EBS}
KARPENTER_EBS = {**EBS, "volumeSize": QUANTITY}  # a Kubernetes quantity there ("200Gi")
CONFIG_WITH_DATA = {"create": BOOL, "name": STR, "default": STR, "data": MapOf(STR)}

OPERATOR_VALUES = {
    "driver": {"enabled": BOOL, "version": SCALAR, "repository": STR, "image": STR},
    "toolkit": {"enabled": BOOL},
    "mig": {"strategy": STR},
    "devicePlugin": {"enabled": BOOL, "config": CONFIG_WITH_DATA},
    "migManager": {"enabled": BOOL, "config": CONFIG_WITH_DATA},
    "daemonsets": {"tolerations": ListOf(TOLERATION)},
    "node-feature-discovery": {"worker": {"tolerations": ListOf(TOLERATION)}},
    "dcgmExporter": {"enabled": BOOL},
}

SHAPES: dict[str, dict[str, Shape]] = {
    c.NODE_GROUP: {
        "labels": LABELS, "taints": ListOf(EKS_TAINT), "instanceTypes": ListOf(STR), "amiType": STR,
        "capacityType": STR, "releaseVersion": STR, "version": STR, "diskSize": NUM, "nodeGroupName": STR,
        "clusterName": STR, "nodeRoleArn": STR, "subnetIds": ListOf(STR),
        "launchTemplate": {"name": STR, "id": STR, "version": STR},
        "scalingConfig": {"minSize": NUM, "maxSize": NUM, "desiredSize": NUM},
        "updateConfig": {"maxUnavailable": NUM, "maxUnavailablePercentage": NUM},
        "nodeRepairConfig": {"enabled": BOOL}, "tags": LABELS,
    },
    c.LAUNCH_TEMPLATE: {
        "name": STR, "imageId": STR, "instanceType": STR, "userData": STR, "updateDefaultVersion": BOOL,
        "blockDeviceMappings": ListOf(BLOCK_DEVICE),
        "metadataOptions": {"httpTokens": STR, "httpEndpoint": STR, "httpPutResponseHopLimit": NUM},
        "instanceMarketOptions": {"marketType": STR},
        "capacityReservationSpecification": {
            "capacityReservationPreference": STR,
            "capacityReservationTarget": {"capacityReservationId": STR, "capacityReservationResourceGroupArn": STR}},
        "placement": {"groupName": STR, "availabilityZone": STR},
        "networkInterfaces": ListOf({"interfaceType": STR, "networkCardIndex": NUM, "deviceIndex": NUM,
                                     "securityGroups": ListOf(STR)}),
        "vpcSecurityGroupIds": ListOf(STR),
        "tagSpecifications": ListOf({"resourceType": STR, "tags": LABELS}),
    },
    c.HELM_RELEASE: {"chart": STR, "version": STR, "name": STR, "namespace": STR,
                     "repositoryOpts": {"repo": STR}, "values": OPERATOR_VALUES},
    c.ADDON: {"addonName": STR, "addonVersion": STR, "clusterName": STR},
    c.FILE_SYSTEM: {"throughputMode": STR, "performanceMode": STR, "encrypted": BOOL},
    c.LUSTRE: {"deploymentType": STR, "storageCapacity": NUM, "perUnitStorageThroughput": NUM},
    c.CLUSTER: {"version": STR, "name": STR,
                "vpcConfig": {"endpointPublicAccess": BOOL, "endpointPrivateAccess": BOOL, "publicAccessCidrs": ListOf(STR)}},
    c.NAMESPACE: {"metadata": METADATA},
    c.RESOURCE_QUOTA: {"metadata": METADATA, "spec": {"hard": MapOf(QUANTITY)}},
    c.NODE_POOL: {"metadata": METADATA, "spec": {
        "template": {"metadata": {"labels": LABELS, "annotations": LABELS}, "spec": {
            "taints": ListOf(K8S_TAINT), "startupTaints": ListOf(K8S_TAINT), "requirements": ListOf(REQUIREMENT),
            "nodeClassRef": {"name": STR, "kind": STR, "group": STR}, "expireAfter": STR,
            "terminationGracePeriod": STR}},
        "disruption": {"consolidationPolicy": STR, "consolidateAfter": STR,
                       "budgets": ListOf({"nodes": STR, "schedule": STR, "duration": STR, "reasons": ListOf(STR)})},
        "limits": MapOf(QUANTITY), "weight": NUM}},
    c.NODE_CLASS: {"metadata": METADATA, "spec": {
        "amiFamily": STR, "amiSelectorTerms": ListOf({"alias": STR, "id": STR, "name": STR, "owner": STR, "tags": LABELS}),
        "blockDeviceMappings": ListOf({"deviceName": STR, "rootVolume": BOOL, "ebs": KARPENTER_EBS}),
        "metadataOptions": {"httpTokens": STR, "httpEndpoint": STR, "httpPutResponseHopLimit": NUM},
        "capacityReservationSelectorTerms": ListOf({"id": STR, "ownerID": STR, "tags": LABELS}),
        "userData": STR, "tags": LABELS, "role": STR, "instanceProfile": STR}},
}
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"
SHAPES.update({
    f"{KUEUE}ClusterQueue": {"metadata": METADATA, "spec": {
        "cohortName": STR, "cohort": STR, "namespaceSelector": SELECTOR,
        "resourceGroups": ListOf({"coveredResources": ListOf(STR), "flavors": ListOf({"name": STR, "resources": ListOf(
            {"name": STR, "nominalQuota": QUANTITY, "borrowingLimit": QUANTITY, "lendingLimit": QUANTITY})})})}},
    f"{KUEUE}LocalQueue": {"metadata": METADATA, "spec": {"clusterQueue": STR}},
    f"{KUEUE}Cohort": {"metadata": METADATA, "spec": {"parentName": STR}},
    f"{KUEUE}ResourceFlavor": {"metadata": METADATA, "spec": {"nodeLabels": LABELS, "nodeTaints": ListOf(K8S_TAINT),
                                                             "tolerations": ListOf(TOLERATION)}},
    "kubernetes:core/v1:ConfigMap": {"metadata": METADATA, "data": MapOf(STR)},
})


# --- the view ---

def _raw(value: Any) -> Any:
    """The JSON under the SDK's unknown-checking proxy, unknown sentinels kept (nothing raises)."""
    if isinstance(value, (_DictProxy, _ListProxy)):
        value = value["__target"]
    if isinstance(value, Mapping):
        return {k: _raw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_raw(v) for v in value]
    return value


_DROP = object()


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, Mapping) else type(value).__name__


def expected_of(shape: Shape) -> str:
    if isinstance(shape, Kind):
        return shape.name
    if isinstance(shape, ListOf):
        return "a list"
    return "an object"


def _check(value: Any, shape: Shape, path: str, out: list[Unreadable]) -> Any:
    """`value` with what breaks `shape` taken out (noted in `out`). Only declared paths are walked: what
    the pack does not read is passed on as it is, still behind the SDK's proxy."""
    if shape is None or _is_unknown(value):
        return value
    if isinstance(value, (_DictProxy, _ListProxy)):
        value = value["__target"]
    if value is None:  # an unset object stays unset; a null list item or scalar is read as nothing there
        if isinstance(shape, (dict, MapOf, ListOf)) and not path.endswith("]"):
            return value
        out.append(Unreadable(path, "null", expected_of(shape)))
        return _DROP
    if isinstance(shape, Kind):
        ok = shape.test(value)
    elif isinstance(shape, ListOf):
        ok = isinstance(value, list)
    else:
        ok = isinstance(value, Mapping) and all(isinstance(k, str) for k in value)
    if not ok:
        out.append(Unreadable(path, kind_of(value), expected_of(shape)))
        return _DROP
    if isinstance(shape, ListOf):
        items = (_check(v, shape.items, f"{path}[{i}]", out) for i, v in enumerate(value))
        return [v for v in items if v is not _DROP]
    if isinstance(shape, MapOf):
        pairs = ((k, _check(v, shape.values, f"{path}.{k}", out)) for k, v in value.items())
        return {k: v for k, v in pairs if v is not _DROP}
    if isinstance(shape, dict):
        pairs = ((k, _check(v, shape[k], f"{path}.{k}" if path else k, out) if k in shape else v)
                 for k, v in value.items())
        return {k: v for k, v in pairs if v is not _DROP}
    return value


def readable(resource_type: str, props: Any) -> tuple[Any, list[Unreadable]]:
    """`props` (the engine's proxy) as the rules may read it, and what was taken out. Cached per object:
    every policy reads the same resource."""
    shape = SHAPES.get(resource_type)
    if shape is None:
        return props, []
    key = (id(props), resource_type)
    hit = _CACHE.get(key)
    if hit is not None and hit[0] is props:
        return hit[1], hit[2]
    found: list[Unreadable] = []
    checked = _check(props, shape, "", found)
    view = unknown_checking_proxy(_raw(checked) if checked is not _DROP else {}) if found else props
    _CACHE[key] = (props, view, found)
    if len(_CACHE) > CACHE_SIZE:
        _CACHE.popitem(last=False)
    return view, found


CACHE_SIZE = 4096
_CACHE: "OrderedDict[tuple[int, str], tuple[Any, Any, list[Unreadable]]]" = OrderedDict()


def message(name: str, resource_type: str, item: Unreadable) -> str:
    return (f"{UNREADABLE_PREFIX} {item.path} of {resource_type} {name!r}: it is {item.found} where the pack "
            f"reads {item.expected}; the pack's rules judged this resource as if {item.path} were unset. Give it "
            f"{item.expected} (see the resource's API reference) for the rules to check it.")


def reads(resource_type: Optional[str]) -> bool:
    return resource_type in SHAPES


# --- the advisory naming what the rules could not read ---

def _report_unreadable(args: ResourceValidationArgs, report: ReportViolation) -> None:
    for item in readable(args.resource_type, args.props)[1]:
        report(message(args.name, args.resource_type, item), None)


def _readable_properties() -> c.TypedResourcePolicy:
    policy = c.TypedResourcePolicy(
        "readable-properties",
        "Names each property of a resource the pack reads whose value has a shape the rules cannot read (a bool "
        "where an object is read, a list where a map is read); the rules judge the rest of the resource.",
        _report_unreadable, enforcement_level=EnforcementLevel.ADVISORY, severity=Severity.LOW,
        remediation_steps="Give the property the shape its API reference gives it.")
    policy.resource_types = frozenset(SHAPES)  # a type without declared shapes has nothing to name
    return policy


POLICIES = [_readable_properties()]
