"""What the UltraServer example renders: ComputeDomains per team job shape strictly valid against the DRA
driver's CRD, the driver's ComputeDomain side on (its values held to the chart), and the operator's driver,
toolkit and MIG manager off on the UltraServer nodes only."""
import kubernetes_validate
import pytest

from gpu_platform.decisions.dra import compute_domains_on
from gpu_platform.decisions.node_pool import node_labels
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render.dra import dra_driver_values, unknown_dra_driver_keys
from gpu_platform.render.team_objects import TeamContext, team_manifests
from tests.support.crd_schemas import schema_problems
from tests.support.dra import prod_with_dra
from tests.support.ultraserver import POOL, ultraserver

# The CRD the cluster serves (the GPU Operator's release owns it), then the DRA driver chart's own copy.
SERVED = catalog.GPU_OPERATOR_CHARTS["v26.7.0"].compute_domain_crds
CRDS = catalog.DRA_DRIVER_RELEASES["0.4.1"].crds


@pytest.fixture(scope="module")
def spec():
    return parse_platform(ultraserver())


def _team(spec, name="research"):
    team = next(t for t in spec.teams if t.name == name)
    return team_manifests(TeamContext.of(spec, team), team)


def test_a_compute_domain_per_multi_node_shape(spec):
    domains = {k: v for k, v in _team(spec).items() if k.startswith("domain-")}
    assert sorted(d["spec"]["numNodes"] for d in domains.values()) == [2, 4, 8, 16, 18]
    for d in domains.values():
        n = d["spec"]["numNodes"]
        assert d["metadata"] == {"name": names.compute_domain_name(n), "namespace": "research",
                                 "labels": d["metadata"]["labels"]}
        assert d["spec"]["channel"]["resourceClaimTemplate"]["name"] == names.compute_domain_claim_template(n)


def test_every_compute_domain_is_strictly_valid_against_the_crd(spec):
    domains = [v for k, v in _team(spec).items() if k.startswith("domain-")]
    assert domains and all(schema_problems(c, d) == [] for d in domains for c in (SERVED, CRDS))


def test_the_served_crd_requires_num_nodes_which_every_domain_sets(spec):
    """The operator's copy differs from the driver's: spec.numNodes is required there."""
    d = next(v for k, v in _team(spec).items() if k.startswith("domain-"))
    del d["spec"]["numNodes"]
    assert schema_problems(CRDS, d) == []
    assert any("numNodes" in p for p in schema_problems(SERVED, d))


def test_a_compute_domain_with_a_wrong_field_fails_the_crd(spec):
    d = next(v for k, v in _team(spec).items() if k.startswith("domain-"))
    d["spec"]["channel"]["allocationMode"] = "Many"
    d["spec"]["nodes"] = 2
    found = schema_problems(CRDS, d)
    assert any("allocationMode" in p for p in found) and any("nodes" in p for p in found), found


def test_claims_and_quota_stay_strictly_valid(spec):
    for key, obj in _team(spec).items():
        if key.startswith("claim-") or key == "quota":
            kubernetes_validate.validate(obj, spec.cluster.kubernetes_version, strict=True)


def test_the_driver_runs_its_compute_domain_side_with_chart_keys_only(spec):
    assert compute_domains_on(spec.node_pools)
    values = dra_driver_values(spec.dra_driver.chart_version, spec.node_pools, spec.gpu_operator.driver.source,
                               spec.cluster.system_node_selector, compute_domains_on(spec.node_pools))
    assert values["resources"] == {"gpus": {"enabled": True}, "computeDomains": {"enabled": True}}
    assert values["nvidiaDriverRoot"] == "/"
    assert unknown_dra_driver_keys(values, spec.dra_driver.chart_version) == []


def test_a_whole_gpu_dra_pool_elsewhere_keeps_compute_domains_off():
    assert not compute_domains_on(parse_platform(prod_with_dra()).node_pools)


def test_the_operator_leaves_driver_toolkit_and_mig_manager_to_the_image_on_ultraserver_nodes(spec):
    pool = next(p for p in spec.node_pools if p.name == POOL)
    labels = node_labels(pool)
    for operand in ("driver", "container-toolkit", "mig-manager", "device-plugin"):
        assert labels[names.gpu_deploy_label(operand)] == "false"


def test_a_plain_dra_pool_keeps_the_operators_driver_and_toolkit():
    spec = parse_platform(prod_with_dra())
    pool = next(p for p in spec.node_pools if p.gpu_allocation == "dra")
    labels = node_labels(pool)
    assert names.gpu_deploy_label("driver") not in labels and names.gpu_deploy_label("container-toolkit") not in labels


# --- GPUs on the device plugin, IMEX by ComputeDomains (AWS's EKS setup) ---

@pytest.fixture
def device_plugin_spec():
    platform = ultraserver()
    next(p for p in platform["nodePools"] if p["name"] == POOL)["gpuAllocation"] = "device-plugin"
    return parse_platform(platform)


def test_on_the_device_plugin_the_driver_hands_out_imex_channels_only(device_plugin_spec):
    spec = device_plugin_spec
    values = dra_driver_values(spec.dra_driver.chart_version, spec.node_pools, spec.gpu_operator.driver.source,
                               spec.cluster.system_node_selector, compute_domains_on(spec.node_pools))
    assert values["resources"] == {"gpus": {"enabled": False}, "computeDomains": {"enabled": True}}
    assert "gpuResourcesEnabledOverride" not in values
    assert values["kubeletPlugin"]["nodeSelector"] == {names.COMPUTE_DOMAINS_LABEL: "true"}
    assert unknown_dra_driver_keys(values, spec.dra_driver.chart_version) == []


def test_device_plugin_ultraserver_nodes_keep_the_device_plugin_and_leave_the_rest_to_the_image(device_plugin_spec):
    labels = node_labels(next(p for p in device_plugin_spec.node_pools if p.name == POOL))
    assert labels[names.COMPUTE_DOMAINS_LABEL] == "true" and names.GPU_ALLOCATION_LABEL not in labels
    assert names.gpu_deploy_label("device-plugin") not in labels
    for operand in ("driver", "container-toolkit", "mig-manager"):
        assert labels[names.gpu_deploy_label(operand)] == "false"


def test_teams_get_compute_domains_on_the_device_plugin_too(device_plugin_spec):
    objs = _team(device_plugin_spec)
    assert any(k.startswith("domain-") for k in objs)


def test_a_multi_node_job_requests_gpus_and_claims_its_imex_channel(device_plugin_spec):
    from gpu_platform.render.workloads import gpu_job

    job = gpu_job(device_plugin_spec, "research", "pretrain", "example.com/train:1", pool=POOL, gpus=4, nodes=8)
    pod = job["spec"]["template"]["spec"]
    main = pod["containers"][0]
    assert main["resources"]["limits"][names.GPU_RESOURCE] == "4"
    assert pod["resourceClaims"] == [{"name": "imex", "resourceClaimTemplateName": "nvl-8-nodes-channel"}]
    assert main["resources"]["claims"] == [{"name": "imex"}]
