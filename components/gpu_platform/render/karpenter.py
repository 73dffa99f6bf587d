"""Karpenter GPU pools as plain data: each pool's EC2NodeClass and NodePool, decided from the spec alone.

A pool with `provisioner: karpenter` gets the same labels, taints, sharing selectors, disk and image
rules as a managed node group (decisions: node_pool.node_labels and node_taints, sharing.mig_layout_tag), in
Karpenter's v1 API (karpenter.sh v1.14 NodePools, NodeClasses, Disruption):

- EC2NodeClass: the image pinned by an exact alias (`al2023@v20251120`) or by id (Ubuntu: the `Custom`
  family with our own bootstrap, registering with Karpenter's `karpenter.sh/unregistered` taint), IMDSv2
  with hop limit 2, encrypted gp3 volumes, subnets and security groups found by the
  `karpenter.sh/discovery: <cluster>` tag, the shared Karpenter node role, and instance tags (the
  stack's, and the MIG layout, so a new layout drifts the pool's nodes instead of relabelling them).
- Reserved pools: the EC2NodeClass selects the reservation by id and the NodePool allows `reserved` capacity
  (decisions/reservations.py).
- NodePool: requirements on the pool's instance types and capacity type, the node labels and taints,
  `limits.nodes` = maxSize (so capacity and cost read as on a managed node group), and disruption:
  consolidate only empty nodes by default, budgets of `maxUnavailable` nodes for drift and
  consolidation, and with a disruption window `nodes: "0"` budgets over the rest of the week.

Karpenter keeps no minimum: a NodePool has no minimum size, so `minSize` must be 0 (spec rules). The
controller's chart values are here too.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional, Union

from gpu_platform.decisions import launch_template as lt
from gpu_platform.decisions import reservations
from gpu_platform.decisions.karpenter import karpenter_image, node_role_name
from gpu_platform.decisions.local_storage import node_config, pool_local_storage
from gpu_platform.decisions.node_boot import bottlerocket_kubelet, lustre_part, ubuntu_prelude
from gpu_platform.decisions.numa import kubelet_flags, pool_kubelet
from gpu_platform.decisions.acceptance import startup_taints
from gpu_platform.decisions.node_pool import node_labels, node_taints, registering_taints
from gpu_platform.decisions.node_repair import karpenter_repairs
from gpu_platform.decisions.sharing import mig_layout_tag
from gpu_platform.facts import catalog, names
from gpu_platform.facts.karpenter import (
    CAPACITY_BLOCK, EMPTY_REASON, NODE_CLASS_API, NODE_POOL_API, NODE_REPAIR_GATE, POD_EVICTING_REASONS,
    RESERVED_CAPACITY_GATE,
)
from gpu_platform.facts.karpenter_window import closed_budgets
from gpu_platform.spec.models import KarpenterPoolSpec

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec, PlatformSpec
    from gpu_platform.spec.pool_context import PoolContext

HOP_LIMIT = 2  # as on managed node groups: pods that still read instance metadata sit one hop away


def pool_settings(pool: "NodePoolSpec") -> KarpenterPoolSpec:
    """The pool's Karpenter settings. A Capacity Block is paid whether its nodes run or not, so by default its
    empty nodes are kept (`consolidateAfter: Never`, as AWS recommends for Capacity Block NodePools: EKS user
    guide, ml-node-pools)."""
    if pool.karpenter is not None:
        return pool.karpenter
    return KarpenterPoolSpec(consolidate_after="Never") if reservations.is_block(pool) else KarpenterPoolSpec()


# --- NodePool ---

def requirements(pool: "NodePoolSpec") -> list[dict[str, Any]]:
    """The pool's exact instance types and capacity type (every type shares one GPU model and count); a
    Capacity Block pool takes reserved capacity of type capacity-block only."""
    out = [
        {"key": names.INSTANCE_TYPE_LABEL, "operator": "In", "values": list(pool.instance_types)},
        {"key": names.KARPENTER_CAPACITY_TYPE_LABEL, "operator": "In",
         "values": reservations.karpenter_capacity_types(pool)},
        {"key": names.ARCH_LABEL, "operator": "In", "values": ["amd64"]},
        {"key": names.OS_LABEL, "operator": "In", "values": ["linux"]},
    ]
    if reservations.is_block(pool):
        out.insert(2, {"key": names.KARPENTER_RESERVATION_TYPE_LABEL, "operator": "In", "values": [CAPACITY_BLOCK]})
    return out


def taints(pool: "NodePoolSpec") -> list[dict[str, str]]:
    """The GPU taint and the pool's own (Kubernetes spelling; an empty value is left out, as the API does)."""
    return [{"key": k, **({"value": v} if v else {}), "effect": e} for k, v, e in node_taints(pool)]


def limits(pool: "NodePoolSpec") -> dict[str, str]:
    """At most maxSize nodes: the same ceiling capacity, cost and quota checks read on a node group."""
    return {"nodes": str(pool.max_size)}


def budgets(ctx: "PoolContext", pool: "NodePoolSpec") -> list[dict[str, Any]]:
    """`maxUnavailable` nodes at a time for drift and consolidation; empty nodes (nothing runs there but
    DaemonSets) go whenever they are empty; with a window, no drift or consolidation outside it."""
    limit = ctx.max_unavailable(pool)
    out = [{"nodes": str(limit), "reasons": list(POD_EVICTING_REASONS)},
           {"nodes": "100%", "reasons": [EMPTY_REASON]}]
    window = ctx.disruption_window
    if window is not None:
        out += closed_budgets(window.schedule, window.duration, POD_EVICTING_REASONS)
    return out


def disruption(ctx: "PoolContext", pool: "NodePoolSpec") -> dict[str, Any]:
    settings = pool_settings(pool)
    return {"consolidationPolicy": settings.consolidation_policy, "consolidateAfter": settings.consolidate_after,
            "budgets": budgets(ctx, pool)}


def node_pool_metadata(ctx: "PoolContext", pool: "NodePoolSpec") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": pool.name, "labels": {names.MANAGED_BY_LABEL: names.MANAGED_BY}}
    window = ctx.disruption_window
    if window is not None:  # policies read the window the budgets must honour from here
        meta["annotations"] = {names.DISRUPTION_WINDOW_SCHEDULE_ANNOTATION: window.schedule,
                               names.DISRUPTION_WINDOW_DURATION_ANNOTATION: window.duration}
    return meta


def node_pool_spec(ctx: "PoolContext", pool: "NodePoolSpec") -> dict[str, Any]:
    group, kind = NODE_CLASS_API[0].split("/")[0], NODE_CLASS_API[1]
    settings = pool_settings(pool)
    out: dict[str, Any] = {
        "template": {
            "metadata": {"labels": node_labels(pool)},
            "spec": {
                "nodeClassRef": {"group": group, "kind": kind, "name": pool.name},
                "requirements": requirements(pool),
                "taints": taints(pool),
                "expireAfter": settings.expire_after,
            },
        },
        "limits": limits(pool),
        "disruption": disruption(ctx, pool),
    }
    startup = startup_taints(ctx, pool)  # lifted by the node readiness controller once the node passes
    if startup:
        out["template"]["spec"]["startupTaints"] = [{"key": k, "value": v, "effect": e} for k, v, e in startup]
    if settings.weight is not None:
        out["weight"] = settings.weight
    return out


def node_pool_object(ctx: "PoolContext", pool: "NodePoolSpec") -> dict[str, Any]:
    api_version, kind = NODE_POOL_API
    return {"apiVersion": api_version, "kind": kind, "metadata": node_pool_metadata(ctx, pool),
            "spec": node_pool_spec(ctx, pool)}


# --- EC2NodeClass ---

def ami_selector_terms(pool: "NodePoolSpec") -> list[dict[str, str]]:
    if pool.ami.alias:
        return [{"alias": pool.ami.alias}]
    if pool.ami.image_id:
        return [{"id": pool.ami.image_id}]
    raise ValueError(f"pool {pool.name!r}: a Karpenter pool's ami needs an alias or an imageId")


def _cluster_name(ctx: "PoolContext") -> str:
    """The cluster's name, which a Karpenter pool's objects are rendered with (a component names it first)."""
    if ctx.cluster_name is None:
        raise ValueError("the cluster's name is needed to render a Karpenter pool's objects")
    return ctx.cluster_name


def block_device_mappings(pool: "NodePoolSpec") -> list[dict[str, Any]]:
    """The volume images live on (as in the node group's launch template), plus Bottlerocket's OS volume:
    naming any mapping replaces Karpenter's defaults, so every volume the image needs is listed."""
    image = pool.ami.image
    volumes = [(catalog.IMAGE_VOLUME_DEVICE[image.os], pool.disk_size_gib)]
    root = karpenter_image(pool).root_volume_gib
    if root:
        volumes.insert(0, ("/dev/xvda", root))
    return [{"deviceName": device, "ebs": {"volumeSize": f"{size}Gi", "volumeType": "gp3", "encrypted": True,
                                           "deleteOnTermination": True}} for device, size in volumes]


def node_class_tags(ctx: "PoolContext", pool: "NodePoolSpec") -> dict[str, str]:
    """Tags on every instance, volume and launch template Karpenter makes for the pool: what the aws
    provider's default tags put on the stack's own resources, the pool, and its MIG layout. The environment
    only when it was stated: the policy pack reads it from here, and a pool nobody gave one is held to prod."""
    stated = {names.ENVIRONMENT_TAG: ctx.environment} if ctx.environment_stated else {}
    return {names.MANAGED_BY_TAG: names.MANAGED_BY, names.CLUSTER_TAG: _cluster_name(ctx), **stated,
            names.POOL_LABEL: pool.name, **ctx.tags, **mig_layout_tag(pool)}


def node_class_spec(ctx: "PoolContext", pool: "NodePoolSpec", user_data: Optional[str] = None,
                    role: Optional[str] = None) -> dict[str, Any]:
    """`user_data` is the bootstrap of a custom (Ubuntu) image: `custom_user_data`; `role` the IAM role the
    nodes run as (default: the one the platform's Karpenter controller makes for the cluster)."""
    image = karpenter_image(pool)
    discovery = [{"tags": {names.KARPENTER_DISCOVERY_TAG: ctx.cluster_name}}]
    out: dict[str, Any] = {}
    if not pool.ami.alias:  # an alias implies its family
        out["amiFamily"] = image.ami_family
    out.update({
        "amiSelectorTerms": ami_selector_terms(pool),
        "role": role or node_role_name(_cluster_name(ctx)),
        "subnetSelectorTerms": discovery,
        "securityGroupSelectorTerms": discovery,
        "metadataOptions": {"httpEndpoint": "enabled", "httpProtocolIPv6": "disabled",
                            "httpPutResponseHopLimit": HOP_LIMIT, "httpTokens": "required"},
        "blockDeviceMappings": block_device_mappings(pool),
        "tags": node_class_tags(ctx, pool),
    })
    terms = reservations.reservation_selector_terms(pool)
    if terms:  # Karpenter uses no reservation it is not given (no open matching)
        out["capacityReservationSelectorTerms"] = terms
    out.update(local_boot(ctx, pool))
    if user_data is not None:
        out["userData"] = user_data
    return out


def local_boot(ctx: "PoolContext", pool: "NodePoolSpec") -> dict[str, Any]:
    """What an AL2023 pool's nodes do at boot, as on a node group's launch template: Karpenter's
    `instanceStorePolicy: RAID0` writes the same nodeadm local-storage setting, and MIME user data (merged by
    Karpenter with its own NodeConfig) sets the kubelet's CPU and topology managers and installs the Lustre
    client. Those managers have no field in the EC2NodeClass's `kubelet` (the pinned v1.14.1 CRD), so they
    go through user data, on Bottlerocket as its settings TOML. Ubuntu's steps are in `custom_user_data`."""
    out: dict[str, Any] = {}
    if pool.ami.image.os == "bottlerocket":
        settings = bottlerocket_kubelet(pool)
        return {"userData": settings} if settings else out
    if pool.ami.image.os != "al2023":
        return out
    if pool_local_storage(pool).how == "nodeadm":
        out["instanceStorePolicy"] = "RAID0"
    kubelet = pool_kubelet(pool).config()
    parts: list[Union[str, tuple[str, str]]] = [(catalog.NODEADM_CONTENT_TYPE, node_config(False, kubelet))] if kubelet else []
    lustre = lustre_part(ctx, pool)
    if lustre:
        parts.append(lustre)
    if parts:
        out["userData"] = lt.mime_multipart(*parts)
    return out


def node_class_head(pool: "NodePoolSpec") -> dict[str, Any]:
    """The EC2NodeClass without its spec: API version, kind and metadata (named after the pool)."""
    api_version, kind = NODE_CLASS_API
    return {"apiVersion": api_version, "kind": kind,
            "metadata": {"name": pool.name, "labels": {names.MANAGED_BY_LABEL: names.MANAGED_BY}}}


def node_class_object(ctx: "PoolContext", pool: "NodePoolSpec", user_data: Optional[str] = None,
                      role: Optional[str] = None) -> dict[str, Any]:
    return {**node_class_head(pool), "spec": node_class_spec(ctx, pool, user_data, role)}


def custom_user_data(ctx: "PoolContext", pool: "NodePoolSpec", endpoint: str, ca_data: str,
                     service_cidr: str) -> str:
    """Canonical's bootstrap after the pool's boot steps (as on Ubuntu node groups: node_boot), the node
    registering under Karpenter's
    `karpenter.sh/unregistered:NoExecute` taint, which Karpenter lifts once it has synced the node's
    labels and taints (karpenter.sh v1.14 NodeClasses, Custom user data)."""
    registering = [*registering_taints(ctx, pool), (names.KARPENTER_UNREGISTERED_TAINT, "", "NoExecute")]
    return lt.ubuntu_bootstrap_script(_cluster_name(ctx), endpoint, ca_data, service_cidr, node_labels(pool), registering,
                                      ubuntu_prelude(ctx, pool), kubelet_flags(pool))


# --- the controller's chart ---

# The getting-started guide's 1 CPU / 1 GiB, with the CPU as a request only: system nodes are small.
CONTROLLER_RESOURCES = {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "1Gi"}}


def controller_values(spec: "PlatformSpec") -> dict[str, Any]:
    """Helm values: cluster, interruption queue, the feature gates its pools need (Helm merges the map, so the
    chart's other gates keep their defaults), the Pod Identity service account, system-node placement. A reserved
    pool sets ReservedCapacity explicitly (beta and on by default in 1.14, so a chart changing its default cannot
    strand the reservation); repairing pools turn on NodeRepair."""
    settings: dict[str, Any] = {"clusterName": spec.cluster.name,
                                "interruptionQueue": names.karpenter_queue_name(spec.cluster.name)}
    gates = {}
    if any(p.provisioner == "karpenter" and reservations.kind(p) for p in spec.node_pools):
        gates[RESERVED_CAPACITY_GATE] = True
    if karpenter_repairs(spec):
        gates[NODE_REPAIR_GATE] = True
    if gates:
        settings["featureGates"] = gates
    return {
        "fullnameOverride": names.KARPENTER_RELEASE,
        "settings": settings,
        "serviceAccount": {"create": True, "name": names.KARPENTER_RELEASE},
        "replicas": 2 if spec.prod else 1,  # leader election keeps one active
        # The chart's own affinity already keeps the controller off the nodes it launches.
        "nodeSelector": {names.OS_LABEL: "linux", **spec.cluster.system_node_selector},
        "controller": {"resources": CONTROLLER_RESOURCES},
    }
