"""The cluster's VPC: one private and one public subnet per zone, NAT egress, load-balancer subnet tags.

The address plan is pure and deterministic (`subnet_plan`): the same CIDR and zones always give the
same subnets, so a plan never moves a subnet by surprise. Private subnets get the large blocks because
the VPC CNI gives every pod a VPC address; public subnets only hold NAT gateways and load balancers.
"""
from __future__ import annotations

import ipaddress
import math
import string
from dataclasses import dataclass
from typing import TYPE_CHECKING, Optional

import pulumi

from . import names
from .karpenter import discovery_tags

if TYPE_CHECKING:
    from .spec import PlatformSpec, VpcSpec


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
    blocks = list(net.subnets(prefixlen_diff=bits))
    public = list(blocks[n].subnets(prefixlen_diff=math.ceil(math.log2(n)) if n > 1 else 0))
    return [ZoneSubnets(z, str(blocks[i]), str(public[i])) for i, z in enumerate(zone_names)]


def nat_gateway_count(spec: "PlatformSpec", zone_count: int) -> int:
    """One NAT gateway per zone in prod (a zone outage leaves the others their egress), one otherwise."""
    vpc = spec.cluster.create.vpc
    single = vpc.single_nat_gateway if vpc.single_nat_gateway is not None else not spec.prod
    return 1 if single else zone_count


class Network(pulumi.ComponentResource):
    """VPC, subnets, internet and NAT gateways, route tables."""

    def __init__(self, name: str, spec: "PlatformSpec", region: str, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpu-platform:network:Network", name, None, opts)
        from pulumi_aws import ec2

        vpc_spec = spec.cluster.create.vpc
        cluster = spec.cluster.name
        plan = subnet_plan(vpc_spec.cidr, zones(region, vpc_spec))
        child = pulumi.ResourceOptions(parent=self)

        self.vpc = ec2.Vpc(f"{name}-vpc", cidr_block=vpc_spec.cidr, enable_dns_hostnames=True, enable_dns_support=True,
                           tags={"Name": cluster}, opts=child)
        igw = ec2.InternetGateway(f"{name}-igw", vpc_id=self.vpc.id, tags={"Name": cluster}, opts=child)
        public_rt = ec2.RouteTable(f"{name}-public", vpc_id=self.vpc.id, tags={"Name": f"{cluster}-public"}, opts=child)
        ec2.Route(f"{name}-public-default", route_table_id=public_rt.id, destination_cidr_block="0.0.0.0/0",
                  gateway_id=igw.id, opts=child)

        public, private = [], []
        for z in plan:
            pub = ec2.Subnet(f"{name}-public-{z.zone}", vpc_id=self.vpc.id, cidr_block=z.public_cidr,
                             availability_zone=z.zone,
                             tags={"Name": f"{cluster}-public-{z.zone}", names.ELB_SUBNET_TAG: "1"}, opts=child)
            ec2.RouteTableAssociation(f"{name}-public-{z.zone}", subnet_id=pub.id, route_table_id=public_rt.id,
                                      opts=child)
            priv = ec2.Subnet(f"{name}-private-{z.zone}", vpc_id=self.vpc.id, cidr_block=z.private_cidr,
                              availability_zone=z.zone,
                              tags={"Name": f"{cluster}-private-{z.zone}", names.INTERNAL_ELB_SUBNET_TAG: "1",
                                    **discovery_tags(spec)},  # Karpenter's EC2NodeClasses select them by it
                              opts=child)
            public.append(pub)
            private.append(priv)

        nats = []
        for i in range(nat_gateway_count(spec, len(plan))):
            zone = plan[i].zone
            eip = ec2.Eip(f"{name}-nat-{zone}", domain="vpc", tags={"Name": f"{cluster}-nat-{zone}"}, opts=child)
            nats.append(ec2.NatGateway(f"{name}-nat-{zone}", allocation_id=eip.id, subnet_id=public[i].id,
                                       tags={"Name": f"{cluster}-nat-{zone}"},
                                       opts=pulumi.ResourceOptions(parent=self, depends_on=[igw])))
        for i, (z, priv) in enumerate(zip(plan, private)):
            rt = ec2.RouteTable(f"{name}-private-{z.zone}", vpc_id=self.vpc.id,
                                tags={"Name": f"{cluster}-private-{z.zone}"}, opts=child)
            ec2.Route(f"{name}-private-{z.zone}-default", route_table_id=rt.id, destination_cidr_block="0.0.0.0/0",
                      nat_gateway_id=nats[i % len(nats)].id, opts=child)
            ec2.RouteTableAssociation(f"{name}-private-{z.zone}", subnet_id=priv.id, route_table_id=rt.id, opts=child)

        self.vpc_id = self.vpc.id
        self.private_subnet_ids = pulumi.Output.all(*[s.id for s in private])
        self.public_subnet_ids = pulumi.Output.all(*[s.id for s in public])
        self.register_outputs({"vpcId": self.vpc_id, "privateSubnetIds": self.private_subnet_ids,
                               "publicSubnetIds": self.public_subnet_ids})
