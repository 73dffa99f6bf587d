"""What a plan could not look inside, named so that a clean verdict is never read as covering it.

A multi-language (remote) component, such as pulumi-eks's `ManagedNodeGroup` or `Cluster`, is built by its
provider plugin, which an offline run does not have: the program registers the component alone, its
children (a node group, launch template, roles) are never registered, and no policy sees them. The plan
lists each such component under `notChecked`; `plan --fail-on-unchecked` makes any an error (exit 1).
"""
from __future__ import annotations

from typing import Any

from gpu_platform.planner.engine import Recording

REMOTE = ("a multi-language component: its provider plugin builds what is inside (node groups, launch templates, "
          "roles), which an offline plan does not run, so no policy saw those resources and its outputs are unknown")


def not_checked(recording: Recording) -> list[dict[str, Any]]:
    """`{urn, type, name, reason}` for each resource whose insides the plan could not see, in program order."""
    return [{"urn": r.urn, "type": r.type, "name": r.name, "reason": REMOTE} for r in recording.resources if r.remote]


def text(entries: list[dict[str, Any]]) -> str:
    if not entries:
        return ""
    lines = [f"Not checked ({len(entries)}): the verdict above does not cover what these make"]
    lines += [f"  {e['type']}::{e['name']}: {e['reason']}" for e in entries]
    return "\n".join(lines)


def markdown(entries: list[dict[str, Any]]) -> list[str]:
    if not entries:
        return []
    return [f"**Not checked ({len(entries)})**: the verdict does not cover what these make.", ""] + [
        f"- `{e['type']}::{e['name']}`: {e['reason']}" for e in entries] + [""]


def warning(entries: list[dict[str, Any]]) -> str:
    named = ", ".join(f"{e['type']}::{e['name']}" for e in entries)
    return f"warning: not checked (the plan could not look inside): {named}; `--fail-on-unchecked` makes this an error"


def failure(entries: list[dict[str, Any]]) -> str:
    """The error `--fail-on-unchecked` gives."""
    named = ", ".join(f"{e['type']}::{e['name']}" for e in entries)
    return (f"error: --fail-on-unchecked: the plan could not look inside {named}; plan the resources it makes "
            "directly (pulumi_aws, or gpu-platform's components), or drop the flag to accept the gap")
