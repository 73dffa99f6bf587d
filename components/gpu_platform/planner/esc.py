"""Pulumi ESC environments a stack file imports (`environment:`), for an offline plan.

A stack file lists environments by name; Pulumi opens them in order, merges their values (later ones win,
objects merged key by key) and hands the program what sits under `pulumiConfig` as stack config, under the
stack file's own `config:` (which wins a key both set). An offline plan cannot reach Pulumi Cloud itself,
so the opened values come from:

- `--esc-values FILE` (repeatable, merged in the order given): what `esc open ENV` prints, as JSON or YAML,
  one file per environment or one for an environment that imports them all;
- else, when the `esc` CLI is on PATH, `esc open ENV --format json` for each environment (logged in as
  the user, who may read them);
- else the stack file is refused, saying both ways.

Values are taken as opened: an environment's secrets are plain text in `esc open`'s output. The planner
writes no config anywhere; a value reaches the plan only through the resource inputs the program sets from
it (as a secret where the program reads it with `require_secret`).
"""
from __future__ import annotations

import shutil
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from gpu_platform.facts import input_files
from gpu_platform.planner.errors import PlannerError

ESC_CLI = "esc"
OPEN_TIMEOUT_SECONDS = 120
CONFIG_KEY = "pulumiConfig"  # the reserved property whose values become stack config
HOW = ("give their values with --esc-values FILE (what `esc open ENV --format json` prints, once per "
       "environment in the stack's order), or install the `esc` CLI and log in so the planner opens them")


def imports_of(value: Any, label: str) -> list[str]:
    """The environments `environment:` names: a list of names, or a mapping with an `imports:` list."""
    if isinstance(value, dict) and set(value) == {"imports"}:
        value = value["imports"]
    if not isinstance(value, list) or not value or not all(isinstance(n, str) and n.strip() for n in value):
        raise PlannerError(f"{label}: `environment:` must list the Pulumi ESC environments the stack imports by "
                           "name (`environment: [my-project/dev]`); an offline plan cannot evaluate an inline "
                           "environment definition")
    return [name.strip() for name in value]


def stack_config(names: Sequence[str], files: Sequence[Path], label: str) -> dict[str, Any]:
    """The merged `pulumiConfig` of the environments `names`, opened from `files` or by the `esc` CLI."""
    if files:
        opened = [_read(path) for path in files]
    elif shutil.which(ESC_CLI):
        opened = [_open(name, label) for name in names]
    else:
        raise PlannerError(f"{label}: `environment:` imports Pulumi ESC environments ({', '.join(names)}), which "
                           f"an offline plan cannot open by itself: {HOW}")
    merged: dict[str, Any] = {}
    for values in opened:
        merged = merge(merged, values)
    config = merged.get(CONFIG_KEY, {})
    return config if isinstance(config, dict) else {}


def merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """`over` on top of `base`: objects merged key by key, anything else replaced (ESC's import order)."""
    out = dict(base)
    for key, value in over.items():
        below = out.get(key)
        out[key] = merge(below, value) if isinstance(below, dict) and isinstance(value, dict) else value
    return out


def _read(path: Path) -> dict[str, Any]:
    label = f"--esc-values {path}"
    return _values(input_files.read_yaml(path, label), label)  # YAML 1.2 reads JSON too


def _open(name: str, label: str) -> dict[str, Any]:
    try:
        done = subprocess.run([ESC_CLI, "open", name, "--format", "json"], capture_output=True, text=True,
                              timeout=OPEN_TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise PlannerError(f"{label}: `esc open {name}` failed ({exc}): {HOW}") from None
    if done.returncode != 0:
        why = (done.stderr.strip().splitlines() or [f"exit status {done.returncode}"])[-1]
        raise PlannerError(f"{label}: `esc open {name}` failed: {why}; log in (`esc login`) or {HOW}")
    return _values(input_files.parse_json(done.stdout, f"`esc open {name}`"), f"`esc open {name}`")


def _values(data: Any, label: str) -> dict[str, Any]:
    """An opened environment: a mapping, whose `pulumiConfig` (when present) maps config keys to values."""
    if not isinstance(data, dict):
        raise PlannerError(f"{label}: an opened environment is a mapping of its values (what `esc open` prints), "
                           f"not {type(data).__name__}")
    if data.get(CONFIG_KEY) is not None and not isinstance(data[CONFIG_KEY], dict):
        raise PlannerError(f"{label}: `{CONFIG_KEY}` must map config keys to values")
    return data

