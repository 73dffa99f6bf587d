"""EFA end to end: interfaces per network card (the catalog against AWS's figures, the launch templates of
p4d and p5 pools on both images), the self-referencing security group and the placement group (provider
SDK arguments and botocore's EC2 model), the device plugin's chart values (against the chart's
values.yaml), the Ubuntu boot check (run with stubbed devices) and the EFA devices pods ask for."""
from __future__ import annotations

import base64
import inspect
import re
import shutil

import kubernetes_validate
import pytest
import yaml
from botocore.validate import ParamValidator

from gpu_platform.decisions import efa
from gpu_platform.decisions.capacity import node_resources
from gpu_platform.decisions.launch_template import efa_interface_count
from gpu_platform.decisions.node_pool import node_labels
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.facts.catalog import UPSTREAM
from gpu_platform.render import efa as efa_chart
from tests.support.aws_api import service_model
from tests.support.plans import children, component, node_groups, plan
from tests.support.stacks import resources, spec_with_pools, stack_platform
from tests.support.training import (
    AL2023, POOL, TRAINING_TAINT, al2023_training, boot_script, launch_template, run_bash, training_pool,
    ubuntu_training, user_data_parts,
)
from tests.support.ultraserver import ultraserver
from tests.support.chart_values import key_paths

EC2 = service_model("ec2")
SECURITY_GROUP = "aws:ec2/securityGroup:SecurityGroup"
INGRESS = "aws:vpc/securityGroupIngressRule:SecurityGroupIngressRule"
EGRESS = "aws:vpc/securityGroupEgressRule:SecurityGroupEgressRule"
PLACEMENT_GROUP = "aws:ec2/placementGroup:PlacementGroup"
RELEASE = "kubernetes:helm.sh/v3:Release"

# Network cards per instance type, one EFA interface each. AWS EC2 user guide, "Maximize network bandwidth
# on accelerated computing instances with EFA": P5 and P5e support up to 32 network cards (3200 Gbps);
# p4d/p4de: 4 x 100 Gbps (AWS P4 instance page); p5en.48xlarge: 16 network cards of 200 Gbps (EFAv3, 3200 Gbps),
# the count public p5en launch configurations use (network card indexes 0-15).
AWS_NETWORK_CARDS = {"p4d.24xlarge": 4, "p4de.24xlarge": 4, "p5.48xlarge": 32, "p5e.48xlarge": 32,
                     "p5en.48xlarge": 16}
# EC2 API reference, LaunchTemplateInstanceNetworkInterfaceSpecificationRequest.InterfaceType.
INTERFACE_TYPES = {"interface", "efa", "efa-only"}
# EC2 API reference, CreateSecurityGroup and IpRange/UserIdGroupPair descriptions: up to 255 characters of these.
EC2_DESCRIPTION = re.compile(r"^[a-zA-Z0-9. _\-:/()#,@\[\]+=&;{}!$*]{0,255}$")
USER_DATA_LIMIT = 16 * 1024  # EC2: user data is limited to 16 KB in raw form, before base64 encoding

STACKS = {"al2023": al2023_training, "ubuntu": ubuntu_training}
P4D_AND_P5 = [("al2023", "a100-efa", "p4d.24xlarge"), ("al2023", "h100-efa", "p5.48xlarge"),
              ("ubuntu", "a100-train", "p4d.24xlarge"), ("ubuntu", "h100-train", "p5.48xlarge")]


def _spec(stack: str):
    return parse_platform(STACKS[stack]())


def _pool(spec, name):
    return next(p for p in spec.node_pools if p.name == name)


# --- interfaces per network card ---

@pytest.mark.parametrize("instance_type, cards", sorted(AWS_NETWORK_CARDS.items()))
def test_catalog_interfaces_are_the_instance_types_network_cards(instance_type, cards):
    assert catalog.INSTANCE_TYPES[instance_type].efa_interfaces == cards


@pytest.mark.parametrize("stack, pool, instance_type", P4D_AND_P5)
def test_p4d_and_p5_templates_have_an_efa_interface_on_every_network_card(stack, pool, instance_type):
    template = launch_template(plan(STACKS[stack]()), pool)
    cards = AWS_NETWORK_CARDS[instance_type]
    layout = [(i["networkCardIndex"], i["deviceIndex"], i["interfaceType"]) for i in template["networkInterfaces"]]
    # The primary on card 0 device 0; one per further card at device index 1 (AWS, "EFA configuration for P5").
    assert layout == [(0, 0, "efa")] + [(card, 1, "efa") for card in range(1, cards)]
    assert {i["deleteOnTermination"] for i in template["networkInterfaces"]} == {"true"}


def test_a_pool_of_several_types_asks_the_interfaces_every_type_has():
    """p5e (32 cards) beside p5en (16): a launch template asking 32 would fail on every p5en launch."""
    spec = spec_with_pools(training_pool("h200", ["p5e.48xlarge", "p5en.48xlarge"], AL2023))
    assert efa_interface_count(spec.node_pools[0]) == 16


def test_pools_without_efa_get_no_interfaces_security_group_or_placement_group():
    plan_ = plan(ubuntu_training())
    assert "networkInterfaces" not in launch_template(plan_, "h100-mig")
    pool = component(plan_, POOL, "h100-mig")
    assert [children(plan_, pool, t) for t in (SECURITY_GROUP, PLACEMENT_GROUP, INGRESS, EGRESS)] == [[]] * 4


def _mock_id(prefix: str, resource: dict) -> str:
    """The id the offline engine gives a resource (planner.mocks)."""
    from gpu_platform.planner.mocks import digest

    return f"{prefix}-{digest(resource['type'], resource['name'], '')}"


def test_an_efa_pool_listing_one_zone_launches_in_that_zones_subnet_only():
    platform = ubuntu_training()
    platform["nodePools"][-1]["zones"] = ["us-east-1b"]
    plan_ = plan(platform)
    subnets = {r["name"]: _mock_id("subnet", r) for r in resources(plan_, "aws:ec2/subnet:Subnet")}
    groups = node_groups(plan_)
    assert groups["h100-train"]["inputs"]["subnetIds"] == [subnets["cluster-network-private-us-east-1b"]]
    assert groups["a100-train"]["inputs"]["subnetIds"] == [subnets["cluster-network-private-us-east-1a"]]


# --- the launch template's EFA parts against botocore's EC2 model ---

def _template_params(template: dict) -> dict:
    """CreateLaunchTemplate parameters for what EFA and the boot steps add (the provider's mapping)."""
    data = {"NetworkInterfaces": [
        {"NetworkCardIndex": i["networkCardIndex"], "DeviceIndex": i["deviceIndex"], "InterfaceType": i["interfaceType"],
         "DeleteOnTermination": i["deleteOnTermination"] == "true", "Groups": list(i["securityGroups"])}
        for i in template["networkInterfaces"]]}
    if "placement" in template:
        data["Placement"] = {"GroupName": template["placement"]["groupName"]}
    if "userData" in template:
        data["UserData"] = template["userData"]
    return {"LaunchTemplateName": template["name"], "LaunchTemplateData": data}


@pytest.mark.parametrize("stack, pool, instance_type", P4D_AND_P5)
def test_efa_launch_templates_meet_the_ec2_api_model(stack, pool, instance_type):
    template = launch_template(plan(STACKS[stack]()), pool)
    params = _template_params(template)
    report = ParamValidator().validate(params, EC2.operation_model("CreateLaunchTemplate").input_shape)
    assert not report.has_errors(), report.generate_report()
    assert {i["InterfaceType"] for i in params["LaunchTemplateData"]["NetworkInterfaces"]} <= INTERFACE_TYPES
    assert len(base64.b64decode(template["userData"], validate=True)) <= USER_DATA_LIMIT


def test_the_model_check_catches_a_bad_interface():
    params = {"LaunchTemplateName": "t", "LaunchTemplateData": {"NetworkInterfaces": [{"DeviceIndex": "0"}]}}
    report = ParamValidator().validate(params, EC2.operation_model("CreateLaunchTemplate").input_shape)
    assert report.has_errors() and "DeviceIndex" in report.generate_report()


# --- the self-referencing security group ---

def _efa_group(plan_: dict, pool: str) -> tuple[dict, dict, dict, str]:
    parent = component(plan_, POOL, pool)
    (group,) = children(plan_, parent, SECURITY_GROUP)
    (ingress,) = children(plan_, parent, INGRESS)
    (egress,) = children(plan_, parent, EGRESS)
    return group["inputs"], ingress["inputs"], egress["inputs"], _mock_id("sg", group)


@pytest.mark.parametrize("stack, pool", [("ubuntu", "a100-train"), ("ubuntu", "h100-train"), ("al2023", "h100-efa")])
def test_the_efa_group_allows_all_traffic_to_and_from_itself_only(stack, pool):
    """AWS EC2 user guide, "Prepare an EFA-enabled security group": inbound and outbound rules allowing all
    traffic from and to the group itself."""
    spec = _spec(stack)
    group, ingress, egress, group_id = _efa_group(plan(STACKS[stack]()), pool)
    assert group["name"] == names.efa_security_group_name(spec.cluster.name, pool)
    for rule in (ingress, egress):
        assert {k: v for k, v in rule.items() if k != "description"} == {
            "securityGroupId": group_id, "referencedSecurityGroupId": group_id, "ipProtocol": "-1"}


def test_the_efa_group_lives_in_the_clusters_vpc():
    plan_ = plan(ubuntu_training())
    group = _efa_group(plan_, "a100-train")[0]
    (cache,) = [r for r in resources(plan_, SECURITY_GROUP) if r["name"] == "model-cache"]
    assert group["vpcId"] == cache["inputs"]["vpcId"] and group["vpcId"].startswith("vpc-")


def _sdk_arguments(cls) -> set[str]:
    """The provider SDK's arguments of a resource class, in the plan's (camelCase) spelling."""
    params = set(inspect.signature(cls._internal_init).parameters) - {"__self__", "resource_name", "opts", "__props__"}
    return {re.sub(r"_([a-z])", lambda m: m.group(1).upper(), p) for p in params}


def test_the_efa_resources_use_only_provider_sdk_arguments():
    from pulumi_aws import ec2, vpc

    plan_ = plan(ubuntu_training())
    parent = component(plan_, POOL, "a100-train")
    for type_, cls, required in ((SECURITY_GROUP, ec2.SecurityGroup, {"vpcId", "description", "name"}),
                                 (INGRESS, vpc.SecurityGroupIngressRule, {"securityGroupId", "ipProtocol"}),
                                 (EGRESS, vpc.SecurityGroupEgressRule, {"securityGroupId", "ipProtocol"}),
                                 (PLACEMENT_GROUP, ec2.PlacementGroup, {"strategy", "name"})):
        (resource,) = children(plan_, parent, type_)
        assert required <= set(resource["inputs"]) <= _sdk_arguments(cls), type_
    # The SDK's own rule: with ipProtocol -1 (all traffic, every port) from/to ports must not be set, and
    # exactly one of cidrIpv4, cidrIpv6, prefixListId or referencedSecurityGroupId names the peer.
    for type_ in (INGRESS, EGRESS):
        (rule,) = children(plan_, parent, type_)
        assert not {"fromPort", "toPort"} & set(rule["inputs"])
        assert len({"cidrIpv4", "cidrIpv6", "prefixListId", "referencedSecurityGroupId"} & set(rule["inputs"])) == 1


def _api_calls(group: dict, ingress: dict, egress: dict) -> dict[str, dict]:
    """The EC2 calls the provider makes for these inputs."""
    calls = {"CreateSecurityGroup": {"GroupName": group["name"], "Description": group["description"],
                                     "VpcId": group["vpcId"]}}
    for operation, rule in (("AuthorizeSecurityGroupIngress", ingress), ("AuthorizeSecurityGroupEgress", egress)):
        calls[operation] = {"GroupId": rule["securityGroupId"], "IpPermissions": [{
            "IpProtocol": rule["ipProtocol"],
            "UserIdGroupPairs": [{"GroupId": rule["referencedSecurityGroupId"], "Description": rule["description"]}]}]}
    return calls


@pytest.mark.parametrize("stack, pool", [("ubuntu", "a100-train"), ("al2023", "h100-efa")])
def test_the_efa_group_and_its_rules_meet_the_ec2_api_model(stack, pool):
    group, ingress, egress, _ = _efa_group(plan(STACKS[stack]()), pool)
    for operation, params in _api_calls(group, ingress, egress).items():
        report = ParamValidator().validate(params, EC2.operation_model(operation).input_shape)
        assert not report.has_errors(), f"{operation}: {report.generate_report()}"
    for text in (group["description"], ingress["description"], egress["description"], group["name"]):
        assert EC2_DESCRIPTION.match(text), text
    assert not group["name"].startswith("sg-")  # EC2 refuses group names starting with sg-


def test_the_placement_group_is_a_cluster_group_the_ec2_model_accepts():
    plan_ = plan(ubuntu_training())
    (group,) = children(plan_, component(plan_, POOL, "h100-train"), PLACEMENT_GROUP)
    params = {"GroupName": group["inputs"]["name"], "Strategy": group["inputs"]["strategy"]}
    shape = EC2.operation_model("CreatePlacementGroup").input_shape
    assert not ParamValidator().validate(params, shape).has_errors()
    assert params["Strategy"] == "cluster" and params["Strategy"] in shape.members["Strategy"].enum
    assert launch_template(plan_, "h100-train")["placement"] == {"groupName": params["GroupName"]}


# --- the device plugin ---

def _release(plan_: dict) -> dict:
    (release,) = [r for r in resources(plan_, RELEASE) if r["name"] == "efa-device-plugin"]
    return release["inputs"]


def _chart_values(version: str) -> dict:
    return yaml.safe_load((UPSTREAM / catalog.EFA_DEVICE_PLUGIN_VALUES[version]).read_text())


def test_the_plugin_is_the_pinned_chart_installed_only_with_efa_pools():
    spec = _spec("ubuntu")
    release = _release(plan(ubuntu_training()))
    repo, chart = catalog.EFA_DEVICE_PLUGIN_CHART
    assert (release["chart"], release["version"], release["repositoryOpts"], release["namespace"]) == (
        chart, spec.efa_device_plugin.chart_version, {"repo": repo}, "kube-system")
    assert release["version"] == "v0.5.30" and release["version"] in catalog.EFA_DEVICE_PLUGIN_VALUES
    assert [r for r in resources(plan(stack_platform("dev")), RELEASE) if r["name"] == "efa-device-plugin"] == []


def test_the_plugin_values_set_only_keys_of_the_charts_values_yaml():
    release = _release(plan(ubuntu_training()))
    chart = _chart_values(release["version"])
    assert efa_chart.unknown_device_plugin_keys(release["values"], release["version"]) == []
    # the same, read straight from the chart's file: top-level keys, and the types the chart gives them
    assert set(release["values"]) <= set(chart)
    assert (type(chart["nodeSelector"]), type(chart["tolerations"])) == (dict, list)
    assert key_paths(release["values"]) - key_paths(chart) == {f"nodeSelector.{names.EFA_LABEL}"}  # data under an empty map


def test_the_key_check_catches_a_misspelt_or_unknown_key():
    assert efa_chart.unknown_device_plugin_keys({"nodeSelectors": {}, "resources": {"request": {}}}, "v0.5.30") == [
        "nodeSelectors", "resources.request"]


def _tolerates(tolerations: list[dict], taint: dict) -> bool:
    """Kubernetes' toleration matching (core/v1 Toleration), written for this test alone."""
    for t in tolerations:
        effect_ok = not t.get("effect") or t["effect"] == taint["effect"]
        if t.get("operator") == "Exists":
            if (not t.get("key") or t["key"] == taint["key"]) and effect_ok:
                return True
        elif t.get("key") == taint["key"] and t.get("value", "") == taint.get("value", "") and effect_ok:
            return True
    return False


def test_the_plugin_runs_only_on_efa_nodes_tolerating_their_taints():
    platform = ubuntu_training()
    noexec = {"key": "fabric", "value": "efa", "effect": "NoExecute"}
    platform["nodePools"][1]["taints"].append(noexec)
    inference_only = {"key": "dedicated", "value": "inference", "effect": "NoSchedule"}
    platform["nodePools"][2]["taints"] = [inference_only]
    values = _release(plan(platform))["values"]
    assert values["nodeSelector"] == {names.EFA_LABEL: "true"}
    spec = parse_platform(platform)
    for pool in spec.node_pools:
        assert (node_labels(pool).get(names.EFA_LABEL) == "true") == pool.efa, pool.name
    gpu_taint = {"key": names.GPU_TAINT_KEY, "value": names.GPU_TAINT_VALUE, "effect": "NoSchedule"}
    for taint in (gpu_taint, TRAINING_TAINT, noexec):
        assert _tolerates(values["tolerations"], taint), taint
    assert not _tolerates(values["tolerations"], inference_only)  # a pool without EFA keeps its reservation


def test_the_efa_label_reaches_the_node_groups_of_efa_pools_only():
    groups = node_groups(plan(ubuntu_training()))
    assert {name: ng["inputs"]["labels"].get(names.EFA_LABEL) for name, ng in groups.items()} == {
        "h100-mig": None, "a100-train": "true", "l4-inference": None, "h100-train": "true"}


def test_the_plugin_placement_is_valid_kubernetes():
    """nodeSelector and tolerations become the DaemonSet's pod spec: they must be valid core/v1 fields."""
    values = _release(plan(ubuntu_training()))["values"]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "aws-efa-k8s-device-plugin"},
           "spec": {"nodeSelector": values["nodeSelector"], "tolerations": values["tolerations"],
                    "containers": [{"name": "plugin", "image": "example.com/plugin:1"}]}}
    kubernetes_validate.validate(pod, parse_platform(ubuntu_training()).cluster.kubernetes_version, strict=True)


def test_the_charts_node_affinity_admits_every_catalog_efa_type_and_no_other():
    """The chart only schedules on `supportedInstanceLabels`: the catalog's EFA types must all be there, and
    the catalog must not call a type without EFA what the chart lists."""
    supported = set(efa_chart.supported_instance_types("v0.5.30"))
    with_efa = {t for t, it in catalog.INSTANCE_TYPES.items() if it.efa_interfaces}
    assert with_efa <= supported
    assert not (set(catalog.INSTANCE_TYPES) - with_efa) & supported
    assert {"p4d.24xlarge", "p5.48xlarge", "p5en.48xlarge"} <= with_efa


# --- the driver: in the AL2023 image, checked at boot on Ubuntu ---

def test_ubuntu_efa_pools_check_every_device_before_bootstrap():
    platform = ubuntu_training()
    spec = parse_platform(platform)
    for name, count in (("a100-train", 4), ("h100-train", 32)):
        script = boot_script(platform, name)
        block = "\n".join(efa.ubuntu_boot_lines(_pool(spec, name)))
        assert f">= {count} ))" in block and block in script
        assert script.index(block) < script.index(catalog.UBUNTU_EKS_BOOTSTRAP)
    assert "modprobe efa" not in boot_script(platform, "h100-mig")


def test_al2023_efa_pools_add_no_driver_step():
    """The AL2023 NVIDIA AMI ships the EFA driver (AWS EKS user guide, "Manage EFA devices")."""
    plan_ = plan(al2023_training())
    for pool in ("a100-efa", "h100-efa"):
        assert not [body for _, body in user_data_parts(launch_template(plan_, pool)) if "modprobe" in body]
    spec = _spec("al2023")
    assert {_pool(spec, p).ami.image.efa_driver for p in ("a100-efa", "h100-efa")} == {"image"}


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not installed")
@pytest.mark.parametrize("found", [4, 5, 3, 0])
def test_the_boot_check_lets_the_node_join_only_with_every_device(tmp_path, found):
    pool = _pool(_spec("ubuntu"), "a100-train")  # 4 interfaces
    devices = tmp_path / "infiniband"
    devices.mkdir()
    for i in range(found):
        (devices / f"rdmap{i}s0").mkdir()
    dropin = tmp_path / "containerd.service.d"
    result, calls = run_bash(efa.ubuntu_boot_lines(pool), tmp_path,
                             moved={"/sys/class/infiniband": str(devices),
                                    "/etc/systemd/system/containerd.service.d": str(dropin)},
                             stubs=("modprobe", "sleep", "systemctl"))
    assert calls[0] == "modprobe efa"
    if found >= 4:
        assert result.returncode == 0, result.stderr
        assert (dropin / "50-efa-memlock.conf").read_text() == "[Service]\nLimitMEMLOCK=infinity\n"
        assert calls[1:] == ["systemctl daemon-reload", "systemctl restart containerd"]
    else:
        assert result.returncode == 1
        assert f"EFA: expected 4 devices, found {found}" in result.stderr
        assert calls[1:] == ["sleep 1"] * 60  # waited a minute for the devices, then refused to join


# --- what EFA pods ask for ---

@pytest.mark.parametrize("instance_type, gpus, devices", [
    ("p5.48xlarge", 8, 32), ("p5.48xlarge", 1, 4), ("p5en.48xlarge", 1, 2), ("p4d.24xlarge", 8, 4),
    ("p4d.24xlarge", 4, 2), ("p4d.24xlarge", 2, 1), ("p4d.24xlarge", 1, 0), ("g6e.48xlarge", 8, 4),
])
def test_a_pod_gets_its_gpus_share_of_the_nodes_interfaces(instance_type, gpus, devices):
    spec = spec_with_pools(training_pool("p", [instance_type], AL2023))
    assert efa.pod_devices(spec.node_pools[0], gpus, catalog.INSTANCE_TYPES[instance_type].gpu_count) == devices


# UltraServer pools take whole GPUs on their own stack shape (capacity block, ARM image, DRA): the example's.
_EFA_TYPES = sorted(t for t, it in catalog.INSTANCE_TYPES.items() if it.efa_interfaces and t not in catalog.ULTRASERVERS)


@pytest.mark.parametrize("instance_type, replicas", [
    *((t, r) for t in _EFA_TYPES for r in (None, 4)), *((t, None) for t in sorted(catalog.ULTRASERVERS)),
])
def test_pods_filling_a_node_never_ask_more_devices_than_it_has(instance_type, replicas):
    sharing = {"sharing": {"mode": "time-slicing", "replicas": replicas}} if replicas else {}
    if instance_type in catalog.ULTRASERVERS:
        spec = parse_platform(ultraserver())
    else:
        spec = spec_with_pools(training_pool("p", [instance_type], AL2023, **sharing))
    pool = spec.node_pools[0]
    assert pool.instance_types == [instance_type]
    units = node_resources(pool, spec.mig_strategy)[names.GPU_RESOURCE]
    for size in range(1, units + 1):
        assert (units // size) * efa.pod_devices(pool, size, units) <= efa_interface_count(pool), size
    assert efa.pod_devices(pool, units, units) == efa_interface_count(pool)  # a whole-node pod gets them all


def test_efa_pods_get_the_libfabric_settings_and_device_rdma_only_where_every_pool_has_it():
    spec = spec_with_pools(training_pool("a100", ["p4d.24xlarge"], AL2023),
                           training_pool("l40s", ["g6e.48xlarge"], AL2023))
    p4d, g6e = spec.node_pools
    base = [{"name": "FI_PROVIDER", "value": "efa"}, {"name": "FI_EFA_FORK_SAFE", "value": "1"}]
    assert efa.pod_env([p4d]) == [*base, {"name": "FI_EFA_USE_DEVICE_RDMA", "value": "1"}]
    assert efa.pod_env([g6e]) == efa.pod_env([p4d, g6e]) == efa.pod_env([g6e, p4d]) == base
