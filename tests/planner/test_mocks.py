"""The mock cloud: deterministic, realistic outputs per type, and refused invokes."""
from __future__ import annotations

import base64
import re

import pulumi
import pytest

from gpu_platform.planner.mocks import ACCOUNT, RESOURCES, PlannerMocks, UnansweredInvoke
from tests.planner.planner_fixtures import run_fixture

REGION = "eu-west-1"


def new(type_: str, logical: str = "res", **inputs):
    return PlannerMocks(REGION).new_resource(
        pulumi.runtime.MockResourceArgs(typ=type_, name=logical, inputs=inputs, custom=True))


def test_same_resource_gets_the_same_answer():
    assert new("aws:ec2/vpc:Vpc", "net", cidrBlock="10.0.0.0/16") == new("aws:ec2/vpc:Vpc", "net", cidrBlock="10.0.0.0/16")


def test_different_names_get_different_ids():
    assert new("aws:ec2/subnet:Subnet", "a")[0] != new("aws:ec2/subnet:Subnet", "b")[0]


def test_two_runs_of_a_program_record_identical_resources():
    first, second = run_fixture(), run_fixture()
    assert [(r.urn, r.id, r.inputs, r.outputs) for r in sorted(first.resources, key=lambda r: r.urn)] == \
           [(r.urn, r.id, r.inputs, r.outputs) for r in sorted(second.resources, key=lambda r: r.urn)]


def test_inputs_are_echoed():
    assert new("aws:ec2/vpc:Vpc", cidrBlock="10.1.0.0/16")[1]["cidrBlock"] == "10.1.0.0/16"


def test_missing_name_is_auto_named_like_the_provider():
    assert re.fullmatch(r"ctl-[0-9a-f]{7}", new("aws:iam/role:Role", "ctl")[1]["name"])


def test_given_name_is_kept():
    assert new("aws:iam/role:Role", "ctl", name="gpu-dev-control-plane")[1]["name"] == "gpu-dev-control-plane"


def test_role_arn_uses_the_account_and_the_name():
    rid, out = new("aws:iam/role:Role", name="nodes")
    assert (rid, out["arn"]) == ("nodes", f"arn:aws:iam::{ACCOUNT}:role/nodes")


@pytest.mark.parametrize("type_, prefix", [
    ("aws:ec2/vpc:Vpc", "vpc-"), ("aws:ec2/subnet:Subnet", "subnet-"), ("aws:ec2/securityGroup:SecurityGroup", "sg-"),
    ("aws:ec2/launchTemplate:LaunchTemplate", "lt-"), ("aws:efs/fileSystem:FileSystem", "fs-"),
    ("aws:efs/mountTarget:MountTarget", "fsmt-"), ("aws:efs/accessPoint:AccessPoint", "fsap-"),
    ("aws:ec2/natGateway:NatGateway", "nat-"), ("aws:ec2/eip:Eip", "eipalloc-"),
])
def test_ids_have_the_aws_shape(type_, prefix):
    assert re.fullmatch(re.escape(prefix) + r"[0-9a-f]{17}", new(type_)[0])


def test_launch_template_has_version_and_arn():
    rid, out = new("aws:ec2/launchTemplate:LaunchTemplate")
    assert (out["latestVersion"], out["arn"]) == (1, f"arn:aws:ec2:{REGION}:{ACCOUNT}:launch-template/{rid}")


def test_cluster_endpoint_looks_like_eks():
    out = new("aws:eks/cluster:Cluster", name="gpu-dev", version="1.33")[1]
    assert re.fullmatch(rf"https://[0-9A-F]{{32}}\.gr7\.{REGION}\.eks\.amazonaws\.com", out["endpoint"])


def test_cluster_certificate_is_base64_pem():
    out = new("aws:eks/cluster:Cluster", name="gpu-dev")[1]
    assert base64.b64decode(out["certificateAuthority"]["data"]).startswith(b"-----BEGIN CERTIFICATE-----")


def test_cluster_has_security_group_oidc_issuer_status_and_version():
    out = new("aws:eks/cluster:Cluster", name="gpu-dev", version="1.32", vpcConfig={"subnetIds": ["s-1"]})[1]
    assert out["vpcConfig"]["clusterSecurityGroupId"].startswith("sg-")
    assert out["vpcConfig"]["subnetIds"] == ["s-1"]
    assert out["identities"][0]["oidcs"][0]["issuer"].startswith(f"https://oidc.eks.{REGION}.amazonaws.com/id/")
    assert (out["status"], out["version"]) == ("ACTIVE", "1.32")


def test_node_group_reports_its_auto_scaling_group():
    out = new("aws:eks/nodeGroup:NodeGroup", clusterName="gpu-dev", nodeGroupName="gpu-dev-a10g")[1]
    asg = out["resources"][0]["autoscalingGroups"][0]["name"]
    assert asg.startswith("eks-gpu-dev-a10g-") and out["status"] == "ACTIVE"


def test_efs_dns_name_uses_the_file_system_id():
    rid, out = new("aws:efs/fileSystem:FileSystem")
    assert out["dnsName"] == f"{rid}.efs.{REGION}.amazonaws.com"


def test_aws_resources_get_the_stack_region():
    assert new("aws:ec2/vpc:Vpc")[1]["region"] == REGION


def test_namespaced_kubernetes_object_defaults_to_namespace_default():
    out = new("kubernetes:core/v1:ConfigMap", "cm", metadata={"name": "settings"})[1]
    assert out["metadata"]["namespace"] == "default"


def test_cluster_scoped_kubernetes_object_gets_no_namespace():
    assert "namespace" not in new("kubernetes:core/v1:Namespace", "ns", metadata={"name": "team-a"})[1]["metadata"]


def test_kubernetes_object_without_a_name_is_auto_named():
    assert re.fullmatch(r"cm-[0-9a-f]{8}", new("kubernetes:core/v1:ConfigMap", "cm", metadata={})[1]["metadata"]["name"])


def test_helm_release_reports_deployed_status():
    out = new("kubernetes:helm.sh/v3:Release", "op", chart="gpu-operator", version="v26.7.0", namespace="gpu-operator")[1]
    assert out["status"] == {"status": "deployed", "namespace": "gpu-operator", "name": out["name"],
                             "version": "v26.7.0", "chart": "gpu-operator", "revision": 1, "appVersion": "v26.7.0"}


def test_unknown_aws_type_echoes_inputs_with_id_and_arn():
    rid, out = new("aws:sqs/queue:Queue", "jobs", delaySeconds=5)
    assert out["delaySeconds"] == 5 and rid and out["arn"].startswith(f"arn:aws:sqs:{REGION}:{ACCOUNT}:")


def test_components_echo_their_inputs_without_an_id():
    answer = PlannerMocks(REGION).new_resource(
        pulumi.runtime.MockResourceArgs(typ="x:index:Thing", name="t", inputs={"a": 1}, custom=False))
    assert answer == ("", {"a": 1})


def test_per_type_table_is_data():
    assert all(callable(mock.id) for mock in RESOURCES.values())


def test_unknown_invoke_is_refused_naming_the_token():
    with pytest.raises(UnansweredInvoke, match="aws:ec2/getAmi:getAmi: give it an answer with `--mocks FILE`"):
        PlannerMocks(REGION).call(pulumi.runtime.MockCallArgs("aws:ec2/getAmi:getAmi", {}, ""))


def test_get_cluster_fills_the_sdk_result_fields(tmp_path):
    """Through the real SDK: camelCase keys that do not match a result field would arrive as None."""
    from gpu_platform.planner.engine import run_program

    (tmp_path / "__main__.py").write_text(
        "import pulumi\nimport pulumi_aws.eks as eks\n"
        "c = eks.get_cluster(name='prod-gpu')\n"
        "pulumi.export('got', [c.endpoint, c.certificate_authorities[0].data, c.vpc_config.cluster_security_group_id,"
        " c.vpc_config.subnet_ids, c.vpc_config.vpc_id, c.arn, c.version, c.role_arn,"
        " c.identities[0].oidcs[0].issuer, c.access_configs[0].authentication_mode])\n")
    got = run_program(tmp_path, stack="t", config={"aws:region": REGION}).outputs["got"]
    assert None not in got and got[-1] == "API" and got[4].startswith("vpc-")
