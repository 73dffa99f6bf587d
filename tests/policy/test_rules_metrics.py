"""metrics-persist: a prod Prometheus keeps its metrics on a volume the EBS CSI driver binds."""
from __future__ import annotations

import pytest

from tests.policy.harness import gpu_node_group, run_stack, stack_resource, with_provider

RELEASE = "kubernetes:helm.sh/v3:Release"
ADDON = "aws:eks/addon:Addon"
CLAIM = {"spec": {"storageClassName": "gpu-platform-gp3", "accessModes": ["ReadWriteOnce"],
                  "resources": {"requests": {"storage": "50Gi"}}}}


def _prometheus(claim=True, chart="kube-prometheus-stack"):
    spec = {"retention": "30d", **({"storageSpec": {"volumeClaimTemplate": CLAIM}} if claim else {})}
    return stack_resource(RELEASE, {"chart": chart, "version": "79.5.0",
                                    "values": {"prometheus": {"prometheusSpec": spec}}}, "monitoring")


def _ebs_csi():
    return stack_resource(ADDON, {"addonName": "aws-ebs-csi-driver", "addonVersion": "v1.66.0-eksbuild.1"}, "ebs-csi")


def _stack(env: str, *extra, cluster=True) -> list:
    made = [stack_resource("aws:eks/cluster:Cluster", {"name": "gpu-prod"}, "cluster")] if cluster else []
    return with_provider([*made, stack_resource("aws:eks/nodeGroup:NodeGroup", gpu_node_group(), "gpu"), *extra],
                         environment=env)


def test_prod_prometheus_on_a_volume_with_the_driver_passes():
    assert run_stack("metrics-persist", _stack("prod", _prometheus(), _ebs_csi())) == []


def test_prod_prometheus_without_a_volume_is_refused_naming_the_field():
    [(message, urn)] = run_stack("metrics-persist", _stack("prod", _prometheus(claim=False), _ebs_csi()))
    assert "keeps its metrics in the pod" in message and "monitoring.prometheus.ebsCsiAddonVersion" in message
    assert urn is not None and urn.endswith("monitoring")


def test_prod_prometheus_without_the_ebs_csi_driver_is_refused():
    [(message, _)] = run_stack("metrics-persist", _stack("prod", _prometheus()))
    assert "no EBS CSI driver" in message and "aws-ebs-csi-driver" in message


def test_the_driver_from_its_helm_chart_counts():
    chart = stack_resource(RELEASE, {"chart": "https://example.test/charts/aws-ebs-csi-driver", "version": "2.59.0"},
                           "ebs")
    assert run_stack("metrics-persist", _stack("prod", _prometheus(), chart)) == []


def test_dev_may_keep_metrics_in_the_pod_unless_configured():
    assert run_stack("metrics-persist", _stack("dev", _prometheus(claim=False))) == []
    assert run_stack("metrics-persist", _stack("dev", _prometheus(claim=False)), {"environments": ["dev"]}) != []


def test_no_installed_prometheus_nothing_to_judge():
    assert run_stack("metrics-persist", _stack("prod")) == []


def test_pools_added_to_a_cluster_made_elsewhere_need_no_driver_of_their_own():
    assert run_stack("metrics-persist", _stack("prod", _prometheus(), cluster=False)) == []
    assert run_stack("metrics-persist", _stack("prod", _prometheus(claim=False), cluster=False)) != []


def test_the_prod_example_without_the_add_on_is_refused_by_the_plan():
    from tests.support.stacks import cached_plan, stack_platform

    platform = stack_platform("prod")
    del platform["monitoring"]["prometheus"]["ebsCsiAddonVersion"]
    found = [v for v in cached_plan(platform)["policy"]["violations"] if v["policy"] == "metrics-persist"]
    assert len(found) == 2 and {v["level"] for v in found} == {"mandatory"}


def test_the_budget_prices_the_claimed_volumes_as_gp3():
    from tests.policy.test_rules_cost import resources, total

    plain, _ = total(resources())
    release = _prometheus()
    priced, unpriced = total([*resources(), release])
    assert priced - plain == pytest.approx(50 * 0.08) and unpriced == []
