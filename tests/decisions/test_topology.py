"""Which pools Kueue places multi-node jobs on by network topology (decisions/topology.py), the stack-file
rules for `nodePools[].topology`, and what a job landing on several pools asks for."""
import pytest

from gpu_platform.decisions import topology as t
from gpu_platform.decisions.queueing import gpu_flavors
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.spec.errors import SpecError
from tests.support.stacks import spec_of, stack_platform


def pool_of(spec, name):
    return next(p for p in spec.node_pools if p.name == name)


def prod_with(edit):
    platform = stack_platform("prod")
    edit({p["name"]: p for p in platform["nodePools"]}, platform)
    return platform


def problems(platform) -> list[str]:
    with pytest.raises(SpecError) as err:
        parse_platform(platform)
    return err.value.problems


def test_the_topology_is_the_three_network_layers_then_the_node():
    assert t.topology_levels() == ["topology.k8s.aws/network-node-layer-1", "topology.k8s.aws/network-node-layer-2",
                                   "topology.k8s.aws/network-node-layer-3", "kubernetes.io/hostname"]


def test_an_efa_pool_of_a_described_type_prefers_the_finest_layer_by_default():
    spec = spec_of("prod")
    assert t.pool_topology(pool_of(spec, "a100-train")) == t.PoolTopology("preferred", "network-node-layer-3")
    assert t.pool_topology(pool_of(spec, "a100-train")).label == "topology.k8s.aws/network-node-layer-3"


def test_pools_without_efa_schedule_without_topology_by_default():
    spec = spec_of("prod")  # h100-mig is a p5 (described) but has no EFA; g6 is not described at all
    assert t.pool_topology(pool_of(spec, "h100-mig")) is None
    assert t.pool_topology(pool_of(spec, "l4-inference")) is None


def test_a_pool_may_require_a_level_or_opt_out():
    def edit(pools, _):
        pools["a100-train"]["topology"] = {"placement": "required", "level": "network-node-layer-2"}
        pools["h100-mig"]["topology"] = {"placement": "preferred"}
    spec = parse_platform(prod_with(edit))
    required = t.pool_topology(pool_of(spec, "a100-train"))
    assert (required.placement, required.label, required.annotation) == (
        "required", "topology.k8s.aws/network-node-layer-2", names.KUEUE_REQUIRED_TOPOLOGY_ANNOTATION)
    assert t.pool_topology(pool_of(spec, "h100-mig")) == t.PoolTopology("preferred", "network-node-layer-3")

    def off(pools, _):
        pools["a100-train"]["topology"] = {"placement": "none"}
    assert t.pool_topology(pool_of(parse_platform(prod_with(off)), "a100-train")) is None


def test_flavors_carry_their_pool_s_topology():
    flavors = {f.name: f.topology for f in gpu_flavors(spec_of("prod"))}
    assert flavors["a100-train"] == t.PoolTopology("preferred", "network-node-layer-3")
    assert flavors["l4-inference"] is None and flavors["h100-mig-1g.10gb"] is None


def test_a_pool_of_a_type_ec2_does_not_describe_is_refused_a_placement():
    def edit(pools, _):
        pools["l4-inference"]["topology"] = {"placement": "required"}
    found = problems(prod_with(edit))
    assert len(found) == 1 and found[0].startswith(
        "nodePools[2].topology.placement: EC2 does not describe the network topology of g6.2xlarge, g6.4xlarge")
    assert "p5.48xlarge" in found[0]  # says which types would be valid


def test_placement_none_is_valid_on_any_pool():
    def edit(pools, _):
        pools["l4-inference"]["topology"] = {"placement": "none"}
    assert parse_platform(prod_with(edit))


def test_a_dra_pool_is_refused_a_placement():
    platform = stack_platform("training-ultraserver")
    platform["nodePools"][0]["topology"] = {"placement": "preferred"}
    (found,) = problems(platform)
    assert found.startswith("nodePools[0].topology.placement: Kueue's topology-aware scheduling counts nodes' "
                            "allocatable GPUs and does not see DRA devices")
    assert t.pool_topology(parse_platform(stack_platform("training-ultraserver")).node_pools[0]) is None


def test_a_placement_without_queueing_is_refused():
    platform = stack_platform("dev")
    pool = platform["nodePools"][0]
    pool["topology"] = {"placement": "preferred"}
    assert any(p.startswith("nodePools[0].topology: applies when queueing.mode is kueue") for p in problems(platform))


def test_an_unknown_level_names_the_valid_ones():
    def edit(pools, _):
        pools["a100-train"]["topology"] = {"level": "rack"}
    (found,) = problems(prod_with(edit))
    assert found.startswith("nodePools[1].topology.level:")
    assert all(level in found for level in names.NETWORK_NODE_LAYERS)


def test_every_described_type_is_in_the_catalog():
    assert catalog.TOPOLOGY_INSTANCE_TYPES <= set(catalog.INSTANCE_TYPES)


def test_a_job_asks_only_when_every_pool_it_may_land_on_places_by_topology():
    spec = spec_of("prod")
    train, mig = pool_of(spec, "a100-train"), pool_of(spec, "h100-mig")
    assert t.job_topology([train]) == t.PoolTopology("preferred", "network-node-layer-3")
    assert t.job_topology([train, mig]) is None  # an annotation would keep the job off h100-mig
    assert t.job_topology([]) is None


def test_pools_that_disagree_give_a_preference_at_the_finest_level_named():
    def edit(pools, _):
        pools["a100-train"]["topology"] = {"placement": "required", "level": "network-node-layer-1"}
        pools["h100-mig"]["topology"] = {"placement": "preferred", "level": "network-node-layer-2"}
    spec = parse_platform(prod_with(edit))
    assert t.job_topology([pool_of(spec, "a100-train"), pool_of(spec, "h100-mig")]) == t.PoolTopology(
        "preferred", "network-node-layer-2")
