"""The cluster's VPC: one private and one public subnet per zone, NAT egress, load-balancer subnet tags, and a
private subnet per Local Zone for node groups, routed through the region's first NAT gateway (the zones, the
address plan and the NAT count are decided in decisions/network.py)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Optional

import pulumi

from gpu_platform.decisions.network import local_zone_plan, nat_gateway_count, subnet_plan, zones
from gpu_platform.facts import component_types, names

if TYPE_CHECKING:
    from gpu_platform.spec.models import VpcSpec


class Network(pulumi.ComponentResource):
    """VPC, subnets, internet and NAT gateways, route tables."""

    def __init__(self, name: str, cluster: str, vpc_spec: "VpcSpec", region: str, prod: bool,
                 discovery_tags: Mapping[str, str], opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(component_types.INTERNAL["Network"], name, None, opts)
        from pulumi_aws import ec2

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
                                    **discovery_tags},  # Karpenter's EC2NodeClasses select them by it
                              opts=child)
            public.append(pub)
            private.append(priv)

        nats = []
        for i in range(nat_gateway_count(vpc_spec, prod, len(plan))):
            zone = plan[i].zone
            eip = ec2.Eip(f"{name}-nat-{zone}", domain="vpc", tags={"Name": f"{cluster}-nat-{zone}"}, opts=child)
            nats.append(ec2.NatGateway(f"{name}-nat-{zone}", allocation_id=eip.id, subnet_id=public[i].id,
                                       tags={"Name": f"{cluster}-nat-{zone}"},
                                       opts=pulumi.ResourceOptions(parent=self, depends_on=[igw])))
        for i, (z, priv) in enumerate(zip(plan, private, strict=True)):  # a private subnet per zone
            rt = ec2.RouteTable(f"{name}-private-{z.zone}", vpc_id=self.vpc.id,
                                tags={"Name": f"{cluster}-private-{z.zone}"}, opts=child)
            ec2.Route(f"{name}-private-{z.zone}-default", route_table_id=rt.id, destination_cidr_block="0.0.0.0/0",
                      nat_gateway_id=nats[i % len(nats)].id, opts=child)
            ec2.RouteTableAssociation(f"{name}-private-{z.zone}", subnet_id=priv.id, route_table_id=rt.id, opts=child)

        local = []
        for zone, cidr in local_zone_plan(vpc_spec.cidr, [z.zone for z in plan], vpc_spec.local_zones or []):
            # No Karpenter discovery tag: only the node groups that name the zone launch there.
            subnet = ec2.Subnet(f"{name}-private-{zone}", vpc_id=self.vpc.id, cidr_block=cidr, availability_zone=zone,
                                tags={"Name": f"{cluster}-private-{zone}"}, opts=child)
            rt = ec2.RouteTable(f"{name}-private-{zone}", vpc_id=self.vpc.id, tags={"Name": f"{cluster}-private-{zone}"},
                                opts=child)
            ec2.Route(f"{name}-private-{zone}-default", route_table_id=rt.id, destination_cidr_block="0.0.0.0/0",
                      nat_gateway_id=nats[0].id, opts=child)
            ec2.RouteTableAssociation(f"{name}-private-{zone}", subnet_id=subnet.id, route_table_id=rt.id, opts=child)
            local.append(subnet)

        self.vpc_id = self.vpc.id
        self.local_zone_subnet_ids = pulumi.Output.all(*[s.id for s in local])
        self.private_subnet_ids = pulumi.Output.all(*[s.id for s in private])
        self.public_subnet_ids = pulumi.Output.all(*[s.id for s in public])
        self.register_outputs({"vpcId": self.vpc_id, "privateSubnetIds": self.private_subnet_ids,
                               "publicSubnetIds": self.public_subnet_ids})
