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


def test_each_service_shows_its_host_memory_and_the_replicas_a_node_holds():
    [row] = section.from_spec(spec_of("dev"))["services"]
    assert (row["hostMemoryGiB"], row["replicasPerNode"]) == (5, 2)  # 4 time-sliced GPUs a node, memory for 2


def test_text_and_markdown_show_every_service():
    data = section.from_spec(spec_of("prod"))
    assert "qwen3-8b" in section.text(data) and "| qwen3-8b |" in section.markdown(data)


def test_a_stack_without_services_has_no_section():
    def none(platform):
        for team in platform["teams"]:
            team.pop("services", None)
    ctx = PlanContext(plan={}, recording=None, stack=None, platform={}, spec=spec_of("dev", none))
    assert section.build(ctx) is None


# --- the planner refuses services that do not fit, naming the field (exit 2) ---

def _mig_weights(p):
    p["teams"][0]["services"][0]["model"] = {"huggingFace": p["teams"][0]["services"][0]["model"]["huggingFace"],
                                             "weightsGiB": 60}


def _over_quota(p):
    p["teams"][0]["services"][0]["replicas"] = {"min": 1, "max": 5}


def _tp_over_node(p):
    p["teams"][0]["services"][0]["gpu"] = {"pool": "a100-train", "count": 16}


def _unknown_profile(p):
    p["teams"][0]["services"][0]["gpu"]["migProfile"] = "4g.40gb"


@pytest.mark.parametrize(("edit", "field"), [
    (_mig_weights, "teams[0].services[0].model.weightsGiB"),
    (_over_quota, "teams[0].services[0].replicas.max"),
    (_tp_over_node, "teams[0].services[0].gpu.tensorParallel"),
    (_unknown_profile, "teams[0].services[0].gpu.migProfile"),
])
def test_the_planner_exits_2_naming_the_field(capsys, tmp_path, edit, field):
    from gpu_platform.planner.cli import main
    from tests.support.stacks import AS_OF, ROOT, stack_platform, write_stack

    platform = stack_platform("prod")
    edit(platform)
    path = write_stack(tmp_path / "Pulumi.prod.yaml", platform)
    code = main(["plan", "--config", str(path), "--project-dir", str(ROOT), "--as-of", AS_OF])
    err = capsys.readouterr().err
    assert code == 2 and f"{field}: " in err and "Traceback" not in err, err
