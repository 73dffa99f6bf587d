"""Where a pool's nodes run: which of the cluster's private subnets (one per zone) its node group uses.

Pools span every private subnet by default. `zones` narrows a pool to some zones of a VPC the stack
creates. An EFA pool launches into one cluster placement group, and a cluster placement group lives in
one availability zone (AWS EC2 user guide, "Placement groups"): it gets exactly one subnet, the zone it
lists or else the cluster's first. So does a node group confined to a reservation, which lives in one zone
(a created VPC's pool must name it: spec/rules_capacity.py). Existing subnets are used in the order the
stack file lists them. A Local Zone's subnet (after the Availability Zones' in the list) serves only the
pools that name it. The datasets file system sits in the first EFA pool's subnet when that is in an
Availability Zone (FSx for Lustre makes no file system in a Local Zone), else the cluster's first.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional
from collections.abc import Sequence

from gpu_platform.decisions.reservations import single_zone
from gpu_platform.facts.syntax import is_local_zone
from gpu_platform.spec.errors import SpecError
from gpu_platform.spec.pool_context import PoolContext

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec, PlatformSpec


def subnet_indices(ctx: "PoolContext", pool: "NodePoolSpec",
                   zone_names: Optional[Sequence[str]]) -> Optional[list[int]]:
    """Positions in the cluster's private subnet list for this pool, None for all of them.

    `zone_names` are the subnets' zones in order, known when the stack creates the VPC. A zone the VPC
    does not have is invalid input (SpecError naming the field): the spec alone cannot know the
    default zone names, which follow the region.
    """
    if pool.zones:
        at = ctx.at / "zones"
        known = list(zone_names or [])
        missing = [z for z in pool.zones if z not in known]
        if missing:
            raise SpecError([f"{at}: {', '.join(missing)} is not a zone of the cluster's VPC; "
                             f"its zones: {', '.join(known) or 'unknown (existing subnets)'}"])
        return [known.index(z) for z in pool.zones]
    if pool.efa or single_zone(pool):
        return [0]
    regional = [i for i, z in enumerate(zone_names or []) if not is_local_zone(z)]
    return regional if len(regional) != len(zone_names or []) else None


def pool_zone(ctx: "PoolContext", pool: "NodePoolSpec", zone_names: Optional[Sequence[str]]) -> Optional[str]:
    """The one zone of a single-zone pool (an EFA pool), when the zone names are known."""
    indices = subnet_indices(ctx, pool, zone_names)
    if indices is None or len(indices) != 1 or not zone_names:
        return None
    return zone_names[indices[0]]


def subnet_index(spec: "PlatformSpec", zone_names: Optional[Sequence[str]]) -> int:
    """The datasets file system's subnet: the first EFA pool's (training nodes read it without crossing
    zones), else the cluster's first."""
    for pool in spec.node_pools:
        if pool.efa and not any(is_local_zone(z) for z in pool.zones or []):
            return (subnet_indices(PoolContext.of(spec, pool), pool, zone_names) or [0])[0]
    return 0
