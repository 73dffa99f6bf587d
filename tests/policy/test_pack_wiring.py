"""The pack as the Pulumi CLI loads it: `policies/__main__.py` only builds the pack from gpu_platform.policy.

The constructor starts a gRPC server and never returns, so the wiring test patches it; the last test
starts the real analyzer the way the Python policy host does (`python -m pulumi.policy <engine> <pack>`)
and talks to it over gRPC like the CLI: GetAnalyzerInfo, Configure, Analyze.
"""
from __future__ import annotations

import json
import re
import runpy
import subprocess
import sys

import grpc
import jsonschema
import pulumi_policy
import pytest
import yaml
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from gpu_platform import policy as gpu_policies
from gpu_platform.policy import replacement
from gpu_platform.policy.common import config_defaults
from tests.policy.harness import ROOT, UNKNOWN, gpu_node_group

PACK = ROOT / "policies"


@pytest.fixture
def built(monkeypatch):
    """What __main__.py passes to PolicyPack (the constructor replaced by a recorder)."""
    calls = []
    monkeypatch.setattr(pulumi_policy, "PolicyPack", lambda **kw: calls.append(kw))
    runpy.run_path(str(PACK / "__main__.py"), run_name="__main__")
    assert len(calls) == 1
    return calls[0]


def test_main_builds_the_pack_with_every_policy(built):
    assert built["name"] == gpu_policies.PACK_NAME
    assert built["policies"] == gpu_policies.POLICIES
    assert built["enforcement_level"] == pulumi_policy.EnforcementLevel.MANDATORY


def test_pack_holds_the_issue_s_rules(built):
    expected = {"gpu-operator-chart-pinned", "gpu-driver-pinned", "ami-release-pinned", "driver-ami-consistency",
                "gpu-pool-tainted", "operator-tolerates-gpu-taints", "mig-on-capable-instances", "mig-layout-valid",
                "time-slicing-forbidden", "critical-pool-on-demand", "instance-types-allowed", "node-group-protected",
                "node-group-no-delete-before-replace", "node-group-ignores-desired-size", "launch-template-imdsv2",
                "launch-template-volumes-encrypted", "model-cache-encrypted-protected", "team-gpu-quota",
                "team-quota-within-capacity", "monthly-budget", "helm-chart-pinned", "eks-addon-pinned",
                "node-group-replacement-guard", "locked-node-groups-present"}
    assert expected <= {p.name for p in built["policies"]}


def test_docs_policies_table_lists_each_rule_of_the_pack_with_its_kind():
    """docs/policies.md is the one place the rules are listed: a rule added or removed shows there."""
    rows = re.findall(r"^\| `([a-z0-9-]+)` \| (stack|resource) \|", (ROOT / "docs" / "policies.md").read_text(), re.M)
    kinds = {p.name: "stack" if isinstance(p, pulumi_policy.StackValidationPolicy) else "resource"
             for p in gpu_policies.POLICIES}
    assert sorted(rows) == sorted(kinds.items())


@pytest.mark.parametrize("policy", gpu_policies.POLICIES, ids=lambda p: p.name)
def test_each_policy_is_described(policy):
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", policy.name)
    assert policy.description.endswith(".") and policy.severity is not None
    assert isinstance(policy, (pulumi_policy.ResourceValidationPolicy, pulumi_policy.StackValidationPolicy))


@pytest.mark.parametrize("policy", [p for p in gpu_policies.POLICIES if p.config_schema], ids=lambda p: p.name)
def test_config_schema_is_valid_and_its_defaults_pass_it(policy):
    schema = {"type": "object", "properties": policy.config_schema.properties}
    jsonschema.Draft7Validator.check_schema(schema)
    jsonschema.validate(config_defaults(policy.config_schema), schema)


def test_pack_metadata_files():
    meta = yaml.safe_load((PACK / "PulumiPolicy.yaml").read_text())
    assert meta["runtime"] == "python" and re.fullmatch(r"\d+\.\d+\.\d+", meta["version"]) and meta["description"]
    reqs = (PACK / "requirements.txt").read_text()
    assert re.search(r"^pulumi-policy>=1\.21,<2$", reqs, re.M) and re.search(r"^pulumi>=3\.\d+,<4$", reqs, re.M)


def test_rules_do_not_load_the_program_s_dependencies():
    """The rules read registered resources and facts: loading them imports no stack-file model (pydantic),
    no provider SDK, no resource component, and nothing else of the `program` extra (jsonschema)."""
    code = ("import sys, gpu_platform.policy; "
            "bad = [m for m in sys.modules if m in ('pydantic', 'pulumi_aws', 'pulumi_kubernetes', 'jsonschema') "
            "or m.startswith(('gpu_platform.spec', 'gpu_platform.resources', 'gpu_platform.platform'))]; "
            "print(bad); sys.exit(1 if bad else 0)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def _struct(value: dict) -> struct_pb2.Struct:
    return json_format.ParseDict(value, struct_pb2.Struct())


def _policy_config(level: int, props: dict) -> analyzer_pb2.PolicyConfig:
    config = analyzer_pb2.PolicyConfig(enforcementLevel=level)
    config.properties.update(props)
    return config


def _node_group_request(props: dict, protect: bool, name: str = "a10g") -> analyzer_pb2.AnalyzeRequest:
    provider = {"defaultTags": json.dumps({"tags": {"gpu-platform/environment": "prod"}}), "region": "us-east-1"}
    return analyzer_pb2.AnalyzeRequest(
        type="aws:eks/nodeGroup:NodeGroup", properties=_struct(props), name=name,
        urn=f"urn:pulumi:prod::gpu-platform::aws:eks/nodeGroup:NodeGroup::{name}",
        options=analyzer_pb2.AnalyzerResourceOptions(protect=protect, ignoreChanges=["scalingConfig.desiredSize"]),
        provider=analyzer_pb2.AnalyzerProviderResource(
            type="pulumi:providers:aws", properties=_struct(provider), name="aws",
            urn="urn:pulumi:prod::gpu-platform::pulumi:providers:aws::aws"))


def test_real_analyzer_serves_the_pack(tmp_path):
    lock = tmp_path / "lock.json"
    lock.write_text(json.dumps(replacement.new_lock("prod", {"a10g": gpu_node_group()})))
    proc = subprocess.Popen([sys.executable, "-u", "-m", "pulumi.policy", "127.0.0.1:1", str(PACK)], cwd=PACK,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        port = int(proc.stdout.readline().strip())
        stub = analyzer_pb2_grpc.AnalyzerStub(grpc.insecure_channel(f"127.0.0.1:{port}"))
        info = stub.GetAnalyzerInfo(empty_pb2.Empty(), timeout=60)
        assert info.name == gpu_policies.PACK_NAME and len(info.policies) == len(gpu_policies.POLICIES)
        # The CLI sends every policy's reconciled config (schema defaults included).
        configs = {p.name: _policy_config(analyzer_pb2.MANDATORY if p.name != "team-quota-within-capacity"
                                          else analyzer_pb2.ADVISORY, config_defaults(p.config_schema))
                   for p in gpu_policies.POLICIES}
        configs["node-group-replacement-guard"].properties.update({"lockFile": str(lock)})
        stub.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig=configs), timeout=60)

        clean = stub.Analyze(_node_group_request(gpu_node_group(), protect=True), timeout=60)
        assert list(clean.diagnostics) == []

        unsafe = stub.Analyze(_node_group_request(gpu_node_group(clusterName=UNKNOWN), protect=False), timeout=60)
        found = {d.policyName: d for d in unsafe.diagnostics}
        assert set(found) == {"node-group-protected", "node-group-replacement-guard"}
        assert all(d.enforcementLevel == analyzer_pb2.MANDATORY for d in found.values())
        assert "fails closed" in found["node-group-replacement-guard"].message
    finally:
        proc.kill()
        proc.wait(timeout=30)
