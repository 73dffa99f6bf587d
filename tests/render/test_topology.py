"""Topology-aware placement rendered: the Topology and the flavors naming it against the pinned Kueue CRDs
(schema and CEL rules), the controller's feature gate, and the helper's multi-node Jobs asking for a level."""
import copy

import pytest

from gpu_platform.decisions import queueing as q
from gpu_platform.facts import catalog, names
from gpu_platform.render import queueing_objects as o
from tests.support.crd_schemas import schema_problems
from tests.support.kueue_crds import cel_problems, rule_count
from tests.support.stacks import spec_of

CRDS = catalog.KUEUE_RELEASES["0.19.2"].crds


def prod_objects(edit=None):
    spec = spec_of("prod", edit)
    queues = {t.name: q.team_queue(spec, t) for t in spec.teams}
    return spec, o.queueing_manifests(spec.teams, queues, q.gpu_flavors(spec))


def valid(obj) -> list[str]:
    return schema_problems(CRDS, obj) + cel_problems(CRDS, obj)


def test_the_topology_matches_its_crd_and_keeps_its_cel_rules():
    topology = o.topology()
    assert topology["apiVersion"] == "kueue.x-k8s.io/v1beta2" and topology["kind"] == "Topology"
    assert valid(topology) == []
    assert rule_count(CRDS, topology) == 2  # uniqueness and hostname-last (immutability runs on update only)
    assert [level["nodeLabel"] for level in topology["spec"]["levels"]] == [
        "topology.k8s.aws/network-node-layer-1", "topology.k8s.aws/network-node-layer-2",
        "topology.k8s.aws/network-node-layer-3", "kubernetes.io/hostname"]


def test_the_cel_rules_would_refuse_a_topology_with_the_hostname_above_a_layer():
    broken = copy.deepcopy(o.topology())
    levels = broken["spec"]["levels"]
    levels[-1], levels[-2] = levels[-2], levels[-1]
    assert any("hostname label can only be used at the lowest level" in p for p in cel_problems(CRDS, broken))
    broken["spec"]["levels"] = [levels[0], levels[0]]
    assert any("must be unique" in p for p in cel_problems(CRDS, broken))


def test_only_flavors_of_pools_placed_by_topology_name_it_and_each_is_valid():
    _, objects = prod_objects()
    flavors = {m["metadata"]["name"]: m for m in objects.values() if m["kind"] == "ResourceFlavor"}
    named = {n for n, f in flavors.items() if "topologyName" in f["spec"]}
    assert named == {"a100-train"}
    assert flavors["a100-train"]["spec"]["topologyName"] == objects["topology"]["metadata"]["name"] == names.KUEUE_TOPOLOGY
    # Kueue reads the levels of the nodes the flavor selects: a topology flavor needs node labels (a CEL rule)
    assert flavors["a100-train"]["spec"]["nodeLabels"] == {names.POOL_LABEL: "a100-train"}
    for flavor in flavors.values():
        assert valid(flavor) == [], flavor["metadata"]["name"]
    assert rule_count(CRDS, flavors["a100-train"]) >= 1


def test_the_cel_rules_would_refuse_a_topology_flavor_without_node_labels():
    _, objects = prod_objects()
    flavor = copy.deepcopy(objects["flavor-a100-train"])
    flavor["spec"]["nodeLabels"] = {}
    assert any("at least one nodeLabel is required when topology is set" in p for p in cel_problems(CRDS, flavor))


def test_no_topology_object_without_a_pool_placed_by_it():
    def off(platform):
        next(p for p in platform["nodePools"] if p["name"] == "a100-train")["topology"] = {"placement": "none"}
    _, objects = prod_objects(off)
    assert "topology" not in objects
    assert not any("topologyName" in m.get("spec", {}) for m in objects.values() if m["kind"] == "ResourceFlavor")


def test_the_feature_gate_is_pinned_on_only_with_topology():
    assert o.manager_config(topology=True)["featureGates"] == {"TopologyAwareScheduling": True}
    assert "featureGates" not in o.manager_config()
