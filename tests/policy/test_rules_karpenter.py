"""Karpenter rules: each with passing and failing NodePools and EC2NodeClasses built as the program builds
them, and the stack rules that now read NodePools beside node groups."""
from __future__ import annotations

import copy
import json

import pytest
from pulumi_policy import StackValidationArgs

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import names
from gpu_platform.facts.karpenter import NODE_CLASS, NODE_POOL
from gpu_platform.render.karpenter import node_class_object, node_pool_object
from gpu_platform.spec.pool_context import PoolContext
from tests.policy.harness import HELM_RELEASE, NODE_GROUP, operator_release, options, run_resource, run_stack, stack_resource, with_provider
from tests.support.stacks import stack_platform

SPEC = parse_platform(stack_platform("karpenter"))
POOLS = {p.name: p for p in SPEC.node_pools}


def node_pool(name: str = "l4-inference") -> dict:
    return copy.deepcopy(node_pool_object(PoolContext.of(SPEC, POOLS[name]), POOLS[name]))


def node_class(name: str = "l4-inference") -> dict:
    return copy.deepcopy(node_class_object(PoolContext.of(SPEC, POOLS[name]), POOLS[name]))


def stack(*pools: tuple[str, dict], classes: tuple[dict, ...] = (), release=None, protect=True, environment="prod"):
    """NodePools (logical name, props), their EC2NodeClasses, the operator release and the aws provider."""
    opts = options(protect=protect)
    res = [stack_resource(NODE_POOL, props, name, opts=opts) for name, props in pools]
    res += [stack_resource(NODE_CLASS, props, f"{props['metadata']['name']}-class", opts=opts) for props in classes]
    if release is not None:
        res.append(stack_resource(HELM_RELEASE, release, "gpu-operator"))
    return with_provider(res, environment) if environment else res


# --- EC2NodeClass rules ---

def test_the_rendered_node_classes_pass():
    for name in POOLS:
        if name in ("l4-inference", "h100-mig"):
            for policy in ("karpenter-ami-pinned", "karpenter-node-class-imdsv2", "karpenter-node-class-volumes-encrypted"):
                assert run_resource(policy, NODE_CLASS, node_class(name)) == []


@pytest.mark.parametrize("alias", ["al2023@latest", "al2023@v2025", "bottlerocket@latest"])
def test_an_unpinned_ami_alias_is_refused(alias):
    props = node_class()
    props["spec"]["amiSelectorTerms"] = [{"alias": alias}]
    (message,) = run_resource("karpenter-ami-pinned", NODE_CLASS, props)
    assert "is not pinned" in message and alias in message


@pytest.mark.parametrize("term, words", [
    ({"tags": {"team": "ml"}}, "selects AMIs by tags"),
    ({"name": "amazon-eks-node-al2023-*"}, "selects AMIs by name"),
    ({"ssmParameter": "/aws/service/eks/optimized-ami/1.33/amazon-linux-2023/x86_64/nvidia/recommended/image_id"},
     "selects AMIs by ssmParameter"),
    ({"alias": "windows2022@latest"}, "not a GPU image family"),
    ({"id": "my-image"}, "is not an AMI id"),
])
def test_selectors_that_follow_new_amis_are_refused(term, words):
    props = node_class()
    props["spec"]["amiSelectorTerms"] = [term]
    (message,) = run_resource("karpenter-ami-pinned", NODE_CLASS, props)
    assert words in message


def test_pinned_ami_ids_pass():
    props = node_class()
    props["spec"]["amiSelectorTerms"] = [{"id": "ami-0123456789abcdef0"}, {"id": "ami-0fedcba9876543210"}]
    assert run_resource("karpenter-ami-pinned", NODE_CLASS, props) == []


@pytest.mark.parametrize("tokens", ["optional", None])
def test_imdsv1_is_refused(tokens):
    props = node_class()
    if tokens is None:
        props["spec"].pop("metadataOptions")
    else:
        props["spec"]["metadataOptions"]["httpTokens"] = tokens
    assert "does not require IMDSv2" in run_resource("karpenter-node-class-imdsv2", NODE_CLASS, props)[0]


def test_unencrypted_or_undeclared_volumes_are_refused():
    props = node_class()
    props["spec"]["blockDeviceMappings"][0]["ebs"]["encrypted"] = False
    assert "is not encrypted" in run_resource("karpenter-node-class-volumes-encrypted", NODE_CLASS, props)[0]
    props["spec"].pop("blockDeviceMappings")
    assert "declares no EBS volume" in run_resource("karpenter-node-class-volumes-encrypted", NODE_CLASS, props)[0]


# --- NodePool rules ---

def test_a_gpu_node_pool_without_the_gpu_taint_is_refused():
    props = node_pool()
    assert run_resource("karpenter-gpu-pool-tainted", NODE_POOL, props, name="l4-inference") == []
    props["spec"]["template"]["spec"]["taints"] = [{"key": "workload", "value": "inference", "effect": "NoSchedule"}]
    (message,) = run_resource("karpenter-gpu-pool-tainted", NODE_POOL, props, name="l4-inference")
    assert message.startswith("NodePool 'l4-inference' (pool l4-inference) has no nvidia.com/gpu NoSchedule taint")


def test_a_gpu_taint_with_a_weaker_effect_is_refused():
    props = node_pool()
    props["spec"]["template"]["spec"]["taints"][0]["effect"] = "PreferNoSchedule"
    assert run_resource("karpenter-gpu-pool-tainted", NODE_POOL, props)


def test_a_critical_pool_on_spot_is_refused():
    props = node_pool()
    assert props["spec"]["template"]["metadata"]["labels"][names.CRITICAL_LABEL] == "true"
    assert run_resource("karpenter-critical-pool-on-demand", NODE_POOL, props) == []
    props["spec"]["template"]["spec"]["requirements"][1]["values"] = ["spot", "on-demand"]
    assert "is critical but uses MIXED capacity" in run_resource("karpenter-critical-pool-on-demand", NODE_POOL, props)[0]


def test_instance_types_must_be_named_and_allowed():
    props = node_pool()
    assert run_resource("karpenter-instance-types-allowed", NODE_POOL, props) == []
    config = {"allowedInstanceTypes": ["g6.2xlarge"]}
    assert "g6.4xlarge, not on the allowed list" in run_resource("karpenter-instance-types-allowed", NODE_POOL, props,
                                                                   config=config)[0]
    props["spec"]["template"]["spec"]["requirements"] = props["spec"]["template"]["spec"]["requirements"][1:]
    assert "names no instance types" in run_resource("karpenter-instance-types-allowed", NODE_POOL, props)[0]


def test_mig_only_on_mig_capable_instances():
    props = node_pool("h100-mig")
    assert run_resource("karpenter-mig-on-capable-instances", NODE_POOL, props) == []
    props["spec"]["template"]["spec"]["requirements"][0]["values"] = ["g6.2xlarge"]
    assert "have no MIG" in run_resource("karpenter-mig-on-capable-instances", NODE_POOL, props)[0]


# --- stack rules: protection and the disruption window ---

def test_unprotected_node_pools_are_refused_in_prod_only():
    pools = [("l4-inference", node_pool())]
    assert run_stack("karpenter-pool-protected", stack(*pools, classes=(node_class(),))) == []
    found = run_stack("karpenter-pool-protected", stack(*pools, classes=(node_class(),), protect=False))
    assert [m.split(" is ")[0] for m, _ in found] == ["NodePool 'l4-inference'", "EC2NodeClass 'l4-inference-class'"]
    assert run_stack("karpenter-pool-protected", stack(*pools, protect=False, environment="dev")) == []


def tagged_class(environment=None) -> dict:
    """The pool's EC2NodeClass as a library KarpenterNodePool renders it: tagged with the environment its program
    gave it, or untagged."""
    props = node_class()
    props["spec"]["tags"].pop(names.ENVIRONMENT_TAG)
    if environment:
        props["spec"]["tags"][names.ENVIRONMENT_TAG] = environment
    return props


@pytest.mark.parametrize("policy", ["karpenter-pool-protected", "karpenter-disruption-window"])
def test_a_pool_is_judged_by_the_environment_its_node_class_is_tagged_with(policy):
    pool = node_pool()
    pool["spec"]["disruption"]["budgets"] = [{"nodes": "25%"}]
    dev = stack(("l4-inference", pool), classes=(tagged_class("dev"),), protect=False, environment=None)
    assert run_stack(policy, dev) == []
    untagged = stack(("l4-inference", pool), classes=(tagged_class(),), protect=False, environment=None)
    found = [m for m, _ in run_stack(policy, untagged)]
    assert found and all("NodePool 'l4-inference'" in m or "EC2NodeClass" in m for m in found)
    assert policy != "karpenter-pool-protected" or all("`environment` on the pool's component" in m for m in found)
    assert run_stack(policy, dev, {"environment": "prod"})  # the policy config wins over the tag


def test_each_pool_is_judged_by_its_own_tag():
    """An untagged pool beside a dev one is still held to prod, as a node group is."""
    other = node_pool("h100-mig")
    other_class = node_class("h100-mig")
    other_class["spec"]["tags"][names.ENVIRONMENT_TAG] = "dev"
    resources = stack(("l4-inference", node_pool()), ("h100-mig", other), classes=(tagged_class(), other_class),
                      protect=False, environment=None)
    found = [m.split(" is ")[0] for m, _ in run_stack("karpenter-pool-protected", resources)]
    assert found == ["NodePool 'l4-inference'", "EC2NodeClass 'l4-inference-class'"]


def test_the_stack_s_environment_is_what_its_pools_node_classes_agree_on():
    """Stack-wide rules (lifecycle, logging, the disruption gate) read the pools' tags when nothing declares one."""
    from gpu_platform.policy.common import stack_environment

    def env(*classes):
        resources = [stack_resource(NODE_CLASS, c, f"class-{i}") for i, c in enumerate(classes)]
        return stack_environment(StackValidationArgs(resources, {}), {})

    assert env(tagged_class("dev")) == "dev"
    assert env(tagged_class()) is None
    assert env(tagged_class("dev"), tagged_class("staging")) is None
    assert stack_environment(StackValidationArgs(stack(classes=(tagged_class("dev"),)), {}), {}) == "prod"


def test_the_rendered_prod_node_pools_keep_to_their_window():
    assert run_stack("karpenter-disruption-window", stack(("l4-inference", node_pool()), ("h100-mig", node_pool("h100-mig")))) == []


def test_a_budget_allowing_voluntary_disruption_outside_the_window_is_refused():
    props = node_pool()
    props["spec"]["disruption"]["budgets"] = [{"nodes": "1", "reasons": ["Drifted", "Underutilized"]},
                                              {"nodes": "0", "schedule": "0 9 * * mon-fri", "duration": "8h"}]
    found = run_stack("karpenter-disruption-window", stack(("l4-inference", props)))
    assert [m for m, _ in found] == [
        "NodePool 'l4-inference' (pool l4-inference) allows voluntary disruption (Drifted) outside its window "
        "(0 2 * * sun for 4h), e.g. at Sun 00:00 UTC: set spec.disruption.budgets to allow nodes: \"0\" at every minute "
        "outside the window (stack file: karpenter.disruptionWindow writes them)",
        "NodePool 'l4-inference' (pool l4-inference) allows voluntary disruption (Underutilized) outside its window "
        "(0 2 * * sun for 4h), e.g. at Sun 00:00 UTC: set spec.disruption.budgets to allow nodes: \"0\" at every minute "
        "outside the window (stack file: karpenter.disruptionWindow writes them)"]
    assert found[0][1].endswith("::l4-inference")


def test_karpenter_s_default_budget_is_refused_in_prod():
    props = node_pool()
    props["spec"]["disruption"].pop("budgets")
    assert len(run_stack("karpenter-disruption-window", stack(("l4-inference", props)))) == 2


def test_a_closed_budget_that_misses_one_hour_is_found():
    props = node_pool()
    budgets = props["spec"]["disruption"]["budgets"]
    closed = next(b for b in budgets if b.get("schedule"))
    closed["duration"] = "163h"  # Sun 01:00-02:00, just before the window, left open
    (found,) = [m for m, _ in run_stack("karpenter-disruption-window", stack(("l4-inference", props))) if "Drifted" in m]
    assert "Sun 01:00 UTC" in found


def test_the_window_may_come_from_the_policy_config():
    props = node_pool()
    props["metadata"].pop("annotations")
    (message, _) = run_stack("karpenter-disruption-window", stack(("l4-inference", props)))[0]
    assert "declares no disruption window" in message
    config = {"disruptionWindow": {"schedule": "0 2 * * sun", "duration": "4h"}}
    assert run_stack("karpenter-disruption-window", stack(("l4-inference", props)), config) == []
    config = {"disruptionWindow": {"schedule": "0 2 * * mon", "duration": "4h"}}  # not the window the budgets keep
    assert run_stack("karpenter-disruption-window", stack(("l4-inference", props)), config)


@pytest.mark.parametrize("field, value, words", [
    ("consolidationPolicy", "WhenEmptyOrUnderutilized", "consolidates WhenEmptyOrUnderutilized nodes"),
    ("expireAfter", "720h", "expires nodes after 720h"),
])
def test_busy_nodes_are_never_consolidated_nor_expired_in_prod(field, value, words):
    props = node_pool()
    if field == "expireAfter":
        props["spec"]["template"]["spec"]["expireAfter"] = value
    else:
        props["spec"]["disruption"][field] = value
    (message, _) = run_stack("karpenter-disruption-window", stack(("l4-inference", props)))[0]
    assert words in message


def test_the_window_rule_is_not_enforced_outside_its_environments():
    props = node_pool()
    props["spec"]["disruption"]["budgets"] = [{"nodes": "25%"}]
    assert run_stack("karpenter-disruption-window", stack(("l4-inference", props), environment="dev")) == []


# --- driver ownership ---

def test_an_operator_driver_beside_an_al2023_node_class_is_refused():
    release = operator_release(driver={"enabled": True, "version": "580.173.02"})
    found = run_stack("karpenter-driver-ami-consistency", stack(("l4-inference", node_pool()), classes=(node_class(),),
                                                                 release=release))
    assert "runs AL2023 images, which ship their own NVIDIA driver" in found[0][0]
    assert run_stack("karpenter-driver-ami-consistency", stack(("l4-inference", node_pool()), classes=(node_class(),),
                                                               release=operator_release())) == []


def test_a_custom_image_without_the_operator_driver_is_refused():
    props = node_class()
    props["spec"].update(amiFamily="Custom", amiSelectorTerms=[{"id": "ami-0c3f9e8a1b2d4e567"}])
    found = run_stack("karpenter-driver-ami-consistency", stack(("l4-inference", node_pool()), classes=(props,),
                                                                release=operator_release()))
    assert "custom (Ubuntu) image" in found[0][0]


# --- the pool rules of stacks read NodePools too ---

def test_a_node_pool_selecting_a_missing_mig_config_is_refused():
    release = operator_release(mig={"pool-other": {"1g.10gb": 7}}, strategy="single")
    found = run_stack("mig-layout-valid", stack(("h100-mig", node_pool("h100-mig")), release=release))
    assert "NodePool 'h100-mig' (pool h100-mig) selects MIG config 'pool-h100-mig'" in found[0][0]
    release = operator_release(mig={"pool-h100-mig": {"1g.10gb": 7}}, strategy="single")
    assert run_stack("mig-layout-valid", stack(("h100-mig", node_pool("h100-mig")), release=release)) == []


def test_the_operator_must_tolerate_a_node_pool_s_taints():
    props = node_pool()
    props["spec"]["template"]["spec"]["taints"].append({"key": "workload", "value": "inference", "effect": "NoSchedule"})
    found = run_stack("operator-tolerates-gpu-taints", stack(("l4-inference", props), release=operator_release()))
    assert len(found) == 2 and "is tainted workload=inference:NoSchedule" in found[0][0]


def test_time_slicing_on_a_prod_node_pool_is_refused():
    props = node_pool()
    props["spec"]["template"]["metadata"]["labels"][names.DEVICE_PLUGIN_CONFIG_LABEL] = "ts-4"
    release = operator_release(time_slicing={"ts-4": 4})
    found = run_stack("time-slicing-forbidden", stack(("l4-inference", props), release=release))
    assert "time-slices each GPU 4 ways" in found[0][0]


def test_team_quotas_count_node_pool_capacity():
    from tests.policy.harness import namespace, quota

    team = [stack_resource("kubernetes:core/v1:Namespace", namespace("ml"), "ml"),
            stack_resource("kubernetes:core/v1:ResourceQuota", quota("ml", {"requests.nvidia.com/gpu": "9"}), "ml")]
    pools = stack(("l4-inference", node_pool()), release=operator_release())
    assert run_stack("team-quota-within-capacity", pools + team)  # 9 asked, 8 L4 GPUs at limits.nodes 8
    team[1] = stack_resource("kubernetes:core/v1:ResourceQuota", quota("ml", {"requests.nvidia.com/gpu": "8"}), "ml")
    assert run_stack("team-quota-within-capacity", pools + team) == []


def test_the_budget_prices_node_pools_at_limits_nodes():
    pools = stack(("l4-inference", node_pool()), classes=(node_class(),))
    # 8 x g6.2xlarge on demand ($0.9776/h) x 730 h = $5,709.18, plus 8 x 200 GiB of gp3 at $0.08 = $128.
    assert run_stack("monthly-budget", pools, {"monthlyUsd": 5838}) == []
    (message, _) = run_stack("monthly-budget", pools, {"monthlyUsd": 5836})[0]
    assert "costs about $5,837/month" in message


def test_node_groups_and_node_pools_are_read_together():
    release = operator_release(mig={}, strategy="none")
    res = stack(("l4-inference", node_pool()), release=release)
    from tests.policy.harness import gpu_node_group

    res.append(stack_resource(NODE_GROUP, gpu_node_group(taints=[{"effect": "NO_SCHEDULE", "key": names.GPU_TAINT_KEY,
                                                                  "value": "present"},
                                                                 {"effect": "NO_EXECUTE", "key": "x", "value": "y"}]), "a10g"))
    found = run_stack("operator-tolerates-gpu-taints", res)
    assert {m.split(" is ")[0] for m, _ in found} == {"node group 'a10g' (pool a10g)"}  # the NodePool is tolerated


# --- the replacement guard holds locked NodePools ---

@pytest.fixture
def pool_lock(tmp_path):
    from gpu_platform.policy.replacement import new_lock

    path = tmp_path / "lock.json"
    path.write_text(json.dumps(new_lock("prod", {}, {}, {"l4-inference": node_pool()})))
    return path


def test_a_renamed_locked_node_pool_is_refused_as_a_replacement(pool_lock):
    config = {"lockFile": str(pool_lock)}
    assert run_resource("node-group-replacement-guard", NODE_POOL, node_pool(), name="l4-inference", config=config) == []
    props = node_pool()
    props["metadata"]["name"] = "l4-serving"
    (message,) = run_resource("node-group-replacement-guard", NODE_POOL, props, name="l4-inference", config=config)
    assert message.startswith("locked NodePool 'l4-inference': metadata.name would change from \"l4-inference\" to "
                              "\"l4-serving\", which REPLACES the NodePool")


def test_a_locked_node_pool_missing_from_the_stack_is_refused(pool_lock):
    config = {"lockFile": str(pool_lock)}
    assert run_stack("locked-node-groups-present", stack(("l4-inference", node_pool())), config) == []
    (found,) = run_stack("locked-node-groups-present", stack(("h100-mig", node_pool("h100-mig"))), config)
    assert "locked NodePool 'l4-inference' is no longer declared" in found[0]


def test_the_tag_is_read_though_another_tag_is_computed_during_the_preview():
    """A cluster name that is not known yet leaves the pool's environment tag readable."""
    from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

    props = tagged_class("dev")
    props["spec"]["tags"][names.CLUSTER_TAG] = UNKNOWN_STRING_VALUE
    resources = stack(("l4-inference", node_pool()), classes=(props,), protect=False, environment=None)
    assert run_stack("karpenter-pool-protected", resources) == []
