"""`gpu-platform check-preview FILE`: fail when a real `pulumi preview --json` replaces or deletes a guarded
resource, or, in prod, evicts GPU pods or rolls nodes the lock does not approve.

Policies cannot see whether a step is a create, update, replace or delete (pulumi/pulumi-policy#154);
the preview's JSON digest can. Each entry of its `steps[]` carries `op`, `urn`, and for changes
`diffReasons`, `replaceReasons` and `detailedDiff` (property path -> {kind, inputDiff}), plus
`oldState`/`newState` (with `protect`). The gate fails (exit 1) on:
- a destructive op (replace, create-replacement, delete-replaced, delete, discard-replaced,
  import-replacement, read-replacement) on a guarded type: node groups, Karpenter NodePools and
  EC2NodeClasses, the EKS cluster, the model cache and datasets file systems, the VPC and its subnets
  (add more with --guard-type);
- a step that drops `protect` from a guarded resource (the hole that lets the next update replace it);
- a preview that reported errors (its steps may be incomplete, so nothing can be proven);
- in prod (--environment, else the policy config's `environment`, else the aws provider's environment tag;
  unknown: prod), a pool the steps disrupt with a GPU
  pod eviction or a node roll (decisions/disruption.py reads each step's old and new inputs: an update
  of a node group's release or version, or of its launch template's content, or a NodePool template or
  EC2NodeClass change that drifts Karpenter's nodes, is a node roll) whose new
  inputs the lock does not record. Elsewhere such a disruption is reported, not refused.
The lock is found as `gpu-platform plan` finds it (planner/lock_config.py): --lock, else the policy config's
`disruption-approved` entry, else Pulumi.<stack>.lock.json beside the project's stack files.
Exit 2 when the file is not a preview digest.
"""
from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional
from collections.abc import Iterable

from gpu_platform.planner.errors import PlannerError

GUARDED_TYPES = (
    "aws:eks/nodeGroup:NodeGroup",
    "aws:eks/cluster:Cluster",
    "aws:efs/fileSystem:FileSystem",
    "aws:fsx/lustreFileSystem:LustreFileSystem",
    "aws:ec2/vpc:Vpc",
    "aws:ec2/subnet:Subnet",
    "kubernetes:karpenter.sh/v1:NodePool",  # deleting one makes Karpenter terminate every node it launched
    "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass",
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
    problem = _digest_problem(digest)
    if problem:
        raise PlannerError(f"not a `pulumi preview --json` digest: {problem}")
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


def _digest_problem(digest: Any) -> Optional[str]:
    """What the gate reads of a digest, checked before it reads it: steps and diagnostics as objects."""
    if not isinstance(digest, dict) or not isinstance(digest.get("steps", []), list):
        return "expected an object with `steps`"
    for i, step in enumerate(digest.get("steps") or []):
        if not isinstance(step, dict) or not isinstance(step.get("urn", ""), str) or not isinstance(step.get("op", ""), str):
            return f"steps[{i}] must be an object with a string `urn` and `op`"
        for field in ("oldState", "newState", "detailedDiff"):
            if not isinstance(step.get(field) or {}, dict):
                return f"steps[{i}].{field} must be an object"
        for state in ("oldState", "newState"):
            if not isinstance((step.get(state) or {}).get("inputs") or {}, dict):
                return f"steps[{i}].{state}.inputs must be an object"
            if not isinstance((step.get(state) or {}).get("type") or "", str):
                return f"steps[{i}].{state}.type must be a string"
        for field in ("replaceReasons", "diffReasons"):
            if not isinstance(step.get(field) or [], list):
                return f"steps[{i}].{field} must be a list"
    diagnostics = digest.get("diagnostics") or []
    if not isinstance(diagnostics, list) or not all(isinstance(d, dict) and isinstance(d.get("message", ""), str)
                                                    for d in diagnostics):
        return "`diagnostics` must be a list of objects with a string `message`"
    from gpu_platform.decisions import disruption

    return next(filter(None, map(disruption.unreadable, states(digest))), None)


# --- disruption: the same model as `gpu-platform diff` and the policy pack, on the preview's states ---

def _plain(value: Any) -> Any:
    """Preview JSON with the engine's unknown marker replaced by the model's."""
    from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

    from gpu_platform.decisions.disruption_model import UNKNOWN
    from gpu_platform.planner.verdict import swap_marker

    return swap_marker(value, UNKNOWN_STRING_VALUE, UNKNOWN)


def states(digest: dict[str, Any]) -> tuple[list[tuple[str, str, Any]], list[tuple[str, str, Any]]]:
    """(type, name, inputs) of every resource before and after the previewed update."""
    old: dict[str, Any] = {}
    new: dict[str, Any] = {}
    for step in digest.get("steps") or []:
        urn = step.get("urn", "")
        name = urn.rsplit("::", 1)[-1]
        for which, into, first in (("oldState", old, True), ("newState", new, False)):
            state = step.get(which)
            if isinstance(state, dict) and (not first or urn not in into):
                into[urn] = (state.get("type") or urn_type(urn), name, _plain(state.get("inputs") or {}))
        if step.get("op") in ("delete", "delete-replaced", "discard-replaced") and not step.get("newState"):
            new.pop(urn, None)
    return list(old.values()), list(new.values())


@dataclass(frozen=True)
class Disrupted:
    pool: str
    effect: str
    cause: str
    nodes: int
    gpus: int
    approved: bool

    def line(self) -> str:
        verdict = "approved by the lock" if self.approved else "NOT approved by the lock"
        return f"{self.pool}: {self.effect} of {self.nodes} node(s), {self.gpus} GPU(s): {self.cause} ({verdict})"


def disruptions(digest: dict[str, Any], lock: Optional[dict[str, Any]]) -> list[Disrupted]:
    """Pools the previewed steps evict GPU pods from or roll, each with whether the lock approves it."""
    from gpu_platform.decisions import disruption, disruption_model

    load_pack()
    from gpu_platform.policy.disruption import unapproved

    before, after = states(digest)
    head = disruption.pools_of(after)
    found = disruption.compare(disruption.pools_of(before), head)
    refused = {d.pool for d in unapproved(lock, head)} if lock and "pools" in lock else None
    return [Disrupted(d.pool, d.effect.label, d.cause, d.nodes, d.gpus, refused is not None and d.pool not in refused)
            for d in found if disruption_model.NEEDS_APPROVAL <= d.effect < disruption_model.Effect.REPLACEMENT]


def environment_of(digest: dict[str, Any]) -> Optional[str]:
    """The stack's environment from the aws provider's default tags in the preview (as policies read it)."""
    load_pack()
    from gpu_platform.policy.common import provider_environment

    for step in digest.get("steps") or []:
        if urn_type(step.get("urn", "")) == "pulumi:providers:aws":
            env = provider_environment((step.get("newState") or {}).get("inputs"))
            if env:
                return env
    return None


def stack_of_digest(digest: dict[str, Any]) -> Optional[str]:
    for step in digest.get("steps") or []:
        urn = step.get("urn", "")
        if urn.startswith("urn:pulumi:"):
            return urn.split("::", 1)[0].rsplit(":", 1)[-1]
    return None


def load_pack() -> Any:
    from gpu_platform.planner.verdict import load_pack as load

    return load()


def add_command(commands: Any) -> None:
    p = commands.add_parser(
        "check-preview", help="fail when `pulumi preview --json` replaces or deletes a guarded resource, or, "
                              "in prod, evicts GPU pods or rolls nodes the lock does not approve",
        description="Gate a real preview: refuse replace/delete steps on node groups, Karpenter NodePools and "
                    "EC2NodeClasses, the cluster, the model cache, "
                    "the VPC and subnets, and in prod GPU pod evictions and node rolls the lock does not record.")
    p.add_argument("file", type=Path, metavar="FILE", help="output of `pulumi preview --json` ('-' for stdin)")
    p.add_argument("--guard-type", action="append", default=[], metavar="TYPE",
                   help="also guard this resource type (repeatable), e.g. aws:ec2/launchTemplate:LaunchTemplate")
    p.add_argument("--lock", metavar="FILE", type=Path,
                   help="the lock that approves disruptions (default: the policy config's, else "
                        "Pulumi.<stack>.lock.json beside the project's stack files)")
    p.add_argument("--policy-config", metavar="FILE", type=Path,
                   help="the policy config `pulumi preview` ran with: its disruption-approved lock and environment")
    p.add_argument("--policy-pack", metavar="DIR", type=Path,
                   help="the policy pack's folder, where a relative lockFile starts (default: <project>/policies)")
    p.add_argument("--project-dir", metavar="DIR", type=Path, help="the Pulumi project (default: found from here)")
    p.add_argument("--environment", choices=("dev", "staging", "prod"),
                   help="the stack's environment (default: the policy config's, else the aws provider's tag in the "
                        "preview; unknown: prod)")
    p.add_argument("--strict-environments", default=None, metavar="ENV[,ENV]",
                   help="environments where an unapproved disruption fails the gate (default: the policy config's "
                        "disruption-approved environments, else prod)")
    p.set_defaults(run=run_check)


GATE_POLICY = "disruption-approved"


def _gate_config(args: argparse.Namespace, stack: str) -> dict[str, Any]:
    """disruption-approved's reconciled config with its lock made explicit, as `plan` would hold it."""
    from gpu_platform.planner import lock_config, verdict
    from gpu_platform.planner import project as projects

    pack = load_pack()
    project = projects.find_optional(args.project_dir)
    settings = verdict.reconcile(pack, verdict.read_config(args.policy_config))
    settings = lock_config.hold_to(settings, pack, stack=stack, flag=args.lock,
                                   default=project.lock_file(stack) if project else None,
                                   pack_dir=projects.pack_dir(project, args.policy_pack))
    return settings[GATE_POLICY][1]


def _lock_for(args: argparse.Namespace, config: dict[str, Any], stack: str) -> tuple[Optional[dict[str, Any]], str]:
    from gpu_platform.policy.locks import LockError, resolve

    if args.lock is not None and not args.lock.is_file():
        raise PlannerError(f"--lock {args.lock}: no such file")
    try:
        source = resolve(config, stack)
    except LockError as err:
        raise PlannerError(str(err)) from None
    return source.doc, source.where or "none"


def run_check(args: argparse.Namespace) -> int:
    digest = _read(args.file)
    problem = _digest_problem(digest)
    if problem:
        raise PlannerError(f"{args.file}: not a `pulumi preview --json` digest: {problem}")
    findings, errors = check(digest, (*GUARDED_TYPES, *args.guard_type))
    steps = len(digest.get("steps") or [])
    for message in errors:
        print(f"preview error: {message}")
    if errors:
        print("Preview gate: FAILED: the preview reported errors, so its steps cannot prove no guarded resource "
              "is replaced; fix the errors and preview again")
        return 1
    stack = stack_of_digest(digest) or ""  # an empty preview names no stack: any lock's stack is its own
    config = _gate_config(args, stack)
    lock, where = _lock_for(args, config, stack)
    env = args.environment or config.get("environment") or environment_of(digest)
    strict_in = args.strict_environments.split(",") if args.strict_environments else config.get("environments", ["prod"])
    strict = env is None or env in {e.strip() for e in strict_in}
    hit = disruptions(digest, lock)
    refused = [d for d in hit if not d.approved and strict]
    if hit:
        print(f"Disruption to GPU nodes and jobs (environment {env or 'unknown, held to prod'}, lock {where}):")
        for d in hit:
            print(f"  {d.line()}")
    if not findings and not refused:
        advisory = " (unapproved disruptions above are advisory here)" if hit and not strict else ""
        print(f"Preview gate: passed ({steps} steps, none replaces or deletes a guarded resource){advisory}.")
        return 0
    if findings:
        print(f"Preview gate: FAILED: {len(findings)} step(s) would replace, delete or unprotect a guarded resource:")
        for f in findings:
            print(f"  {f.line()}")
        print("Revert the change (see docs/policies.md), or make it deliberate: regenerate the node-group lock and "
              "get the replacement reviewed on its own.")
    if refused:
        print(f"Preview gate: FAILED: {len(refused)} pool(s) would lose GPU jobs without the lock's approval: "
              f"approve with `gpu-platform lock --stack {stack_of_digest(digest) or '<stack>'}` in the same pull "
              "request, or revert the change.")
    return 1


def _read(path: Path) -> Any:
    """The preview digest in `path` ('-': standard input), read within facts/input_files.py's limits."""
    import sys

    from gpu_platform.facts import input_files

    limit = input_files.MAX_DOCUMENT_BYTES
    try:
        if str(path) == "-":
            return input_files.parse_json(input_files.read_stream(sys.stdin.buffer, "standard input", limit),
                                          "standard input")
        return input_files.read_json(path, str(path), limit)
    except input_files.InputError as exc:
        raise PlannerError(f"{exc} (write the file with `pulumi preview --json > FILE`)") from None
