"""End to end: `gpu-platform plan` on the real program and every stack file in stacks/."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from gpu_platform.planner.cli import main
from gpu_platform.planner.plan import schema_problems
from tests.support.stacks import AS_OF

ROOT = Path(__file__).resolve().parents[2]
STACKS = sorted(p.name[len("Pulumi."):-len(".yaml")] for p in (ROOT / "stacks").glob("Pulumi.*.yaml"))


@pytest.fixture(scope="module", params=STACKS)
def planned(request, tmp_path_factory):
    out = tmp_path_factory.mktemp(request.param) / "plan.json"
    code = main(["plan", "--project-dir", str(ROOT), "--stack", request.param, "--json", str(out), "--as-of", AS_OF])
    return request.param, code, json.loads(out.read_text()) if out.exists() else None


def test_there_are_dev_and_prod_stacks():
    assert {"dev", "prod"} <= set(STACKS)


def test_every_stack_plans_clean(planned):
    stack, code, _ = planned
    assert code == 0, f"plan --stack {stack} exited {code}"


def test_every_stack_plan_validates_against_the_schema(planned):
    assert schema_problems(planned[2]) == []


def test_every_stack_plan_names_its_stack(planned):
    assert planned[2]["stack"] == planned[0]


def test_invalid_field_exits_2_naming_the_field(tmp_path, capsys):
    data = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    data["config"]["gpu-platform:platform"]["nodePools"][0]["maxSize"] = "four"
    path = tmp_path / "Pulumi.dev.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["plan", "--project-dir", str(ROOT), "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and f"error: {path}: nodePools[0].maxSize" in err


@pytest.mark.parametrize("edit, field", [
    (lambda create: create.update(publicAccessCidrs=["0.0.0.0/0"]), "cluster.create.publicAccessCidrs[0]"),
    (lambda create: create.pop("publicAccessCidrs"), "cluster.create.publicAccessCidrs"),
], ids=["open-to-the-world", "left-out"])
def test_a_prod_api_endpoint_open_to_the_internet_exits_2_naming_the_field_and_the_fix(tmp_path, capsys, edit, field):
    data = yaml.safe_load((ROOT / "stacks" / "Pulumi.prod.yaml").read_text())
    edit(data["config"]["gpu-platform:platform"]["cluster"]["create"])
    path = tmp_path / "Pulumi.prod.yaml"
    path.write_text(yaml.safe_dump(data))
    assert main(["plan", "--project-dir", str(ROOT), "--config", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"error: {path}: {field}: " in err and "endpointPublicAccess: false" in err and "203.0.113.0/24" in err
