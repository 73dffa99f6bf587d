"""Stack files as dicts, validated specs, and the offline plan of any platform description: helpers every layer's
tests use (the fixtures built on them are in tests/conftest.py)."""
from __future__ import annotations

import copy
import json
import tempfile
from functools import cache
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
STACKS = ROOT / "stacks"
AS_OF = "2026-11-23"  # the day plans in tests are judged on (`plan --as-of`): the example stacks' last update


def stack_platform(stack: str) -> dict:
    """A fresh, mutable copy of `gpu-platform:platform` from stacks/Pulumi.<stack>.yaml."""
    data = yaml.safe_load((STACKS / f"Pulumi.{stack}.yaml").read_text())
    return copy.deepcopy(data["config"]["gpu-platform:platform"])


def stack_secrets() -> dict:
    """The secret (`secure:`) config keys of every shipped stack: the receivers' secrets they name."""
    found = {}
    for path in sorted(STACKS.glob("Pulumi.*.yaml")):
        for key, value in (yaml.safe_load(path.read_text()).get("config") or {}).items():
            if isinstance(value, dict) and set(value) == {"secure"}:
                found[key] = value
    return found


def write_stack(path: Path, platform: dict, region: str = "us-east-1") -> Path:
    """A stack file for `platform`, with the shipped stacks' receiver secrets (as `secure:` values)."""
    config = {"aws:region": region, **stack_secrets(), "gpu-platform:platform": platform}
    path.write_text(yaml.safe_dump({"config": config}))
    return path


def spec_of(stack: str, edit=None):
    """The validated spec of a shipped stack, optionally edited first (`edit(platform_dict)`)."""
    from gpu_platform.decisions.validation import parse_platform

    platform = stack_platform(stack)
    if edit:
        edit(platform)
    return parse_platform(platform)


def spec_with_pools(*pools: dict):
    """The dev stack (AMI-owned driver) with exactly these pools and no teams, validated."""
    from gpu_platform.decisions.validation import parse_platform

    platform = stack_platform("dev")
    platform["nodePools"] = list(pools)
    platform["teams"] = []
    return parse_platform(platform)


def spec_problems(platform: dict, today=None) -> list[str]:
    """What validating `platform` reports, one line per problem (empty when valid); `today` judges driver
    branches' end of life (default: the real today)."""
    from gpu_platform.decisions.validation import parse_platform
    from gpu_platform.spec.errors import SpecError

    try:
        parse_platform(platform, today=today) if today else parse_platform(platform)
    except SpecError as err:
        return err.problems
    return []


def only_spec_problem(platform: dict, path: str, today=None) -> str:
    """The one problem validating `platform` reports, which must name `path`."""
    found = spec_problems(platform, today)
    assert len(found) == 1, found
    assert found[0].startswith(f"{path}: "), found
    return found[0]


_PLANS = Path(tempfile.mkdtemp(prefix="gpu-platform-plans-"))


def cached_plan(platform: dict, stack: str = "test", region: str = "us-east-1", extra: tuple[str, ...] = ()) -> dict:
    """The plan JSON of `platform` through the real `gpu-platform plan`, computed once per distinct input.

    Each plan costs about a second and many tests read the same ones. A fresh copy each call: tests may
    mutate it. Raises on exit 2 (an invalid platform). The stack name selects e.g. the lock file.
    """
    return copy.deepcopy(_plan(json.dumps(platform, sort_keys=True), stack, region, tuple(extra)))


@cache
def _plan(platform_json: str, stack: str, region: str, extra: tuple[str, ...]) -> dict:
    from gpu_platform.planner.cli import main

    folder = Path(tempfile.mkdtemp(dir=_PLANS))
    cfg = write_stack(folder / f"Pulumi.{stack}.yaml", json.loads(platform_json), region)
    out = folder / "plan.json"
    try:
        as_of = () if "--as-of" in extra else ("--as-of", AS_OF)  # support windows and prices judged on a fixed day
        code = main(["plan", "--config", str(cfg), "--json", str(out), *as_of, *extra])
    except SystemExit as exit_:
        code = exit_.code
    assert code in (0, 1), f"plan exited {code}"
    return json.loads(out.read_text())


def resources(plan: dict, type_: str) -> list[dict]:
    return [r for r in plan["resources"] if r["type"] == type_]


def resource(plan: dict, type_: str, name: str) -> dict:
    found = [r for r in resources(plan, type_) if r["name"] == name]
    assert len(found) == 1, f"expected one {type_} named {name!r}, found {[r['name'] for r in resources(plan, type_)]}"
    return found[0]


def on_kubernetes(stack: str, version: str, release_day: str = "20251120") -> dict:
    """A shipped stack moved to another Kubernetes minor, its AMI releases with it (add-ons unchanged)."""
    platform = stack_platform(stack)
    platform["cluster"]["kubernetesVersion"] = version
    release = f"{version}.5-{release_day}"
    platform["cluster"]["create"]["systemNodes"]["releaseVersion"] = release
    for pool in platform["nodePools"]:
        if "releaseVersion" in pool["ami"]:
            pool["ami"]["releaseVersion"] = release
    return platform


def unqueued(platform: dict) -> dict:
    """A stack file's platform without queueing (team quotas are the ResourceQuotas as written); edits in place."""
    platform.pop("queueing", None)
    for team in platform.get("teams", []):
        team.pop("queue", None)
    return platform


def without_services(platform: dict) -> dict:
    """A stack file's platform without teams' services (for variants, such as no model cache or no Prometheus,
    that services refuse); edits in place."""
    for team in platform.get("teams", []):
        team.pop("services", None)
    return platform
