"""The stack file's fair-sharing settings (spec/models.py, decisions/queueing.py): sub-teams, admission fair
sharing and the debug queue, refused with the path written and what would be valid."""
import pytest

from gpu_platform.decisions import queueing as q
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import names
from gpu_platform.spec.errors import SpecError
from tests.support.stacks import stack_platform


def problems(platform) -> list[str]:
    with pytest.raises(SpecError) as err:
        parse_platform(platform)
    return err.value.problems


def with_sub_teams(*subs, fair=True):
    platform = stack_platform("prod")
    if not fair:
        platform["queueing"].pop("fairSharing")
    platform["teams"][0]["queue"]["subTeams"] = [{"name": n, "share": s} for n, s in subs]
    return platform


def test_prod_splits_research_and_shares_fairly():
    spec = parse_platform(stack_platform("prod"))
    research = spec.teams[0]
    assert [(s.name, s.share) for s in research.queue.sub_teams] == [("vision", "60%"), ("language", "40%")]
    assert spec.queueing.fair_sharing.usage_half_life == "168h"
    assert [lq.name for lq in q.local_queues(spec.queueing, research)] == [
        names.TEAM_LOCAL_QUEUE, names.DEBUG_LOCAL_QUEUE, "vision", "language"]


def test_shares_add_up_to_the_whole_team():
    (p,) = problems(with_sub_teams(("vision", "60%"), ("language", "30%")))
    assert "teams[0].queue.subTeams" in p and "90%" in p and "100%" in p


def test_sub_teams_need_fair_sharing():
    (p,) = problems(with_sub_teams(("vision", "60%"), ("language", "40%"), fair=False))
    assert "teams[0].queue.subTeams" in p and "queueing.fairSharing" in p


@pytest.mark.parametrize("name", [names.TEAM_LOCAL_QUEUE, names.DEBUG_LOCAL_QUEUE, "vision"])
def test_a_sub_team_name_is_a_queue_of_its_own(name):
    ps = problems(with_sub_teams(("vision", "50%"), (name, "50%")))
    assert any("teams[0].queue.subTeams[1].name" in p for p in ps)


def test_a_share_is_above_zero():
    ps = problems(with_sub_teams(("vision", "100%"), ("language", "0%")))
    assert any("teams[0].queue.subTeams[1].share" in p for p in ps)


@pytest.mark.parametrize("field,value,words", [
    ("fairSharing", {"usageHalfLife": "7d"}, "queueing.fairSharing.usageHalfLife"),
    ("fairSharing", {"halfLife": "168h"}, "queueing.fairSharing.halfLife"),
    ("debugQueue", {"runtimeCeilingMinutes": 0}, "queueing.debugQueue.runtimeCeilingMinutes"),
    ("debugQueue", {"runtimeCeilingMinutes": 1441}, "queueing.debugQueue.runtimeCeilingMinutes"),
])
def test_bad_settings_name_their_path(field, value, words):
    platform = stack_platform("prod")
    platform["queueing"][field] = value
    assert any(words in p for p in problems(platform))


@pytest.mark.parametrize("field", ["fairSharing", "debugQueue"])
def test_settings_apply_only_with_kueue(field):
    platform = stack_platform("dev")
    platform["queueing"] = {"mode": "none", field: {}}
    assert any(f"queueing.{field}" in p and "kueue" in p for p in problems(platform))


def test_the_usage_weights_count_gpu_time_as_the_cost_section_does():
    spec = parse_platform(stack_platform("prod"))
    weights = q.usage_weights(spec)
    assert weights["cpu"] == weights["memory"] == 0.0
    assert weights[names.GPU_RESOURCE] == 1.0
    assert weights[names.mig_resource("2g.20gb")] == pytest.approx(2 / 7, abs=1e-4)


@pytest.mark.parametrize("total,shares,parts", [
    (12, ("60%", "40%"), [7, 5]),  # 7.2 and 4.8: the left-over unit to the larger remainder
    (2, ("50%", "50%"), [1, 1]),
    (10, ("34%", "33%", "33%"), [4, 3, 3]),  # 3.4, 3.3, 3.3: ties go to the earlier part
    (1, ("50%", "50%"), [1, 0]),
])
def test_split_adds_up_exactly(total, shares, parts):
    from fractions import Fraction
    got = q.split(Fraction(total), [q.percent(s) for s in shares], Fraction(1))
    assert got == parts and sum(got) == total


def test_each_sub_team_holds_its_share_of_every_flavor_and_the_flavors_add_up():
    spec = parse_platform(stack_platform("prod"))
    research = spec.teams[0]
    queue = q.team_queue(spec, research)
    subs = q.sub_team_queues(research, queue)
    assert [s.cluster_queue for s in subs] == ["team-research-vision", "team-research-language"]
    for key, team_quota in queue.quotas.items():
        assert sum(s.quotas[key].nominal for s in subs) == team_quota.nominal, key
        for s in subs:  # alone it may reach the team's ceiling there, and lends all it holds inside the team
            assert s.quotas[key].nominal + s.quotas[key].borrowing_limit == team_quota.nominal + team_quota.borrowing_limit
            assert s.quotas[key].lending_limit == s.quotas[key].nominal
    gpus = [q.sub_team_totals(s, names.GPU_RESOURCE) for s in subs]
    assert gpus == [7, 5]


def test_the_team_cohort_keeps_the_team_s_limits_and_its_own_queue_holds_no_nominal_quota():
    spec = parse_platform(stack_platform("prod"))
    research = spec.teams[0]
    queue = q.team_queue(spec, research)
    cohort, own = q.team_cohort_limits(queue), q.whole_team_limits(queue)
    for key, team_quota in queue.quotas.items():
        assert cohort[key].nominal == own[key].nominal == 0
        assert (cohort[key].borrowing_limit, cohort[key].lending_limit) == (team_quota.borrowing_limit,
                                                                           team_quota.lending_limit)
        assert own[key].borrowing_limit == team_quota.nominal + team_quota.borrowing_limit
    assert q.quota_ceiling(spec, research) == q.quota_ceiling(
        spec, research.model_copy(update={"queue": research.queue.model_copy(update={"sub_teams": []})}))


def test_a_share_too_small_for_one_of_a_resource_the_team_holds_is_refused():
    platform = with_sub_teams(("vision", "60%"), ("language", "40%"))
    platform["teams"][0]["quota"]["migSlices"]["1g.10gb"] = 1  # 0.6 and 0.4 of one slice: language holds none
    ps = problems(platform)
    assert ps == [("teams[0].queue.subTeams[1].share: 40% of the team's quota is less than one of "
                   "nvidia.com/mig-1g.10gb: the sub-team would hold no guarantee of it; raise its share, raise the "
                   "team's quota, or merge sub-teams")]


def test_a_sub_team_queue_named_like_another_team_s_is_refused():
    platform = with_sub_teams(("batch", "50%"), ("language", "50%"))
    platform["teams"][0]["name"] = "x"
    platform["teams"].append({**platform["teams"][2], "name": "x-batch"})
    platform["teams"][-1].pop("services", None)
    assert any("teams[0].queue.subTeams[0].name" in p and "team-x-batch" in p for p in problems(platform))
