"""Versions are pinned everywhere: every Helm chart and every EKS add-on names one exact version.

An unpinned chart or add-on follows whatever its publisher releases next, so two `pulumi up` runs of
the same commit can deploy different software.
"""
from __future__ import annotations

import re
from typing import Any
from collections.abc import Iterator, Mapping

from pulumi_policy import ResourceValidationArgs, Severity

from gpu_platform.facts import catalog
from gpu_platform.policy.common import ADDON, EXACT_SEMVER, HELM_RELEASE, get, resource_policy

ADDON_VERSION = re.compile(catalog.ADDON_VERSION_PATTERN)  # e.g. v1.20.4-eksbuild.1


def chart_pinned(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    chart, version = get(args.props, "chart", "?"), get(args.props, "version")
    if not version:
        yield (f"Helm release {args.name!r} (chart {chart}) has no version: it installs whatever the repository "
               "serves today; pin an exact chart version")
    elif not EXACT_SEMVER.match(str(version)):
        yield f"Helm release {args.name!r} (chart {chart}) version {version!r} is not exact: pin one version, e.g. 1.2.3"
    if not get(args.props, "repositoryOpts.repo") and "://" not in str(chart):
        yield (f"Helm release {args.name!r} (chart {chart}) names no repository: the chart would resolve from whatever "
               "repositories the machine running Pulumi has configured; set repositoryOpts.repo (or an oci:// or "
               "https:// chart)")


def addon_pinned(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    name, version = get(args.props, "addonName", args.name), get(args.props, "addonVersion")
    if not version:
        yield (f"EKS add-on {name} has no addonVersion: EKS installs its current default and may change it; pin an "
               "exact addonVersion such as v1.20.4-eksbuild.1 (stack file: cluster.create.addons)")
    elif not ADDON_VERSION.match(str(version)):
        yield (f"EKS add-on {name} version {version!r} is not an exact add-on version: pin addonVersion as "
               "v<x.y.z>-eksbuild.<n>")


POLICIES = [
    resource_policy("helm-chart-pinned", "Helm releases pin an exact chart version from a named repository.",
                    [HELM_RELEASE], chart_pinned, severity=Severity.MEDIUM),
    resource_policy("eks-addon-pinned", "EKS add-ons pin an exact add-on version.",
                    [ADDON], addon_pinned, severity=Severity.MEDIUM),
]
