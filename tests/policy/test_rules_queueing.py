"""Queueing rules: queue-team-local-queue, queue-nominal-within-capacity, queue-flavor-mig-profile; and
team-quota-within-capacity leaving queued teams' ceilings to them."""
from __future__ import annotations

import copy

import pytest

from gpu_platform.facts import names
from tests.policy.harness import HELM_RELEASE, NODE_GROUP, gpu_node_group, namespace, operator_release, quota, run_stack, stack_resource

NAMESPACE, QUOTA = "kubernetes:core/v1:Namespace", "kubernetes:core/v1:ResourceQuota"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"
H100_LAYOUT = {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}


def flavor(name: str, pool: str, mig_profile: str | None = None) -> dict:
    labels = {names.POOL_LABEL: pool, **({names.MIG_PROFILE_LABEL: mig_profile} if mig_profile else {})}
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
            "metadata": {"name": name, "labels": labels}, "spec": {"nodeLabels": {names.POOL_LABEL: pool}}}


def cluster_queue(team: str, quotas: dict[str, dict[str, int]], cohort: str | None = "gpu-platform") -> dict:
    """quotas: resource -> {flavor: nominal quota}."""
    groups = [{"coveredResources": [res], "flavors": [{"name": f, "resources": [{"name": res, "nominalQuota": str(n)}]}
                                                      for f, n in by_flavor.items()]}
              for res, by_flavor in quotas.items()]
    spec = {"namespaceSelector": {"matchLabels": {names.NAMESPACE_NAME_LABEL: team}}, "resourceGroups": groups}
    if cohort:
        spec["cohortName"] = cohort
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue", "metadata": {"name": f"team-{team}"},
            "spec": spec}


def local_queue(team: str, target: str | None = None) -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": names.TEAM_LOCAL_QUEUE, "namespace": team},
            "spec": {"clusterQueue": target or f"team-{team}"}}


def kueue(obj: dict, name: str):
    return stack_resource(KUEUE + obj["kind"], obj, name)


def cluster(*, teams=("research", "batch"), queues=None, locals_=None, flavors=None, quotas=None):
    """A GPU cluster: an A100 pool (4 nodes x 8 GPUs = 32), an H100 MIG pool (2 nodes), the operator, team
    namespaces with quotas, and the Kueue objects given."""
    a100 = gpu_node_group("a100", instance_types=("p4d.24xlarge",), max_size=4)
    h100 = gpu_node_group("h100", instance_types=("p5.48xlarge",), max_size=2,
                          labels={names.MIG_CONFIG_LABEL: "pool-h100"})
    res = [stack_resource(HELM_RELEASE, operator_release(mig={"pool-h100": H100_LAYOUT}, strategy="mixed"), "gpu-operator"),
           stack_resource(NODE_GROUP, a100, "a100"), stack_resource(NODE_GROUP, h100, "h100")]
    for team in teams:
        res.append(stack_resource(NAMESPACE, namespace(team), team))
        res.append(stack_resource(QUOTA, quota(team, (quotas or {}).get(team, {"requests.nvidia.com/gpu": "8"})),
                                  f"{team}-quota"))
    for f in flavors if flavors is not None else [flavor("a100", "a100"), flavor("h100-mig-1g.10gb", "h100", "1g.10gb")]:
        res.append(kueue(f, f"flavor-{f['metadata']['name']}"))
    for cq in queues if queues is not None else [cluster_queue(t, {"nvidia.com/gpu": {"a100": 8}}) for t in teams]:
        res.append(kueue(cq, cq["metadata"]["name"]))
    for lq in locals_ if locals_ is not None else [local_queue(t) for t in teams]:
        res.append(kueue(lq, f"lq-{lq['metadata']['namespace']}"))
    return res


# --- queue-team-local-queue ---

def test_every_team_with_a_local_queue_on_its_cluster_queue_passes():
    assert run_stack("queue-team-local-queue", cluster()) == []


def test_a_queued_team_without_a_local_queue_is_refused():
    found = run_stack("queue-team-local-queue", cluster(locals_=[local_queue("research")]))
    assert len(found) == 1 and "'batch' has no LocalQueue" in found[0][0] and found[0][1].endswith("::batch")


def test_a_local_queue_on_an_undeclared_cluster_queue_is_refused():
    found = run_stack("queue-team-local-queue", cluster(locals_=[local_queue("research"), local_queue("batch", "team-x")]))
    assert len(found) == 1 and "'team-x', which the stack does not declare" in found[0][0]


def test_a_local_queue_on_a_cluster_queue_that_does_not_select_its_namespace_is_refused():
    found = run_stack("queue-team-local-queue",
                      cluster(locals_=[local_queue("research"), local_queue("batch", "team-research")]))
    assert len(found) == 1 and "does not select namespace 'batch'" in found[0][0]


def test_a_stack_without_queues_needs_no_local_queues():
    assert run_stack("queue-team-local-queue", cluster(queues=[], locals_=[], flavors=[])) == []


# --- queue-nominal-within-capacity ---

def test_nominal_quotas_within_a_flavor_s_capacity_pass():
    queues = [cluster_queue("research", {"nvidia.com/gpu": {"a100": 24}, "nvidia.com/mig-1g.10gb": {"h100-mig-1g.10gb": 32}}),
              cluster_queue("batch", {"nvidia.com/gpu": {"a100": 8}})]
    assert run_stack("queue-nominal-within-capacity", cluster(queues=queues)) == []


def test_a_cohort_whose_nominal_quotas_exceed_a_flavor_is_refused():
    queues = [cluster_queue("research", {"nvidia.com/gpu": {"a100": 24}}), cluster_queue("batch", {"nvidia.com/gpu": {"a100": 9}})]
    found = run_stack("queue-nominal-within-capacity", cluster(queues=queues))
    assert len(found) == 1
    assert "guarantees 33 nvidia.com/gpu on flavor 'a100' but its node groups offer 32" in found[0][0]
    assert found[0][1].endswith("::flavor-a100")


def test_mig_slices_are_counted_per_profile():
    queues = [cluster_queue("research", {"nvidia.com/mig-1g.10gb": {"h100-mig-1g.10gb": 33}})]
    found = run_stack("queue-nominal-within-capacity", cluster(queues=queues))
    assert len(found) == 1 and "33 nvidia.com/mig-1g.10gb" in found[0][0] and "offer 32" in found[0][0]


def test_separate_cohorts_are_counted_separately():
    queues = [cluster_queue("research", {"nvidia.com/gpu": {"a100": 24}}),
              cluster_queue("batch", {"nvidia.com/gpu": {"a100": 24}}, cohort="other")]
    assert run_stack("queue-nominal-within-capacity", cluster(queues=queues)) == []


def cohort(name: str, parent: str | None = None) -> dict:
    return {"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "Cohort", "metadata": {"name": name},
            "spec": {"parentName": parent} if parent else {}}


def test_a_nested_cohort_is_counted_with_its_root():
    # research split into sub-teams under team-research, itself under gpu-platform: 20 + 8 + 8 > 32.
    queues = [cohort("gpu-platform"), cohort("team-research", "gpu-platform"),
              cluster_queue("research", {"nvidia.com/gpu": {"a100": 20}}, cohort="team-research"),
              cluster_queue("batch", {"nvidia.com/gpu": {"a100": 8}})]
    queues.append({**cluster_queue("research", {"nvidia.com/gpu": {"a100": 8}}, cohort="team-research"),
                   "metadata": {"name": "team-research-vision"}})
    found = run_stack("queue-nominal-within-capacity", cluster(queues=queues))
    assert len(found) == 1 and "cohort 'gpu-platform' guarantees 36 nvidia.com/gpu" in found[0][0]
    queues[-1]["spec"]["resourceGroups"][0]["flavors"][0]["resources"][0]["nominalQuota"] = "4"
    assert run_stack("queue-nominal-within-capacity", cluster(queues=queues)) == []


def test_a_flavor_selecting_no_node_group_has_no_capacity():
    queues = [cluster_queue("research", {"nvidia.com/gpu": {"l4": 1}})]
    found = run_stack("queue-nominal-within-capacity", cluster(queues=queues, flavors=[flavor("l4", "l4")]))
    assert len(found) == 1 and "offer 0" in found[0][0]


def test_quota_on_an_undeclared_flavor_is_refused():
    queues = [cluster_queue("research", {"nvidia.com/gpu": {"ghost": 1}})]
    found = run_stack("queue-nominal-within-capacity", cluster(queues=queues))
    assert len(found) == 1 and "'ghost', which the stack does not declare" in found[0][0]


# --- queue-flavor-mig-profile ---

def test_flavors_naming_offered_profiles_pass():
    assert run_stack("queue-flavor-mig-profile", cluster()) == []


def test_a_flavor_labelled_with_a_profile_its_pool_does_not_offer_is_refused():
    flavors = [flavor("a100", "a100"), flavor("h100-mig-7g.80gb", "h100", "7g.80gb")]
    found = run_stack("queue-flavor-mig-profile", cluster(flavors=flavors))
    assert len(found) == 1 and "names MIG profile 7g.80gb" in found[0][0]
    assert "offer 1g.10gb, 2g.20gb, 3g.40gb" in found[0][0]


def test_a_queue_quota_for_a_profile_on_a_flavor_without_it_is_refused():
    queues = [cluster_queue("research", {"nvidia.com/mig-1g.10gb": {"a100": 4}})]
    found = run_stack("queue-flavor-mig-profile", cluster(queues=queues))
    assert len(found) == 1 and "'a100' names MIG profile 1g.10gb" in found[0][0] and "no MIG profile" in found[0][0]


# --- the prod stack, as the program registers it ---

@pytest.fixture(scope="module")
def prod_resources():
    from tests.support.stacks import cached_plan, stack_platform

    plan = cached_plan(stack_platform("prod"), "prod")
    return plan, [stack_resource(r["type"], r["inputs"], r["name"]) for r in plan["resources"] if r["custom"]]


@pytest.mark.parametrize("policy", ["queue-team-local-queue", "queue-nominal-within-capacity", "queue-flavor-mig-profile",
                                    "team-quota-within-capacity"])
def test_the_prod_stack_passes(prod_resources, policy):
    assert run_stack(policy, prod_resources[1]) == []


def test_the_prod_stack_without_a_local_queue_is_refused(prod_resources):
    _, res = prod_resources
    kept = [r for r in res if not (r.resource_type.endswith(":LocalQueue") and r.props["metadata"]["namespace"] == "batch")]
    found = run_stack("queue-team-local-queue", kept)
    assert len(found) == 1 and "'batch' has no LocalQueue" in found[0][0]


def test_the_prod_stack_with_a_bigger_guarantee_is_refused(prod_resources):
    _, res = prod_resources
    edited = []
    for r in res:
        props = copy.deepcopy(dict(r.props))
        if r.resource_type.endswith(":ClusterQueue") and props["metadata"]["name"] == "team-batch":
            for group in props["spec"]["resourceGroups"]:
                for f in group["flavors"]:
                    for entry in f["resources"]:
                        if f["name"] == "a100-train":
                            entry["nominalQuota"] = "5"  # research holds 12 of the 16
        edited.append(stack_resource(r.resource_type, props, r.name))
    found = run_stack("queue-nominal-within-capacity", edited)
    assert len(found) == 1 and "guarantees 17 nvidia.com/gpu on flavor 'a100-train' but its node groups offer 16" in found[0][0]


def test_team_quota_within_capacity_leaves_queued_ceilings_to_the_queue_rules(prod_resources):
    """The queued teams' ResourceQuotas add up to more than capacity (they are ceilings); without their
    LocalQueues the advisory rule counts them again."""
    _, res = prod_resources
    unqueued = [r for r in res if not r.resource_type.endswith(":LocalQueue")]
    found = run_stack("team-quota-within-capacity", unqueued)
    assert found and "nvidia.com/gpu" in found[0][0]


# --- Karpenter pools: flavors select NodePools as well as node groups ---

@pytest.fixture(scope="module")
def karpenter_queued():
    from tests.support.stacks import cached_plan, stack_platform

    platform = stack_platform("karpenter")
    platform["queueing"] = {"mode": "kueue", "chartVersion": "0.19.2"}
    plan = cached_plan(platform, "karpenter")
    return [stack_resource(r["type"], r["inputs"], r["name"]) for r in plan["resources"] if r["custom"]]


@pytest.mark.parametrize("policy", ["queue-team-local-queue", "queue-nominal-within-capacity", "queue-flavor-mig-profile"])
def test_the_karpenter_stack_queued_passes(karpenter_queued, policy):
    assert run_stack(policy, karpenter_queued) == []


def test_a_guarantee_beyond_a_karpenter_pool_is_refused(karpenter_queued):
    """h100-mig is a NodePool (MIG, single strategy: 2 nodes x 8 GPUs x 7 slices = 112 nvidia.com/gpu)."""
    edited = []
    for r in karpenter_queued:
        props = copy.deepcopy(dict(r.props))
        if r.resource_type.endswith(":ClusterQueue"):
            for group in props["spec"]["resourceGroups"]:
                for f in group["flavors"]:
                    for entry in f["resources"]:
                        if f["name"] == "h100-mig" and props["metadata"]["name"] == "team-research":
                            entry["nominalQuota"] = "97"  # 97 + 8 + 16 = 121 > 112
        edited.append(stack_resource(r.resource_type, props, r.name))
    found = run_stack("queue-nominal-within-capacity", edited)
    assert len(found) == 1 and "guarantees 121 nvidia.com/gpu on flavor 'h100-mig' but its node groups offer 112" in found[0][0]
