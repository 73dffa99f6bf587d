"""Which pools' nodes carry the AWS network-layer labels, and the layers a multi-node job prefers to share
(decisions/topology.py)."""
from gpu_platform.decisions import topology as t
from gpu_platform.facts import catalog
from tests.support.stacks import spec_of


def pool_of(spec, name):
    return next(p for p in spec.node_pools if p.name == name)


def test_every_described_type_is_a_catalog_gpu_instance():
    assert catalog.TOPOLOGY_INSTANCE_TYPES <= set(catalog.INSTANCE_TYPES)
    assert {"p4d.24xlarge", "p5.48xlarge", "p6-b200.48xlarge", "g6e.xlarge"} <= catalog.TOPOLOGY_INSTANCE_TYPES
    assert "g6.2xlarge" not in catalog.TOPOLOGY_INSTANCE_TYPES and "g5.xlarge" not in catalog.TOPOLOGY_INSTANCE_TYPES


def test_a_job_on_described_pools_prefers_the_bottom_layer_most():
    spec = spec_of("prod")
    layers = t.proximity_layers([pool_of(spec, "a100-train"), pool_of(spec, "h100-mig")])
    assert layers == [("topology.k8s.aws/network-node-layer-3", 100), ("topology.k8s.aws/network-node-layer-2", 50),
                      ("topology.k8s.aws/network-node-layer-1", 10)]


def test_one_pool_without_the_labels_drops_the_preference():
    spec = spec_of("prod")  # l4-inference is g6: EC2 does not describe its topology
    assert t.proximity_layers([pool_of(spec, "a100-train"), pool_of(spec, "l4-inference")]) == []
    assert t.proximity_layers([]) == []
