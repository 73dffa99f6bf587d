"""lifecycle-end-of-life and lifecycle-support-window on stacks of resources built as the engine builds them,
and the budget rule pricing each control plane by its support window."""
from __future__ import annotations

import pytest
from pulumi_policy import PolicyResource
from pulumi_policy.proxy import unknown_checking_proxy

from gpu_platform.facts.component_types import public
from tests.policy.harness import (
    HELM_RELEASE, NODE_GROUP, gpu_node_group, operator_release, options, run_stack, stack_resource, urn, with_provider,
)

CLUSTER = "aws:eks/cluster:Cluster"
TODAY = {"asOf": "2026-11-23"}


def component(type_: str, name: str, parent=None) -> PolicyResource:
    return PolicyResource(type_, unknown_checking_proxy({}), urn(type_, name), name, options(), None, parent, [], {})


def below(parent: PolicyResource, *resources: PolicyResource) -> list[PolicyResource]:
    for r in resources:
        r.parent = parent
    return [parent, *resources]


def stack(version: str = "1.35", *, driver: str | None = None, chart: str = "v26.7.0",
          release: str = "1.35.7-20260911", environment: str = "prod") -> list:
    """The resources gpu-platform's program registers, below its GpuPlatform."""
    operator = operator_release(version=chart, driver={"enabled": True, "version": driver} if driver else None)
    group = gpu_node_group(release=release, version=version)
    return with_provider(below(component(public("GpuPlatform"), "gpu-platform"),
                               stack_resource(CLUSTER, {"name": "gpu-test", "version": version}, "cluster"),
                               stack_resource(HELM_RELEASE, operator, "gpu-operator"),
                               stack_resource(NODE_GROUP, group, "a10g")), environment)


def eol(resources: list, config: dict | None = None) -> list:
    return run_stack("lifecycle-end-of-life", resources, {**TODAY, **(config or {})})


def window(resources: list, config: dict | None = None) -> list:
    return run_stack("lifecycle-support-window", resources, {**TODAY, **(config or {})})


def test_a_current_stack_passes_both():
    assert eol(stack()) == [] and window(stack()) == []


def test_extended_support_is_advisory_with_its_cost_on_the_cluster():
    ((message, urn),) = window(stack("1.33", release="1.33.5-20251120"))
    assert message.startswith("cluster.kubernetesVersion: Kubernetes 1.33 is in EKS extended support")
    assert message.endswith("(+$365.00/month)") and urn.endswith("::cluster")
    assert eol(stack("1.33", release="1.33.5-20251120")) == []


def test_past_extended_support_fails_in_prod():
    ((message, urn),) = eol(stack("1.33", release="1.33.5-20251120"), {"asOf": "2027-08-01"})
    assert "reached the end of EKS extended support on 2027-07-29" in message and urn.endswith("::cluster")


def test_past_extended_support_is_only_advisory_in_dev():
    resources = stack("1.33", release="1.33.5-20251120", environment="dev")
    assert eol(resources, {"asOf": "2027-08-01"}) == []
    assert "reached the end of EKS extended support" in window(resources, {"asOf": "2027-08-01"})[0][0]


def test_configured_environments_decide_what_fails():
    resources = stack("1.33", release="1.33.5-20251120", environment="staging")
    assert eol(resources, {"asOf": "2027-08-01"}) == []
    assert eol(resources, {"asOf": "2027-08-01", "environments": ["prod", "staging"]})


def test_the_environment_property_wins_over_the_provider_tag():
    resources = stack("1.33", release="1.33.5-20251120", environment="dev")
    assert eol(resources, {"asOf": "2027-08-01", "environment": "prod"})


def test_an_end_of_life_operator_driver_fails_on_the_operator_release():
    ((message, urn),) = eol(stack(driver="535.309.01"))
    assert message.startswith("gpuOperator.driver.version: the GPU Operator's driver runs R535")
    assert urn.endswith("::gpu-operator")


def test_an_end_of_life_operator_line_fails():
    ((message, _),) = eol(stack(chart="v25.10.1"))
    assert "GPU Operator v25.10 reached end of life" in message


def test_an_ami_release_on_an_end_of_life_branch_fails():
    ((message, urn),) = eol(stack(release="1.35.2-20250901"))
    assert "pool a10g runs R570" in message and urn is None


# --- what a message names: the field the program set ---

def test_a_component_s_pins_are_named_by_its_python_arguments():
    """A program of its own: each message names the argument of the component that set it."""
    operator = operator_release(driver={"enabled": True, "version": "535.309.01"})
    resources = with_provider([
        *below(component(public("Cluster"), "gpu"), stack_resource(CLUSTER, {"version": "1.33"}, "gpu-eks")),
        *below(component(public("GpuOperator"), "operator"), stack_resource(HELM_RELEASE, operator, "gpu-operator")),
        *below(component(public("GpuNodePool"), "a10g"),
               stack_resource(NODE_GROUP, gpu_node_group(release="1.35.2-20250901", version="1.33"), "a10g"))])
    found = [m for m, _ in eol(resources, {"asOf": "2027-08-01"})]
    assert [m.split(": ")[0] for m in found] == [
        "kubernetes_version of Cluster 'gpu'", "driver.version of GpuOperator 'operator'",
        "ami.release_version of GpuNodePool 'a10g'"]
    assert "upgrade kubernetes_version of Cluster 'gpu' one minor at a time" in found[0]
    assert "set driver.version of GpuOperator 'operator' to a supported branch" in found[1]
    assert "pin a newer ami.release_version of GpuNodePool 'a10g' whose" in found[2]
    assert not any("cluster.kubernetesVersion" in m or "gpuOperator." in m or "releaseVersion" in m for m in found)


def test_pools_alone_name_each_pool_s_kubernetes_version():
    """No cluster in the program: the version is the node groups', set by every pool on it."""
    resources = with_provider([r for name in ("a10g", "l4") for r in below(
        component(public("GpuNodePool"), name), stack_resource(NODE_GROUP, gpu_node_group(name, version="1.33"), name))])
    ((message, _),) = eol(resources, {"asOf": "2027-08-01"})
    assert message.startswith("kubernetes_version of GpuNodePool 'a10g' and kubernetes_version of GpuNodePool 'l4': ")


def test_a_resource_no_component_made_is_named_by_its_own_input():
    resources = with_provider([stack_resource(CLUSTER, {"version": "1.33"}, "gpu-eks")])
    ((message, urn_),) = window(resources)
    assert message.startswith("version of aws:eks/cluster:Cluster 'gpu-eks': Kubernetes 1.33 is in EKS extended support")
    assert "Upgrade version of aws:eks/cluster:Cluster 'gpu-eks' to 1.34" in message and urn_.endswith("::gpu-eks")


def test_below_a_platform_the_platform_object_s_fields_are_named():
    """A GpuPlatform, from a stack file or a program's own object: the object's fields, as the stack file spells them."""
    ((message, _),) = eol(stack(release="1.35.2-20250901"))
    assert "pin a newer ami.releaseVersion whose driver branch" in message


def test_warn_days_widens_the_warning_window():
    assert window(stack(), {"asOf": "2027-01-01"}) == []
    assert window(stack(), {"asOf": "2027-01-01", "warnDays": 90})


def test_the_as_of_date_defaults_to_today():
    assert run_stack("lifecycle-end-of-life", stack()) == []  # 1.35 is supported until 2028


def test_a_malformed_as_of_date_is_reported():
    ((message, _),) = eol(stack(), {"asOf": "2026-02-30"})
    assert "asOf '2026-02-30' is not a date" in message


# --- the budget rule prices each control plane by its window ---

def budget(version: str, as_of: str) -> float:
    from pulumi_policy import StackValidationArgs

    from gpu_platform.policy import BY_NAME
    from gpu_platform.policy.common import with_defaults
    from gpu_platform.policy.cost import monthly_at_max

    config = with_defaults(BY_NAME["monthly-budget"], {"asOf": as_of})
    resources = [stack_resource(CLUSTER, {"name": "gpu-test", "version": version}, "cluster")]
    return monthly_at_max(StackValidationArgs(resources, config), config)[0]


@pytest.mark.parametrize("version, as_of, usd", [
    ("1.35", "2026-11-23", 73.0), ("1.33", "2026-11-23", 438.0), ("1.35", "2027-03-27", 438.0),
])
def test_the_budget_rule_prices_the_control_plane_by_its_window(version, as_of, usd):
    assert budget(version, as_of) == pytest.approx(usd)


def test_the_budget_rule_reports_a_malformed_as_of():
    found = run_stack("monthly-budget", [stack_resource(CLUSTER, {"version": "1.35"}, "cluster")],
                      {"monthlyUsd": 100, "asOf": "2026-02-30"})
    assert found and "is not a date" in found[0][0]
