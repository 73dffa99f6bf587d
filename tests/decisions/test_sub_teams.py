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
