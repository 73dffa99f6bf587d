"""`gpu-platform lock` records each team's CUDA minimum and the pools held to it, read from the team namespaces
the program registers; the pack's cuda-minimum-met reads them from there."""
from gpu_platform.facts import names
from gpu_platform.planner.lock import changes, lock_from_plan
from tests.support.stacks import resource, stack_platform, unqueued


def test_the_lock_records_a_teams_minimum_and_the_pools_it_reaches(plan_of):
    platform = stack_platform("prod")  # Kueue: research reaches a100-train only
    platform["teams"][0]["minCuda"] = "12.8"
    plan = plan_of(platform, "prod")
    notes = resource(plan, "kubernetes:core/v1:Namespace", "team-research")["inputs"]["metadata"]["annotations"]
    assert notes == {names.MIN_CUDA_ANNOTATION: "12.8", names.MIN_CUDA_POOLS_ANNOTATION: "a100-train"}
    assert lock_from_plan(plan)["teams"] == {"research": {"minCuda": "12.8", "pools": ["a100-train"]}}


def test_without_queueing_a_team_reaches_every_pool(plan_of):
    platform = unqueued(stack_platform("prod"))
    platform["teams"][1]["minCuda"] = "13.0"
    lock = lock_from_plan(plan_of(platform, "prod"))
    assert lock["teams"] == {"inference": {"minCuda": "13.0", "pools": ["h100-mig", "a100-train", "l4-inference"]}}


def test_no_minimum_no_teams_section_and_the_change_is_shown(plan_of):
    before = lock_from_plan(plan_of(stack_platform("prod"), "prod"))
    assert "teams" not in before
    platform = stack_platform("prod")
    platform["teams"][0]["minCuda"] = "12.8"
    after = lock_from_plan(plan_of(platform, "prod"))
    assert '~ team research: minCuda null -> {"minCuda": "12.8", "pools": ["a100-train"]}' in changes(before, after)
