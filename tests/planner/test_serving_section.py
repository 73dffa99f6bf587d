"""The plan's serving section: one row per service with its shape, fit, cold start and cost, left out of a
stack that serves nothing."""
import pytest

from gpu_platform.planner import serving_section as section
from gpu_platform.planner.sections import PlanContext
from tests.support.stacks import spec_of


def test_prod_lists_its_mig_service_with_fit_cold_start_and_cost():
    [row] = section.from_spec(spec_of("prod"))["services"]
    assert (row["team"], row["service"], row["pool"], row["resource"]) == (
        "research", "qwen3-8b", "h100-mig", "nvidia.com/mig-3g.40gb")
    assert row["shape"] == "MIG 3g.40gb on H100-80GB-HBM3"
    assert row["fitMarginGiB"] > 0 and row["coldStartFromZeroSeconds"] > row["coldStartSeconds"]
    assert row["monthlyUsdAtMax"] == pytest.approx(2 * row["monthlyUsdAtMin"], abs=0.02)


def test_a_service_at_zero_costs_nothing_at_min():
    [row] = section.from_spec(spec_of("dev"))["services"]
    assert row["minReplicas"] == 0 and row["monthlyUsdAtMin"] == 0 and row["monthlyUsdAtMax"] > 0


def test_text_and_markdown_show_every_service():
    data = section.from_spec(spec_of("prod"))
    assert "qwen3-8b" in section.text(data) and "| qwen3-8b |" in section.markdown(data)


def test_a_stack_without_services_has_no_section():
    def none(platform):
        for team in platform["teams"]:
            team.pop("services", None)
    ctx = PlanContext(plan={}, recording=None, stack=None, platform={}, spec=spec_of("dev", none))
    assert section.build(ctx) is None
