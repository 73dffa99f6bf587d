"""Helpers for the planner's tests: the fixture program and its config, reading recorded runs, and the
preview digest Pulumi would print for a change (the fixtures built on them are in conftest.py)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

import yaml

from gpu_platform.planner.preview_gate import urn_type

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
FIXTURE_PROGRAM = Path(__file__).parent / "fixtures" / "program"
FIXTURE_CONFIG = FIXTURE_PROGRAM / "stacks" / "Pulumi.test.yaml"
FIXTURE_PROJECT = "fixture-box"  # not gpu-platform: its `fixture-box:box` key is no platform object
FIXTURE_KEY = f"{FIXTURE_PROJECT}:box"


def fixture_config(**platform) -> dict[str, str]:
    """The config map the fixture program reads, with `platform` switches added."""
    return {"aws:region": "eu-west-1", FIXTURE_KEY: json.dumps({"name": "box", **platform})}


def run_fixture(**platform):
    from gpu_platform.planner.engine import run_program

    return run_program(FIXTURE_PROGRAM, stack="test", config=fixture_config(**platform), project=FIXTURE_PROJECT)


def by_name(recording, type_: str, name: str):
    found = [r for r in recording.resources if r.type == type_ and r.name == name]
    assert len(found) == 1, f"{type_} {name}: {[r.name for r in recording.resources if r.type == type_]}"
    return found[0]


def write_yaml(path: Path, data) -> Path:
    path.write_text(yaml.safe_dump(data))
    return path


def digest_of(base: dict, head: dict) -> dict:
    """The preview digest Pulumi would print for updating `base` to `head`: a step per resource, with
    old and new inputs, and the node group's launch template version unknown while the template changes."""
    from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

    old = {r["urn"]: r for r in base["resources"]}
    steps = []
    for r in head["resources"]:
        before = old.get(r["urn"])
        new_inputs = copy.deepcopy(r["inputs"])
        op = "same" if before and before["inputs"] == r["inputs"] else "update" if before else "create"
        steps.append({"op": op, "urn": r["urn"],
                      "oldState": {"urn": r["urn"], "type": r["type"], "inputs": before["inputs"]} if before else None,
                      "newState": {"urn": r["urn"], "type": r["type"], "inputs": new_inputs}})
    changed = {s["newState"]["inputs"].get("name") for s in steps
               if s["op"] == "update" and urn_type(s["urn"]) == "aws:ec2/launchTemplate:LaunchTemplate"}
    for s in steps:
        template = (s["newState"]["inputs"].get("launchTemplate") or {}) if urn_type(s["urn"]) == NODE_GROUP else {}
        if template.get("name") in changed:
            template["version"] = UNKNOWN_STRING_VALUE
            s["op"] = "update"
    return {"config": {}, "steps": steps, "diagnostics": [], "duration": 1, "changeSummary": {}}
