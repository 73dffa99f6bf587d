"""The catalog's facts agree with the reference tables and with AWS's API model."""

import pytest

from gpu_platform.facts import catalog
from tests.support.aws_api import service_model

PRODUCT_LABELS = {  # as GPU feature discovery labels real nodes (NVIDIA/cloud-native-docs mig-node-labels.json)
    "g5.xlarge": "NVIDIA-A10G", "g6.xlarge": "NVIDIA-L4", "g6e.xlarge": "NVIDIA-L40S",
    "p4d.24xlarge": "NVIDIA-A100-SXM4-40GB", "p4de.24xlarge": "NVIDIA-A100-SXM4-80GB",
    "p5.48xlarge": "NVIDIA-H100-80GB-HBM3", "p5e.48xlarge": "NVIDIA-H200", "p5en.48xlarge": "NVIDIA-H200",
}


@pytest.fixture(scope="module")
def eks_model():
    return service_model("eks")


@pytest.mark.parametrize("instance,label", PRODUCT_LABELS.items())
def test_product_labels(instance, label):
    assert catalog.INSTANCE_TYPES[instance].gpu_model.product_label == label


@pytest.mark.parametrize("family,gpu", [("g5", "A10G"), ("g6", "L4"), ("g6e", "L40S")])
def test_g_families_share_the_size_ladder(family, gpu):
    counts = {n.split(".")[1]: it.gpu_count for n, it in catalog.INSTANCE_TYPES.items() if it.family == family}
    assert counts == {"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1, "16xlarge": 1,
                      "12xlarge": 4, "24xlarge": 4, "48xlarge": 8}
    assert {it.gpu for it in catalog.INSTANCE_TYPES.values() if it.family == family} == {gpu}


def test_g5_ladder_matches_the_reference():
    vcpu_ram = {n: (it.vcpu, it.memory_gib) for n, it in catalog.INSTANCE_TYPES.items() if it.family == "g5"}
    assert vcpu_ram["g5.xlarge"] == (4, 16) and vcpu_ram["g5.16xlarge"] == (64, 256)
    assert vcpu_ram["g5.12xlarge"] == (48, 192) and vcpu_ram["g5.48xlarge"] == (192, 768)


def test_mig_capability_matches_the_reference():
    capable = {n for n, it in catalog.INSTANCE_TYPES.items() if it.gpu_model.mig_capable}
    assert capable == {"p4d.24xlarge", "p4de.24xlarge", "p5.48xlarge", "p5e.48xlarge", "p5en.48xlarge",
                       "p6-b200.48xlarge", "p6-b300.48xlarge", *(f"g7e.{size}" for size in (
                           "2xlarge", "4xlarge", "8xlarge", "12xlarge", "24xlarge", "48xlarge"))}


@pytest.mark.parametrize("gpu,small,double,seven", [
    ("A100-SXM4-40GB", "1g.5gb", "1g.10gb", "7g.40gb"),
    ("A100-SXM4-80GB", "1g.10gb", "1g.20gb", "7g.80gb"),
    ("H100-80GB-HBM3", "1g.10gb", "1g.20gb", "7g.80gb"),
    ("H200", "1g.18gb", "1g.35gb", "7g.141gb"),
])
def test_mig_profile_names_per_gpu(gpu, small, double, seven):
    profiles = catalog.GPU_MODELS[gpu].mig_profiles
    assert profiles[small] == "1g" and profiles[double] == "1g-2m" and profiles[seven] == "7g"
    assert profiles[f"{small}+me"] == "1g+me"


def test_minimum_drivers_follow_the_reference():
    mins = {k: g.min_driver for k, g in catalog.GPU_MODELS.items()}
    assert mins["H100-80GB-HBM3"] == "525.60.13" and mins["H200"] == "550.54.14"
    assert mins["L4"] == "525.60.13" and mins["L40S"] == "535.54.03"


def test_every_price_names_its_source_and_date():
    for it in catalog.INSTANCE_TYPES.values():
        assert it.price.usd_per_hour > 0 and it.price.source and it.price.as_of
    assert catalog.INSTANCE_TYPES["g5.xlarge"].price.usd_per_hour == 1.006
    assert catalog.INSTANCE_TYPES["g5.xlarge"].price.verified


def test_chart_supported_drivers_and_default():
    chart = catalog.GPU_OPERATOR_CHARTS["v26.7.0"]
    assert chart.default_driver in chart.supported_drivers
    assert chart.supported_drivers == ("610.57.04", "595.91.07", "580.173.02", "535.309.01")


def test_every_supported_chart_keeps_its_values_file():
    upstream = catalog.UPSTREAM
    for chart in catalog.GPU_OPERATOR_CHARTS.values():
        assert (upstream / chart.values_file).is_file(), chart.values_file
    for release in catalog.KARPENTER_RELEASES.values():
        assert (upstream / release.values_file).is_file(), release.values_file


def test_every_driver_branch_of_a_supported_chart_is_known():
    for chart in catalog.GPU_OPERATOR_CHARTS.values():
        for version in chart.supported_drivers:
            assert catalog.driver_branch(version) in catalog.DRIVER_BRANCHES


def test_node_image_ami_types_exist_in_the_eks_api(eks_model):
    enum = set(eks_model.shape_for("AMITypes").enum)
    for image in catalog.NODE_IMAGES.values():
        assert image.eks_ami_type in enum, image.key


def test_driver_owner_is_the_ami_only_for_eks_images():
    for image in catalog.NODE_IMAGES.values():
        assert (image.driver_owner == "operator") == (image.eks_ami_type == "CUSTOM"), image.key


def test_version_key_orders_numerically():
    assert catalog.version_key("580.173.02") > catalog.version_key("580.95.05")
    assert catalog.version_key("v26.7.0") == (26, 7, 0)


def test_unknown_instance_lookup_lists_known_types():
    with pytest.raises(KeyError, match="g5.xlarge"):
        catalog.instance_type("g9.huge")


# --- Blackwell (Karpenter v1.14's instance-type reference and VPC limits, aws/karpenter-provider-aws @1d927085) ---

@pytest.mark.parametrize("name,gpu,gpus,vcpu,ram,efa,cards", [
    ("p6-b200.48xlarge", "B200", 8, 192, 2048, 8, 8),
    ("p6-b300.48xlarge", "B300", 8, 192, 4096, 16, 17),
    ("g7e.2xlarge", "RTX-PRO-6000", 1, 8, 64, 0, 1),
    ("g7e.8xlarge", "RTX-PRO-6000", 1, 32, 256, 1, 1),
    ("g7e.12xlarge", "RTX-PRO-6000", 2, 48, 512, 1, 1),
    ("g7e.24xlarge", "RTX-PRO-6000", 4, 96, 1024, 2, 2),
    ("g7e.48xlarge", "RTX-PRO-6000", 8, 192, 2048, 4, 4),
])
def test_blackwell_instance_shapes(name, gpu, gpus, vcpu, ram, efa, cards):
    it = catalog.INSTANCE_TYPES[name]
    assert (it.gpu, it.gpu_count, it.vcpu, it.memory_gib, it.efa_interfaces, it.cards) == (gpu, gpus, vcpu, ram, efa, cards)


def test_the_p6_b300_primary_card_takes_no_efa():
    assert catalog.INSTANCE_TYPES["p6-b300.48xlarge"].first_efa_card == 1
    assert catalog.INSTANCE_TYPES["p6-b200.48xlarge"].first_efa_card == 0


def test_blackwell_instance_store_totals_match_describe_instance_types():
    totals = {"p6-b200.48xlarge": 30400, "p6-b300.48xlarge": 30400, "g7e.2xlarge": 1900, "g7e.12xlarge": 3800,
              "g7e.24xlarge": 7600, "g7e.48xlarge": 15200}
    assert {t: catalog.INSTANCE_STORE[t].total_gb for t in totals} == totals


def test_blackwell_prices_come_from_the_price_list_with_a_date():
    assert catalog.INSTANCE_TYPES["p6-b200.48xlarge"].price.usd_per_hour == 113.9328
    assert catalog.INSTANCE_TYPES["p6-b300.48xlarge"].price.usd_per_hour == 142.416
    assert catalog.INSTANCE_TYPES["g7e.48xlarge"].price.usd_per_hour == 33.14432
    for name in ("p6-b200.48xlarge", "g7e.2xlarge"):
        price = catalog.INSTANCE_TYPES[name].price
        assert "Price List" in price.source and price.as_of == "2026-07"


def test_blackwell_driver_floors():
    gpus = catalog.GPU_MODELS
    assert (gpus["B200"].min_driver, gpus["B300"].min_driver, gpus["RTX-PRO-6000"].min_driver) == (
        "570.133.20", "580.65.06", "575.57.08")
    assert (gpus["B200"].min_branch, gpus["B300"].min_branch, gpus["RTX-PRO-6000"].min_branch) == ("570", "580", "575")
    # MIG on the RTX PRO 6000 does not work on 575.57.08: every profile needs R580.
    assert set(gpus["RTX-PRO-6000"].profile_min_driver.values()) == {"580.65.06"}
    assert set(gpus["RTX-PRO-6000"].profile_min_driver) == set(gpus["RTX-PRO-6000"].mig_profiles)


def test_blackwell_mig_profiles_follow_the_operators_config():
    gpus = catalog.GPU_MODELS
    assert list(gpus["B200"].mig_profiles) == ["1g.23gb", "1g.23gb+me", "1g.45gb", "2g.45gb", "3g.90gb", "4g.90gb",
                                              "7g.180gb"]
    assert list(gpus["B300"].mig_profiles) == ["1g.34gb", "1g.34gb+me", "1g.67gb", "2g.67gb", "3g.135gb",
                                              "4g.135gb", "7g.269gb"]
    assert set(gpus["RTX-PRO-6000"].mig_profiles) == {
        "1g.24gb", "1g.24gb+gfx", "1g.24gb-me", "1g.24gb+me", "1g.24gb+me.all", "2g.48gb", "2g.48gb+gfx",
        "2g.48gb-me", "2g.48gb+me.all", "4g.96gb", "4g.96gb+gfx"}
    assert gpus["RTX-PRO-6000"].mig_grid == "4-slice" and gpus["B200"].mig_grid == "7-slice"


def test_every_mig_profile_is_in_the_operators_default_config():
    import yaml

    text = (catalog.UPSTREAM / "default-mig-parted-config-v26.7.0.yaml").read_text()
    config = yaml.safe_load(yaml.safe_load(text)["data"]["config.yaml"])
    named = {p for items in config["mig-configs"].values() for i in items for p in (i.get("mig-devices") or {})}
    for key in ("B200", "B300", "RTX-PRO-6000"):
        assert set(catalog.GPU_MODELS[key].mig_profiles) <= named, key


def test_capacity_block_prices_name_their_source_and_cover_only_catalog_types():
    for name, price in catalog.CAPACITY_BLOCK_PRICES.items():
        assert name in catalog.INSTANCE_TYPES and price.source and price.as_of and not price.verified


def test_the_blackwell_families_have_gpudirect_rdma_over_efa():
    assert {"p6-b200", "p6-b300", "g7e"} <= set(catalog.EFA_RDMA_FAMILIES)


def test_every_instance_type_runs_known_images():
    for it in catalog.INSTANCE_TYPES.values():
        assert set(it.ami_types) <= set(catalog.NODE_IMAGES), it.name


def test_every_pinned_upstream_yaml_file_reads_the_same_on_libyaml_as_on_pyyaml():
    import yaml

    files = sorted(catalog.UPSTREAM.glob("*.yaml"))
    assert files
    for path in files:
        assert catalog.upstream_yaml(path.name) == yaml.safe_load(path.read_text()), path.name
