"""The DRA objects and values a prod stack with one DRA pool renders: the driver's chart values held to the
pinned chart's values.yaml, ResourceClaimTemplates and quotas strictly valid for the cluster's Kubernetes, every
claim selector evaluated against devices as the driver publishes them, and Kueue's device class mapping."""
import kubernetes_validate
import pytest
import yaml

from gpu_platform.decisions.dra import claim_counts
from gpu_platform.decisions.node_pool import node_labels, node_template_tags
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render.dra import chart_defaults, dra_driver_values, unknown_dra_driver_keys
from gpu_platform.render.queueing_objects import chart_values
from gpu_platform.render.team_objects import TeamContext, team_manifests
from gpu_platform.spec.pool_context import PoolContext
from tests.support.dra import DRA_POOL, prod_with_dra
from tests.support.kueue_crds import cel_true
from tests.support.stacks import stack_platform

DEVICES_KEY = "gpu.nvidia.com.deviceclass.resource.k8s.io/devices"


@pytest.fixture(scope="module")
def spec():
    return parse_platform(prod_with_dra())


def _values(spec):
    return dra_driver_values(spec.dra_driver.chart_version, spec.node_pools, spec.gpu_operator.driver.source,
                             spec.cluster.system_node_selector)


def test_every_driver_value_is_a_key_of_the_pinned_chart(spec):
    assert unknown_dra_driver_keys(_values(spec), spec.dra_driver.chart_version) == []


def test_the_guard_catches_a_misspelt_key(spec):
    values = {**_values(spec), "kubeletPlugin": {"nodeSelecter": {}}}
    assert unknown_dra_driver_keys(values, spec.dra_driver.chart_version) == ["kubeletPlugin.nodeSelecter"]


def test_the_kubelet_plugin_runs_only_where_the_device_plugin_is_off(spec):
    selector = _values(spec)["kubeletPlugin"]["nodeSelector"]
    for pool in spec.node_pools:
        labels = node_labels(pool)
        on_dra = all(labels.get(k) == v for k, v in selector.items())
        assert on_dra == (pool.name == DRA_POOL)
        assert (labels.get(names.gpu_deploy_label("device-plugin")) == "false") == on_dra


def test_the_chart_is_told_the_device_plugin_is_gone_and_the_operator_keeps_the_driver(spec):
    values = _values(spec)
    assert values["resources"]["gpus"]["enabled"] and values["gpuResourcesEnabledOverride"]
    assert values["nvidiaDriverRoot"] == "/run/nvidia/driver"  # prod: the operator's driver container
    assert "nvidiaDriverRoot" in chart_defaults(spec.dra_driver.chart_version)


def test_the_kubelet_plugin_tolerates_the_dra_pools_taints(spec):
    tolerations = _values(spec)["kubeletPlugin"]["tolerations"]
    assert {"key": "workload", "operator": "Equal", "value": "training", "effect": "NoSchedule"} in tolerations


def test_a_dra_pool_advertises_no_gpu_resource_to_the_autoscaler(spec):
    pool = next(p for p in spec.node_pools if p.name == DRA_POOL)
    tags = node_template_tags(PoolContext.of(spec, pool), pool)
    assert names.ca_resource_tag(names.GPU_RESOURCE) not in tags
    assert tags[names.ca_label_tag(names.GPU_ALLOCATION_LABEL)] == "dra"


@pytest.mark.parametrize("gpus,expected", [(1, (1,)), (4, (1, 2, 4)), (8, (1, 2, 4, 8)), (6, (1, 2, 4, 6))])
def test_claim_counts(gpus, expected):
    assert claim_counts(gpus) == expected


def _team_objects(spec, team):
    t = next(x for x in spec.teams if x.name == team)
    return team_manifests(TeamContext.of(spec, t), t)


def test_teams_that_may_use_the_pool_get_claim_templates_and_a_devices_quota(spec):
    research = _team_objects(spec, "research")
    claims = sorted(k for k in research if k.startswith("claim-"))
    assert claims == [f"claim-a100-sxm4-40gb-x{n}" for n in (1, 2, 4, 8)]
    hard = research["quota"]["spec"]["hard"]
    assert hard[DEVICES_KEY] == hard["requests.nvidia.com/gpu"]


def test_a_team_without_the_pool_gets_no_claims_and_a_zero_devices_quota(spec):
    inference = _team_objects(spec, "inference")
    assert not [k for k in inference if k.startswith("claim-")]
    assert inference["quota"]["spec"]["hard"][DEVICES_KEY] == "0"


def test_claim_templates_and_quotas_are_strictly_valid_for_the_cluster(spec):
    version = spec.cluster.kubernetes_version
    checked = 0
    for team in spec.teams:
        for key, obj in _team_objects(spec, team.name).items():
            if key.startswith("claim-") or key == "quota":
                kubernetes_validate.validate(obj, version, strict=True)
                checked += 1
    assert checked >= 3 + 4


def test_a_claim_template_with_a_wrong_field_fails_validation(spec):
    obj = _team_objects(spec, "research")["claim-a100-sxm4-40gb-x8"]
    obj["spec"]["spec"]["devices"]["requests"][0]["exactly"]["counts"] = 8
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(obj, spec.cluster.kubernetes_version, strict=True)


def _device(product: str, type_: str = "gpu") -> dict:
    """A device as the driver publishes it: attributes in its domain (gpu-kubelet-plugin deviceinfo.go)."""
    return {"driver": names.DRA_GPU_DRIVER, "attributes": {names.DRA_GPU_DRIVER: {
        "type": type_, "productName": product, "architecture": "Ampere", "brand": "Nvidia"}}}


def test_every_claim_selector_picks_its_gpu_model_only(spec):
    research = _team_objects(spec, "research")
    for key, obj in research.items():
        if not key.startswith("claim-"):
            continue
        request = obj["spec"]["spec"]["devices"]["requests"][0]["exactly"]
        assert request["deviceClassName"] == names.DRA_GPU_CLASS
        (selector,) = request["selectors"]
        expression = selector["cel"]["expression"]
        assert cel_true(expression, device=_device(catalog.GPU_MODELS["A100-SXM4-40GB"].nvml_name))
        assert not cel_true(expression, device=_device(catalog.GPU_MODELS["H100-80GB-HBM3"].nvml_name))
        assert not cel_true(expression, device=_device(catalog.GPU_MODELS["A100-SXM4-80GB"].nvml_name))


def test_kueue_counts_claimed_gpus_as_nvidia_gpu():
    config = yaml.safe_load(chart_values(True, {"a": "b"}, None, dra=True)["managerConfig"]["controllerManagerConfigYaml"])
    assert config["resources"]["deviceClassMappings"] == [{"name": "nvidia.com/gpu", "deviceClassNames": ["gpu.nvidia.com"]}]
    plain = yaml.safe_load(chart_values(True, {"a": "b"}, None)["managerConfig"]["controllerManagerConfigYaml"])
    assert "deviceClassMappings" not in plain["resources"]


def test_a_job_on_the_dra_pool_claims_its_gpus_and_the_same_call_requests_them_elsewhere(spec):
    from gpu_platform.render.workloads import gpu_job

    job = gpu_job(spec, "research", "train", "img", gpus=8, pool=DRA_POOL)
    pod = job["spec"]["template"]["spec"]
    assert pod["resourceClaims"] == [{"name": "gpus", "resourceClaimTemplateName": "a100-sxm4-40gb-x8"}]
    (main,) = pod["containers"]
    assert main["resources"]["claims"] == [{"name": "gpus"}] and "nvidia.com/gpu" not in main["resources"]["limits"]
    kubernetes_validate.validate(job, spec.cluster.kubernetes_version, strict=True)
    plain = gpu_job(parse_platform(stack_platform("prod")), "research", "train", "img", gpus=8,
                    pool=DRA_POOL)["spec"]["template"]["spec"]
    assert "resourceClaims" not in plain and plain["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "8"


def test_a_claim_shape_the_pool_does_not_offer_is_refused(spec):
    from gpu_platform.render.workloads import gpu_pod_spec

    with pytest.raises(ValueError, match="shapes"):
        gpu_pod_spec(spec, "research", "img", gpus=3, pool=DRA_POOL)
