"""Alerts for GPUs that cannot be had: GPU pods left unschedulable, and each autoscaler's scale-up failures.

Sources, all Prometheus series (events are not metrics, and no event exporter is part of the platform, so the
Cluster Autoscaler's `NotTriggerScaleUp` event is covered by the pending-pod alert, which fires whatever the
autoscaler's reason, and named in its description as the event to read):
- kube-state-metrics: `kube_pod_status_unschedulable` (PodScheduled=False, reason Unschedulable), GPU and MIG
  requests (`kube_pod_container_resource_requests`) and the GPU taint toleration, which DRA pods carry
  (they request no extended resource, and kube-state-metrics exports no ResourceClaim of a pod);
  https://github.com/kubernetes/kube-state-metrics/blob/v2.17.0/docs/metrics/workload/pod-metrics.md
- Cluster Autoscaler: `cluster_autoscaler_failed_scale_ups_total{reason}` (e.g. cloudProviderError, apiCallError,
  timeout); https://github.com/kubernetes/autoscaler/blob/cluster-autoscaler-1.34.0/cluster-autoscaler/proposals/metrics.md
- Karpenter: `karpenter_cloudprovider_errors_total{method="Create",error}` (e.g. InsufficientCapacityError when
  EC2 has no capacity of any allowed type); https://karpenter.sh/v1.14/reference/metrics/ and the error label in
  https://karpenter.sh/v1.14/upgrading/upgrade-guide/
"""
from __future__ import annotations

from typing import Any

from gpu_platform.facts import catalog, names
from gpu_platform.render.alert_rule import GPU_RESOURCES_RE
from gpu_platform.render.alert_rule import alerting_rule as _alert

CAPACITY_WINDOW = "15m"  # a scale-up failure within this window alerts (it stays active that long)
# Alerts the platform hears about as well as the team of the namespace they name.
CAPACITY_ALERTS = ("GpuPodPending",)
# The failures that mean a node could not be launched (the other errors are lookups, not launches).
KARPENTER_LAUNCH = 'method="Create",error!="NodeClaimNotFoundError"'
# The autoscalers' own series the rules read (kube-state-metrics' are in alerts.KSM_METRICS).
AUTOSCALER_METRICS = frozenset({catalog.CLUSTER_AUTOSCALER_FAILED_SCALE_UPS, catalog.KARPENTER_CLOUDPROVIDER_ERRORS})


def gpu_pods() -> str:
    """Pods that ask for a GPU: GPU or MIG requests, or the GPU taint's toleration (DRA claims), not DaemonSets."""
    target = "namespace, pod"
    requests = f'max by ({target}) (kube_pod_container_resource_requests{{resource=~"{GPU_RESOURCES_RE}"}} > 0)'
    tolerating = f'max by ({target}) (kube_pod_tolerations{{key="{names.GPU_TAINT_KEY}"}})'
    daemons = 'kube_pod_owner{owner_kind="DaemonSet"}'
    return f"(({requests}) or ({tolerating})) unless on ({target}) {daemons}"


def pod_pending(minutes: int) -> dict[str, Any]:
    unschedulable = ('max by (namespace, pod) (kube_pod_status_unschedulable == 1) and on (namespace, pod) '
                     'max by (namespace, pod) (kube_pod_status_phase{phase="Pending"} == 1)')
    return _alert(
        "GpuPodPending", f"({unschedulable}) and on (namespace, pod) ({gpu_pods()})",
        minutes, "high",
        f"GPU pod {{{{ $labels.namespace }}}}/{{{{ $labels.pod }}}} has been unschedulable for {minutes}m.",
        "No node can take this pod and none has been added for it. `kubectl describe pod` shows why: the "
        "scheduler's FailedScheduling, then the Cluster Autoscaler's NotTriggerScaleUp (no node group could fit "
        "it: its GPU count, MIG profile, taints or the pool's maxSize) or TriggeredScaleUp followed by a failure, "
        "or Karpenter's event naming the NodePool it tried. GpuScaleUpFailed and GpuNodeLaunchFailed carry the "
        "autoscaler's reason (the platform receives them). Check the pool's maxSize, the EC2 GPU quota of the "
        "region (vCPUs of G and P instances) and the reservation's window. Delay: monitoring.alerts.pendingMinutes.")


def scale_up_failed() -> dict[str, Any]:
    failures = f"sum by (reason) (increase({catalog.CLUSTER_AUTOSCALER_FAILED_SCALE_UPS}[{CAPACITY_WINDOW}])) > 0"
    return _alert(
        "GpuScaleUpFailed", failures, 0, "warning",
        f"The Cluster Autoscaler failed to scale up in the last {CAPACITY_WINDOW}: {{{{ $labels.reason }}}}.",
        "A node group did not grow as asked. cloudProviderError: the Auto Scaling group could not launch (no "
        "capacity of the type in the zone, the EC2 vCPU quota, a Capacity Block or ODCR outside its window); "
        "the group's activity history names it. timeout: the instance launched but never became a ready node. "
        "apiCallError: the autoscaler could not reach the AWS API (its IAM role, throttling). Pending GPU pods "
        "alert their teams as GpuPodPending.")


def node_launch_failed() -> dict[str, Any]:
    failures = (f"sum by (error) (increase({catalog.KARPENTER_CLOUDPROVIDER_ERRORS}{{{KARPENTER_LAUNCH}}}"
                f"[{CAPACITY_WINDOW}])) > 0")
    return _alert(
        "GpuNodeLaunchFailed", failures, 0, "warning",
        f"Karpenter failed to launch nodes in the last {CAPACITY_WINDOW}: {{{{ $labels.error }}}}.",
        "InsufficientCapacityError: EC2 had no capacity for any instance type, zone and capacity type the "
        "NodePool allows (Karpenter retries with what is left; widen the pool's types or zones, or reserve). "
        "Other errors: the NodeClaim's status conditions (`kubectl get nodeclaims`, Launched=False) and "
        "Karpenter's logs say which (IAM, quota, launch template). Pending GPU pods alert their teams as "
        "GpuPodPending.")


def capacity_rules(pending_minutes: int) -> list[dict[str, Any]]:
    return [pod_pending(pending_minutes), scale_up_failed(), node_launch_failed()]
