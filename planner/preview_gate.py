"""`gpu-platform check-preview FILE`: fail when a real `pulumi preview --json` replaces or deletes a guarded resource.

Policies cannot see whether a step is a create, update, replace or delete (pulumi/pulumi-policy#154);
the preview's JSON digest can. Each entry of its `steps[]` carries `op`, `urn`, and for changes
`diffReasons`, `replaceReasons` and `detailedDiff` (property path -> {kind, inputDiff}), plus
`oldState`/`newState` (with `protect`). The gate fails (exit 1) on:
- a destructive op (replace, create-replacement, delete-replaced, delete, discard-replaced,
  import-replacement, read-replacement) on a guarded type: node groups, the EKS cluster, the model
  cache file system, the VPC and its subnets (add more with --guard-type);
- a step that drops `protect` from a guarded resource (the hole that lets the next update replace it);
- a preview that reported errors (its steps may be incomplete, so nothing can be proven).
Exit 2 when the file is not a preview digest.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from .errors import PlannerError

GUARDED_TYPES = (
    "aws:eks/nodeGroup:NodeGroup",
    "aws:eks/cluster:Cluster",
    "aws:efs/fileSystem:FileSystem",
    "aws:ec2/vpc:Vpc",
    "aws:ec2/subnet:Subnet",
)
DESTRUCTIVE_OPS = ("replace", "create-replacement", "delete-replaced", "delete", "discard-replaced",
                   "import-replacement", "read-replacement")
REPLACE_KINDS = ("addReplace", "deleteReplace", "updateReplace")


@dataclass(frozen=True)
class Finding:
    op: str
    urn: str
    reasons: tuple[str, ...]

    @property
    def type(self) -> str:
        return urn_type(self.urn)

    @property
    def name(self) -> str:
        return self.urn.rsplit("::", 1)[-1]

    def line(self) -> str:
        why = f": {', '.join(self.reasons)}" if self.reasons else ""
        return f"{self.op} {self.type} {self.name}{why}"


def urn_type(urn: str) -> str:
    """`urn:pulumi:s::p::a:b:C$aws:eks/nodeGroup:NodeGroup::name` -> `aws:eks/nodeGroup:NodeGroup`."""
    parts = urn.split("::")
    return parts[2].rsplit("$", 1)[-1] if len(parts) >= 4 else ""


def _reasons(step: dict[str, Any]) -> tuple[str, ...]:
    diff = step.get("detailedDiff") or {}
    replacing = [f"{path} ({d.get('kind')})" for path, d in sorted(diff.items())
                 if isinstance(d, dict) and d.get("kind") in REPLACE_KINDS]
    if replacing:
        return tuple(replacing)
    return tuple(step.get("replaceReasons") or ()) or tuple(f"{r} changed" for r in step.get("diffReasons") or ())


def _protect(step: dict[str, Any], which: str) -> bool:
    state = step.get(which) or {}
    return bool(state.get("protect"))


def check(digest: Any, guarded: Iterable[str] = GUARDED_TYPES) -> tuple[list[Finding], list[str]]:
    """Findings on guarded resources, and error diagnostics that make the preview unprovable."""
    if not isinstance(digest, dict) or not isinstance(digest.get("steps", []), list):
        raise PlannerError("not a `pulumi preview --json` digest (expected an object with `steps`)")
    wanted = set(guarded)
    by_urn: dict[str, Finding] = {}  # a replacement shows as several steps (create-replacement, replace, ...)
    for step in digest.get("steps") or []:
        urn, op = step.get("urn", ""), step.get("op", "")
        if urn_type(urn) not in wanted:
            continue
        if op in DESTRUCTIVE_OPS:
            found = Finding("delete" if op == "delete" else "replace", urn,
                            ("no longer declared",) if op == "delete" else _reasons(step))
        elif _protect(step, "oldState") and not _protect(step, "newState") and step.get("newState"):
            found = Finding("unprotect", urn, ("protect removed: the next update could replace or delete it",))
        else:
            continue
        seen = by_urn.get(urn)
        reasons = tuple(dict.fromkeys((*(seen.reasons if seen else ()), *found.reasons)))
        by_urn[urn] = Finding(seen.op if seen and seen.op != "unprotect" else found.op, urn, reasons)
    findings = list(by_urn.values())
    errors = [d.get("message", "").strip() for d in digest.get("diagnostics") or []
              if isinstance(d, dict) and d.get("severity") == "error"]
    return findings, errors


def add_command(commands: Any) -> None:
    p = commands.add_parser(
        "check-preview", help="fail when `pulumi preview --json` replaces or deletes a guarded resource",
        description="Gate a real preview: refuse replace/delete steps on node groups, the cluster, the model cache, "
                    "the VPC and subnets.")
    p.add_argument("file", type=Path, metavar="FILE", help="output of `pulumi preview --json` ('-' for stdin)")
    p.add_argument("--guard-type", action="append", default=[], metavar="TYPE",
                   help="also guard this resource type (repeatable), e.g. aws:ec2/launchTemplate:LaunchTemplate")
    p.set_defaults(run=run_check)


def run_check(args: argparse.Namespace) -> int:
    digest = _read(args.file)
    findings, errors = check(digest, (*GUARDED_TYPES, *args.guard_type))
    steps = len(digest.get("steps") or [])
    for message in errors:
        print(f"preview error: {message}")
    if errors:
        print("Preview gate: FAILED: the preview reported errors, so its steps cannot prove no guarded resource "
              "is replaced; fix the errors and preview again")
        return 1
    if not findings:
        print(f"Preview gate: passed ({steps} steps, none replaces or deletes a guarded resource).")
        return 0
    print(f"Preview gate: FAILED: {len(findings)} step(s) would replace, delete or unprotect a guarded resource:")
    for f in findings:
        print(f"  {f.line()}")
    print("Revert the change (see docs/policies.md), or make it deliberate: regenerate the node-group lock and "
          "get the replacement reviewed on its own.")
    return 1


def _read(path: Path) -> Any:
    import sys

    try:
        text = sys.stdin.read() if str(path) == "-" else path.read_text()
    except OSError as exc:
        raise PlannerError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        return json.loads(text)
    except ValueError as exc:
        raise PlannerError(f"{path}: not JSON ({exc}); write it with `pulumi preview --json > FILE`") from None
