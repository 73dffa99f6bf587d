"""The stack spec: every rule rejects with the field path and what is valid; near misses pass."""
from datetime import date

import pytest

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.spec.errors import SpecError
from tests.support.stacks import only_spec_problem, spec_problems, stack_platform, unqueued, without_services

TODAY = date(2026, 11, 22)


def problems(platform: dict) -> list[str]:
    return spec_problems(platform, TODAY)


def only_problem(platform: dict, path: str) -> str:
    return only_spec_problem(platform, path, TODAY)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_shipped_stacks_are_valid(stack):
    assert problems(stack_platform(stack)) == []


def test_not_an_object():
    with pytest.raises(SpecError, match="must be an object"):
        parse_platform(["nodePools"])


def test_unknown_field_lists_the_allowed_ones():
    p = stack_platform("dev")
    p["nodePools"][0]["gpuCount"] = 1
    msg = only_problem(p, "nodePools[0].gpuCount")
    assert "unknown field" in msg and "instanceTypes" in msg and "capacityType" in msg


def test_a_misspelt_field_is_named_with_the_one_meant():
    p = stack_platform("dev")
    p["nodePools"][0]["maxSzie"] = p["nodePools"][0].pop("maxSize")
    (msg,) = [x for x in problems(p) if x.startswith("nodePools[0].maxSzie: ")]
    assert msg.endswith("; did you mean `maxSize`?")


def test_a_misspelt_value_is_named_with_the_one_meant():
    p = stack_platform("dev")
    p["nodePools"][0]["capacityType"] = "ondemand"
    assert only_problem(p, "nodePools[0].capacityType").endswith("; did you mean 'on-demand'?")


def test_missing_field_is_named():
    p = stack_platform("dev")
    del p["nodePools"][0]["capacityType"]
    assert "required" in only_problem(p, "nodePools[0].capacityType")


def test_enum_error_says_what_is_allowed():
    p = stack_platform("dev")
    p["nodePools"][0]["capacityType"] = "SPOT"
    assert "'spot', 'on-demand' or 'capacity-block'" in only_problem(p, "nodePools[0].capacityType")


def test_every_problem_is_reported_at_once():
    p = stack_platform("dev")
    p["nodePools"][0]["minSize"] = 9
    p["teams"][1]["name"] = "research"
    assert len(problems(p)) == 2


# --- instance types ---

def test_unknown_instance_type_lists_known_ones():
    p = stack_platform("dev")
    p["nodePools"][0]["instanceTypes"] = ["g5.xlarge", "g5.3xlarge"]
    msg = only_problem(p, "nodePools[0].instanceTypes[1]")
    assert "g5.3xlarge" in msg and "g6.xlarge" in msg


def test_mixed_gpu_counts_in_one_pool_are_refused():
    p = stack_platform("dev")
    p["nodePools"][0]["instanceTypes"] = ["g5.xlarge", "g5.12xlarge"]
    msg = only_problem(p, "nodePools[0].instanceTypes")
    assert "1 x A10G" in msg and "4 x A10G" in msg


def test_mixed_gpu_models_in_one_pool_are_refused():
    p = stack_platform("dev")
    p["nodePools"][0]["instanceTypes"] = ["g5.xlarge", "g6.xlarge"]
    assert "same GPU model and count" in only_problem(p, "nodePools[0].instanceTypes")


def test_same_gpu_shape_across_sizes_is_fine():
    p = stack_platform("dev")
    p["nodePools"][0]["instanceTypes"] = ["g5.xlarge", "g5.2xlarge", "g5.4xlarge", "g5.8xlarge"]
    assert problems(p) == []


# --- sizes ---

def test_min_above_max_is_refused():
    p = stack_platform("dev")
    p["nodePools"][0]["minSize"] = 5
    assert "<= maxSize (4)" in only_problem(p, "nodePools[0].minSize")


def test_min_equal_to_max_is_fine():
    p = stack_platform("dev")
    p["nodePools"][0]["minSize"] = 4
    assert problems(p) == []


# --- time-slicing ---

def test_time_slicing_needs_two_replicas():
    p = stack_platform("dev")
    p["nodePools"][0]["sharing"]["replicas"] = 1
    assert "greater than or equal to 2" in only_problem(p, "nodePools[0].sharing.replicas")


def test_time_slicing_with_two_replicas_is_fine():
    p = stack_platform("dev")
    p["nodePools"][0]["sharing"]["replicas"] = 2
    p["quotaOvercommitRatio"] = 2  # 8 schedulable GPUs for 12 quota'd
    assert problems(p) == []


def test_time_slicing_without_replicas_is_refused():
    p = stack_platform("dev")
    del p["nodePools"][0]["sharing"]["replicas"]
    only_problem(p, "nodePools[0].sharing.replicas")


# --- MIG ---

def test_mig_on_a_gpu_without_mig_is_refused():
    p = stack_platform("dev")
    p["nodePools"][0]["sharing"] = {"mode": "mig", "strategy": "mixed", "layout": {"1g.10gb": 2}}
    msg = only_problem(p, "nodePools[0].sharing.mode")
    assert "A10G has no MIG" in msg and "p5.48xlarge" in msg


def test_mig_profile_must_exist_on_that_gpu():
    p = stack_platform("prod")
    p["nodePools"][0]["sharing"]["layout"] = {"1g.5gb": 7}  # an A100-40GB name on an H100
    msg = only_problem(p, "nodePools[0].sharing.layout")
    assert "1g.5gb not a MIG profile of H100-80GB-HBM3" in msg


def test_a100_40gb_reads_1g_10gb_as_its_double_memory_profile():
    p = unqueued(stack_platform("prod"))  # quotaOvercommitRatio stretches unqueued quotas only
    pool = p["nodePools"][1]  # p4d.24xlarge: A100-SXM4-40GB
    pool["sharing"] = {"mode": "mig", "strategy": "mixed", "layout": {"1g.10gb": 7}}
    assert "at most 4 1g-2m" in only_problem(p, "nodePools[1].sharing.layout")
    pool["sharing"]["layout"] = {"1g.10gb": 4}
    p["teams"][0]["quota"]["migSlices"]["1g.10gb"] = 16  # still offered by the H100 pool
    p["quotaOvercommitRatio"] = 4  # the A100 pool now offers slices, not whole GPUs
    assert problems(p) == []


def test_mig_layout_must_follow_placement_rules_not_just_the_slice_sum():
    p = stack_platform("prod")
    p["nodePools"][0]["sharing"]["layout"] = {"3g.40gb": 2, "1g.10gb": 1}  # 7 compute slices, no room
    assert "placement rules" in only_problem(p, "nodePools[0].sharing.layout")


def test_mig_layout_that_places_is_fine():
    p = stack_platform("prod")
    p["nodePools"][0]["sharing"]["layout"] = {"4g.40gb": 1, "3g.40gb": 1}
    p["teams"][0]["quota"]["migSlices"] = {"3g.40gb": 2}
    p["teams"][2]["quota"]["migSlices"] = {}
    assert problems(p) == []


# --- driver ---

def test_operator_driver_below_a_gpu_minimum_is_refused():
    p = stack_platform("prod")
    p["gpuOperator"]["driver"]["version"] = "470.256.02"
    found = problems(p)
    assert any(f.startswith("gpuOperator.driver.version: ") and "H100-80GB-HBM3 (nodePools[0]) needs driver >= 525.60.13" in f
               for f in found), found


def test_operator_driver_must_be_on_the_chart_list():
    p = stack_platform("prod")
    p["gpuOperator"]["driver"]["version"] = "580.95.05"
    msg = only_problem(p, "gpuOperator.driver.version")
    assert "not supported by gpu-operator v26.7.0" in msg and "580.173.02" in msg


def test_operator_driver_on_the_list_above_every_minimum_is_fine():
    p = stack_platform("prod")
    p["gpuOperator"]["driver"]["version"] = "595.91.07"
    assert problems(p) == []


def test_operator_driver_needs_a_version():
    p = stack_platform("prod")
    del p["gpuOperator"]["driver"]["version"]
    assert "595.91.07" in only_problem(p, "gpuOperator.driver.version")


def test_end_of_life_branch_is_refused_in_prod_only():
    p = stack_platform("prod")
    p["gpuOperator"]["driver"]["version"] = "535.309.01"
    assert "end of life" in only_problem(p, "gpuOperator.driver.version")
    p["environment"] = "dev"
    for pool in p["nodePools"]:
        pool["protect"] = True
    assert problems(p) == []


def test_ami_owned_driver_needs_a_pinned_release():
    p = stack_platform("dev")
    del p["nodePools"][0]["ami"]["releaseVersion"]
    assert "pin the AMI release" in only_problem(p, "nodePools[0].ami.releaseVersion")


def test_ami_release_must_match_the_cluster_version():
    p = stack_platform("dev")
    p["nodePools"][0]["ami"]["releaseVersion"] = "1.32.9-20251120"
    assert "not a release for Kubernetes 1.35" in only_problem(p, "nodePools[0].ami.releaseVersion")


def test_ami_owned_driver_must_not_name_a_version():
    p = stack_platform("dev")
    p["gpuOperator"]["driver"]["version"] = "580.173.02"
    only_problem(p, "gpuOperator.driver.version")


def test_chart_version_must_be_in_the_catalog():
    p = stack_platform("dev")
    p["gpuOperator"]["chartVersion"] = "v25.3.0"
    assert "v26.7.0" in only_problem(p, "gpuOperator.chartVersion")


# --- names ---

def test_duplicate_pool_names_are_refused():
    p = unqueued(stack_platform("prod"))  # a queue naming the renamed pool would be a second problem
    p["nodePools"][2]["name"] = "h100-mig"
    assert "also nodePools[0]" in only_problem(p, "nodePools[2].name")


def test_duplicate_team_names_are_refused():
    p = stack_platform("dev")
    p["teams"][1]["name"] = "research"
    assert "duplicate name 'research'" in only_problem(p, "teams[1].name")


def test_pool_name_must_be_a_dns_label():
    p = stack_platform("dev")
    p["nodePools"][0]["name"] = "A10G_spot"
    only_problem(p, "nodePools[0].name")


# --- rolling updates ---

@pytest.mark.parametrize("value", [0, 101, "0%", "101%", "25", "a quarter", -1])
def test_max_unavailable_must_be_nodes_or_a_percentage(value):
    p = stack_platform("dev")
    p["nodePools"][0]["maxUnavailable"] = value
    assert "node count (1-100) or a percentage" in only_problem(p, "nodePools[0].maxUnavailable")


@pytest.mark.parametrize("value", [1, 100, "1%", "25%", "100%"])
def test_max_unavailable_accepts_nodes_and_percentages(value):
    p = stack_platform("dev")
    p["nodePools"][0]["maxUnavailable"] = value
    assert problems(p) == []


@pytest.mark.parametrize("stack, default", [("prod", 1), ("dev", "25%")])
def test_max_unavailable_defaults_to_one_node_in_prod(stack, default):
    spec = parse_platform(stack_platform(stack), today=TODAY)
    assert {spec.pool_max_unavailable(pool) for pool in spec.node_pools} == {default}


def test_update_strategy_is_default_or_minimal():
    p = stack_platform("dev")
    p["nodePools"][0]["updateStrategy"] = "surge"
    assert "'default' or 'minimal'" in only_problem(p, "nodePools[0].updateStrategy")


# --- team quotas ---

def test_mig_quota_for_a_profile_no_pool_offers_is_refused():
    p = stack_platform("prod")
    p["teams"][0]["quota"]["migSlices"]["7g.80gb"] = 1
    msg = only_problem(p, "teams[0].quota.migSlices")
    assert "nvidia.com/mig-7g.80gb" in msg and "1g.10gb, 2g.20gb, 3g.40gb" in msg


def test_mig_quota_under_single_strategy_is_refused():
    p = stack_platform("prod")
    p["nodePools"][0]["sharing"] = {"mode": "mig", "strategy": "single", "layout": {"1g.10gb": 7}}
    without_services(p)  # its 3g.40gb service has no slice under this layout
    found = problems(p)
    assert found and all(f.startswith("teams[") and "offered: none" in f for f in found), found


def test_gpu_quota_beyond_capacity_is_refused_and_ratio_allows_it():
    p = stack_platform("dev")  # 4 nodes x 1 GPU x 4 replicas = 16 nvidia.com/gpu
    p["teams"][0]["quota"]["gpus"] = 13
    assert "ask for 17 nvidia.com/gpu but the pools provide 16" in only_problem(p, "teams")
    p["quotaOvercommitRatio"] = 1.5
    assert problems(p) == []


# --- cluster ---

def test_cluster_needs_exactly_one_mode():
    p = stack_platform("dev")
    p["cluster"]["existing"] = {"subnetIds": ["subnet-0123456789abcdef0"]}
    assert "exactly one" in only_problem(p, "cluster")


def test_existing_cluster_is_valid_without_create():
    p = stack_platform("dev")
    del p["cluster"]["create"]
    p["cluster"]["existing"] = {"subnetIds": ["subnet-0123456789abcdef0", "subnet-0fedcba9876543210"]}
    assert problems(p) == []


def test_core_addons_must_all_be_pinned_exactly():
    p = stack_platform("dev")
    del p["cluster"]["create"]["addons"]["coredns"]
    p["cluster"]["create"]["addons"]["kube-proxy"] = "latest"
    found = problems(p)
    assert any("missing: coredns" in f for f in found) and any("kube-proxy: must be an exact" in f for f in found)


def test_kubernetes_version_must_be_supported():
    p = stack_platform("dev")
    p["cluster"]["kubernetesVersion"] = "1.29"
    assert any(f.startswith("cluster.kubernetesVersion: must be one of") for f in problems(p))


def test_pool_named_system_is_refused():
    p = stack_platform("dev")
    p["nodePools"][0]["name"] = "system"
    assert "system node group" in only_problem(p, "nodePools[0].name")


def test_admin_roles_on_an_adopted_cluster_are_refused():
    p = stack_platform("prod")
    del p["cluster"]["create"]
    p["cluster"]["existing"] = {"subnetIds": ["subnet-0123456789abcdef0"]}
    without_services(p)  # its load balancer admits the VPC a created cluster has
    assert "adopted" in only_problem(p, "cluster.adminRoleArns")


# --- the API endpoint ---

def prod_with(**create) -> dict:
    p = stack_platform("prod")
    p["cluster"]["create"].update(create)
    return p


@pytest.mark.parametrize("cidrs, path", [
    (["0.0.0.0/0"], "cluster.create.publicAccessCidrs[0]"),
    (["203.0.113.0/24", "0.0.0.0/0"], "cluster.create.publicAccessCidrs[1]"),
])
def test_prod_refuses_a_public_endpoint_open_to_the_internet(cidrs, path):
    message = only_problem(prod_with(publicAccessCidrs=cidrs), path)
    assert "whole internet" in message and "endpointPublicAccess: false" in message


def test_prod_refuses_the_default_cidrs_when_the_field_is_left_out():
    p = stack_platform("prod")
    del p["cluster"]["create"]["publicAccessCidrs"]
    assert "left out" in only_problem(p, "cluster.create.publicAccessCidrs")


def test_prod_accepts_a_closed_endpoint_or_listed_networks():
    p = stack_platform("prod")
    del p["cluster"]["create"]["publicAccessCidrs"]
    p["cluster"]["create"]["endpointPublicAccess"] = False
    assert problems(p) == []
    assert problems(prod_with(publicAccessCidrs=["203.0.113.0/24", "198.51.100.7/32"])) == []


def test_dev_may_leave_the_endpoint_open():
    p = stack_platform("dev")
    p["cluster"]["create"]["publicAccessCidrs"] = ["0.0.0.0/0"]
    assert problems(p) == []


@pytest.mark.parametrize("cidr", ["203.0.113.1/24", "10.0.0.0/33", "2001:db8::/32", "office"])
def test_public_access_cidrs_must_be_ipv4_networks(cidr):
    assert "is not an IPv4 CIDR" in only_problem(prod_with(publicAccessCidrs=[cidr]), "cluster.create.publicAccessCidrs[0]")
