"""nodePools[].warm: refused where placeholders cannot hold a node, with the path the user wrote."""
from __future__ import annotations

import pytest

from tests.support.stacks import only_spec_problem, spec_problems, stack_platform


def with_warm(stack: str, pool: int, nodes: int = 1, **pool_changes) -> dict:
    p = stack_platform(stack)
    p["nodePools"][pool].update(warm={"nodes": nodes}, **pool_changes)
    return p


def test_the_prod_example_holds_one_inference_node():
    prod = stack_platform("prod")
    assert [(x["name"], x.get("warm")) for x in prod["nodePools"] if x.get("warm")] == [("l4-inference", {"nodes": 1})]
    assert spec_problems(prod) == []


def test_up_to_max_size_is_fine():
    assert spec_problems(with_warm("prod", 2, nodes=6)) == []


def test_more_warm_nodes_than_max_size_are_refused():
    message = only_spec_problem(with_warm("prod", 2, nodes=7), "nodePools[2].warm.nodes")
    assert "exceed maxSize (6)" in message and "hold at most 6" in message


@pytest.mark.parametrize("nodes", [0, -1])
def test_at_least_one_node(nodes):
    only_spec_problem(with_warm("prod", 2, nodes=nodes), "nodePools[2].warm.nodes")


def test_unknown_fields_are_refused():
    p = stack_platform("prod")
    p["nodePools"][2]["warm"] = {"nodes": 1, "replicas": 2}
    assert any(m.startswith("nodePools[2].warm") for m in spec_problems(p))


def test_a_capacity_block_pool_is_refused():
    message = only_spec_problem(with_warm("training-blackwell", 0), "nodePools[0].warm")
    assert "Capacity Block" in message and "reservation.instanceCount" in message


def test_a_dra_pool_is_refused():
    found = spec_problems(with_warm("training-ultraserver", 0))  # a DRA pool on a Capacity Block: both said
    assert [m.split(": ")[0] for m in found] == ["nodePools[0].warm"] * 2
    assert any("ResourceClaims" in m for m in found)


def test_time_slicing_needs_requests_above_one_allowed():
    message = only_spec_problem(with_warm("dev", 0), "nodePools[0].warm")
    assert "failRequestsGreaterThanOne" in message
    allowed = with_warm("dev", 0, sharing={"mode": "time-slicing", "replicas": 4, "failRequestsGreaterThanOne": False})
    assert spec_problems(allowed) == []


def test_a_mig_pool_may_be_warm():
    assert spec_problems(with_warm("mig-slices", 0)) == []
