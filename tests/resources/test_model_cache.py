"""ModelCache: the pure pieces directly, the registered resources through offline plans of real stacks."""
import json

import pytest

from gpu_platform.decisions.network import subnet_count
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render.iam import pod_identity_trust_policy
from gpu_platform.render.model_cache import STORAGE_CLASS_PARAMETERS, storage_class
from tests.support.stacks import AS_OF, resource, resources, stack_platform, without_services, write_stack

FS = "aws:efs/fileSystem:FileSystem"
MOUNT = "aws:efs/mountTarget:MountTarget"
ADDON = "aws:eks/addon:Addon"
SC = "kubernetes:storage.k8s.io/v1:StorageClass"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
CACHE = "gpu-platform:index:ModelCache"


def plan(platform: dict, tmp: "pytest.TempPathFactory", stack: str) -> dict:
    from gpu_platform.planner.cli import main

    folder = tmp.mktemp(stack)
    out = folder / "plan.json"
    code = main(["plan", "--config", str(write_stack(folder / f"Pulumi.{stack}.yaml", platform)), "--json", str(out),
                 "--as-of", AS_OF])
    assert code == 0, f"plan of {stack} exited {code}"
    return json.loads(out.read_text())


def existing_cluster(platform: dict) -> dict:
    platform["cluster"] = {"name": platform["cluster"]["name"], "kubernetesVersion": "1.35",
                           "existing": {"subnetIds": ["subnet-0aaa1111bbbb2222c", "subnet-0ddd3333eeee4444f"]}}
    return platform


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    no_cache = stack_platform("dev")
    no_cache["modelCache"] = {"enabled": False}
    without_services(no_cache)
    return {
        "dev": plan(stack_platform("dev"), tmp_path_factory, "dev"),
        "prod": plan(stack_platform("prod"), tmp_path_factory, "prod"),
        "no-cache": plan(no_cache, tmp_path_factory, "no-cache"),
        "existing": plan(existing_cluster(stack_platform("dev")), tmp_path_factory, "existing"),
    }


def in_cache(plan_: dict, type_: str) -> list[dict]:
    (cache,) = resources(plan_, CACHE)
    return [r for r in resources(plan_, type_) if r["parent"] == cache["urn"]]


# --- pure ---

def test_one_mount_target_per_created_zone():
    platform = stack_platform("prod")
    platform["cluster"]["create"]["vpc"]["availabilityZones"] = 4
    assert subnet_count(parse_platform(platform)) == 4


def test_one_mount_target_per_given_subnet():
    platform = stack_platform("dev")
    platform["cluster"]["create"].pop("vpc")
    platform["cluster"]["create"]["subnetIds"] = ["subnet-0aaa1111bbbb2222c", "subnet-0ddd3333eeee4444f"]
    assert subnet_count(parse_platform(platform)) == 2


def test_one_mount_target_per_existing_cluster_subnet():
    assert subnet_count(parse_platform(existing_cluster(stack_platform("dev")))) == 2


def test_storage_class_uses_access_points_per_claim_and_retains():
    sc = storage_class("fs-1")
    assert sc["provisioner"] == catalog.EFS_CSI_PROVISIONER
    assert sc["parameters"]["provisioningMode"] == "efs-ap" and sc["parameters"]["fileSystemId"] == "fs-1"
    assert sc["parameters"]["subPathPattern"] == "${.PVC.namespace}/${.PVC.name}"
    assert (sc["reclaimPolicy"], sc["volumeBindingMode"]) == ("Retain", "Immediate")


def test_storage_class_keeps_a_recreated_claims_directory():
    assert STORAGE_CLASS_PARAMETERS["ensureUniqueDirectory"] == "false"


def test_storage_class_matches_the_kubernetes_schema():
    import kubernetes_validate

    kubernetes_validate.validate(storage_class("fs-1"), "1.33", strict=True)


def test_trust_policy_is_eks_pod_identity_only():
    (statement,) = json.loads(pod_identity_trust_policy())["Statement"]
    assert statement == {"Effect": "Allow", "Principal": {"Service": "pods.eks.amazonaws.com"},
                         "Action": ["sts:AssumeRole", "sts:TagSession"]}


# --- the file system ---

@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_file_system_is_encrypted_elastic_general_purpose(stack, plans):
    (fs,) = in_cache(plans[stack], FS)
    assert (fs["inputs"]["encrypted"], fs["inputs"]["throughputMode"], fs["inputs"]["performanceMode"]) == (
        True, "elastic", "generalPurpose")


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_file_system_is_protected_and_retained_in_every_environment(stack, plans):
    (fs,) = in_cache(plans[stack], FS)
    assert fs["options"]["protect"] is True and fs["options"]["retainOnDelete"] is True


def test_file_system_creation_token_comes_from_the_cluster_name(plans):
    (fs,) = in_cache(plans["prod"], FS)
    assert fs["inputs"]["creationToken"] == names.model_cache_name("gpu-prod")


# --- network ---

@pytest.mark.parametrize("stack, count", [("dev", 3), ("prod", 3), ("existing", 2)])
def test_a_mount_target_in_every_private_subnet(stack, count, plans):
    subnets = [m["inputs"]["subnetId"] for m in in_cache(plans[stack], MOUNT)]
    assert len(subnets) == len(set(subnets)) == count


def test_mount_targets_use_the_existing_clusters_subnets(plans):
    assert sorted(m["inputs"]["subnetId"] for m in in_cache(plans["existing"], MOUNT)) == [
        "subnet-0aaa1111bbbb2222c", "subnet-0ddd3333eeee4444f"]


def test_mount_targets_carry_only_the_cache_security_group(plans):
    (group,) = in_cache(plans["dev"], "aws:ec2/securityGroup:SecurityGroup")
    group_id = next(m["inputs"]["securityGroups"] for m in in_cache(plans["dev"], MOUNT))
    assert all(m["inputs"]["securityGroups"] == group_id for m in in_cache(plans["dev"], MOUNT))
    assert len(group_id) == 1 and group["inputs"]["vpcId"]


def test_nfs_is_allowed_only_from_the_cluster_nodes(plans):
    (rule,) = in_cache(plans["prod"], "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule")
    (group,) = in_cache(plans["prod"], "aws:ec2/securityGroup:SecurityGroup")
    assert (rule["inputs"]["ipProtocol"], rule["inputs"]["fromPort"], rule["inputs"]["toPort"]) == ("tcp", 2049, 2049)
    assert "cidrIpv4" not in rule["inputs"] and "cidrIpv6" not in rule["inputs"]
    assert rule["inputs"]["referencedSecurityGroupId"] in gpu_node_security_groups(plans["prod"])
    assert not in_cache(plans["prod"], "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule")
    assert "ingress" not in group["inputs"] and "egress" not in group["inputs"]


def gpu_node_security_groups(plan_: dict) -> set[str]:
    """The groups GPU launch templates name (prod's EFA pool names the cluster security group)."""
    templates = resources(plan_, "aws:ec2/launchTemplate:LaunchTemplate")
    interfaces = [i for t in templates for i in (t["inputs"].get("networkInterfaces") or [])]
    groups = {g for i in interfaces for g in i.get("securityGroups", [])}
    assert groups, "no launch template names a security group"
    return groups


# --- driver ---

def test_csi_addon_is_pinned_from_the_spec(plans):
    (addon,) = in_cache(plans["prod"], ADDON)
    assert addon["inputs"]["addonName"] == catalog.EFS_CSI_ADDON
    assert addon["inputs"]["addonVersion"] == stack_platform("prod")["modelCache"]["addonVersion"]


def test_csi_controller_gets_its_role_through_pod_identity(plans):
    (addon,) = in_cache(plans["prod"], ADDON)
    (role,) = in_cache(plans["prod"], "aws:iam/role:Role")
    (association,) = addon["inputs"]["podIdentityAssociations"]
    assert association["serviceAccount"] == catalog.EFS_CSI_CONTROLLER_SERVICE_ACCOUNT
    assert association["roleArn"].endswith(f":role/{role['inputs']['name']}")
    assert json.loads(role["inputs"]["assumeRolePolicy"]) == json.loads(pod_identity_trust_policy())


def test_csi_role_holds_only_the_aws_managed_driver_policy(plans):
    attachments = in_cache(plans["prod"], "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    assert [a["inputs"]["policyArn"] for a in attachments] == [
        "arn:aws:iam::aws:policy/service-role/AmazonEFSCSIDriverPolicy"]
    assert not in_cache(plans["prod"], "aws:iam/rolePolicy:RolePolicy")


def test_addon_waits_for_the_system_nodes_and_its_role(plans):
    (addon,) = in_cache(plans["dev"], ADDON)
    (attachment,) = in_cache(plans["dev"], "aws:iam/rolePolicyAttachment:RolePolicyAttachment")
    (system,) = [n for n in resources(plans["dev"], "aws:eks/nodeGroup:NodeGroup") if n["name"].endswith("system")]
    assert {attachment["urn"], system["urn"]} <= set(addon["options"]["dependsOn"])


# --- Kubernetes side ---

def test_storage_class_points_at_the_file_system(plans):
    (fs,) = in_cache(plans["dev"], FS)
    sc = resource(plans["dev"], SC, "model-cache")
    assert sc["inputs"]["metadata"]["name"] == names.MODEL_CACHE_STORAGE_CLASS
    assert sc["inputs"]["parameters"]["fileSystemId"].startswith("fs-")
    assert sc["provider"] and "kubernetes" in sc["provider"]
    assert fs["options"]["protect"]  # the class references a file system that outlives it


def test_model_cache_is_exported(plans):
    cache = plans["dev"]["outputs"]["modelCache"]
    assert cache["storageClass"] == names.MODEL_CACHE_STORAGE_CLASS and cache["fileSystemId"].startswith("fs-")


def test_disabled_cache_registers_nothing(plans):
    plan_ = plans["no-cache"]
    for type_ in (CACHE, FS, MOUNT, SC, PVC):
        found = [r for r in resources(plan_, type_) if r["inputs"].get("provisioner") != catalog.EBS_CSI_PROVISIONER]
        assert found == [], type_  # (the metrics volumes' gp3 StorageClass is monitoring's)
    assert not [a for a in resources(plan_, ADDON) if a["inputs"]["addonName"] == catalog.EFS_CSI_ADDON]
    assert "modelCache" not in plan_["outputs"]
