"""Extra plan sections (capacity, cost, ...): one registry so features plug in without touching the CLI.

A section turns the plan context into JSON-ready data (stored in the plan under `name`), renders that
data as text and as Markdown, and may contribute files to `--out`. To add one, write a module that
calls `register(Section(...))` at import and add the module's name to `SECTION_MODULES`.
Sections run in `SECTION_MODULES` order, after the resources are recorded and before the policy
verdict, so policies can read them.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any, Optional
from collections.abc import Callable

if TYPE_CHECKING:
    from gpu_platform.planner.engine import Recording
    from gpu_platform.planner.stackfile import StackConfig

# Modules that register sections when imported, e.g. "gpu_platform.planner.capacity_section".
SECTION_MODULES: list[str] = [f"gpu_platform.planner.{m}" for m in (
    "capacity_section", "cost_section", "reservations_section", "training_section", "lifecycle_section", "health_section",
    "queueing_section", "logging_section", "serving_section", "usage_section", "acceptance_section")]

RESERVED = frozenset({"version", "project", "stack", "resources", "outputs", "policy"})


@dataclass(frozen=True)
class PlanContext:
    """Everything a section may read."""

    plan: dict[str, Any]  # the plan document so far: resources, outputs, policy (empty)
    recording: "Recording"  # raw registrations: secrets as wire.Secret, the mocks' outputs
    stack: "StackConfig"  # the stack file as config strings
    platform: Any  # the `<project>:platform` object as loaded, or None
    spec: Any  # the validated PlatformSpec when the stack file sets the platform object, else None
    as_of: Optional[date] = None  # the day support windows and prices are judged on (`plan --as-of`); None: today


def _no_files(data: Any) -> dict[str, str]:
    return {}


@dataclass(frozen=True)
class Section:
    name: str  # key in the plan JSON
    title: str  # heading in text and Markdown
    build: Callable[[PlanContext], Optional[Any]]  # JSON-ready data; None leaves the section out
    render_text: Callable[[Any], str]
    render_markdown: Callable[[Any], str]
    files: Callable[[Any], dict[str, str]] = _no_files  # `--out` files: relative path -> text
    needs_platform: bool = False  # computed from the stack file's platform object (left out without one)


_REGISTRY: dict[str, Section] = {}


def register(section: Section) -> Section:
    if section.name in RESERVED:
        raise ValueError(f"section name {section.name!r} is a plan key already")
    existing = _REGISTRY.get(section.name)
    if existing is not None and existing is not section:
        raise ValueError(f"section {section.name!r} is registered twice")
    _REGISTRY[section.name] = section
    return section


def unregister(name: str) -> None:
    """Remove a section (tests register temporary ones)."""
    _REGISTRY.pop(name, None)


def sections() -> list[Section]:
    """The sections in SECTION_MODULES order, whichever module was imported first; others (tests' temporary
    ones) after them, in registration order."""
    for module in SECTION_MODULES:
        importlib.import_module(module)
    rank = {m: i for i, m in enumerate(SECTION_MODULES)}
    return sorted(_REGISTRY.values(), key=lambda s: rank.get(s.build.__module__, len(rank)))


def build_all(ctx: PlanContext) -> dict[str, Any]:
    """Each section's data by name, leaving out sections with nothing to say."""
    built = {}
    for section in sections():
        data = section.build(ctx)
        if data is not None:
            built[section.name] = data
    return built
