"""The VPC address plan and NAT layout (pure), and the VPC the created-cluster plan contains."""
import ipaddress
import itertools

from hypothesis import given
from hypothesis import strategies as st

from gpu_platform.decisions.network import local_zone_plan, nat_gateway_count, subnet_plan, zones
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import names
from tests.support.plans import plan, stack_plan
from tests.support.stacks import resources, stack_platform, without_services

AWS_SMALLEST_SUBNET = 28  # VPC user guide: subnets are /16 to /28


@st.composite
def vpcs(draw):
    prefix = draw(st.integers(16, 20))
    base = draw(st.integers(0, 2 ** (prefix - 8) - 1)) << (32 - prefix)  # inside 10.0.0.0/8
    cidr = str(ipaddress.ip_network((ipaddress.IPv4Address("10.0.0.0") + base, prefix)))
    return cidr, [f"eu-west-1{c}" for c in "abcdef"[: draw(st.integers(2, 6))]]


@given(vpcs())
def test_subnets_are_disjoint_and_inside_the_vpc(args):
    cidr, zone_names = args
    vpc = ipaddress.ip_network(cidr)
    nets = [ipaddress.ip_network(c) for z in subnet_plan(cidr, zone_names) for c in (z.private_cidr, z.public_cidr)]
    assert all(n.subnet_of(vpc) for n in nets)
    assert not any(a.overlaps(b) for a, b in itertools.combinations(nets, 2))


@given(vpcs())
def test_private_subnets_are_the_large_ones_and_every_subnet_is_valid_for_aws(args):
    cidr, zone_names = args
    for z in subnet_plan(cidr, zone_names):
        private, public = ipaddress.ip_network(z.private_cidr), ipaddress.ip_network(z.public_cidr)
        assert private.num_addresses > public.num_addresses
        assert public.prefixlen <= AWS_SMALLEST_SUBNET


@given(vpcs())
def test_one_private_and_one_public_subnet_per_zone_in_order(args):
    cidr, zone_names = args
    assert [z.zone for z in subnet_plan(cidr, zone_names)] == zone_names


def test_plan_is_deterministic_and_starts_at_the_vpc_base():
    first = subnet_plan("10.40.0.0/16", ["a", "b", "c"])
    assert first == subnet_plan("10.40.0.0/16", ["a", "b", "c"])
    assert first[0].private_cidr == "10.40.0.0/18"


def test_default_zones_follow_the_region():
    vpc = parse_platform(stack_platform("dev")).cluster.create.vpc
    assert zones("eu-west-1", vpc) == ["eu-west-1a", "eu-west-1b", "eu-west-1c"]


def test_explicit_zones_win():
    platform = stack_platform("dev")
    platform["cluster"]["create"]["vpc"]["zones"] = ["us-east-1b", "us-east-1d", "us-east-1f"]
    vpc = parse_platform(platform).cluster.create.vpc
    assert zones("us-east-1", vpc) == ["us-east-1b", "us-east-1d", "us-east-1f"]


def nat_count(spec, zone_count=3):
    return nat_gateway_count(spec.cluster.create.vpc, spec.prod, zone_count)


def test_prod_gets_a_nat_gateway_per_zone():
    assert nat_count(parse_platform(stack_platform("prod"))) == 3


def test_dev_shares_one_nat_gateway():
    assert nat_count(parse_platform(stack_platform("dev"))) == 1


def test_single_nat_gateway_setting_overrides_the_environment_default():
    platform = stack_platform("prod")
    platform["cluster"]["create"]["vpc"]["singleNatGateway"] = True
    assert nat_count(parse_platform(platform)) == 1


# --- in the plan ---

def _subnets(plan_):
    return {r["name"]: r["inputs"] for r in resources(plan_, "aws:ec2/subnet:Subnet")}


def test_created_vpc_has_a_public_and_a_private_subnet_per_zone_with_load_balancer_tags():
    subnets = _subnets(stack_plan("dev"))
    public = [s for s in subnets.values() if s["tags"].get(names.ELB_SUBNET_TAG) == "1"]
    private = [s for s in subnets.values() if s["tags"].get(names.INTERNAL_ELB_SUBNET_TAG) == "1"]
    assert len(public) == len(private) == 3
    assert {s["availabilityZone"] for s in public} == {s["availabilityZone"] for s in private}


def test_prod_plan_has_three_nat_gateways_and_dev_one():
    assert len(resources(stack_plan("prod"), "aws:ec2/natGateway:NatGateway")) == 3
    assert len(resources(stack_plan("dev"), "aws:ec2/natGateway:NatGateway")) == 1


def test_every_private_subnet_routes_to_a_nat_gateway_and_public_to_the_internet_gateway():
    routes = [r["inputs"] for r in resources(stack_plan("prod"), "aws:ec2/route:Route")]
    assert sum(1 for r in routes if r.get("natGatewayId")) == 3
    assert sum(1 for r in routes if r.get("gatewayId")) == 1


def test_existing_subnets_create_no_vpc():
    platform = stack_platform("dev")
    platform["cluster"]["create"].pop("vpc")
    platform["cluster"]["create"]["subnetIds"] = ["subnet-0aaa1111bbbb2222c", "subnet-0ddd3333eeee4444f"]
    platform["modelCache"] = {"enabled": False}
    without_services(platform)
    assert resources(plan(platform), "aws:ec2/vpc:Vpc") == []


@given(vpcs())
def test_a_local_zone_subnet_fits_beside_every_zone_subnet_without_moving_one(args):
    """Every zone count leaves a public-sized block after the public subnets: the Local Zone's subnet is there,
    inside the VPC, apart from the others, and the zones' own subnets are the plan without it."""
    cidr, zone_names = args
    vpc = ipaddress.ip_network(cidr)
    [(zone, local)] = local_zone_plan(cidr, zone_names, ["eu-west-1-ham-1a"])
    local_net = ipaddress.ip_network(local)
    nets = [ipaddress.ip_network(c) for z in subnet_plan(cidr, zone_names) for c in (z.private_cidr, z.public_cidr)]
    assert zone == "eu-west-1-ham-1a" and local_net.subnet_of(vpc) and local_net.prefixlen <= AWS_SMALLEST_SUBNET
    assert not any(local_net.overlaps(n) for n in nets)


def test_a_pool_without_zones_never_lands_in_a_local_zone():
    """The Local Zone subnet comes after the zones' subnets in a pool's list: only a pool naming it uses it."""
    from gpu_platform.decisions.placement import subnet_index, subnet_indices
    from gpu_platform.spec.pool_context import PoolContext
    from tests.support.ultraserver import ultraserver

    platform = ultraserver()
    platform["nodePools"].append({"name": "a10g", "instanceTypes": ["g5.xlarge"], "capacityType": "on-demand",
                                  "minSize": 0, "maxSize": 2, "ami": {"type": "AL2023_x86_64_NVIDIA",
                                                                      "releaseVersion": "1.35.7-20260917"}})
    spec = parse_platform(platform)
    names_ = ["us-east-1a", "us-east-1b", "us-east-1c", "us-east-1-dfw-2a"]
    gb200, a10g = spec.node_pools
    assert subnet_indices(PoolContext.of(spec, gb200), gb200, names_) == [3]
    assert subnet_indices(PoolContext.of(spec, a10g), a10g, names_) == [0, 1, 2]
    assert subnet_index(spec, names_) == 0  # FSx for Lustre makes no file system in a Local Zone
