"""The benchmark's bare-engine floor (benchmarks/bare_engine.py) is a true floor: generated from a plan's
JSON, it registers exactly the resources, inputs, options and outputs the plan recorded."""
from __future__ import annotations

import importlib.util
import json

import pytest

from tests.support.stacks import ROOT

PLANS = ROOT / "tests" / "planner" / "fixtures" / "plans"


def _bare_engine():
    spec = importlib.util.spec_from_file_location("bare_engine", ROOT / "benchmarks" / "bare_engine.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("stack", ["prod", "karpenter"])
def test_the_floor_registers_what_the_plan_did(tmp_path, stack):
    bare = _bare_engine()
    plan = json.loads((PLANS / f"{stack}.json").read_text())
    floor = bare.recorded(bare.write_floor(plan, tmp_path / "floor"), plan, bare.region_of(plan))
    assert bare.same_registrations(plan, floor) == []
    edited = json.loads(json.dumps(plan))
    edited["resources"][3]["inputs"]["extra"] = 1
    assert bare.same_registrations(edited, floor) != []  # the comparison does see a difference


def test_the_floor_loads_the_sdk_module_of_every_built_in_kubernetes_type():
    types = ["kubernetes:apps/v1:Deployment", "kubernetes:batch/v1:Job", "kubernetes:core/v1:Namespace",
             "kubernetes:rbac.authorization.k8s.io/v1:Role", "kubernetes:helm.sh/v3:Release",
             "kubernetes:monitoring.coreos.com/v1:PodMonitor", "kubernetes:keda.sh/v1alpha1:ScaledObject",
             "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"]
    modules = _bare_engine().sdk_modules({"resources": [{"type": t} for t in types]})
    assert modules == ["pulumi_aws.vpc", "pulumi_kubernetes.apiextensions", "pulumi_kubernetes.apps.v1",
                       "pulumi_kubernetes.batch.v1", "pulumi_kubernetes.core.v1", "pulumi_kubernetes.helm.v3",
                       "pulumi_kubernetes.rbac.v1"]
