"""docs/library.md's examples, run as written: each program under the mock engine in a project of its own,
and the policy config through `gpu-platform plan` and `lock` on that project."""
import json
import re
from pathlib import Path

import pytest
import yaml

from gpu_platform.planner.cli import main
from tests.support.programs import PROJECT, one, registered, run, under
from tests.support.stacks import AS_OF, stack_platform

DOC = Path(__file__).resolve().parents[1] / "docs" / "library.md"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
EXAMPLE = re.compile(r"<!-- example: (?P<name>[\w-]+) -->\n```(?P<lang>\w+)\n(?P<body>.*?)\n```", re.S)


def examples() -> dict[str, str]:
    return {m["name"]: m["body"] + "\n" for m in EXAMPLE.finditer(DOC.read_text())}


def test_the_page_marks_its_examples():
    assert set(examples()) == {"node-pool", "adopted-cluster", "teams", "whole-platform", "policy-config"}


def test_a_node_pool_on_a_pulumi_aws_cluster(tmp_path):
    recording = run(tmp_path, examples()["node-pool"])
    cluster = one(recording, "aws:eks/cluster:Cluster").outputs["name"]
    group = one(recording, NODE_GROUP, "l4")
    assert group.inputs["clusterName"] == cluster and group.inputs["nodeGroupName"] == f"{cluster}-l4"
    assert group.options["protect"] is True  # environment prod
    assert {t["key"] for t in group.inputs["taints"]} == {"nvidia.com/gpu"}
    assert recording.outputs["nodeGroup"] == f"{cluster}-l4"


def test_the_gpu_stack_on_an_adopted_cluster(tmp_path):
    recording = run(tmp_path, examples()["adopted-cluster"])
    release = one(recording, "kubernetes:helm.sh/v3:Release")
    assert release.inputs["values"]["operator"]["nodeSelector"]["node-role"] == "system"
    group = one(recording, NODE_GROUP, "h100-mig")
    assert release.urn in group.options["dependsOn"]
    assert group.inputs["clusterName"] == "ml-prod" and group.inputs["subnetIds"] == [
        "subnet-0aaa1111bbbb2222c", "subnet-0ddd3333eeee4444f"]
    role = one(recording, "aws:iam/role:Role")
    assert role.inputs["name"] == "ml-prod-nodes" and group.inputs["nodeRoleArn"] == role.outputs["arn"]
    assert group.inputs["labels"]["nvidia.com/mig.config"] == "pool-h100-mig"  # the layout the operator renders


def test_team_namespaces_on_a_cluster_you_have(tmp_path):
    recording = run(tmp_path, examples()["teams"], config={f"{PROJECT}:kubeconfig": "apiVersion: v1\nkind: Config\n"})
    namespaces = {r.inputs["metadata"]["name"] for r in registered(recording, "kubernetes:core/v1:Namespace")}
    assert namespaces == {"research", "batch"}
    quotas = {r.inputs["metadata"]["namespace"]: r.inputs["spec"]["hard"]
              for r in registered(recording, "kubernetes:core/v1:ResourceQuota")}
    assert quotas["research"]["requests.nvidia.com/gpu"] == "8" and quotas["batch"]["requests.nvidia.com/gpu"] == "4"
    entries = {r.inputs["principalArn"]: r.inputs["kubernetesGroups"]
               for r in registered(recording, "aws:eks/accessEntry:AccessEntry")}
    assert entries == {"arn:aws:iam::123456789012:role/research": ["research:developers"],
                       "arn:aws:iam::123456789012:role/batch-leads": ["batch:admins"]}
    policies = registered(recording, "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy")
    assert {r.inputs["metadata"]["name"] for r in policies} >= {"gpu-platform-gpu-nodes-for-gpu-pods",
                                                               "gpu-platform-priority-within-tier"}


def test_the_whole_platform_through_an_assumed_role(tmp_path):
    config = {f"{PROJECT}:platform": json.dumps(stack_platform("dev")),
              f"{PROJECT}:platformSlackWebhook": "https://hooks.slack.com/services/T0/B0/a",
              f"{PROJECT}:researchSlackWebhook": "https://hooks.slack.com/services/T0/B0/b"}
    recording = run(tmp_path, examples()["whole-platform"], config=config)
    (provider,) = registered(recording, "pulumi:providers:aws")  # the program's: the platform made none
    assert provider.name == "ml-account"
    platform = one(recording, "gpu-platform:index:GpuPlatform")
    created = [r for r in under(recording, platform) if r.custom and r.type.startswith("aws:")]
    assert created and all(r.provider.startswith(provider.urn + "::") for r in created)
    assert recording.outputs["clusterName"] == "gpu-dev"


@pytest.fixture
def project(tmp_path):
    """A project of the user's: the node-pool example as its program, the page's policy config beside it."""
    (tmp_path / "Pulumi.yaml").write_text(yaml.safe_dump({"name": "acme-gpu", "runtime": "python"}))
    (tmp_path / "Pulumi.prod.yaml").write_text(yaml.safe_dump({"config": {"aws:region": "us-east-1"}}))
    (tmp_path / "__main__.py").write_text(examples()["node-pool"])
    (tmp_path / "policy-prod.json").write_text(examples()["policy-config"])
    return tmp_path


def plan(project, capsys, *extra):
    code = main(["plan", "--stack", "prod", "--project-dir", str(project), "--policy-config",
                 str(project / "policy-prod.json"), "--as-of", AS_OF, *extra])
    return code, capsys.readouterr().out


def test_the_pack_passes_the_example_in_prod(project, capsys):
    code, out = plan(project, capsys)
    assert code == 0, out


def test_the_pack_refuses_an_unprotected_node_pool_in_prod(project, capsys):
    program = project / "__main__.py"
    program.write_text(program.read_text().replace(
        "opts=pulumi.ResourceOptions(depends_on=[cluster])", "opts=pulumi.ResourceOptions(depends_on=[cluster], protect=False)"))
    code, out = plan(project, capsys)
    assert code == 1 and "node-group-protected" in out and "protect" in out


def test_lock_writes_the_lock_into_the_policy_config_and_the_plan_holds_to_it(project, capsys):
    assert main(["lock", "--stack", "prod", "--project-dir", str(project), "--policy-config",
                 str(project / "policy-prod.json")]) == 0
    config = json.loads((project / "policy-prod.json").read_text())
    assert set(config["node-group-replacement-guard"]["lock"]["nodeGroups"]) == {"l4"}
    program = project / "__main__.py"
    program.write_text(program.read_text().replace('capacity_type="spot"', 'capacity_type="on-demand"'))
    capsys.readouterr()
    code, out = plan(project, capsys)
    assert code == 1 and "node-group-replacement-guard" in out


def test_the_page_states_each_components_required_arguments():
    import gpu_platform

    rows = re.findall(r"^\| `(\w+)` \| ([^|]+) \|", DOC.read_text().split("### Required arguments")[1], re.M)
    stated = {name: set(re.findall(r"`(\w+)`", required)) for name, required in rows}
    assert stated == {c: set(getattr(gpu_platform, f"{c}Args").__required_keys__) for c in gpu_platform.COMPONENTS}
