"""Warm capacity's objects: a namespace, a PriorityClass below every team tier, and per pool a Deployment of
pause pods, each holding one node of the pool (decisions/warm.py) until a GPU pod preempts it.

The pods are what the autoscalers see: pending placeholders make the Cluster Autoscaler or Karpenter launch a
node, and a running one keeps its node from scaling down. `preemptionPolicy: Never` keeps a placeholder from
ever evicting anything itself.
"""
from __future__ import annotations

from typing import Any

from gpu_platform.decisions.warm import WarmPool
from gpu_platform.facts import catalog, names

# A placeholder does nothing: the least the scheduler will count, limits equal to requests (Guaranteed).
PLACEHOLDER_CPU, PLACEHOLDER_MEMORY = "10m", "16Mi"
POD_SECURITY_LEVEL = "restricted"


def namespace() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace",
            "metadata": {"name": names.WARM_NAMESPACE, "labels": {
                **names.pod_security_labels(POD_SECURITY_LEVEL), names.MANAGED_BY_LABEL: names.MANAGED_BY}}}


def priority_class() -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": names.WARM_PRIORITY_CLASS, "labels": {names.MANAGED_BY_LABEL: names.MANAGED_BY}},
            "value": catalog.WARM_PRIORITY, "preemptionPolicy": "Never", "globalDefault": False,
            "description": "Warm capacity placeholders: hold GPU nodes ready; any team tier that preempts takes them."}


def _container(warm: WarmPool) -> dict[str, Any]:
    resources = {"cpu": PLACEHOLDER_CPU, "memory": PLACEHOLDER_MEMORY, **{k: str(v) for k, v in warm.gpu_requests.items()}}
    return {"name": "pause", "image": catalog.PAUSE_IMAGE,
            "resources": {"requests": dict(resources), "limits": dict(resources)},
            "securityContext": {"allowPrivilegeEscalation": False, "runAsNonRoot": True, "runAsUser": 65535,
                                "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]},
                                "seccompProfile": {"type": "RuntimeDefault"}}}


def deployment(warm: WarmPool) -> dict[str, Any]:
    labels = {names.WARM_APP_LABEL: warm.pool, names.MANAGED_BY_LABEL: names.MANAGED_BY}
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": names.warm_deployment(warm.pool), "namespace": names.WARM_NAMESPACE,
                         "labels": labels},
            "spec": {"replicas": warm.nodes, "selector": {"matchLabels": {names.WARM_APP_LABEL: warm.pool}},
                     "template": {"metadata": {"labels": labels}, "spec": {
                         "priorityClassName": names.WARM_PRIORITY_CLASS,
                         "nodeSelector": {names.POOL_LABEL: warm.pool},
                         "tolerations": [dict(t) for t in warm.tolerations],
                         "terminationGracePeriodSeconds": 0,
                         "automountServiceAccountToken": False,
                         "containers": [_container(warm)]}}}}


def warm_objects(pools: list[WarmPool]) -> list[dict[str, Any]]:
    """Every object, in the order they are applied; none without a warm pool."""
    return [namespace(), priority_class(), *(deployment(w) for w in pools)] if pools else []
