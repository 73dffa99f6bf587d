"""Shared fixtures: stack files as dicts, and the offline plan of any platform description."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
STACKS = ROOT / "stacks"


def stack_platform(stack: str) -> dict:
    """A fresh, mutable copy of `gpu-platform:platform` from stacks/Pulumi.<stack>.yaml."""
    data = yaml.safe_load((STACKS / f"Pulumi.{stack}.yaml").read_text())
    return copy.deepcopy(data["config"]["gpu-platform:platform"])


def write_stack(path: Path, platform: dict, region: str = "us-east-1") -> Path:
    path.write_text(yaml.safe_dump({"config": {"aws:region": region, "gpu-platform:platform": platform}}))
    return path


@pytest.fixture
def plan_of(tmp_path):
    """Run the real program offline on `platform` and return the plan JSON (raises on exit 2)."""
    from planner.cli import main

    def run(platform: dict, stack: str = "test", region: str = "us-east-1", extra: list[str] | None = None) -> dict:
        cfg = write_stack(tmp_path / f"Pulumi.{stack}.yaml", platform, region)
        out = tmp_path / f"plan-{stack}.json"
        try:
            code = main(["plan", "--config", str(cfg), "--json", str(out), *(extra or [])])
        except SystemExit as exit_:
            code = exit_.code
        assert code in (0, 1), f"plan exited {code}"
        return json.loads(out.read_text())

    return run


def resources(plan: dict, type_: str) -> list[dict]:
    return [r for r in plan["resources"] if r["type"] == type_]


def resource(plan: dict, type_: str, name: str) -> dict:
    found = [r for r in resources(plan, type_) if r["name"] == name]
    assert len(found) == 1, f"expected one {type_} named {name!r}, found {[r['name'] for r in resources(plan, type_)]}"
    return found[0]
