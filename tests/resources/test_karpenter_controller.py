"""Karpenter's controller: chart values, its identity and IAM (held to botocore's service models), the
interruption queue and rules, the node role's access entry and the discovery tags."""
from __future__ import annotations

import json
import re

import pytest
import yaml

from gpu_platform.decisions.karpenter import untagged_subnets
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render.iam import trust_policy
from gpu_platform.render.karpenter import controller_values
from gpu_platform.render.karpenter_iam import controller_policies, interruption_rules, queue_policy
from gpu_platform.render.operator_values import unknown_keys
from tests.support.aws_api import service_model
from tests.support.stacks import cached_plan, resources, stack_platform, without_services

CONTROLLER = "gpu-platform:karpenter:KarpenterController"
NODE_ROLE = "arn:aws:iam::123456789012:role/gpu-karpenter-karpenter-nodes"
QUEUE = "arn:aws:sqs:us-east-1:123456789012:gpu-karpenter-karpenter"
# IAM actions that are permissions, not API operations (AWS service authorization reference).
PERMISSION_ONLY = {"iam:PassRole"}


@pytest.fixture(scope="module")
def plan():
    return cached_plan(stack_platform("karpenter"), stack="karpenter")


@pytest.fixture(scope="module")
def spec():
    return parse_platform(stack_platform("karpenter"))


def named(plan: dict, type_: str) -> dict[str, dict]:
    return {r["name"]: r for r in resources(plan, type_)}


def chart_defaults() -> dict:
    return yaml.safe_load((catalog.UPSTREAM / catalog.KARPENTER_RELEASES["1.14.1"].values_file).read_text())


# --- chart values ---

def test_values_set_only_keys_the_pinned_chart_has(spec):
    """Every key against the chart's own values.yaml (facts/upstream); node selector and resources are pod data."""
    assert unknown_keys(controller_values(spec), chart_defaults(), ("nodeSelector", "controller.resources")) == []


def test_the_guard_refuses_a_key_the_chart_does_not_have(spec):
    values = controller_values(spec)
    values["settings"]["featureGates"]["nodeRepairs"] = True
    assert unknown_keys(values, chart_defaults(), ("nodeSelector",)) == ["settings.featureGates.nodeRepairs"]


def test_repairing_karpenter_pools_turn_on_the_node_repair_feature_gate(spec):
    assert controller_values(spec)["settings"]["featureGates"] == {"nodeRepair": True}
    assert chart_defaults()["settings"]["featureGates"]["nodeRepair"] is False  # alpha: off unless asked for


def test_without_repair_the_feature_gate_is_left_to_the_chart():
    platform = stack_platform("karpenter")
    for p in platform["nodePools"]:
        p["repair"] = {"enabled": False}
    assert "featureGates" not in controller_values(parse_platform(platform))["settings"]


def test_a_reserved_pool_sets_the_reserved_capacity_gate_the_pinned_chart_has():
    from tests.support.blackwell import karpenter_twin

    values = controller_values(parse_platform(karpenter_twin()))
    assert values["settings"]["featureGates"]["reservedCapacity"] is True
    assert unknown_keys(values, chart_defaults(), ("nodeSelector", "controller.resources")) == []


def test_values_name_the_cluster_and_its_interruption_queue(spec, plan):
    values = controller_values(spec)
    queue = named(plan, "aws:sqs/queue:Queue")["karpenter-interruptions"]["inputs"]["name"]
    assert {k: values["settings"][k] for k in ("clusterName", "interruptionQueue")} == {
        "clusterName": "gpu-karpenter", "interruptionQueue": queue}


def test_the_controller_runs_on_system_nodes_twice_in_prod(spec):
    values = controller_values(spec)
    assert values["nodeSelector"][names.ROLE_LABEL] == names.SYSTEM_ROLE and values["replicas"] == 2
    assert controller_values(parse_platform(stack_platform("dev")))["replicas"] == 1


def test_the_release_is_the_pinned_oci_chart_after_its_identity(plan):
    release = named(plan, "kubernetes:helm.sh/v3:Release")["karpenter"]
    inputs = release["inputs"]
    assert (inputs["chart"], inputs["version"], inputs["namespace"]) == (catalog.KARPENTER_CHART, "1.14.1", "kube-system")
    assert "repositoryOpts" not in inputs  # an OCI chart names its registry itself
    depends = set(release["options"]["dependsOn"])
    identity = [r["urn"] for t in ("aws:iam/rolePolicy:RolePolicy", "aws:eks/podIdentityAssociation:PodIdentityAssociation",
                                   "aws:sqs/queuePolicy:QueuePolicy", "aws:cloudwatch/eventTarget:EventTarget")
                for r in resources(plan, t) if "KarpenterController" in r["urn"]]
    assert identity and set(identity) <= depends


def test_the_pod_identity_association_matches_the_chart_s_service_account(spec, plan):
    association = named(plan, "aws:eks/podIdentityAssociation:PodIdentityAssociation")["karpenter-identity"]["inputs"]
    values = controller_values(spec)
    assert (association["namespace"], association["serviceAccount"]) == (spec.karpenter.namespace,
                                                                         values["serviceAccount"]["name"])
    role = named(plan, "aws:iam/role:Role")["karpenter-controller"]["inputs"]
    assert json.loads(role["assumeRolePolicy"]) == trust_policy(catalog.EKS_POD_IDENTITY_PRINCIPAL, tag_session=True)


# --- IAM: this cluster only, and only real actions ---

POLICIES = controller_policies(NODE_ROLE, QUEUE, "us-east-1", "gpu-karpenter")


def _statements():
    return [(name, s) for name, doc in POLICIES.items() for s in doc["Statement"]]


def _actions(statement: dict) -> list[str]:
    action = statement["Action"]
    return [action] if isinstance(action, str) else action


@pytest.mark.parametrize("name, statement", _statements(), ids=[f"{n}-{s['Sid']}" for n, s in _statements()])
def test_every_action_is_an_operation_of_its_service(name, statement):
    for action in _actions(statement):
        if action in PERMISSION_ONLY:
            continue
        service, operation = action.split(":")
        assert operation in service_model(service).operation_names, action


def test_everything_that_changes_a_resource_is_scoped_to_this_cluster():
    reads = re.compile(r":(Describe|Get|List)")
    for _, statement in _statements():
        text = json.dumps(statement)
        if all(reads.search(a) for a in _actions(statement)):
            continue
        assert "gpu-karpenter" in text or statement["Resource"] in (NODE_ROLE, QUEUE) \
            or statement["Sid"] == "LaunchFromSharedResources", statement["Sid"]


def test_only_the_karpenter_node_role_may_be_passed_and_only_to_ec2():
    (passing,) = [s for _, s in _statements() if "iam:PassRole" in _actions(s)]
    assert passing["Resource"] == NODE_ROLE
    assert passing["Condition"]["StringEquals"]["iam:PassedToService"][0] == "ec2.amazonaws.com"


def test_launches_need_the_cluster_and_nodepool_tags_and_reads_stay_in_the_region():
    statements = {s["Sid"]: s for _, s in _statements()}
    create = statements["CreateOwnedNodes"]["Condition"]
    assert create["StringEquals"] == {"aws:RequestTag/kubernetes.io/cluster/gpu-karpenter": "owned",
                                      "aws:RequestTag/eks:eks-cluster-name": "gpu-karpenter"}
    assert create["StringLike"] == {"aws:RequestTag/karpenter.sh/nodepool": "*"}
    assert statements["DeleteOwned"]["Condition"]["StringEquals"] == {
        "aws:ResourceTag/kubernetes.io/cluster/gpu-karpenter": "owned"}
    assert statements["RegionalReads"]["Condition"] == {"StringEquals": {"aws:RequestedRegion": "us-east-1"}}


def test_policies_in_the_plan_carry_the_real_arns_and_fit_an_inline_policy(plan):
    found = {r["inputs"]["name"]: json.loads(r["inputs"]["policy"]) for r in resources(plan, "aws:iam/rolePolicy:RolePolicy")
             if "KarpenterController" in r["urn"]}
    assert set(found) == {f"karpenter-{k}" for k in POLICIES}
    assert found["karpenter-iam-integration"]["Statement"][0]["Resource"] == NODE_ROLE
    assert found["karpenter-cluster-integration"]["Statement"][1]["Resource"] == QUEUE
    # IAM's limit for all inline policies of one role, whitespace excluded.
    assert sum(len(json.dumps(d, separators=(",", ":"))) for d in found.values()) <= 10240


# --- interruption queue and rules ---

def test_the_queue_keeps_messages_five_minutes_encrypted(plan):
    queue = named(plan, "aws:sqs/queue:Queue")["karpenter-interruptions"]["inputs"]
    assert queue == {"name": "gpu-karpenter-karpenter", "messageRetentionSeconds": 300, "sqsManagedSseEnabled": True}


def test_only_eventbridge_sends_and_never_without_tls():
    allow, deny = queue_policy(QUEUE)["Statement"]
    assert allow["Principal"] == {"Service": ["events.amazonaws.com", "sqs.amazonaws.com"]}
    assert (allow["Action"], allow["Resource"]) == ("sqs:SendMessage", QUEUE)
    assert deny["Effect"] == "Deny" and deny["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}


def test_spot_rebalance_state_change_and_health_events_reach_the_queue(plan):
    rules = named(plan, "aws:cloudwatch/eventRule:EventRule")
    patterns = {json.loads(r["inputs"]["eventPattern"])["detail-type"][0] for r in rules.values()}
    assert {"EC2 Spot Instance Interruption Warning", "EC2 Instance Rebalance Recommendation",
            "EC2 Instance State-change Notification", "AWS Health Event"} <= patterns
    targets = named(plan, "aws:cloudwatch/eventTarget:EventTarget")
    assert len(targets) == len(rules) == len(interruption_rules())
    assert {t["inputs"]["arn"] for t in targets.values()} == {QUEUE}


def test_rule_names_meet_the_eventbridge_model(plan):
    shape = service_model("events").operation_model("PutRule").input_shape.members["Name"].metadata
    for rule in resources(plan, "aws:cloudwatch/eventRule:EventRule"):
        name = rule["inputs"]["name"]
        assert shape["min"] <= len(name) <= shape["max"] and re.fullmatch(shape["pattern"], name)


# --- nodes: role, access entry, discovery ---

def test_nodes_run_as_their_own_role_with_an_ec2_linux_access_entry(plan):
    entry = named(plan, "aws:eks/accessEntry:AccessEntry")["karpenter-nodes"]["inputs"]
    assert (entry["principalArn"], entry["type"]) == (NODE_ROLE, "EC2_LINUX")
    attached = {r["inputs"]["policyArn"].rsplit("/", 1)[1] for r in resources(plan, "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
                if r["name"].startswith("karpenter-nodes-")}
    assert attached == set(catalog.NODE_MANAGED_POLICIES)


def test_created_private_subnets_and_the_cluster_security_group_carry_the_discovery_tag(plan):
    subnets = resources(plan, "aws:ec2/subnet:Subnet")
    private = [s for s in subnets if "private" in s["name"]]
    assert private and all(s["inputs"]["tags"][names.KARPENTER_DISCOVERY_TAG] == "gpu-karpenter" for s in private)
    assert not any(names.KARPENTER_DISCOVERY_TAG in s["inputs"]["tags"] for s in subnets if "public" in s["name"])
    (tag,) = resources(plan, "aws:ec2/tag:Tag")
    assert tag["inputs"]["key"] == names.KARPENTER_DISCOVERY_TAG and tag["inputs"]["resourceId"].startswith("sg-")


def test_an_adopted_cluster_s_subnets_and_security_groups_are_tagged():
    platform = stack_platform("karpenter")
    platform["cluster"] = {"name": "shared-gpu", "kubernetesVersion": "1.35", "existing": {
        "subnetIds": ["subnet-0aaa1111bbbb2222c", "subnet-0ddd3333eeee4444f"], "nodeSecurityGroupIds": ["sg-0123456789abcdef0"]}}
    platform["modelCache"] = {"enabled": False}
    without_services(platform)
    spec = parse_platform(platform)
    assert untagged_subnets(spec) == ["subnet-0aaa1111bbbb2222c", "subnet-0ddd3333eeee4444f"]
    tagged = {t["inputs"]["resourceId"] for t in resources(cached_plan(platform, stack="karpenter"), "aws:ec2/tag:Tag")}
    assert {"subnet-0aaa1111bbbb2222c", "subnet-0ddd3333eeee4444f", "sg-0123456789abcdef0"} <= tagged and len(tagged) == 4


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_stacks_without_karpenter_pools_get_no_controller(stack):
    plan = cached_plan(stack_platform(stack))
    assert not [r for r in plan["resources"] if "karpenter" in r["type"].lower() or r["name"].startswith("karpenter")]
    assert not any(names.KARPENTER_DISCOVERY_TAG in (s["inputs"].get("tags") or {})
                   for s in resources(plan, "aws:ec2/subnet:Subnet"))
