"""A team's model servers as Kubernetes objects, from the decided ServicePlans: per service a Deployment (the
runtime's OpenAI-compatible server reading its weights offline from the team's model cache), a Service, a
NetworkPolicy letting callers in the cluster reach it, a PodDisruptionBudget when its minimum allows one; per
model revision a prefetch Job that downloads the weights into the cache once, before the rollout; and the
least-privilege IAM policy an S3 model's prefetch reads with.

The pod itself is the platform's GPU pod (render/workloads.py): the team's priority tier, the pool's taints
tolerated, /dev/shm as memory, the model cache mounted with HF_HOME in it.
"""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any, Optional

from gpu_platform.decisions.pod_sizing import PodSize
from gpu_platform.decisions.serving import STARTUP_PERIOD_SECONDS as STARTUP_PERIOD
from gpu_platform.facts import names, serving
from gpu_platform.render.model_cache import BASE_PATH
from gpu_platform.render.workloads import CACHE_VOLUME, HF_HOME, gpu_pod_spec

if TYPE_CHECKING:
    from gpu_platform.decisions.serving import ServicePlan
    from gpu_platform.spec.models import PlatformSpec

NAME_LABEL = "app.kubernetes.io/name"
COMPONENT_LABEL = "app.kubernetes.io/component"
SERVER = "model-server"
PREFETCH = "model-prefetch"
SERVICE_PORT = 80
S3_CACHE = f"{BASE_PATH}/s3"
TOKEN_KEY = "token"
TERMINATION_GRACE_SECONDS = 120  # requests in flight finish before the server stops
PREFETCH_MIN_MIBPS = 50  # the download's deadline assumes at least this rate
PREFETCH_SLACK_SECONDS = 900
# The prefetch runs as nobody: the model cache's EFS access point writes every file as its own POSIX identity
# whatever the container's, so the download needs no root (Pod Security "restricted").
PREFETCH_USER = 65534

# Downloads a Hugging Face snapshot into HF_HOME with the runtime image's own huggingface_hub (token from
# HF_TOKEN); files already whole in the cache are skipped.
HF_PREFETCH_SCRIPT = """\
import os
from huggingface_hub import snapshot_download
print(snapshot_download(os.environ["MODEL_REPO"], revision=os.environ["MODEL_REVISION"]))
"""


def labels(plan: "ServicePlan", component: str = SERVER) -> dict[str, str]:
    return {NAME_LABEL: plan.service.name, COMPONENT_LABEL: component, names.TEAM_LABEL: plan.team,
            names.MANAGED_BY_LABEL: names.MANAGED_BY}


def _selector(plan: "ServicePlan") -> dict[str, str]:
    return {NAME_LABEL: plan.service.name, COMPONENT_LABEL: SERVER}


def _meta(plan: "ServicePlan", name: str, component: str = SERVER) -> dict[str, Any]:
    return {"name": name, "namespace": names.team_namespace(plan.team), "labels": labels(plan, component)}


def runtime(plan: "ServicePlan") -> serving.Runtime:
    return serving.RUNTIMES[plan.service.runtime]


def s3_parts(uri: str) -> tuple[str, str]:
    """s3://bucket/a/b -> (bucket, "a/b/"): a prefix ends in a slash, so `a/b` never reads `a/bc`."""
    bucket, _, prefix = uri.removeprefix("s3://").partition("/")
    return bucket, (prefix.rstrip("/") + "/") if prefix else ""


def model_path(plan: "ServicePlan") -> str:
    """What the server loads: the Hugging Face repository (resolved offline from HF_HOME), or the S3 copy."""
    m = plan.service.model
    if m.hugging_face is not None:
        return m.hugging_face.repo
    bucket, prefix = s3_parts(str(m.s3))
    return f"{S3_CACHE}/{bucket}/{prefix}".rstrip("/")


def revision_id(plan: "ServicePlan") -> str:
    """Eight characters naming the model revision: the commit's, or a hash of the S3 prefix."""
    m = plan.service.model
    if m.hugging_face is not None:
        return m.hugging_face.revision[:8]
    return hashlib.sha256(str(m.s3).encode()).hexdigest()[:8]


def prefetch_name(plan: "ServicePlan") -> str:
    return f"{plan.service.name}-prefetch-{revision_id(plan)}"


def token_secret_name(service: str) -> str:
    """The Secret holding a service's Hugging Face token, read by its prefetch Job."""
    return f"{service}-hf-token"


def server_args(plan: "ServicePlan") -> list[str]:
    """`vllm serve` arguments: every flag one the pinned version accepts (facts/upstream/vllm-*/serve-flags.txt)."""
    s, rt = plan.service, runtime(plan)
    args = [model_path(plan), "--served-model-name", s.name, "--host", "0.0.0.0", "--port", str(rt.port),
            "--tensor-parallel-size", str(s.gpu.tp), "--gpu-memory-utilization", f"{plan.engine_memory_fraction:g}"]
    if s.model.hugging_face is not None:
        args += ["--revision", s.model.hugging_face.revision]
    if s.max_model_len is not None:
        args += ["--max-model-len", str(s.max_model_len)]
    return args


def _probe(rt: serving.Runtime, period: int, failures: int) -> dict[str, Any]:
    return {"httpGet": {"path": rt.health_path, "port": "http"}, "periodSeconds": period,
            "failureThreshold": failures, "timeoutSeconds": 5}


def _pod_annotations(plan: "ServicePlan") -> dict[str, str]:
    out = {names.CA_SAFE_TO_EVICT_ANNOTATION: "false"}  # the autoscaler never drains a node mid-request
    if plan.pool.provisioner == "karpenter":
        out[names.KARPENTER_DO_NOT_DISRUPT_ANNOTATION] = "true"
    return out


def _spread(plan: "ServicePlan") -> list[dict[str, Any]]:
    """Replicas over the pool's zones and nodes; ScheduleAnyway, so a zone without capacity never blocks one."""
    keys = (["topology.kubernetes.io/zone"] if plan.zones > 1 else []) + ["kubernetes.io/hostname"]
    return [{"maxSkew": 1, "topologyKey": k, "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchLabels": _selector(plan)}} for k in keys]


def server_pod(spec: "PlatformSpec", plan: "ServicePlan") -> dict[str, Any]:
    rt = runtime(plan)
    mig = plan.service.gpu.mig_profile if plan.resource.startswith(names.MIG_RESOURCE_PREFIX) else None
    pod = gpu_pod_spec(spec, plan.team, rt.reference, gpus=plan.units, pool=plan.pool.name, mig_profile=mig,
                       container="server", memory=PodSize(0.0, plan.host_memory_mib).memory_quantity)
    main = pod["containers"][0]
    main["args"] = server_args(plan)
    main["ports"] = [{"name": "http", "containerPort": rt.port, "protocol": "TCP"}]
    main["env"] = [*main.get("env", []), {"name": "HF_HUB_OFFLINE", "value": "1"}]
    main["startupProbe"] = _probe(rt, STARTUP_PERIOD, plan.startup_failure_threshold)
    main["readinessProbe"] = _probe(rt, 10, 3)
    main["livenessProbe"] = _probe(rt, 30, 3)
    pod["terminationGracePeriodSeconds"] = TERMINATION_GRACE_SECONDS
    pod["topologySpreadConstraints"] = _spread(plan)
    return pod


def deployment(spec: "PlatformSpec", plan: "ServicePlan") -> dict[str, Any]:
    surge = plan.max_surge
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(plan, plan.service.name), "spec": {
        "replicas": plan.service.replicas.min,
        "selector": {"matchLabels": _selector(plan)},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge, "maxUnavailable": 1 - surge}},
        "template": {"metadata": {"labels": labels(plan), "annotations": _pod_annotations(plan)},
                     "spec": server_pod(spec, plan)}}}


# An internal NLB sending to pod IPs (the controller registers them as targets), reachable only inside the VPC.
INTERNAL_NLB_ANNOTATIONS = {"service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
                            "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type": "ip"}


def service(plan: "ServicePlan") -> dict[str, Any]:
    """A ClusterIP Service, or with `loadBalancer: internal` an internal Network Load Balancer as well."""
    meta, spec = _meta(plan, plan.service.name), {"type": "ClusterIP", "selector": _selector(plan), "ports": [
        {"name": "http", "port": SERVICE_PORT, "targetPort": "http", "protocol": "TCP"}]}
    if plan.service.load_balancer == "internal":
        meta["annotations"] = dict(INTERNAL_NLB_ANNOTATIONS)
        spec.update(type="LoadBalancer", loadBalancerClass=serving.NLB_CLASS)
    return {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec}


def network_policy(plan: "ServicePlan", vpc_cidr: Optional[str] = None) -> dict[str, Any]:
    """Callers from any namespace reach the server's port (the team's own policy admits only its namespace), and
    with an internal load balancer the VPC's addresses (the NLB's, sending to pod IPs)."""
    peers: list[dict[str, Any]] = [{"namespaceSelector": {}}]
    if plan.service.load_balancer == "internal" and vpc_cidr:
        peers.append({"ipBlock": {"cidr": vpc_cidr}})
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": _meta(plan, f"{plan.service.name}-callers"), "spec": {
                "podSelector": {"matchLabels": _selector(plan)}, "policyTypes": ["Ingress"],
                "ingress": [{"from": peers, "ports": [{"port": runtime(plan).port, "protocol": "TCP"}]}]}}


def disruption_budget(plan: "ServicePlan") -> Optional[dict[str, Any]]:
    """One replica down at a time, when two or more always run (with one, a budget would block every drain)."""
    if plan.service.replicas.min < 2:
        return None
    return {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": _meta(plan, plan.service.name),
            "spec": {"maxUnavailable": 1, "selector": {"matchLabels": _selector(plan)}}}


def prefetch_service_account(plan: "ServicePlan") -> str:
    return f"{plan.service.name}-prefetch"


def _prefetch_env(plan: "ServicePlan") -> list[dict[str, Any]]:
    m = plan.service.model
    env: list[dict[str, Any]] = [{"name": "HF_HOME", "value": HF_HOME}]
    if m.hugging_face is not None:
        env += [{"name": "MODEL_REPO", "value": m.hugging_face.repo},
                {"name": "MODEL_REVISION", "value": m.hugging_face.revision}]
        if m.hugging_face.token_secret:
            env.append({"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {
                "name": token_secret_name(plan.service.name), "key": TOKEN_KEY}}})
    return env


def prefetch_deadline_seconds(plan: "ServicePlan") -> int:
    return int(plan.weights_gib * 1024 / PREFETCH_MIN_MIBPS) + PREFETCH_SLACK_SECONDS


def prefetch_command(plan: "ServicePlan") -> tuple[str, list[str]]:
    """The image and command of the download: the runtime's own image with its huggingface_hub for a Hugging Face
    model, the AWS CLI's `s3 sync` (skips files already whole: same size, not newer) for an S3 prefix."""
    if plan.service.model.hugging_face is not None:
        return runtime(plan).reference, ["python3", "-c", HF_PREFETCH_SCRIPT]
    bucket, prefix = s3_parts(str(plan.service.model.s3))
    return serving.AWS_CLI_IMAGE.reference, ["aws", "s3", "sync", f"s3://{bucket}/{prefix}", model_path(plan),
                                             "--only-show-errors", "--no-progress"]


def prefetch_job(spec: "PlatformSpec", plan: "ServicePlan") -> dict[str, Any]:
    """Downloads the weights into the team's cache from the system nodes (no GPU held while it downloads), with
    images pinned by digest and nothing installed at start. One Job per revision: a new revision is a new Job,
    done before the rollout."""
    image, command = prefetch_command(plan)
    main: dict[str, Any] = {
        "name": "prefetch", "image": image, "command": command,
        "env": [*_prefetch_env(plan), {"name": "HOME", "value": "/tmp"}],
        "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}, "limits": {"memory": "2Gi"}},
        "volumeMounts": [{"name": CACHE_VOLUME, "mountPath": BASE_PATH}],
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}}
    pod = {"priorityClassName": names.priority_class(_tier(spec, plan)), "restartPolicy": "OnFailure",
           "serviceAccountName": prefetch_service_account(plan), "nodeSelector": dict(spec.cluster.system_node_selector),
           "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}, "runAsNonRoot": True,
                               "runAsUser": PREFETCH_USER, "runAsGroup": PREFETCH_USER},
           "containers": [main],
           "volumes": [{"name": CACHE_VOLUME, "persistentVolumeClaim": {"claimName": names.MODEL_CACHE_PVC}}]}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": _meta(plan, prefetch_name(plan), PREFETCH),
            "spec": {"backoffLimit": 4, "activeDeadlineSeconds": prefetch_deadline_seconds(plan),
                     "template": {"metadata": {"labels": labels(plan, PREFETCH)}, "spec": pod}}}


def _vpc_cidr(spec: "PlatformSpec") -> Optional[str]:
    create = spec.cluster.create
    return create.vpc.cidr if create is not None and create.vpc is not None else None


def _tier(spec: "PlatformSpec", plan: "ServicePlan") -> str:
    return str(next(t.priority_tier for t in spec.teams if t.name == plan.team))


def prefetch_account(plan: "ServicePlan") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": _meta(plan, prefetch_service_account(plan), PREFETCH)}


def s3_read_policy(uri: str) -> dict[str, Any]:
    """Read one prefix and nothing else: list the bucket under the prefix, get its objects."""
    bucket, prefix = s3_parts(uri)
    return {"Version": "2012-10-17", "Statement": [
        {"Sid": "ListPrefix", "Effect": "Allow", "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{bucket}",
         "Condition": {"StringLike": {"s3:prefix": [f"{prefix}*"]}}},
        {"Sid": "ReadPrefix", "Effect": "Allow", "Action": "s3:GetObject",
         "Resource": f"arn:aws:s3:::{bucket}/{prefix}*"}]}


def service_manifests(spec: "PlatformSpec", plan: "ServicePlan") -> dict[str, dict[str, Any]]:
    """Every object of one service, by a key stable across runs."""
    out = {"prefetch-account": prefetch_account(plan), "prefetch": prefetch_job(spec, plan),
           "deployment": deployment(spec, plan), "service": service(plan),
           "callers": network_policy(plan, _vpc_cidr(spec))}
    pdb = disruption_budget(plan)
    if pdb is not None:
        out["disruption-budget"] = pdb
    return out

