"""The team admission policies (render/admission.py): every rule's CEL evaluated on allowed and refused objects,
as the API server would (tests/support/admission.py), and the objects held to Kubernetes' schema."""
from __future__ import annotations

import copy

import kubernetes_validate
import pytest

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render import admission as a
from gpu_platform.render.team_objects import TeamContext, namespace
from gpu_platform.render.workloads import gpu_job, gpu_pod
from tests.support.admission import applies, denials
from tests.support.dra import DRA_POOL, prod_with_dra

IMAGE = "registry.example.com/trainer:2.3"
GPU_TOLERATION = {"key": names.GPU_TAINT_KEY, "operator": "Equal", "value": names.GPU_TAINT_VALUE, "effect": "NoSchedule"}


@pytest.fixture(scope="module")
def manifests():
    return a.admission_manifests()


def team_ns(spec, team: str) -> dict:
    t = next(x for x in spec.teams if x.name == team)
    return namespace(TeamContext.of(spec, t), t)


def pod(team: str = "research", *, gpus: int = 0, tolerations=(), env=(), privileged=None, priority=None, labels=None,
        node=None, runtime=None, annotations=None, mig: str | None = None) -> dict:
    container: dict = {"name": "main", "image": IMAGE}
    if gpus or mig:
        resource = names.mig_resource(mig) if mig else names.GPU_RESOURCE
        container["resources"] = {"requests": {resource: str(gpus or 1)}, "limits": {resource: str(gpus or 1)}}
    if env:
        container["env"] = [{"name": k, "value": v} for k, v in env]
    if privileged is not None:
        container["securityContext"] = {"privileged": privileged}
    spec: dict = {"containers": [container]}
    if tolerations:
        spec["tolerations"] = list(tolerations)
    for key, value in (("priorityClassName", priority), ("nodeName", node), ("runtimeClassName", runtime)):
        if value is not None:
            spec[key] = value
    meta: dict = {"name": "p", "namespace": team}
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def refused(manifests, key: str, obj: dict, ns: dict) -> list[str]:
    return denials(manifests[key], obj, ns)


# --- GPU nodes are for GPU pods ---

@pytest.mark.parametrize("toleration", [
    GPU_TOLERATION,
    {"key": names.GPU_TAINT_KEY, "operator": "Exists"},
    {"key": names.GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"},
    {"operator": "Exists"},  # tolerates every taint
    {"key": names.GPU_TAINT_KEY, "value": names.GPU_TAINT_VALUE},  # operator defaults to Equal
], ids=["equal", "exists", "exists-noschedule", "everything", "default-operator"])
def test_a_cpu_pod_tolerating_the_gpu_taint_is_refused(manifests, prod, toleration):
    (message,) = refused(manifests, "gpu-nodes", pod(tolerations=[toleration]), team_ns(prod, "research"))
    assert "must request nvidia.com/gpu" in message and "GPU nodes are for GPU pods" in message


@pytest.mark.parametrize("p", [
    pod(gpus=1, tolerations=[GPU_TOLERATION]),
    pod(mig="1g.10gb", tolerations=[GPU_TOLERATION]),
    pod(),  # a CPU pod that stays off GPU nodes
    pod(tolerations=[{"key": names.GPU_TAINT_KEY, "operator": "Equal", "value": "other", "effect": "NoSchedule"}]),
    pod(tolerations=[{"key": names.GPU_TAINT_KEY, "operator": "Exists", "effect": "NoExecute"}]),
    pod(tolerations=[{"key": "workload", "operator": "Equal", "value": "training", "effect": "NoSchedule"}]),
], ids=["gpu-pod", "mig-pod", "cpu-pod", "other-value", "other-effect", "pool-taint-only"])
def test_gpu_pods_and_pods_that_do_not_tolerate_the_gpu_taint_are_allowed(manifests, prod, p):
    assert refused(manifests, "gpu-nodes", p, team_ns(prod, "research")) == []


def test_a_zero_gpu_request_is_no_gpu_request(manifests, prod):
    p = pod(tolerations=[GPU_TOLERATION])
    p["spec"]["containers"][0]["resources"] = {"requests": {names.GPU_RESOURCE: "0"}, "limits": {names.GPU_RESOURCE: "0"}}
    assert refused(manifests, "gpu-nodes", p, team_ns(prod, "research"))  # the LimitRange default is 0


def test_a_pod_naming_its_node_is_refused(manifests, prod):
    (message,) = refused(manifests, "gpu-nodes", pod(node="ip-10-50-1-7.ec2.internal"), team_ns(prod, "research"))
    assert "remove spec.nodeName" in message
    assert refused(manifests, "gpu-nodes", pod(node=""), team_ns(prod, "research")) == []


# --- GPUs only through the device plugin ---

@pytest.mark.parametrize("variable", catalog.NVIDIA_DEVICE_ENV_VARS)
def test_device_selection_variables_are_refused(manifests, prod, variable):
    (message,) = refused(manifests, "device-access", pod(env=[(variable, "all")]), team_ns(prod, "research"))
    assert "NVIDIA_VISIBLE_DEVICES" in message and "device plugin" in message


def test_nvidia_visible_devices_all_without_a_gpu_request_is_refused(manifests, prod):
    p = pod(env=[("NVIDIA_VISIBLE_DEVICES", "all")])
    ns = team_ns(prod, "research")
    assert refused(manifests, "device-access", p, ns)
    assert refused(manifests, "device-access", pod(gpus=1, env=[("NVIDIA_VISIBLE_DEVICES", "all")]), ns)  # nor with one


def test_the_variable_is_refused_in_init_and_ephemeral_containers_too(manifests, prod):
    ns = team_ns(prod, "research")
    for field in ("initContainers", "ephemeralContainers"):
        p = pod()
        p["spec"][field] = [{"name": "x", "image": IMAGE, "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "0"}]}]
        assert refused(manifests, "device-access", p, ns), field


def test_ordinary_variables_and_cuda_visible_devices_are_allowed(manifests, prod):
    """CUDA_VISIBLE_DEVICES only narrows what the container was given."""
    p = pod(gpus=1, env=[("CUDA_VISIBLE_DEVICES", "0"), ("NVIDIA_DRIVER_CAPABILITIES", "compute,utility"), ("X", "1")])
    assert refused(manifests, "device-access", p, team_ns(prod, "research")) == []


@pytest.mark.parametrize("p, words", [
    (pod(privileged=True), "privileged containers are refused"),
    (pod(runtime="nvidia"), "RuntimeClasses named nvidia*"),
    (pod(runtime="nvidia-cdi"), "RuntimeClasses named nvidia*"),
    (pod(annotations={"cdi.k8s.io/gpus": "nvidia.com/gpu=all"}), "cdi.k8s.io/* annotations"),
], ids=["privileged", "nvidia-runtime", "nvidia-cdi-runtime", "cdi-annotation"])
def test_other_paths_around_the_device_plugin_are_refused(manifests, prod, p, words):
    (message,) = refused(manifests, "device-access", p, team_ns(prod, "research"))
    assert words in message


def test_unprivileged_pods_with_other_runtimes_and_annotations_are_allowed(manifests, prod):
    p = pod(privileged=False, runtime="gvisor", annotations={"example.com/owner": "research"})
    assert refused(manifests, "device-access", p, team_ns(prod, "research")) == []


def test_device_access_is_checked_when_an_ephemeral_container_is_added(manifests, prod):
    policy, binding = manifests["device-access"], manifests["device-access-binding"]
    ns = team_ns(prod, "research")
    assert applies(policy, binding, group="", resource="pods/ephemeralcontainers", operation="UPDATE", namespace=ns)
    assert not applies(policy, binding, group="", resource="pods", operation="UPDATE", namespace=ns)


# --- priority tiers ---

@pytest.mark.parametrize("team, tier, allowed", [
    ("batch", "preemptible-batch", True),
    ("batch", "standard", False),
    ("batch", "critical-inference", False),
    ("research", "preemptible-batch", True),
    ("research", "standard", True),
    ("research", "critical-inference", False),
    ("inference", "critical-inference", True),
    ("inference", "preemptible-batch", True),
])
def test_a_pod_may_run_at_its_team_s_tier_or_below(manifests, prod, team, tier, allowed):
    found = refused(manifests, "priority-tier", pod(team, priority=names.priority_class(tier)), team_ns(prod, team))
    assert (found == []) is allowed
    if not allowed:
        assert "preemptible-batch teams: gpu-platform-preemptible-batch" in found[0]


def test_a_batch_team_s_pod_with_the_critical_tier_is_refused(manifests, prod):
    p = pod("batch", gpus=1, tolerations=[GPU_TOLERATION], priority=names.priority_class("critical-inference"))
    (message,) = refused(manifests, "priority-tier", p, team_ns(prod, "batch"))
    assert names.PRIORITY_TIER_LABEL in message


@pytest.mark.parametrize("priority", ["system-cluster-critical", "system-node-critical", "someone-elses-class"])
def test_classes_outside_the_tiers_are_refused(manifests, prod, priority):
    assert refused(manifests, "priority-tier", pod("inference", priority=priority), team_ns(prod, "inference"))


def test_no_class_is_always_allowed_and_an_unknown_tier_gets_the_lowest(manifests, prod):
    ns = team_ns(prod, "research")
    assert refused(manifests, "priority-tier", pod(), ns) == []
    bare = copy.deepcopy(ns)
    del bare["metadata"]["labels"][names.PRIORITY_TIER_LABEL]
    assert refused(manifests, "priority-tier", pod(priority=names.priority_class("standard")), bare)
    assert refused(manifests, "priority-tier", pod(priority=names.priority_class("preemptible-batch")), bare) == []
    bare["metadata"]["labels"][names.PRIORITY_TIER_LABEL] = "platinum"
    assert refused(manifests, "priority-tier", pod(priority=names.priority_class("standard")), bare)


def queued_job(team: str, tier: str) -> dict:
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "train", "namespace": team, "labels": {
                names.KUEUE_QUEUE_NAME_LABEL: names.TEAM_LOCAL_QUEUE,
                names.KUEUE_PRIORITY_CLASS_LABEL: names.priority_class(tier)}},
            "spec": {"template": {"spec": {"containers": [{"name": "main", "image": IMAGE}], "restartPolicy": "Never"}}}}


@pytest.mark.parametrize("team, tier, allowed", [
    ("batch", "critical-inference", False), ("batch", "preemptible-batch", True),
    ("research", "standard", True), ("research", "critical-inference", False), ("inference", "critical-inference", True),
])
def test_a_kueue_priority_label_is_held_to_the_team_s_tier(manifests, prod, team, tier, allowed):
    found = refused(manifests, "queue-priority", queued_job(team, tier), team_ns(prod, team))
    assert (found == []) is allowed
    if not allowed:
        assert names.KUEUE_PRIORITY_CLASS_LABEL in found[0]


def test_the_kueue_label_is_checked_on_every_namespaced_kind_and_only_there(manifests, prod):
    policy, binding = manifests["queue-priority"], manifests["queue-priority-binding"]
    ns = team_ns(prod, "batch")
    for group, resource in (("batch", "jobs"), ("", "pods"), ("jobset.x-k8s.io", "jobsets"), ("ray.io", "rayjobs")):
        for op in ("CREATE", "UPDATE"):
            assert applies(policy, binding, group=group, resource=resource, operation=op, namespace=ns)
    assert not applies(policy, binding, group="", resource="namespaces", operation="UPDATE", namespace=None)
    unlabelled = queued_job("batch", "critical-inference")
    del unlabelled["metadata"]["labels"][names.KUEUE_PRIORITY_CLASS_LABEL]
    assert refused(manifests, "queue-priority", unlabelled, ns) == []  # no label: not matched


# --- the team's own monitors ---

def monitor(kind: str = "ServiceMonitor", team: str = "research", **spec_fields) -> dict:
    endpoints = "endpoints" if kind == "ServiceMonitor" else "podMetricsEndpoints"
    spec = {"selector": {"matchLabels": {"app": "trainer"}}, endpoints: [{"port": "metrics"}]}
    for key, value in spec_fields.items():
        if key == "endpoint":
            spec[endpoints] = [{"port": "metrics", **value}]
        else:
            spec[key] = value
    return {"apiVersion": "monitoring.coreos.com/v1", "kind": kind, "metadata": {"name": "m", "namespace": team},
            "spec": spec}


@pytest.mark.parametrize("kind", ["ServiceMonitor", "PodMonitor"])
def test_a_team_monitor_of_its_own_namespace_is_allowed(manifests, prod, kind):
    ns = team_ns(prod, "research")
    for m in (monitor(kind), monitor(kind, namespaceSelector={"matchNames": ["research"]}),
              monitor(kind, endpoint={"honorLabels": False, "relabelings": [{"targetLabel": "team"}]})):
        assert refused(manifests, "team-monitors", m, ns) == []


@pytest.mark.parametrize("kind", ["ServiceMonitor", "PodMonitor"])
@pytest.mark.parametrize("fields, words", [
    ({"namespaceSelector": {"any": True}}, "scrapes its own namespace only"),
    ({"namespaceSelector": {"matchNames": ["research", "inference"]}}, "scrapes its own namespace only"),
    ({"endpoint": {"honorLabels": True}}, "honorLabels"),
    ({"endpoint": {"relabelings": [{"targetLabel": "namespace", "replacement": "inference"}]}}, "namespace label"),
    ({"endpoint": {"metricRelabelings": [{"targetLabel": "namespace", "replacement": "inference"}]}}, "namespace label"),
    ({"endpoint": {"bearerTokenFile": "/var/run/secrets/kubernetes.io/serviceaccount/token"}}, "bearerTokenFile"),
    ({"endpoint": {"tlsConfig": {"caFile": "/etc/prometheus/certs/ca.crt"}}}, "tlsConfig files"),
], ids=["any", "other-namespace", "honor-labels", "relabel-namespace", "metric-relabel-namespace", "token-file",
        "tls-file"])
def test_a_team_monitor_reaching_beyond_its_namespace_is_refused(manifests, prod, kind, fields, words):
    (message,) = refused(manifests, "team-monitors", monitor(kind, **fields), team_ns(prod, "research"))
    assert words in message


# --- the platform's own workloads pass ---

@pytest.mark.parametrize("team, options", [
    ("research", {"pool": "a100-train", "gpus": 8}),
    ("inference", {"pool": "l4-inference"}),
    ("batch", {"mig_profile": "2g.20gb"}),
])
def test_the_workload_helper_s_pods_and_jobs_pass_every_policy(manifests, prod, team, options):
    ns = team_ns(prod, team)
    service = gpu_pod(prod, team, "svc", IMAGE, **options)
    job = gpu_job(prod, team, "train", IMAGE, **options)
    job_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {**job["spec"]["template"]["metadata"], "namespace": team},
               "spec": job["spec"]["template"]["spec"]}
    for obj in (service, job_pod):
        for key in ("gpu-nodes", "device-access", "priority-tier", "queue-priority"):
            assert refused(manifests, key, obj, ns) == [], key
    assert refused(manifests, "queue-priority", job, ns) == []


@pytest.mark.parametrize("gpus", [1, 8])
def test_the_workload_helper_s_dra_claims_pass_every_policy(manifests, gpus):
    """On a DRA pool a pod claims its GPUs (no nvidia.com/ request): tolerating the GPU taint is still a GPU pod's."""
    dra = parse_platform(prod_with_dra())
    ns = team_ns(dra, "research")
    service = gpu_pod(dra, "research", "svc", IMAGE, pool=DRA_POOL, gpus=gpus)
    assert service["spec"]["resourceClaims"] and "tolerations" in service["spec"]
    assert not any("resources" in c and any(r.startswith(names.NVIDIA_DOMAIN) for r in c["resources"].get("limits", {}))
                   for c in service["spec"]["containers"])
    for key in ("gpu-nodes", "device-access", "priority-tier", "queue-priority"):
        assert refused(manifests, key, service, ns) == [], key


def test_a_claim_free_pod_tolerating_the_gpu_taint_is_refused_on_a_dra_stack_too(manifests):
    dra = parse_platform(prod_with_dra())
    (message,) = refused(manifests, "gpu-nodes", pod(tolerations=[GPU_TOLERATION]), team_ns(dra, "research"))
    assert "resourceClaims" in message


# --- the objects ---

def test_every_policy_has_a_deny_binding_to_the_team_namespaces(manifests):
    policies = {k: v for k, v in manifests.items() if not k.endswith("-binding")}
    assert set(policies) == set(a.POLICIES)
    for key, policy in policies.items():
        binding = manifests[f"{key}-binding"]
        assert binding["spec"]["policyName"] == policy["metadata"]["name"]
        assert binding["spec"]["validationActions"] == ["Deny"] and policy["spec"]["failurePolicy"] == "Fail"
        assert binding["spec"]["matchResources"]["namespaceSelector"] == a.team_namespaces()
        assert all(r["scope"] == "Namespaced" for r in policy["spec"]["matchConstraints"]["resourceRules"])


def test_policies_apply_in_team_namespaces_only(manifests, prod):
    policy, binding = manifests["gpu-nodes"], manifests["gpu-nodes-binding"]
    assert applies(policy, binding, group="", resource="pods", operation="CREATE", namespace=team_ns(prod, "research"))
    system = {"metadata": {"name": "kube-system", "labels": {names.NAMESPACE_NAME_LABEL: "kube-system"}}}
    assert not applies(policy, binding, group="", resource="pods", operation="CREATE", namespace=system)


@pytest.mark.parametrize("version", ["1.33", "1.35"])
def test_the_policies_and_bindings_match_the_kubernetes_schema(manifests, version):
    for obj in manifests.values():
        kubernetes_validate.validate(obj, version, strict=True)


def test_strict_validation_catches_a_misspelt_field(manifests):
    bad = copy.deepcopy(manifests["gpu-nodes"])
    bad["spec"]["validations"][0]["messsage"] = "x"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, "1.35", strict=True)
