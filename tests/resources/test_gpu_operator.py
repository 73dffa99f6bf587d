"""The GPU Operator component through the real program: the Helm release, its namespace and its wiring."""
import json

import pytest
import yaml

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render.operator_values import OperatorSettings, operator_values, unknown_value_keys
from gpu_platform.render.sharing import check_device_plugin_config, check_mig_parted_config
from gpu_platform.resources.gpu_operator import POD_SECURITY_LEVEL
from tests.support.stacks import cached_plan, resource, resources, stack_platform

RELEASE, NAMESPACE, NODE_GROUP = "kubernetes:helm.sh/v3:Release", "kubernetes:core/v1:Namespace", "aws:eks/nodeGroup:NodeGroup"
COMPONENT = "gpu-platform:index:GpuOperator"
AL2023 = {"type": "AL2023_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"}
BOTTLEROCKET = {"type": "BOTTLEROCKET_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"}


def pool(name, instance, ami=AL2023, **extra):
    return {"name": name, "instanceTypes": [instance], "capacityType": "on-demand", "minSize": 0, "maxSize": 2,
            "ami": dict(ami), **extra}


def dev_with(*pools):
    """The dev stack with these pools, no teams and no budget (big pools would trip the budget policy)."""
    p = stack_platform("dev")
    p["nodePools"] = list(pools)
    p["teams"] = []
    p.pop("budget", None)
    return p


PLATFORMS = {
    "dev": lambda: stack_platform("dev"),
    "prod": lambda: stack_platform("prod"),
    "mig-single": lambda: dev_with(
        pool("h100", "p5.48xlarge", sharing={"mode": "mig", "strategy": "single", "layout": {"1g.10gb": 7}}),
        pool("a100", "p4de.24xlarge", sharing={"mode": "mig", "strategy": "single", "layout": {"3g.40gb": 2}})),
    "tainted": lambda: dev_with(
        pool("train", "g5.12xlarge", taints=[{"key": "workload", "value": "training", "effect": "NoSchedule"}]),
        pool("batch", "g6.xlarge", taints=[{"key": "dedicated", "effect": "NoExecute"}],
             sharing={"mode": "time-slicing", "replicas": 2})),
    "bottlerocket": lambda: dev_with(pool("br", "g5.xlarge", ami=BOTTLEROCKET), pool("al", "g6.xlarge")),
}


@pytest.fixture(scope="module")
def planned():
    """The plan of each platform variant (cached across the session)."""
    return lambda key: cached_plan(PLATFORMS[key]())


def release(plan):
    return resource(plan, RELEASE, names.GPU_OPERATOR_RELEASE)


def values(plan):
    return release(plan)["inputs"]["values"]


def spec(key):
    return parse_platform(PLATFORMS[key]())


# --- the release ---

@pytest.mark.parametrize("key", ["dev", "prod"])
def test_release_installs_the_pinned_chart_from_nvidia(planned, key):
    inputs = release(planned(key))["inputs"]
    wanted = spec(key).gpu_operator
    assert (inputs["chart"], inputs["version"], inputs["repositoryOpts"]["repo"]) == (
        catalog.GPU_OPERATOR_CHART, wanted.chart_version, catalog.GPU_OPERATOR_REPO)


@pytest.mark.parametrize("key", ["dev", "prod"])
def test_release_has_a_stable_name_in_its_own_namespace(planned, key):
    inputs = release(planned(key))["inputs"]
    assert (inputs["name"], inputs["namespace"], inputs["createNamespace"]) == (
        names.GPU_OPERATOR_RELEASE, spec(key).gpu_operator.namespace, False)


def test_release_waits_for_its_workloads_with_a_long_timeout(planned):
    inputs = release(planned("dev"))["inputs"]
    assert inputs["skipAwait"] is False and inputs["timeout"] >= 600


@pytest.mark.parametrize("key", sorted(PLATFORMS))
def test_release_values_are_exactly_the_decided_values(planned, key):
    assert values(planned(key)) == json.loads(json.dumps(operator_values(OperatorSettings.of(spec(key)))))


@pytest.mark.parametrize("key", sorted(PLATFORMS))
def test_release_values_only_use_keys_of_the_pinned_chart(planned, key):
    assert unknown_value_keys(values(planned(key)), spec(key).gpu_operator.chart_version) == []


def test_release_uses_the_cluster_kubernetes_provider(planned):
    plan = planned("dev")
    assert release(plan)["provider"].split("::")[-2] == "cluster-k8s"
    assert resource(plan, NAMESPACE, names.GPU_OPERATOR_RELEASE)["provider"] == release(plan)["provider"]


def test_release_and_namespace_belong_to_the_component(planned):
    plan = planned("dev")
    (component,) = resources(plan, COMPONENT)
    assert release(plan)["parent"] == component["urn"]
    assert resource(plan, NAMESPACE, names.GPU_OPERATOR_RELEASE)["parent"] == component["urn"]


@pytest.mark.parametrize("key", ["dev", "prod"])
def test_gpu_node_groups_wait_for_the_release(planned, key):
    """The release carries the sharing configs nodes select by label: on an update they change first."""
    plan = planned(key)
    gpu_groups = [r for r in resources(plan, NODE_GROUP) if names.POOL_LABEL in (r["inputs"].get("labels") or {})]
    assert len(gpu_groups) == len(spec(key).node_pools)
    assert all(release(plan)["urn"] in g["options"]["dependsOn"] for g in gpu_groups)
    system = next(r for r in resources(plan, NODE_GROUP) if r not in gpu_groups)
    assert system["urn"] in release(plan)["options"]["dependsOn"]  # the operator runs on system nodes


def test_release_waits_for_its_namespace(planned):
    plan = planned("dev")
    assert resource(plan, NAMESPACE, names.GPU_OPERATOR_RELEASE)["urn"] in release(plan)["options"]["dependsOn"]


def test_namespace_allows_privileged_operands(planned):
    ns = resource(planned("dev"), NAMESPACE, names.GPU_OPERATOR_RELEASE)["inputs"]["metadata"]
    assert ns["name"] == spec("dev").gpu_operator.namespace
    assert {k: v for k, v in ns["labels"].items() if k.startswith(names.POD_SECURITY_LABEL_PREFIX)} == \
        names.pod_security_labels(POD_SECURITY_LEVEL)


# --- driver modes as planned ---

def test_dev_plans_an_ami_owned_driver(planned):
    got = values(planned("dev"))
    assert got["driver"] == {"enabled": False} and got["toolkit"]["enabled"] is False


def test_prod_plans_the_pinned_operator_driver(planned):
    got = values(planned("prod"))["driver"]
    assert (got["enabled"], got["version"]) == (True, spec("prod").gpu_operator.driver.version)


@pytest.mark.parametrize("key, source", [("dev", "ami"), ("prod", "operator")])
def test_stack_outputs_say_who_owns_the_driver(planned, key, source):
    assert planned(key)["outputs"]["gpuOperator"]["driver"]["source"] == source


# --- sharing as planned ---

@pytest.mark.parametrize("key", sorted(PLATFORMS))
def test_planned_sharing_files_pass_their_upstream_rules(planned, key):
    got = values(planned(key))
    for text in got["devicePlugin"]["config"]["data"].values():
        assert check_device_plugin_config(text) == []
    assert check_mig_parted_config(got["migManager"]["config"]["data"][names.MIG_PARTED_CONFIG_KEY]) == []


@pytest.mark.parametrize("key", sorted(PLATFORMS))
def test_node_group_labels_select_entries_that_exist(planned, key):
    plan = planned(key)
    got = values(plan)
    device_configs = got["devicePlugin"]["config"]["data"]
    mig_configs = yaml.safe_load(got["migManager"]["config"]["data"][names.MIG_PARTED_CONFIG_KEY])["mig-configs"]
    for group in resources(plan, NODE_GROUP):
        labels = group["inputs"].get("labels") or {}
        if names.DEVICE_PLUGIN_CONFIG_LABEL in labels:
            assert labels[names.DEVICE_PLUGIN_CONFIG_LABEL] in device_configs
        if names.MIG_CONFIG_LABEL in labels:
            assert labels[names.MIG_CONFIG_LABEL] in mig_configs


def test_prod_plans_mixed_mig_with_the_h100_layout(planned):
    got = values(planned("prod"))
    h100 = next(p for p in spec("prod").node_pools if p.sharing.mode == "mig")
    configs = yaml.safe_load(got["migManager"]["config"]["data"][names.MIG_PARTED_CONFIG_KEY])["mig-configs"]
    assert got["mig"]["strategy"] == "mixed"
    assert configs[names.mig_config_name(h100.name)][0]["mig-devices"] == h100.sharing.layout


def test_dev_plans_time_slicing(planned):
    got = values(planned("dev"))["devicePlugin"]["config"]
    replicas = spec("dev").node_pools[0].sharing.replicas
    doc = yaml.safe_load(got["data"][names.device_plugin_config_key(replicas)])
    assert doc["sharing"]["timeSlicing"]["resources"] == [{"name": names.GPU_RESOURCE, "replicas": replicas}]


def test_single_strategy_reaches_the_operator_and_every_device_plugin_entry(planned):
    got = values(planned("mig-single"))
    assert got["mig"]["strategy"] == "single"
    assert {yaml.safe_load(t)["flags"]["migStrategy"] for t in got["devicePlugin"]["config"]["data"].values()} == {"single"}


def test_extra_taints_reach_operand_and_nfd_tolerations(planned):
    got = values(planned("tainted"))
    wanted = [{"key": "workload", "operator": "Equal", "value": "training", "effect": "NoSchedule"},
              {"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}]
    for tolerations in (got["daemonsets"]["tolerations"], got["node-feature-discovery"]["worker"]["tolerations"]):
        assert all(t in tolerations for t in wanted)


def test_bottlerocket_nodes_turn_off_the_operators_own_operands(planned):
    plan = planned("bottlerocket")
    br = resource(plan, NODE_GROUP, "br")["inputs"]["labels"]
    al = resource(plan, NODE_GROUP, "al")["inputs"]["labels"]
    for operand in ("driver", "container-toolkit", "device-plugin", "mig-manager"):
        assert br[names.gpu_deploy_label(operand)] == "false"
        assert names.gpu_deploy_label(operand) not in al


def test_release_waits_for_the_prometheus_crds(planned):
    # Started before the ServiceMonitor CRD exists, the operator never creates dcgm-exporter's monitor.
    plan = planned("dev")
    stack = [r for r in resources(plan, RELEASE) if r["inputs"].get("name") == names.KUBE_PROMETHEUS_STACK_RELEASE]
    assert len(stack) == 1
    assert stack[0]["urn"] in release(plan)["options"]["dependsOn"]
