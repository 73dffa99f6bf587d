"""GPU node health: each pool's node repair settings (spec, defaults, EKS API and SDK shape) and the node
monitoring agent add-on (pinned, configured against its own schema, on every GPU pool)."""
import inspect
import json

import jsonschema
import pytest
import yaml

from gpu_platform.decisions import node_repair
from gpu_platform.decisions.node_repair import agent_configuration, repair_config
from gpu_platform.decisions.tolerations import tolerates
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render.operator_values import OperatorSettings
from gpu_platform.resources import node_pool
from gpu_platform.spec.errors import SpecError
from gpu_platform.spec.pool_context import PoolContext
from tests.support.aws_api import service_model
from tests.support.plans import node_groups, stack_plan
from tests.support.stacks import resource, stack_platform

UPSTREAM = catalog.UPSTREAM
SCHEMA = json.loads((UPSTREAM / "eks-node-monitoring-agent-configuration-schema.json").read_text())
AGENT_VALUES = yaml.safe_load((UPSTREAM / "eks-node-monitoring-agent-values.yaml").read_text())
NODE_REPAIR_SHAPE = service_model("eks").shape_for("NodeRepairConfig")
ADDON = "aws:eks/addon:Addon"


def platform(stack="dev", **repair):
    p = stack_platform(stack)
    if repair:
        p["nodePools"][0]["repair"] = repair
    return p


def problems(p) -> list[str]:
    with pytest.raises(SpecError) as err:
        parse_platform(p)
    return err.value.problems


# --- defaults per environment ---

def test_dev_pools_repair_with_the_eks_defaults():
    spec = parse_platform(platform("dev"))
    assert [repair_config(PoolContext.of(spec, p), p) for p in spec.node_pools] == [{"enabled": True}]


def test_prod_pools_repair_one_node_at_a_time_and_stop_when_more_than_two_are_unhealthy():
    spec = parse_platform(platform("prod"))
    for pool in spec.node_pools:
        config = repair_config(PoolContext.of(spec, pool), pool)
        assert config["enabled"] is True
        assert config["maxParallelNodesRepairedCount"] == 1 and config["maxUnhealthyNodeThresholdCount"] == 2


def test_prod_overrides_leave_application_xids_alone_and_replace_on_remapping_failure():
    spec = parse_platform(platform("prod"))
    actions = {o["nodeUnhealthyReason"]: o["repairAction"]
               for o in repair_config(PoolContext.of(spec, spec.node_pools[0]), spec.node_pools[0])["nodeRepairConfigOverrides"]}
    assert actions == {"NvidiaXID13Error": "NoAction", "NvidiaXID31Error": "NoAction", "NvidiaXID64Error": "Replace"}


def test_a_percentage_replaces_the_prod_default_count_of_its_pair_only():
    spec = parse_platform(platform("prod", maxUnhealthyPercent=30))
    config = repair_config(PoolContext.of(spec, spec.node_pools[0]), spec.node_pools[0])
    assert config["maxUnhealthyNodeThresholdPercentage"] == 30 and "maxUnhealthyNodeThresholdCount" not in config
    assert config["maxParallelNodesRepairedCount"] == 1


def test_explicit_overrides_replace_the_defaults_and_empty_means_none():
    override = {"condition": "AcceleratedHardwareReady", "reason": "NvidiaXID79Error", "waitMinutes": 5,
                "action": "Replace"}
    spec = parse_platform(platform("prod", overrides=[override]))
    assert repair_config(PoolContext.of(spec, spec.node_pools[0]), spec.node_pools[0])["nodeRepairConfigOverrides"] == [
        {"nodeMonitoringCondition": "AcceleratedHardwareReady", "nodeUnhealthyReason": "NvidiaXID79Error",
         "minRepairWaitTimeMins": 5, "repairAction": "Replace"}]
    spec = parse_platform(platform("prod", overrides=[]))
    assert "nodeRepairConfigOverrides" not in repair_config(PoolContext.of(spec, spec.node_pools[0]), spec.node_pools[0])


def test_a_pool_can_turn_repair_off():
    spec = parse_platform(platform("prod", enabled=False))
    assert repair_config(PoolContext.of(spec, spec.node_pools[0]), spec.node_pools[0]) == {"enabled": False}
    assert node_groups(stack_plan("prod"))  # the shipped stack keeps repair on (other tests)


# --- validation: every problem names the field ---

@pytest.mark.parametrize("repair, path, words", [
    ({"maxUnhealthyNodes": 2, "maxUnhealthyPercent": 20}, "nodePools[0].repair.maxUnhealthyPercent", "not both"),
    ({"maxParallelRepairs": 1, "maxParallelPercent": 50}, "nodePools[0].repair.maxParallelPercent", "not both"),
    ({"enabled": False, "maxParallelRepairs": 1}, "nodePools[0].repair.maxParallelRepairs", "enabled: true"),
    ({"maxUnhealthyPercent": 0}, "nodePools[0].repair.maxUnhealthyPercent", "greater than or equal to 1"),
    ({"maxParallelPercent": 101}, "nodePools[0].repair.maxParallelPercent", "less than or equal to 100"),
    ({"maxParallelRepairs": 0}, "nodePools[0].repair.maxParallelRepairs", "greater than or equal to 1"),
    ({"overrides": [{"condition": "GpuReady", "reason": "X", "waitMinutes": 5, "action": "Replace"}]},
     "nodePools[0].repair.overrides[0].condition", "AcceleratedHardwareReady"),
    ({"overrides": [{"condition": "AcceleratedHardwareReady", "reason": "NvidiaXID43Error", "waitMinutes": 5,
                     "action": "Replace"}]}, "nodePools[0].repair.overrides[0].reason", "never"),
    ({"overrides": [{"condition": "AcceleratedHardwareReady", "reason": "NvidiaPowerError", "waitMinutes": 5,
                     "action": "Replace"}]}, "nodePools[0].repair.overrides[0].reason", "NvidiaXID79Error"),
    ({"overrides": [{"condition": "AcceleratedHardwareReady", "reason": "NvidiaXID79Error", "waitMinutes": 0,
                     "action": "Replace"}]}, "nodePools[0].repair.overrides[0].waitMinutes", "greater than"),
    ({"overrides": [{"condition": "AcceleratedHardwareReady", "reason": "NvidiaXID79Error", "waitMinutes": 5,
                     "action": "Terminate"}]}, "nodePools[0].repair.overrides[0].action", "Replace"),
    ({"overrides": [{"condition": "KernelReady", "reason": "ForkFailedOutOfPIDs", "waitMinutes": 5, "action": "Reboot"},
                    {"condition": "KernelReady", "reason": "ForkFailedOutOfPIDs", "waitMinutes": 9, "action": "Replace"}]},
     "nodePools[0].repair.overrides[1]", "repeats"),
])
def test_invalid_repair_settings_are_refused_with_their_field(repair, path, words):
    found = [p for p in problems(platform("dev", **repair)) if p.startswith(path + ":")]
    assert found and words in found[0], problems(platform("dev", **repair))


def test_dcgm_health_codes_and_every_well_known_xid_are_accepted_reasons():
    overrides = [{"condition": "AcceleratedHardwareReady", "reason": reason, "waitMinutes": 15, "action": "Reboot"}
                 for reason in ("DCGMHealthCode12", *(f"NvidiaXID{x}Error" for x in catalog.NVIDIA_REPAIR_XIDS))]
    spec = parse_platform(platform("dev", overrides=overrides))
    assert len(repair_config(PoolContext.of(spec, spec.node_pools[0]), spec.node_pools[0])["nodeRepairConfigOverrides"]) == len(overrides)


def test_prod_refuses_gpu_repair_without_the_node_monitoring_agent():
    p = stack_platform("prod")
    del p["cluster"]["create"]["addons"][catalog.NODE_MONITORING_AGENT_ADDON]
    [found] = [x for x in problems(p) if x.startswith("cluster.create.addons:")]
    assert catalog.NODE_MONITORING_AGENT_ADDON in found and "repair.enabled: false" in found
    for pool in p["nodePools"]:
        pool["repair"] = {"enabled": False}
    parse_platform(p)


def test_dev_may_run_without_the_agent():
    p = stack_platform("dev")
    del p["cluster"]["create"]["addons"][catalog.NODE_MONITORING_AGENT_ADDON]
    spec = parse_platform(p)
    assert not node_repair.agent_installed(spec)


def test_an_unknown_addon_is_refused_naming_the_allowed_ones():
    p = stack_platform("dev")
    p["cluster"]["create"]["addons"]["aws-guardduty-agent"] = "v1.15.0-eksbuild.2"
    [found] = [x for x in problems(p) if x.startswith("cluster.create.addons.aws-guardduty-agent:")]
    assert catalog.NODE_MONITORING_AGENT_ADDON in found


# --- the EKS API and the provider SDK ---

def test_every_eks_repair_field_is_mapped_to_the_sdk_argument_of_the_same_meaning():
    api = set(NODE_REPAIR_SHAPE.members) - {"nodeRepairConfigOverrides"}
    assert set(node_pool.ARG_NAMES) == api
    override_api = set(NODE_REPAIR_SHAPE.members["nodeRepairConfigOverrides"].member.members)
    assert set(node_pool.OVERRIDE_ARG_NAMES) == override_api
    from pulumi_aws import eks

    params = set(inspect.signature(eks.NodeGroupNodeRepairConfigArgs.__init__).parameters) - {"__self__"}
    assert set(node_pool.ARG_NAMES.values()) | {"node_repair_config_overrides"} == params
    override_params = set(inspect.signature(
        eks.NodeGroupNodeRepairConfigNodeRepairConfigOverrideArgs.__init__).parameters) - {"__self__"}
    assert set(node_pool.OVERRIDE_ARG_NAMES.values()) == override_params


def test_the_repair_actions_are_the_eks_enum():
    enum = NODE_REPAIR_SHAPE.members["nodeRepairConfigOverrides"].member.members["repairAction"].enum
    assert tuple(enum) == catalog.NODE_REPAIR_ACTIONS


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_plan_sends_each_pools_repair_config(stack):
    spec = parse_platform(stack_platform(stack))
    planned = node_groups(stack_plan(stack))
    for pool in spec.node_pools:
        assert planned[pool.name]["inputs"]["nodeRepairConfig"] == repair_config(PoolContext.of(spec, pool), pool)


# --- the node monitoring agent add-on ---

@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_agent_addon_is_pinned_and_its_configuration_meets_the_addon_schema(stack):
    spec = parse_platform(stack_platform(stack))
    addon = resource(stack_plan(stack), ADDON, f"cluster-{catalog.NODE_MONITORING_AGENT_ADDON}")["inputs"]
    assert addon["addonVersion"] == spec.cluster.create.addons[catalog.NODE_MONITORING_AGENT_ADDON]
    config = json.loads(addon["configurationValues"])
    assert config == agent_configuration(node_repair.gpu_taints(spec))
    jsonschema.validate(config, SCHEMA)


def test_the_schema_check_catches_a_misspelt_key():
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"monitoringAgent": {"tolerations": []}}, SCHEMA)


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_agent_and_its_dcgm_engine_tolerate_every_gpu_pool_taint(stack):
    spec = parse_platform(stack_platform(stack))
    config = agent_configuration(node_repair.gpu_taints(spec))
    for pool in spec.node_pools:
        for key, value, effect in [(names.GPU_TAINT_KEY, names.GPU_TAINT_VALUE, "NoSchedule"),
                                   *((t.key, t.value, t.effect) for t in pool.taints)]:
            assert tolerates(config["nodeAgent"]["tolerations"], key, value, effect)
            assert tolerates(config["dcgmAgent"]["tolerations"], key, value, effect), (pool.name, key)


def test_the_charts_own_dcgm_tolerations_would_miss_the_gpu_taint():
    """Why the platform sets them: the agent's chart leaves dcgm-server without tolerations."""
    assert not tolerates(AGENT_VALUES["dcgmAgent"]["tolerations"], names.GPU_TAINT_KEY, names.GPU_TAINT_VALUE,
                         "NoSchedule")


def test_the_agents_dcgm_engine_is_scheduled_on_every_catalog_gpu_instance_type():
    terms = AGENT_VALUES["dcgmAgent"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    [types] = [e["values"] for t in terms["nodeSelectorTerms"] for e in t["matchExpressions"]
               if e["key"] == "node.kubernetes.io/instance-type"]
    assert set(catalog.INSTANCE_TYPES) <= set(types)


def test_an_adopted_cluster_installs_no_agent():
    from tests.support.plans import existing_cluster_platform, plan

    assert not [r for r in plan(existing_cluster_platform())["resources"]
                if r["type"] == ADDON and r["inputs"]["addonName"] == catalog.NODE_MONITORING_AGENT_ADDON]


# --- the GPU Operator's side: unhealthy GPUs leave the allocatable count; one DCGM host port ---

@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_device_plugins_health_checks_stay_on(stack):
    """The plugin marks a GPU with a critical XID unhealthy, and the kubelet stops offering it
    (GpuDevicesUnhealthy alerts); DP_DISABLE_HEALTHCHECKS=all would turn that off."""
    from gpu_platform.render.operator_values import operator_values

    values = operator_values(OperatorSettings.of(parse_platform(stack_platform(stack))))
    env = {e["name"]: e.get("value") for e in values["devicePlugin"].get("env", [])}
    assert "DP_DISABLE_HEALTHCHECKS" not in env


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_operators_standalone_dcgm_stays_off_beside_the_agents_host_engine(stack):
    """The agent's dcgm-server takes host port 5555, which the operator's standalone DCGM would also bind."""
    from gpu_platform.render.operator_values import chart_defaults, operator_values

    spec = parse_platform(stack_platform(stack))
    values = operator_values(OperatorSettings.of(spec))
    assert (values.get("dcgm") or chart_defaults(spec.gpu_operator.chart_version)["dcgm"])["enabled"] is False


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_the_agent_addon_meets_the_eks_create_addon_model(stack):
    from botocore.validate import ParamValidator

    inputs = resource(stack_plan(stack), ADDON, f"cluster-{catalog.NODE_MONITORING_AGENT_ADDON}")["inputs"]
    params = {k: v for k, v in inputs.items() if not k.startswith("resolveConflicts")}
    params["resolveConflicts"] = inputs["resolveConflictsOnCreate"]
    shape = service_model("eks").operation_model("CreateAddon").input_shape
    assert set(params) <= set(shape.members)
    report = ParamValidator().validate(params, shape)
    assert not report.has_errors(), report.generate_report()
    assert params["resolveConflicts"] in shape.members["resolveConflicts"].enum
