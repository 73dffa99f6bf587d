"""Karpenter pools on reserved capacity: a Capacity Block and an On-Demand Capacity Reservation selected by id,
held strictly to Karpenter v1.14.1's CRDs (schema and CEL rules), and the controller's ReservedCapacity gate."""
from __future__ import annotations

import pytest

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.facts.karpenter import capacity_type
from gpu_platform.render.karpenter import controller_values, node_class_object, node_pool_object
from gpu_platform.spec.pool_context import PoolContext
from tests.support.blackwell import karpenter_twin
from tests.support.crd_schemas import cel_problems, schema_problems
from tests.support.stacks import cached_plan, resources, spec_of

CRDS = catalog.KARPENTER_RELEASES["1.14.1"].crds
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"


@pytest.fixture(scope="module")
def spec():
    return parse_platform(karpenter_twin())


def objects(spec, name: str) -> tuple[dict, dict]:
    pool = next(p for p in spec.node_pools if p.name == name)
    ctx = PoolContext.of(spec, pool)
    return node_pool_object(ctx, pool), node_class_object(ctx, pool)


def requirement(node_pool: dict, key: str) -> list[str]:
    reqs = node_pool["spec"]["template"]["spec"]["requirements"]
    return next(r["values"] for r in reqs if r["key"] == key)


@pytest.mark.parametrize("pool", ["b200-train", "rtx-serve"])
def test_the_objects_match_karpenters_crds_strictly(spec, pool):
    for obj in objects(spec, pool):
        assert schema_problems(CRDS, obj) == [], obj["kind"]
        assert cel_problems(obj) == [], obj["kind"]


def test_a_block_pool_takes_reserved_capacity_of_its_block_only(spec):
    node_pool, node_class = objects(spec, "b200-train")
    assert requirement(node_pool, names.KARPENTER_CAPACITY_TYPE_LABEL) == ["reserved"]
    assert requirement(node_pool, names.KARPENTER_RESERVATION_TYPE_LABEL) == ["capacity-block"]
    assert node_class["spec"]["capacityReservationSelectorTerms"] == [{"id": "cr-0b2c4d6e8f0a1b3c5"}]
    assert capacity_type(node_pool) == "CAPACITY_BLOCK"


def test_a_block_pool_keeps_its_empty_nodes_by_default(spec):
    node_pool, _ = objects(spec, "b200-train")
    assert node_pool["spec"]["disruption"]["consolidateAfter"] == "Never"


def test_an_odcr_pool_takes_its_reservation_first_then_on_demand(spec):
    node_pool, node_class = objects(spec, "rtx-serve")
    assert requirement(node_pool, names.KARPENTER_CAPACITY_TYPE_LABEL) == ["reserved", "on-demand"]
    assert node_class["spec"]["capacityReservationSelectorTerms"] == [{"id": "cr-0e7e12b0d5a4c3f21"}]
    assert capacity_type(node_pool) == "ON_DEMAND"
    assert node_pool["spec"]["disruption"]["consolidateAfter"] == "10m"


def test_pools_without_a_reservation_select_none():
    spec = spec_of("karpenter")
    for pool in (p for p in spec.node_pools if p.provisioner == "karpenter"):
        node_pool, node_class = objects(spec, pool.name)
        assert "capacityReservationSelectorTerms" not in node_class["spec"]
        assert requirement(node_pool, names.KARPENTER_CAPACITY_TYPE_LABEL) == ["on-demand"]


def test_the_strict_schema_refuses_a_misspelt_selector_term(spec):
    _, node_class = objects(spec, "b200-train")
    node_class["spec"]["capacityReservationSelectorTerms"] = [{"idd": "cr-0b2c4d6e8f0a1b3c5"}]
    assert any("idd" in p for p in schema_problems(CRDS, node_class))


def test_the_crd_refuses_an_id_that_is_not_a_reservation(spec):
    _, node_class = objects(spec, "b200-train")
    node_class["spec"]["capacityReservationSelectorTerms"] = [{"id": "lt-0b2c4d6e8f0a1b3c5"}]
    assert schema_problems(CRDS, node_class)


def test_the_cel_rules_refuse_an_id_beside_other_fields(spec):
    _, node_class = objects(spec, "b200-train")
    node_class["spec"]["capacityReservationSelectorTerms"] = [{"id": "cr-0b2c4d6e8f0a1b3c5", "ownerID": "123456789012"}]
    assert cel_problems(node_class)


def test_the_controller_sets_the_reserved_capacity_gate_only_for_reserved_pools(spec):
    assert controller_values(spec)["settings"]["featureGates"] == {"reservedCapacity": True}
    assert "featureGates" not in controller_values(spec_of("karpenter"))["settings"]


def test_the_twin_plans_with_its_objects_as_rendered(spec):
    plan = cached_plan(karpenter_twin(), stack="karpenter-blackwell")
    by_name = {r["inputs"]["metadata"]["name"]: r["inputs"] for r in resources(plan, NODE_CLASS)}
    assert by_name["b200-train"]["spec"]["capacityReservationSelectorTerms"] == [{"id": "cr-0b2c4d6e8f0a1b3c5"}]
    pools = {r["inputs"]["metadata"]["name"]: r["inputs"] for r in resources(plan, NODE_POOL)}
    assert pools["b200-train"] == {k: v for k, v in objects(spec, "b200-train")[0].items()}
    for obj in (*by_name.values(), *pools.values()):
        assert schema_problems(CRDS, obj) == []
