"""Components alone check what they send to AWS as the stack file does: the region, zones and resource ids
given as plain strings (facts/syntax.py), each problem naming the argument."""
from __future__ import annotations

import pytest

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.resources.adopted_cluster import _check as adopted_check
from gpu_platform.resources.cluster import ClusterArgs, cluster_settings
from gpu_platform.resources.node_pool import GpuNodePoolArgs
from gpu_platform.resources.pool_args import pool_from_args
from gpu_platform.spec.errors import SpecError
from tests.support.stacks import stack_platform


def _cluster(**changes) -> dict:
    """The dev stack's cluster as Cluster's arguments, with `changes`."""
    spec = parse_platform(stack_platform("dev"))
    c, create = spec.cluster, spec.cluster.create
    args = ClusterArgs(cluster_name=c.name, kubernetes_version=c.kubernetes_version, region="us-east-1",
                       addons=dict(create.addons), system_nodes=create.system_nodes.model_dump(),
                       vpc=create.vpc.model_dump(exclude_none=True), environment=spec.environment)
    return {**args, **changes}


def problems(check, *args) -> list[str]:
    with pytest.raises(SpecError) as err:
        check(*args)
    return err.value.problems


def test_a_cluster_refuses_a_region_that_is_not_one():
    assert problems(cluster_settings, "c", _cluster(region="us-east-1; rm -rf /")) == [
        "Cluster 'c': region: 'us-east-1; rm -rf /' is not an AWS region name such as us-east-1 or eu-central-1"]


def test_a_cluster_refuses_zones_of_another_region():
    vpc = {"cidr": "10.40.0.0/16", "availability_zones": 2, "zones": ["us-east-1a", "eu-west-1b"]}
    assert problems(cluster_settings, "c", _cluster(vpc=vpc)) == [
        "Cluster 'c': vpc.zones[1]: 'eu-west-1b' is a zone of eu-west-1, not of the stack's region us-east-1 (aws:region)"]


def test_a_cluster_refuses_tags_aws_would_not_take():
    found = problems(cluster_settings, "c", _cluster(tags={"aws:owner": "me", "team": "x" * 257}))
    assert [p.split(": ")[1] for p in found] == ['tags["aws:owner"]', 'tags["team"]'], found
    assert "the 'aws:' prefix is reserved for AWS" in found[0] and "AWS takes at most 256" in found[1]


def test_a_cluster_refuses_subnet_ids_and_cidrs_aws_would_not_take():
    args = _cluster(subnet_ids=["subnet-xyz; drop"], public_access_cidrs=["0.0.0.0/0 "])
    args.pop("vpc")
    found = problems(cluster_settings, "c", args)
    assert [p.split(": ")[1] for p in found] == ["subnet_ids[0]", "public_access_cidrs[0]"], found
    assert "'0.0.0.0/0 ' is not an IPv4 CIDR block" in found[1]


def test_an_adopted_cluster_refuses_ids_of_the_wrong_form():
    found = problems(adopted_check, "a", {"cluster_name": "x", "region": "eu-west-1x", "subnet_ids": ["subnet-1"],
                                          "node_security_group_ids": ["sg-0a1b2c3d", "sg-nope"]})
    assert found == [
        "AdoptedCluster 'a': region: 'eu-west-1x' is not an AWS region name such as us-east-1 or eu-central-1",
        "AdoptedCluster 'a': subnet_ids[0]: 'subnet-1' is not a subnet id such as subnet-0a1b2c3d4e5f60718 (8 or 17 "
        "hexadecimal digits)",
        "AdoptedCluster 'a': node_security_group_ids[1]: 'sg-nope' is not a security group id such as sg-0a1b2c3d4e5f60718 (8 "
        "or 17 hexadecimal digits)"]


def test_a_node_pool_refuses_labels_taints_and_ids_as_the_stack_file_does():
    args = {"cluster_name": "gpu-dev", "instance_types": ["g5.xlarge"], "capacity_type": "spot", "max_size": 2, "subnet_ids": ["subnet-1"],
            "ami": {"type": "AL2023_x86_64_NVIDIA", "release_version": "1.35.7-20260911"}, "labels": {"a": "x\ny"},
            "taints": [{"key": "workload", "value": "a;b", "effect": "NoSchedule"}], "min_size": False}
    found = problems(pool_from_args, GpuNodePoolArgs, "p", args, "managed-node-group")
    assert [p.split(": ")[1] for p in found] == ["subnet_ids[0]", "min_size", "taints[0].value", "labels.a"], found
    assert found[1] == "GpuNodePool 'p': min_size: must be a number, not false"


def _datasets(**fsx) -> dict:
    return {"cluster_name": "c", "vpc_id": "vpc-0a1b2c3d", "subnet_id": "subnet-0a1b2c3d",
            "node_security_group_id": "sg-0a1b2c3d",
            "team_namespaces": {"research": "research"},
            "fsx_lustre": {"addon_version": "v1.7.0-eksbuild.1", **fsx}}


@pytest.mark.parametrize("fsx, words", [
    ({"data_repository": {"s3_path": "s3://gpu..x/training"}},
     "Datasets 'd': fsx_lustre.data_repository.s3_path: S3 bucket name 'gpu..x' holds two adjacent periods"),
    ({"data_repository": {"s3_path": "s3://192.168.5.4"}},
     "Datasets 'd': fsx_lustre.data_repository.s3_path: S3 bucket name '192.168.5.4' is formatted as an IP address"),
    ({"claim_size": "0"}, "Datasets 'd': fsx_lustre.claim_size: '0': a claim's storage request must be above zero"),
    ({"storage_capacity_gib": "1200"}, "Datasets 'd': fsx_lustre.storage_capacity_gib: must be a number, not the text"),
    ({"data_repository": {"s3_path": "s3://gpu-data", "file_system_path": "/" + "d" * 4090}},
     "Datasets 'd': fsx_lustre.data_repository.file_system_path: the link of team 'research': file system path"),
])
def test_datasets_refuse_storage_aws_and_kubernetes_refuse(fsx, words):
    from gpu_platform.resources.datasets import _file_system

    found = problems(_file_system, "d", _datasets(**fsx))
    assert len(found) == 1 and found[0].startswith(words), found


def test_datasets_take_a_valid_link():
    from gpu_platform.resources.datasets import _file_system

    config = _file_system("d", _datasets(data_repository={"s3_path": "s3://gpu.prod-data/a", "file_system_path": "/ns1"}))
    assert config.data_repository.s3_path == "s3://gpu.prod-data/a"
