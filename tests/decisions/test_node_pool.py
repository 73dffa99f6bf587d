"""GPU node pools: the decided node-group inputs, the plan's node groups and launch templates, their
options, the AWS API rules they must meet (botocore's EKS model), and the stability of every input that
would make EKS replace a node group."""
import base64
import email
import re

import pytest
from botocore.validate import ParamValidator
from hypothesis import given
from hypothesis import strategies as st

from gpu_platform.decisions.node_pool import node_group_inputs, node_labels, node_taints
from gpu_platform.decisions.node_repair import repair_config
from gpu_platform.decisions.sharing import operand_labels, sharing_labels
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.spec.pool_context import PoolContext
from tests.support.aws_api import model_problems as _model_problems
from tests.support.aws_api import service_model
from tests.support.plans import children, component, node_groups, plan, replace_forcing, stack_plan
from tests.support.stacks import resources, stack_platform

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
POOL = "gpu-platform:index:GpuNodePool"


def _spec(stack):
    return parse_platform(stack_platform(stack))


def _pool(spec, name):
    return next(p for p in spec.node_pools if p.name == name)


# --- pure decisions ---

def test_every_agreed_label_is_on_the_pool():
    spec = _spec("prod")
    pool = _pool(spec, "a100-train")
    labels = node_labels(pool)
    assert labels[names.POOL_LABEL] == "a100-train"
    assert labels[names.GPU_PRODUCT_LABEL] == pool.gpu.product_label
    assert labels[names.ACCELERATOR_LABEL] == names.accelerator_value(pool.gpu.key)
    assert sharing_labels(pool).items() <= labels.items()
    assert operand_labels(pool).items() <= labels.items()
    assert pool.labels.items() <= labels.items()


def test_gpu_taint_comes_first_then_the_pools_own():
    pool = _pool(_spec("prod"), "a100-train")
    assert node_taints(pool) == [(names.GPU_TAINT_KEY, names.GPU_TAINT_VALUE, "NoSchedule"),
                                 *((t.key, t.value, t.effect) for t in pool.taints)]


def test_ami_owned_driver_pool_pins_the_nvidia_ami_release():
    spec = _spec("dev")
    inputs = node_group_inputs(PoolContext.of(spec, spec.node_pools[0]), spec.node_pools[0])
    assert (inputs.ami_type, inputs.release_version) == ("AL2023_x86_64_NVIDIA", spec.node_pools[0].ami.release_version)
    assert inputs.version == spec.cluster.kubernetes_version


def test_operator_owned_driver_pool_leaves_ami_fields_to_the_launch_template():
    spec = _spec("prod")
    inputs = node_group_inputs(PoolContext.of(spec, _pool(spec, "h100-mig")), _pool(spec, "h100-mig"))
    assert (inputs.ami_type, inputs.release_version, inputs.version) == (None, None, None)


def test_desired_size_starts_at_min_size():
    spec = _spec("prod")
    pool = _pool(spec, "l4-inference")
    assert node_group_inputs(PoolContext.of(spec, pool), pool).desired_size == pool.min_size == 1


@pytest.mark.parametrize("stack, protected", [("prod", True), ("dev", False)])
def test_protection_defaults_to_the_environment(stack, protected):
    spec = _spec(stack)
    assert {node_group_inputs(PoolContext.of(spec, p), p).protect for p in spec.node_pools} == {protected}


def test_a_pool_can_opt_out_of_protection_explicitly():
    platform = stack_platform("prod")
    platform["nodePools"][0]["protect"] = False
    spec = parse_platform(platform)
    assert node_group_inputs(PoolContext.of(spec, spec.node_pools[0]), spec.node_pools[0]).protect is False


# --- the plan: node groups ---

def test_spot_pool_is_spot_and_diversified_over_its_instance_types():
    spec = _spec("dev")
    ng = node_groups(stack_plan("dev"))["a10g-spot"]["inputs"]
    assert ng["capacityType"] == "SPOT"
    assert ng["instanceTypes"] == spec.node_pools[0].instance_types and len(ng["instanceTypes"]) > 1
    shapes = {(catalog.INSTANCE_TYPES[t].gpu, catalog.INSTANCE_TYPES[t].gpu_count) for t in ng["instanceTypes"]}
    assert len(shapes) == 1


def test_on_demand_mig_pool_is_on_demand_with_its_mig_layout_label():
    spec = _spec("prod")
    ng = node_groups(stack_plan("prod"))["h100-mig"]["inputs"]
    pool = _pool(spec, "h100-mig")
    assert ng["capacityType"] == "ON_DEMAND"
    assert ng["labels"][names.MIG_CONFIG_LABEL] == names.mig_config_name(pool.name)


def test_mig_capable_pools_record_their_layout_in_the_launch_template():
    """A new layout is a new template version: EKS rolls the pool instead of every node repartitioning."""
    templates = {t["name"]: t["inputs"] for t in resources(stack_plan("prod"), LAUNCH_TEMPLATE)}
    instance_tags = {name: next(s["tags"] for s in t["tagSpecifications"] if s["resourceType"] == "instance")
                     for name, t in templates.items()}
    assert instance_tags["h100-mig"][names.MIG_LAYOUT_TAG] == "h100-80gb-hbm3-2x1g.10gb-1x2g.20gb-1x3g.40gb"
    assert instance_tags["a100-train"][names.MIG_LAYOUT_TAG] == names.MIG_ALL_DISABLED  # MIG-capable, unused
    assert names.MIG_LAYOUT_TAG not in instance_tags["l4-inference"]


def test_a_pool_can_roll_with_a_percentage_and_the_minimal_strategy():
    p = stack_platform("prod")
    p["nodePools"][0].update(maxUnavailable="50%", updateStrategy="minimal")
    spec = parse_platform(p)
    assert node_group_inputs(PoolContext.of(spec, spec.node_pools[0]), spec.node_pools[0]).update_config == {
        "maxUnavailablePercentage": 50, "updateStrategy": "MINIMAL"}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_gpu_node_group_carries_the_gpu_taint(stack):
    for ng in node_groups(stack_plan(stack)).values():
        assert {"key": names.GPU_TAINT_KEY, "value": names.GPU_TAINT_VALUE, "effect": "NO_SCHEDULE"} in ng["inputs"]["taints"]


def test_extra_taints_and_labels_of_the_spec_reach_the_node_group():
    ng = node_groups(stack_plan("prod"))["a100-train"]["inputs"]
    assert {"key": "workload", "value": "training", "effect": "NO_SCHEDULE"} in ng["taints"]
    assert ng["labels"]["workload"] == "training"


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_node_group_options_let_the_autoscaler_own_desired_size_and_never_delete_first(stack):
    for ng in node_groups(stack_plan(stack)).values():
        assert ng["options"]["ignoreChanges"] == ["scalingConfig.desiredSize"]
        assert ng["options"]["deleteBeforeReplace"] in (None, False)


@pytest.mark.parametrize("stack, protected", [("prod", True), ("dev", False)])
def test_node_groups_are_protected_in_prod_only(stack, protected):
    assert {ng["options"]["protect"] for ng in node_groups(stack_plan(stack)).values()} == {protected}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_rolling_updates_and_auto_repair(stack):
    spec = _spec(stack)
    for pool in spec.node_pools:
        ng = node_groups(stack_plan(stack))[pool.name]["inputs"]
        limit = {"maxUnavailable": 1} if spec.prod else {"maxUnavailablePercentage": 25}
        assert ng["updateConfig"] == {**limit, "updateStrategy": "DEFAULT"}
        assert ng["nodeRepairConfig"] == repair_config(PoolContext.of(spec, pool), pool) and ng["nodeRepairConfig"]["enabled"] is True


def test_physical_names_derive_from_the_spec():
    spec = _spec("prod")
    for pool in spec.node_pools:
        ng = node_groups(stack_plan("prod"))[pool.name]["inputs"]
        assert ng["nodeGroupName"] == names.node_group_name(spec.cluster.name, pool.name)
        assert ng["launchTemplate"]["name"] == names.launch_template_name(spec.cluster.name, pool.name)
        assert ng["clusterName"] == spec.cluster.name


def test_all_pools_share_one_node_role():
    plan_ = stack_plan("prod")
    role_arns = {ng["inputs"]["nodeRoleArn"] for ng in resources(plan_, NODE_GROUP)}
    assert len(role_arns) == 1


def test_efa_pool_stays_in_one_subnet_and_others_span_all():
    groups = node_groups(stack_plan("prod"))
    assert len(groups["a100-train"]["inputs"]["subnetIds"]) == 1
    assert len(groups["h100-mig"]["inputs"]["subnetIds"]) == 3


# --- the plan: launch templates ---

def _template(plan_, pool_name):
    parent = component(plan_, POOL, pool_name)
    (template,) = children(plan_, parent, LAUNCH_TEMPLATE)
    return template["inputs"]


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_templates_require_imdsv2_and_encrypted_gp3_of_the_pool_size(stack):
    spec = _spec(stack)
    for pool in spec.node_pools:
        t = _template(stack_plan(stack), pool.name)
        assert t["metadataOptions"]["httpTokens"] == "required"
        (volume,) = t["blockDeviceMappings"]
        assert volume["deviceName"] == catalog.IMAGE_VOLUME_DEVICE[pool.ami.image.os]
        assert volume["ebs"] == {"volumeSize": pool.disk_size_gib, "volumeType": "gp3", "encrypted": "true",
                                 "deleteOnTermination": "true"}


def test_default_image_volume_is_large_enough_for_gpu_images():
    assert _template(stack_plan("dev"), "a10g-spot")["blockDeviceMappings"][0]["ebs"]["volumeSize"] >= 200


def test_ami_owned_driver_pool_template_has_no_image_and_only_parts_eks_merges():
    """No bootstrap of our own on an EKS-optimized AMI: EKS adds its NodeConfig to these parts."""
    t = _template(stack_plan("dev"), "a10g-spot")
    message = email.message_from_string(base64.b64decode(t["userData"]).decode())
    assert "imageId" not in t and message.is_multipart()
    assert [p.get_content_type() for p in message.get_payload()] == [catalog.NODEADM_CONTENT_TYPE]


def test_pool_without_local_storage_or_datasets_has_no_user_data_on_al2023():
    platform = stack_platform("dev")
    platform["nodePools"][0]["localStorage"] = "none"
    assert "userData" not in _template(plan(platform), "a10g-spot")


def test_operator_owned_driver_pool_template_pins_the_ubuntu_image_with_bootstrap():
    spec = _spec("prod")
    t = _template(stack_plan("prod"), "h100-mig")
    assert t["imageId"] == _pool(spec, "h100-mig").ami.image_id
    assert t["userData"]


def test_efa_pool_template_has_an_efa_interface_per_card_and_a_cluster_placement_group():
    plan_ = stack_plan("prod")
    t = _template(plan_, "a100-train")
    assert len(t["networkInterfaces"]) == catalog.INSTANCE_TYPES["p4d.24xlarge"].efa_interfaces
    assert {i["interfaceType"] for i in t["networkInterfaces"]} == {"efa"}
    (group,) = children(plan_, component(plan_, POOL, "a100-train"), "aws:ec2/placementGroup:PlacementGroup")
    assert group["inputs"]["strategy"] == "cluster"
    assert t["placement"]["groupName"] == group["inputs"]["name"]


def test_efa_interfaces_keep_the_cluster_security_group_beside_the_efa_one():
    """Naming any group in a template stops EKS adding the cluster one, so the template names it."""
    from gpu_platform.planner.mocks import digest

    cluster = resources(stack_plan("prod"), "aws:eks/cluster:Cluster")[0]
    cluster_sg = f"sg-{digest(cluster['type'], cluster['name'], 'cluster-sg')}"  # what the mock cluster returns
    plan_ = stack_plan("prod")
    (efa_sg,) = children(plan_, component(plan_, POOL, "a100-train"), "aws:ec2/securityGroup:SecurityGroup")
    t = _template(plan_, "a100-train")
    efa_sg_id = f"sg-{digest(efa_sg['type'], efa_sg['name'], '')}"
    assert {tuple(i["securityGroups"]) for i in t["networkInterfaces"]} == {(cluster_sg, efa_sg_id)}
    assert "vpcSecurityGroupIds" not in t  # not both: EC2 rejects instance and interface groups together


def test_node_group_never_sets_disk_size_next_to_a_launch_template():
    for stack in ("dev", "prod"):
        for ng in resources(stack_plan(stack), NODE_GROUP):
            assert "launchTemplate" in ng["inputs"] and "diskSize" not in ng["inputs"]


# --- AWS API rules: botocore's EKS model for CreateNodegroup ---

EKS = service_model("eks")
CREATE_NODEGROUP = EKS.operation_model("CreateNodegroup").input_shape
# Plan (Pulumi) input names -> CreateNodegroup member names, where they differ.
API_NAMES = {"nodeGroupName": "nodegroupName", "subnetIds": "subnets", "nodeRoleArn": "nodeRole"}
# The rule EKS states in its docs (not in the model): <= 63 characters, starts with a letter or digit.
NODE_GROUP_NAME = re.compile(r"^[0-9A-Za-z][A-Za-z0-9_-]{0,62}$")


def _api_params(inputs: dict) -> dict:
    params = {API_NAMES.get(k, k): v for k, v in inputs.items()}
    unknown = set(params) - set(CREATE_NODEGROUP.members)
    assert not unknown, f"plan inputs with no CreateNodegroup member: {unknown}"
    return params


def _variants():
    spot_mig = stack_platform("dev")
    spot_mig["nodePools"].append({
        "name": "a100-mig-spot", "instanceTypes": ["p4de.24xlarge"], "capacityType": "spot", "minSize": 0,
        "maxSize": 1, "ami": {"type": "AL2023_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"},
        "sharing": {"mode": "mig", "strategy": "single", "layout": {"1g.10gb": 7}}, "maxUnavailable": 100,
        "taints": [{"key": "dedicated", "value": "ml", "effect": "NoExecute"},
                   {"key": "preemptible", "effect": "PreferNoSchedule"}]})
    bottlerocket = stack_platform("dev")
    bottlerocket["nodePools"][0].update(ami={"type": "BOTTLEROCKET_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"},
                                        sharing={"mode": "none"}, maxSize=12)
    repair = stack_platform("prod")
    repair["nodePools"][0]["repair"] = {"maxUnhealthyPercent": 40, "maxParallelPercent": 50, "overrides": [
        {"condition": "AcceleratedHardwareReady", "reason": "NvidiaXID79Error", "waitMinutes": 1, "action": "Replace"},
        {"condition": "AcceleratedHardwareReady", "reason": "DCGMHealthCode3", "waitMinutes": 60, "action": "Reboot"}]}
    repair["nodePools"][1]["repair"] = {"enabled": False}
    return {"dev": stack_platform("dev"), "prod": stack_platform("prod"), "spot-mig": spot_mig,
            "bottlerocket": bottlerocket, "repair": repair}


@pytest.mark.parametrize("variant", list(_variants()))
def test_every_node_group_input_meets_the_eks_api_model(variant):
    for ng in resources(plan(_variants()[variant]), NODE_GROUP):
        params = _api_params(ng["inputs"])
        report = ParamValidator().validate(params, CREATE_NODEGROUP)
        assert not report.has_errors(), report.generate_report()
        assert _model_problems(params, CREATE_NODEGROUP) == []
        assert NODE_GROUP_NAME.match(params["nodegroupName"])
        update = params["updateConfig"]
        assert len({"maxUnavailable", "maxUnavailablePercentage"} & set(update)) == 1  # EKS takes one of them
        assert 1 <= update.get("maxUnavailable", update.get("maxUnavailablePercentage")) <= 100


@given(cluster=st.from_regex(r"[a-z][a-z0-9-]{0,31}", fullmatch=True),
       pool=st.from_regex(r"[a-z0-9]([-a-z0-9]{0,38}[a-z0-9])?", fullmatch=True))
def test_node_group_names_always_meet_the_eks_rule(cluster, pool):
    assert NODE_GROUP_NAME.match(names.node_group_name(cluster, pool))


@pytest.mark.parametrize("variant", list(_variants()))
def test_custom_image_node_groups_omit_what_eks_refuses_with_an_image_id(variant):
    plan_ = plan(_variants()[variant])
    images = {t["inputs"]["name"]: "imageId" in t["inputs"] for t in resources(plan_, LAUNCH_TEMPLATE)}
    for ng in resources(plan_, NODE_GROUP):
        if images[ng["inputs"]["launchTemplate"]["name"]]:
            assert not {"amiType", "releaseVersion", "version"} & set(ng["inputs"])
        else:
            assert ng["inputs"]["amiType"] in CREATE_NODEGROUP.members["amiType"].enum


def test_model_check_catches_a_bad_input():
    """The checker itself: an unknown enum value and an oversized label are reported."""
    bad = {"capacityType": "CHEAP", "labels": {"k": "v" * 64},
           "nodeRepairConfig": {"maxParallelNodesRepairedPercentage": 101, "nodeRepairConfigOverrides": [
               {"repairAction": "Terminate", "minRepairWaitTimeMins": 0}]}}
    assert len(_model_problems(bad, CREATE_NODEGROUP)) == 5


# --- replace-forcing inputs depend on the pool's own spec only ---

def _change_team(p):
    p["teams"][0]["quota"]["cpu"] = "512"


def _change_thresholds(p):
    p["monitoring"]["alerts"]["temperatureCelsius"] = 78
    p["monitoring"]["alerts"]["idleMinutes"] = 45


def _change_max_size(p):
    for pool in p["nodePools"]:
        pool["maxSize"] += 1


def _change_labels(p):
    for pool in p["nodePools"]:
        pool.setdefault("labels", {})["cost-center"] = "ml-42"


def _add_pool(p):
    p["nodePools"].append({"name": "l40s-batch", "instanceTypes": ["g6e.xlarge"], "capacityType": "on-demand",
                           "minSize": 0, "maxSize": 2, "ami": dict(p["nodePools"][0]["ami"])})


def _change_another_pool(p):
    p["nodePools"][-1]["instanceTypes"] = [p["nodePools"][-1]["instanceTypes"][0]]
    p["nodePools"][-1]["diskSizeGiB"] = 300


UNRELATED = [_change_team, _change_thresholds, _change_max_size, _change_labels, _add_pool]


@pytest.mark.parametrize("stack", ["dev", "prod"])
@pytest.mark.parametrize("change", UNRELATED, ids=lambda f: f.__name__)
def test_unrelated_change_leaves_replace_forcing_inputs_identical(stack, change):
    before = {n: replace_forcing(ng) for n, ng in node_groups(stack_plan(stack)).items()}
    platform = stack_platform(stack)
    change(platform)
    after = {n: replace_forcing(ng) for n, ng in node_groups(plan(platform)).items() if n in before}
    assert after == before


def test_changing_one_pool_leaves_the_other_pools_untouched():
    before = node_groups(stack_plan("prod"))
    platform = stack_platform("prod")
    _change_another_pool(platform)
    after = node_groups(plan(platform))
    changed = platform["nodePools"][-1]["name"]
    assert replace_forcing(after[changed]) != replace_forcing(before[changed])  # the check can see a change
    for name in set(before) - {changed}:
        assert after[name]["inputs"] == before[name]["inputs"]


@pytest.mark.parametrize("change", [_change_team, _change_thresholds, _change_max_size], ids=lambda f: f.__name__)
def test_unrelated_change_leaves_launch_templates_identical(change):
    """A new template version would roll every node of the pool: only the pool's own settings may."""
    before = {r["name"]: r["inputs"] for r in resources(stack_plan("prod"), LAUNCH_TEMPLATE)}
    platform = stack_platform("prod")
    change(platform)
    assert {r["name"]: r["inputs"] for r in resources(plan(platform), LAUNCH_TEMPLATE)} == before
