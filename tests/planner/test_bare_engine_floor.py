"""The benchmark's bare-engine floors (benchmarks/bare_engine.py) are true floors: generated from a plan's
JSON, each registers exactly the resources, inputs, options and outputs the plan recorded, the typed one
through the SDKs' typed classes."""
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


@pytest.mark.parametrize("typed", [False, True], ids=["generic", "typed"])
@pytest.mark.parametrize("stack", ["prod", "karpenter"])
def test_the_floor_registers_what_the_plan_did(tmp_path, stack, typed):
    bare = _bare_engine()
    plan = json.loads((PLANS / f"{stack}.json").read_text())
    floor = bare.recorded(bare.write_floor(plan, tmp_path / "floor", typed=typed), plan, bare.region_of(plan))
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


def test_the_typed_floor_registers_through_the_class_a_program_uses():
    resources = [
        {"type": "kubernetes:apps/v1:Deployment", "custom": True, "inputs": {"metadata": {}, "spec": {}}},
        {"type": "kubernetes:rbac.authorization.k8s.io/v1:Role", "custom": True, "inputs": {"rules": []}},
        {"type": "kubernetes:monitoring.coreos.com/v1:PodMonitor", "custom": True,
         "inputs": {"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor", "spec": {}}},
        {"type": "kubernetes:kueue.x-k8s.io/v1beta1:WorkloadPriorityClass", "custom": True,
         "inputs": {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "WorkloadPriorityClass", "value": 1}},
        {"type": "aws:eks/nodeGroup:NodeGroup", "custom": True, "inputs": {"nodeGroupName": "a", "amiType": "x"}},
        {"type": "pulumi:providers:aws", "custom": True, "inputs": {}},
        {"type": "gpu-platform:index:GpuNodePool", "custom": False, "inputs": {}},
    ]
    classes = _bare_engine().typed_classes({"resources": resources})
    assert {t: (c["module"], c["class"]) for t, c in classes.items()} == {
        "kubernetes:apps/v1:Deployment": ("pulumi_kubernetes.apps.v1.Deployment", "Deployment"),
        "kubernetes:rbac.authorization.k8s.io/v1:Role": ("pulumi_kubernetes.rbac.v1.Role", "Role"),
        "kubernetes:monitoring.coreos.com/v1:PodMonitor": ("pulumi_kubernetes.apiextensions.CustomResource",
                                                           "CustomResource"),
        "aws:eks/nodeGroup:NodeGroup": ("pulumi_aws.eks.node_group", "NodeGroup"),
    }  # a custom object with fields beside metadata and spec, providers and components stay generic
    assert classes["aws:eks/nodeGroup:NodeGroup"]["names"] == {"nodeGroupName": "node_group_name", "amiType": "ami_type"}
    assert {"type": "kubernetes:rbac.authorization.k8s.io/v1beta1:Role"} in classes[
        "kubernetes:rbac.authorization.k8s.io/v1:Role"]["aliases"]  # the class adds it: passing it again doubles it
