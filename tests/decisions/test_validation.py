"""The stack file's team, quota, access and model-cache rules: one refusal and one acceptance each,
asserting the field path a user must edit and what the message tells them."""
import pytest

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.spec.models import quantity_value
from tests.support.stacks import spec_problems as problems, without_services
from tests.support.stacks import stack_platform, unqueued

ARN = "arn:aws:iam::123456789012:role/{}"


def at(found: list[str], path: str) -> list[str]:
    return [p for p in found if p.startswith(f"{path}: ")]


def prod(**team_changes) -> dict:
    """prod with teams[0] (research) changed."""
    platform = stack_platform("prod")
    platform["teams"][0].update(team_changes)
    return platform


def test_stacks_are_valid():
    assert problems(stack_platform("dev")) == [] and problems(stack_platform("prod")) == []


# --- names ---

@pytest.mark.parametrize("name", ["kube-system", "monitoring", "gpu-operator", "default"])
def test_reserved_namespace_is_refused(name):
    (msg,) = at(problems(prod(name=name)), "teams[0].name")
    assert f"{name!r} is a system namespace" in msg and "kube-public" in msg


def test_team_named_like_the_stacks_own_prometheus_namespace_is_refused():
    platform = prod(name="observability")
    platform["monitoring"]["prometheus"]["namespace"] = "observability"
    (msg,) = at(problems(platform), "teams[0].name")
    assert "'observability' is a system namespace" in msg


def test_ordinary_team_name_is_accepted():
    assert at(problems(prod(name="vision")), "teams[0].name") == []


def test_duplicate_team_name_is_refused():
    platform = stack_platform("prod")
    platform["teams"][2]["name"] = "research"
    (msg,) = at(problems(platform), "teams[2].name")
    assert "duplicate name 'research' (also teams[0])" in msg


# --- MIG quotas only for profiles a pool provides ---

def test_mig_quota_for_a_profile_no_pool_offers_is_refused():
    platform = prod(quota={"gpus": 12, "migSlices": {"7g.80gb": 1}, "cpu": "256", "memory": "2Ti"})
    (msg,) = at(problems(platform), "teams[0].quota.migSlices")
    assert "no pool provides nvidia.com/mig-7g.80gb" in msg
    assert "offered: 1g.10gb, 2g.20gb, 3g.40gb" in msg


def test_mig_quota_without_any_mig_pool_says_none_offered():
    platform = stack_platform("dev")
    platform["teams"][0]["quota"]["migSlices"] = {"1g.10gb": 1}
    (msg,) = at(problems(platform), "teams[0].quota.migSlices")
    assert msg.endswith("offered: none")


def test_mig_quota_for_an_offered_profile_is_accepted():
    platform = prod(quota={"gpus": 12, "migSlices": {"2g.20gb": 2}, "cpu": "256", "memory": "2Ti"})
    assert at(problems(platform), "teams[0].quota.migSlices") == []


# --- role ARNs ---

@pytest.mark.parametrize("field", ["developerRoleArns", "adminRoleArns"])
def test_malformed_role_arn_is_refused(field):
    platform = prod(access={field: ["arn:aws:iam::123456789012:user/alice"]})
    (msg,) = at(problems(platform), f"teams[0].access.{field}[0]")
    assert "must be an IAM role ARN" in msg


@pytest.mark.parametrize("arn", [ARN.format("ml/researchers"), "arn:aws-us-gov:iam::123456789012:role/ml"])
def test_role_arn_with_path_or_partition_is_accepted(arn):
    assert problems(prod(access={"developerRoleArns": [arn]})) == []


def test_cluster_admin_role_listed_by_a_team_is_refused():
    platform = prod(access={"adminRoleArns": [ARN.format("platform-admins")]})
    (msg,) = at(problems(platform), "teams[0].access.adminRoleArns[0]")
    assert "is a cluster admin (cluster.adminRoleArns)" in msg and "one access entry per cluster" in msg


def test_role_shared_by_two_teams_is_accepted():
    platform = stack_platform("prod")
    shared = ARN.format("ml-oncall")
    platform["teams"][0]["access"] = {"developerRoleArns": [shared]}
    platform["teams"][1]["access"] = {"developerRoleArns": [shared]}
    assert problems(platform) == []


# --- quota totals against what the pools provide at max size ---

def test_gpu_quotas_beyond_capacity_are_refused():
    platform = prod(quota={"gpus": 13, "migSlices": {"1g.10gb": 16, "3g.40gb": 2}, "cpu": "256", "memory": "2Ti"})
    (msg,) = at(problems(platform), "teams")
    assert "team quotas ask for 23 nvidia.com/gpu but the pools provide 22 at max size" in msg
    assert "quotaOvercommitRatio 1 allows 22" in msg


def test_overcommit_ratio_admits_quotas_up_to_the_ratio():
    platform = unqueued(prod(quota={"gpus": 13, "migSlices": {"1g.10gb": 16, "3g.40gb": 2}, "cpu": "256",
                                    "memory": "2Ti"}))  # queued quotas are guarantees: no overcommit
    platform["quotaOvercommitRatio"] = 1.5
    assert problems(platform) == []


def test_overcommit_ratio_still_refuses_beyond_it():
    platform = stack_platform("dev")  # 16 time-sliced GPUs at max size; teams ask 12
    platform["teams"][0]["quota"]["gpus"] = 30
    platform["quotaOvercommitRatio"] = 2
    (msg,) = at(problems(platform), "teams")
    assert "ask for 34 nvidia.com/gpu but the pools provide 16" in msg and "allows 32" in msg


def test_mig_slice_quotas_beyond_capacity_are_refused():
    platform = prod(quota={"gpus": 12, "migSlices": {"1g.10gb": 33}, "cpu": "256", "memory": "2Ti"})
    (msg,) = at(problems(platform), "teams")
    assert "ask for 33 nvidia.com/mig-1g.10gb but the pools provide 32" in msg


# --- the model cache ---

def test_enabled_cache_needs_a_pinned_addon_version():
    platform = stack_platform("dev")
    del platform["modelCache"]["addonVersion"]
    (msg,) = at(problems(platform), "modelCache.addonVersion")
    assert "pin the aws-efs-csi-driver add-on version" in msg


def test_disabled_cache_needs_no_addon_version():
    platform = stack_platform("dev")
    platform["modelCache"] = {"enabled": False}
    without_services(platform)
    assert problems(platform) == []


def test_addon_version_must_be_exact():
    platform = stack_platform("dev")
    platform["modelCache"]["addonVersion"] = "latest"
    assert at(problems(platform), "modelCache.addonVersion")


def test_team_storage_quota_below_the_cache_claim_is_refused():
    platform = stack_platform("dev")
    platform["teams"][1]["quota"]["storage"] = "500Gi"  # the claim asks 1Ti
    (msg,) = at(problems(platform), "teams[1].quota.storage")
    assert "must be >= modelCache.pvcSize (1Ti)" in msg


def test_team_storage_quota_equal_to_the_claim_is_accepted():
    platform = stack_platform("dev")
    platform["teams"][1]["quota"]["storage"] = "1024Gi"
    assert problems(platform) == []


def test_team_without_claims_left_for_the_cache_is_refused():
    platform = stack_platform("dev")
    platform["teams"][0]["quota"]["persistentVolumeClaims"] = 0
    (msg,) = at(problems(platform), "teams[0].quota.persistentVolumeClaims")
    assert "model-cache claim counts against it" in msg


def test_claim_rules_do_not_apply_without_the_cache():
    platform = stack_platform("dev")
    platform["modelCache"] = {"enabled": False}
    without_services(platform)
    platform["teams"][0]["quota"].update(persistentVolumeClaims=0, storage="10Gi")
    assert problems(platform) == []


# --- container defaults ---

def test_container_defaults_default_to_modest_requests():
    spec = parse_platform(stack_platform("dev"))
    assert (spec.teams[0].container_defaults.cpu, spec.teams[0].container_defaults.memory) == ("250m", "512Mi")


def test_container_default_must_be_a_quantity():
    platform = stack_platform("dev")
    platform["teams"][0]["containerDefaults"] = {"cpu": "lots"}
    assert at(problems(platform), "teams[0].containerDefaults.cpu")


# --- quantities ---

@pytest.mark.parametrize("text, value", [("1Ti", 2**40), ("500Gi", 500 * 2**30), ("2T", 2 * 10**12),
                                         ("250m", 0.25), ("1.5Gi", 1.5 * 2**30), ("64", 64)])
def test_quantity_value(text, value):
    assert quantity_value(text) == pytest.approx(value)
