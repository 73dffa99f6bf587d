"""The plan's acceptance section: per gated pool its checks, the time they add before a new node is
schedulable and what that time costs per node scale-up, in the plan JSON (held to plan.schema.json) and text."""
from __future__ import annotations

import json
from datetime import date

import jsonschema

from gpu_platform.planner import acceptance_section as s
from tests.support.stacks import spec_of

AS_OF = date(2026, 11, 23)


def test_training_pools_show_checks_time_and_cost():
    section = s.from_spec(spec_of("training-blackwell"), AS_OF)
    b200 = next(p for p in section["pools"] if p["name"] == "b200-train")
    assert (b200["level"], b200["checks"], b200["ncclFloorGbps"]) == (3, ["dcgm", "nccl", "efa"], 540.0)
    assert b200["expectedSeconds"] == 900 + 120 + 20 + 180
    assert b200["usdPerScaleUp"] == round(b200["expectedSeconds"] / 3600 * b200["usdPerNodeHour"], 2)
    text = s.text(section)
    assert "b200-train" in text and "20.3 min" in text and "readiness.k8s.io/gpu-acceptance" in text


def test_no_gate_no_section():
    assert s.from_spec(spec_of("dev"), AS_OF) is None


def test_section_matches_the_plan_schema():
    from pathlib import Path

    import gpu_platform.planner as planner

    schema = json.loads((Path(planner.__file__).parent / "plan.schema.json").read_text())
    section = json.loads(json.dumps(s.from_spec(spec_of("prod"), AS_OF)))
    jsonschema.validate(section, {**schema["$defs"]["acceptance"], "$defs": schema["$defs"]})
