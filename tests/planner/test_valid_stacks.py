"""Valid stacks are a property: every stack file generated across the product of what a pool can be
(tests/support/valid_stacks.py) plans through the real `gpu-platform plan` with the policy passed, or is
refused (exit 2) only by rules the docs name as refusing that combination (REFUSALS below); the verdict holds
no violation but the documented ones (ADVISORIES, and MANDATORY in prod).

A fixed seed and a modest number of examples in CI; a longer campaign raises GPU_PLATFORM_PROPERTY_EXAMPLES
(docs/planner.md, "Valid stacks as a property").
"""
from __future__ import annotations

import contextlib
import functools
import io
import os
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

from gpu_platform.decisions.serving import serving_rules
from gpu_platform.planner.cli import main
from gpu_platform.spec.models import PlatformSpec
from tests.support.stacks import AS_OF, ROOT, write_stack
from tests.support.valid_stacks import IMAGES, valid_platform

EXAMPLES = int(os.environ.get("GPU_PLATFORM_PROPERTY_EXAMPLES", "30"))
# Each example is a full plan (about a second): no shrinking, the failing stack is printed as drawn.
CAMPAIGN = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=True,
                    phases=[Phase.explicit, Phase.generate],
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# The only refusals a generated stack may meet: combinations the docs name as refused (field, message start;
# each a pattern).
REFUSALS = {
    # docs/queueing.md, "Spot: batch first, the higher tiers never": with Kueue, a standard or critical-inference
    # team's quota of a GPU only spot pools offer
    "a higher tier's GPUs on spot alone": (r"teams\[\d\]\.quota", "a standard team never runs on spot"),
    # docs/dra.md, "What the stack file refuses": Kubernetes below 1.34
    "DRA below Kubernetes 1.34": (r"nodePools\[0\]\.gpuAllocation", "DRA needs Kubernetes"),
    # docs/gpu-operator.md, "Who owns the NVIDIA driver": an operator driver on a Kubernetes version NVIDIA does not
    # support for EKS + Ubuntu
    "operator driver off NVIDIA's versions": (r"cluster\.kubernetesVersion", "operator-owned drivers on EKS are "
                                                                           "supported on Kubernetes"),
    # docs/karpenter.md, "What the stack builds": the Kubernetes versions each Karpenter release supports
    "Karpenter off its versions": (r"cluster\.kubernetesVersion", r"Karpenter 1.14.1 supports Kubernetes"),
    # docs/dra.md, "What the stack file refuses": provisioner: karpenter
    "DRA on Karpenter": (r"nodePools\[0\]\.gpuAllocation", "Karpenter v1.14 does not provision for ResourceClaims"),
    # docs/karpenter.md, "Sharing on Karpenter pools": MIG slices per profile (the mixed strategy) on Karpenter
    "MIG slices on Karpenter": (r"nodePools\[0\]\.sharing\.strategy", "Karpenter knows GPUs only as nvidia.com/gpu"),
    # docs/dra.md, "What the stack file refuses": sharing.mode: mig (and "Not supported yet, and why": MIG under DRA)
    "DRA with MIG": (r"nodePools\[0\]\.gpuAllocation",
                     r"MIG slices on DRA pools \(mig\.nvidia\.com claims\) are not supported"),
    # docs/dra.md, "What the stack file refuses": sharing.mode: time-slicing
    "DRA with time-slicing": (r"nodePools\[0\]\.gpuAllocation", "time-slicing is a device-plugin setting"),
    # docs/dra.md, "What the stack file refuses": Bottlerocket older than 1.63.0
    "DRA on Bottlerocket before 1.63.0": (r"nodePools\[\d\]\.ami\.releaseVersion",
                                          r"1\.50\.0-[0-9a-f]{8} is BOTTLEROCKET_x86_64_NVIDIA 1\.50\.0, whose own "
                                          r"device plugin cannot be turned off before 1\.63\.0"),
    # docs/gpu-operator.md, "Who owns the NVIDIA driver": time-slicing or MIG on Bottlerocket
    "sharing on Bottlerocket": (r"nodePools\[0\]\.sharing\.mode", "BOTTLEROCKET_x86_64_NVIDIA runs its own device plugin; "
                                                                  "GPU sharing is configured"),
    # docs/training.md, "EFA end to end": an EFA pool on Karpenter
    "EFA on Karpenter": (r"nodePools\[0\]\.efa", "EFA pools use managed node groups"),
    # docs/training.md, "Datasets on FSx for Lustre": pools whose nodes cannot mount Lustre (Bottlerocket)
    "datasets on Bottlerocket": (r"nodePools\[\d\]\.ami\.type", "BOTTLEROCKET_x86_64_NVIDIA nodes cannot mount the "
                                                                 "datasets file system"),
}
# The only advisories a generated stack may draw (exit 0, policy passed): the support window of an older
# Kubernetes version of the catalog, on the planning day (docs/policies.md, the rules table:
# lifecycle-support-window; docs/lifecycle.md, "EKS Kubernetes versions").
ADVISORIES = {"lifecycle-support-window": r"cluster\.kubernetesVersion: Kubernetes "}
# The only mandatory violation (exit 1): prod forbids time-slicing (docs/policies.md, the rules table:
# time-slicing-forbidden, default environment prod).
MANDATORY = {"time-slicing-forbidden": r"(node group|NodePool) '[^']+' \(pool [^)]+\) time-slices each GPU"}
VIOLATION = re.compile(r"  (?P<level>advisory|mandatory) +(?P<policy>\S+) +\S+: (?P<message>.*)")
ERROR = re.compile(r"error: (?P<file>[^:]+): (?P<field>[^:]+): (?P<message>.*)")


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    assert "Traceback" not in out.getvalue() + err.getvalue(), err.getvalue()
    return code, out.getvalue(), err.getvalue()


def plan(tmp: Path, platform: dict[str, Any], locked: bool = False) -> tuple[int, str, str]:
    """`gpu-platform plan` of `platform`; `locked`: then held to a lock of that plan (`gpu-platform lock`), as a
    prod stack is once its pools were reviewed (without one the disruption gate fails closed)."""
    path = write_stack(tmp / "Pulumi.generated.yaml", platform)
    argv = ("plan", "--config", str(path), "--project-dir", str(ROOT), "--as-of", AS_OF)
    code, out, err = cli(*argv, "--json", str(tmp / "plan.json"))
    if code == 2 or not locked:
        return code, out, err
    assert cli("lock", "--plan", str(tmp / "plan.json"), "--out", str(tmp / "lock.json"))[0] == 0
    return cli(*argv, "--lock", str(tmp / "lock.json"))


def documented_refusal(line: str) -> str | None:
    """The REFUSALS entry an `error:` line is, or None."""
    found = ERROR.fullmatch(line)
    if found is None:
        return None
    return next((name for name, (field, start) in REFUSALS.items()
                 if re.fullmatch(field, found["field"]) and re.match(start, found["message"])), None)


def undocumented_violation(line: str) -> str | None:
    """`line` of the verdict unless it is an advisory ADVISORIES or a mandatory violation MANDATORY allows (each a
    pattern of the message's start)."""
    found = VIOLATION.fullmatch(line)
    allowed = (ADVISORIES if found and found["level"] == "advisory" else MANDATORY).get(found["policy"]) if found \
        else None
    return None if allowed is not None and re.match(allowed, found["message"]) else line


def assert_planned_or_refused_as_documented(tmp: Path, platform: dict[str, Any], locked: bool = False) -> None:
    code, out, err = plan(tmp, platform, locked)
    if code in (0, 1):
        verdict = out[out.index("Policy: "):].split("\n\n")[0].splitlines()  # the verdict, up to a blank line
        assert re.fullmatch(r"Policy: (passed|FAILED)(, no violations| \(.*\))\.", verdict[0]), verdict[0]
        violations = [line for line in verdict[1:] if line.startswith("  ")]
        assert [v for v in violations if undocumented_violation(v)] == [], violations
        return
    lines = err.splitlines()
    assert code == 2 and lines, f"exit {code}:\n{err}\n{out[-2000:]}"
    undocumented = [line for line in lines if documented_refusal(line) is None]
    assert not undocumented, f"a generated valid stack was refused:\n{chr(10).join(undocumented)}"


@CAMPAIGN
@given(platform=valid_platform())
def test_a_generated_stack_plans_clean_or_is_refused_as_documented(tmp_path_factory, platform):
    assert_planned_or_refused_as_documented(tmp_path_factory.mktemp("valid"), platform)


@CAMPAIGN
@given(platform=valid_platform(prod=True))
def test_a_generated_prod_stack_plans_clean_or_is_refused_as_documented(tmp_path_factory, platform):
    assert_planned_or_refused_as_documented(tmp_path_factory.mktemp("valid"), platform, locked=True)


@CAMPAIGN
@given(platform=valid_platform(slices=True))
def test_a_generated_stack_with_a_slices_only_team_plans_clean(tmp_path_factory, platform):
    assert_planned_or_refused_as_documented(tmp_path_factory.mktemp("valid"), platform)


def _pool(p: dict[str, Any]) -> dict[str, Any]:
    return p["nodePools"][0]


def _services(p: dict[str, Any]) -> list[dict[str, Any]]:
    return list(p["teams"][0].get("services", []))


# What the generator must reach, each dimension of a pool, its teams and the stack: narrowing it fails here.
REACHED = {
    "managed node group": lambda p: _pool(p)["provisioner"] == "managed-node-group",
    "Karpenter": lambda p: _pool(p)["provisioner"] == "karpenter",
    "spot": lambda p: _pool(p)["capacityType"] == "spot",
    "on-demand": lambda p: _pool(p)["capacityType"] == "on-demand" and "reservation" not in _pool(p),
    "ODCR": lambda p: _pool(p)["capacityType"] == "on-demand" and "reservation" in _pool(p),
    "Capacity Block": lambda p: _pool(p)["capacityType"] == "capacity-block",
    **{f"image {i}": functools.partial(lambda image, p: _pool(p)["ami"]["type"] == image, i) for i in IMAGES},
    "Bottlerocket node group from 1.63.0": lambda p: _pool(p)["ami"].get("releaseVersion", "").startswith("1.63.0-"),
    "operator-owned driver": lambda p: p["gpuOperator"]["driver"]["source"] == "operator",
    "no sharing": lambda p: "sharing" not in _pool(p),
    "time-slicing": lambda p: _pool(p).get("sharing", {}).get("mode") == "time-slicing",
    "MIG single": lambda p: _pool(p).get("sharing", {}).get("strategy") == "single",
    "MIG mixed on Karpenter": lambda p: _pool(p).get("sharing", {}).get("strategy") == "mixed"
    and _pool(p)["provisioner"] == "karpenter",
    "DRA": lambda p: _pool(p)["gpuAllocation"] == "dra",
    "EFA": lambda p: _pool(p)["efa"],
    "repair off": lambda p: not _pool(p)["repair"]["enabled"],
    "several GPUs whole": lambda p: p["teams"][0]["quota"]["gpus"] > 1,
    "slices only": lambda p: p["teams"][0]["quota"]["gpus"] == 0 and p["teams"][0]["quota"].get("migSlices"),
    "two teams": lambda p: len(p["teams"]) == 2,
    "queueing off": lambda p: "queueing" not in p,
    "a queue bound to the pool": lambda p: "queue" in p["teams"][0],
    "a second pool on spot": lambda p: len(p["nodePools"]) == 2 and p["nodePools"][1]["capacityType"] == "spot",
    "datasets": lambda p: "datasets" in p,
    "a service on whole GPUs": lambda p: any("count" in s["gpu"] for s in _services(p)),
    "a service on several GPUs (tensor parallel)": lambda p: any(s["gpu"].get("count", 1) > 1 for s in _services(p)),
    "a service on a MIG slice (single)": lambda p: _pool(p).get("sharing", {}).get("strategy") == "single"
    and bool(_services(p)),
    "a service on a MIG slice (mixed)": lambda p: any(s["gpu"].get("migProfile") for s in _services(p))
    and _pool(p).get("sharing", {}).get("strategy") == "mixed",
    "a service on a time-sliced GPU": lambda p: _pool(p).get("sharing", {}).get("mode") == "time-slicing"
    and bool(_services(p)),
    "two services": lambda p: len(_services(p)) == 2,
    "a service autoscaled": lambda p: any("autoscaling" in s for s in _services(p)),
    "a service not autoscaled": lambda p: any("autoscaling" not in s for s in _services(p)),
    "a service scaled to zero": lambda p: any(s["replicas"]["min"] == 0 for s in _services(p)),
    "a service of several replicas": lambda p: any(s["replicas"]["max"] > 1 for s in _services(p)),
    "a service's weights from parameters": lambda p: any("parameterCount" in s["model"] for s in _services(p)),
    "a service's model on S3": lambda p: any("s3" in s["model"] for s in _services(p)),
    "a service behind a load balancer": lambda p: any("loadBalancer" in s for s in _services(p)),
}


@pytest.mark.parametrize("name", REACHED)
def test_the_generator_reaches_each_dimension(name):
    """Drawn without planning (cheap): some stack of the CI seed's strategies has it."""
    strategy = st.one_of(valid_platform(), valid_platform(slices=True))
    find(strategy, REACHED[name], settings=settings(max_examples=2000, derandomize=True, database=None,
                                                    phases=[Phase.generate]))


@pytest.mark.parametrize("line, name", [
    ("error: /x/Pulumi.generated.yaml: nodePools[0].efa: EFA pools use managed node groups (one placement group ...)",
     "EFA on Karpenter"),
    ("error: /x/Pulumi.generated.yaml: nodePools[0].efa: g6.2xlarge have no EFA", None),
    ("error: /x/Pulumi.generated.yaml: teams[0].quota: EFA pools use managed node groups", None),
    ("error: /x/Pulumi.generated.yaml: TeamNamespace 'team-research': maxGpusPerPod: Input should be greater", None),
])
def test_only_a_documented_refusal_is_allowed(line, name):
    assert documented_refusal(line) == name


@pytest.mark.parametrize("line, allowed", [
    ("  advisory   lifecycle-support-window  aws:eks/cluster:Cluster::cluster: cluster.kubernetesVersion: Kubernetes "
     "1.33 is in EKS extended support on 2026-11-23", True),
    ("  advisory   lifecycle-support-window  aws:eks/cluster:Cluster::cluster: gpuOperator.driver.version: R570", False),
    ("  mandatory  monthly-budget  stack: the plan costs more than the budget", False),
    ("  mandatory  time-slicing-forbidden  aws:eks/nodeGroup:NodeGroup::gpu-pool: node group 'gpu-pool' (pool "
     "gpu-pool) time-slices each GPU 4 ways but environment prod forbids it", True),
    ("  advisory   time-slicing-forbidden  aws:eks/nodeGroup:NodeGroup::gpu-pool: node group 'gpu-pool'", False),
])
def test_only_a_documented_violation_is_allowed(line, allowed):
    assert (undocumented_violation(line) is None) == allowed


@settings(max_examples=300, derandomize=True, database=None, phases=[Phase.generate], deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(platform=st.one_of(valid_platform(), valid_platform(slices=True), valid_platform(prod=True)))
def test_generated_services_meet_every_serving_rule(platform):
    """Without planning (cheap, so many more stacks): the generated services pass every serving rule
    (decisions/serving.py) on the models alone, whatever the pool's own refusals."""
    spec = PlatformSpec.model_validate(platform)
    assert list(serving_rules(spec)) == []


@pytest.mark.parametrize("field, value, refused_at", [
    ("model", {"huggingFace": {"repo": "o/m", "revision": "0" * 40}, "weightsGiB": 4000}, "model.weightsGiB"),
    ("replicas", {"min": 1, "max": 1000}, "replicas.max"),
])
def test_the_serving_rule_check_refuses_a_service_that_does_not_fit(field, value, refused_at):
    """The check above is not vacuous: a generated service made too large is refused."""
    platform = find(valid_platform(), lambda p: bool(_services(p)),
                    settings=settings(max_examples=2000, derandomize=True, database=None, phases=[Phase.generate]))
    platform["teams"][0]["services"][0][field] = value
    problems = [str(path) for path, _ in serving_rules(PlatformSpec.model_validate(platform))]
    assert any(p.endswith(refused_at) for p in problems), problems
