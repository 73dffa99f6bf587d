"""The plan's `health` section: node repair per pool, who reports GPU faults, and where alerts go."""
from __future__ import annotations

from gpu_platform.decisions.node_repair import repair_config
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog
from gpu_platform.planner import health_section
from gpu_platform.planner.plan import schema_problems
from gpu_platform.spec.pool_context import PoolContext
from tests.support.stacks import cached_plan, stack_platform


def health(platform: dict) -> dict:
    return cached_plan(platform)["health"]


def pools(platform: dict) -> dict[str, dict]:
    return {p["name"]: p for p in health(platform)["pools"]}


def test_every_gpu_pool_is_listed_with_the_repair_config_eks_gets():
    for stack in ("dev", "prod"):
        spec = parse_platform(stack_platform(stack))
        found = pools(stack_platform(stack))
        assert set(found) == {p.name for p in spec.node_pools}  # the system node group is not a GPU pool
        for pool in spec.node_pools:
            assert found[pool.name]["repair"] == repair_config(PoolContext.of(spec, pool), pool)


def test_the_shipped_stacks_repair_gpu_faults_reported_by_the_agent_and_validate():
    for stack in ("dev", "prod"):
        plan = cached_plan(stack_platform(stack))
        assert schema_problems(plan) == []
        assert plan["health"]["nodeMonitoringAgent"] == {
            "addonVersion": stack_platform(stack)["cluster"]["create"]["addons"][catalog.NODE_MONITORING_AGENT_ADDON]}
        for pool in plan["health"]["pools"]:
            assert pool["repairOnGpuFaults"] is True
            agent, plugin = pool["gpuFaultReporters"]
            assert (agent["agent"], agent["feedsRepair"]) == (catalog.NODE_MONITORING_AGENT_ADDON, True)
            assert "DCGM" in agent["scope"]
            assert (plugin["agent"], plugin["feedsRepair"]) == ("GPU Operator device plugin", False)


def test_a_pool_with_repair_off_says_so():
    p = stack_platform("prod")
    p["nodePools"][0]["repair"] = {"enabled": False}
    found = pools(p)[p["nodePools"][0]["name"]]
    assert found["repair"] == {"enabled": False} and found["repairOnGpuFaults"] is False
    assert found["gpuFaultReporters"][0]["feedsRepair"] is False
    assert health_section.repair_text(found["repair"]) == "off"


def test_without_the_agent_repair_never_sees_a_gpu_fault():
    p = stack_platform("dev")
    del p["cluster"]["create"]["addons"][catalog.NODE_MONITORING_AGENT_ADDON]
    section = health(p)
    assert section["nodeMonitoringAgent"] is None
    [pool] = section["pools"]
    assert pool["repairOnGpuFaults"] is False and [r["agent"] for r in pool["gpuFaultReporters"]] == [
        "GPU Operator device plugin"]
    assert "not installed by this stack" in health_section.text(section)


def test_bottlerocket_pools_report_through_their_own_device_plugin():
    p = stack_platform("dev")
    p["nodePools"][0].update(ami={"type": "BOTTLEROCKET_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"},
                             sharing={"mode": "none"}, maxSize=12)
    [pool] = health(p)["pools"]
    assert pool["gpuFaultReporters"][-1]["agent"] == "Bottlerocket device plugin"


def test_a_dra_pool_has_no_device_plugin_taking_failed_gpus_out():
    from tests.support.dra import DRA_POOL, prod_with_dra

    found = pools(prod_with_dra())
    assert [r["agent"] for r in found[DRA_POOL]["gpuFaultReporters"]] == [catalog.NODE_MONITORING_AGENT_ADDON]
    others = [p for name, p in found.items() if name != DRA_POOL]
    assert others and all(p["gpuFaultReporters"][-1]["agent"] == "GPU Operator device plugin" for p in others)


def test_a_dcgm_engine_that_cannot_land_on_the_pool_limits_the_agent_to_xids():
    inputs = {"labels": {"gpu-platform.io/pool": "x"}, "nodeGroupName": "c-x", "nodeRepairConfig": {"enabled": True},
              "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NO_SCHEDULE"}]}
    config = {"nodeAgent": {"tolerations": [{"operator": "Exists"}]}, "dcgmAgent": {"tolerations": []}}
    pool = health_section._pool(inputs, True, config)
    assert pool["repairOnGpuFaults"] is True and pool["gpuFaultReporters"][0]["scope"].startswith("XID errors only")
    untolerated = health_section._pool(inputs, True, {"nodeAgent": {"tolerations": []}})
    assert untolerated["repairOnGpuFaults"] is False


def test_prod_routes_are_listed_first_match_first_ending_with_the_default():
    alerting = health(stack_platform("prod"))["alerting"]
    assert [(r["receiver"], r["continue"]) for r in alerting["routes"]] == [
        ("null", False), ("null", False), ("platform-pager", True), ("research-chat", False),
        ("platform-pager", True), ("platform-chat", True), ("inference-oncall", False), ("inference-oncall", False),
        ("platform-pager", False), ("gpu-cost-feed", False), ("platform-chat", False)]
    assert alerting["routes"][-1]["matchers"] == []
    assert {r["name"]: r["kind"] for r in alerting["receivers"]} == {
        "null": "none", "platform-pager": "pagerduty", "platform-chat": "slack", "gpu-cost-feed": "webhook",
        "research-chat": "slack", "inference-oncall": "sns"}


def test_a_stack_without_alerting_shows_none():
    p = stack_platform("dev")
    del p["monitoring"]["alerting"]
    del p["teams"][0]["alerting"]
    section = health(p)
    assert section["alerting"] is None
    assert "not configured by this stack" in health_section.markdown(section)


def test_text_and_markdown_name_each_pool_its_repair_and_the_routes():
    section = health(stack_platform("prod"))
    for rendered in (health_section.text(section), health_section.markdown(section)):
        assert "on (1 at a time, stops above 2 unhealthy)" in rendered
        assert "XID13 NoAction, XID31 NoAction, XID64 Replace (after 10m)" in rendered
        assert "inference-oncall (sns)" in rendered and 'namespace="research", severity="critical"' in rendered
        assert "platform-pager (pagerduty), and on to the next match" in rendered


def test_repair_and_override_texts():
    assert health_section.repair_text({"enabled": True}) == "on (EKS defaults)"
    assert health_section.repair_text({"enabled": True, "maxParallelNodesRepairedPercentage": 50,
                                       "maxUnhealthyNodeThresholdPercentage": 30}) == \
        "on (50% at a time, stops above 30% unhealthy)"
    mixed = {"nodeRepairConfigOverrides": [
        {"nodeUnhealthyReason": "NvidiaXID79Error", "repairAction": "Replace", "minRepairWaitTimeMins": 1},
        {"nodeUnhealthyReason": "DCGMHealthCode3", "repairAction": "Reboot", "minRepairWaitTimeMins": 60}]}
    assert health_section.overrides_text(mixed) == "XID79 Replace after 1m, DCGMHealthCode3 Reboot after 60m"
    assert health_section.overrides_text({}) == "-"


# --- Karpenter pools ---

def test_the_karpenter_example_s_pools_show_karpenter_s_node_repair():
    plan = cached_plan(stack_platform("karpenter"), stack="karpenter")
    assert schema_problems(plan) == []
    found = {p["name"]: p for p in plan["health"]["pools"]}
    assert set(found) == {"l4-inference", "h100-mig", "a100-train"}  # NodePools as well as the node group
    for name in ("l4-inference", "h100-mig"):
        pool = found[name]
        assert (pool["provisioner"], pool["nodeGroup"], pool["repairOnGpuFaults"]) == ("karpenter", None, True)
        assert pool["repair"]["enabled"] is True and pool["repair"]["maxUnhealthyPercent"] == 20
        assert {"condition": "AcceleratedHardwareReady", "status": "False", "tolerationMinutes": 10} in pool["repair"]["policies"]
        agent = pool["gpuFaultReporters"][0]
        assert (agent["agent"], agent["feedsRepair"]) == (catalog.NODE_MONITORING_AGENT_ADDON, True)
    assert found["a100-train"]["provisioner"] == "managed-node-group"
    text = health_section.text(plan["health"])
    assert "on (Karpenter NodeRepair: replaces after Ready 30m, AcceleratedHardwareReady 10m; stops above 20% unhealthy)" in text


def test_karpenter_pools_without_repair_show_the_gate_off():
    platform = stack_platform("karpenter")
    for p in platform["nodePools"]:
        p["repair"] = {"enabled": False}
    found = pools(platform)
    assert found["l4-inference"]["repair"] == {"enabled": False, "by": "karpenter"}
    assert found["l4-inference"]["repairOnGpuFaults"] is False
    assert "off (Karpenter's NodeRepair feature gate is off)" in health_section.text(health(platform))
