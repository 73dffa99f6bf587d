"""NUMA alignment per pool: the kubelet's CPU and topology managers, from the stack file to each node format
(AL2023's NodeConfig, Ubuntu's kubelet flags, Bottlerocket's settings, Karpenter's node classes), checked
against each format's documented fields; the pods the helper makes on such pools; and the disruption gate."""
from __future__ import annotations

import base64
import copy
import shutil
import subprocess
import tomllib

import pytest
import yaml

from gpu_platform.decisions import disruption, karpenter_disruption, node_boot, numa
from gpu_platform.decisions.disruption_model import Effect
from gpu_platform.decisions.launch_template import read_user_data
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog
from gpu_platform.facts import kubelet as facts
from gpu_platform.planner.capacity_section import from_spec as capacity
from gpu_platform.render.karpenter import node_class_object
from gpu_platform.render.workloads import gpu_pod_spec
from gpu_platform.spec.pool_context import PoolContext
from tests.support.crd_schemas import cel_problems, schema_problems
from tests.support.plans import plan
from tests.support.stacks import only_spec_problem, spec_of, stack_platform
from tests.support.training import AL2023, al2023_training, boot_script, launch_template, ubuntu_training, user_data_parts

BOTTLEROCKET = {"type": "BOTTLEROCKET_x86_64_NVIDIA", "releaseVersion": "1.50.0-4a1c53b7"}
KARPENTER_AL2023 = {"type": "AL2023_x86_64_NVIDIA", "alias": "al2023@v20260911"}
DEFAULT = {"cpuManagerPolicy": "static", "topologyManagerPolicy": "restricted", "topologyManagerScope": "pod",
           "reservedSystemCPUs": "0-3"}
IMAGE = "registry.example.com/trainer:1"


def _pool(name: str, types: list[str], ami: dict, **extra) -> dict:
    return {"name": name, "instanceTypes": types, "capacityType": "on-demand", "minSize": 0, "maxSize": 2,
            "ami": dict(ami), **extra}


def _dev_with(*pools: dict) -> dict:
    platform = stack_platform("dev")
    platform["nodePools"] += list(pools)
    return platform


def _spec_pool(platform: dict, name: str):
    spec = parse_platform(platform)
    return spec, next(p for p in spec.node_pools if p.name == name)


def kubelet_config_problems(config: dict) -> list[str]:
    """What a KubeletConfiguration fragment gets wrong: unknown field names (k8s.io/kubelet config/v1beta1
    types.go), or a manager policy or scope the kubelet does not take."""
    problems = [f"{k}: not a KubeletConfiguration field" for k in config if k not in facts.KUBELET_CONFIGURATION_FIELDS]
    allowed = {"cpuManagerPolicy": facts.CPU_MANAGER_POLICIES, "topologyManagerPolicy": facts.TOPOLOGY_MANAGER_POLICIES,
               "topologyManagerScope": facts.TOPOLOGY_MANAGER_SCOPES}
    problems += [f"{k}: {v!r} not one of {allowed[k]}" for k, v in config.items() if k in allowed and v not in allowed[k]]
    return problems


def node_config_problems(doc: dict) -> list[str]:
    """A nodeadm NodeConfig against its API (awslabs/amazon-eks-ami nodeadm api reference, node.eks.aws/v1alpha1)."""
    problems = [] if (doc.get("apiVersion"), doc.get("kind")) == (catalog.NODEADM_API_VERSION, "NodeConfig") else ["head"]
    spec = doc.get("spec", {})
    problems += [f"spec.{k}: unknown" for k in spec if k not in facts.NODEADM_SPEC_FIELDS]
    kubelet = spec.get("kubelet", {})
    problems += [f"spec.kubelet.{k}: unknown" for k in kubelet if k not in facts.NODEADM_KUBELET_FIELDS]
    return problems + kubelet_config_problems(kubelet.get("config", {}))


# --- which pools are aligned ---

@pytest.mark.parametrize("types, aligned", [
    (["p4d.24xlarge"], True), (["p5.48xlarge"], True), (["p5en.48xlarge"], True), (["p6-b200.48xlarge"], True),
    (["g6.2xlarge", "g6.4xlarge"], False), (["g5.48xlarge"], False), (["g7e.48xlarge"], False),
])
def test_8_gpu_training_instance_pools_are_aligned_by_default_and_others_not(types, aligned):
    _, pool = _spec_pool(_dev_with(_pool("x", types, AL2023)), "x")
    assert numa.pool_kubelet(pool).aligned is aligned
    assert numa.pool_kubelet(pool).config() == (DEFAULT if aligned else {})


def test_a_pool_asks_for_its_own_settings_or_turns_them_off():
    own = {"topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "container", "reservedSystemCpus": "0,1,96,97"}
    _, pool = _spec_pool(_dev_with(_pool("x", ["p5.48xlarge"], AL2023, kubelet=own)), "x")
    assert numa.pool_kubelet(pool).config() == {"cpuManagerPolicy": "static", "topologyManagerPolicy": "single-numa-node",
                                                "topologyManagerScope": "container", "reservedSystemCPUs": "0,1,96,97"}
    assert numa.pool_kubelet(pool).reserved_cpus == 4
    off = {"cpuManagerPolicy": "none", "topologyManagerPolicy": "none"}
    _, pool = _spec_pool(_dev_with(_pool("x", ["p5.48xlarge"], AL2023, kubelet=off)), "x")
    assert not numa.pool_kubelet(pool).aligned and numa.pool_kubelet(pool).config() == {}
    _, pool = _spec_pool(_dev_with(_pool("x", ["g6.2xlarge"], AL2023, kubelet={})), "x")  # asked: on anywhere
    assert numa.pool_kubelet(pool).config() == DEFAULT


# --- refusals, naming the field ---

@pytest.mark.parametrize("cpus, message", [
    ("0-8", "CPU 8 does not exist on a 8-vCPU node (CPUs 0-7)"),
    ("0-7", "keeps all 8 vCPUs from pods; reserve fewer"),
    ("3-0", "a range runs from the lower CPU to the higher, e.g. 0-3"),
])
def test_reserved_cpus_must_exist_and_leave_some(cpus, message):
    pool = _pool("x", ["g6.2xlarge", "g6.4xlarge"], AL2023, kubelet={"reservedSystemCpus": cpus})
    assert only_spec_problem(_dev_with(pool), "nodePools[1].kubelet.reservedSystemCpus").endswith(message)


def test_the_default_cpu_list_must_leave_a_small_node_some_cpus():
    pool = _pool("x", ["g6.xlarge"], AL2023, kubelet={})  # 4 vCPUs
    assert only_spec_problem(_dev_with(pool), "nodePools[1].kubelet.reservedSystemCpus").endswith(
        "the default 0-3 keeps all 4 vCPUs from pods; reserve fewer")
    pool["kubelet"] = {"reservedSystemCpus": "0"}
    assert numa.pool_kubelet(_spec_pool(_dev_with(pool), "x")[1]).reserved_cpus == 1


@pytest.mark.parametrize("field, value", [("reservedSystemCpus", "0-3,"), ("topologyManagerPolicy", "strict"),
                                          ("topologyManagerScope", "node"), ("cpuManagerPolicy", "dynamic")])
def test_settings_the_kubelet_does_not_take_are_refused(field, value):
    pool = _pool("x", ["p5.48xlarge"], AL2023, kubelet={field: value})
    only_spec_problem(_dev_with(pool), f"nodePools[1].kubelet.{field}")


# --- AL2023: nodeadm's NodeConfig ---

def test_the_al2023_node_config_is_nodeadms_api_with_kubelet_configuration_fields():
    parts = user_data_parts(launch_template(plan(al2023_training()), "h100-efa"))
    (doc,) = [yaml.safe_load(body) for kind, body in parts if kind == catalog.NODEADM_CONTENT_TYPE]
    assert doc["spec"]["kubelet"] == {"config": DEFAULT}
    assert node_config_problems(doc) == []


def test_the_field_checks_can_fail():
    assert kubelet_config_problems({"reservedSystemCpus": "0-3", "topologyManagerPolicy": "strict"}) == [
        "reservedSystemCpus: not a KubeletConfiguration field", "topologyManagerPolicy: 'strict' not one of "
        "('none', 'best-effort', 'restricted', 'single-numa-node')"]
    assert node_config_problems({"apiVersion": catalog.NODEADM_API_VERSION, "kind": "NodeConfig",
                                 "spec": {"kubelet": {"configs": {}}}}) == ["spec.kubelet.configs: unknown"]


def test_every_setting_written_is_a_kubelet_configuration_field():
    assert set(facts.KUBELET_FLAGS) <= facts.KUBELET_CONFIGURATION_FIELDS
    assert set(facts.BOTTLEROCKET_SETTINGS) <= facts.KUBELET_CONFIGURATION_FIELDS


# --- Ubuntu: kubelet flags through Canonical's bootstrap ---

def test_ubuntu_pools_pass_the_managers_as_kubelet_flags():
    script = boot_script(ubuntu_training(), "a100-train")
    extra = next(line for line in script.splitlines() if "--kubelet-extra-args" in line)
    for flag in ("--cpu-manager-policy=static", "--topology-manager-policy=restricted", "--topology-manager-scope=pod",
                 "--reserved-cpus=0-3"):
        assert flag in extra
    assert "--cpu-manager-policy" not in boot_script(ubuntu_training(), "l4-inference")


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not installed")
def test_the_ubuntu_script_with_flags_is_valid_bash():
    result = subprocess.run(["bash", "-n"], input=boot_script(ubuntu_training(), "h100-train"), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


# --- Bottlerocket: settings.kubernetes ---

def test_bottlerocket_pools_set_the_managers_in_their_settings():
    spec, pool = _spec_pool(_dev_with(_pool("x", ["p5.48xlarge"], BOTTLEROCKET)), "x")
    settings = tomllib.loads(node_boot.bottlerocket_settings(pool) or "")
    # bottlerocket-settings-sdk settings-extensions/kubernetes: cpu_manager_policy, topology_manager_policy,
    # topology_manager_scope, reserved_cpus, kebab-case in the settings TOML
    assert settings == {"settings": {"kubernetes": {"cpu-manager-policy": "static", "topology-manager-policy": "restricted",
                                                    "topology-manager-scope": "pod", "reserved-cpus": "0-3"}}}
    user_data = base64.b64decode(node_boot.eks_image_user_data(PoolContext.of(spec, pool), pool) or "")
    assert tomllib.loads(user_data.decode()) == settings


def test_bottlerocket_dra_pools_keep_their_device_plugin_off_beside_the_managers():
    pool_dict = _pool("x", ["p5.48xlarge"], {**BOTTLEROCKET, "releaseVersion": "1.63.0-4a1c53b7"}, gpuAllocation="dra",
                      minSize=2)
    _, pool = _spec_pool(_dev_with(pool_dict), "x")
    settings = tomllib.loads(node_boot.bottlerocket_settings(pool) or "")
    assert settings["settings"]["kubelet-device-plugins"]["nvidia"]["enabled"] is False
    assert settings["settings"]["kubernetes"]["cpu-manager-policy"] == "static"


# --- Karpenter: the EC2NodeClass's user data (its kubelet block has no manager fields) ---

def test_karpenter_s_kubelet_block_has_no_manager_fields():
    from tests.support.crd_schemas import served_schemas

    schema = served_schemas("karpenter-v1.14.1")[("karpenter.k8s.aws/v1", "EC2NodeClass")]
    kubelet = schema["properties"]["spec"]["properties"]["kubelet"]["properties"]
    assert not {"cpuManagerPolicy", "topologyManagerPolicy", "reservedSystemCPUs"} & set(kubelet)


@pytest.mark.parametrize("ami", [KARPENTER_AL2023, {"type": "BOTTLEROCKET_x86_64_NVIDIA", "alias": "bottlerocket@v1.50.0"}])
def test_karpenter_node_classes_carry_the_managers_in_user_data_and_match_the_crd(ami):
    platform = _dev_with(_pool("k", ["p5.48xlarge"], ami, provisioner="karpenter"))
    spec, pool = _spec_pool(platform, "k")
    obj = node_class_object(PoolContext.of(spec, pool), pool)
    assert schema_problems("karpenter-v1.14.1", obj) == [] and cel_problems(obj) == []
    assert "kubelet" not in obj["spec"]
    assert read_user_data(obj["spec"]["userData"]).kubelet == DEFAULT
    if ami is KARPENTER_AL2023:
        (part,) = [p for p in obj["spec"]["userData"].split("--") if catalog.NODEADM_CONTENT_TYPE in p]
        assert node_config_problems(yaml.safe_load(part.split("\n\n", 1)[1])) == []


# --- the helper's pods ---

def _resources(spec, **kwargs) -> dict:
    return gpu_pod_spec(spec, "research", IMAGE, **kwargs)["containers"][0]["resources"]


@pytest.mark.parametrize("pool, gpus", [("a100-train", 8), ("a100-train", 1), ("h100-train", 3)])
def test_pods_on_aligned_pools_are_guaranteed_with_whole_cpus(pool, gpus):
    res = _resources(parse_platform(ubuntu_training()), pool=pool, gpus=gpus)
    assert res["requests"]["cpu"] == res["limits"]["cpu"] and res["requests"]["cpu"].isdigit()
    assert res["requests"]["memory"] == res["limits"]["memory"]


def test_pods_on_other_pools_keep_no_cpu_limit():
    res = _resources(parse_platform(ubuntu_training()), pool="l4-inference", gpus=1)
    assert "cpu" not in res["limits"] and res["requests"]["cpu"] == "6"


def test_reserved_cpus_leave_less_for_pods():
    def with_kubelet(kubelet):
        platform = ubuntu_training()
        platform["nodePools"][3]["kubelet"] = kubelet
        return _resources(parse_platform(platform), pool="h100-train", gpus=8)["requests"]["cpu"]

    # (192 - kept) x 0.9 - 1, whole CPUs
    assert [with_kubelet({"reservedSystemCpus": cpus}) for cpus in ("0-3", "0-15")] == ["168", "157"]


# --- the disruption gate ---

@pytest.mark.parametrize("reader", ["nodeconfig", "flags", "toml"])
def test_user_data_is_read_for_the_managers_whatever_the_format(reader):
    text = {"nodeconfig": "spec:\n  kubelet:\n    config:\n      cpuManagerPolicy: static\n      reservedSystemCPUs: 0-3\n",
            "flags": "--kubelet-extra-args '--node-labels=a=b --cpu-manager-policy=static --reserved-cpus=0-3'",
            "toml": '[settings.kubernetes]\ncpu-manager-policy = "static"\nreserved-cpus = "0-3"\n'}[reader]
    assert read_user_data(text).kubelet == {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0-3"}


def test_a_change_of_the_managers_is_a_locked_node_roll_the_gate_names():
    for rule in (disruption.rule_for("launchTemplate.userData.kubelet"), karpenter_disruption.rule_for("nodeClass.userData.kubelet")):
        assert rule.effect == Effect.NODE_ROLL and rule.locked and "CPU and topology managers" in rule.what


def test_changing_the_topology_policy_rolls_the_pool_and_names_the_setting():
    before = plan(ubuntu_training())
    platform = ubuntu_training()
    platform["nodePools"][1]["kubelet"] = {"topologyManagerPolicy": "single-numa-node"}
    after = plan(platform)

    def kubelet_of(p):
        (pool,) = [v for k, v in disruption.pools_of(_resources_of(p)).items() if k == "a100-train"]
        return pool.values["launchTemplate.userData.kubelet"]

    assert kubelet_of(before)["topologyManagerPolicy"] == "restricted"
    assert kubelet_of(after)["topologyManagerPolicy"] == "single-numa-node"


def _resources_of(plan_: dict) -> list:
    return [(r["type"], r["name"], copy.deepcopy(r["inputs"])) for r in plan_["resources"]]


# --- the plan ---

def test_the_capacity_section_says_which_pools_are_aligned():
    pools = {p["name"]: p["numa"] for p in capacity(spec_of("prod"))["pools"]}
    assert pools["a100-train"] == {"aligned": True, "cpuManagerPolicy": "static", "topologyManagerPolicy": "restricted",
                                   "topologyManagerScope": "pod", "reservedSystemCpus": "0-3"}
    assert pools["l4-inference"]["aligned"] is False and pools["l4-inference"]["reservedSystemCpus"] is None
