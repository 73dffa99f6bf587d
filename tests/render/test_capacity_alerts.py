"""Capacity alerts, run by promtool: a GPU pod left unschedulable, and each autoscaler's scale-up failure."""
from __future__ import annotations

from gpu_platform.render.capacity_alerts import CAPACITY_WINDOW
from tests.render.promtool_rules import LONG, description, flat, group, run

NS, POD = "team-research", "train-0"
POD_LABELS = {"namespace": NS, "pod": POD}


def pending_pod(request: tuple[str, str] | None = ("nvidia.com/gpu", "nvidia_com_gpu"), tolerates: bool = False,
                owner: str = "Job", unschedulable: str = flat(1)) -> list[tuple[str, dict, str]]:
    series = [("kube_pod_status_phase", {**POD_LABELS, "phase": "Pending"}, flat(1)),
              ("kube_pod_status_unschedulable", POD_LABELS, unschedulable),
              ("kube_pod_owner", {**POD_LABELS, "owner_kind": owner, "owner_name": "train"}, flat(1))]
    if request:
        series.append(("kube_pod_container_resource_requests",
                       {**POD_LABELS, "container": "trainer", "resource": request[1], "unit": "integer"}, flat(1)))
    series.append(("kube_pod_container_resource_requests",
                   {**POD_LABELS, "container": "trainer", "resource": "cpu", "unit": "core"}, flat(4)))
    if tolerates:
        series.append(("kube_pod_tolerations", {**POD_LABELS, "key": "nvidia.com/gpu", "operator": "Exists",
                                                "effect": "NoSchedule"}, flat(1)))
    return series


def pending_alert(t) -> dict:
    return {"exp_labels": {"severity": "high", **POD_LABELS},
            "exp_annotations": {"summary": f"GPU pod {NS}/{POD} has been unschedulable for {t.pending_minutes}m.",
                                "description": description("GpuPodPending")}}


def test_a_gpu_pod_unschedulable_for_pending_minutes_alerts(promtool, tmp_path, t):
    checks = [(t.pending_minutes - 1, "GpuPodPending", []), (t.pending_minutes + 1, "GpuPodPending", [pending_alert(t)])]
    run(promtool, tmp_path, t, [group(pending_pod(), checks)])


def test_mig_and_dra_pods_alert_like_whole_gpu_pods(promtool, tmp_path, t):
    mig = pending_pod(("nvidia.com/mig-3g.40gb", "nvidia_com_mig_3g_40gb"))
    dra = pending_pod(None, tolerates=True)  # a DRA claim asks for no resource; the pod tolerates the GPU taint
    for series in (mig, dra):
        run(promtool, tmp_path, t, [group(series, [(LONG, "GpuPodPending", [pending_alert(t)])])])


def test_cpu_pods_and_gpu_daemonsets_do_not_alert(promtool, tmp_path, t):
    cpu_only = pending_pod(None)
    daemon = pending_pod(tolerates=True, owner="DaemonSet")
    for series in (cpu_only, daemon):
        run(promtool, tmp_path, t, [group(series, [(LONG, "GpuPodPending", [])])])


def test_a_pod_scheduled_before_pending_minutes_does_not_alert(promtool, tmp_path, t):
    half = t.pending_minutes // 2
    series = pending_pod(unschedulable=f"1x{half} 0x{LONG}")
    run(promtool, tmp_path, t, [group(series, [(t.pending_minutes + 1, "GpuPodPending", [])])])


def failure_alert(name: str, label: str, value: str, summary: str) -> dict:
    return {"exp_labels": {"severity": "warning", label: value},
            "exp_annotations": {"summary": summary, "description": description(name)}}


def test_cluster_autoscaler_failed_scale_up_alerts_with_its_reason(promtool, tmp_path, t):
    series = [("cluster_autoscaler_failed_scale_ups_total", {"reason": "cloudProviderError"}, "0x10 1x30"),
              ("cluster_autoscaler_failed_scale_ups_total", {"reason": "timeout"}, flat(0))]
    fired = failure_alert("GpuScaleUpFailed", "reason", "cloudProviderError",
                          f"The Cluster Autoscaler failed to scale up in the last {CAPACITY_WINDOW}: cloudProviderError.")
    checks = [(9, "GpuScaleUpFailed", []), (12, "GpuScaleUpFailed", [fired]), (40, "GpuScaleUpFailed", [])]
    run(promtool, tmp_path, t, [group(series, checks)])


def test_karpenter_insufficient_capacity_alerts_with_the_error(promtool, tmp_path, t):
    launch = {"controller": "nodeclaim.lifecycle", "method": "Create", "provider": "aws"}
    series = [("karpenter_cloudprovider_errors_total", {**launch, "error": "InsufficientCapacityError"}, "0x10 2x30"),
              ("karpenter_cloudprovider_errors_total",  # a lookup of a node already gone: no launch failed
               {"controller": "nodeclaim.termination", "method": "Get", "provider": "aws",
                "error": "NodeClaimNotFoundError"}, "0x10 5x30")]
    fired = failure_alert("GpuNodeLaunchFailed", "error", "InsufficientCapacityError",
                          f"Karpenter failed to launch nodes in the last {CAPACITY_WINDOW}: InsufficientCapacityError.")
    checks = [(9, "GpuNodeLaunchFailed", []), (12, "GpuNodeLaunchFailed", [fired]), (40, "GpuNodeLaunchFailed", [])]
    run(promtool, tmp_path, t, [group(series, checks)])


def test_autoscalers_without_failures_stay_silent(promtool, tmp_path, t):
    series = [("cluster_autoscaler_failed_scale_ups_total", {"reason": "cloudProviderError"}, flat(3)),
              ("karpenter_cloudprovider_errors_total",
               {"controller": "nodeclaim.lifecycle", "method": "Create", "provider": "aws",
                "error": "InsufficientCapacityError"}, flat(1))]
    checks = [(LONG, "GpuScaleUpFailed", []), (LONG, "GpuNodeLaunchFailed", [])]
    run(promtool, tmp_path, t, [group(series, checks)])
