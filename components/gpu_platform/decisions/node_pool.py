"""What a GPU pool's nodes are, decided from the spec: their labels and taints, every input of the pool's
managed node group in EKS API terms, and the Auto Scaling group tags the Cluster Autoscaler builds an
empty pool's node template from.

`node_group_inputs(spec, pool)` decides every node-group input from the spec alone. Inputs that make EKS
replace a node group (amiType, capacityType, clusterName, instanceTypes, launch template name,
nodeGroupName, nodeRoleArn, subnets; disk size lives in the launch template) therefore change only when
the pool's own replace-forcing fields change: a new team, an alert threshold or another pool never
touches them.

Scale from zero: with no node running, the autoscaler only knows a pool through tags on its Auto Scaling
group: the labels, taints and extended resources (`nvidia.com/gpu`, or `nvidia.com/mig-<profile>` under
the mixed MIG strategy, `vpc.amazonaws.com/efa` on EFA pools) and the ephemeral storage a node would
have. `node_template_tags` renders them from the same functions that label and taint the node group, so
the template and the real nodes cannot drift apart.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

from gpu_platform.decisions.acceptance import startup_taints
from gpu_platform.decisions.capacity import node_resources
from gpu_platform.decisions.dra import allocation_labels, is_dra
from gpu_platform.decisions.launch_template import efa_interface_count
from gpu_platform.decisions.local_storage import pool_local_storage
from gpu_platform.decisions.node_repair import repair_config
from gpu_platform.decisions.reservations import is_block
from gpu_platform.decisions.sharing import operand_labels, sharing_labels
from gpu_platform.facts import names

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec
    from gpu_platform.spec.pool_context import PoolContext

CAPACITY_TYPES = {"spot": "SPOT", "on-demand": "ON_DEMAND", "capacity-block": "CAPACITY_BLOCK"}


def node_labels(pool: "NodePoolSpec") -> dict[str, str]:
    """Labels every node of the pool carries from registration (agreed with the GPU Operator)."""
    gpu = pool.gpu
    return {
        names.POOL_LABEL: pool.name,
        names.GPU_PRODUCT_LABEL: gpu.product_label,
        names.ACCELERATOR_LABEL: names.accelerator_value(gpu.key),
        **sharing_labels(pool),
        **operand_labels(pool),
        **allocation_labels(pool),  # DRA pools: the DRA kubelet plugin runs here, the device plugin does not
        **({names.CRITICAL_LABEL: "true"} if pool.critical else {}),  # policies hold critical pools to on-demand
        **({names.EFA_LABEL: "true"} if pool.efa else {}),  # the EFA device plugin runs here
        **pool.labels,
    }


def node_taints(pool: "NodePoolSpec") -> list[tuple[str, str, str]]:
    """(key, value, Kubernetes effect): the GPU taint first, then the pool's own."""
    return [(names.GPU_TAINT_KEY, names.GPU_TAINT_VALUE, "NoSchedule"),
            *((t.key, t.value, t.effect) for t in pool.taints)]


def registering_taints(ctx: "PoolContext", pool: "NodePoolSpec") -> list[tuple[str, str, str]]:
    """The taints a node registers with: its pool's, then the acceptance gate's startup taint, which the node
    readiness controller lifts once the node passes (never in the autoscaler's node template)."""
    return [*node_taints(pool), *startup_taints(ctx, pool)]


# --- the managed node group ---

@dataclass(frozen=True)
class NodeGroupInputs:
    """Everything a GPU pool's node group is created with, in EKS API terms."""

    cluster_name: Optional[str]  # these three are None when the cluster is named only at deploy time
    node_group_name: Optional[str]
    launch_template_name: Optional[str]
    capacity_type: str
    instance_types: Optional[list[str]]  # None: the launch template names the instance type (Capacity Blocks)
    ami_type: Optional[str]  # None: the image is pinned in the launch template (Ubuntu)
    release_version: Optional[str]
    version: Optional[str]
    labels: dict[str, str]
    taints: list[dict[str, str]]  # EKS API effect spelling
    min_size: int
    max_size: int
    desired_size: int
    update_config: dict[str, Any]  # EKS API terms: maxUnavailable or maxUnavailablePercentage, updateStrategy
    protect: bool
    tags: dict[str, str] = field(default_factory=dict)
    repair: dict[str, Any] = field(default_factory=dict)  # nodeRepairConfig, EKS API field names


def node_group_inputs(ctx: "PoolContext", pool: "NodePoolSpec") -> NodeGroupInputs:
    cluster, image = ctx.cluster_name, pool.ami.image
    custom = image.eks_ami_type == "CUSTOM"
    return NodeGroupInputs(
        cluster_name=cluster,
        node_group_name=names.node_group_name(cluster, pool.name) if cluster else None,
        launch_template_name=names.launch_template_name(cluster, pool.name) if cluster else None,
        capacity_type=CAPACITY_TYPES[pool.capacity_type],
        # EKS fails a group naming an instance type both here and in its launch template, which a Capacity
        # Block's must (decisions/reservations.py).
        instance_types=None if is_block(pool) else list(pool.instance_types),
        # EKS rejects amiType, releaseVersion and version when the launch template names an image.
        ami_type=None if custom else image.eks_ami_type,
        release_version=None if custom else pool.ami.release_version,
        version=None if custom else ctx.kubernetes_version,
        labels=node_labels(pool),
        taints=[{"key": k, "value": v, "effect": names.TAINT_EFFECTS[e]} for k, v, e in registering_taints(ctx, pool)],
        min_size=pool.min_size,
        max_size=pool.max_size,
        desired_size=pool.min_size,  # only at creation: the autoscaler owns it afterwards (ignore_changes)
        update_config=update_config(ctx, pool),
        protect=ctx.protected(pool),
        tags={names.POOL_LABEL: pool.name},
        repair=repair_config(ctx, pool),
    )


def update_config(ctx: "PoolContext", pool: "NodePoolSpec") -> dict[str, Any]:
    """How EKS rolls the pool's nodes on a new AMI release or launch template version: at most
    `maxUnavailable` nodes (or a percentage) cordoned and drained at once; `MINIMAL` terminates old
    nodes before launching new ones, for pools whose GPUs cannot be doubled during a roll."""
    limit = ctx.max_unavailable(pool)
    config: dict[str, Any] = ({"maxUnavailablePercentage": int(limit.rstrip("%"))} if isinstance(limit, str)
                              else {"maxUnavailable": limit})
    config["updateStrategy"] = pool.update_strategy.upper()
    return config


# --- the Cluster Autoscaler's node template ---

def ephemeral_storage_gib(pool: "NodePoolSpec") -> int:
    """The node's ephemeral storage: the instance-store array when kubelet lives on it, else the root volume."""
    scratch = pool_local_storage(pool)
    return scratch.gb_per_node * 10**9 // 2**30 if scratch.mount else pool.disk_size_gib


def node_template_tags(ctx: "PoolContext", pool: "NodePoolSpec") -> dict[str, str]:
    """Auto Scaling group tags: auto-discovery, then the node template (labels, taints, resources). The
    cluster's ownership tag names the cluster: it is left out when the cluster is named only at deploy time."""
    tags = {names.CA_ENABLED_TAG: names.CA_ENABLED_VALUE}
    if ctx.cluster_name:
        tags[names.ca_cluster_tag(ctx.cluster_name)] = names.CA_OWNED_VALUE
    tags.update({names.ca_label_tag(k): v for k, v in node_labels(pool).items()})
    tags.update({names.ca_taint_tag(k): f"{v}:{effect}" for k, v, effect in node_taints(pool)})
    if not is_dra(pool):  # a DRA node advertises no GPU resource: its GPUs are ResourceSlice devices
        tags.update({names.ca_resource_tag(r): str(n) for r, n in node_resources(pool, ctx.mig_strategy).items()})
    tags[names.ca_resource_tag(names.EPHEMERAL_STORAGE)] = f"{ephemeral_storage_gib(pool)}Gi"
    if efa_interface_count(pool):  # pods asking for EFA devices can scale such a pool from zero
        tags[names.ca_resource_tag(names.EFA_RESOURCE)] = str(efa_interface_count(pool))
    return tags
