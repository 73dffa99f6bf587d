"""`gpu-platform upgrade-check BASE.json HEAD.json`: is going from BASE to HEAD a supported upgrade path?

Reads two plans (`gpu-platform plan --json`, e.g. of the base branch and of a pull request), takes what
each pins from the resources it registers (decisions/pinned.py) and names, with what to do first
(decisions/upgrade_path.py): a Kubernetes minor that skips a version or goes back, a GPU Operator
upgrade that skips a release line, a driver branch change, an add-on or autoscaler image that does not
fit the new Kubernetes version. Exit 1 when a step is unsupported (an error), else 0; 2 for unreadable
plans. `compare(base_plan, head_plan)` is the same check for other commands.
"""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from gpu_platform.decisions import pinned, upgrade_path
from gpu_platform.decisions.upgrade_path import ERROR, Finding
from gpu_platform.planner.diff import load_plan
from gpu_platform.planner.tables import md_table

MARKS = {upgrade_path.ERROR: "❌", upgrade_path.WARNING: "⚠️"}


def compare(base_plan: dict[str, Any], head_plan: dict[str, Any]) -> list[Finding]:
    """The findings for going from the base plan to the head plan, errors first."""
    return upgrade_path.compare(pinned.from_plan(base_plan), pinned.from_plan(head_plan))


def add_command(commands: Any) -> None:
    p = commands.add_parser(
        "upgrade-check", help="check that BASE -> HEAD is a supported upgrade path (Kubernetes, GPU Operator, "
                              "driver branch, add-ons)",
        description="Compare the versions BASE and HEAD plans pin (`gpu-platform plan --json`) and name every "
                    "unsupported or risky step with what to do first.")
    p.add_argument("base", type=Path, metavar="BASE.json")
    p.add_argument("head", type=Path, metavar="HEAD.json")
    p.add_argument("--format", choices=("text", "markdown"), default="text")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    base, head = load_plan(args.base), load_plan(args.head)
    findings = compare(base, head)
    shown = markdown(findings, base, head) if args.format == "markdown" else text(findings, base, head)
    print(shown, end="")
    return 1 if any(f.severity == ERROR for f in findings) else 0


def _versions(plan: dict[str, Any]) -> dict[str, str]:
    pins = pinned.from_plan(plan)
    shown = {"Kubernetes": pins.kubernetes, "GPU Operator": pins.operator_chart,
             "Operator driver": pins.operator_driver, "Cluster Autoscaler": pins.autoscaler_tag}
    shown.update({f"pool {p.name} AMI": p.release_version for p in pins.pools if not p.custom_image})
    shown.update({f"add-on {name}": version for name, version in pins.addons.items()})
    return {k: v for k, v in shown.items() if v}


def _changes(base: dict[str, Any], head: dict[str, Any]) -> list[list[str]]:
    old, new = _versions(base), _versions(head)
    return [[k, old.get(k, "-"), new.get(k, "-")] for k in dict.fromkeys([*old, *new]) if old.get(k) != new.get(k)]


def _summary(findings: list[Finding]) -> str:
    errors = sum(f.severity == ERROR for f in findings)
    if not findings:
        return "Upgrade path: OK (no skipped versions, driver branch changes or unfit add-ons)."
    verdict = "UNSUPPORTED" if errors else "supported, with warnings"
    return f"Upgrade path: {verdict} ({errors} error{'s' if errors != 1 else ''}, {len(findings) - errors} warning" \
           f"{'s' if len(findings) - errors != 1 else ''})."


def text(findings: list[Finding], base: dict[str, Any], head: dict[str, Any]) -> str:
    lines = [f"Upgrade check {base.get('stack', '?')} -> {head.get('stack', '?')}", _summary(findings)]
    changes = _changes(base, head)
    if changes:
        width = max(len(c[0]) for c in changes)
        lines += ["", "Pinned versions that change:", *(f"  {k:<{width}}  {a} -> {b}" for k, a, b in changes)]
    for f in findings:
        lines += ["", f"{f.severity}: {f.subject}: {f.message}", f"  first: {f.do_first}"]
    return "\n".join(lines) + "\n"


def markdown(findings: list[Finding], base: dict[str, Any], head: dict[str, Any]) -> str:
    lines = [f"#### Upgrade check: `{head.get('stack', '?')}`", "", f"**{_summary(findings)}**", ""]
    lines += [f"{MARKS[f.severity]} **{f.subject}**: {f.message}. First: {f.do_first}." for f in findings]
    changes = _changes(base, head)
    if changes:
        lines += ["", "<details><summary>Pinned versions that change</summary>", "",
                  *md_table(["Pinned", "Base", "Head"], changes), "", "</details>"]
    return "\n".join(lines) + "\n"
