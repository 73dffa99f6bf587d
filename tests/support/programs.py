"""Pulumi programs written in a test, run offline under the mock engine as a user's own program would be:
a component alone, in a project that is not a gpu-platform stack."""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Optional

from gpu_platform.planner.engine import Recording, Registration, run_program

PROJECT = "my-gpus"


def run(folder: Path, source: str, *, stack: str = "dev", region: str = "us-east-1",
        config: Optional[dict[str, str]] = None) -> Recording:
    """Write `source` as the program's __main__.py in `folder` and run it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "__main__.py").write_text(textwrap.dedent(source))
    return run_program(folder, stack=stack, config={"aws:region": region, **(config or {})}, project=PROJECT)


def registered(recording: Recording, type_: str) -> list[Registration]:
    return [r for r in recording.resources if r.type == type_]


def one(recording: Recording, type_: str, name: Optional[str] = None) -> Registration:
    found = [r for r in registered(recording, type_) if name is None or r.name == name]
    assert len(found) == 1, f"{type_} {name or ''}: {len(found)} registered"
    return found[0]


def under(recording: Recording, parent: Registration) -> list[Registration]:
    """Every resource below `parent`, at any depth."""
    below, frontier = [], {parent.urn}
    while frontier:
        found = [r for r in recording.resources if r.parent in frontier]
        below += found
        frontier = {r.urn for r in found}
    return below
