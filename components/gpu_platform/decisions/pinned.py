"""What a stack pins, read from the resources its program registers: Kubernetes version, GPU Operator chart
and driver, AMI releases of the GPU node groups (and AMI aliases of Karpenter pools), EKS add-ons and the
Cluster Autoscaler image.

One reading for the plan's lifecycle section, the lifecycle policies and `gpu-platform upgrade-check`, so
the three never disagree about what is deployed. Input: (resource type, inputs as sent to the engine,
camelCase) pairs, as plain values.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional
from collections.abc import Iterable, Mapping

from gpu_platform.facts import catalog, names
from gpu_platform.facts.recognise import GPU_AMI_TYPES, is_gpu_instance_type, is_gpu_operator_chart, node_group_instance_types

CLUSTER = "aws:eks/cluster:Cluster"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
ADDON = "aws:eks/addon:Addon"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
TYPES = (CLUSTER, NODE_GROUP, ADDON, HELM_RELEASE, NODE_POOL, NODE_CLASS, LAUNCH_TEMPLATE)  # the only types read here
# What is read of each type (policies read these keys one by one: other inputs may be unknown in a preview).
INPUT_KEYS: Mapping[str, tuple[str, ...]] = {
    CLUSTER: ("version",),
    NODE_GROUP: ("version", "releaseVersion", "amiType", "instanceTypes", "labels", "nodeGroupName",
                 "launchTemplate.name"),
    LAUNCH_TEMPLATE: ("name", "instanceType"),  # a Capacity Block group's instance type is named here
    ADDON: ("addonName", "addonVersion"),
    HELM_RELEASE: ("chart", "version", "values.driver", "values.image"),
    NODE_POOL: ("spec.template",),
    NODE_CLASS: ("metadata.name", "spec.amiSelectorTerms"),
}
# Read when known: a launch template's name may be unknown in a preview, and only completes an instance type.
OPTIONAL_INPUTS: Mapping[str, frozenset[str]] = {NODE_GROUP: frozenset({"launchTemplate.name"}),
                                            LAUNCH_TEMPLATE: frozenset({"name", "instanceType"})}
# Karpenter alias family -> the node image it selects for GPU instances (`al2023` -> the NVIDIA variant).
ALIAS_IMAGES = {img.alias_family: key for key, img in catalog.KARPENTER_IMAGES.items() if img.alias_family}
CUSTOM_AMI = "CUSTOM"


@dataclass(frozen=True)
class PoolPin:
    """A GPU node group: its AMI (None: the image is pinned in a launch template) and instance types."""

    name: str
    ami_type: Optional[str]
    release_version: Optional[str]
    instance_types: tuple[str, ...]

    @property
    def families(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(t.split(".", 1)[0] for t in self.instance_types))

    @property
    def custom_image(self) -> bool:
        return self.ami_type in (None, CUSTOM_AMI)


@dataclass(frozen=True)
class Pinned:
    kubernetes: Optional[str] = None  # the cluster's version, else the node groups'
    cluster_created: bool = False  # the stack registers (and pays for) the control plane
    operator_chart: Optional[str] = None
    operator_driver: Optional[str] = None  # driver.version when the operator installs the driver
    pools: tuple[PoolPin, ...] = ()
    addons: Mapping[str, str] = field(default_factory=dict)
    autoscaler_tag: Optional[str] = None


def _at(inputs: Mapping[str, Any], path: str) -> Any:
    node: Any = inputs
    for part in path.split("."):
        if not isinstance(node, Mapping):
            return None
        node = node.get(part)
    return node


def _truthy(value: Any) -> bool:
    return value is True or (isinstance(value, str) and value.lower() == "true")


def _is_gpu_group(inputs: Mapping[str, Any]) -> bool:
    labels = inputs.get("labels") or {}
    if names.POOL_LABEL in labels and names.GPU_PRODUCT_LABEL in labels or inputs.get("amiType") in GPU_AMI_TYPES:
        return True
    return any(is_gpu_instance_type(t) for t in inputs.get("instanceTypes") or [])


def _karpenter_pools(node_pools: list[Mapping[str, Any]], classes: list[Mapping[str, Any]]) -> list[PoolPin]:
    """A Karpenter GPU pool pins its image by the alias of its EC2NodeClass (None: by image ids)."""
    aliases = {}
    for node_class in classes:
        terms = _at(node_class, "spec.amiSelectorTerms") or []
        alias = next((t.get("alias") for t in terms if isinstance(t, Mapping) and t.get("alias")), None)
        aliases[_at(node_class, "metadata.name")] = alias
    pools = []
    for node_pool in node_pools:
        template = _at(node_pool, "spec.template") or {}
        labels = _at(template, "metadata.labels") or {}
        reqs = _at(template, "spec.requirements") or []
        types = next((r.get("values") for r in reqs if isinstance(r, Mapping) and r.get("operator") == "In"
                      and r.get("key") == names.INSTANCE_TYPE_LABEL), None) or []
        if names.POOL_LABEL not in labels or not any(t in catalog.INSTANCE_TYPES for t in types):
            continue
        alias = aliases.get(_at(template, "spec.nodeClassRef.name"))
        image = ALIAS_IMAGES.get(alias.split("@", 1)[0]) if alias else None
        pools.append(PoolPin(str(labels[names.POOL_LABEL]), image, alias if image else None, tuple(types)))
    return pools


def from_resources(resources: Iterable[tuple[str, Mapping[str, Any]]]) -> Pinned:
    clusters, group_versions, pools, addons = [], [], [], {}
    node_pools, node_classes = [], []
    chart = driver = autoscaler = None
    resources = list(resources)
    templates = {inputs.get("name"): inputs for type_, inputs in resources if type_ == LAUNCH_TEMPLATE}
    for type_, inputs in resources:
        if type_ == NODE_POOL:
            node_pools.append(inputs)
        elif type_ == NODE_CLASS:
            node_classes.append(inputs)
        if type_ == CLUSTER and inputs.get("version"):
            clusters.append(str(inputs["version"]))
        elif type_ == NODE_GROUP:
            if inputs.get("version"):
                group_versions.append(str(inputs["version"]))
            template = templates.get(_at(inputs, "launchTemplate.name"))
            types = tuple(node_group_instance_types(inputs, template))
            if _is_gpu_group({**inputs, "instanceTypes": list(types)}):
                labels = inputs.get("labels") or {}
                pools.append(PoolPin(str(labels.get(names.POOL_LABEL) or inputs.get("nodeGroupName") or "node-group"),
                                     inputs.get("amiType"), inputs.get("releaseVersion"), types))
        elif type_ == ADDON and inputs.get("addonName") and inputs.get("addonVersion"):
            addons[str(inputs["addonName"])] = str(inputs["addonVersion"])
        elif type_ == HELM_RELEASE and is_gpu_operator_chart(inputs.get("chart")):
            chart = inputs.get("version")
            drv = _at(inputs, "values.driver") or {}
            if _truthy(drv.get("enabled", True)) and drv.get("version"):
                driver = str(drv["version"])
        elif type_ == HELM_RELEASE and inputs.get("chart") == catalog.CLUSTER_AUTOSCALER_CHART[1]:
            autoscaler = _at(inputs, "values.image.tag")
    versions = clusters or group_versions
    pools += _karpenter_pools(node_pools, node_classes)
    return Pinned(versions[0] if versions else None, bool(clusters), chart, driver,
                  tuple(sorted(pools, key=lambda p: p.name)), dict(sorted(addons.items())), autoscaler)


def from_plan(plan: Mapping[str, Any]) -> Pinned:
    """The pins of a plan document (`gpu-platform plan --json`)."""
    return from_resources((r["type"], r.get("inputs") or {}) for r in plan.get("resources") or [])
