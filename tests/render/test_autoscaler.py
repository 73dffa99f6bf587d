"""Scale from zero: the Auto Scaling group tags, the Cluster Autoscaler release, its IAM and identity.

The scale-from-zero tests rebuild the node the autoscaler would imagine for an empty pool from the
tags in the plan (as its AWS provider does: labels, taints and resources from node-template tags) and
check which pods fit it, following the scheduler's rules for taints, node selectors and requests.
"""
import json

import pytest

from gpu_platform.decisions.node_pool import node_labels, node_taints, node_template_tags
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render.autoscaler import autoscaler_policy, autoscaler_values, image_tag
from gpu_platform.render.iam import trust_policy
from gpu_platform.spec.pool_context import PoolContext
from tests.support.plans import children, component, node_groups, plan, stack_plan
from tests.support.stacks import resource, resources, stack_platform, without_services

TAG = "aws:autoscaling/tag:Tag"
RELEASE = "kubernetes:helm.sh/v3:Release"
POOL = "gpu-platform:index:GpuNodePool"
CA = "gpu-platform:autoscaler:ClusterAutoscaler"

# cluster-autoscaler chart values.yaml (kubernetes/autoscaler, charts/cluster-autoscaler): top-level keys.
CHART_KEYS = {"affinity", "autoDiscovery", "autoscalingGroups", "awsRegion", "cloudProvider", "extraArgs",
              "expanderPriorities", "fullnameOverride", "image", "nameOverride", "nodeSelector", "podAnnotations",
              "podDisruptionBudget", "priorityClassName", "rbac", "replicaCount", "resources", "securityContext",
              "service", "serviceMonitor", "tolerations", "extraEnv", "podLabels"}
# Cluster Autoscaler FAQ, "What are the parameters to CA?" (and the expander list of the same FAQ).
# Each pinned autoscaler's flags, read from its source at the release tag (the file names its source).
CA_FLAGS = {v: set(d["flags"]) for v, d in json.loads(
    (catalog.UPSTREAM / "cluster-autoscaler-flags.json").read_text())["versions"].items()}
EXPANDERS = {"random", "most-pods", "least-waste", "price", "priority", "grpc"}


def _spec(stack):
    return parse_platform(stack_platform(stack))


def _pool(spec, name):
    return next(p for p in spec.node_pools if p.name == name)


# --- node-template tags (pure) ---

def test_tags_make_the_group_discoverable_for_this_cluster():
    spec = _spec("dev")
    tags = node_template_tags(PoolContext.of(spec, spec.node_pools[0]), spec.node_pools[0])
    assert tags[names.CA_ENABLED_TAG] == "true"
    assert tags[names.ca_cluster_tag("gpu-dev")] == "owned"


def test_every_node_label_and_taint_has_a_template_tag():
    spec = _spec("prod")
    pool = _pool(spec, "a100-train")
    tags = node_template_tags(PoolContext.of(spec, pool), pool)
    for key, value in node_labels(pool).items():
        assert tags[names.ca_label_tag(key)] == value
    for key, value, effect in node_taints(pool):
        assert tags[names.ca_taint_tag(key)] == f"{value}:{effect}"


def test_time_sliced_pool_advertises_replicas_times_gpus():
    spec = _spec("dev")
    pool = spec.node_pools[0]
    gpus = catalog.INSTANCE_TYPES[pool.instance_types[0]].gpu_count
    tags = node_template_tags(PoolContext.of(spec, pool), pool)
    assert tags[names.ca_resource_tag(names.GPU_RESOURCE)] == str(gpus * pool.sharing.replicas)


def test_mixed_mig_pool_advertises_each_profile_and_no_whole_gpu():
    spec = _spec("prod")
    pool = _pool(spec, "h100-mig")
    tags = node_template_tags(PoolContext.of(spec, pool), pool)
    gpus = catalog.INSTANCE_TYPES["p5.48xlarge"].gpu_count
    for profile, count in pool.sharing.layout.items():
        assert tags[names.ca_resource_tag(names.mig_resource(profile))] == str(gpus * count)
    assert names.ca_resource_tag(names.GPU_RESOURCE) not in tags


def test_single_mig_pool_advertises_slices_as_gpus():
    platform = stack_platform("prod")
    for p in platform["nodePools"]:
        if p["name"] == "h100-mig":
            p["sharing"] = {"mode": "mig", "strategy": "single", "layout": {"1g.10gb": 7}}
    platform["teams"] = []
    spec = parse_platform(platform)
    tags = node_template_tags(PoolContext.of(spec, _pool(spec, "h100-mig")), _pool(spec, "h100-mig"))
    assert tags[names.ca_resource_tag(names.GPU_RESOURCE)] == str(8 * 7)


def test_whole_gpu_pool_advertises_its_gpu_count():
    spec = _spec("prod")
    pool = _pool(spec, "l4-inference")
    assert node_template_tags(PoolContext.of(spec, pool), pool)[names.ca_resource_tag(names.GPU_RESOURCE)] == "1"


def test_ephemeral_storage_follows_the_pool_disk_without_local_nvme():
    platform = stack_platform("prod")
    platform["nodePools"][0]["localStorage"] = "none"
    spec = parse_platform(platform)
    pool = spec.node_pools[0]
    assert node_template_tags(PoolContext.of(spec, pool), pool)[names.ca_resource_tag(names.EPHEMERAL_STORAGE)] == f"{pool.disk_size_gib}Gi"


def test_ephemeral_storage_is_the_instance_store_array_when_kubelet_lives_on_it():
    spec = _spec("prod")
    pool = _pool(spec, "h100-mig")  # p5.48xlarge: 8 x 3840 GB = 30720 GB = 28610 GiB
    assert node_template_tags(PoolContext.of(spec, pool), pool)[names.ca_resource_tag(names.EPHEMERAL_STORAGE)] == "28610Gi"


def test_efa_pool_advertises_its_efa_devices_for_scale_from_zero():
    spec = _spec("prod")
    tags = node_template_tags(PoolContext.of(spec, _pool(spec, "a100-train")), _pool(spec, "a100-train"))
    assert tags[names.ca_resource_tag(names.EFA_RESOURCE)] == str(catalog.INSTANCE_TYPES["p4d.24xlarge"].efa_interfaces)
    pool = _pool(spec, "h100-mig")
    assert names.ca_resource_tag(names.EFA_RESOURCE) not in node_template_tags(PoolContext.of(spec, pool), pool)


# --- release values, image, IAM (pure) ---

@pytest.mark.parametrize("version", catalog.KUBERNETES_VERSIONS)
def test_image_minor_matches_the_cluster_minor(version):
    platform = stack_platform("dev")
    platform["cluster"]["kubernetesVersion"] = version
    platform["cluster"]["create"]["systemNodes"]["releaseVersion"] = f"{version}.5-20251120"
    platform["nodePools"][0]["ami"]["releaseVersion"] = f"{version}.5-20251120"
    assert image_tag(parse_platform(platform)).startswith(f"v{version}.")


def test_explicit_image_tag_wins():
    platform = stack_platform("dev")
    platform["clusterAutoscaler"]["imageTag"] = "v1.33.0"
    assert image_tag(parse_platform(platform)) == "v1.33.0"


def test_values_target_this_cluster_and_region_and_run_on_system_nodes():
    values = autoscaler_values(_spec("dev"), "eu-west-1")
    assert values["autoDiscovery"]["clusterName"] == "gpu-dev"
    assert values["awsRegion"] == "eu-west-1"
    assert values["nodeSelector"] == {names.ROLE_LABEL: names.SYSTEM_ROLE}
    assert values["rbac"]["serviceAccount"]["name"] == names.CA_RELEASE


def test_values_use_only_keys_the_chart_has():
    assert set(autoscaler_values(_spec("prod"), "us-east-1")) <= CHART_KEYS


def test_extra_args_are_autoscaler_flags_tuned_for_gpu_pools():
    spec = _spec("prod")
    args = autoscaler_values(spec, "us-east-1")["extraArgs"]
    assert set(args) <= CA_FLAGS[image_tag(spec)]
    assert args["expander"] in EXPANDERS
    assert args["balance-similar-node-groups"] is True
    assert args["skip-nodes-with-local-storage"] is False
    assert args["startup-taint"] == names.ACCEPTANCE_TAINT_KEY  # prod gates its pools


def test_every_pinned_autoscaler_has_the_flags_the_platform_passes():
    """--startup-taint (and the others) exist in every pinned release, so any cluster version takes them; the
    chart passes each extraArgs entry as --key=value (facts/upstream/cluster-autoscaler-flags.json)."""
    assert set(CA_FLAGS) == set(catalog.CLUSTER_AUTOSCALER_IMAGE_TAGS.values())
    args = autoscaler_values(_spec("prod"), "us-east-1")["extraArgs"]
    for tag, flags in CA_FLAGS.items():
        assert set(args) <= flags, tag


def test_no_startup_taint_flag_without_a_gated_pool():
    assert "startup-taint" not in autoscaler_values(_spec("dev"), "us-east-1")["extraArgs"]


def test_policy_reads_broadly_but_scales_only_groups_this_cluster_owns():
    statements = {s["Sid"]: s for s in autoscaler_policy("gpu-prod")["Statement"]}
    assert all(a.split(":")[1].startswith(("Describe", "Get")) for a in statements["Discover"]["Action"])
    scale = statements["ScaleOwnGroups"]
    assert set(scale["Action"]) == {"autoscaling:SetDesiredCapacity", "autoscaling:TerminateInstanceInAutoScalingGroup"}
    assert scale["Condition"] == {"StringEquals": {"aws:ResourceTag/k8s.io/cluster-autoscaler/gpu-prod": "owned"}}


def test_policy_condition_matches_the_tag_every_gpu_group_carries():
    spec = _spec("prod")
    (condition,) = autoscaler_policy(spec.cluster.name)["Statement"][1]["Condition"]["StringEquals"].items()
    key, value = condition[0].removeprefix("aws:ResourceTag/"), condition[1]
    for pool in spec.node_pools:
        assert node_template_tags(PoolContext.of(spec, pool), pool)[key] == value


def test_pod_identity_trust_allows_assume_and_tag_session_for_eks_pods_only():
    (statement,) = trust_policy(catalog.EKS_POD_IDENTITY_PRINCIPAL, tag_session=True)["Statement"]
    assert statement["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert set(statement["Action"]) == {"sts:AssumeRole", "sts:TagSession"}


# --- in the plan ---

def _release(plan_):
    return resource(plan_, RELEASE, names.CA_RELEASE)


def test_release_is_the_pinned_chart_from_the_catalog():
    spec, rel = _spec("prod"), _release(stack_plan("prod"))["inputs"]
    repo, chart = catalog.CLUSTER_AUTOSCALER_CHART
    assert (rel["chart"], rel["version"], rel["repositoryOpts"]["repo"]) == (chart, spec.cluster_autoscaler.chart_version, repo)
    assert rel["namespace"] == names.CA_NAMESPACE


def test_release_uses_the_cluster_provider_and_waits_for_system_nodes():
    plan_ = stack_plan("prod")
    rel = _release(plan_)
    (provider,) = resources(plan_, "pulumi:providers:kubernetes")
    assert rel["provider"].startswith(provider["urn"] + "::")
    system = [r for r in resources(plan_, "aws:eks/nodeGroup:NodeGroup") if r["inputs"]["nodeGroupName"].endswith("-system")]
    assert system[0]["urn"] in rel["options"]["dependsOn"]


def test_identity_association_binds_the_release_service_account_to_the_autoscaler_role():
    plan_ = stack_plan("prod")
    ca = component(plan_, CA, "cluster-autoscaler")
    (assoc,) = children(plan_, ca, "aws:eks/podIdentityAssociation:PodIdentityAssociation")
    (role,) = children(plan_, ca, "aws:iam/role:Role")
    values = _release(plan_)["inputs"]["values"]
    assert assoc["inputs"]["serviceAccount"] == values["rbac"]["serviceAccount"]["name"]
    assert assoc["inputs"]["namespace"] == _release(plan_)["inputs"]["namespace"]
    assert assoc["inputs"]["roleArn"].endswith(f":role/{role['inputs']['name']}")
    assert json.loads(role["inputs"]["assumeRolePolicy"]) == trust_policy(catalog.EKS_POD_IDENTITY_PRINCIPAL, tag_session=True)


def test_disabled_autoscaler_installs_nothing():
    platform = stack_platform("dev")
    platform["clusterAutoscaler"]["enabled"] = False
    without_services(platform)  # its service scales to zero, which needs an autoscaler to come back
    plan_ = plan(platform)
    assert [r for r in resources(plan_, RELEASE) if r["name"] == names.CA_RELEASE] == []
    assert resources(plan_, CA) == []


def _tags_of(plan_, pool_name) -> dict[str, dict]:
    return {t["inputs"]["tag"]["key"]: t["inputs"] for t in children(plan_, component(plan_, POOL, pool_name), TAG)}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_tags_go_on_the_node_groups_own_auto_scaling_group_and_not_on_instances(stack):
    plan_ = stack_plan(stack)
    for name, ng in node_groups(plan_).items():
        tags = _tags_of(plan_, name).values()
        (group,) = {t["autoscalingGroupName"] for t in tags}
        assert group.startswith(f"eks-{ng['inputs']['nodeGroupName']}-")  # how EKS names a node group's group
        assert {t["tag"]["propagateAtLaunch"] for t in tags} == {False}


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_plan_tags_are_the_rendered_node_template(stack):
    spec, plan_ = _spec(stack), stack_plan(stack)
    for pool in spec.node_pools:
        assert {k: t["tag"]["value"] for k, t in _tags_of(plan_, pool.name).items()} == node_template_tags(PoolContext.of(spec, pool), pool)


# --- scale from zero: would the autoscaler's imagined node take the pod? ---

def _template_node(tags: dict[str, str]) -> dict:
    node = {"labels": {}, "taints": [], "allocatable": {}}
    for key, value in tags.items():
        kind, _, rest = key.removeprefix(names.CA_TEMPLATE_PREFIX).partition("/")
        if not key.startswith(names.CA_TEMPLATE_PREFIX):
            continue
        if kind == "label":
            node["labels"][rest] = value
        elif kind == "taint":
            taint_value, effect = value.rsplit(":", 1)
            node["taints"].append({"key": rest, "value": taint_value, "effect": effect})
        elif kind == "resources" and rest != names.EPHEMERAL_STORAGE:
            node["allocatable"][rest] = int(value)
    return node


def _tolerates(pod: dict, taint: dict) -> bool:
    return any(t["key"] == taint["key"] and t.get("effect", taint["effect"]) == taint["effect"]
               and (t.get("operator") == "Exists" or t.get("value") == taint["value"])
               for t in pod.get("tolerations", []))


def _fits(pod: dict, node: dict) -> bool:
    hard = [t for t in node["taints"] if t["effect"] in ("NoSchedule", "NoExecute")]
    return (all(_tolerates(pod, t) for t in hard)
            and pod.get("nodeSelector", {}).items() <= node["labels"].items()
            and all(node["allocatable"].get(r, 0) >= n for r, n in pod["requests"].items()))


GPU_TOLERATION = {"key": names.GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}


def _node(stack, pool_name):
    plan_ = stack_plan(stack)
    ng = node_groups(plan_)[pool_name]["inputs"]
    assert ng["scalingConfig"]["minSize"] == 0  # these pools start empty: only the template can bring a node
    return _template_node({k: t["tag"]["value"] for k, t in _tags_of(plan_, pool_name).items()})


def test_spot_pool_scales_from_zero_for_a_gpu_pod_that_tolerates_the_taint():
    pod = {"tolerations": [GPU_TOLERATION], "requests": {names.GPU_RESOURCE: 1}}
    assert _fits(pod, _node("dev", "a10g-spot"))


def test_gpu_pod_without_the_toleration_does_not_trigger_a_gpu_node():
    assert not _fits({"requests": {names.GPU_RESOURCE: 1}}, _node("dev", "a10g-spot"))


def test_mig_pool_scales_from_zero_for_a_mig_slice_pod():
    pod = {"tolerations": [GPU_TOLERATION], "requests": {names.mig_resource("1g.10gb"): 1},
           "nodeSelector": {names.GPU_PRODUCT_LABEL: "NVIDIA-H100-80GB-HBM3"}}
    assert _fits(pod, _node("prod", "h100-mig"))


def test_mig_pool_is_not_chosen_for_a_whole_gpu_request():
    pod = {"tolerations": [GPU_TOLERATION], "requests": {names.GPU_RESOURCE: 1}}
    assert not _fits(pod, _node("prod", "h100-mig"))


def test_extra_pool_taint_needs_its_own_toleration():
    node = _node("prod", "a100-train")
    gpu_only = {"tolerations": [GPU_TOLERATION], "requests": {names.GPU_RESOURCE: 8}}
    training = {**gpu_only, "tolerations": [GPU_TOLERATION, {"key": "workload", "value": "training",
                                                             "effect": "NoSchedule"}]}
    assert not _fits(gpu_only, node)
    assert _fits(training, node)


def test_pod_asking_more_gpus_than_a_node_has_does_not_fit():
    pod = {"tolerations": [GPU_TOLERATION], "requests": {names.GPU_RESOURCE: 9}}
    assert not _fits(pod, _node("prod", "a100-train"))
