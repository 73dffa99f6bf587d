"""`gpu-platform lock`: write the node-group lock the replacement guard holds a stack to.

  gpu-platform lock (--stack NAME | --config FILE | --plan PLAN.json) [--out FILE] [--policy-config FILE]

The lock records, per node group (by logical name), every replace-forcing input the stack file decides
(policy.replacement.LOCKED_INPUTS), and per pool the fingerprint of everything whose change
restarts GPU operands, evicts GPU pods or rolls nodes (decisions.disruption). It is committed beside the
stack files as `Pulumi.<stack>.lock.json` (in the project's stackConfigDir), or, with `--policy-config
FILE`, written inline into that policy config file's lock-reading entries (what a pack published to
Pulumi Cloud needs: policy.locks); the policy pack then refuses any update that would replace a locked
group, drop one, or (in prod) evict GPU pods or roll nodes the lock does not record. Regenerating the
lock in the same pull request is how such a change is made deliberate and reviewed; the command prints
what changed against the previous lock so the reviewer sees it too.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Optional

from gpu_platform.planner.errors import PlannerError

NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


def add_command(commands: Any) -> None:
    p = commands.add_parser(
        "lock", help="write Pulumi.<stack>.lock.json beside the stack files (or into a policy config): the node "
                     "groups' replace-forcing inputs and each pool's disruption fingerprint",
        description="Lock every node group's replace-forcing inputs from an offline plan, for the replacement guard.")
    from gpu_platform.planner.cli import add_stack_options

    add_stack_options(p, then=" and lock it", from_plan="lock from a plan written by `plan --json`")
    p.add_argument("--out", metavar="FILE", type=Path,
                   help="where to write (default: Pulumi.<stack>.lock.json beside the stack files, unless "
                        "--policy-config is given)")
    p.add_argument("--policy-config", metavar="FILE", type=Path,
                   help="write the lock inline into this policy config file (for a published pack)")
    p.set_defaults(run=run_lock)


def run_lock(args: argparse.Namespace) -> int:
    if args.out is not None and args.out.is_dir():  # refused before the program runs
        raise PlannerError(f"--out {args.out}: is a directory; give the lock file's path, e.g. "
                           f"{args.out / 'Pulumi.<stack>.lock.json'}")
    plan, project = _plan(args)
    lock = lock_from_plan(plan)
    written, old = [], None
    out = args.out or (None if args.policy_config else _default_out(project, plan["stack"]))
    if out is not None:
        old = _previous(out)
        _write(out, lock)
        written.append(str(out))
    if args.policy_config is not None:
        in_config = _write_inline(args.policy_config, lock)
        old = old if out is not None else in_config
        written.append(f"{args.policy_config} (inline)")
    groups = lock["nodeGroups"]
    karpenter = f", {len(lock['nodePools'])} Karpenter NodePool(s)" if lock.get("nodePools") else ""
    print(f"Locked {len(groups)} node group(s){karpenter} and {len(lock['pools'])} pool(s) of stack {plan['stack']} in "
          f"{' and '.join(written)}")
    for line in changes(old, lock):
        print(f"  {line}")
    return 0


def _write(out: Path, lock: dict[str, Any]) -> None:
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(lock, indent=2, sort_keys=True) + "\n")
    except OSError as exc:
        raise PlannerError(f"--out {out}: cannot write the lock there: {exc.strerror or exc}") from None


def _default_out(project: Any, stack: str) -> Path:
    if project is None:
        raise PlannerError("no Pulumi project here to put the lock beside its stack files: pass --out FILE, "
                           "--policy-config FILE or --project-dir DIR")
    return project.lock_file(stack)


def _write_inline(path: Path, lock: dict[str, Any]) -> Optional[dict[str, Any]]:
    from gpu_platform.planner import lock_config
    from gpu_platform.planner.verdict import load_pack

    try:
        return lock_config.write_inline(path, lock, load_pack())
    except (OSError, ValueError) as exc:
        raise PlannerError(f"--policy-config {path}: cannot update it: {exc}") from None


def lock_from_plan(plan: dict[str, Any]) -> dict[str, Any]:
    """The lock document for a plan; refuses values the plan could not know."""
    from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

    from gpu_platform.decisions import disruption, disruption_model
    from gpu_platform.decisions.cuda_drivers import team_minimums
    from gpu_platform.planner.verdict import _engine_value

    replacement = _replacement()
    resources = plan.get("resources") or []
    groups = {r["name"]: unknown_checking_proxy(_engine_value(r.get("inputs") or {}))
              for r in resources if r.get("type") == NODE_GROUP}
    node_pools = {r["name"]: unknown_checking_proxy(_engine_value(r.get("inputs") or {}))
                  for r in resources if r.get("type") == replacement.NODE_POOL}
    pools = disruption.pools_of((r["type"], r["name"], r.get("inputs") or {}) for r in resources)
    entries = {name: disruption.lock_entry(pool) for name, pool in pools.items()}
    unknown = sorted(name for name, entry in entries.items() if disruption_model.UNKNOWN in json.dumps(entry))
    if unknown:
        raise PlannerError(f"cannot lock: pool(s) {', '.join(unknown)} have inputs the plan does not know; lock "
                           "from a plan whose node-group, launch-template and GPU Operator inputs are known")
    teams = team_minimums((r["type"], r.get("inputs") or {}) for r in resources)
    try:
        doc = replacement.new_lock(plan["stack"], groups, entries, node_pools)
    except UnknownValueError as err:
        raise PlannerError(f"cannot lock: {err.message} in the plan; lock from a plan whose node-group inputs are known") from None
    if teams:  # the CUDA minimums the pack holds the pools' drivers to (policy/cuda.py)
        doc["teams"] = teams
    return doc


def changes(old: Optional[dict[str, Any]], new: dict[str, Any]) -> list[str]:
    """Human lines: groups added or dropped, inputs changed (what a reviewer must agree to)."""
    if old is None:
        return ["(no previous lock)"]
    lines = []
    for section, what in (("nodeGroups", "node group"), ("nodePools", "NodePool")):
        before, after = old.get(section, {}), new.get(section, {})
        lines += [f"+ {name}: newly locked" for name in sorted(set(after) - set(before))]
        lines += [f"- {name}: no longer locked (the guard will not stop its deletion)" for name in sorted(set(before) - set(after))]
        for name in sorted(set(before) & set(after)):
            for key in sorted(set(before[name]) | set(after[name])):
                if before[name].get(key) != after[name].get(key):
                    lines.append(f"~ {name}.{key}: {json.dumps(before[name].get(key))} -> {json.dumps(after[name].get(key))}"
                                 f" (replaces the {what})")
    return (lines + pool_changes(old.get("pools"), new["pools"])
            + team_changes(old.get("teams") or {}, new.get("teams") or {})) or ["(unchanged)"]


def team_changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The CUDA minimums the new lock holds pools to, where they changed."""
    return [f"~ team {name}: minCuda {json.dumps(before.get(name))} -> {json.dumps(after.get(name))}"
            for name in sorted(set(before) | set(after)) if before.get(name) != after.get(name)]


def pool_changes(before: Optional[dict[str, Any]], after: dict[str, Any]) -> list[str]:
    """What the new lock approves per pool: each fingerprint change with its effect."""
    from gpu_platform.decisions import disruption

    if before is None:
        return [f"+ pool {name}: fingerprint recorded" for name in sorted(after)]
    lines = [f"+ pool {name}: fingerprint recorded" for name in sorted(set(after) - set(before))]
    for name in sorted(set(before) & set(after)):
        found = disruption.classify(disruption.pool_from_lock(name, before[name]),
                                    disruption.pool_from_lock(name, after[name]), locked_only=True)
        lines += [f"~ pool {name}: approves {c.effect.label}: {c.text}" for c in (found.causes if found else ())]
    return lines


def _previous(path: Path) -> Optional[dict[str, Any]]:
    """The lock `path` held before (None when there was none, or it was not a lock: it is replaced whole)."""
    from gpu_platform.policy.locks import LockError, read_lock

    try:
        return read_lock(path) if path.is_file() else None
    except LockError:
        return None


def _replacement() -> Any:
    from gpu_platform.planner.verdict import load_pack

    load_pack()
    from gpu_platform.policy import replacement

    return replacement


def _plan(args: argparse.Namespace) -> tuple[dict[str, Any], Any]:
    """The plan to lock and the project whose stack files the lock goes beside (None: no project here)."""
    from gpu_platform.planner import cli
    from gpu_platform.planner import plan as plan_doc
    from gpu_platform.planner import project as projects

    if args.plan is not None:
        from gpu_platform.planner.diff import load_plan

        return load_plan(args.plan, f"--plan {args.plan}"), projects.find_optional(args.project_dir)
    project, stack = cli.load(args)
    projects.prevalidate(project, stack)
    recording = cli.run_program(project, stack, False, args.mocks)
    if recording is None:
        print("error: the program failed; nothing was locked", file=sys.stderr)
        raise SystemExit(cli.EXIT_FAILED)
    return plan_doc.build_plan(recording), project
