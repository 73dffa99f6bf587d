"""The plan: what the program would register, as the stable JSON document (version 1).

Resources are ordered depth-first along the component tree, siblings by type then name, so the same
program and stack file always give the same document, whatever order the SDK registered them in.
Secret values appear as "[secret]". Later features add top-level sections (see sections.py) and
option keys; the keys written here are a contract: extend, never rename.
"""
from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any
from collections.abc import Iterable

from gpu_platform.planner.engine import Recording, Registration
from gpu_platform.planner.wire import to_json_ready

PLAN_VERSION = 1
SCHEMA_PATH = Path(__file__).with_name("plan.schema.json")


def ordered(recording: Recording) -> list[Registration]:
    """Registrations depth-first from the root stack; siblings by (type, name)."""
    known = {r.urn for r in recording.resources}
    children: dict[str | None, list[Registration]] = {}
    for reg in recording.resources:
        parent = reg.parent if reg.parent in known else None  # the root stack (or nothing) is the top
        children.setdefault(parent, []).append(reg)
    for siblings in children.values():
        siblings.sort(key=lambda r: (r.type, r.name))
    out: list[Registration] = []
    stack = list(reversed(children.get(None, [])))
    while stack:
        reg = stack.pop()
        out.append(reg)
        stack.extend(reversed(children.get(reg.urn, [])))
    return out


def resource_entry(reg: Registration) -> dict[str, Any]:
    return {
        "urn": reg.urn,
        "type": reg.type,
        "name": reg.name,
        "custom": reg.custom,
        "parent": reg.parent,
        "provider": reg.provider,
        "inputs": to_json_ready(reg.inputs),
        "options": reg.options,
    }


def build_plan(recording: Recording, violations: Iterable[dict] = ()) -> dict[str, Any]:
    """The version-1 plan document for a recording (sections are added by the caller)."""
    from gpu_platform.planner.unchecked import not_checked

    plan = {
        "version": PLAN_VERSION,
        "project": recording.project,
        "stack": recording.stack,
        "resources": [resource_entry(reg) for reg in ordered(recording)],
        "outputs": to_json_ready(recording.outputs),
        "policy": {"violations": list(violations)},
    }
    unseen = not_checked(recording)
    if unseen:  # only then: a plan that saw everything keeps its shape
        plan["notChecked"] = unseen
    return plan


def dumps(plan: dict[str, Any]) -> str:
    """Stable text: keys sorted, two-space indent, trailing newline (diff-friendly)."""
    return json.dumps(plan, indent=2, sort_keys=True) + "\n"


def write(plan: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(plan))


@lru_cache(maxsize=1)
def schema() -> dict[str, Any]:
    return json.loads(SCHEMA_PATH.read_text())


def schema_problems(plan: dict[str, Any]) -> list[str]:
    """Every way `plan` departs from plan.schema.json, one line each (empty when valid)."""
    import jsonschema  # only the checks need it

    validator = jsonschema.Draft202012Validator(schema())
    return [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
            for e in sorted(validator.iter_errors(plan), key=lambda e: list(map(str, e.absolute_path)))]
