"""Model cache and pinning: model-cache-encrypted-protected, model-cache-elastic-throughput, helm-chart-pinned,
eks-addon-pinned."""
from __future__ import annotations

from tests.policy.harness import HELM_RELEASE, options, run_resource

FILE_SYSTEM, ADDON = "aws:efs/fileSystem:FileSystem", "aws:eks/addon:Addon"
CACHE = {"creationToken": "gpu-test-model-cache", "encrypted": True, "performanceMode": "generalPurpose",
         "throughputMode": "elastic"}
AUTOSCALER = {"chart": "cluster-autoscaler", "version": "9.52.1", "namespace": "kube-system",
              "repositoryOpts": {"repo": "https://kubernetes.github.io/autoscaler"}}


def test_encrypted_protected_cache_passes():
    assert run_resource("model-cache-encrypted-protected", FILE_SYSTEM, CACHE, opts=options(protect=True)) == []


def test_unprotected_cache_is_refused():
    found = run_resource("model-cache-encrypted-protected", FILE_SYSTEM, CACHE)
    assert len(found) == 1 and "protect=True" in found[0]


def test_unencrypted_cache_is_refused():
    found = run_resource("model-cache-encrypted-protected", FILE_SYSTEM, {**CACHE, "encrypted": False},
                         opts=options(protect=True))
    assert len(found) == 1 and "encrypted" in found[0]


def test_bursting_cache_is_advised_against():
    found = run_resource("model-cache-elastic-throughput", FILE_SYSTEM, {k: v for k, v in CACHE.items() if k != "throughputMode"})
    assert len(found) == 1 and "bursting" in found[0]


def test_elastic_cache_passes():
    assert run_resource("model-cache-elastic-throughput", FILE_SYSTEM, CACHE) == []


def test_pinned_chart_passes():
    assert run_resource("helm-chart-pinned", HELM_RELEASE, AUTOSCALER) == []


def test_chart_without_version_is_refused():
    found = run_resource("helm-chart-pinned", HELM_RELEASE, {k: v for k, v in AUTOSCALER.items() if k != "version"})
    assert len(found) == 1 and "no version" in found[0]


def test_chart_version_range_is_refused():
    assert run_resource("helm-chart-pinned", HELM_RELEASE, {**AUTOSCALER, "version": ">=9.0.0"})


def test_chart_without_repository_is_refused():
    found = run_resource("helm-chart-pinned", HELM_RELEASE, {k: v for k, v in AUTOSCALER.items() if k != "repositoryOpts"})
    assert len(found) == 1 and "repositoryOpts.repo" in found[0]


def test_pinned_addon_passes():
    assert run_resource("eks-addon-pinned", ADDON, {"addonName": "vpc-cni", "addonVersion": "v1.20.4-eksbuild.1"}) == []


def test_addon_without_version_is_refused():
    found = run_resource("eks-addon-pinned", ADDON, {"addonName": "coredns"})
    assert len(found) == 1 and "coredns" in found[0]


def test_addon_version_without_build_is_refused():
    assert run_resource("eks-addon-pinned", ADDON, {"addonName": "coredns", "addonVersion": "v1.12.2"})
