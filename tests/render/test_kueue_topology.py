"""Kueue's topology-aware scheduling: the Topology of the AWS network layers and the flavors naming it, against
the pinned v0.19.2 CRDs (schema and CEL rules), queues whose topology pod sets can be admitted, and the helper's
multi-node Jobs asking for a level."""
from __future__ import annotations

import copy

import pytest

from gpu_platform.decisions import queueing as q
from gpu_platform.decisions.topology import DEFAULT_TOPOLOGY_LEVEL, schedules_by_topology, topology_release
from gpu_platform.facts import catalog, names
from gpu_platform.render.queueing_objects import cluster_queue, queueing_manifests, topology
from gpu_platform.render.workloads import gpu_job
from tests.support.crd_schemas import schema_problems
from tests.support.kueue_crds import cel_problems, rule_count
from tests.support.stacks import spec_of

CRDS = catalog.KUEUE_RELEASES["0.19.2"].crds
IMAGE = "registry.example.com/trainer:2.3"
LEVELS = ["topology.k8s.aws/network-node-layer-1", "topology.k8s.aws/network-node-layer-2",
          "topology.k8s.aws/network-node-layer-3", "kubernetes.io/hostname"]


def manifests(stack: str) -> dict:
    spec = spec_of(stack)
    placed = q.placement(spec)
    return queueing_manifests(spec.teams, {t.name: q.team_queue(spec, t, placed) for t in spec.teams},
                              q.gpu_flavors(spec))


def test_topology_release_is_recorded_for_the_pinned_kueue():
    assert catalog.KUEUE_RELEASES["0.19.2"].topology_aware_scheduling is True


def test_the_topology_lists_the_network_layers_then_the_node():
    t = topology()
    assert [level["nodeLabel"] for level in t["spec"]["levels"]] == LEVELS
    assert schema_problems(CRDS, t) == [] and cel_problems(CRDS, t) == [] and rule_count(CRDS, t) >= 2


def test_the_hostname_level_anywhere_but_last_breaks_a_cel_rule():
    t = topology()
    t["spec"]["levels"].reverse()
    assert any("hostname" in p for p in cel_problems(CRDS, t))


def test_only_efa_whole_gpu_pools_on_described_types_schedule_by_topology():
    prod = spec_of("prod")
    assert q.topology_pools(prod) == ["a100-train"]  # h100-mig is MIG, l4-inference has no layer labels
    assert q.topology_pools(spec_of("training-blackwell")) == ["b200-train"]
    assert q.topology_pools(spec_of("training-ultraserver")) == []  # DRA: devices are no allocatable resource
    assert q.topology_pools(spec_of("dev")) == []  # no queueing


def test_a_kueue_release_without_topology_scheduling_schedules_nothing_by_topology():
    prod = spec_of("prod")
    older = prod.queueing.model_copy(update={"chart_version": "0.13.0"})
    assert not topology_release(older)
    assert not schedules_by_topology(next(p for p in prod.node_pools if p.name == "a100-train"), older)


def test_topology_flavors_name_it_and_keep_the_crd_s_rules():
    m = manifests("prod")
    flavor = m["flavor-a100-train"]
    assert flavor["spec"]["topologyName"] == names.KUEUE_TOPOLOGY == m["topology"]["metadata"]["name"]
    assert flavor["spec"]["nodeLabels"] == {names.POOL_LABEL: "a100-train"}
    assert schema_problems(CRDS, flavor) == [] and cel_problems(CRDS, flavor) == []
    assert "topologyName" not in m["flavor-l4-inference"]["spec"]


def test_a_topology_flavor_without_node_labels_breaks_a_cel_rule():
    flavor = copy.deepcopy(manifests("prod")["flavor-a100-train"])
    flavor["spec"]["nodeLabels"] = {}
    assert cel_problems(CRDS, flavor) == ["spec: at least one nodeLabel is required when topology is set"]


def test_no_topology_without_a_pool_that_schedules_by_it():
    assert "topology" not in manifests("training-ultraserver")


@pytest.mark.parametrize("stack", ["prod", "training-blackwell"])
def test_a_topology_pod_set_finds_all_it_asks_for_on_one_topology_flavor(stack):
    """Kueue's flavor assigner gives a pod set asking for topology only flavors naming the Topology for every
    resource it requests: CPU, memory and GPUs must share a group with the topology flavor, and no flavor
    without it may cover them (tas_flavorassigner.go at v0.19.2)."""
    spec = spec_of(stack)
    tas = {f.name for f in q.gpu_flavors(spec) if f.topology}
    for team in spec.teams:
        queue = q.team_queue(spec, team)
        obj = cluster_queue(team, queue)
        assert schema_problems(CRDS, obj) == [] and cel_problems(CRDS, obj) == []
        (group,) = [g for g in obj["spec"]["resourceGroups"] if "cpu" in g["coveredResources"]]
        assert set(group["coveredResources"]) == {"cpu", "memory", names.GPU_RESOURCE}
        assert tas <= {f["name"] for f in group["flavors"]}
        for flavor in (f for f in group["flavors"] if f["name"] in tas):
            assert {r["name"] for r in flavor["resources"]} == {"cpu", "memory", names.GPU_RESOURCE}


def test_multi_node_jobs_ask_for_the_bottom_layer_preferably_by_default():
    prod = spec_of("prod")
    job = gpu_job(prod, "research", "ddp", IMAGE, pool="a100-train", gpus=8, nodes=2)
    annotations = job["spec"]["template"]["metadata"]["annotations"]
    assert annotations[names.KUEUE_PREFERRED_TOPOLOGY_ANNOTATION] == DEFAULT_TOPOLOGY_LEVEL == LEVELS[2]
    assert names.KUEUE_REQUIRED_TOPOLOGY_ANNOTATION not in annotations


def test_a_job_may_require_a_level():
    prod = spec_of("prod")
    job = gpu_job(prod, "research", "ddp", IMAGE, pool="a100-train", gpus=8, nodes=2, topology="required",
                  topology_level=LEVELS[1])
    assert job["spec"]["template"]["metadata"]["annotations"][names.KUEUE_REQUIRED_TOPOLOGY_ANNOTATION] == LEVELS[1]


@pytest.mark.parametrize("kwargs, match", [({"topology": "strict"}, "topology="),
                                           ({"topology_level": "topology.k8s.aws/zone"}, "topology_level=")])
def test_an_unknown_mode_or_level_is_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gpu_job(spec_of("prod"), "research", "ddp", IMAGE, pool="a100-train", gpus=8, nodes=2, **kwargs)


def test_single_node_jobs_on_topology_pools_still_ask_for_topology_and_others_do_not():
    prod = spec_of("prod")
    one = gpu_job(prod, "research", "one", IMAGE, pool="a100-train", gpus=8)
    assert one["spec"]["template"]["metadata"]["annotations"][names.KUEUE_UNCONSTRAINED_TOPOLOGY_ANNOTATION] == "true"
    l4 = gpu_job(prod, "inference", "l4", IMAGE, pool="l4-inference", gpus=1)
    assert not any(k.startswith("kueue.x-k8s.io/podset") for k in l4["spec"]["template"]["metadata"]["annotations"])
