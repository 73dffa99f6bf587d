"""The cluster's network, decided from the spec: which zones it spans, the address plan, how many NAT
gateways, and how many private subnets (one per zone) pools, mount targets and file systems use. A Local
Zone gets one private subnet for node groups only (EKS places no cluster subnet there, EFS and FSx make no
mount target there), routed through the region's NAT gateway (not every Local Zone has one).

The address plan is pure and deterministic (`subnet_plan`): the same CIDR and zones always give the
same subnets, so a plan never moves a subnet by surprise. Private subnets get the large blocks because
the VPC CNI gives every pod a VPC address; public subnets only hold NAT gateways and load balancers.
"""
from __future__ import annotations

import ipaddress
import math
import string
from dataclasses import dataclass
from typing import TYPE_CHECKING
from collections.abc import Sequence

if TYPE_CHECKING:
    from gpu_platform.spec.models import CreateClusterSpec, PlatformSpec, VpcSpec


@dataclass(frozen=True)
class ZoneSubnets:
    zone: str
    private_cidr: str
    public_cidr: str


def zones(region: str, vpc: "VpcSpec") -> list[str]:
    """The zones to span: the spec's list, else `<region>a`, `<region>b`, ..."""
    return list(vpc.zones) if vpc.zones else [f"{region}{string.ascii_lowercase[i]}" for i in range(vpc.availability_zones)]


def subnet_plan(cidr: str, zone_names: list[str]) -> list[ZoneSubnets]:
    """Split `cidr` into 2^k equal blocks (2^k > zones): one private block per zone, the next block
    split again into one public subnet per zone. /16 with 3 zones: private /18s, public /20s."""
    net = ipaddress.ip_network(cidr)
    n = len(zone_names)
    bits = math.ceil(math.log2(n + 1))
    blocks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = list(net.subnets(prefixlen_diff=bits))
    public = list(blocks[n].subnets(prefixlen_diff=math.ceil(math.log2(n)) if n > 1 else 0))
    return [ZoneSubnets(z, str(blocks[i]), str(public[i])) for i, z in enumerate(zone_names)]


def local_zone_plan(cidr: str, zone_names: list[str], local_zones: Sequence[str]) -> list[tuple[str, str]]:
    """(Local Zone, private CIDR) for each Local Zone: the public-sized blocks after the last public subnet,
    which `subnet_plan` leaves unused for every zone count, so adding a Local Zone never moves a subnet."""
    net = ipaddress.IPv4Network(cidr)
    plan = subnet_plan(cidr, zone_names)
    last = ipaddress.IPv4Network(plan[-1].public_cidr)
    spare = [s for s in net.subnets(new_prefix=last.prefixlen) if s.network_address > last.network_address]
    return [(z, str(spare[i])) for i, z in enumerate(local_zones)]


def all_zones(region: str, vpc: "VpcSpec") -> list[str]:
    """The zones pools may run in: the VPC's Availability Zones, then its Local Zones (the order of the subnets
    a pool is given)."""
    return [*zones(region, vpc), *(vpc.local_zones or [])]


def nat_gateway_count(vpc: "VpcSpec", prod: bool, zone_count: int) -> int:
    """One NAT gateway per zone in prod (a zone outage leaves the others their egress), one otherwise."""
    single = vpc.single_nat_gateway if vpc.single_nat_gateway is not None else not prod
    return 1 if single else zone_count


def subnet_count(spec: "PlatformSpec") -> int:
    """How many private subnets the cluster has (one mount target each), known from the spec alone."""
    c = spec.cluster
    if c.existing is not None:
        return len(c.existing.subnet_ids)
    create = created_cluster(spec)
    if create.subnet_ids is not None:
        return len(create.subnet_ids)
    if create.vpc is None:
        raise ValueError("cluster.create: give vpc or subnetIds")
    return create.vpc.availability_zones


def created_cluster(spec: "PlatformSpec") -> "CreateClusterSpec":
    """The block of a cluster the stack creates; the stack file's rules hold that it has `create` or `existing`."""
    if spec.cluster.create is None:
        raise ValueError("cluster: the stack adopts an existing cluster (cluster.existing) and creates none")
    return spec.cluster.create
