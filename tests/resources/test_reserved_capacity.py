"""Pools on reserved capacity as the program registers them: a p6-b200 node group on a Capacity Block (EFA on
every network card, RAID0 scratch, no placement group, the block's zone) and a g7e node group targeting an On-
Demand Capacity Reservation, held to botocore's EC2 and EKS models and the pulumi_aws input types."""
from __future__ import annotations

import base64

import pytest

from gpu_platform.decisions.node_pool import ephemeral_storage_gib
from gpu_platform.facts import catalog, names
from tests.support.aws_api import api_problems, args_class, sdk_problems, service_model
from tests.support.blackwell import blackwell
from tests.support.plans import children, component, node_groups, plan
from tests.support.stacks import resources, spec_of

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
PLACEMENT_GROUP = "aws:ec2/placementGroup:PlacementGroup"
ASG_TAG = "aws:autoscaling/tag:Tag"
POOL = "gpu-platform:index:GpuNodePool"
EKS = service_model("eks")
EC2 = service_model("ec2")
CREATE_NODEGROUP = EKS.operation_model("CreateNodegroup").input_shape
TEMPLATE_DATA = EC2.shape_for("RequestLaunchTemplateData")


@pytest.fixture(scope="module")
def planned() -> dict:
    return plan(blackwell())


def _template(plan_: dict, pool: str) -> dict:
    (template,) = children(plan_, component(plan_, POOL, pool), LAUNCH_TEMPLATE)
    return template["inputs"]


# --- the plan's inputs as the APIs take them ---

def _bool(value) -> bool:
    return value in (True, "true")


def create_nodegroup(inputs: dict) -> dict:
    """CreateNodegroup's request for a node group's plan inputs (pulumi_aws names -> the EKS API's)."""
    renames = {"nodeGroupName": "nodegroupName", "subnetIds": "subnets", "nodeRoleArn": "nodeRole"}
    return {renames.get(k, k): v for k, v in inputs.items()}


def _pascal(key: str) -> str:
    return key[0].upper() + key[1:]


def _api_value(key: str, value):
    """A launch template input as RequestLaunchTemplateData holds it (booleans travel as strings)."""
    if isinstance(value, dict):
        return {_pascal(k): _api_value(k, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_api_value(key, v) for v in value]
    if key in ("encrypted", "deleteOnTermination"):
        return _bool(value)
    return value


def launch_template_data(inputs: dict) -> dict:
    """CreateLaunchTemplate's LaunchTemplateData for a launch template's plan inputs."""
    data = {}
    for key, value in inputs.items():
        if key in ("name", "description", "updateDefaultVersion"):
            continue  # request parameters beside the data, or the provider's own
        if key == "vpcSecurityGroupIds":
            data["SecurityGroupIds"] = value
        elif key == "networkInterfaces":
            data["NetworkInterfaces"] = [{("Groups" if k == "securityGroups" else _pascal(k)): _api_value(k, v)
                                          for k, v in i.items()} for i in value]
        elif key == "tagSpecifications":
            data["TagSpecifications"] = [{"ResourceType": s["resourceType"],
                                          "Tags": [{"Key": k, "Value": v} for k, v in s["tags"].items()]} for s in value]
        else:
            data[_pascal(key)] = _api_value(key, value)
    return data


@pytest.mark.parametrize("pool", ["b200-train", "rtx-serve"])
def test_the_node_group_meets_create_nodegroup(planned, pool):
    assert api_problems(create_nodegroup(node_groups(planned)[pool]["inputs"]), CREATE_NODEGROUP) == []


@pytest.mark.parametrize("pool", ["b200-train", "rtx-serve"])
def test_the_launch_template_meets_create_launch_template(planned, pool):
    assert api_problems(launch_template_data(_template(planned, pool)), TEMPLATE_DATA) == []


@pytest.mark.parametrize("pool", ["b200-train", "rtx-serve"])
def test_the_node_group_and_its_template_match_the_provider_input_types(planned, pool):
    from pulumi_aws import ec2, eks

    assert sdk_problems(node_groups(planned)[pool]["inputs"], args_class(eks.NodeGroup), pool) == []
    assert sdk_problems(_template(planned, pool), args_class(ec2.LaunchTemplate), pool) == []


def test_the_api_check_catches_a_bad_market_type(planned):
    data = launch_template_data(_template(planned, "b200-train"))
    data["InstanceMarketOptions"]["MarketType"] = "capacity_block"
    assert api_problems(data, TEMPLATE_DATA)


# --- what EKS requires of a Capacity Block node group (AWS EKS user guide, capacity-blocks-mng) ---

def test_the_capacity_block_group_is_created_as_one(planned):
    inputs = node_groups(planned)["b200-train"]["inputs"]
    assert inputs["capacityType"] == "CAPACITY_BLOCK"
    assert "instanceTypes" not in inputs  # named in the launch template only: EKS fails a group naming it twice


def test_the_capacity_block_template_names_the_market_the_block_and_the_instance_type(planned):
    template = _template(planned, "b200-train")
    assert template["instanceMarketOptions"] == {"marketType": "capacity-block"}
    assert template["capacityReservationSpecification"] == {
        "capacityReservationTarget": {"capacityReservationId": "cr-0b2c4d6e8f0a1b3c5"}}
    assert template["instanceType"] == "p6-b200.48xlarge"


def test_the_capacity_block_group_runs_in_the_blocks_zone_only(planned):
    subnets = node_groups(planned)["b200-train"]["inputs"]["subnetIds"]
    private = [r for r in resources(planned, "aws:ec2/subnet:Subnet") if r["name"].endswith("private-us-east-1a")]
    assert len(subnets) == 1 and len(private) == 1


def test_reserved_pools_get_no_cluster_placement_group(planned):
    assert resources(planned, PLACEMENT_GROUP) == []
    assert "placement" not in _template(planned, "b200-train")


def test_the_odcr_group_is_on_demand_and_targets_its_reservation(planned):
    inputs = node_groups(planned)["rtx-serve"]["inputs"]
    template = _template(planned, "rtx-serve")
    assert inputs["capacityType"] == "ON_DEMAND" and inputs["instanceTypes"] == ["g7e.12xlarge"]
    assert template["capacityReservationSpecification"]["capacityReservationTarget"]["capacityReservationId"] == \
        "cr-0e7e12b0d5a4c3f21"
    assert "instanceMarketOptions" not in template and "instanceType" not in template


# --- p6-b200: EFA on every card, the instance store as scratch, whole GPUs ---

def test_a_p6_b200_pool_takes_8_efa_interfaces_on_8_network_cards(planned):
    interfaces = _template(planned, "b200-train")["networkInterfaces"]
    assert [(i["networkCardIndex"], i["deviceIndex"], i["interfaceType"]) for i in interfaces] == [
        (card, 0 if card == 0 else 1, "efa") for card in range(8)]
    assert catalog.INSTANCE_TYPES["p6-b200.48xlarge"].cards == 8


def test_a_p6_b200_pool_raids_its_eight_instance_store_disks(planned):
    user_data = base64.b64decode(_template(planned, "b200-train")["userData"]).decode()
    assert "localStorage:" in user_data and "strategy: RAID0" in user_data
    pool = next(p for p in spec_of("training-blackwell").node_pools if p.name == "b200-train")
    assert ephemeral_storage_gib(pool) == 30400 * 10**9 // 2**30


def test_the_autoscaler_template_offers_whole_gpus_efa_devices_and_the_scratch(planned):
    pool = component(planned, POOL, "b200-train")
    tags = {t["inputs"]["tag"]["key"]: t["inputs"]["tag"]["value"] for t in children(planned, pool, ASG_TAG)}
    assert tags[names.ca_resource_tag(names.GPU_RESOURCE)] == "8"
    assert tags[names.ca_resource_tag(names.EFA_RESOURCE)] == "8"
    assert tags[names.ca_resource_tag(names.EPHEMERAL_STORAGE)] == f"{30400 * 10**9 // 2**30}Gi"
    assert not any(k.startswith(names.ca_resource_tag(names.MIG_RESOURCE_PREFIX)) for k in tags)
