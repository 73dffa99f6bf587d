"""The cluster: created (control plane, access, add-ons, system nodes, IAM) or adopted by name, and the
Kubernetes provider every Kubernetes resource uses."""
import json

import pytest

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render.iam import managed_policy_arns, trust_policy
from tests.support.plans import component, existing_cluster_platform, plan, stack_plan
from tests.support.stacks import resource, resources, stack_platform, without_services

CLUSTER = "aws:eks/cluster:Cluster"
ADDON = "aws:eks/addon:Addon"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
CLUSTER_COMPONENT = "gpu-platform:index:Cluster"
ADOPTED_COMPONENT = "gpu-platform:index:AdoptedCluster"


def _eks(plan_):
    (cluster,) = resources(plan_, CLUSTER)
    return cluster


def _system(plan_):
    (system,) = [r for r in resources(plan_, NODE_GROUP) if r["parent"] == _component(plan_)["urn"]]
    return system


def _component(plan_):
    """The platform's cluster component: a Cluster, or an AdoptedCluster for `cluster.existing`."""
    adopted = any(r["type"] == ADOPTED_COMPONENT for r in plan_["resources"])
    return component(plan_, ADOPTED_COMPONENT if adopted else CLUSTER_COMPONENT, "cluster")


# --- created cluster ---

def test_created_cluster_has_the_spec_name_and_version():
    spec = parse_platform(stack_platform("dev"))
    inputs = _eks(stack_plan("dev"))["inputs"]
    assert (inputs["name"], inputs["version"]) == (spec.cluster.name, spec.cluster.kubernetes_version)


def test_created_cluster_authenticates_with_access_entries():
    access = _eks(stack_plan("dev"))["inputs"]["accessConfig"]
    assert access == {"authenticationMode": "API", "bootstrapClusterCreatorAdminPermissions": True}


def test_control_plane_logs_are_enabled():
    assert _eks(stack_plan("dev"))["inputs"]["enabledClusterLogTypes"] == list(catalog.CLUSTER_LOG_TYPES)


def test_control_plane_sits_in_the_private_subnets():
    plan_ = stack_plan("dev")
    private = {r["name"] for r in resources(plan_, "aws:ec2/subnet:Subnet")
               if names.INTERNAL_ELB_SUBNET_TAG in r["inputs"]["tags"]}
    subnets = _eks(plan_)["options"]["dependsOn"]
    assert {u.rsplit("::", 1)[1] for u in subnets if "aws:ec2/subnet:Subnet" in u} == private
    assert len(_eks(plan_)["inputs"]["vpcConfig"]["subnetIds"]) == len(private)


def test_public_endpoint_is_limited_to_the_allowed_cidrs():
    vpc = _eks(stack_plan("prod"))["inputs"]["vpcConfig"]
    assert vpc["endpointPublicAccess"] is True and vpc["endpointPrivateAccess"] is True
    assert vpc["publicAccessCidrs"] == ["203.0.113.0/24"]


def test_prod_cluster_is_protected_and_dev_is_not():
    assert _eks(stack_plan("prod"))["options"]["protect"] is True
    assert _eks(stack_plan("prod"))["inputs"]["deletionProtection"] is True
    assert _eks(stack_plan("dev"))["options"]["protect"] is False


def test_secrets_encryption_when_a_key_is_given():
    platform = stack_platform("dev")
    key = "arn:aws:kms:us-east-1:123456789012:key/0a1b2c3d-4e5f-6789-abcd-ef0123456789"
    platform["cluster"]["create"]["secretsKmsKeyArn"] = key
    assert _eks(plan(platform))["inputs"]["encryptionConfig"] == {"resources": ["secrets"], "provider": {"keyArn": key}}
    assert "encryptionConfig" not in _eks(stack_plan("dev"))["inputs"]


def test_control_plane_role_trusts_eks_with_the_cluster_policy_only():
    plan_ = stack_plan("dev")
    role = resource(plan_, "aws:iam/role:Role", "cluster-control-plane")
    assert json.loads(role["inputs"]["assumeRolePolicy"]) == trust_policy("eks.amazonaws.com", tag_session=True)
    attached = [a["inputs"]["policyArn"] for a in resources(plan_, "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
                if a["name"].startswith("cluster-control-plane-")]
    assert attached == managed_policy_arns(catalog.CLUSTER_MANAGED_POLICIES)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_core_and_optional_addons_are_pinned_to_the_spec_versions(stack):
    spec = parse_platform(stack_platform(stack))
    addons = {a["inputs"]["addonName"]: a["inputs"] for a in resources(stack_plan(stack), ADDON)}
    core = {a: v for a, v in addons.items() if a in (*catalog.CORE_ADDONS, *catalog.OPTIONAL_ADDONS)}
    assert {a: v["addonVersion"] for a, v in core.items()} == spec.cluster.create.addons
    assert {v["resolveConflictsOnUpdate"] for v in core.values()} == {"OVERWRITE"}


def test_vpc_cni_enforces_network_policies():
    # Without the agent, EKS accepts the teams' NetworkPolicies and silently ignores them.
    cni = resource(stack_plan("dev"), ADDON, "cluster-vpc-cni")
    assert json.loads(cni["inputs"]["configurationValues"]) == {"enableNetworkPolicy": "true"}
    kube_proxy = resource(stack_plan("dev"), ADDON, "cluster-kube-proxy")
    assert "configurationValues" not in kube_proxy["inputs"]


def test_coredns_waits_for_the_system_nodes():
    plan_ = stack_plan("dev")
    coredns = resource(plan_, ADDON, "cluster-coredns")
    assert _system(plan_)["urn"] in coredns["options"]["dependsOn"]


@pytest.mark.parametrize("addon", ["vpc-cni", "kube-proxy"])
def test_every_node_group_waits_for_the_node_network_addons(addon):
    plan_ = stack_plan("prod")
    urn = resource(plan_, ADDON, f"cluster-{addon}")["urn"]
    for ng in resources(plan_, NODE_GROUP):
        assert urn in ng["options"]["dependsOn"], ng["name"]


def test_system_node_group_is_small_on_demand_untainted_and_labelled_for_operators():
    spec = parse_platform(stack_platform("prod"))
    system = _system(stack_plan("prod"))["inputs"]
    nodes = spec.cluster.create.system_nodes
    assert system["capacityType"] == "ON_DEMAND"
    assert "taints" not in system
    assert system["labels"] == {names.ROLE_LABEL: names.SYSTEM_ROLE}
    assert (system["amiType"], system["releaseVersion"]) == (catalog.SYSTEM_NODE_AMI_TYPE, nodes.release_version)
    assert system["instanceTypes"] == nodes.instance_types
    assert system["scalingConfig"] == {"minSize": nodes.min_size, "maxSize": nodes.max_size, "desiredSize": nodes.min_size}
    assert system["nodeGroupName"] == names.system_node_group_name(spec.cluster.name)


def test_system_node_group_also_leaves_desired_size_to_the_autoscaler():
    assert _system(stack_plan("dev"))["options"]["ignoreChanges"] == ["scalingConfig.desiredSize"]


def test_admin_roles_get_cluster_admin_access_entries():
    spec = parse_platform(stack_platform("prod"))
    plan_ = stack_plan("prod")
    entries = {e["inputs"]["principalArn"] for e in resources(plan_, "aws:eks/accessEntry:AccessEntry")
               if e["parent"] == _component(plan_)["urn"]}
    policies = [p["inputs"] for p in resources(plan_, "aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
                if p["parent"] == _component(plan_)["urn"]]
    assert entries == set(spec.cluster.admin_role_arns)
    assert {(p["principalArn"], p["policyArn"], p["accessScope"]["type"]) for p in policies} == {
        (arn, catalog.EKS_CLUSTER_ADMIN_ACCESS_POLICY, "cluster") for arn in spec.cluster.admin_role_arns}


def test_created_cluster_in_existing_subnets_uses_them():
    platform = stack_platform("dev")
    platform["cluster"]["create"].pop("vpc")
    platform["cluster"]["create"]["subnetIds"] = ["subnet-0aaa1111bbbb2222c", "subnet-0ddd3333eeee4444f"]
    platform["modelCache"] = {"enabled": False}
    without_services(platform)
    plan_ = plan(platform)
    assert _eks(plan_)["inputs"]["vpcConfig"]["subnetIds"] == platform["cluster"]["create"]["subnetIds"]
    assert {tuple(ng["inputs"]["subnetIds"]) for ng in resources(plan_, NODE_GROUP)} == {
        tuple(platform["cluster"]["create"]["subnetIds"])}


# --- node IAM ---

@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_node_role_has_exactly_the_managed_policies_nodes_need(stack):
    plan_ = stack_plan(stack)
    role = resource(plan_, "aws:iam/role:Role", "cluster-nodes")
    assert json.loads(role["inputs"]["assumeRolePolicy"]) == trust_policy("ec2.amazonaws.com")
    attached = sorted(a["inputs"]["policyArn"] for a in resources(plan_, "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
                      if a["name"].startswith("cluster-nodes-"))
    assert attached == sorted(managed_policy_arns(catalog.NODE_MANAGED_POLICIES))
    assert not [p for p in resources(plan_, "aws:iam/rolePolicy:RolePolicy") if p["inputs"]["role"] == role["inputs"]["name"]]


# --- existing cluster ---

def test_existing_cluster_is_referenced_not_created():
    plan_ = plan(existing_cluster_platform())
    assert resources(plan_, CLUSTER) == []
    # no cluster add-on; only the EBS CSI driver the stack's Prometheus volume asks for (monitoring)
    assert [(a["inputs"]["addonName"], a["name"]) for a in resources(plan_, ADDON)] == [
        (catalog.EBS_CSI_ADDON, "monitoring-ebs-csi")]
    assert resources(plan_, "aws:ec2/vpc:Vpc") == []
    assert [r for r in resources(plan_, NODE_GROUP) if r["parent"] == _component(plan_)["urn"]] == []


def test_existing_cluster_pools_join_it_by_name_in_the_given_subnets():
    platform = existing_cluster_platform()
    for ng in resources(plan(platform), NODE_GROUP):
        assert ng["inputs"]["clusterName"] == platform["cluster"]["name"]
        assert ng["inputs"]["subnetIds"] == platform["cluster"]["existing"]["subnetIds"]


def test_existing_cluster_still_gets_the_autoscaler_with_its_name():
    rel = resource(plan(existing_cluster_platform()), "kubernetes:helm.sh/v3:Release", names.CA_RELEASE)
    assert rel["inputs"]["values"]["autoDiscovery"]["clusterName"] == "shared-gpu"


def test_extra_node_security_groups_of_an_existing_cluster_go_with_the_cluster_group():
    platform = existing_cluster_platform()
    platform["cluster"]["existing"]["nodeSecurityGroupIds"] = ["sg-0123456789abcdef0"]
    (template,) = resources(plan(platform), "aws:ec2/launchTemplate:LaunchTemplate")
    groups = template["inputs"]["vpcSecurityGroupIds"]
    assert groups[-1] == "sg-0123456789abcdef0" and groups[0].startswith("sg-") and len(groups) == 2


# --- Kubernetes provider and outputs (both modes) ---

PLANS = {"created": lambda: stack_plan("prod"), "existing": lambda: plan(existing_cluster_platform())}


@pytest.mark.parametrize("mode", PLANS)
def test_one_kubernetes_provider_built_from_a_secret_kubeconfig(mode):
    (provider,) = resources(PLANS[mode](), "pulumi:providers:kubernetes")
    assert provider["inputs"]["kubeconfig"] == "[secret]"


@pytest.mark.parametrize("mode", PLANS)
def test_every_kubernetes_resource_uses_the_cluster_provider_explicitly(mode):
    plan_ = PLANS[mode]()
    (provider,) = resources(plan_, "pulumi:providers:kubernetes")
    k8s = [r for r in plan_["resources"] if r["type"].startswith("kubernetes:") and r["custom"]]
    assert k8s
    assert {r["provider"].rsplit("::", 1)[0] for r in k8s} == {provider["urn"]}


@pytest.mark.parametrize("mode", PLANS)
def test_outputs_name_the_cluster_pools_and_hide_the_kubeconfig(mode):
    plan_ = PLANS[mode]()
    outputs = plan_["outputs"]
    assert outputs["kubeconfig"] == "[secret]"
    assert outputs["clusterName"] == ("gpu-prod" if mode == "created" else "shared-gpu")
    assert sorted(outputs["nodePools"]) == sorted(ng["inputs"]["nodeGroupName"] for ng in resources(plan_, NODE_GROUP)
                                                  if "GpuNodePool" in ng["parent"])

