"""The monthly usage report job as data: its queries, its ConfigMap, its CronJob and its S3 write policy.

The job's first container runs render/usage_report.py (shipped verbatim in the ConfigMap) with the Python
standard library: it queries Prometheus at the end of last month and writes the CSV and the raw answers to a
scratch volume; the second uploads them with the AWS CLI to `s3://<bucket>/<prefix>/`, its credentials from
EKS Pod Identity. The role may only put objects under that prefix.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from gpu_platform.decisions.usage import ReportPlan
from gpu_platform.facts import catalog, names, serving
from gpu_platform.render import usage_report
from gpu_platform.render import usage_rules as rec
from gpu_platform.render.alert_rule import GPU_RESOURCES_RE

STEP_MINUTES = 5  # subquery resolution: the recorded series are sampled every 5 minutes over the month
STEP_HOURS = STEP_MINUTES / 60
SCRIPT_KEY, QUERIES_KEY = "usage_report.py", "queries.json"
SCRIPT_DIR, OUT_DIR, TMP_DIR = "/report", "/out", "/tmp"
BACKOFF_LIMIT = 3
ACTIVE_DEADLINE_SECONDS = 3600
HISTORY = 3  # finished jobs kept of each outcome


def _hours(record: str, by: str) -> str:
    """A recorded rate (GPUs, or dollars per hour) summed over the window: GPU-hours, or dollars."""
    return f"sum by ({by}) (sum_over_time({record}[{{minutes}}m:{STEP_MINUTES}m])) * {STEP_HOURS!r}"


def query_templates() -> dict[str, str]:
    """Report key -> PromQL, with `{minutes}` for the month's length (usage_report.window_queries)."""
    by = "namespace, pool"
    return {
        usage_report.ALLOCATED_GPU_HOURS: _hours(rec.ALLOCATED_GPUS, by),
        usage_report.ALLOCATED_USD: _hours(rec.ALLOCATED_USD, by),
        usage_report.USED_GPU_HOURS: _hours(rec.USED_GPUS, by),
        usage_report.USED_USD: _hours(rec.USED_USD, by),
        usage_report.TEAMS: f"max by (namespace, team) (last_over_time({rec.TEAM_INFO}[{{minutes}}m]))",
        **job_templates(),
    }


JOB_PODS = 'max by (namespace, pod, owner_name) (kube_pod_owner{owner_kind="Job"})'


def _over_month(key: str, expr: str) -> str:
    return f"max by ({key}) (last_over_time({expr}[{{minutes}}m]))"


def job_templates() -> dict[str, str]:
    """The job history's queries: per Job (kube-state-metrics' job_name, or its pods' owner_name), what it held,
    where, when and how it ended, over the month. GPUs are the most the Job's pods held at once, per resource,
    with the pool and its kind (the usage rules' node-pool and unit series)."""
    job = "namespace, job_name"
    requests = (f'sum by (namespace, pod, node, resource) (kube_pod_container_resource_requests'
                f'{{resource=~"{GPU_RESOURCES_RE}"}} > 0)')
    held = (f"sum by (namespace, owner_name, resource, pool, kind) ({requests} * on (namespace, pod) group_left "
            f"(owner_name) {JOB_PODS} * on (node) group_left (pool) {rec.NODE_POOL} * on (pool, resource) "
            f"group_left (kind) (0 * {rec.UNIT_SHARE} + 1))")
    placed = f'max by (namespace, pod, node) (kube_pod_info{{node!=""}}) * on (namespace, pod) group_left (owner_name) {JOB_PODS}'
    return {
        usage_report.JOB_GPUS: f"max_over_time(({held})[{{minutes}}m:{STEP_MINUTES}m])",
        usage_report.JOB_NODES: f"max by (namespace, owner_name, node) (max_over_time(({placed})[{{minutes}}m:{STEP_MINUTES}m]))",
        usage_report.JOB_STARTS: _over_month(job, "kube_job_status_start_time"),
        usage_report.JOB_COMPLETIONS: _over_month(job, "kube_job_status_completion_time"),
        usage_report.JOB_LAST_ACTIVE: (f"max by ({job}) (max_over_time(timestamp(kube_job_status_active > 0)"
                                       f"[{{minutes}}m:{STEP_MINUTES}m]))"),
        usage_report.JOB_SUCCEEDED: _over_month(job, 'kube_job_complete{condition="true"}'),
        usage_report.JOB_FAILED: _over_month(job, 'kube_job_failed{condition="true"}'),
        usage_report.JOB_QUEUES: _over_month(f"{job}, {usage_report.QUEUE_LABEL}",
                                             f'kube_job_labels{{{usage_report.QUEUE_LABEL}!=""}}'),
    }


def configmap_data() -> dict[str, str]:
    """The script (this package's own report module) and its queries."""
    source = Path(usage_report.__file__).read_text(encoding="utf-8")
    return {SCRIPT_KEY: source, QUERIES_KEY: json.dumps(query_templates(), indent=1, sort_keys=True)}


def destination(bucket: str, plan: ReportPlan) -> str:
    return f"s3://{bucket}/{plan.prefix}/"


def _restricted(uid: int = 65534) -> dict[str, Any]:
    return {"runAsNonRoot": True, "runAsUser": uid, "runAsGroup": uid, "allowPrivilegeEscalation": False,
            "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]},
            "seccompProfile": {"type": "RuntimeDefault"}}


def cron_job(plan: ReportPlan, bucket: str, node_selector: dict[str, str]) -> dict[str, Any]:
    """The CronJob: the report in an init container, the upload after it; UTC schedule, no overlap."""
    out = {"name": "out", "mountPath": OUT_DIR}
    report = {"name": "report", "image": catalog.PYTHON_IMAGE,
              "command": ["python3", f"{SCRIPT_DIR}/{SCRIPT_KEY}"],
              "env": [{"name": "PROMETHEUS_URL", "value": plan.prometheus_url},
                      {"name": "QUERIES_FILE", "value": f"{SCRIPT_DIR}/{QUERIES_KEY}"},
                      {"name": "OUT_DIR", "value": OUT_DIR}, {"name": "PYTHONDONTWRITEBYTECODE", "value": "1"}],
              "volumeMounts": [{"name": "script", "mountPath": SCRIPT_DIR, "readOnly": True}, out],
              "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}},
              "securityContext": _restricted()}
    upload = {"name": "upload", "image": serving.AWS_CLI_IMAGE.reference,
              "command": ["aws", "s3", "cp", f"{OUT_DIR}/", destination(bucket, plan), "--recursive",
                          "--sse", "AES256", "--only-show-errors"],
              "env": [{"name": "HOME", "value": TMP_DIR}],
              "volumeMounts": [{**out, "readOnly": True}, {"name": "tmp", "mountPath": TMP_DIR}],
              "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
              "securityContext": _restricted()}
    pod = {"serviceAccountName": names.USAGE_REPORT_SERVICE_ACCOUNT, "restartPolicy": "OnFailure",
           "nodeSelector": dict(node_selector), "initContainers": [report], "containers": [upload],
           "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
           "volumes": [{"name": "script", "configMap": {"name": names.USAGE_REPORT_CONFIGMAP}},
                       {"name": "out", "emptyDir": {}}, {"name": "tmp", "emptyDir": {}}]}
    return {"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": names.USAGE_REPORT_NAME, "namespace": plan.namespace,
                         "labels": {names.MANAGED_BY_LABEL: names.MANAGED_BY}},
            "spec": {"schedule": plan.schedule, "timeZone": "Etc/UTC", "concurrencyPolicy": "Forbid",
                     "successfulJobsHistoryLimit": HISTORY, "failedJobsHistoryLimit": HISTORY,
                     "jobTemplate": {"spec": {"backoffLimit": BACKOFF_LIMIT,
                                              "activeDeadlineSeconds": ACTIVE_DEADLINE_SECONDS,
                                              "template": {"spec": pod}}}}}


def writer_policy(bucket: str, plan: ReportPlan) -> dict[str, Any]:
    """The job's only permission: put objects under its prefix."""
    return {"Version": "2012-10-17", "Statement": [{
        "Sid": "PutUsageReports", "Effect": "Allow", "Action": "s3:PutObject",
        "Resource": f"arn:aws:s3:::{bucket}/{plan.prefix}/*"}]}


def tls_only_policy(bucket: str) -> dict[str, Any]:
    """The bucket refuses requests not made over TLS."""
    arn = f"arn:aws:s3:::{bucket}"
    return {"Version": "2012-10-17", "Statement": [{
        "Sid": "DenyInsecureTransport", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
        "Resource": [arn, f"{arn}/*"], "Condition": {"Bool": {"aws:SecureTransport": "false"}}}]}
