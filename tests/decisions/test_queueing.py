"""Fair sharing in numbers (decisions/queueing.py): flavors, where nominal quotas sit, limits, ceilings and
the stack-file rules, straight from specs."""
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_platform.decisions import queueing as q
from gpu_platform.decisions.capacity import node_resources
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import names
from gpu_platform.render import team_objects
from gpu_platform.render.queueing_objects import cluster_queue
from gpu_platform.spec.errors import SpecError
from tests.support.stacks import spec_of, stack_platform

GPU = names.GPU_RESOURCE
MIG = names.mig_resource


def queued(platform):
    platform["queueing"] = {"mode": "kueue", "chartVersion": "0.19.2"}


def team_of(spec, name):
    return next(t for t in spec.teams if t.name == name)


def problems(platform) -> list[str]:
    with pytest.raises(SpecError) as err:
        parse_platform(platform)
    return err.value.problems


# --- the prod stack's numbers (what the issue asks the tests to prove) ---

def test_prod_queues_with_the_pinned_kueue(prod):
    assert prod.queueing.enabled and prod.queueing.chart_version == "0.19.2"


def test_every_team_s_nominal_quota_is_its_stack_file_quota(prod):
    placed = q.placement(prod)
    for team in prod.teams:
        queue = q.team_queue(prod, team, placed)
        totals = {t.resource: t.nominal for t in queue.totals()}
        assert totals[GPU] == team.quota.gpus
        for profile in ("1g.10gb", "2g.20gb", "3g.40gb"):
            assert totals[MIG(profile)] == team.quota.mig_slices.get(profile, 0)
        cpu_memory = names.KUEUE_CPU_MEMORY_FLAVOR
        assert (queue.quotas[(cpu_memory, "cpu")].nominal, queue.quotas[(cpu_memory, "memory")].nominal) == (
            q.quantity(team.quota.cpu), q.quantity(team.quota.memory))


def test_whole_gpu_flavors_carry_their_nodes_cpu_and_memory_share_when_a_pool_schedules_by_topology(prod):
    research = q.team_queue(prod, team_of(prod, "research"))  # 12 A100s on a100-train: p4d, 96 vCPU, 1152 GiB, 8 GPUs
    assert research.quotas[("a100-train", GPU)].nominal == 12
    assert research.quotas[("a100-train", "cpu")].nominal == 12 * 96 // 8
    assert research.quotas[("a100-train", "memory")].nominal == 12 * 1152 * 2**30 // 8
    assert research.quotas[(names.KUEUE_CPU_MEMORY_FLAVOR, GPU)].nominal == 0  # CPU-only pods: no GPUs there
    totals = {t.resource: t.nominal for t in research.totals()}
    assert totals["cpu"] == q.quantity("256") + 144  # the stated quota and the A100s' share


def test_prod_places_each_team_s_gpus_on_its_pools(prod):
    assert q.placement(prod).nominal == {
        ("research", "a100-train"): 12, ("research", "h100-mig-1g.10gb"): 16, ("research", "h100-mig-3g.40gb"): 2,
        ("inference", "l4-inference"): 6,
        ("batch", "a100-train"): 4, ("batch", "h100-mig-2g.20gb"): 2,
    }


def test_nominal_quotas_per_flavor_fit_capacity_at_max_size(prod):
    placed = q.placement(prod)
    for flavor in q.gpu_flavors(prod):
        held = sum(n for (_, f), n in placed.nominal.items() if f == flavor.name)
        assert held <= flavor.capacity
        assert held + placed.left[flavor.name] == flavor.capacity


def test_flavor_capacity_is_the_pool_s_schedulable_resource_at_max_size(prod):
    pools = {p.name: p for p in prod.node_pools}
    for flavor in q.gpu_flavors(prod):
        pool = pools[flavor.pool]
        assert flavor.capacity == node_resources(pool, prod.mig_strategy)[flavor.resource] * pool.max_size
    assert {f.name: f.capacity for f in q.gpu_flavors(prod)} == {
        "h100-mig-1g.10gb": 32, "h100-mig-2g.20gb": 16, "h100-mig-3g.40gb": 16, "a100-train": 16, "l4-inference": 6}


def test_resource_quota_ceiling_is_nominal_plus_borrowing_limit(prod):
    for team in prod.teams:
        hard = team_objects.resource_quota(team_objects.TeamContext.of(prod, team), team)["spec"]["hard"]
        manifest = cluster_queue(team, q.team_queue(prod, team))
        for resource, ceiling in q.quota_ceiling(prod, team).items():
            name = resource.removeprefix("requests.")
            entries = [r for g in manifest["spec"]["resourceGroups"] for f in g["flavors"] for r in f["resources"]
                       if r["name"] == name]
            nominal = sum(q.quantity(r["nominalQuota"]) for r in entries)
            borrowing = sum(q.quantity(r["borrowingLimit"]) for r in entries)
            assert q.quantity(hard[resource]) == nominal + borrowing == q.quantity(ceiling), (team.name, resource)


def test_prod_ceilings_follow_the_tiers(prod):
    assert {t.name: q.quota_ceiling(prod, t)[names.quota_key(GPU)] for t in prod.teams} == {
        "research": "24", "inference": "6", "batch": "8"}  # standard and batch borrow 100%, inference 0%


# --- placement ---

def test_without_pools_a_quota_fills_pools_in_stack_order():
    def edit(p):
        queued(p)
        p["teams"] = [{"name": "a", "quota": {"gpus": 20, "cpu": "8", "memory": "8Gi"}},
                      {"name": "b", "quota": {"gpus": 2, "cpu": "8", "memory": "8Gi"}}]
    spec = spec_of("prod", edit)
    assert q.placement(spec).nominal == {("a", "a100-train"): 16, ("a", "l4-inference"): 4, ("b", "l4-inference"): 2}


def test_listed_pools_are_filled_in_the_listed_order():
    def edit(p):
        queued(p)
        p["teams"] = [{"name": "a", "quota": {"gpus": 8, "cpu": "8", "memory": "8Gi"},
                       "queue": {"pools": ["l4-inference", "a100-train"]}}]
    spec = spec_of("prod", edit)
    assert q.placement(spec).nominal == {("a", "l4-inference"): 6, ("a", "a100-train"): 2}


def test_a_team_s_own_pools_come_first_in_its_queue(prod):
    groups = dict((covered, flavors) for covered, flavors in q.team_queue(prod, team_of(prod, "inference")).groups)
    # a100-train schedules by topology: whole GPUs share CPU and memory's group, after the CPU-only flavor
    assert groups[("cpu", "memory", GPU)] == [names.KUEUE_CPU_MEMORY_FLAVOR, "l4-inference", "a100-train"]


def test_every_offered_gpu_resource_is_covered_at_zero_where_the_team_has_none(prod):
    queue = q.team_queue(prod, team_of(prod, "inference"))
    covered = [r for covered, _ in queue.groups for r in covered]
    assert covered == ["cpu", "memory", GPU, MIG("1g.10gb"), MIG("2g.20gb"), MIG("3g.40gb")]
    assert queue.quotas[("h100-mig-1g.10gb", MIG("1g.10gb"))].nominal == 0
    assert queue.quotas[("a100-train", GPU)] == q.FlavorQuota("a100-train", GPU, 0, 0, 0)


def test_a_quota_beyond_its_pools_is_refused_with_the_field_and_the_room_left():
    def edit(p):
        p["teams"][0]["quota"]["gpus"] = 11  # the cluster still has room: 22 GPUs at max size
        p["teams"][1]["quota"]["gpus"] = 7  # but inference lists only l4-inference: 6 at max size
    found = problems(_prod(edit))
    assert len(found) == 1 and found[0].startswith("teams[1].quota.gpus:")
    assert "1 nvidia.com/gpu do not fit" in found[0] and "l4-inference 0" in found[0]


def test_overcommit_ratio_does_not_stretch_nominal_quotas():
    def edit(p):
        p["quotaOvercommitRatio"] = 2.0
        p["teams"][0]["quota"]["gpus"] = 20
    found = problems(_prod(edit))
    assert any(f.startswith("teams[0].quota.gpus:") and "quotaOvercommitRatio does not apply" in f for f in found)


def test_a_mig_quota_beyond_its_flavor_names_the_profile():
    def edit(p):
        p["teams"][0]["quota"]["migSlices"]["3g.40gb"] = 17
    found = problems(_prod(edit))
    assert any(f.startswith('teams[0].quota.migSlices["3g.40gb"]:') for f in found)


def test_listed_pools_that_offer_none_of_a_resource_are_refused():
    def edit(p):
        p["teams"][1]["quota"]["migSlices"] = {"1g.10gb": 2}  # inference lists only l4-inference
    assert problems(_prod(edit)) == [
        "teams[1].queue.pools: none of the listed pools offers nvidia.com/mig-1g.10gb; offered by h100-mig"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 12), st.integers(0, 20)), min_size=1, max_size=4))
def test_placement_holds_each_quota_exactly_or_says_why(quotas):
    """Any split of whole GPUs and 1g.10gb slices: either every quota sits whole on flavors within capacity,
    or the stack file is refused naming a team's quota field."""
    platform = _prod(lambda p: p.update(teams=[
        {"name": f"t{i}", "quota": {"gpus": g, "migSlices": {"1g.10gb": s}, "cpu": "8", "memory": "8Gi"}}
        for i, (g, s) in enumerate(quotas)]))
    fits = sum(g for g, _ in quotas) <= 22 and sum(s for _, s in quotas) <= 32
    if not fits:
        assert any(".quota." in f for f in problems(platform))
        return
    spec = parse_platform(platform)
    placed = q.placement(spec)
    for team in spec.teams:
        held = {r: sum(n for (t, f), n in placed.nominal.items() if t == team.name and f in _flavors(spec, r))
                for r in (GPU, MIG("1g.10gb"))}
        assert held == {GPU: team.quota.gpus, MIG("1g.10gb"): team.quota.mig_slices["1g.10gb"]}
    assert all(v >= 0 for v in placed.left.values())


def _flavors(spec, resource):
    return {f.name for f in q.gpu_flavors(spec) if f.resource == resource}


def _prod(edit=None):
    platform = stack_platform("prod")
    if edit:
        edit(platform)
    return platform


# --- limits and quantities ---

@pytest.mark.parametrize("tier, borrowing, lending, within, reclaim, on_spot", [
    ("critical-inference", "0%", "100%", "LowerPriority", "Any", False),
    ("standard", "100%", "100%", "LowerPriority", "Any", False),
    ("preemptible-batch", "100%", "100%", "Never", "LowerPriority", True),
])
def test_tier_defaults(tier, borrowing, lending, within, reclaim, on_spot):
    assert q.TIER_QUEUES[tier] == q.TierQueue(borrowing, lending, within, reclaim, on_spot)


def test_limits_are_percentages_of_each_nominal_quota_rounded_down():
    def edit(p):
        queued(p)
        p["teams"] = [{"name": "a", "quota": {"gpus": 3, "cpu": "3", "memory": "3Gi"},
                       "priorityTier": "preemptible-batch",  # the dev pool is spot
                       "queue": {"borrowingLimit": "50%", "lendingLimit": "33%"}}]
    spec = spec_of("dev", edit)
    queue = q.team_queue(spec, spec.teams[0])
    gpu = queue.quotas[("a10g-spot", GPU)]
    cpu = queue.quotas[(names.KUEUE_CPU_MEMORY_FLAVOR, "cpu")]
    memory = queue.quotas[(names.KUEUE_CPU_MEMORY_FLAVOR, "memory")]
    assert (gpu.borrowing_limit, gpu.lending_limit) == (1, 0)
    assert (cpu.borrowing_limit, cpu.lending_limit) == (Fraction(3, 2), Fraction(99, 100))
    assert memory.borrowing_limit == Fraction(3 * 2**30, 2)
    assert q.quota_ceiling(spec, spec.teams[0]) == {"requests.cpu": "4500m", "requests.memory": "4608Mi",
                                                    "requests.nvidia.com/gpu": "4"}


@pytest.mark.parametrize("resource, value, shown", [
    ("cpu", Fraction(256), "256"), ("cpu", Fraction(3, 2), "1500m"), ("cpu", Fraction(1, 3), "333m"),
    ("memory", Fraction(2 * 2**40), "2Ti"), ("memory", Fraction(500 * 10**9), "500G"), ("memory", Fraction(0), "0"),
    ("memory", Fraction(1000), "1k"), ("memory", Fraction(1023), "1023"), (GPU, Fraction(12), "12"),
])
def test_quantities_are_written_exactly(resource, value, shown):
    assert q.format_quantity(resource, value) == shown
    assert q.quantity(shown) == q.floor_to_unit(resource, value)


@pytest.mark.parametrize("text, value", [("1.5", Fraction(3, 2)), ("250m", Fraction(1, 4)), ("2Ti", Fraction(2**41)),
                                         ("64", Fraction(64))])
def test_quantities_are_read_exactly(text, value):
    assert q.quantity(text) == value


def test_queue_labels_name_the_local_queue_and_the_tier(prod, dev):
    assert q.queue_labels(prod, team_of(prod, "batch")) == {
        names.KUEUE_QUEUE_NAME_LABEL: names.TEAM_LOCAL_QUEUE,
        names.KUEUE_PRIORITY_CLASS_LABEL: "gpu-platform-preemptible-batch"}
    assert q.queue_labels(dev, dev.teams[0]) == {}


# --- flavors ---

def test_mixed_mig_pools_give_one_flavor_per_profile(prod):
    mig = [f for f in q.gpu_flavors(prod) if f.pool == "h100-mig"]
    assert [(f.name, f.resource, f.mig_profile) for f in mig] == [
        ("h100-mig-1g.10gb", MIG("1g.10gb"), "1g.10gb"), ("h100-mig-2g.20gb", MIG("2g.20gb"), "2g.20gb"),
        ("h100-mig-3g.40gb", MIG("3g.40gb"), "3g.40gb")]


def test_a_reserved_pool_s_taints_go_with_its_flavor(prod):
    (train,) = [f for f in q.gpu_flavors(prod) if f.pool == "a100-train"]
    assert train.taints == (("workload", "training", "NoSchedule"),)
    assert (train.gpu, train.capacity_type, train.mig_profile) == ("A100-SXM4-40GB", "on-demand", None)


def test_single_strategy_flavors_count_slices_as_gpus_and_name_the_profile():
    def edit(p):
        queued(p)
        p["nodePools"] = [p["nodePools"][0] | {"sharing": {"mode": "mig", "strategy": "single", "layout": {"1g.10gb": 7}}}]
        p["teams"] = [{"name": "a", "quota": {"gpus": 8, "cpu": "8", "memory": "8Gi"}}]
    (flavor,) = q.gpu_flavors(spec_of("prod", edit))
    assert (flavor.name, flavor.resource, flavor.mig_profile, flavor.capacity) == ("h100-mig", GPU, "1g.10gb", 112)


def test_time_sliced_flavors_count_replicas(dev):
    (flavor,) = q.gpu_flavors(dev)
    assert (flavor.name, flavor.resource, flavor.capacity) == ("a10g-spot", GPU, 16)  # 4 nodes x 1 GPU x 4


# --- stack-file rules ---

def test_kueue_needs_a_pinned_known_chart():
    found = problems(_prod(lambda p: p["queueing"].pop("chartVersion")))
    assert found == ["queueing.chartVersion: pin a Kueue chart version: one of 0.19.2"]


def test_queue_settings_without_queueing_are_refused():
    found = problems(_prod(lambda p: p.pop("queueing")))
    assert found == [f"teams[{i}].queue: applies when queueing.mode is kueue" for i in range(3)]


def test_unknown_and_repeated_pools_are_refused():
    def edit(p):
        p["teams"][0]["queue"]["pools"] = ["a100-train", "a100-train", "h200"]
    found = problems(_prod(edit))
    assert "teams[0].queue.pools[2]: unknown pool 'h200'; pools: h100-mig, a100-train, l4-inference" in found
    assert "teams[0].queue.pools: lists a pool twice" in found


def test_lending_more_than_the_nominal_quota_is_refused():
    found = problems(_prod(lambda p: p["teams"][0]["queue"].update(lendingLimit="150%")))
    assert found == ["teams[0].queue.lendingLimit: must be at most 100%: a team cannot lend more than its nominal quota"]


def test_a_limit_must_be_a_percentage():
    found = problems(_prod(lambda p: p["teams"][0]["queue"].update(borrowingLimit="4")))
    assert len(found) == 1 and found[0].startswith("teams[0].queue.borrowingLimit:")


def test_a_pool_named_like_the_cpu_flavor_is_refused():
    def edit(p):
        p["nodePools"][2]["name"] = names.KUEUE_CPU_MEMORY_FLAVOR
        p["teams"][1]["queue"]["pools"] = [names.KUEUE_CPU_MEMORY_FLAVOR]
    assert "nodePools[2].name: 'cpu-memory' is the name of the CPU and memory flavor; choose another" in problems(_prod(edit))


def test_a_pool_with_more_taints_than_a_flavor_holds_is_refused():
    def edit(p):
        p["nodePools"][1]["taints"] = [{"key": f"k{i}", "value": "v", "effect": "NoSchedule"} for i in range(9)]
    assert "nodePools[1].taints: a Kueue flavor carries at most 8 taints" in problems(_prod(edit))


def test_a_team_named_like_kueue_s_namespace_is_refused():
    found = problems(_prod(lambda p: p["queueing"].update(namespace="batch")))
    assert "teams[2].name: 'batch' is Kueue's namespace (queueing.namespace); choose another" in found


def test_without_whole_gpu_pools_the_zero_gpu_request_is_still_covered():
    """Every container gets an nvidia.com/gpu request of 0 from the LimitRange; a queue must cover it."""
    def edit(p):
        p["nodePools"] = [p["nodePools"][0]]  # the H100 MIG pool only: slices, no whole GPUs
        p["teams"] = [{"name": "a", "quota": {"migSlices": {"1g.10gb": 4}, "cpu": "8", "memory": "8Gi"}}]
    spec = spec_of("prod", edit)
    queue = q.team_queue(spec, spec.teams[0])
    assert queue.groups[0] == (("cpu", "memory", GPU), [names.KUEUE_CPU_MEMORY_FLAVOR])
    assert queue.quotas[(names.KUEUE_CPU_MEMORY_FLAVOR, GPU)] == q.FlavorQuota(names.KUEUE_CPU_MEMORY_FLAVOR, GPU, 0, 0, 0)
    assert q.quota_ceiling(spec, spec.teams[0])[names.quota_key(GPU)] == "0"
