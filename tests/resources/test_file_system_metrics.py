"""Grafana's CloudWatch access and the data-feeding dashboard as planned: the role, its Pod Identity
association before the stack's release, and the dashboard naming the stack's own file systems."""
from __future__ import annotations

import json

import kubernetes_validate
import pytest

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render.data_feeding import FILE_NAME, FileSystems, dashboard, read_policy
from gpu_platform.render.monitoring import efa_metrics_wanted
from tests.support.stacks import cached_plan, resource, resources, stack_platform

CONFIGMAP = "kubernetes:core/v1:ConfigMap"
ASSOCIATION = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
NAME = "monitoring-grafana-cloudwatch"


def plan(stack: str) -> dict:
    return cached_plan(stack_platform(stack))


def existing() -> dict:
    p = stack_platform("dev")
    p["monitoring"] = {"prometheus": {"mode": "existing", "namespace": "observability"},
                       "alerting": p["monitoring"]["alerting"]}
    return p


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_grafana_reads_cloudwatch_through_its_own_read_only_role(stack):
    planned, prom = plan(stack), parse_platform(stack_platform(stack)).monitoring.prometheus
    role = resource(planned, "aws:iam/role:Role", NAME)["inputs"]
    trust = json.loads(role["assumeRolePolicy"])["Statement"][0]
    assert trust["Principal"] == {"Service": catalog.EKS_POD_IDENTITY_PRINCIPAL}
    assert resource(planned, "aws:iam/rolePolicy:RolePolicy", NAME)["inputs"]["policy"] == read_policy()
    association = resource(planned, ASSOCIATION, NAME)
    assert (association["inputs"]["namespace"], association["inputs"]["serviceAccount"]) == (
        prom.namespace, names.GRAFANA_SERVICE_ACCOUNT)
    release = resource(planned, "kubernetes:helm.sh/v3:Release", "monitoring-stack")
    assert association["urn"] in release["options"]["dependsOn"]  # credentials exist when Grafana starts
    assert release["inputs"]["values"]["grafana"]["serviceAccount"]["name"] == names.GRAFANA_SERVICE_ACCOUNT


@pytest.mark.parametrize(("stack", "fsx", "efs", "efa"), [("dev", False, True, False), ("prod", True, True, True)])
def test_the_dashboard_names_the_stack_s_own_file_systems(stack, fsx, efs, efa):
    planned = plan(stack)
    assert efa_metrics_wanted(parse_platform(stack_platform(stack))) is efa  # prod's training pool has EFA
    # The IDs as the resources that mount them received them.
    lustre = sorted({r["inputs"]["fileSystemId"] for r in
                     resources(planned, "aws:fsx/dataRepositoryAssociation:DataRepositoryAssociation")})
    cache = sorted({r["inputs"]["fileSystemId"] for r in resources(planned, "aws:efs/mountTarget:MountTarget")})
    assert (len(lustre), len(cache)) == (int(fsx), int(efs))
    config_map = resource(planned, CONFIGMAP, "data-feeding")
    expected = dashboard(FileSystems(lustre[0] if lustre else None, cache[0] if cache else None), efa)
    assert json.loads(config_map["inputs"]["data"][FILE_NAME]) == json.loads(json.dumps(expected))
    file_system_urns = {r["urn"] for t in ("aws:fsx/lustreFileSystem:LustreFileSystem", "aws:efs/fileSystem:FileSystem")
                        for r in resources(planned, t)}
    assert file_system_urns <= set(config_map["options"]["dependsOn"])


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_dashboard_config_map_is_valid_and_carries_the_sidecar_label(stack):
    planned, spec = plan(stack), parse_platform(stack_platform(stack))
    obj = resource(planned, CONFIGMAP, "data-feeding")["inputs"]
    kubernetes_validate.validate(obj, spec.cluster.kubernetes_version, strict=True)
    prom = spec.monitoring.prometheus
    assert (obj["metadata"]["namespace"], obj["metadata"]["labels"][prom.grafana_dashboard_label]) == (
        prom.namespace, "1")


def test_an_existing_prometheus_gets_no_cloudwatch_role_or_dashboard():
    planned = cached_plan(existing())
    assert not [r for r in resources(planned, ASSOCIATION) if r["name"] == NAME]
    assert not [r for r in resources(planned, CONFIGMAP) if r["name"] == "data-feeding"]
