"""A plan no lock holds: the replacement guard then has nothing to compare node groups against, so a change
that replaces or deletes them passes. A prod stack planned that way is warned about (`plan --require-lock`
makes any stack without a lock an error, for a CI gate), and lock advice names the stack file the plan read.
"""
from __future__ import annotations

from typing import Any, Optional

from gpu_platform.planner import stackfile

POLICY = "locked-node-groups-present"  # the pack's rule for a stack without a lock (its `requireLock`)


def planned_as_named(project: stackfile.Project, stack: stackfile.StackConfig) -> bool:
    """Whether the file planned is the project's own file for its stack name (`--stack`, or `--config` of it)."""
    return project.stack_file(stack.stack).resolve() == stack.path.resolve()


def lock_command(project: stackfile.Project, stack: stackfile.StackConfig) -> str:
    """The `gpu-platform lock` command that writes the lock this plan reads: by `--config` for a file planned
    from outside the project's stack folder, whose name is not a stack of its own."""
    if planned_as_named(project, stack):
        return f"gpu-platform lock --stack {stack.stack}"
    return f"gpu-platform lock --config {stackfile.show_path(stack.path)}"


def advice(message: str, project: stackfile.Project, stack: stackfile.StackConfig) -> str:
    """`message` with the rules' `gpu-platform lock --stack <stack>` advice as the command for the file planned."""
    return message.replace(f"gpu-platform lock --stack {stack.stack}", lock_command(project, stack))


def with_lock_advice(violations: list[dict[str, Any]], project: stackfile.Project,
                     stack: stackfile.StackConfig) -> list[dict[str, Any]]:
    return [{**v, "message": advice(v["message"], project, stack)} for v in violations]


def related_stacks(project: stackfile.Project, stack: stackfile.StackConfig) -> list[str]:
    """The project's locked stacks whose name this stack's extends (`prod` for `prod.head`): the stack a
    copied file most likely stands for."""
    return [n for n in project.stacks()
            if n != stack.stack and stack.stack.startswith(f"{n}.") and project.lock_file(n).is_file()]


def missing_lock(project: stackfile.Project, stack: stackfile.StackConfig, environment: Optional[str],
                 violations: list[dict[str, Any]]) -> str:
    """Why no lock holding this plan matters, and how to give it one."""
    where = stackfile.show_path(stack.path)
    looked = stackfile.show_path(project.lock_file(stack.stack))
    kind = f"a {environment} stack" if environment else "planned"
    text = (f"{where} is {kind}, but no node-group lock holds this plan (none at {looked}, none in the policy "
            "config, no --lock): the replacement guard has nothing to hold it to, so a change that replaces or "
            "deletes node groups passes")
    related = related_stacks(project, stack)
    if related:  # a copy: locking it under its own name would approve whatever it changes
        return text + "; it looks like a copy of " + " or ".join(
            f"stack {n!r}, whose lock {stackfile.show_path(project.lock_file(n))} holds only that stack: make the "
            f"change in {stackfile.show_path(project.stack_file(n))} and plan `--stack {n}`" for n in related)
    return (text + "; if this file copies another stack, plan it with that stack's lock (`--lock FILE`); a new "
            f"stack's first lock: `{lock_command(project, stack)}`")


def lock_violation(message: str) -> dict[str, Any]:
    return {"policy": POLICY, "level": "mandatory", "urn": None, "message": message}


def reported(violations: list[dict[str, Any]]) -> bool:
    """Whether the pack already refused the missing lock (`requireLock` in its config)."""
    return any(v["policy"] == POLICY and v["message"].startswith("no node-group lock") for v in violations)
