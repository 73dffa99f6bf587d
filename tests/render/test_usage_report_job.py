"""The monthly usage report job: its script run against a Prometheus stand-in on loopback, its CronJob against the
Kubernetes schema, its IAM and bucket settings against botocore, and the stack-file rules around it."""
from __future__ import annotations

import json
import subprocess
import sys
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlparse

import kubernetes_validate
import pytest

from gpu_platform.decisions.usage import report_plan
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.render import usage_report, usage_report_job as job
from gpu_platform.render import usage_rules as rec
from gpu_platform.spec.errors import SpecError
from tests.support.aws_api import api_problems, service_model
from tests.support.plans import stack_plan
from tests.support.stacks import resource, stack_platform

PLAN = report_plan(parse_platform(stack_platform("prod")).monitoring, "gpu-prod")


def answer(samples: list[tuple[dict, float]]) -> dict:
    return {"status": "success", "data": {"resultType": "vector",
                                          "result": [{"metric": m, "value": [0, repr(v)]} for m, v in samples]}}


OCT_10 = datetime(2026, 10, 10, tzinfo=timezone.utc).timestamp()
# One 8-GPU Job of research's vision queue that ran six hours on 10 October and succeeded: every job query's
# answer carries its labels, found by the series each query reads (the first match wins: kube_pod_info first).
JOB = {"namespace": "research", "job_name": "train", "owner_name": "train", "resource": "nvidia_com_gpu",
       "pool": "a100-train", "kind": "whole", "node": "ip-10-0-1-7", usage_report.QUEUE_LABEL: "vision"}
JOB_ANSWERS = {"kube_pod_info": 1.0, "kube_pod_owner": 8.0, "kube_job_status_start_time": OCT_10,
               "kube_job_status_completion_time": OCT_10 + 6 * 3600, "kube_job_status_active": OCT_10 + 5.9 * 3600,
               "kube_job_complete{": 1.0, "kube_job_failed{": 0.0, "kube_job_labels": 1.0}


class Prometheus(BaseHTTPRequestHandler):
    """Answers the report's queries by their leading record name or the series a job query reads; keeps what
    it was asked."""

    asked: list[dict] = []

    def do_GET(self) -> None:  # noqa: N802 the handler's name
        params = parse_qs(urlparse(self.path).query)
        Prometheus.asked.append(params)
        q = params["query"][0]
        row = {"namespace": "research", "pool": "a100-train"}
        value = {rec.ALLOCATED_GPUS: 744.0, rec.ALLOCATED_USD: 3047.12, rec.USED_GPUS: 372.0, rec.USED_USD: 1523.56}
        samples = next(([(row, v)] for k, v in value.items() if f"({k}[" in q), None)
        if samples is None:
            samples = next(([(JOB, v)] for k, v in JOB_ANSWERS.items() if k in q),
                           [({"namespace": "research", "team": "research"}, 1.0)])
        body = json.dumps(answer(samples)).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:  # quiet
        pass


@pytest.fixture
def prometheus():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Prometheus)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    Prometheus.asked = []
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_the_shipped_script_reports_last_month_from_prometheus(prometheus, tmp_path):
    script = tmp_path / job.SCRIPT_KEY
    data = job.configmap_data()
    script.write_text(data[job.SCRIPT_KEY])
    (tmp_path / job.QUERIES_KEY).write_text(data[job.QUERIES_KEY])
    out = tmp_path / "out"
    out.mkdir()
    env = {"PROMETHEUS_URL": prometheus, "QUERIES_FILE": str(tmp_path / job.QUERIES_KEY), "OUT_DIR": str(out)}
    # run the file alone, as the job's container does: the standard library only, nothing of the package
    code = ("import runpy, sys, datetime as d; m = runpy.run_path(sys.argv[1]); "
            "sys.exit(m['run_job'](m['os'].environ, d.datetime(2026, 11, 1, 6, tzinfo=d.timezone.utc)))")
    result = subprocess.run([sys.executable, "-I", "-c", code, str(script)], env=env, capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["gpu-jobs-2026-10.csv", "gpu-usage-2026-10.csv",
                                                     "gpu-usage-2026-10.json"]
    assert (out / "gpu-jobs-2026-10.csv").read_text().splitlines() == [
        ",".join(usage_report.JOB_COLUMNS),
        "2026-10,research,research,train,vision,8,nvidia_com_gpu=8,whole,a100-train,ip-10-0-1-7,"
        "2026-10-10T00:00:00Z,2026-10-10T06:00:00Z,succeeded"]
    lines = (out / "gpu-usage-2026-10.csv").read_text().splitlines()
    assert lines == [",".join(usage_report.COLUMNS),
                     "2026-10,research,research,a100-train,744.000,372.000,0.5000,3047.12,1523.56,1523.56"]
    # October: 744 hours, asked at the month's end (2026-11-01T00:00Z) over 744h less a minute in 5m steps
    end = datetime(2026, 11, 1, tzinfo=timezone.utc).timestamp()
    assert {float(a["time"][0]) for a in Prometheus.asked} == {end}
    assert all("[44639m" in a["query"][0] for a in Prometheus.asked)
    assert len(Prometheus.asked) == len(usage_report.KEYS) + len(usage_report.JOB_KEYS)


def test_the_previous_month_wraps_the_year_and_knows_february():
    assert usage_report.previous_month(datetime(2027, 1, 1, 6, tzinfo=timezone.utc))[::2] == ("2026-12", 744)
    assert usage_report.previous_month(datetime(2028, 3, 1, tzinfo=timezone.utc))[::2] == ("2028-02", 696)


@pytest.mark.parametrize("version", ["1.33", "1.35"])
def test_the_cron_job_and_its_config_map_match_the_kubernetes_schema(version):
    manifest = job.cron_job(PLAN, "gpu-prod-gpu-usage-x", {"gpu-platform.io/role": "system"})
    kubernetes_validate.validate(manifest, f"{version}.0", strict=True)
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "gpu-usage-report", "namespace": "monitoring"},
          "data": job.configmap_data()}
    kubernetes_validate.validate(cm, f"{version}.0", strict=True)
    spec = manifest["spec"]
    assert spec["timeZone"] == "Etc/UTC" and spec["concurrencyPolicy"] == "Forbid"
    pod = spec["jobTemplate"]["spec"]["template"]["spec"]
    assert all("@sha256:" in c["image"] and ":" in c["image"].split("@")[0].rsplit("/", 1)[1]
               for c in (*pod["initContainers"], *pod["containers"]))


def test_the_role_may_only_put_objects_under_the_prefix_and_passes_botocore():
    plan = stack_plan("prod")
    doc = json.loads(resource(plan, "aws:iam/rolePolicy:RolePolicy", "usage-report")["inputs"]["policy"])
    bucket = resource(plan, "aws:s3/bucket:Bucket", "usage-report")
    [statement] = doc["Statement"]
    assert statement["Action"] == "s3:PutObject" and statement["Effect"] == "Allow"
    assert statement["Resource"].startswith("arn:aws:s3:::gpu-prod-gpu-usage-")
    assert statement["Resource"].endswith(f"/{PLAN.prefix}/*")
    iam = service_model("iam").operation_model("PutRolePolicy").input_shape
    assert api_problems({"RoleName": "r", "PolicyName": "p", "PolicyDocument": json.dumps(doc)}, iam) == []
    assert bucket["options"]["protect"] and bucket["options"]["retainOnDelete"]
    assoc = resource(plan, "aws:eks/podIdentityAssociation:PodIdentityAssociation", "usage-report")["inputs"]
    assert (assoc["namespace"], assoc["serviceAccount"]) == ("monitoring", "gpu-usage-report")


def test_the_bucket_is_encrypted_private_expires_reports_and_refuses_plain_http():
    plan = stack_plan("prod")
    s3 = service_model("s3")
    [rule] = resource(plan, "aws:s3/bucketLifecycleConfiguration:BucketLifecycleConfiguration",
                      "usage-report")["inputs"]["rules"]
    lifecycle = {"Bucket": "b", "LifecycleConfiguration": {"Rules": [{
        "ID": rule["id"], "Status": rule["status"], "Filter": {"Prefix": rule["filter"]["prefix"]},
        "Expiration": {"Days": rule["expiration"]["days"]},
        "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": rule["abortIncompleteMultipartUpload"]["daysAfterInitiation"]}}]}}
    assert api_problems(lifecycle, s3.operation_model("PutBucketLifecycleConfiguration").input_shape) == []
    assert rule["expiration"]["days"] == PLAN.retention_days and rule["filter"]["prefix"] == f"{PLAN.prefix}/"
    [sse] = resource(plan, "aws:s3/bucketServerSideEncryptionConfiguration:BucketServerSideEncryptionConfiguration",
                     "usage-report")["inputs"]["rules"]
    assert sse["applyServerSideEncryptionByDefault"]["sseAlgorithm"] == "AES256"
    block = resource(plan, "aws:s3/bucketPublicAccessBlock:BucketPublicAccessBlock", "usage-report")["inputs"]
    assert all(block[k] for k in ("blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"))
    policy = json.loads(resource(plan, "aws:s3/bucketPolicy:BucketPolicy", "usage-report")["inputs"]["policy"])
    assert policy["Statement"][0]["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
    assert api_problems({"Bucket": "b", "Policy": json.dumps(policy)},
                        s3.operation_model("PutBucketPolicy").input_shape) == []


def test_stacks_without_the_report_create_none_of_it():
    assert not [r for r in stack_plan("dev")["resources"] if r["name"].startswith("usage-report")]


@pytest.mark.parametrize("change, path", [
    (lambda m: m.update(prometheus={"mode": "none"}), "monitoring.usageReport.enabled"),
    (lambda m: m.update(prometheus={"mode": "existing"}), "monitoring.usageReport.prometheusUrl"),
    (lambda m: m["prometheus"].update(retention="30d"), "monitoring.prometheus.retention"),
    (lambda m: m["usageReport"].update(bucketName="Not_A_Bucket"), "monitoring.usageReport.bucketName"),
])
def test_a_report_without_the_prometheus_it_needs_is_refused_naming_the_field(change, path):
    platform = stack_platform("prod")
    change(platform["monitoring"])
    with pytest.raises(SpecError) as err:
        parse_platform(platform)
    assert any(p.startswith(path) for p in err.value.problems), err.value.problems


def test_an_existing_prometheus_is_reached_at_the_given_url_and_a_given_bucket_is_used():
    platform = stack_platform("prod")
    platform["monitoring"]["prometheus"] = {"mode": "existing"}
    platform["monitoring"]["usageReport"] = {"enabled": True, "prometheusUrl": "http://prom.obs.svc:9090",
                                             "bucketName": "finance-gpu-reports"}
    plan = report_plan(parse_platform(platform).monitoring, "gpu-prod")
    assert (plan.prometheus_url, plan.bucket_name) == ("http://prom.obs.svc:9090", "finance-gpu-reports")
    assert job.destination("finance-gpu-reports", plan) == "s3://finance-gpu-reports/gpu-usage/"
