"""Metrics outlive the Prometheus pod: in the configured environments (default prod) an installed Prometheus
keeps its history on a volume that can bind.

- `metrics-persist` (mandatory): every kube-prometheus-stack Helm release the program registers gives Prometheus
  a volume claim template (`prometheus.prometheusSpec.storageSpec.volumeClaimTemplate`), and, in a program that
  creates its EKS cluster, the EBS CSI driver that binds the claim is registered too (the `aws-ebs-csi-driver`
  add-on or Helm chart): without it the claim stays Pending and Prometheus never starts. A Prometheus the stack
  does not install (an existing one) is its owner's to keep. Reads the registered resources only.
"""
from __future__ import annotations

from typing import Any, Optional
from collections.abc import Iterator, Mapping

from pulumi_policy import PolicyConfigSchema, Severity, StackValidationArgs

from gpu_platform.facts import catalog
from gpu_platform.facts.syntax import quantity_fraction
from gpu_platform.policy.common import (
    ADDON, CLUSTER, HELM_RELEASE, applies_in, environment_phrase, environment_properties, get, of_type,
    stack_environment, stack_policy,
)

PROMETHEUS_CHART = catalog.KUBE_PROMETHEUS_STACK_CHART[1]
CLAIM_TEMPLATE = "values.prometheus.prometheusSpec.storageSpec.volumeClaimTemplate"
ALERTMANAGER_CLAIM_TEMPLATE = "values.alertmanager.alertmanagerSpec.storage.volumeClaimTemplate"
EBS_CSI = catalog.EBS_CSI_ADDON  # the EKS add-on's name, and the upstream chart's


def _chart(release: Any) -> str:
    return str(get(release.props, "chart") or "").rstrip("/").rsplit("/", 1)[-1]


def prometheus_releases(args: StackValidationArgs) -> list[Any]:
    return [r for r in of_type(args, HELM_RELEASE) if _chart(r) == PROMETHEUS_CHART]


def claimed_gib(args: StackValidationArgs) -> float:
    """GiB the installed Prometheus and Alertmanager claim (the budget prices them as gp3)."""
    sizes = (get(r.props, f"{template}.spec.resources.requests.storage") for r in prometheus_releases(args)
             for template in (CLAIM_TEMPLATE, ALERTMANAGER_CLAIM_TEMPLATE))
    return sum(float(quantity_fraction(str(size))) / 2**30 for size in sizes if size)


def has_ebs_csi_driver(args: StackValidationArgs) -> bool:
    return (any(get(a.props, "addonName") == EBS_CSI for a in of_type(args, ADDON))
            or any(_chart(r) == EBS_CSI for r in of_type(args, HELM_RELEASE)))


def metrics_persist(args: StackValidationArgs, config: Mapping[str, Any]) -> Iterator[tuple[str, Optional[str]]]:
    env = stack_environment(args, config)
    if not applies_in(env, config.get("environments", ["prod"])):
        return
    releases = prometheus_releases(args)
    for release in releases:
        if not get(release.props, CLAIM_TEMPLATE):
            yield (f"Prometheus (release {release.name!r}) {environment_phrase(env)} keeps its metrics in the pod: "
                   "a restart loses the history every alert looks back on. Give it a volume (stack file: "
                   "monitoring.prometheus.ebsCsiAddonVersion).", release.urn)
    if releases and of_type(args, CLUSTER) and not has_ebs_csi_driver(args):
        yield (f"Prometheus {environment_phrase(env)} has no EBS CSI driver to bind its volume: its claim stays "
               f"Pending. Install the {EBS_CSI} add-on (stack file: monitoring.prometheus.ebsCsiAddonVersion).", None)


METRICS_SCHEMA = PolicyConfigSchema({**environment_properties("Environments whose Prometheus must keep its "
                                                              "metrics on a volume.")})

POLICIES = [
    stack_policy("metrics-persist",
                 "An installed Prometheus keeps its metrics on a volume the EBS CSI driver binds (mandatory in the "
                 "configured environments).", metrics_persist, severity=Severity.HIGH, schema=METRICS_SCHEMA,
                 remediation="Set monitoring.prometheus.ebsCsiAddonVersion in the stack file."),
]
