"""The plan's `queueing` section: nominal, borrowable and ceiling per team, flavors beside capacity; JSON
(schema), text and Markdown; absent when a stack does not queue."""
import pytest

from gpu_platform.decisions.queueing import quantity
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.planner import queueing_section as section
from gpu_platform.planner.plan import schema_problems
from gpu_platform.render.team_objects import TeamContext, quota_hard
from tests.support.stacks import cached_plan, stack_platform


@pytest.fixture(scope="module")
def prod_section():
    return section.from_spec(parse_platform(stack_platform("prod")))


def team(sec, name):
    return next(t for t in sec["teams"] if t["name"] == name)


def row(t, resource):
    return next(r for r in t["resources"] if r["resource"] == resource)


def test_nominal_borrowable_and_ceiling_per_team(prod_section):
    research = team(prod_section, "research")
    assert row(research, "nvidia.com/gpu") == {"resource": "nvidia.com/gpu", "nominal": "12", "borrowable": "12",
                                               "lendable": "12", "ceiling": "24"}
    inference = team(prod_section, "inference")
    assert row(inference, "nvidia.com/gpu") == {"resource": "nvidia.com/gpu", "nominal": "6", "borrowable": "0",
                                                "lendable": "3", "ceiling": "6"}  # 50% lending in the prod stack
    assert (inference["borrowingLimit"], inference["lendingLimit"]) == ("0%", "50%")
    assert inference["preemption"] == {"withinClusterQueue": "LowerPriority", "reclaimWithinCohort": "Any"}


def test_the_ceiling_is_the_resource_quota_the_program_registers(prod_section):
    spec = parse_platform(stack_platform("prod"))
    for t in spec.teams:
        hard = quota_hard(TeamContext.of(spec, t), t)
        for r in team(prod_section, t.name)["resources"]:
            assert quantity(hard[f"requests.{r['resource']}"]) == quantity(r["ceiling"])
            assert quantity(r["ceiling"]) == quantity(r["nominal"]) + quantity(r["borrowable"])


def test_flavors_show_capacity_and_the_nominal_quota_placed_on_them(prod_section):
    flavors = {f["name"]: f for f in prod_section["flavors"]}
    assert (flavors["a100-train"]["capacityAtMax"], flavors["a100-train"]["nominal"],
            flavors["a100-train"]["unplaced"]) == (16, 16, 0)
    assert (flavors["h100-mig-2g.20gb"]["nominal"], flavors["h100-mig-2g.20gb"]["unplaced"]) == (2, 14)
    assert all(f["nominal"] <= f["capacityAtMax"] for f in flavors.values())


def test_text_lists_every_team_and_flavor(prod_section):
    shown = section.text(prod_section)
    lines = shown.splitlines()
    header = lines[0]
    assert header.split() == ["Team", "Tier", "Resource", "Nominal", "Borrowable", "Ceiling", "Lendable", "Nominal",
                              "on", "flavors"]
    research_gpu = next(line for line in lines if " gpu " in line and "a100-train 12" in line)
    assert research_gpu.split()[1:4] == ["12", "12", "24"]
    assert "h100-mig-1g.10gb" in shown and "Kueue 0.19.2, cohort gpu-platform" in shown


def test_a_team_s_unused_resources_are_left_out_of_the_table(prod_section):
    rows = section._team_rows(prod_section)
    assert not [r for r in rows if r[2] == "mig-1g.10gb" and r[3] == "0"]


def test_markdown_is_a_table_with_the_flavors_folded(prod_section):
    md = section.markdown(prod_section)
    assert md.startswith("| Team | Tier | Resource | Nominal | Borrowable | Ceiling |")
    assert "<details><summary>Flavors" in md and "| a100-train | a100-train | gpu | on-demand | 16 | 16 | 0 |" in md


def test_the_plan_carries_the_section_and_matches_the_schema():
    plan = cached_plan(stack_platform("prod"), "prod")
    assert plan["queueing"] == section.from_spec(parse_platform(stack_platform("prod")))
    assert schema_problems(plan) == []


def test_the_schema_refuses_a_malformed_section():
    plan = cached_plan(stack_platform("prod"), "prod")
    plan["queueing"]["teams"][0]["resources"][0]["ceiling"] = "lots"
    assert schema_problems(plan)


def test_a_stack_that_does_not_queue_has_no_section():
    assert "queueing" not in cached_plan(stack_platform("dev"), "dev")


def test_fair_sharing_sub_teams_and_the_debug_queue_are_named(prod_section):
    assert prod_section["fairSharing"]["usageHalfLife"] == "168h"
    assert prod_section["fairSharing"]["resourceWeights"]["cpu"] == 0
    assert prod_section["debugQueue"] == {"localQueue": "debug", "runtimeCeilingMinutes": 60}
    research = next(t for t in prod_section["teams"] if t["name"] == "research")
    assert [(s["name"], s["share"], s["clusterQueue"]) for s in research["subTeams"]] == [
        ("vision", "60%", "team-research-vision"), ("language", "40%", "team-research-language")]
    assert [q["name"] for q in research["localQueues"]] == ["team-queue", "debug", "vision", "language"]
    out = section.text(prod_section)
    assert "Sub-teams of research: cohort team-research under gpu-platform" in out
    assert "vision 60% (ClusterQueue team-research-vision" in out and "use counts half after 168h" in out
    assert "Debug queue: LocalQueue debug" in out and "Sub-teams of research" in section.markdown(prod_section)


def test_sub_teams_nominal_quotas_are_their_shares_adding_up_to_the_team_s(prod_section):
    research = next(t for t in prod_section["teams"] if t["name"] == "research")
    assert research["teamCohort"] == "team-research"
    gpus = {s["name"]: {n["resource"]: n["nominal"] for n in s["nominal"]} for s in research["subTeams"]}
    # 12 GPUs at 60/40: 7.2 and 4.8, the left-over GPU to the larger remainder; 16 1g slices: 9.6 and 6.4;
    # two 3g slices: 1.2 and 0.8, so each sub-team holds one.
    assert [gpus["vision"]["nvidia.com/gpu"], gpus["language"]["nvidia.com/gpu"]] == ["7", "5"]
    assert [gpus["vision"]["nvidia.com/mig-1g.10gb"], gpus["language"]["nvidia.com/mig-1g.10gb"]] == ["10", "6"]
    assert [gpus["vision"]["nvidia.com/mig-3g.40gb"], gpus["language"]["nvidia.com/mig-3g.40gb"]] == ["1", "1"]
    assert [gpus["vision"]["cpu"], gpus["language"]["cpu"]] == ["240", "160"]
    team = {r["resource"]: r for r in research["resources"]}
    assert team["nvidia.com/gpu"]["nominal"] == "12" and team["nvidia.com/gpu"]["ceiling"] == "24"
    assert all(t["teamCohort"] is None and not t["subTeams"] for t in prod_section["teams"] if t["name"] != "research")
