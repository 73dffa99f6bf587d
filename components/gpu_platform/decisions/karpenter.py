"""Karpenter pools, decided from the spec: which pools Karpenter provisions, the role their nodes run as,
their image, and the discovery tags subnets and security groups carry (the objects are in render/karpenter.py)."""
from __future__ import annotations

from typing import TYPE_CHECKING

from gpu_platform.decisions.network import created_cluster
from gpu_platform.facts import catalog, names
from gpu_platform.facts.karpenter import KARPENTER

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec, PlatformSpec


def uses_karpenter(spec: "PlatformSpec") -> bool:
    return any(p.provisioner == KARPENTER for p in spec.node_pools)


def karpenter_pools(spec: "PlatformSpec") -> list["NodePoolSpec"]:
    return [p for p in spec.node_pools if p.provisioner == KARPENTER]


def discovery_tags(spec: "PlatformSpec") -> dict[str, str]:
    """The tag EC2NodeClasses select subnets and security groups by ({} when no pool uses Karpenter)."""
    return discovery_tag(spec.cluster.name) if uses_karpenter(spec) else {}


def discovery_tag(cluster_name: str) -> dict[str, str]:
    return {names.KARPENTER_DISCOVERY_TAG: cluster_name}


def node_role_name(cluster: str) -> str:
    """Karpenter's nodes run as their own role (with its own EKS access entry), not the node groups' one."""
    return names.role_name(cluster, "karpenter-nodes")


def karpenter_image(pool: "NodePoolSpec") -> catalog.KarpenterImage:
    return catalog.KARPENTER_IMAGES[pool.ami.type]


def os_volume_gib(pool: "NodePoolSpec") -> int:
    """A Karpenter pool's declared OS volume (Bottlerocket's), 0 otherwise: a node group's comes with its AMI."""
    return karpenter_image(pool).root_volume_gib if pool.provisioner == KARPENTER else 0


def needs_user_data(pool: "NodePoolSpec") -> bool:
    return karpenter_image(pool).ami_family == "Custom"


def untagged_subnets(spec: "PlatformSpec") -> list[str]:
    """Subnets the stack does not create, which need the discovery tag added (ids from the spec)."""
    c = spec.cluster
    if c.existing is not None:
        return list(c.existing.subnet_ids)
    create = created_cluster(spec)
    return list(create.subnet_ids or []) if create.vpc is None else []
