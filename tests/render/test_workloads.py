"""The GPU workload helper: what a team's GPU pod gets, what it refuses, and the documented snippet."""
import copy
import re

import kubernetes_validate
import pytest
import yaml

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render.model_cache import BASE_PATH
from gpu_platform.render.operator_values import OperatorSettings, operator_values
from gpu_platform.render.workloads import HF_HOME, gpu_job, gpu_pod, gpu_pod_spec
from gpu_platform.spec.models import quantity_value
from tests.support.stacks import ROOT, spec_of, without_services

IMAGE = "registry.example.com/trainer:1.0"
GPU_TOLERATION = {"key": names.GPU_TAINT_KEY, "operator": "Equal", "value": names.GPU_TAINT_VALUE,
                  "effect": "NoSchedule"}




def main_container(pod_spec):
    (container,) = pod_spec["containers"]
    return container


def volume(pod_spec, name):
    return next((v for v in pod_spec["volumes"] if v["name"] == name), None)


# --- what every GPU pod gets ---

def test_tolerates_the_gpu_taint(dev):
    assert gpu_pod_spec(dev, "research", IMAGE)["tolerations"] == [GPU_TOLERATION]


def test_gpu_requests_equal_limits(prod):
    resources = main_container(gpu_pod_spec(prod, "research", IMAGE, gpus=4, pool="a100-train"))["resources"]
    assert resources["requests"][names.GPU_RESOURCE] == resources["limits"][names.GPU_RESOURCE] == "4"


def test_dev_shm_is_a_memory_volume_mounted_at_dev_shm(dev):
    pod_spec = gpu_pod_spec(dev, "research", IMAGE, shm_size="2Gi")
    shm = next(m for m in main_container(pod_spec)["volumeMounts"] if m["mountPath"] == "/dev/shm")
    assert volume(pod_spec, shm["name"])["emptyDir"] == {"medium": "Memory", "sizeLimit": "2Gi"}


def test_model_cache_is_mounted_with_hf_home_inside_it(dev):
    pod_spec = gpu_pod_spec(dev, "research", IMAGE)
    cache = next(m for m in main_container(pod_spec)["volumeMounts"] if m["mountPath"] == BASE_PATH)
    assert volume(pod_spec, cache["name"])["persistentVolumeClaim"] == {"claimName": names.MODEL_CACHE_PVC}
    assert {"name": "HF_HOME", "value": HF_HOME} in main_container(pod_spec)["env"]
    assert HF_HOME.startswith(BASE_PATH + "/")


def test_no_cache_no_cache_volume_and_no_hf_home():
    spec = spec_of("dev", lambda p: without_services(p).update(modelCache={"enabled": False}))
    pod_spec = gpu_pod_spec(spec, "research", IMAGE)
    assert "model-cache" not in [v["name"] for v in pod_spec["volumes"]] and "env" not in main_container(pod_spec)


@pytest.mark.parametrize("team, tier", [("research", "standard"), ("applied-ml", "preemptible-batch")])
def test_runs_at_the_teams_priority_tier(team, tier, dev):
    assert gpu_pod_spec(dev, team, IMAGE)["priorityClassName"] == names.priority_class(tier)


def test_memory_limit_equals_request_and_cpu_is_not_limited(dev):
    pod_spec = gpu_pod_spec(dev, "research", IMAGE, cpu="3", memory="12Gi", shm_size="4Gi")
    resources = main_container(pod_spec)["resources"]
    assert resources["requests"]["memory"] == resources["limits"]["memory"] == "12Gi"
    assert resources["requests"]["cpu"] == "3" and "cpu" not in resources["limits"]


def test_container_drops_privileges(dev):
    context = main_container(gpu_pod_spec(dev, "research", IMAGE))["securityContext"]
    assert context == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}


# --- placement ---

def test_pool_selects_the_pool_and_tolerates_its_own_taints(prod):
    pod_spec = gpu_pod_spec(prod, "research", IMAGE, pool="a100-train")
    assert pod_spec["nodeSelector"] == {names.POOL_LABEL: "a100-train"}
    assert pod_spec["tolerations"] == [GPU_TOLERATION, {"key": "workload", "operator": "Equal", "value": "training",
                                                        "effect": "NoSchedule"}]


def test_product_selects_the_gpu_product_label(prod):
    pod_spec = gpu_pod_spec(prod, "inference", IMAGE, gpu_product="L4")
    assert pod_spec["nodeSelector"] == {names.GPU_PRODUCT_LABEL: catalog.GPU_MODELS["L4"].product_label}
    assert pod_spec["tolerations"] == [GPU_TOLERATION]


def test_no_selection_leaves_scheduling_to_the_resource(prod):
    assert "nodeSelector" not in gpu_pod_spec(prod, "inference", IMAGE)


def test_mig_profile_asks_for_that_slice(prod):
    resources = main_container(gpu_pod_spec(prod, "research", IMAGE, mig_profile="1g.10gb", gpus=2))["resources"]
    mig = names.mig_resource("1g.10gb")
    assert resources["requests"][mig] == resources["limits"][mig] == "2"
    assert names.GPU_RESOURCE not in resources["requests"]
    assert resources["limits"]["cpu"] == resources["requests"]["cpu"] == "6"  # h100-mig (p5) pins whole CPUs


# --- refusals ---

@pytest.mark.parametrize("kwargs, message", [
    ({"pool": "nope"}, "unknown pool 'nope'; pools: h100-mig, a100-train, l4-inference"),
    ({"gpu_product": "H200"}, "no pool has H200 GPUs; pools offer: A100-SXM4-40GB, H100-80GB-HBM3, L4"),
    ({"mig_profile": "7g.80gb"}, "no pool offers nvidia.com/mig-7g.80gb"),
    ({"pool": "a100-train", "gpu_product": "L4"}, "select a pool or a GPU product, not both"),
    ({"gpus": 0}, "gpus must be >= 1"),
    ({"gpus": 9}, "team research pods may use at most 8 nvidia.com/gpu; asked for 9"),
    ({"pool": "l4-inference", "gpus": 2}, "pool l4-inference: nodes offer at most 1 nvidia.com/gpu; asked for 2"),
    ({"pool": "h100-mig"}, "pool h100-mig: nodes offer at most 0 nvidia.com/gpu"),
    ({"gpu_product": "A100-SXM4-40GB"}, "A100-SXM4-40GB pools without extra taints: nodes offer at most 0"),
    ({"gpus": 2}, "pools without extra taints: nodes offer at most 1 nvidia.com/gpu; asked for 2"),
    ({"mig_profile": "3g.40gb", "gpus": 17}, "nodes offer at most 8 nvidia.com/mig-3g.40gb"),
    ({"memory": "4Gi", "shm_size": "8Gi"}, "shm_size 8Gi exceeds memory 4Gi"),
])
def test_refuses_what_no_node_can_schedule(kwargs, message, prod):
    with pytest.raises(ValueError, match=re.escape(message)):
        gpu_pod_spec(prod, "research", IMAGE, **kwargs)


def test_refuses_an_unknown_team(dev):
    with pytest.raises(ValueError, match="unknown team 'vision'; teams: research, applied-ml"):
        gpu_pod_spec(dev, "vision", IMAGE)


def test_team_maximum_per_pod_is_enforced():
    spec = spec_of("prod", lambda p: p["teams"][0].update(maxGpusPerPod=2))
    with pytest.raises(ValueError, match="at most 2 nvidia.com/gpu; asked for 4"):
        gpu_pod_spec(spec, "research", IMAGE, gpus=4, pool="a100-train")


# --- the manifest ---

@pytest.mark.parametrize("options", [{"pool": "a100-train", "gpus": 8, "memory": "512Gi"},
                                     {"mig_profile": "1g.10gb"}, {"gpu_product": "L4", "command": ["serve"]}])
def test_pod_matches_the_kubernetes_schema(options, prod):
    pod = gpu_pod(prod, "research", "job", IMAGE, **options)
    kubernetes_validate.validate(pod, prod.cluster.kubernetes_version, strict=True)


def test_job_matches_the_kubernetes_schema(prod):
    job = gpu_job(prod, "research", "finetune", IMAGE, pool="a100-train", gpus=8, memory="512Gi", backoff_limit=0)
    kubernetes_validate.validate(job, prod.cluster.kubernetes_version, strict=True)
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never" and job["spec"]["backoffLimit"] == 0


def _documented(index):
    text = (ROOT / "docs" / "workloads.md").read_text()
    return yaml.safe_load(re.findall(r"```yaml\n(.*?)```", text, re.S)[index])


def test_documented_snippet_is_the_helpers_output(dev):
    assert _documented(0) == documented_pod(dev)


def documented_job(prod):
    return gpu_job(prod, "research", "finetune-llama", "registry.example.com/trainer:2.3", pool="a100-train", gpus=8,
                   command=["torchrun", "--nproc-per-node=8", "train.py"], backoff_limit=0, fail_on_exit_codes=[2])


def documented_pod(dev):
    return gpu_pod(dev, "research", "llm-server", "registry.example.com/llm-server:1.0", pool="a10g-spot", cpu="3",
                   memory="12Gi", shm_size="4Gi")


def test_documented_job_is_the_helpers_output(prod):
    assert _documented(1) == documented_job(prod)


# --- job pods survive platform changes ---

def _matches(selector: str, labels: dict) -> bool:
    """Kubernetes label-selector matching (equality and set-based terms), written for this test alone."""
    for term in filter(None, (t.strip() for t in re.split(r",(?![^()]*\))", selector))):
        if m := re.fullmatch(r"(\S+?)\s*(==|=|!=)\s*(\S*)", term):
            key, op, value = m.groups()
            if (labels.get(key) == value) != (op != "!="):
                return False
        elif m := re.fullmatch(r"(\S+)\s+(in|notin)\s+\((.*)\)", term):
            key, op, values = m.group(1), m.group(2), {v.strip() for v in m.group(3).split(",")}
            if (labels.get(key) in values) != (op == "in"):
                return False
        elif term.startswith("!"):
            if term[1:] in labels:
                return False
        elif term not in labels:
            return False
    return True


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_job_pods_match_the_driver_upgrade_wait_for_completion_selector(stack, request):
    spec = request.getfixturevalue(stack)
    selector = spec.gpu_operator.upgrade_policy.wait_for_completion.pod_selector
    if spec.gpu_operator.driver.source == "operator":  # the selector the upgrade controller really gets
        selector = operator_values(OperatorSettings.of(spec))["driver"]["upgradePolicy"]["waitForCompletion"]["podSelector"]
    job = gpu_job(spec, "research", "train", IMAGE)
    assert selector and _matches(selector, job["spec"]["template"]["metadata"]["labels"])
    assert not _matches(selector, gpu_pod(spec, "research", "serve", IMAGE)["metadata"]["labels"])


def test_a_custom_wait_selector_reaches_job_pods():
    spec = spec_of("prod", lambda p: p["gpuOperator"].update(
        upgradePolicy={"waitForCompletion": {"podSelector": "app=trainer, tier==batch"}}))
    labels = gpu_job(spec, "research", "train", IMAGE)["spec"]["template"]["metadata"]["labels"]
    assert _matches("app=trainer,tier=batch", labels)


def test_job_pods_are_never_evicted_by_the_autoscaler_and_services_may_be(prod):
    annotations = gpu_job(prod, "research", "train", IMAGE)["spec"]["template"]["metadata"]["annotations"]
    assert annotations == {names.CA_SAFE_TO_EVICT_ANNOTATION: "false", names.KARPENTER_DO_NOT_DISRUPT_ANNOTATION: "true"}
    assert "annotations" not in gpu_pod(prod, "research", "serve", IMAGE)["metadata"]


def test_the_selector_matcher_reads_set_based_terms():
    assert _matches("a in (x, y),!b", {"a": "y"}) and not _matches("a notin (y)", {"a": "y"})


# --- training pools: sizes from the instance, /dev/shm, EFA ---

@pytest.fixture(scope="module")
def training():
    """prod with a p5 EFA pool (h100-train) beside a100-train (p4d, EFA)."""
    from tests.support.training import ubuntu_training

    return parse_platform(ubuntu_training())


FABRIC_ENV = [{"name": "FI_PROVIDER", "value": "efa"}, {"name": "FI_EFA_FORK_SAFE", "value": "1"},
              {"name": "FI_EFA_USE_DEVICE_RDMA", "value": "1"}]


@pytest.mark.parametrize("pool, gpus, devices", [("h100-train", 8, "32"), ("h100-train", 1, "4"), ("a100-train", 8, "4"),
                                                 ("a100-train", 4, "2")])
def test_an_efa_pod_asks_for_its_share_of_the_nodes_devices_and_gets_the_fabric_env(training, pool, gpus, devices):
    container = main_container(gpu_pod_spec(training, "research", IMAGE, gpus=gpus, pool=pool))
    resources = container["resources"]
    assert resources["requests"][names.EFA_RESOURCE] == resources["limits"][names.EFA_RESOURCE] == devices
    assert container["env"] == [{"name": "HF_HOME", "value": HF_HOME}, *FABRIC_ENV]


def test_eight_one_gpu_pods_fit_a_p4d_node_so_none_asks_for_one_of_its_four_devices(training):
    container = main_container(gpu_pod_spec(training, "research", IMAGE, gpus=1, pool="a100-train"))
    assert names.EFA_RESOURCE not in container["resources"]["requests"]
    assert [e for e in container["env"] if e["name"].startswith("FI_")] == []


@pytest.mark.parametrize("options", [{"mig_profile": "3g.40gb"}, {"pool": "l4-inference"}])
def test_pods_off_efa_pools_ask_no_efa(training, options):
    container = main_container(gpu_pod_spec(training, "research", IMAGE, **options))
    assert names.EFA_RESOURCE not in container["resources"]["requests"]
    assert [e for e in container["env"] if e["name"].startswith("FI_")] == []


def test_a_pod_that_may_land_on_efa_pools_without_device_rdma_is_not_told_to_use_it():
    def edit(p):
        ami = {"type": "AL2023_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"}
        p["nodePools"] = [{"name": n, "instanceTypes": [t], "capacityType": "on-demand", "minSize": 0, "maxSize": 1,
                           "ami": ami, "efa": True} for n, t in (("a100", "p4d.24xlarge"), ("l40s", "g6e.48xlarge"))]
        without_services(p)  # its service's pool is gone

    container = main_container(gpu_pod_spec(spec_of("dev", edit), "research", IMAGE, gpus=8))  # lands on either
    assert container["resources"]["requests"][names.EFA_RESOURCE] == "4"
    assert [e for e in container["env"] if e["name"].startswith("FI_")] == FABRIC_ENV[:2]


def test_dev_shm_defaults_to_half_the_pods_memory(training):
    pod_spec = gpu_pod_spec(training, "research", IMAGE, gpus=8, pool="h100-train")
    assert main_container(pod_spec)["resources"]["limits"]["memory"] == "1841Gi"
    assert volume(pod_spec, "dshm")["emptyDir"] == {"medium": "Memory", "sizeLimit": "920Gi"}
    small = gpu_pod_spec(training, "research", IMAGE, pool="h100-train", memory="1Gi")
    assert volume(small, "dshm")["emptyDir"]["sizeLimit"] == "512Mi"  # never as large as the memory limit


def test_efa_pods_and_jobs_match_the_kubernetes_schema(training):
    version = training.cluster.kubernetes_version
    kubernetes_validate.validate(gpu_pod(training, "research", "train", IMAGE, gpus=8, pool="h100-train"), version,
                                 strict=True)
    kubernetes_validate.validate(gpu_job(training, "research", "train", IMAGE, gpus=8, pool="a100-train"), version,
                                 strict=True)


def _limit_ranger(limit_range: dict, pod_spec: dict) -> dict:
    """Kubernetes' LimitRanger admission on a pod spec, written for this test alone: a container's unset
    limits and requests take the defaults, then every Container and Pod maximum must hold (a resource
    with a maximum needs a limit)."""
    pod = copy.deepcopy(pod_spec)
    for item in limit_range["spec"]["limits"]:
        for container in pod["containers"] if item["type"] == "Container" else ():
            limits = container.setdefault("resources", {}).setdefault("limits", {})
            requests = container["resources"].setdefault("requests", {})
            for key, value in item.get("default", {}).items():
                limits.setdefault(key, value)
            for key, value in item.get("defaultRequest", {}).items():
                requests.setdefault(key, value)
            for key, most in item.get("max", {}).items():
                assert quantity_value(limits[key]) <= quantity_value(most), f"container {key} above {most}"
        for key, most in item.get("max", {}).items() if item["type"] == "Pod" else ():
            used = sum(quantity_value(c["resources"]["limits"].get(key, "0")) for c in pod["containers"])
            assert used <= quantity_value(most), f"pod {key} above {most}"
    return pod


def test_the_teams_limit_range_no_longer_decides_a_gpu_pods_cpu_and_memory(training):
    """The namespace defaults (250m, 512Mi) only fill what a container leaves unset; the helper's pods set
    their per-GPU share, pass the GPU maxima, and fit the team's quota."""
    from gpu_platform.render.team_objects import TeamContext, limit_range, quota_hard

    team = next(t for t in training.teams if t.name == "research")
    ctx = TeamContext.of(training, team)
    admitted = _limit_ranger(limit_range(ctx, team), gpu_pod_spec(training, "research", IMAGE, gpus=8,
                                                                       pool="h100-train"))
    requests = main_container(admitted)["resources"]["requests"]
    assert (requests["cpu"], requests["memory"], requests[names.GPU_RESOURCE]) == ("168", "1841Gi", "8")
    hard = quota_hard(ctx, team)
    assert quantity_value(hard["requests.cpu"]) >= quantity_value(requests["cpu"])
    assert quantity_value(hard["requests.memory"]) >= quantity_value(requests["memory"])
    gpus = {names.GPU_RESOURCE: "8"}
    bare = {"containers": [{"name": "main", "image": IMAGE, "resources": {"limits": dict(gpus), "requests": dict(gpus)}}]}
    assert main_container(_limit_ranger(limit_range(ctx, team), bare))["resources"]["requests"] == {
        **gpus, "cpu": "250m", "memory": "512Mi"}  # what a hand-written pod without CPU and memory requests gets
