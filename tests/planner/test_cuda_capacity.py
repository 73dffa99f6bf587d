"""Each pool's CUDA ceiling in the plan's capacity section: JSON (held to the plan schema), text and Markdown."""
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.planner import capacity_section
from gpu_platform.planner.plan import schema_problems
from tests.support.stacks import on_kubernetes, stack_platform


def capacity(platform: dict) -> dict:
    return capacity_section.from_spec(parse_platform(platform))


def test_an_ami_pool_shows_its_branchs_ceiling():
    (pool,) = capacity(stack_platform("dev"))["pools"]
    assert pool["cudaCeiling"] == {"drivers": [{"driver": "580", "certain": True}], "native": "13.0",
                                   "minorVersionCompatibility": "13.x"}
    assert capacity_section.cuda_text(pool) == "13.0 (13.x)"


def test_an_older_ami_release_shows_the_older_branchs_ceiling():
    (pool,) = capacity(on_kubernetes("dev", "1.33", "20250901"))["pools"]
    assert pool["cudaCeiling"]["drivers"] == [{"driver": "570", "certain": True}]
    assert capacity_section.cuda_text(pool) == "12.8 (12.x)"


def test_ubuntu_pools_show_the_operators_exact_driver():
    platform = stack_platform("prod")
    platform["gpuOperator"]["driver"]["version"] = "595.91.07"
    pools = capacity(platform)["pools"]
    assert {p["cudaCeiling"]["drivers"][0]["driver"] for p in pools} == {"595.91.07"}
    assert {capacity_section.cuda_text(p) for p in pools} == {"13.1 (13.x)"}


def test_a_pool_whose_driver_is_not_known_says_so():
    section = {"cudaCeiling": {"drivers": [], "native": None, "minorVersionCompatibility": None}}
    assert capacity_section.cuda_text(section) == "?"
    possible = {"cudaCeiling": {"drivers": [{"driver": "595", "certain": False}], "native": "13.1",
                                "minorVersionCompatibility": "13.x"}}
    assert capacity_section.cuda_text(possible) == "13.1 (13.x) ~"


def test_the_section_is_valid_against_the_plan_schema_and_shows_the_column():
    section = capacity(stack_platform("prod"))
    plan = {"version": 1, "project": "gpu-platform", "stack": "prod", "resources": [], "outputs": {},
            "policy": {"violations": []}, "capacity": section}
    assert schema_problems(plan) == []
    bad = {**plan, "capacity": {**section, "pools": [{**section["pools"][0], "cudaCeiling": {"drivers": [],
                                                                                          "native": "13"}}]}}
    assert schema_problems(bad)
    assert "CUDA" in capacity_section.text(section) and "CUDA ceiling" in capacity_section.markdown(section)
    assert "13.0 (13.x)" in capacity_section.markdown(section)
