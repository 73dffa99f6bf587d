"""The pack published alone (issue 21): policies/ copied to a folder of its own, its requirements installed
the way the Pulumi CLI installs a published pack (a `venv` in the pack's folder, `-e ..` pinned to the
wheel, as the publish form pins a release), and the analyzer started as the CLI starts it
(`python -m pulumi.policy <engine> .` in the pack's folder). A lock given by policy config, inline or as a
lockFile relative to the pack's folder, blocks a node-group replacement.
"""
from __future__ import annotations

import json
import shutil
import subprocess

import grpc
import pytest
from google.protobuf import empty_pb2, json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2, analyzer_pb2_grpc

from gpu_platform import policy as gpu_policies
from gpu_platform.policy.common import config_defaults
from tests.support.installed import ROOT, clean_env, fresh_venv

pytestmark = pytest.mark.installs

GUARD = "node-group-replacement-guard"
LOCK = json.loads((ROOT / "stacks" / "Pulumi.prod.lock.json").read_text())
PLAN = json.loads((ROOT / "tests" / "planner" / "fixtures" / "plans" / "prod.json").read_text())


@pytest.fixture(scope="module")
def pack(wheel, tmp_path_factory):
    """policies/ alone, with its requirements installed into `venv` beside it."""
    folder = tmp_path_factory.mktemp("published") / "gpu-platform-pack"
    shutil.copytree(ROOT / "policies", folder, ignore=shutil.ignore_patterns("venv", "__pycache__"))
    requirements = folder / "requirements.txt"
    lines = requirements.read_text().splitlines()
    assert "-e .." in lines, "the pack's requirements install the checkout for local runs"
    requirements.write_text("\n".join(str(wheel) if line == "-e .." else line for line in lines) + "\n")
    fresh_venv(folder / "venv", "-r", str(requirements))
    return folder


@pytest.fixture(scope="module")
def analyzer(pack):
    bin_dir = pack / "venv" / "bin"
    proc = subprocess.Popen([str(bin_dir / "python"), "-u", "-m", "pulumi.policy", "127.0.0.1:1", "."], cwd=pack,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=clean_env(bin_dir))
    try:
        port = int(proc.stdout.readline().strip() or 0)
        assert port, proc.stderr.read()
        yield analyzer_pb2_grpc.AnalyzerStub(grpc.insecure_channel(f"127.0.0.1:{port}"))
    finally:
        proc.kill()
        proc.wait(timeout=30)


def _struct(value: dict) -> struct_pb2.Struct:
    return json_format.ParseDict(value, struct_pb2.Struct())


def configure(stub, guard: dict) -> None:
    """What the CLI sends: every policy's level and schema defaults, the guard's properties over them."""
    configs = {}
    for p in gpu_policies.POLICIES:
        config = analyzer_pb2.PolicyConfig(enforcementLevel=analyzer_pb2.MANDATORY)
        config.properties.update({**config_defaults(p.config_schema), **(guard if p.name == GUARD else {})})
        configs[p.name] = config
    stub.Configure(analyzer_pb2.ConfigureAnalyzerRequest(policyConfig=configs), timeout=60)


def a100_train(instance_type: str) -> analyzer_pb2.AnalyzeRequest:
    """The prod plan's a100-train node group, with its instance type set, as the engine sends it."""
    group = next(r for r in PLAN["resources"] if r["type"] == "aws:eks/nodeGroup:NodeGroup" and r["name"] == "a100-train")
    props = {**group["inputs"], "instanceTypes": [instance_type]}
    provider = {"defaultTags": json.dumps({"tags": {"gpu-platform/environment": "prod"}}), "region": "us-east-1"}
    return analyzer_pb2.AnalyzeRequest(
        type=group["type"], name=group["name"], urn=group["urn"], properties=_struct(props),
        options=analyzer_pb2.AnalyzerResourceOptions(protect=True, ignoreChanges=["scalingConfig.desiredSize"]),
        provider=analyzer_pb2.AnalyzerProviderResource(type="pulumi:providers:aws", name="aws",
                                                       urn=group["provider"].rsplit("::", 1)[0], properties=_struct(provider)))


def guard_messages(stub, instance_type: str) -> list[str]:
    found = stub.Analyze(a100_train(instance_type), timeout=60).diagnostics
    return [d.message for d in found if d.policyName == GUARD and d.enforcementLevel == analyzer_pb2.MANDATORY]


def test_the_published_pack_serves_every_policy(analyzer):
    info = analyzer.GetAnalyzerInfo(empty_pb2.Empty(), timeout=60)
    assert info.name == gpu_policies.PACK_NAME and len(info.policies) == len(gpu_policies.POLICIES)


def test_an_inline_lock_in_the_policy_config_blocks_a_replacement(analyzer):
    configure(analyzer, {"lock": LOCK})
    assert guard_messages(analyzer, "p4d.24xlarge") == []
    (message,) = guard_messages(analyzer, "p4de.24xlarge")
    assert "locked node group 'a100-train': instanceTypes would change" in message


def test_a_lock_file_relative_to_the_pack_s_folder_blocks_a_replacement(analyzer, pack):
    (pack / "locks").mkdir(exist_ok=True)
    (pack / "locks" / "Pulumi.prod.lock.json").write_text(json.dumps(LOCK))
    configure(analyzer, {"lockFile": "locks/Pulumi.{stack}.lock.json"})
    assert guard_messages(analyzer, "p4d.24xlarge") == []
    assert len(guard_messages(analyzer, "p4de.24xlarge")) == 1


def test_without_a_configured_lock_the_pack_reads_none(analyzer):
    configure(analyzer, {})
    assert guard_messages(analyzer, "p4de.24xlarge") == []
