"""The cost model on hand-computed cases: catalog figures are written out as literals so every expected
value can be recomputed by a reader (g5.xlarge $1.006/h, p5.48xlarge $55.04/h, 730 hours a month...)."""
from datetime import date

import pytest

from gpu_platform.decisions.cost import (
    EXCLUSIONS, ON_DEMAND, OVERRIDE_SOURCE, SPOT, Budget, PoolFacts, Pricing, Quote, estimate, estimate_pool,
    estimate_spec, fixed_items_from_spec, fsx_lustre_item, gpu_hourly_cost_by_model, nat_gateway_count,
    pool_facts_from_node_group_inputs, pool_facts_from_spec, team_costs, unit_prices,
)
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.spec.errors import SpecError
from tests.support.stacks import AS_OF, on_kubernetes, stack_platform, without_services

DAY = date.fromisoformat(AS_OF)  # the control plane's price depends on the day (EKS support windows)


def spec_of(stack: str, **changes):
    platform = stack_platform(stack)
    platform.update(changes)
    if changes.get("modelCache", {}).get("enabled") is False:
        without_services(platform)  # services read their weights from the cache
    return parse_platform(platform)


def pool(types=("g5.xlarge",), capacity=ON_DEMAND, lo=0, hi=4, name="p"):
    return PoolFacts(name, tuple(types), capacity, lo, hi)


def fixed_item(spec, key):
    return next(f for f in fixed_items_from_spec(spec, Pricing.from_spec(spec.pricing), DAY) if f.key == key)


# --- catalog figures the literals below rely on ---

def test_literals_match_the_catalog():
    assert (catalog.INSTANCE_TYPES["g5.xlarge"].price.usd_per_hour, catalog.INSTANCE_TYPES["p5.48xlarge"].price.usd_per_hour,
            catalog.HOURS_PER_MONTH, catalog.DEFAULT_SPOT_DISCOUNT) == (1.006, 55.04, 730, 0.60)


# --- pools ---

def test_on_demand_pool_at_max_size():
    assert estimate_pool(pool(), Pricing()).monthly_at_max == pytest.approx(1.006 * 4 * 730)


def test_pool_hourly_at_max_size():
    assert estimate_pool(pool(lo=1, hi=3), Pricing()).hourly_at_max == pytest.approx(1.006 * 3)


def test_pool_floor_at_min_size():
    assert estimate_pool(pool(lo=2), Pricing()).monthly_at_min == pytest.approx(1.006 * 2 * 730)


def test_zero_min_pool_floor_is_zero():
    assert estimate_pool(pool(lo=0), Pricing()).monthly_at_min == 0


def test_spot_uses_the_default_discount():
    assert estimate_pool(pool(capacity=SPOT), Pricing()).monthly_at_max == pytest.approx(1.006 * (1 - 0.60) * 4 * 730)


def test_spot_uses_the_stack_discount():
    est = estimate_pool(pool(capacity=SPOT), Pricing(spot_discount=0.5))
    assert est.usd_per_node_hour == pytest.approx(1.006 * 0.5)


def test_spot_discount_per_instance_type_wins():
    pricing = Pricing(spot_discount=0.5, spot_discounts={"g5.xlarge": 0.7})
    assert estimate_pool(pool(capacity=SPOT), pricing).usd_per_node_hour == pytest.approx(1.006 * 0.3)


def test_spot_discount_of_another_type_does_not_apply():
    pricing = Pricing(spot_discounts={"g5.2xlarge": 0.9})
    assert estimate_pool(pool(capacity=SPOT), pricing).usd_per_node_hour == pytest.approx(1.006 * 0.4)


def test_on_demand_pool_ignores_spot_discounts():
    pricing = Pricing(spot_discount=0.5, spot_discounts={"g5.xlarge": 0.7})
    assert estimate_pool(pool(), pricing).usd_per_node_hour == 1.006


def test_price_override_replaces_the_catalog():
    est = estimate_pool(pool(), Pricing(on_demand_usd_per_hour={"g5.xlarge": 0.9}))
    assert (est.monthly_at_max, est.on_demand.source) == (pytest.approx(0.9 * 4 * 730), OVERRIDE_SOURCE)


def test_price_override_is_discounted_for_spot():
    pricing = Pricing(on_demand_usd_per_hour={"g5.xlarge": 0.9})
    assert estimate_pool(pool(capacity=SPOT), pricing).usd_per_node_hour == pytest.approx(0.9 * 0.4)


def test_pool_is_priced_at_its_first_instance_type():
    est = estimate_pool(pool(types=("g5.2xlarge", "g5.xlarge")), Pricing())
    assert est.usd_per_node_hour == 1.212  # g5.2xlarge


def test_per_gpu_hour_divides_by_gpus_per_node():
    assert estimate_pool(pool(types=("p5.48xlarge",)), Pricing()).usd_per_gpu_hour == pytest.approx(55.04 / 8)


def test_unknown_instance_type_is_unpriced_not_guessed():
    est = estimate([pool(types=("x9.huge",), name="odd"), pool(name="known")], [], Pricing())
    assert (est.pools[0].monthly_at_max, est.unpriced, est.monthly_at_max) == (None, ["odd"], pytest.approx(1.006 * 4 * 730))


def test_override_prices_an_unknown_instance_type():
    est = estimate_pool(pool(types=("x9.huge",)), Pricing(on_demand_usd_per_hour={"x9.huge": 2.5}))
    assert est.monthly_at_max == pytest.approx(2.5 * 4 * 730)


def test_system_instance_types_are_priced_from_the_system_table():
    assert estimate_pool(pool(types=("m6i.large",)), Pricing()).usd_per_node_hour == 0.096


# --- pool facts ---

def test_node_group_inputs_spot():
    facts = pool_facts_from_node_group_inputs({
        "nodeGroupName": "gpu-dev-a10g-spot", "instanceTypes": ["g5.xlarge", "g5.2xlarge"], "capacityType": "SPOT",
        "scalingConfig": {"minSize": 0, "maxSize": 4, "desiredSize": 0}, "labels": {names.POOL_LABEL: "a10g-spot"}})
    assert facts == PoolFacts("a10g-spot", ("g5.xlarge", "g5.2xlarge"), SPOT, 0, 4)


def test_node_group_inputs_default_to_on_demand_and_group_name():
    facts = pool_facts_from_node_group_inputs({
        "nodeGroupName": "gpu-prod-system", "instanceTypes": ["m6i.xlarge"], "scalingConfig": {"minSize": 3, "maxSize": 6}})
    assert facts == PoolFacts("gpu-prod-system", ("m6i.xlarge",), ON_DEMAND, 3, 6)


def test_node_group_inputs_without_instance_types_are_refused():
    with pytest.raises(ValueError, match="instanceTypes"):
        pool_facts_from_node_group_inputs({"nodeGroupName": "g", "scalingConfig": {"minSize": 0, "maxSize": 1}})


def test_pool_facts_from_spec():
    assert pool_facts_from_spec(spec_of("dev")) == [PoolFacts("a10g-spot", ("g5.xlarge", "g5.2xlarge"), SPOT, 0, 4)]


# --- fixed platform items ---

def test_eks_control_plane_of_a_created_cluster():
    assert fixed_item(spec_of("prod"), "eksControlPlane").monthly_at_max == pytest.approx(0.10 * 730)


def test_eks_control_plane_of_an_adopted_cluster_is_listed_but_not_charged():
    platform = stack_platform("dev")
    platform["cluster"].pop("create")
    platform["cluster"]["existing"] = {"subnetIds": ["subnet-0a1b2c3d"]}
    item = fixed_item(parse_platform(platform), "eksControlPlane")
    assert (item.included, item.monthly_at_max, "adopted" in item.note) == (False, 0.0, True)


def test_prod_has_one_nat_gateway_per_zone():
    assert fixed_item(spec_of("prod"), "natGateways").monthly_at_min == pytest.approx(3 * 0.045 * 730)


def test_prod_single_nat_gateway_when_asked():
    platform = stack_platform("prod")
    platform["cluster"]["create"]["vpc"]["singleNatGateway"] = True
    assert nat_gateway_count(parse_platform(platform)) == 1


def test_dev_has_one_nat_gateway():
    assert nat_gateway_count(spec_of("dev")) == 1


def test_dev_nat_gateway_per_zone_when_asked():
    platform = stack_platform("dev")
    platform["cluster"]["create"]["vpc"]["singleNatGateway"] = False
    assert nat_gateway_count(parse_platform(platform)) == 3


def test_existing_subnets_create_no_nat_gateway():
    platform = stack_platform("prod")
    platform["cluster"]["create"].pop("vpc")
    platform["cluster"]["create"]["subnetIds"] = ["subnet-0a1b2c3d", "subnet-0e1f2a3b"]
    without_services(platform)  # its load balancer admits the VPC the stack creates
    item = fixed_item(parse_platform(platform), "natGateways")
    assert (item.included, item.monthly_at_max) == (False, 0.0)


def test_system_nodes_at_min_and_max_size():
    item = fixed_item(spec_of("prod"), "systemNodes")  # m6i.xlarge $0.192/h, 3..6 nodes
    assert (item.monthly_at_min, item.monthly_at_max) == (pytest.approx(0.192 * 3 * 730), pytest.approx(0.192 * 6 * 730))


def test_system_nodes_of_unknown_type_are_unpriced():
    platform = stack_platform("dev")
    platform["cluster"]["create"]["systemNodes"]["instanceTypes"] = ["c7g.large"]
    spec = parse_platform(platform)
    est = estimate_spec(spec)
    assert (fixed_item(spec, "systemNodes").monthly_at_min, est.unpriced) == (None, ["System nodes"])


def test_system_nodes_of_unknown_type_priced_by_override():
    platform = stack_platform("dev")
    platform["cluster"]["create"]["systemNodes"]["instanceTypes"] = ["c7g.large"]
    platform["pricing"] = {"onDemandUsdPerHour": {"c7g.large": 0.0725}}
    assert fixed_item(parse_platform(platform), "systemNodes").monthly_at_min == pytest.approx(0.0725 * 2 * 730)


def test_efs_storage_at_the_stated_size():
    assert fixed_item(spec_of("prod"), "efsModelCache").monthly_at_min == pytest.approx(2000 * 0.30)


def test_no_efs_item_without_the_model_cache():
    spec = spec_of("dev", modelCache={"enabled": False})
    assert "efsModelCache" not in [f.key for f in fixed_items_from_spec(spec, Pricing())]


def test_ebs_root_volumes_at_min_and_max():
    item = fixed_item(spec_of("prod"), "ebsRootVolumes")
    # system 50 GiB x 3..6; h100-mig and a100-train 500 GiB x 0..2; l4-inference 200 GiB x 1..6
    assert (item.monthly_at_min, item.monthly_at_max) == (
        pytest.approx((50 * 3 + 200 * 1) * 0.08), pytest.approx((50 * 6 + 500 * 2 + 500 * 2 + 200 * 6) * 0.08))


def test_fixed_price_override():
    spec = spec_of("prod", pricing={"eksControlPlaneUsdPerHour": 0.60})
    item = fixed_item(spec, "eksControlPlane")
    assert (item.monthly_at_min, item.price.source) == (pytest.approx(0.60 * 730), OVERRIDE_SOURCE)


# --- the datasets file system (FSx for Lustre) ---

def with_datasets(**fsx):
    platform = stack_platform("dev")
    platform["datasets"] = {"fsxLustre": {"addonVersion": "v1.7.0-eksbuild.1", **fsx}}
    return parse_platform(platform)


def test_fsx_literals_match_the_catalog():
    prices = {k: {t: p.usd_per_hour for t, p in d.prices.items()} for k, d in catalog.FSX_LUSTRE_DEPLOYMENTS.items()}
    assert prices == {"PERSISTENT_2": {125: 0.145, 250: 0.21, 500: 0.34, 1000: 0.60},
                      "PERSISTENT_1": {50: 0.145, 100: 0.20, 200: 0.29}, "SCRATCH_2": {0: 0.14}}
    assert not any(p.verified for d in catalog.FSX_LUSTRE_DEPLOYMENTS.values() for p in d.prices.values())


def test_prod_datasets_are_priced_as_provisioned_storage_at_their_tier():
    item = fixed_item(spec_of("prod"), "fsxDatasets")  # PERSISTENT_2, 4800 GiB at 250 MB/s/TiB
    assert (item.label, item.unit, item.quantity_at_min, item.quantity_at_max) == (
        "FSx for Lustre datasets", "GB-month", 4800, 4800)
    assert (item.monthly_at_min, item.monthly_at_max) == (pytest.approx(4800 * 0.21), pytest.approx(4800 * 0.21))
    assert item.price.source.startswith("AWS FSx for Lustre pricing page") and item.price.as_of == "2025-06"
    assert item.note == "PERSISTENT_2, 250 MB/s/TiB; billed as provisioned"


@pytest.mark.parametrize("fsx, monthly, note", [
    ({}, 1200 * 0.145, "PERSISTENT_2, 125 MB/s/TiB; billed as provisioned"),  # the lowest tier by default
    ({"throughputPerTiB": 1000, "storageCapacityGiB": 2400}, 2400 * 0.60,
     "PERSISTENT_2, 1000 MB/s/TiB; billed as provisioned"),
    ({"deploymentType": "PERSISTENT_1", "throughputPerTiB": 200}, 1200 * 0.29,
     "PERSISTENT_1, 200 MB/s/TiB; billed as provisioned"),
    ({"deploymentType": "SCRATCH_2"}, 1200 * 0.14, "SCRATCH_2; billed as provisioned"),
])
def test_each_deployment_type_and_tier_has_its_price(fsx, monthly, note):
    item = fixed_item(with_datasets(**fsx), "fsxDatasets")
    assert (item.monthly_at_max, item.note) == (pytest.approx(monthly), note)


def test_no_fsx_item_without_datasets():
    assert "fsxDatasets" not in [f.key for f in fixed_items_from_spec(spec_of("dev"), Pricing(), DAY)]


def test_the_stack_can_price_fsx_itself():
    spec = spec_of("prod", pricing={"fsxLustreUsdPerGbMonth": 0.18})
    item = fixed_item(spec, "fsxDatasets")
    assert (item.monthly_at_max, item.price.source, item.price.as_of) == (pytest.approx(4800 * 0.18), OVERRIDE_SOURCE,
                                                                          "stack")


def test_a_negative_fsx_price_is_refused_naming_the_field():
    with pytest.raises(SpecError) as err:
        spec_of("prod", pricing={"fsxLustreUsdPerGbMonth": -0.1})
    assert [p for p in err.value.problems if p.startswith("pricing.fsxLustreUsdPerGbMonth")]


def test_an_unknown_fsx_type_is_unpriced_not_guessed():
    item = fsx_lustre_item("SCRATCH_1", None, 1200, Pricing())
    assert (item.price, item.monthly_at_max) == (None, None)
    assert estimate([], [item], Pricing()).unpriced == ["FSx for Lustre datasets"]


def test_prod_total_at_max_is_the_sum_of_its_parts():
    pools = (55.04 * 2 + 21.96 * 2 + 0.9776 * 6) * 730                  # h100-mig, a100-train, l4-inference
    fixed = (0.10 * 730 + 3 * 0.045 * 730 + 0.192 * 6 * 730 + 2000 * 0.30
             + (50 * 6 + 500 * 2 + 500 * 2 + 200 * 6) * 0.08 + 4800 * 0.21  # ... EBS, FSx datasets
             + 55 * 730 / 24 * 0.50 + 55 * 365 * 0.03  # CloudWatch Logs: 55 GB/day ingested, kept 365 days
             + (10 + 2) * 0.08)  # Prometheus' and Alertmanager's gp3 volumes
    assert estimate_spec(spec_of("prod"), DAY).monthly_at_max == pytest.approx(pools + fixed)


def test_fsx_backups_and_s3_requests_are_named_as_not_included():
    assert "FSx for Lustre backups and S3 requests of its data repository association" in EXCLUSIONS


# --- the control plane by EKS support window ---

def control_plane(platform: dict, day: date):
    spec = parse_platform(platform, day)
    return next(f for f in fixed_items_from_spec(spec, Pricing.from_spec(spec.pricing), day) if f.key == "eksControlPlane")


def test_control_plane_in_standard_support_costs_the_standard_rate():
    item = control_plane(stack_platform("prod"), DAY)  # 1.35: standard support until 2027-03-27
    assert (item.price.usd, item.monthly_at_max, item.price.source) == (
        0.10, pytest.approx(73.0), "AWS EKS pricing page (standard support)")


def test_1_33_on_2026_11_23_prices_the_control_plane_at_the_extended_rate():
    item = control_plane(on_kubernetes("prod", "1.33"), DAY)  # standard support ended 2026-07-29
    assert (item.price.usd, item.monthly_at_max, item.price.source) == (
        0.60, pytest.approx(438.0), "AWS EKS pricing page (extended support)")


@pytest.mark.parametrize("day, usd", [(date(2027, 3, 26), 0.10), (date(2027, 3, 27), 0.60)])
def test_the_price_changes_on_the_day_standard_support_ends(day, usd):
    assert control_plane(stack_platform("dev"), day).price.usd == usd


def test_a_stack_override_wins_over_the_window():
    platform = on_kubernetes("dev", "1.33")
    platform["pricing"] = {"eksControlPlaneUsdPerHour": 0.10}
    assert control_plane(platform, DAY).price == Quote(0.10, OVERRIDE_SOURCE, "stack")


def test_the_estimate_total_follows_the_window():
    standard = estimate_spec(parse_platform(on_kubernetes("dev", "1.34")), DAY)
    extended = estimate_spec(parse_platform(on_kubernetes("dev", "1.33")), DAY)
    assert extended.monthly_at_max - standard.monthly_at_max == pytest.approx(365.0)


# --- totals, budget, sources ---

DEV_LOGS = 9 * 730 / 24 * 0.50 + 9 * 7 * 0.03  # 2 + 5 + 2 GB/day to CloudWatch Logs, kept 7 days
DEV_METRICS = (10 + 2) * 0.08  # Prometheus' and Alertmanager's gp3 volumes, at min and max alike


def test_dev_total_at_max_is_the_sum_of_its_parts():
    dev = estimate_spec(spec_of("dev"), DAY)
    pools = 1.006 * 0.4 * 4 * 730                                   # a10g-spot, spot, 4 x g5.xlarge
    fixed = 0.10 * 730 + 0.045 * 730 + 0.096 * 3 * 730 + 200 * 0.30 + (50 * 3 + 200 * 4) * 0.08 + DEV_LOGS + DEV_METRICS
    assert dev.monthly_at_max == pytest.approx(pools + fixed)


def test_dev_total_at_min_is_the_platform_floor():
    dev = estimate_spec(spec_of("dev"), DAY)  # the GPU pool scales to zero
    assert dev.monthly_at_min == pytest.approx(0.10 * 730 + 0.045 * 730 + 0.096 * 2 * 730 + 200 * 0.30 + 50 * 2 * 0.08
                                               + DEV_LOGS + DEV_METRICS)


def test_hourly_total_is_monthly_over_730():
    prod = estimate_spec(spec_of("prod"))
    assert prod.hourly_at_max * 730 == pytest.approx(prod.monthly_at_max)


def test_budget_headroom_positive_within_budget():
    budget = Budget(4000, 1627.10)
    assert (budget.headroom_at_max, budget.within_budget) == (pytest.approx(2372.90), True)


def test_budget_headroom_negative_over_budget():
    budget = Budget(1000, 1627.10)
    assert (budget.headroom_at_max, budget.within_budget) == (pytest.approx(-627.10), False)


def test_budget_from_the_spec_uses_the_ceiling():
    est = estimate_spec(spec_of("prod"))
    assert est.budget.headroom_at_max == pytest.approx(150000 - est.monthly_at_max)


def test_no_budget_no_headroom():
    platform = stack_platform("dev")
    platform.pop("budget")
    assert estimate_spec(parse_platform(platform)).budget is None


def test_prices_dated_by_the_oldest_catalog_figure():
    assert estimate_spec(spec_of("dev")).prices_as_of == "2025-06"


def test_override_is_named_among_the_sources():
    spec = spec_of("dev", pricing={"onDemandUsdPerHour": {"g5.xlarge": 0.9}})
    assert OVERRIDE_SOURCE in [q.source for q in estimate_spec(spec).sources]


# --- units, teams, alerts ---

def test_time_sliced_unit_is_a_quarter_gpu_hour():
    # dev: g5.xlarge, 1 GPU x 4 replicas = 4 units per node
    assert unit_prices(spec_of("dev"))[names.GPU_RESOURCE].on_demand_usd_per_hour == pytest.approx(1.006 / 4)


def test_mig_slice_costs_its_compute_share_of_a_gpu_hour():
    prices = unit_prices(spec_of("prod"))  # p5.48xlarge: 8 GPUs
    assert (prices[names.mig_resource("1g.10gb")].on_demand_usd_per_hour,
            prices[names.mig_resource("3g.40gb")].on_demand_usd_per_hour) == (
        pytest.approx(55.04 / 8 * 1 / 7), pytest.approx(55.04 / 8 * 3 / 7))


def test_mig_single_strategy_slices_priced_as_gpu_units():
    platform = stack_platform("prod")
    platform["nodePools"][0]["sharing"] = {"mode": "mig", "strategy": "single", "layout": {"1g.10gb": 7}}
    platform["teams"] = [{"name": "research", "quota": {"gpus": 4, "cpu": "8", "memory": "8Gi"}}]
    gpu = unit_prices(parse_platform(platform))[names.GPU_RESOURCE]
    # 16 x (p4d 8 GPUs x 2) + 6 x (g6.2xlarge x 6) + 112 slices of 1/7 H100-hour (8 GPUs x 7 x 2 nodes)
    expected = (16 * 21.96 / 8 + 6 * 0.9776 + 112 * 55.04 / 8 / 7) / (16 + 6 + 112)
    assert (gpu.capacity_at_max, gpu.on_demand_usd_per_hour) == (134, pytest.approx(expected))


def test_gpu_unit_is_capacity_weighted_across_pools():
    gpu = unit_prices(spec_of("prod"))[names.GPU_RESOURCE]
    # a100-train: 16 GPUs at 21.96/8; l4-inference: 6 GPUs at 0.9776
    assert gpu.on_demand_usd_per_hour == pytest.approx((16 * 21.96 / 8 + 6 * 0.9776) / 22)


def test_unit_spot_price_applies_the_discount():
    assert unit_prices(spec_of("dev"))[names.GPU_RESOURCE].spot_usd_per_hour == pytest.approx(1.006 * 0.4 / 4)


def test_team_share_of_time_sliced_capacity():
    research = team_costs(spec_of("dev"))[0]  # 8 units of 16 (4 nodes x 4 replicas)
    assert (research.shares[0].quota, research.shares[0].capacity_at_max, research.shares[0].share) == (8, 16, 0.5)


def test_team_quota_cost_fully_used():
    research = team_costs(spec_of("dev"))[0]
    assert (research.on_demand_monthly, research.spot_monthly) == (
        pytest.approx(8 * 1.006 / 4 * 730), pytest.approx(8 * 1.006 * 0.4 / 4 * 730))


def test_team_mig_quota_cost():
    research = team_costs(spec_of("prod"))[0]
    slices = {s.resource: s for s in research.shares}[names.mig_resource("1g.10gb")]
    assert (slices.share, slices.on_demand_monthly) == (16 / 32, pytest.approx(16 * 55.04 / 8 / 7 * 730))


def test_gpu_hourly_cost_by_model_at_the_pool_capacity_type():
    assert gpu_hourly_cost_by_model(spec_of("dev")) == {"NVIDIA A10G": pytest.approx(1.006 * 0.4)}


def test_gpu_hourly_cost_by_model_takes_the_dearest_pool():
    platform = stack_platform("dev")
    platform["nodePools"].append({**platform["nodePools"][0], "name": "a10g-od", "capacityType": "on-demand"})
    assert gpu_hourly_cost_by_model(parse_platform(platform)) == {"NVIDIA A10G": 1.006}


# --- pricing overrides are checked where they are written ---

@pytest.mark.parametrize("pricing, path", [
    ({"spotDiscounts": {"g5.xlarg": 0.5}}, 'pricing.spotDiscounts["g5.xlarg"]'),
    ({"spotDiscounts": {"g5.xlarge": 1.2}}, 'pricing.spotDiscounts["g5.xlarge"]'),
    ({"onDemandUsdPerHour": {"g5.xlarge": 0}}, 'pricing.onDemandUsdPerHour["g5.xlarge"]'),
])
def test_bad_pricing_override_names_the_field(pricing, path):
    with pytest.raises(SpecError) as err:
        spec_of("dev", pricing=pricing)
    assert [p for p in err.value.problems if p.startswith(path)]


# --- reserved capacity: Capacity Blocks are paid up front for their window, ODCRs bill their instances ---

def test_block_literals_match_the_catalog():
    assert catalog.CAPACITY_BLOCK_PRICES["p6-b200.48xlarge"].usd_per_hour == 82.368
    assert catalog.INSTANCE_TYPES["p6-b200.48xlarge"].price.usd_per_hour == 113.9328


def _blackwell_pool(name: str, day: date):
    from tests.support.stacks import spec_of as stack_spec

    spec = stack_spec("training-blackwell")
    facts = next(f for f in pool_facts_from_spec(spec, day) if f.name == name)
    return estimate_pool(facts, Pricing.from_spec(spec.pricing))


@pytest.mark.parametrize("day, hours", [(date(2026, 11, 23), 348.5), (date(2026, 12, 2), 323.5), (date(2027, 1, 2), 0)])
def test_a_block_is_priced_for_its_hours_in_the_month_at_min_and_max_alike(day, hours):
    est = _blackwell_pool("b200-train", day)  # 4 instances, window 2026-11-16 11:30 to 2026-12-14 11:30 UTC
    assert est.monthly_at_min == est.monthly_at_max == pytest.approx(4 * 82.368 * hours)
    assert est.usd_per_node_hour == 82.368 and est.usd_per_gpu_hour == pytest.approx(82.368 / 8)
    assert est.hourly_at_max == pytest.approx(4 * 82.368 * hours / 730)


def test_a_block_rate_override_wins_over_the_catalog():
    facts = PoolFacts("b200", ("p6-b200.48xlarge",), "capacity-block", 0, 2, 2, 100.0)
    est = estimate_pool(facts, Pricing(capacity_block_usd_per_hour={"p6-b200.48xlarge": 70.0}))
    assert est.monthly_at_max == pytest.approx(2 * 70.0 * 100) and est.block.source == OVERRIDE_SOURCE


def test_a_block_without_a_known_rate_is_unpriced_not_guessed():
    facts = PoolFacts("p4d-block", ("p4d.24xlarge",), "capacity-block", 0, 2, 2, 100.0)
    est = estimate([facts], [], Pricing())
    assert est.pools[0].monthly_at_max is None and est.unpriced == ["p4d-block"]


def test_an_odcr_bills_its_reserved_instances_whether_nodes_run_or_not():
    est = _blackwell_pool("rtx-serve", date(2026, 11, 23))  # g7e.12xlarge, instanceCount 2, 2 nodes
    assert est.monthly_at_min == est.monthly_at_max == pytest.approx(2 * 8.28608 * 730)
    facts = PoolFacts("odcr", ("g7e.12xlarge",), ON_DEMAND, 0, 4, 2)
    est = estimate_pool(facts, Pricing())
    assert (est.hourly_at_min, est.hourly_at_max) == (pytest.approx(2 * 8.28608), pytest.approx(4 * 8.28608))


def test_a_block_node_group_read_back_is_priced_at_its_templates_type_and_the_plans_hours():
    inputs = {"capacityType": "CAPACITY_BLOCK", "labels": {names.POOL_LABEL: "b200-train"},
              "scalingConfig": {"minSize": 0, "maxSize": 4}}
    facts = pool_facts_from_node_group_inputs(inputs, ("p6-b200.48xlarge",),
                                              {"b200-train": {"hours": 348.5, "instances": 4}})
    assert facts == PoolFacts("b200-train", ("p6-b200.48xlarge",), "capacity-block", 0, 4, 4, 348.5)
    whole_month = pool_facts_from_node_group_inputs(inputs, ("p6-b200.48xlarge",))
    assert estimate_pool(whole_month, Pricing()).monthly_at_max == pytest.approx(4 * 82.368 * 730)


def test_team_figures_use_a_blocks_rate():
    from tests.support.stacks import spec_of as stack_spec

    price = unit_prices(stack_spec("training-blackwell"))[names.GPU_RESOURCE]
    assert price.on_demand_usd_per_hour == price.spot_usd_per_hour == pytest.approx(82.368 / 8)


# --- Capacity Blocks: one fee, charged up front, and its amortised share ---

B200 = 82.368  # catalog Capacity Block rate of p6-b200.48xlarge, USD per instance-hour (2026-06)


def block(window_hours=672.0, hours_in_month=348.5, month="2026-11", quote=None, name="blk"):
    return PoolFacts(name, ("p6-b200.48xlarge",), "capacity-block", 0, 4, 4, hours_in_month, window_hours, month, quote)


def test_a_block_is_shown_amortised_but_budgeted_at_its_whole_fee_in_its_charge_month():
    est = estimate([block(), pool()], [], Pricing(), budget_monthly_usd=200000)
    b = est.pools[0]
    assert b.monthly_at_max == pytest.approx(B200 * 4 * 348.5)  # amortised: the window's hours in the month
    assert b.block_fee == pytest.approx(B200 * 4 * 672)  # charged once, up front
    assert est.charges == {"2026-11": pytest.approx(B200 * 4 * 672)} and est.charge_month == "2026-11"
    assert est.charge_month_at_max == pytest.approx(B200 * 4 * 672 + 1.006 * 4 * 730)
    assert est.budget.monthly_at_max == est.charge_month_at_max and not est.budget.within_budget


def test_fees_of_blocks_charged_in_different_months_are_not_added():
    est = estimate([block(month="2026-11"), block(month="2026-12", window_hours=168, name="b2")], [], Pricing())
    assert est.charge_month == "2026-11" and est.charge_month_at_max == pytest.approx(B200 * 4 * 672)


def test_a_quoted_rate_prices_the_block_with_its_date():
    quote = Quote(98.84, "stack file (reservation cr-0 quotedUsdPerHour)", "2026-11-20")
    b = estimate_pool(block(quote=quote), Pricing(capacity_block_usd_per_hour={"p6-b200.48xlarge": 1.0}))
    assert b.quote == quote and b.block_fee == pytest.approx(98.84 * 4 * 672)


def test_the_stack_gives_a_blocks_quote_and_its_charge_month():
    platform = stack_platform("training-blackwell")
    r = next(p for p in platform["nodePools"] if p["capacityType"] == "capacity-block")["reservation"]
    r.update(quotedUsdPerHour=98.84, quotedOn="2026-10-30")
    facts = next(f for f in pool_facts_from_spec(parse_platform(platform), DAY) if f.capacity_type == "capacity-block")
    assert facts.quote == Quote(98.84, f"stack file (reservation {r['id']} quotedUsdPerHour)", "2026-10-30")
    assert facts.charge_month == "2026-10" and facts.window_hours == 672
    del r["quotedUsdPerHour"], r["quotedOn"]
    facts = next(f for f in pool_facts_from_spec(parse_platform(platform), DAY) if f.capacity_type == "capacity-block")
    assert facts.quote is None and facts.charge_month == "2026-11"  # the block's start month


@pytest.mark.parametrize("as_of, warned", [(date(2026, 8, 30), False), (date(2026, 8, 31), True)])
def test_a_catalog_block_rate_older_than_90_days_is_named(as_of, warned):
    from gpu_platform.decisions.cost import stale_block_rates

    found = stale_block_rates(estimate([block()], [], Pricing()), as_of)
    assert bool(found) == warned
    if warned:
        assert found[0].startswith("blk: ") and "2026-06" in found[0] and "quotedUsdPerHour" in found[0]


def test_a_quoted_block_rate_is_never_stale():
    from gpu_platform.decisions.cost import stale_block_rates

    quote = Quote(98.84, "stack file (reservation cr-0 quotedUsdPerHour)", "2025-01-01")
    assert stale_block_rates(estimate([block(quote=quote)], [], Pricing()), date(2026, 11, 23)) == []


# --- CloudWatch Logs: the logging section's volumes, counted in the totals ---

def test_the_log_pipeline_s_ingestion_and_storage_are_fixed_items():
    spec = spec_of("prod")  # 10 + 20 + 15 + 10 GB/day, kept 365 days
    ingest, storage = fixed_item(spec, "cloudwatchLogsIngestion"), fixed_item(spec, "cloudwatchLogsStorage")
    assert ingest.quantity_at_max == pytest.approx(55 * 730 / 24) and storage.quantity_at_max == 55 * 365
    assert ingest.monthly_at_max == pytest.approx(55 * 730 / 24 * 0.50)
    assert storage.monthly_at_max == pytest.approx(55 * 365 * 0.03)


def test_the_logs_count_in_the_totals_and_the_budget():
    on = estimate_spec(spec_of("prod"), DAY)
    off = estimate_spec(spec_of("prod", logging={"enabled": False}), DAY)
    logs = 55 * 730 / 24 * 0.50 + 55 * 365 * 0.03
    assert on.monthly_at_max - off.monthly_at_max == pytest.approx(logs)
    assert on.budget.monthly_at_max - off.budget.monthly_at_max == pytest.approx(logs)


def test_a_stack_without_a_log_pipeline_has_no_log_items():
    spec = spec_of("prod", logging={"enabled": False})
    keys = {f.key for f in fixed_items_from_spec(spec, Pricing.from_spec(spec.pricing), DAY)}
    assert not keys & {"cloudwatchLogsIngestion", "cloudwatchLogsStorage"}


# --- warm capacity: held nodes raise the floor, never the ceiling ---

def warm_dev(nodes: int, min_size: int = 0):
    pool = {"minSize": min_size, "sharing": {"mode": "time-slicing", "replicas": 4, "failRequestsGreaterThanOne": False}}
    platform = stack_platform("dev")
    platform["nodePools"][0].update(pool, **({"warm": {"nodes": nodes}} if nodes else {}))
    return estimate_spec(parse_platform(platform), DAY)


def test_warm_nodes_are_priced_as_running_nodes_and_raise_the_floor():
    plain, held = warm_dev(0).pools[0], warm_dev(2).pools[0]  # a10g-spot: g5.xlarge spot at 60% off
    node_month = 1.006 * 0.4 * 730
    assert held.warm_monthly == pytest.approx(2 * node_month)
    assert (plain.monthly_at_min, held.monthly_at_min) == (0, pytest.approx(2 * node_month))
    assert held.monthly_at_max == plain.monthly_at_max  # at max size the pool is at maxSize either way


def test_a_floor_above_the_warm_nodes_is_unchanged():
    assert warm_dev(1, min_size=2).pools[0].monthly_at_min == pytest.approx(2 * 1.006 * 0.4 * 730)


def test_warm_nodes_leave_the_budget_at_max_size_as_it_was():
    assert warm_dev(3).budget.monthly_at_max == pytest.approx(warm_dev(0).budget.monthly_at_max)
