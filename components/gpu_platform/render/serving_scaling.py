"""What scales and watches a team's model servers: KEDA's chart values, a ScaledObject per autoscaled service
(KEDA's Prometheus scaler on the server's own queue or time to first token, GPU activity as a second trigger),
a PodMonitor per server, and the serving alerts (time to first token, queue depth, KV-cache usage, replicas
pinned at max), routed to the team by their `namespace` label.

Why KEDA rather than the HPA and a metrics adapter: its Prometheus scaler reads any PromQL directly (no adapter
rules to keep in step), and its activation phase is what takes an idle dev service to zero, which the HPA
alone cannot.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

from gpu_platform.decisions.serving import STARTUP_PERIOD_SECONDS
from gpu_platform.facts import names, serving
from gpu_platform.render.monitoring import scraping_namespace
from gpu_platform.render.serving import NAME_LABEL, labels, s3_read_policy, service_manifests

if TYPE_CHECKING:
    from gpu_platform.decisions.serving import ServicePlan
    from gpu_platform.spec.models import PlatformSpec

PROMETHEUS_PORT = 9090
POD_MONITOR_API = ("monitoring.coreos.com/v1", "PodMonitor")
SERVING_RULES_NAME = names.SERVING_RULES_NAME
POLLING_SECONDS = 15
COOLDOWN_SECONDS = 600  # idle this long before a service at min 0 returns to zero
SCALE_DOWN_WINDOW_SECONDS = 300  # the HPA waits this long before it removes a replica (a reload costs minutes)


def prometheus_url(namespace: str) -> str:
    """The Prometheus in `namespace`, installed or existing: the Prometheus Operator gives every Prometheus it runs
    the governing Service `prometheus-operated` in its namespace."""
    return f"http://prometheus-operated.{namespace}.svc:{PROMETHEUS_PORT}"


def lb_controller_values(cluster: str, region: str, vpc_id: Any,
                         system_node_selector: Mapping[str, str]) -> dict[str, Any]:
    """The AWS Load Balancer Controller on the system nodes; its service account gets AWS access by Pod Identity
    (every key is in the chart's values)."""
    return {"clusterName": cluster, "region": region, "vpcId": vpc_id, "nodeSelector": dict(system_node_selector),
            "serviceAccount": {"create": True, "name": serving.LB_CONTROLLER_SERVICE_ACCOUNT}}


def lb_controller_policy() -> dict[str, Any]:
    """The controller's IAM policy exactly as its project publishes it at the pinned tag."""
    policy: dict[str, Any] = json.loads((serving.UPSTREAM / serving.LB_CONTROLLER_POLICY).read_text())
    return policy


def keda_values(system_node_selector: Mapping[str, str]) -> dict[str, Any]:
    """KEDA's operator, metrics server and webhooks on the system nodes (every key is in the chart's values)."""
    return {"nodeSelector": dict(system_node_selector), "crds": {"install": True}}


def _server(plan: "ServicePlan") -> str:
    return f'namespace="{names.team_namespace(plan.team)}",model_name="{plan.service.name}"'


def scaling_query(plan: "ServicePlan") -> tuple[str, str]:
    """(PromQL, metricType): waiting requests averaged over replicas, or the p90 time to first token."""
    auto = plan.service.autoscaling
    if auto is not None and auto.signal == "ttft":
        return (f"histogram_quantile(0.9, sum by (le) (rate({serving.VLLM_TTFT}_bucket{{{_server(plan)}}}[2m])))",
                "Value")
    return f"sum({serving.VLLM_WAITING}{{{_server(plan)}}})", "AverageValue"


def gpu_activity_query(plan: "ServicePlan") -> str:
    """The service's GPUs' utilisation (dcgm-exporter maps each GPU to the pod holding it)."""
    pods = f'{plan.service.name}-[a-z0-9]+-[a-z0-9]+'
    return f'avg(DCGM_FI_DEV_GPU_UTIL{{namespace="{names.team_namespace(plan.team)}",pod=~"{pods}"}})'


def scaled_object(plan: "ServicePlan", prometheus_namespace: str) -> dict[str, Any]:
    auto = plan.service.autoscaling
    assert auto is not None, "only autoscaled services have a ScaledObject"
    query, metric_type = scaling_query(plan)
    url = prometheus_url(prometheus_namespace)
    api_version, kind = serving.SCALED_OBJECT_API
    return {"apiVersion": api_version, "kind": kind, "metadata": {
        "name": plan.service.name, "namespace": names.team_namespace(plan.team), "labels": labels(plan)}, "spec": {
        "scaleTargetRef": {"name": plan.service.name},
        "minReplicaCount": plan.service.replicas.min, "maxReplicaCount": plan.service.replicas.max,
        "pollingInterval": POLLING_SECONDS, "cooldownPeriod": COOLDOWN_SECONDS,
        "advanced": {"horizontalPodAutoscalerConfig": {"behavior": {"scaleDown": {
            "stabilizationWindowSeconds": SCALE_DOWN_WINDOW_SECONDS,
            "policies": [{"type": "Pods", "value": 1, "periodSeconds": 120}]}}}},
        "triggers": [
            {"type": "prometheus", "name": "queue" if auto.signal == "queue" else "ttft", "metricType": metric_type,
             "metadata": {"serverAddress": url, "query": query, "threshold": f"{auto.target:g}"}},
            # GPU activity keeps a service in use active (a light load queues nothing) and adds replicas when hot
            {"type": "prometheus", "name": "gpu-activity", "metricType": "Value",
             "metadata": {"serverAddress": url, "query": gpu_activity_query(plan),
                          "threshold": str(auto.gpu_activity_percent), "activationThreshold": "1"}}]}}


def pod_monitor(plan: "ServicePlan", selector_labels: Mapping[str, str]) -> dict[str, Any]:
    """Prometheus scrapes the server's /metrics in the team's namespace (no labels honoured, as teams' own)."""
    api_version, kind = POD_MONITOR_API
    rt = serving.RUNTIMES[plan.service.runtime]
    return {"apiVersion": api_version, "kind": kind, "metadata": {
        "name": plan.service.name, "namespace": names.team_namespace(plan.team),
        "labels": {**labels(plan), **selector_labels}}, "spec": {
        "selector": {"matchLabels": {NAME_LABEL: plan.service.name, "app.kubernetes.io/component": "model-server"}},
        "podMetricsEndpoints": [{"port": "http", "path": rt.metrics_path, "interval": "15s"}]}}


def _alert(name: str, expr: str, minutes: int, severity: str, summary: str, description: str) -> dict[str, Any]:
    return {"alert": name, "expr": expr, "for": f"{minutes}m", "labels": {"severity": severity},
            "annotations": {"summary": summary, "description": description}}


def service_alerts(plan: "ServicePlan") -> list[dict[str, Any]]:
    a, sel, name = plan.service.alerts, _server(plan), plan.service.name
    where = f"{plan.team}/{name}"
    rules = [
        _alert("ServingTimeToFirstTokenHigh",
               f"histogram_quantile(0.9, sum by (namespace, model_name, le) "
               f"(rate({serving.VLLM_TTFT}_bucket{{{sel}}}[5m]))) > {a.ttft_seconds:g}", a.for_minutes, "critical",
               f"{where}: p90 time to first token above {a.ttft_seconds:g}s",
               "Users wait: p90 time to first token is {{ $value | humanize }}s. Check the queue, replicas and KV cache."),
        _alert("ServingQueueDeep", f"sum by (namespace, model_name) ({serving.VLLM_WAITING}{{{sel}}}) > {a.queue_depth}",
               a.for_minutes, "high", f"{where}: more than {a.queue_depth} requests waiting",
               "{{ $value }} requests wait for a slot: replicas are too few or the GPUs too small."),
        _alert("ServingKvCacheFull",
               f"max by (namespace, model_name) ({serving.VLLM_KV_CACHE_USAGE}{{{sel}}}) * 100 > "
               f"{a.kv_cache_used_percent:g}", a.for_minutes, "high",
               f"{where}: KV cache above {a.kv_cache_used_percent:g}% used",
               "The KV cache is {{ $value | humanize }}% full: requests are preempted. Lower maxModelLen or add memory."),
    ]
    if plan.service.replicas.max > plan.service.replicas.min:
        deployment = f'namespace="{names.team_namespace(plan.team)}",deployment="{name}"'
        rules.append(_alert(
            "ServingReplicasAtMax", f"max by (namespace, deployment) (kube_deployment_spec_replicas{{{deployment}}}) "
            f">= {plan.service.replicas.max}", a.at_max_minutes, "high",
            f"{where}: pinned at {plan.service.replicas.max} replicas (replicas.max)",
            "The autoscaler wants more replicas than replicas.max allows: raise it (quota and pool permitting)."))
    return rules


def rule_group(plans: list["ServicePlan"]) -> dict[str, Any]:
    return {"name": "gpu-platform-serving", "rules": [r for p in plans for r in service_alerts(p)]}


@dataclass(frozen=True)
class RenderedService:
    """One service as the ModelServing component registers it: its objects, and what it reads from AWS."""

    name: str
    manifests: dict[str, dict[str, Any]]
    s3_policy: Optional[dict[str, Any]]  # the prefetch's read policy (S3 models), given to its Pod Identity role
    token_secret: Optional[str]  # the Pulumi config key of a Hugging Face token
    ready_seconds: int  # how long `pulumi up` may wait for the rollout: startup budget and a node's launch
    scaled_object: Optional[dict[str, Any]]  # KEDA's, when the service autoscales
    pod_monitor: Optional[dict[str, Any]]  # when a Prometheus scrapes the cluster

    @property
    def autoscaled(self) -> bool:
        """Replicas belong to the autoscaler once created."""
        return self.scaled_object is not None

    @property
    def prefetch_account(self) -> str:
        return str(self.manifests["prefetch-account"]["metadata"]["name"])

    @property
    def prefetch_deadline(self) -> int:
        return int(self.manifests["prefetch"]["spec"]["activeDeadlineSeconds"])


def rendered(spec: "PlatformSpec", plan: "ServicePlan") -> RenderedService:
    m, prom = plan.service.model, spec.monitoring.prometheus
    budget = plan.startup_failure_threshold * STARTUP_PERIOD_SECONDS + serving.NODE_READY_SECONDS
    scaled = scaled_object(plan, prom.namespace) if plan.service.autoscaling is not None else None
    monitor = pod_monitor(plan, prom.selector_labels) if scraping_namespace(spec.monitoring) else None
    return RenderedService(plan.service.name, service_manifests(spec, plan),
                           s3_read_policy(str(m.s3)) if m.s3 is not None else None,
                           m.hugging_face.token_secret if m.hugging_face is not None else None,
                           budget, scaled, monitor)
