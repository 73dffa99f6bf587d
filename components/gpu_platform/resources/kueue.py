"""Kueue: fair GPU sharing across teams (`queueing.mode: kueue`, docs/queueing.md).

One release of the official chart in its own namespace on the system nodes (its metrics scraped when the
platform has Prometheus), then the objects decided in queueing.py and rendered in queueing_objects.py:
the flavors, the cohort, the tiers' WorkloadPriorityClasses, one ClusterQueue per team, a LocalQueue in
each team namespace, and the admission policy refusing unqueued GPU pods in team namespaces. Kueue's
objects wait for the release (its CRDs and webhooks); each is registered whole, as rendered.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Sequence

import pulumi
from pulumi_kubernetes.apiextensions import CustomResource

from gpu_platform.decisions.queueing import gpu_flavors, placement, team_queue
from gpu_platform.facts import catalog, names
from gpu_platform.render.queueing_objects import chart_values, queueing_manifests

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec

# Pods of the manager run as non-root with every capability dropped (the chart's security contexts).
POD_SECURITY_LEVEL = "baseline"
RELEASE_TIMEOUT_SECONDS = 600


class KueueObject(CustomResource):
    """A Kueue object registered exactly as rendered. CustomResource's arguments carry metadata and spec
    only; a WorkloadPriorityClass keeps `value` and `description` at the top level, so the whole object
    is sent as the resource's inputs (the provider takes a custom object's fields as they are)."""

    def __init__(self, resource_name: str, obj: dict, opts: Optional[pulumi.ResourceOptions] = None):
        from pulumi_kubernetes import _utilities

        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(version=_utilities.get_version()))
        pulumi.CustomResource.__init__(self, f"kubernetes:{obj['apiVersion']}:{obj['kind']}", resource_name,
                                       dict(obj), opts)


@dataclass
class KueueArgs:
    spec: "PlatformSpec"
    k8s_provider: pulumi.ProviderResource
    team_namespaces: dict[str, pulumi.Resource]  # namespace name -> the team's Namespace (LocalQueues wait)
    prometheus_namespace: Optional[str] = None  # scrape the controller's metrics there; None: no Prometheus
    depends_on: Sequence[pulumi.Resource] = field(default_factory=list)  # system nodes, Prometheus CRDs


class KueueQueueing(pulumi.ComponentResource):
    def __init__(self, name: str, args: KueueArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpu-platform:kueue:KueueQueueing", name, None, opts)
        from pulumi_kubernetes.admissionregistration.v1 import ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding
        from pulumi_kubernetes.core.v1 import Namespace
        from pulumi_kubernetes.helm.v3 import Release
        from pulumi_kubernetes.meta.v1 import ObjectMetaArgs

        spec, queueing = args.spec, args.spec.queueing
        k8s = pulumi.ResourceOptions(parent=self, provider=args.k8s_provider)
        self.namespace = Namespace(name, metadata=ObjectMetaArgs(name=queueing.namespace, labels={
            **names.pod_security_labels(POD_SECURITY_LEVEL), names.MANAGED_BY_LABEL: names.MANAGED_BY}), opts=k8s)
        self.values = chart_values(spec, args.prometheus_namespace)
        self.release = Release(
            name, name=names.KUEUE_RELEASE, chart=catalog.KUEUE_CHART, version=queueing.chart_version,
            namespace=self.namespace.metadata.name, create_namespace=False, values=self.values,
            skip_await=False, timeout=RELEASE_TIMEOUT_SECONDS,
            opts=pulumi.ResourceOptions.merge(k8s, pulumi.ResourceOptions(
                depends_on=[self.namespace, *args.depends_on])))
        after_release = pulumi.ResourceOptions.merge(k8s, pulumi.ResourceOptions(depends_on=[self.release]))

        placed = placement(spec)
        self.queues = {t.name: team_queue(spec, t, placed) for t in spec.teams}
        m = queueing_manifests(spec, self.queues, gpu_flavors(spec))
        self.objects: dict[str, pulumi.Resource] = {}
        for key, obj in m.items():
            if key.startswith(("flavor-", "priority-")) or key == "cohort":
                self.objects[key] = KueueObject(f"{name}-{key}", obj, opts=after_release)
        shared = list(self.objects.values())  # flavors, the cohort and the priorities come before any queue
        for team in spec.teams:
            cq = KueueObject(f"{name}-queue-{team.name}", m[f"queue-{team.name}"], opts=pulumi.ResourceOptions.merge(
                k8s, pulumi.ResourceOptions(depends_on=[self.release, *shared])))
            self.objects[f"queue-{team.name}"] = cq
            namespace = args.team_namespaces[names.team_namespace(team.name)]
            self.objects[f"local-queue-{team.name}"] = KueueObject(
                f"{name}-local-queue-{team.name}", m[f"local-queue-{team.name}"],
                opts=pulumi.ResourceOptions.merge(k8s, pulumi.ResourceOptions(depends_on=[self.release, cq, namespace])))
        # After the release: a labelled GPU pod is then gated by Kueue's webhook rather than run unqueued.
        policy, binding = m["policy"], m["policy-binding"]
        self.policy = ValidatingAdmissionPolicy(f"{name}-policy", metadata=policy["metadata"], spec=policy["spec"],
                                                opts=after_release)
        self.binding = ValidatingAdmissionPolicyBinding(
            f"{name}-policy", metadata=binding["metadata"], spec=binding["spec"],
            opts=pulumi.ResourceOptions.merge(k8s, pulumi.ResourceOptions(depends_on=[self.release, self.policy])))
        self.outputs: dict[str, Any] = {
            "namespace": queueing.namespace, "chartVersion": queueing.chart_version, "cohort": names.KUEUE_COHORT,
            "clusterQueues": {t.name: names.cluster_queue(t.name) for t in spec.teams},
            "localQueue": names.TEAM_LOCAL_QUEUE}
        self.register_outputs(self.outputs)


def build_queueing(spec: "PlatformSpec", cluster: Any, teams: list[Any], monitoring: Any,
                   opts: pulumi.ResourceOptions) -> Optional[KueueQueueing]:
    """Kueue when `queueing.mode` is kueue, else None. `teams` are the platform's TeamNamespace components;
    the release waits for the system nodes and for the Prometheus CRDs its ServiceMonitor needs."""
    if not spec.queueing.enabled:
        return None
    from gpu_platform.render.monitoring import scraping_namespace

    prometheus = scraping_namespace(spec.monitoring)
    return KueueQueueing("kueue", KueueArgs(
        spec, cluster.k8s_provider, {t.namespace_name: t.namespace for t in teams}, prometheus,
        depends_on=[*cluster.system_ready, *monitoring.crds_ready]), opts=opts)
