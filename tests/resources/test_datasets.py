"""Datasets: the FSx for Lustre file system, its S3 link, the Lustre ports, the FSx CSI add-on and each
team's volume and claim. Pure decisions directly; the registered resources through offline plans of the
prod stack and two dev variants; every AWS input against the provider SDK's input types and botocore's
service models (including the rules botocore states in its documentation: throughput per deployment
type, capacity increments, which file systems take a KMS key, an S3 link or a backup); every Kubernetes
object against the Kubernetes schema; and the stack file's rules, each exiting 2 naming its field."""
from __future__ import annotations

import html
import json
import re
import subprocess

import kubernetes_validate
import pytest

from gpu_platform.decisions import datasets, placement
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render import datasets as datasets_objects
from gpu_platform.render.iam import pod_identity_trust_policy
from gpu_platform.spec.pool_context import PoolContext
from tests.support.aws_api import api_problems, args_class, sdk_problems, service_model
from tests.support.plans import children, node_groups
from tests.support.stacks import cached_plan, resources, stack_platform, write_stack

FS = "aws:fsx/lustreFileSystem:LustreFileSystem"
DRA = "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation"
SG = "aws:ec2/securityGroup:SecurityGroup"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
ADDON = "aws:eks/addon:Addon"
ROLE = "aws:iam/role:Role"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
PV = "kubernetes:core/v1:PersistentVolume"
PVC = "kubernetes:core/v1:PersistentVolumeClaim"
COMPONENT = "gpu-platform:index:Datasets"
KMS = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
ADDON_VERSION = "v1.7.0-eksbuild.1"
FSX_API = service_model("fsx")


def with_datasets(stack: str, **fsx) -> dict:
    platform = stack_platform(stack)
    platform["datasets"] = {"fsxLustre": {"addonVersion": ADDON_VERSION, **fsx}}
    return platform


def platform_of(variant: str) -> dict:
    """prod as shipped (PERSISTENT_2, 4800 GiB at 250 MB/s/TiB, S3 import and export, every team), and three
    dev variants: scratch linked to S3 for export only, one team; PERSISTENT_1 with a KMS key, kept; a
    shared area and another owner, linked to S3."""
    if variant == "prod":
        return stack_platform("prod")
    if variant == "scratch":
        return with_datasets("dev", deploymentType="SCRATCH_2", teams=["research"],
                             dataRepository={"s3Path": "s3://gpu-dev-datasets/train", "autoImport": False,
                                             "autoExport": True})
    if variant == "shared":
        platform = with_datasets("dev", shared="common", owner={"uid": 2000, "gid": 3000},
                                 dataRepository={"s3Path": "s3://gpu-dev-datasets/train", "autoExport": True})
        for team in platform["teams"]:
            team["quota"]["storage"] = "3Ti"
        return platform
    return with_datasets("dev", deploymentType="PERSISTENT_1", storageCapacityGiB=2400, throughputPerTiB=100,
                         kmsKeyArn=KMS, protect=True)


VARIANTS = ("prod", "scratch", "persistent-1", "shared")
JOB = "kubernetes:batch/v1:Job"


def team_volumes(plan_: dict, claim: str = names.DATASETS_PVC) -> dict[str, dict]:
    """Team namespace -> the volume bound to its claim named `claim`."""
    return {v["inputs"]["spec"]["claimRef"]["namespace"]: v for v in owned(plan_, PV)
            if v["inputs"]["spec"]["claimRef"]["name"] == claim}


def team_claims(plan_: dict, claim: str = names.DATASETS_PVC) -> dict[str, dict]:
    return {c["inputs"]["metadata"]["namespace"]: c for c in owned(plan_, PVC) if c["inputs"]["metadata"]["name"] == claim}


def plan(variant: str) -> dict:
    return cached_plan(platform_of(variant))


def spec(variant: str):
    return parse_platform(platform_of(variant))


def owned(plan_: dict, type_: str) -> list[dict]:
    (component,) = resources(plan_, COMPONENT)
    return children(plan_, component, type_)


def the(plan_: dict, type_: str) -> dict:
    (found,) = owned(plan_, type_)
    return found


def doc(shape) -> str:
    """A botocore shape's documentation as plain text."""
    return html.unescape(" ".join(re.sub(r"<[^>]+>", " ", shape.documentation or "").split()))


# --- pure decisions ---

def with_datasets_spec(**fsx):
    return parse_platform(with_datasets("dev", **fsx)).datasets.fsx_lustre


def test_throughput_defaults_to_the_lowest_tier_and_scratch_has_none():
    assert datasets.throughput(spec("prod").datasets.fsx_lustre) == 250
    assert datasets.throughput(with_datasets_spec(deploymentType="PERSISTENT_2")) == 125
    assert datasets.throughput(spec("scratch").datasets.fsx_lustre) is None


def test_aggregate_throughput_is_capacity_in_tib_times_the_tier():
    assert datasets.aggregate_throughput_mbps(spec("prod").datasets.fsx_lustre) == 4800 * 250 // 1024 == 1171
    assert datasets.aggregate_throughput_mbps(spec("scratch").datasets.fsx_lustre) is None


@pytest.mark.parametrize("variant, usd", [("prod", 0.21), ("scratch", 0.14), ("persistent-1", 0.20)])
def test_the_price_is_the_deployment_type_s_at_its_throughput(variant, usd):
    assert datasets.price(spec(variant).datasets.fsx_lustre).usd_per_hour == usd


def kept(s) -> bool:
    return datasets.protected(s.datasets.fsx_lustre, s.prod)


def test_protection_defaults_to_prod_and_follows_protect():
    assert kept(spec("prod")) and not kept(spec("scratch"))
    assert kept(spec("persistent-1"))
    unprotected = stack_platform("prod")
    unprotected["datasets"]["fsxLustre"]["protect"] = False
    assert not kept(parse_platform(unprotected))


@pytest.mark.parametrize("deployment, linked, keep, backup", [
    ("PERSISTENT_2", False, True, True),
    ("PERSISTENT_1", False, True, True),
    ("PERSISTENT_2", True, True, False),   # FSx cannot back up a file system linked to S3
    ("PERSISTENT_2", False, False, False),  # not kept: deleted with the stack, no backup left behind
    ("SCRATCH_2", False, True, False),     # scratch file systems have no backups
])
def test_a_final_backup_only_of_kept_unlinked_persistent_file_systems(deployment, linked, keep, backup):
    repo = {"dataRepository": {"s3Path": "s3://bucket/prefix"}} if linked else {}
    assert datasets.final_backup(with_datasets_spec(deploymentType=deployment, **repo), keep) is backup


def test_claims_go_to_the_listed_teams_else_to_every_team():
    assert [t.name for t in datasets.claim_teams(spec("prod"))] == ["research", "inference", "batch"]
    assert [t.name for t in datasets.claim_teams(spec("scratch"))] == ["research"]
    assert datasets.claim_teams(parse_platform(stack_platform("dev"))) == []


def test_the_controller_may_only_describe_fsx():
    (statement,) = datasets_objects.controller_policy()["Statement"]
    for action in statement["Action"]:
        service, operation = action.split(":")
        assert service == "fsx" and operation in FSX_API.operation_names and operation.startswith("Describe")


@pytest.mark.parametrize("variant, needle", [
    ("scratch", "dnf install -y -q lustre-client"),  # dev: AL2023
    ("prod", '"lustre-client-modules-$(uname -r)"'),  # prod: Ubuntu 24.04
])
def test_every_pool_installs_the_lustre_client_for_its_os_in_valid_bash(variant, needle):
    s = spec(variant)
    for pool in s.node_pools:
        assert datasets.mounts_datasets(PoolContext.of(s, pool), pool)
        lines = datasets.lustre_boot_lines(pool.ami.image)
        assert any(needle in line for line in lines)
        assert subprocess.run(["bash", "-n"], input="\n".join(lines), text=True).returncode == 0


def test_ubuntu_takes_the_client_from_aws_s_fsx_repository_signed_by_its_key():
    lines = "\n".join(datasets.lustre_boot_lines(catalog.NODE_IMAGES["UBUNTU_24_04"]))
    assert f"signed-by=/etc/apt/keyrings/fsx-lustre.asc] {catalog.FSX_UBUNTU_REPOSITORY}" in lines
    assert catalog.FSX_UBUNTU_KEY in lines and catalog.FSX_UBUNTU_REPOSITORY.startswith("https://")


def test_images_without_a_lustre_client_get_no_boot_lines():
    assert datasets.lustre_boot_lines(catalog.NODE_IMAGES["BOTTLEROCKET_x86_64_NVIDIA"]) == []


# --- the file system ---

def test_prod_file_system_is_persistent_2_ssd_at_its_tier_on_lustre_2_15():
    inputs = the(plan("prod"), FS)["inputs"]
    assert {k: inputs[k] for k in ("deploymentType", "storageType", "storageCapacity", "perUnitStorageThroughput",
                                   "fileSystemTypeVersion", "metadataConfiguration")} == {
        "deploymentType": "PERSISTENT_2", "storageType": "SSD", "storageCapacity": 4800,
        "perUnitStorageThroughput": 250, "fileSystemTypeVersion": "2.15",
        "metadataConfiguration": {"mode": "AUTOMATIC"}}
    assert "kmsKeyId" not in inputs  # encrypted at rest with the AWS-managed FSx key
    assert inputs["tags"] == {"Name": names.datasets_name("gpu-prod")}


def test_a_stack_kms_key_encrypts_a_persistent_file_system():
    inputs = the(plan("persistent-1"), FS)["inputs"]
    assert (inputs["kmsKeyId"], inputs["deploymentType"], inputs["perUnitStorageThroughput"]) == (KMS, "PERSISTENT_1",
                                                                                                  100)
    assert "metadataConfiguration" not in inputs  # a PERSISTENT_2 setting


def test_a_scratch_file_system_has_no_throughput_tier_key_or_backup_setting():
    inputs = the(plan("scratch"), FS)["inputs"]
    assert inputs["deploymentType"] == "SCRATCH_2" and inputs["storageCapacity"] == 1200
    assert not {"perUnitStorageThroughput", "kmsKeyId", "skipFinalBackup", "metadataConfiguration"} & set(inputs)


@pytest.mark.parametrize("variant, protected", [("prod", True), ("scratch", False), ("persistent-1", True)])
def test_the_file_system_is_protected_and_retained_in_prod_or_when_asked(variant, protected):
    options = the(plan(variant), FS)["options"]
    assert (options["protect"], options["retainOnDelete"]) == (protected, protected)


@pytest.mark.parametrize("variant, skip", [("prod", True), ("persistent-1", False)])
def test_a_final_backup_is_asked_only_where_fsx_can_take_one(variant, skip):
    assert the(plan(variant), FS)["inputs"]["skipFinalBackup"] is skip  # prod is linked to S3


def test_the_file_system_lives_in_the_efa_pool_s_subnet_behind_its_own_security_group():
    plan_ = plan("prod")
    inputs = the(plan_, FS)["inputs"]
    (efa_subnet,) = node_groups(plan_)["a100-train"]["inputs"]["subnetIds"]
    assert inputs["subnetIds"] == efa_subnet
    assert inputs["securityGroupIds"] == [security_group_id(plan_)]
    assert the(plan_, SG)["inputs"]["name"] == names.datasets_name("gpu-prod")


def test_without_an_efa_pool_the_file_system_takes_the_first_private_subnet():
    s = spec("scratch")
    assert placement.subnet_index(s, ["us-east-1a", "us-east-1b", "us-east-1c"]) == 0


def security_group_id(plan_: dict) -> str:
    """The datasets group's id, as its own rules reference it."""
    ids = {r["inputs"]["securityGroupId"] for r in owned(plan_, INGRESS) + owned(plan_, EGRESS)
           if "from-self" in r["name"] or "to-" in r["name"]}
    assert len(ids) == 1, ids
    return ids.pop()


# --- Lustre's ports ---

def test_the_catalog_ports_are_lustre_s():
    # FSx for Lustre user guide, "File system access control with Amazon VPC": TCP 988 and 1018-1023.
    assert catalog.FSX_LUSTRE_PORTS == ((988, 988), (1018, 1023))


def cluster_security_group(plan_: dict) -> str:
    """The cluster security group every GPU node carries (EFA interfaces name it first, beside their own)."""
    groups = {i["securityGroups"][0] for t in resources(plan_, "aws:ec2/launchTemplate:LaunchTemplate")
              for i in t["inputs"].get("networkInterfaces") or []}
    (group,) = groups
    return group


def rules(plan_: dict) -> set[tuple]:
    return {(kind, r["inputs"]["securityGroupId"], r["inputs"]["referencedSecurityGroupId"], r["inputs"]["ipProtocol"],
             r["inputs"]["fromPort"], r["inputs"]["toPort"])
            for kind, type_ in (("in", INGRESS), ("out", EGRESS)) for r in owned(plan_, type_)}


def test_lustre_ports_are_open_within_the_group_and_both_ways_with_the_nodes():
    plan_ = plan("prod")
    group, nodes = security_group_id(plan_), cluster_security_group(plan_)
    expected = set()
    for low, high in ((988, 988), (1018, 1023)):
        for peer in (group, nodes):
            expected |= {("in", group, peer, "tcp", low, high), ("out", group, peer, "tcp", low, high)}
        expected.add(("in", nodes, group, "tcp", low, high))  # file servers call clients back
    assert rules(plan_) == expected


def test_no_lustre_rule_opens_an_address_range():
    plan_ = plan("prod")
    for rule in owned(plan_, INGRESS) + owned(plan_, EGRESS):
        assert not {"cidrIpv4", "cidrIpv6", "prefixListId"} & set(rule["inputs"]), rule["name"]
    assert not {"ingress", "egress"} & set(the(plan_, SG)["inputs"])  # rules only as their own resources


# --- the S3 link ---

def test_prod_links_each_team_s_directory_to_its_own_prefix_both_ways_and_loads_the_metadata_at_once():
    plan_ = plan("prod")
    links = {r["inputs"]["fileSystemPath"]: r for r in owned(plan_, DRA)}
    teams = [t.name for t in datasets.claim_teams(spec("prod"))]
    assert sorted(links) == sorted(f"/teams/{t}" for t in teams)
    events = ["NEW", "CHANGED", "DELETED"]
    for team in teams:
        link = links[f"/teams/{team}"]
        inputs = link["inputs"]
        assert inputs == {
            "fileSystemId": inputs["fileSystemId"], "dataRepositoryPath": f"s3://gpu-prod-datasets/training/teams/{team}/",
            "fileSystemPath": f"/teams/{team}", "batchImportMetaDataOnCreate": True, "deleteDataInFilesystem": False,
            "s3": {"autoImportPolicy": {"events": events}, "autoExportPolicy": {"events": events}}}
        assert inputs["fileSystemId"].startswith("fs-")
        assert the(plan_, FS)["urn"] in link["options"]["dependsOn"]
        assert link["options"]["protect"] is True


def test_an_export_only_link_imports_nothing():
    s3 = the(plan("scratch"), DRA)["inputs"]["s3"]
    assert s3 == {"autoExportPolicy": {"events": ["NEW", "CHANGED", "DELETED"]}}


def test_associations_mirror_the_layout_under_the_s3_prefix():
    fsx = with_datasets_spec(shared="common", claimSize="500Gi", dataRepository={
        "s3Path": "s3://data/train/", "fileSystemPath": "/ml", "autoExport": True})
    assert datasets.associations(fsx, ["research", "applied-ml"]) == [
        datasets.Association("research", "/ml/teams/research", "s3://data/train/teams/research/", True, True),
        datasets.Association("applied-ml", "/ml/teams/applied-ml", "s3://data/train/teams/applied-ml/", True, True),
        datasets.Association("shared", "/ml/common", "s3://data/train/common/", True, False)]  # import only
    assert datasets.associations(with_datasets_spec(shared="common", claimSize="500Gi"), ["research"]) == []


def test_the_layout_without_an_s3_link_starts_at_the_root():
    fsx = with_datasets_spec(shared="common", claimSize="500Gi")
    assert (datasets.team_path(fsx, "research"), datasets.shared_path(fsx)) == ("/teams/research", "/common")
    assert datasets.shared_path(with_datasets_spec()) is None


def test_no_link_without_a_data_repository():
    assert owned(plan("persistent-1"), DRA) == []


# --- the FSx CSI driver ---

@pytest.mark.parametrize("variant", ["prod", "scratch"])
def test_the_csi_add_on_is_pinned_and_its_controller_uses_pod_identity(variant):
    plan_ = plan(variant)
    addon, role = the(plan_, ADDON), the(plan_, ROLE)
    assert (addon["inputs"]["addonName"], addon["inputs"]["addonVersion"]) == (catalog.FSX_CSI_ADDON,
                                                                               platform_of(variant)["datasets"]
                                                                               ["fsxLustre"]["addonVersion"])
    (association,) = addon["inputs"]["podIdentityAssociations"]
    assert association["serviceAccount"] == catalog.FSX_CSI_CONTROLLER_SERVICE_ACCOUNT
    assert association["roleArn"].endswith(f":role/{role['inputs']['name']}")
    assert json.loads(role["inputs"]["assumeRolePolicy"]) == json.loads(pod_identity_trust_policy())
    assert "serviceAccountRoleArn" not in addon["inputs"]  # Pod Identity, not IRSA


def test_the_controller_role_holds_only_the_describe_policy():
    plan_ = plan("prod")
    policy = the(plan_, ROLE_POLICY)
    assert json.loads(policy["inputs"]["policy"]) == datasets_objects.controller_policy()
    assert policy["inputs"]["role"] == the(plan_, ROLE)["inputs"]["name"] == names.role_name("gpu-prod", "fsx-csi")
    assert owned(plan_, "aws:iam/rolePolicyAttachment:RolePolicyAttachment") == []


def test_the_add_on_waits_for_its_policy_the_system_nodes_and_the_pod_identity_agent():
    plan_ = plan("prod")
    after = set(the(plan_, ADDON)["options"]["dependsOn"])
    agent = next(r for r in resources(plan_, ADDON) if r["inputs"]["addonName"] == "eks-pod-identity-agent")
    system = next(r for r in resources(plan_, "aws:eks/nodeGroup:NodeGroup") if r["name"].endswith("system"))
    assert {the(plan_, ROLE_POLICY)["urn"], agent["urn"], system["urn"]} <= after


# --- each team's volume and claim ---

@pytest.mark.parametrize("variant", VARIANTS)
def test_each_claiming_team_gets_its_own_volume_bound_to_its_datasets_claim(variant):
    plan_, s = plan(variant), spec(variant)
    fs = the(plan_, FS)
    teams = [t.name for t in datasets.claim_teams(s)]
    volumes, claims = team_volumes(plan_), team_claims(plan_)
    assert sorted(volumes) == sorted(claims) == sorted(names.team_namespace(t) for t in teams)
    handles = set()
    for namespace, volume in volumes.items():
        pv, pvc = volume["inputs"], claims[namespace]["inputs"]
        assert pv["metadata"]["name"] == pvc["spec"]["volumeName"]
        assert pv["spec"]["claimRef"] == {"namespace": namespace, "name": names.DATASETS_PVC}
        assert (pv["spec"]["capacity"]["storage"], pvc["spec"]["resources"]["requests"]["storage"]) == (
            f"{s.datasets.fsx_lustre.storage_capacity_gib}Gi", s.datasets.fsx_lustre.claim_size)
        assert pv["spec"]["accessModes"] == pvc["spec"]["accessModes"] == ["ReadWriteMany"]
        assert pv["spec"]["storageClassName"] == pvc["spec"]["storageClassName"] == ""  # static: never provisioned
        assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
        csi = pv["spec"]["csi"]
        assert csi["driver"] == catalog.FSX_CSI_DRIVER and csi["volumeHandle"].startswith("fs-")
        assert set(csi["volumeAttributes"]) == {"dnsname", "mountname"}
        assert csi["volumeAttributes"]["dnsname"].endswith(".fsx.us-east-1.amazonaws.com")
        team = pv["metadata"]["labels"][names.TEAM_LABEL]
        assert csi["volumeAttributes"]["mountname"].endswith(f"/teams/{team}")  # its own directory only
        handles.add(csi["volumeHandle"])
        assert fs["urn"] in volume["options"]["dependsOn"]
    assert len(handles) == len(volumes)  # kubelet keys mounts by handle


def test_prod_has_one_datasets_volume_per_team_and_none_a_team_can_claim_mounts_the_root():
    plan_ = plan("prod")
    mount_name = the(plan_, FS)["outputs"]["mountName"] if "outputs" in the(plan_, FS) else None
    sources = {}
    for volume in owned(plan_, PV):
        ref, csi = volume["inputs"]["spec"]["claimRef"], volume["inputs"]["spec"]["csi"]
        sources[(ref["namespace"], ref["name"])] = csi["volumeAttributes"]["mountname"]
    teams = sorted(names.team_namespace(t.name) for t in datasets.claim_teams(spec("prod")))
    assert sorted(ns for ns, claim in sources if claim == names.DATASETS_PVC) == teams
    root = {key for key, source in sources.items() if "/" not in source}
    assert root == {("kube-system", names.DATASETS_SETUP)}  # only the setup Job's claim, outside every team
    assert mount_name is None or all(s.startswith(mount_name) for s in sources.values())


def test_claims_wait_for_their_volume_and_the_team_s_namespace_and_quota():
    plan_ = plan("prod")
    volume = next(v for v in owned(plan_, PV) if v["inputs"]["spec"]["claimRef"]["namespace"] == "research")
    claim = next(c for c in owned(plan_, PVC) if c["inputs"]["metadata"]["namespace"] == "research")
    quota = next(r for r in resources(plan_, "kubernetes:core/v1:ResourceQuota") if r["name"] == "team-research-quota")
    namespace = next(r for r in resources(plan_, "kubernetes:core/v1:Namespace") if r["name"] == "team-research")
    assert {volume["urn"], quota["urn"], namespace["urn"]} <= set(claim["options"]["dependsOn"])
    assert the(plan_, ADDON)["urn"] in volume["options"]["dependsOn"]


def test_the_shared_area_is_a_read_only_volume_and_claim_per_team():
    plan_ = plan("shared")
    volumes, claims = team_volumes(plan_, names.DATASETS_SHARED_PVC), team_claims(plan_, names.DATASETS_SHARED_PVC)
    teams = sorted(names.team_namespace(t.name) for t in datasets.claim_teams(spec("shared")))
    assert sorted(volumes) == sorted(claims) == teams
    for namespace, volume in volumes.items():
        pv, pvc = volume["inputs"]["spec"], claims[namespace]["inputs"]["spec"]
        assert pv["csi"]["readOnly"] is True and pv["csi"]["volumeAttributes"]["mountname"].endswith("/common")
        assert pv["accessModes"] == pvc["accessModes"] == ["ReadOnlyMany"]
        assert pvc["volumeName"] == volume["inputs"]["metadata"]["name"] == names.datasets_shared_volume(
            volume["inputs"]["metadata"]["labels"][names.TEAM_LABEL])
    links = {r["inputs"]["fileSystemPath"]: r["inputs"] for r in owned(plan_, DRA)}
    assert links["/common"]["dataRepositoryPath"] == "s3://gpu-dev-datasets/train/common/"
    assert links["/common"]["s3"] == {"autoImportPolicy": {"events": ["NEW", "CHANGED", "DELETED"]}}  # never exported


def test_the_workload_helper_mounts_the_shared_area_read_only():
    from gpu_platform.render.workloads import gpu_pod

    pod = gpu_pod(spec("shared"), "research", "svc", "registry.example.com/x:1")
    (container,) = pod["spec"]["containers"]
    assert {"name": "datasets-shared", "mountPath": "/datasets-shared", "readOnly": True} in container["volumeMounts"]
    assert {"name": "datasets-shared", "persistentVolumeClaim": {"claimName": names.DATASETS_SHARED_PVC,
                                                                  "readOnly": True}} in pod["spec"]["volumes"]
    prod_pod = gpu_pod(spec("prod"), "research", "svc", "registry.example.com/x:1")
    assert "datasets-shared" not in [v["name"] for v in prod_pod["spec"]["volumes"]]


# --- the setup Job: the directories, owned by a non-root owner ---

@pytest.mark.parametrize("variant", ["prod", "shared"])
def test_the_setup_job_makes_every_directory_for_its_owner_before_any_team_volume(variant):
    plan_, s = plan(variant), spec(variant)
    fsx = s.datasets.fsx_lustre
    job = the(plan_, JOB)
    assert job["inputs"]["metadata"]["namespace"] == "kube-system"
    (container,) = job["inputs"]["spec"]["template"]["spec"]["containers"]
    script = container["command"][2]
    owner = f"{fsx.owner.uid}:{fsx.owner.gid}"
    for team in datasets.claim_teams(s):
        path = f"/fsx{datasets.team_path(fsx, team.name)}"
        assert f"mkdir -p {path}\nchown {owner} {path}\nchmod 2775 {path}" in script
    if fsx.shared:
        assert f"chown {owner} /fsx{datasets.shared_path(fsx)}\nchmod 0755" in script
    assert owner != "0:0" and container["image"] == catalog.DATASETS_SETUP_IMAGE
    assert subprocess.run(["sh", "-n", "-c", script], capture_output=True).returncode == 0
    assert container["securityContext"]["capabilities"] == {"drop": ["ALL"], "add": ["CHOWN", "FOWNER", "FSETID"]}
    setup_claim = next(c for c in owned(plan_, PVC) if c["inputs"]["metadata"]["name"] == names.DATASETS_SETUP)
    assert setup_claim["urn"] in job["options"]["dependsOn"]
    assert {link["urn"] for link in owned(plan_, DRA)} <= set(job["options"]["dependsOn"])
    for volume in team_volumes(plan_).values():
        assert job["urn"] in volume["options"]["dependsOn"]
    kubernetes_validate.validate(job["inputs"], s.cluster.kubernetes_version, strict=True)


def test_the_setup_job_runs_on_a_node_with_the_lustre_client():
    job = datasets_objects.setup_job(spec("prod").datasets.fsx_lustre, ["research"], "kube-system")
    pod = job["spec"]["template"]["spec"]
    (term,) = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term == {"matchExpressions": [{"key": names.POOL_LABEL, "operator": "Exists"}]}  # GPU pools install it
    assert pod["tolerations"] == [{"operator": "Exists"}]


@pytest.mark.parametrize("variant", VARIANTS)
def test_volumes_and_claims_meet_the_kubernetes_schema(variant):
    version = spec(variant).cluster.kubernetes_version
    objects = [r["inputs"] for r in owned(plan(variant), PV) + owned(plan(variant), PVC)]
    assert objects
    for obj in objects:
        kubernetes_validate.validate(obj, version, strict=True)


def test_the_pure_objects_meet_the_schema_with_plain_values():
    s = spec("prod")
    team = s.teams[0]
    handle = datasets_objects.volume_handle("fs-0123456789abcdef0", team.name)
    fsx, namespace = s.datasets.fsx_lustre, names.team_namespace(team.name)
    pv = datasets_objects.persistent_volume(fsx, team.name, namespace, handle,
                                            "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com", "abcdefgh")
    assert pv["spec"]["csi"]["volumeHandle"] == "fs-0123456789abcdef0::research"
    for obj in (pv, datasets_objects.claim(fsx, team.name, namespace)):
        kubernetes_validate.validate(obj, s.cluster.kubernetes_version, strict=True)


def test_the_stack_exports_the_file_system():
    exported = plan("prod")["outputs"]["datasets"]
    assert exported["fileSystemId"].startswith("fs-") and exported["dnsName"].endswith(".amazonaws.com")


def test_a_stack_without_datasets_registers_none_of_it():
    plan_ = cached_plan(stack_platform("dev"))
    assert resources(plan_, COMPONENT) == resources(plan_, FS) == resources(plan_, DRA) == []
    assert catalog.FSX_CSI_ADDON not in [a["inputs"]["addonName"] for a in resources(plan_, ADDON)]
    assert "datasets" not in plan_["outputs"]


# --- the provider SDK's input types ---

def sdk_class(type_: str) -> type:
    from pulumi_aws import ec2, eks, fsx, iam, vpc

    module, name = type_.split(":")[1].split("/")[0], type_.split(":")[2]
    return args_class(getattr({"fsx": fsx, "ec2": ec2, "eks": eks, "iam": iam, "vpc": vpc}[module], name))


@pytest.mark.parametrize("variant", VARIANTS)
def test_every_aws_input_is_an_input_of_the_provider_sdk_with_its_type(variant):
    plan_ = plan(variant)
    (component,) = resources(plan_, COMPONENT)
    aws = [r for r in plan_["resources"] if r["parent"] == component["urn"] and r["type"].startswith("aws:")]
    assert {r["type"] for r in aws} >= {FS, SG, INGRESS, EGRESS, ADDON, ROLE, ROLE_POLICY}
    for r in aws:
        assert sdk_problems(r["inputs"], sdk_class(r["type"]), r["name"]) == []


def test_the_sdk_check_catches_a_bad_input():
    from pulumi_aws import fsx

    bad = {"subnetIds": ["subnet-1"], "storageCapacity": "1200", "throughput": 1}
    found = sdk_problems(bad, fsx.LustreFileSystemArgs)
    assert found == [".throughput: not an input of LustreFileSystemArgs", ".storageCapacity: '1200' is not int",
                     ".subnetIds: ['subnet-1'] is not str"]


# --- botocore's FSx model: CreateFileSystem and the rules its documentation states ---

CREATE_FS = FSX_API.operation_model("CreateFileSystem").input_shape
LUSTRE = CREATE_FS.members["LustreConfiguration"]
# Plan inputs -> CreateFileSystem members; LustreConfiguration members; DeleteFileSystem's.
TOP = {"storageCapacity": "StorageCapacity", "storageType": "StorageType", "securityGroupIds": "SecurityGroupIds",
       "kmsKeyId": "KmsKeyId", "fileSystemTypeVersion": "FileSystemTypeVersion"}
IN_LUSTRE = {"deploymentType": "DeploymentType", "perUnitStorageThroughput": "PerUnitStorageThroughput"}
ON_DELETE = {"skipFinalBackup": "SkipFinalBackup"}


def create_file_system(inputs: dict) -> dict:
    """The CreateFileSystem request the provider makes from these inputs (and what it keeps for the delete)."""
    handled = {*TOP, *IN_LUSTRE, *ON_DELETE, "subnetIds", "tags", "metadataConfiguration"}
    assert set(inputs) <= handled, f"plan inputs with no CreateFileSystem member: {set(inputs) - handled}"
    lustre = {IN_LUSTRE[k]: v for k, v in inputs.items() if k in IN_LUSTRE}
    if "metadataConfiguration" in inputs:
        lustre["MetadataConfiguration"] = {"Mode": inputs["metadataConfiguration"]["mode"]}
    return {"FileSystemType": "LUSTRE", "SubnetIds": [inputs["subnetIds"]],
            "Tags": [{"Key": k, "Value": v} for k, v in inputs["tags"].items()],
            **{TOP[k]: v for k, v in inputs.items() if k in TOP}, "LustreConfiguration": lustre}


def api_throughputs() -> dict[str, tuple[int, ...]]:
    """PerUnitStorageThroughput's valid SSD values per deployment type, as botocore documents them."""
    text = doc(LUSTRE.members["PerUnitStorageThroughput"])
    found = re.findall(r"For (PERSISTENT_\d) SSD storage: ([\d, ]+) MB/s/TiB", text)
    assert found, text
    return {kind: tuple(int(v) for v in values.split(",")) for kind, values in found}


def api_capacity_rule() -> tuple[set[str], tuple[int, int], int]:
    """StorageCapacity for SSD deployment types: which types, the first two sizes, then the increment."""
    text = doc(CREATE_FS.members["StorageCapacity"])
    m = re.search(r"For ([A-Z_0-9, and]+) deployment types using SSD storage type, the valid values are (\d+) GiB, "
                  r"(\d+) GiB, and increments of (\d+) GiB", text)
    assert m, text
    return set(re.findall(r"[A-Z]+_\d", m.group(1))), (int(m.group(2)), int(m.group(3))), int(m.group(4))


def test_the_catalog_throughputs_are_the_api_s():
    api = api_throughputs()
    for kind, deployment in catalog.FSX_LUSTRE_DEPLOYMENTS.items():
        assert deployment.throughputs == api.get(kind, ()), kind  # scratch: not settable


def test_the_catalog_capacities_are_the_api_s_for_every_offered_type():
    kinds, first, step = api_capacity_rule()
    assert set(catalog.FSX_LUSTRE_DEPLOYMENTS) <= kinds
    assert (catalog.FSX_LUSTRE_CAPACITY_GIB, catalog.FSX_LUSTRE_CAPACITY_STEP_GIB) == (first, step)


def test_only_persistent_types_take_a_kms_key():
    text = doc(CREATE_FS.members["KmsKeyId"])
    assert "PERSISTENT_1 and PERSISTENT_2 deployment types only" in text
    for kind, deployment in catalog.FSX_LUSTRE_DEPLOYMENTS.items():
        assert deployment.persistent == kind.startswith("PERSISTENT")


def test_every_offered_type_runs_the_pinned_lustre_version():
    assert "2.15 is supported by all Lustre deployment types" in doc(CREATE_FS.members["FileSystemTypeVersion"])
    assert catalog.FSX_LUSTRE_VERSION == "2.15"


def test_s3_links_are_offered_where_the_api_allows_them():
    text = doc(FSX_API.operation_model("CreateDataRepositoryAssociation"))
    assert "supported on all FSx for Lustre 2.12 and 2.15 file systems, excluding scratch_1" in text
    for kind, deployment in catalog.FSX_LUSTRE_DEPLOYMENTS.items():
        assert deployment.data_repository_associations == (kind != "SCRATCH_1"), kind


def test_final_backups_follow_what_fsx_can_back_up():
    text = doc(FSX_API.operation_model("CreateBackup"))
    assert "A Persistent deployment type" in text and "not linked to a data repository" in text


def lustre_rule_problems(request: dict) -> list[str]:
    """The rules botocore states in prose, applied to one CreateFileSystem request."""
    lustre, size = request["LustreConfiguration"], request["StorageCapacity"]
    kind = lustre["DeploymentType"]
    problems = []
    allowed = api_throughputs().get(kind)
    if (lustre.get("PerUnitStorageThroughput") in (allowed or ())) != bool(allowed):
        problems.append(f"PerUnitStorageThroughput {lustre.get('PerUnitStorageThroughput')} for {kind}: {allowed}")
    kinds, first, step = api_capacity_rule()
    if kind not in kinds or not (size in first or size % step == 0):
        problems.append(f"StorageCapacity {size} for {kind}")
    if "KmsKeyId" in request and not kind.startswith("PERSISTENT"):
        problems.append(f"KmsKeyId on {kind}")
    if "MetadataConfiguration" in lustre and kind != "PERSISTENT_2":
        problems.append(f"MetadataConfiguration on {kind}")
    return problems


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_file_system_meets_create_file_system(variant):
    request = create_file_system(the(plan(variant), FS)["inputs"])
    assert api_problems(request, CREATE_FS) == []
    assert lustre_rule_problems(request) == []


def test_the_fsx_checks_catch_bad_requests():
    request = create_file_system(the(plan("prod"), FS)["inputs"])
    request["LustreConfiguration"].update(DeploymentType="PERSISTENT_1", PerUnitStorageThroughput=250)
    request.update(StorageCapacity=3600, FileSystemType="NFS")
    assert api_problems(request, CREATE_FS)  # FileSystemType is an enum
    assert lustre_rule_problems(request) == ["PerUnitStorageThroughput 250 for PERSISTENT_1: (50, 100, 200)",
                                             "StorageCapacity 3600 for PERSISTENT_1",
                                             "MetadataConfiguration on PERSISTENT_1"]


@pytest.mark.parametrize("variant", ["prod", "persistent-1"])
def test_the_delete_request_meets_delete_file_system(variant):
    inputs = the(plan(variant), FS)["inputs"]
    shape = FSX_API.operation_model("DeleteFileSystem").input_shape
    request = {"FileSystemId": "fs-0123456789abcdef0",
               "LustreConfiguration": {"SkipFinalBackup": inputs["skipFinalBackup"]}}
    assert api_problems(request, shape) == []


@pytest.mark.parametrize("variant", ["prod", "scratch", "shared"])
def test_every_link_meets_create_data_repository_association(variant):
    links = owned(plan(variant), DRA)
    assert links
    shape = FSX_API.operation_model("CreateDataRepositoryAssociation").input_shape
    for link in links:
        inputs = link["inputs"]
        s3 = {f"Auto{k[4:]}": {"Events": v["events"]} for k, v in inputs["s3"].items()}
        request = {"FileSystemId": inputs["fileSystemId"], "FileSystemPath": inputs["fileSystemPath"],
                   "DataRepositoryPath": inputs["dataRepositoryPath"],
                   "BatchImportMetaDataOnCreate": inputs["batchImportMetaDataOnCreate"], "S3": s3}
        assert set(inputs) == {"fileSystemId", "fileSystemPath", "dataRepositoryPath", "batchImportMetaDataOnCreate",
                               "s3", "deleteDataInFilesystem"}
        assert api_problems(request, shape) == []
        for member in ("FileSystemId", "FileSystemPath", "DataRepositoryPath"):
            assert re.match(shape.members[member].metadata["pattern"], request[member]), member
        delete = FSX_API.operation_model("DeleteDataRepositoryAssociation").input_shape
        assert api_problems({"AssociationId": "dra-0123456789abcdef0",
                             "DeleteDataInFileSystem": inputs["deleteDataInFilesystem"]}, delete) == []
    paths = [link["inputs"]["fileSystemPath"].rstrip("/") + "/" for link in links]
    assert not any(a != b and b.startswith(a) for a in paths for b in paths)  # FSx refuses overlapping paths
    assert len(links) <= catalog.FSX_LUSTRE_MAX_DATA_REPOSITORY_ASSOCIATIONS


# --- botocore's EC2, IAM and EKS models ---

EC2_API = service_model("ec2")
EC2_TEXT = re.compile(r"^[a-zA-Z0-9 ._\-:/()#,@\[\]+=&;{}!$*]{0,255}$")  # EC2's documented description charset


def test_the_security_group_meets_create_security_group():
    inputs = the(plan("prod"), SG)["inputs"]
    shape = EC2_API.operation_model("CreateSecurityGroup").input_shape
    assert "Valid characters: a-z, A-Z, 0-9, spaces, and ._-:/()#,@[]+=&;{}!$*" in doc(shape.members["Description"])
    request = {"GroupName": inputs["name"], "Description": inputs["description"], "VpcId": inputs["vpcId"],
               "TagSpecifications": [{"ResourceType": "security-group",
                                      "Tags": [{"Key": k, "Value": v} for k, v in inputs["tags"].items()]}]}
    assert api_problems(request, shape) == []
    assert EC2_TEXT.match(inputs["name"]) and EC2_TEXT.match(inputs["description"])
    assert not inputs["name"].startswith("sg-")


@pytest.mark.parametrize("kind, type_", [("Ingress", INGRESS), ("Egress", EGRESS)])
def test_the_lustre_rules_meet_authorize_security_group(kind, type_):
    shape = EC2_API.operation_model(f"AuthorizeSecurityGroup{kind}").input_shape
    for rule in owned(plan("prod"), type_):
        r = rule["inputs"]
        request = {"GroupId": r["securityGroupId"], "IpPermissions": [{
            "IpProtocol": r["ipProtocol"], "FromPort": r["fromPort"], "ToPort": r["toPort"],
            "UserIdGroupPairs": [{"GroupId": r["referencedSecurityGroupId"], "Description": r["description"]}]}]}
        assert api_problems(request, shape) == [], rule["name"]
        assert EC2_TEXT.match(r["description"])


def test_the_controller_role_meets_create_role_and_put_role_policy():
    iam = service_model("iam")
    role, policy = the(plan("prod"), ROLE)["inputs"], the(plan("prod"), ROLE_POLICY)["inputs"]
    create = iam.operation_model("CreateRole").input_shape
    assert api_problems({"RoleName": role["name"], "AssumeRolePolicyDocument": role["assumeRolePolicy"],
                         "Description": role["description"]}, create) == []
    assert re.fullmatch(create.members["Description"].metadata["pattern"], role["description"])
    put = iam.operation_model("PutRolePolicy").input_shape
    assert api_problems({"RoleName": policy["role"], "PolicyName": "datasets-csi", "PolicyDocument": policy["policy"]},
                        put) == []


def test_the_add_on_meets_create_addon():
    inputs = the(plan("prod"), ADDON)["inputs"]
    shape = service_model("eks").operation_model("CreateAddon").input_shape
    request = {k: v for k, v in inputs.items() if not k.startswith("resolveConflicts")}
    request["resolveConflicts"] = inputs["resolveConflictsOnCreate"]
    assert set(request) <= set(shape.members)
    assert api_problems(request, shape) == []


# --- the stack file's rules: each exits 2 naming its field ---

def run_plan(tmp_path, capsys, platform: dict) -> tuple[int, str]:
    from gpu_platform.planner.cli import main

    code = main(["plan", "--config", str(write_stack(tmp_path / "Pulumi.test.yaml", platform))])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


def no_s3_links_on_scratch(monkeypatch):
    """A catalog where SCRATCH_2 cannot link S3, as SCRATCH_1 cannot (a type the stack does not offer)."""
    import dataclasses
    from types import MappingProxyType

    changed = dict(catalog.FSX_LUSTRE_DEPLOYMENTS)
    changed["SCRATCH_2"] = dataclasses.replace(changed["SCRATCH_2"], data_repository_associations=False)
    monkeypatch.setattr(catalog, "FSX_LUSTRE_DEPLOYMENTS", MappingProxyType(changed))


def karpenter_with_datasets() -> dict:
    platform = stack_platform("karpenter")
    platform["datasets"] = {"fsxLustre": {"addonVersion": ADDON_VERSION}}
    return platform


def test_karpenter_pools_mount_datasets_like_node_groups():
    """Their EC2NodeClass installs the Lustre client (AL2023 user data; Ubuntu's boot script)."""
    from gpu_platform.render.karpenter import node_class_object

    spec = parse_platform(karpenter_with_datasets())
    for pool in (p for p in spec.node_pools if p.provisioner == "karpenter"):
        assert "lustre-client" in node_class_object(PoolContext.of(spec, pool), pool)["spec"]["userData"], pool.name


def bottlerocket_with_datasets() -> dict:
    platform = with_datasets("dev")
    platform["nodePools"][0].update(ami={"type": "BOTTLEROCKET_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"},
                                    sharing={"mode": "none"})
    return platform


def quota_without_room(claims: int) -> dict:
    platform = with_datasets("dev")
    platform["teams"][0]["quota"]["persistentVolumeClaims"] = claims
    return platform


def prod_with(**fsx) -> dict:
    """prod's datasets with these fields changed (None: left out)."""
    platform = stack_platform("prod")
    merged = {**platform["datasets"]["fsxLustre"], **fsx}
    platform["datasets"]["fsxLustre"] = {k: v for k, v in merged.items() if v is not None}
    return platform


REFUSED = [
    ("capacity not a 2400 GiB step", lambda: with_datasets("dev", storageCapacityGiB=3600),
     "datasets.fsxLustre.storageCapacityGiB: 3600 is not a valid size"),
    ("capacity below the minimum", lambda: with_datasets("dev", storageCapacityGiB=600),
     "datasets.fsxLustre.storageCapacityGiB"),
    ("a PERSISTENT_1 throughput on PERSISTENT_2", lambda: with_datasets("dev", throughputPerTiB=200),
     "datasets.fsxLustre.throughputPerTiB: PERSISTENT_2 takes 125, 250, 500, 1000"),
    ("a throughput on scratch", lambda: with_datasets("dev", deploymentType="SCRATCH_2", throughputPerTiB=125),
     "datasets.fsxLustre.throughputPerTiB: SCRATCH_2 takes none"),
    ("an unknown deployment type", lambda: with_datasets("dev", deploymentType="SCRATCH_1"),
     "datasets.fsxLustre.deploymentType"),
    ("a KMS key on scratch", lambda: with_datasets("dev", deploymentType="SCRATCH_2", kmsKeyArn=KMS),
     "datasets.fsxLustre.kmsKeyArn: SCRATCH_2 is encrypted with the FSx service key"),
    ("scratch in prod", lambda: prod_with(deploymentType="SCRATCH_2", throughputPerTiB=None),
     "datasets.fsxLustre.deploymentType: SCRATCH_2 loses its data"),
    ("a team that does not exist", lambda: with_datasets("dev", teams=["research", "vision"]),
     "datasets.fsxLustre.teams[1]: unknown team 'vision'; teams: research, applied-ml"),
    ("an unpinned add-on", lambda: prod_with(addonVersion=None), "datasets.fsxLustre.addonVersion: pin the"),
    ("a claim larger than the file system", lambda: with_datasets("dev", claimSize="2Ti"),
     "datasets.fsxLustre.claimSize: must be <= storageCapacityGiB (1200Gi)"),
    ("an S3 path that is not one", lambda: with_datasets("dev", dataRepository={"s3Path": "gpu-data/train"}),
     "datasets.fsxLustre.dataRepository.s3Path"),
    ("nodes that cannot mount Lustre", bottlerocket_with_datasets, "nodePools[0].ami.type: BOTTLEROCKET_x86_64_NVIDIA"),
    ("no room for the claim in a quota", lambda: quota_without_room(1),
     "teams[0].quota.persistentVolumeClaims: must be >= 2"),
    ("no room for the shared claim in a quota", lambda: with_datasets("dev", shared="common"),
     "teams[0].quota.storage: must be >= 2049Gi: the datasets claim (1Ti), the shared area's claim (1Gi) and the "
     "model-cache claim (1Ti) count against it"),
    ("a shared area named like the team directories", lambda: with_datasets("dev", shared="teams", claimSize="500Gi"),
     "datasets.fsxLustre.shared: 'teams' holds the team directories"),
    ("a shared area that is not a directory name", lambda: with_datasets("dev", shared="a/b", claimSize="500Gi"),
     "datasets.fsxLustre.shared"),
    ("root owning the directories", lambda: with_datasets("dev", owner={"uid": 0, "gid": 0}),
     "datasets.fsxLustre.owner.uid"),
    ("more S3 links than FSx allows", lambda: many_teams_linked(8),
     "datasets.fsxLustre.dataRepository: each claiming team's directory and the shared area links to S3 through "
     "its own data repository association: 9 needed, FSx allows 8 per file system"),
]


def many_teams_linked(count: int) -> dict:
    platform = with_datasets("dev", shared="common", claimSize="100Gi",
                             dataRepository={"s3Path": "s3://gpu-dev-datasets/train"})
    template = platform["teams"][0]
    quota = {**template["quota"], "gpus": 1}
    template = {k: v for k, v in template.items() if k != "services"}  # one GPU each: no room for a service
    platform["teams"] = [{**template, "name": f"team-{i}", "access": {}, "quota": quota} for i in range(count)]
    return platform


def test_eight_links_are_allowed():
    assert parse_platform(many_teams_linked(7)).datasets.fsx_lustre.shared == "common"




@pytest.mark.parametrize("case, platform, line", REFUSED, ids=[c[0] for c in REFUSED])
def test_a_bad_datasets_setting_exits_2_naming_the_field(tmp_path, capsys, case, platform, line):
    code, err = run_plan(tmp_path, capsys, platform())
    assert code == 2 and line in err, err


def test_an_s3_link_on_a_type_that_cannot_take_one_exits_2_naming_the_field(tmp_path, capsys, monkeypatch):
    no_s3_links_on_scratch(monkeypatch)
    platform = with_datasets("dev", deploymentType="SCRATCH_2", dataRepository={"s3Path": "s3://gpu-dev-data/train"})
    code, err = run_plan(tmp_path, capsys, platform)
    assert code == 2
    assert ("datasets.fsxLustre.dataRepository: SCRATCH_2 file systems cannot link an S3 data repository; "
            "deploymentType must be one of PERSISTENT_2, PERSISTENT_1") in err
