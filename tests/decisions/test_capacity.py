"""What Kubernetes can schedule per node, per pool at max size and in total, for every sharing mode."""
import pytest

from gpu_platform.decisions.capacity import node_resources, platform_capacity, team_quota_totals
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import names
from gpu_platform.facts.catalog import INSTANCE_TYPES
from tests.support.stacks import spec_with_pools, stack_platform

AL2023 = {"type": "AL2023_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"}


def pool(name, instances, max_size=3, sharing=None):
    out = {"name": name, "instanceTypes": list(instances), "capacityType": "on-demand", "minSize": 0,
           "maxSize": max_size, "ami": dict(AL2023)}
    if sharing:
        out["sharing"] = sharing
    return out


def gpus(instance):
    return INSTANCE_TYPES[instance].gpu_count


def mig(layout, strategy="mixed"):
    return {"mode": "mig", "strategy": strategy, "layout": layout}


def only_pool(spec):
    (cap,) = platform_capacity(spec).pools
    return cap


@pytest.mark.parametrize("instance", ["g5.xlarge", "g5.12xlarge", "g6e.48xlarge", "p5.48xlarge"])
def test_no_sharing_offers_one_gpu_resource_per_physical_gpu(instance):
    cap = only_pool(spec_with_pools(pool("p", [instance], max_size=5)))
    assert cap.per_node == {names.GPU_RESOURCE: gpus(instance)}
    assert cap.at_max == {names.GPU_RESOURCE: gpus(instance) * 5}


@pytest.mark.parametrize("instance, replicas", [("g5.xlarge", 4), ("g5.12xlarge", 2), ("g6.48xlarge", 64)])
def test_time_slicing_multiplies_gpus_by_replicas(instance, replicas):
    cap = only_pool(spec_with_pools(pool("p", [instance], max_size=4, sharing={"mode": "time-slicing", "replicas": replicas})))
    assert cap.per_node == {names.GPU_RESOURCE: gpus(instance) * replicas}
    assert cap.at_max == {names.GPU_RESOURCE: gpus(instance) * replicas * 4}


def test_time_slicing_does_not_change_the_physical_gpu_count():
    cap = only_pool(spec_with_pools(pool("p", ["g5.12xlarge"], max_size=4, sharing={"mode": "time-slicing", "replicas": 8})))
    assert cap.physical_gpus_max == gpus("g5.12xlarge") * 4


def test_mig_mixed_offers_one_resource_per_profile():
    layout = {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}
    cap = only_pool(spec_with_pools(pool("h", ["p5.48xlarge"], max_size=2, sharing=mig(layout))))
    assert cap.per_node == {names.mig_resource(p): gpus("p5.48xlarge") * n for p, n in layout.items()}
    assert cap.at_max == {names.mig_resource(p): gpus("p5.48xlarge") * n * 2 for p, n in layout.items()}
    assert names.GPU_RESOURCE not in cap.per_node


def test_mig_single_offers_every_slice_as_a_gpu():
    cap = only_pool(spec_with_pools(pool("h", ["p5.48xlarge"], max_size=3, sharing=mig({"1g.10gb": 7}, "single"))))
    assert cap.per_node == {names.GPU_RESOURCE: gpus("p5.48xlarge") * 7}
    assert cap.at_max == {names.GPU_RESOURCE: gpus("p5.48xlarge") * 7 * 3}


def test_mig_zero_counts_offer_nothing():
    cap = only_pool(spec_with_pools(pool("h", ["p5.48xlarge"], sharing=mig({"3g.40gb": 2, "1g.10gb": 0}))))
    assert set(cap.per_node) == {names.mig_resource("3g.40gb")}


def test_profile_names_stay_per_gpu_model():
    """`1g.10gb` is the small slice on A100-80GB and the double-memory one on A100-40GB: both count as their own."""
    spec = spec_with_pools(pool("a40", ["p4d.24xlarge"], max_size=1, sharing=mig({"1g.10gb": 4})),
                   pool("a80", ["p4de.24xlarge"], max_size=1, sharing=mig({"1g.10gb": 7})))
    total = platform_capacity(spec).total
    assert total == {names.mig_resource("1g.10gb"): gpus("p4d.24xlarge") * 4 + gpus("p4de.24xlarge") * 7}


def test_totals_add_up_every_pool_at_max_size():
    spec = spec_with_pools(pool("ts", ["g5.xlarge"], max_size=4, sharing={"mode": "time-slicing", "replicas": 4}),
                   pool("plain", ["g6.12xlarge"], max_size=2),
                   pool("h", ["p5.48xlarge"], max_size=2, sharing=mig({"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2})))
    cap = platform_capacity(spec)
    expected: dict[str, int] = {}
    for p in cap.pools:
        for res, n in p.at_max.items():
            expected[res] = expected.get(res, 0) + n
    assert cap.total == expected
    assert cap.total[names.GPU_RESOURCE] == gpus("g5.xlarge") * 4 * 4 + gpus("g6.12xlarge") * 2


def test_totals_mix_time_slicing_and_single_mig_under_one_gpu_resource():
    spec = spec_with_pools(pool("ts", ["g5.xlarge"], max_size=2, sharing={"mode": "time-slicing", "replicas": 3}),
                   pool("h", ["p5.48xlarge"], max_size=1, sharing=mig({"2g.20gb": 3}, "single")))
    assert platform_capacity(spec).total == {names.GPU_RESOURCE: gpus("g5.xlarge") * 3 * 2 + gpus("p5.48xlarge") * 3}


def test_pools_report_in_spec_order_with_their_gpu_model():
    spec = spec_with_pools(pool("b", ["g6.xlarge"]), pool("a", ["g5.xlarge"]))
    assert [(p.pool, p.gpu) for p in platform_capacity(spec).pools] == [("b", "L4"), ("a", "A10G")]


def test_a_pool_with_several_instance_types_counts_gpus_of_the_first():
    cap = only_pool(spec_with_pools(pool("p", ["g5.xlarge", "g5.2xlarge"], max_size=3)))
    assert cap.per_node == {names.GPU_RESOURCE: gpus("g5.xlarge")}


def test_node_resources_follow_the_strategy_passed_in():
    p = spec_with_pools(pool("h", ["p5.48xlarge"], sharing=mig({"7g.80gb": 1}))).node_pools[0]
    assert node_resources(p, "single") == {names.GPU_RESOURCE: gpus("p5.48xlarge")}
    assert node_resources(p, "mixed") == {names.mig_resource("7g.80gb"): gpus("p5.48xlarge")}


def test_prod_capacity_matches_its_pools():
    spec = parse_platform(stack_platform("prod"))
    cap = platform_capacity(spec)
    by_pool = {p.name: p for p in spec.node_pools}
    h100 = by_pool["h100-mig"]
    for profile, n in h100.sharing.layout.items():
        assert cap.total[names.mig_resource(profile)] == h100.gpus_per_node * n * h100.max_size
    plain = [p for p in spec.node_pools if p.sharing.mode == "none"]
    assert cap.total[names.GPU_RESOURCE] == sum(p.gpus_per_node * p.max_size for p in plain)


def test_dev_capacity_is_time_sliced():
    spec = parse_platform(stack_platform("dev"))
    (p,) = spec.node_pools
    assert platform_capacity(spec).total == {names.GPU_RESOURCE: p.gpus_per_node * p.sharing.replicas * p.max_size}


def test_team_quota_totals_sum_gpus_and_slices_per_resource():
    spec = parse_platform(stack_platform("prod"))
    totals = team_quota_totals(spec)
    assert totals[names.GPU_RESOURCE] == sum(t.quota.gpus for t in spec.teams)
    for team in spec.teams:
        for profile in team.quota.mig_slices:
            assert totals[names.mig_resource(profile)] == sum(t.quota.mig_slices.get(profile, 0) for t in spec.teams)
