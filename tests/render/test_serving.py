"""A team's model servers as Kubernetes objects: strictly valid, the server's flags ones the pinned vLLM accepts,
the image pinned by version and digest, warm and safe through rollouts, and the prefetch reading one S3 prefix."""
import json
import re

import kubernetes_validate
import pytest

from gpu_platform.decisions.serving import plans
from gpu_platform.facts import serving
from gpu_platform.render import serving as render
from tests.render.test_manifests_validate import schema_version
from tests.support.aws_api import api_problems, service_model
from tests.support.stacks import spec_of

S3 = "s3://acme-models/qwen3-8b/2026-11"


def _with_s3(platform):
    platform["teams"][0]["services"][0]["model"] = {"s3": S3, "weightsGiB": 15.3}


def _with_token(platform):
    platform["teams"][0]["services"][0]["model"]["huggingFace"]["tokenSecret"] = "researchHfToken"


def _two_warm(platform):
    platform["teams"][0]["services"][0]["replicas"] = {"min": 2, "max": 2}


@pytest.fixture(params=["dev", "prod"])
def planned(request):
    spec = spec_of(request.param)
    [plan] = plans(spec)
    return spec, plan


def _container(manifest):
    return manifest["spec"]["template"]["spec"]["containers"][0]


def test_every_object_validates_strictly(planned):
    spec, plan = planned
    version = schema_version(spec.cluster.kubernetes_version)
    for obj in render.service_manifests(spec, plan).values():
        kubernetes_validate.validate(obj, version, strict=True)


@pytest.mark.parametrize("edit", [_with_s3, _with_token, _two_warm])
def test_variants_validate_strictly(edit):
    spec = spec_of("prod", edit)
    [plan] = plans(spec)
    for obj in render.service_manifests(spec, plan).values():
        kubernetes_validate.validate(obj, schema_version(spec.cluster.kubernetes_version), strict=True)


def test_server_flags_are_ones_the_pinned_vllm_accepts(planned):
    spec, plan = planned
    flags = [a for a in render.server_args(plan) if a.startswith("--")]
    accepted = serving.RUNTIMES["vllm"].accepted_flags
    assert flags and set(flags) <= accepted, set(flags) - accepted
    assert "--no-such-flag" not in accepted


def test_the_image_is_pinned_by_version_and_digest(planned):
    spec, plan = planned
    image = _container(render.deployment(spec, plan))["image"]
    assert re.fullmatch(r"docker\.io/vllm/vllm-openai:v0\.22\.1@sha256:[0-9a-f]{64}", image)


def test_the_server_reads_its_revision_offline_from_the_team_cache(planned):
    spec, plan = planned
    main = _container(render.deployment(spec, plan))
    env = {e["name"]: e.get("value") for e in main["env"]}
    assert env["HF_HUB_OFFLINE"] == "1" and env["HF_HOME"].startswith("/models/")
    assert any(m["mountPath"] == "/models" for m in main["volumeMounts"])
    args = main["args"]
    assert args[args.index("--revision") + 1] == plan.service.model.hugging_face.revision
    assert args[args.index("--gpu-memory-utilization") + 1] == f"{plan.engine_memory_fraction:g}"


def test_the_pod_runs_at_the_teams_tier_with_memory_backed_shm_and_is_never_evicted_mid_request(planned):
    spec, plan = planned
    d = render.deployment(spec, plan)
    pod = d["spec"]["template"]
    assert pod["metadata"]["annotations"]["cluster-autoscaler.kubernetes.io/safe-to-evict"] == "false"
    assert pod["spec"]["priorityClassName"] == f"gpu-platform-{spec.teams[0].priority_tier}"
    [shm] = [v for v in pod["spec"]["volumes"] if v["name"] == "dshm"]
    assert shm["emptyDir"]["medium"] == "Memory"
    assert {"name": "dshm", "mountPath": "/dev/shm"} in _container(d)["volumeMounts"]
    assert pod["spec"]["nodeSelector"] == {"gpu-platform.io/pool": plan.pool.name}


def test_probes_wait_for_the_weights_and_warm_up(planned):
    spec, plan = planned
    main = _container(render.deployment(spec, plan))
    startup = main["startupProbe"]
    assert startup["httpGet"]["path"] == "/health"
    assert startup["periodSeconds"] * startup["failureThreshold"] >= 2 * plan.cold_start_seconds
    assert main["readinessProbe"]["httpGet"]["port"] == "http"


def test_a_rollout_on_a_pool_without_warm_capacity_never_surges(planned):
    spec, plan = planned
    rolling = render.deployment(spec, plan)["spec"]["strategy"]["rollingUpdate"]
    assert rolling == {"maxSurge": 0, "maxUnavailable": 1}


def test_replicas_spread_over_the_pools_zones():
    spec = spec_of("prod")
    [plan] = plans(spec)
    keys = [c["topologyKey"] for c in render.deployment(spec, plan)["spec"]["template"]["spec"]["topologySpreadConstraints"]]
    assert keys == ["topology.kubernetes.io/zone", "kubernetes.io/hostname"]


def test_a_disruption_budget_only_when_two_replicas_always_run():
    [one] = plans(spec_of("prod"))
    assert render.disruption_budget(one) is None
    spec = spec_of("prod", _two_warm)
    [two] = plans(spec)
    selector = render.deployment(spec, two)["spec"]["selector"]
    assert render.disruption_budget(two)["spec"] == {"maxUnavailable": 1, "selector": selector}


PINNED = re.compile(r"^[a-z0-9./-]+:[\w.-]+@sha256:[0-9a-f]{64}$")


def test_the_prefetch_job_downloads_one_revision_without_a_gpu(planned):
    spec, plan = planned
    job = render.prefetch_job(spec, plan)
    assert job["metadata"]["name"].endswith(plan.service.model.hugging_face.revision[:8])
    main = _container(job)
    assert not any(k.startswith("nvidia.com/") for k in main["resources"]["requests"])
    env = {e["name"]: e.get("value") for e in main["env"]}
    assert env["MODEL_REVISION"] == plan.service.model.hugging_face.revision
    assert job["spec"]["template"]["spec"]["nodeSelector"] == dict(spec.cluster.system_node_selector)


def test_a_hugging_face_prefetch_runs_the_servers_pinned_image_and_installs_nothing(planned):
    spec, plan = planned
    main = _container(render.prefetch_job(spec, plan))
    assert main["image"] == serving.RUNTIMES["vllm"].reference and PINNED.match(main["image"])
    python, flag, script = main["command"]
    assert (python, flag) == ("python3", "-c")
    compile(script, "prefetch", "exec")  # the script is Python the image runs
    assert set(re.findall(r'os\.environ\["(\w+)"\]', script)) <= {e["name"] for e in main["env"]}
    assert "pip" not in json.dumps(main) and "PYTHONPATH" not in json.dumps(main)


def test_an_s3_prefetch_syncs_one_prefix_with_the_pinned_aws_cli():
    spec = spec_of("prod", _with_s3)
    [plan] = plans(spec)
    main = _container(render.prefetch_job(spec, plan))
    assert main["image"] == serving.AWS_CLI_IMAGE.reference and PINNED.match(main["image"])
    assert main["command"][:5] == ["aws", "s3", "sync", "s3://acme-models/qwen3-8b/2026-11/", render.model_path(plan)]
    assert "pip" not in json.dumps(main)


def test_a_hub_token_comes_from_the_services_secret():
    spec = spec_of("prod", _with_token)
    [plan] = plans(spec)
    env = {e["name"]: e for e in _container(render.prefetch_job(spec, plan))["env"]}
    assert env["HF_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "qwen3-8b-hf-token", "key": "token"}


def test_an_s3_model_is_served_from_its_copy_in_the_cache():
    spec = spec_of("prod", _with_s3)
    [plan] = plans(spec)
    args = render.server_args(plan)
    assert args[0] == "/models/s3/acme-models/qwen3-8b/2026-11" and "--revision" not in args
    assert args[0] in _container(render.prefetch_job(spec, plan))["command"]


def test_the_s3_read_policy_reaches_one_prefix_and_passes_botocore():
    doc = render.s3_read_policy(S3)
    listing, reading = doc["Statement"]
    assert listing["Resource"] == "arn:aws:s3:::acme-models"
    assert listing["Condition"] == {"StringLike": {"s3:prefix": ["qwen3-8b/2026-11/*"]}}
    assert reading["Resource"] == "arn:aws:s3:::acme-models/qwen3-8b/2026-11/*" and reading["Action"] == "s3:GetObject"
    iam = service_model("iam").operation_model("PutRolePolicy").input_shape
    assert api_problems({"RoleName": "r", "PolicyName": "p", "PolicyDocument": json.dumps(doc)}, iam) == []


def test_callers_from_any_namespace_reach_only_the_server_port(planned):
    spec, plan = planned
    policy = render.network_policy(plan)["spec"]
    assert policy["ingress"] == [{"from": [{"namespaceSelector": {}}], "ports": [{"port": 8000, "protocol": "TCP"}]}]
    assert render.service(plan)["spec"]["ports"][0]["targetPort"] == "http"


# --- an internal load balancer for callers in the VPC ---

def test_an_internal_load_balancer_is_an_nlb_of_the_controller_reaching_pod_ips():
    spec = spec_of("prod")
    [plan] = plans(spec)
    svc = render.service(plan)
    assert (svc["spec"]["type"], svc["spec"]["loadBalancerClass"]) == ("LoadBalancer", "service.k8s.aws/nlb")
    assert svc["metadata"]["annotations"]["service.beta.kubernetes.io/aws-load-balancer-scheme"] == "internal"
    peers = render.network_policy(plan, "10.50.0.0/16")["spec"]["ingress"][0]["from"]
    assert {"ipBlock": {"cidr": "10.50.0.0/16"}} in peers
    kubernetes_validate.validate(svc, schema_version(spec.cluster.kubernetes_version), strict=True)


def test_without_a_load_balancer_the_service_stays_inside_the_cluster():
    [plan] = plans(spec_of("dev"))
    assert render.service(plan)["spec"]["type"] == "ClusterIP"
    assert render.network_policy(plan, "10.40.0.0/16")["spec"]["ingress"][0]["from"] == [{"namespaceSelector": {}}]


def test_the_controllers_published_policy_passes_botocore_and_its_values_are_chart_keys():
    import yaml

    from gpu_platform.facts import catalog
    from gpu_platform.render import serving_scaling as scaling
    from tests.support.chart_values import key_paths

    doc = scaling.lb_controller_policy()
    assert doc["Version"] == "2012-10-17" and any(
        "elasticloadbalancing:CreateLoadBalancer" in s.get("Action", []) for s in doc["Statement"])
    iam = service_model("iam").operation_model("PutRolePolicy").input_shape
    assert api_problems({"RoleName": "r", "PolicyName": "p", "PolicyDocument": json.dumps(doc)}, iam) == []
    chart = yaml.safe_load((catalog.UPSTREAM / f"aws-load-balancer-controller-values-"
                                               f"{serving.LB_CONTROLLER_CHART_VERSION}.yaml").read_text())
    values = scaling.lb_controller_values("gpu-prod", "us-east-1", "vpc-0123", {"gpu-platform.io/role": "system"})
    assert chart["nodeSelector"] == {}
    assert key_paths({**values, "nodeSelector": {}}) - key_paths(chart) == set()


def test_a_load_balancer_needs_the_vpc_the_stack_creates():
    from tests.support.stacks import spec_problems, stack_platform

    platform = stack_platform("prod")
    platform["cluster"].pop("create")
    platform["cluster"]["existing"] = {"subnetIds": ["subnet-0123456789abcdef0", "subnet-0123456789abcdef1"]}
    found = [p for p in spec_problems(platform) if "loadBalancer" in p]
    assert found and found[0].startswith("teams[0].services[0].loadBalancer: ")


def test_the_server_requests_and_is_limited_to_its_decided_host_memory(planned):
    spec, plan = planned
    resources = _container(render.deployment(spec, plan))["resources"]
    assert resources["requests"]["memory"] == resources["limits"]["memory"] == f"{plan.host_memory_mib // 1024}Gi"


@pytest.mark.parametrize("edit", [None, _with_s3])
def test_the_prefetch_job_meets_the_restricted_pod_security_standard(edit):
    spec = spec_of("prod", edit)
    [plan] = plans(spec)
    pod = render.prefetch_job(spec, plan)["spec"]["template"]["spec"]
    security, [main] = pod["securityContext"], pod["containers"]
    assert security["runAsNonRoot"] is True and security["runAsUser"] != 0 and security["runAsGroup"] != 0
    assert security["seccompProfile"] == {"type": "RuntimeDefault"}
    assert main["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    assert all(v.keys() <= {"name", "persistentVolumeClaim"} for v in pod["volumes"])  # no hostPath or the like
