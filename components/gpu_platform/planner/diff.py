"""`gpu-platform diff BASE.json HEAD.json`: what a change does to GPU nodes, jobs, guarded resources,
quotas and cost.

Compares two plans (`gpu-platform plan --json`), e.g. of the base branch and of a pull request:
- per pool, the disruption (decisions/disruption.py): none, operand-restart, gpu-pod-eviction,
  node-roll or replacement, with its cause and the nodes and GPUs affected at max size;
- guarded resources (node groups, EKS cluster, model-cache and datasets file systems, VPC, subnets) that would be
  REPLACED (same URN, a replace-forcing input changed: facts/catalog.REPLACE_FORCING_INPUTS),
  DELETED (URN gone and no alias in HEAD points at it: a URN alias, or a type alias on it or on an
  ancestor, which moves its children with it), or UNPROTECTED (protect dropped);
- ResourceQuota changes per team namespace and resource;
- the cost section's totals and per-pool monthly cost at max size.
Exit 1 when a guarded resource would be replaced or deleted, else 0; 2 for unreadable plans.
`--format json` prints `{"disruptions": [{pool, effect, cause, nodes, gpus, causes}], ...}` with the
other sections under their names.
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Optional

from gpu_platform.facts import input_files
from gpu_platform.planner.errors import PlannerError
from gpu_platform.planner.preview_gate import GUARDED_TYPES

QUOTA = "kubernetes:core/v1:ResourceQuota"
MISSING = object()


def add_command(commands: Any) -> None:
    p = commands.add_parser(
        "diff", help="compare two plans: replaced or deleted guarded resources, quota and cost changes",
        description="Compare BASE and HEAD plans written by `gpu-platform plan --json`.")
    p.add_argument("base", type=Path, metavar="BASE.json")
    p.add_argument("head", type=Path, metavar="HEAD.json")
    p.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    p.set_defaults(run=run_diff)


def run_diff(args: argparse.Namespace) -> int:
    result = compare(load_plan(args.base), load_plan(args.head))
    render = {"markdown": markdown, "json": as_json}.get(args.format, text)
    print(render(result), end="")
    return 1 if result["replaced"] or result["deleted"] else 0


def load_plan(path: Path, label: Optional[str] = None) -> dict[str, Any]:
    """A plan JSON written by `gpu-platform plan --json`, read within facts/input_files.py's limits for
    documents tools write (PlannerError naming the file and what is wrong otherwise)."""
    label = label or str(path)
    try:
        plan = input_files.read_json(path, label, input_files.MAX_DOCUMENT_BYTES)
    except input_files.InputError as exc:
        raise PlannerError(f"{exc} (cannot read a plan)") from None
    problem = plan_shape_problem(plan)
    if problem:
        raise PlannerError(f"{label}: not a plan written by `gpu-platform plan --json`: {problem}")
    return plan


# What every command reading a plan relies on: the stack, and each resource's identity, inputs and options.
_RESOURCE_FIELDS: dict[str, type | tuple[type, ...]] = {
    "urn": str, "type": str, "name": str, "inputs": dict, "options": dict, "parent": (str, type(None)),
    "provider": (str, type(None))}


def plan_shape_problem(plan: Any) -> Optional[str]:
    """What is wrong with `plan` for the commands that read one (None: nothing): the fields they read are
    checked before they read them, so a plan that is not one is named, never a crash."""
    if not isinstance(plan, dict) or not isinstance(plan.get("resources"), list):
        return "expected an object with a `resources` list"
    if not isinstance(plan.get("stack", ""), str) or not isinstance(plan.get("outputs", {}), dict):
        return "`stack` must be a name and `outputs` an object"
    for i, resource in enumerate(plan["resources"]):
        problem = _resource_problem(resource)
        if problem:
            return f"resources[{i}]{problem}"
    return _cost_problem(plan.get("cost")) or _model_problem(plan)


def _resource_problem(resource: Any) -> Optional[str]:
    if not isinstance(resource, dict):
        return " must be an object"
    for field, kind in _RESOURCE_FIELDS.items():
        required = field in ("urn", "type", "name")
        if (required or field in resource) and not isinstance(resource.get(field), kind):
            return f".{field} must be {_kind_name(kind)}"
    if not resource["urn"].startswith("urn:pulumi:") or len(resource["urn"].split("::", 3)) < 4:
        return f".urn {resource['urn'][:60]!r} is not a Pulumi URN (urn:pulumi:<stack>::<project>::<type>::<name>)"
    aliases = (resource.get("options") or {}).get("aliases") or []
    if not isinstance(aliases, list) or not all(
            isinstance(a, str) or (isinstance(a, dict) and all(isinstance(a.get(k, ""), str) for k in ("urn", "type")))
            for a in aliases):
        return ".options.aliases must be a list of URNs or objects with a string `urn` or `type`"
    if resource["type"] == QUOTA:
        inputs = resource.get("inputs") or {}
        meta, spec = inputs.get("metadata") or {}, inputs.get("spec") or {}
        if not (isinstance(meta, dict) and isinstance(meta.get("namespace", ""), str) and isinstance(spec, dict)
                and isinstance(spec.get("hard") or {}, dict)):
            return ".inputs must be a ResourceQuota: `metadata.namespace` a name, `spec.hard` an object"
    return None


def _cost_problem(cost: Any) -> Optional[str]:
    if cost is None:
        return None
    number = (int, float, type(None))
    if not (isinstance(cost, dict) and isinstance(cost.get("totals") or {}, dict)
            and all(isinstance((cost.get("totals") or {}).get(k), number) and not isinstance((cost.get("totals") or {}).get(k), bool)
                    for k in ("monthlyUsdAtMin", "monthlyUsdAtMax"))
            and isinstance(cost.get("pools") or [], list) and isinstance(cost.get("budget") or {}, dict)):
        return "`cost` must hold `totals` (monthlyUsdAtMin and monthlyUsdAtMax numbers), `pools` (a list) and `budget` (an object)"
    if not all(isinstance(p, dict) and isinstance(p.get("name"), str) for p in cost.get("pools") or []):
        return "`cost.pools` must be objects with a `name`"
    return None


def _model_problem(plan: dict[str, Any]) -> Optional[str]:
    from gpu_platform.decisions import disruption

    return disruption.unreadable((r["type"], r["name"], r.get("inputs") or {}) for r in plan["resources"])


def _kind_name(kind: Any) -> str:
    return {str: "a string", dict: "an object"}.get(kind, "a string or null")


def _get(inputs: Any, path: str) -> Any:
    node = inputs
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return MISSING
        node = node[part]
    return node


def _replace_inputs() -> dict[str, tuple[str, ...]]:
    from gpu_platform.facts.catalog import REPLACE_FORCING_INPUTS

    return dict(REPLACE_FORCING_INPUTS)


def _key(urn: str) -> str:
    """A URN without its stack, so plans of one program under two stack names line up."""
    return urn.split("::", 1)[-1]


def _aliases(resource: dict[str, Any]) -> list[dict[str, Any]]:
    return [a for a in (resource.get("options") or {}).get("aliases") or [] if isinstance(a, dict)]


def _split(urn: str) -> tuple[str, str, str]:
    """`urn:pulumi:stack::project::A$B$C::name` -> (`urn:pulumi:stack::project`, `A$B$C`, `name`)."""
    stack, project, chain, name = urn.split("::", 3)
    return f"{stack}::{project}", chain, name


def _type_moves(head: dict[str, Any]) -> list[tuple[str, str]]:
    """(type chain now, type chain before) of each resource a type alias moved. The engine carries its
    children along with it, so a child's URN before has the parent's old type in its chain."""
    moves = []
    for r in head["resources"]:
        for alias in _aliases(r):
            if "type" in alias and "urn" not in alias:
                chain = _split(r["urn"])[1]
                moves.append((chain, f"{chain.rsplit('$', 1)[0]}${alias['type']}" if "$" in chain else alias["type"]))
    return sorted(moves, key=lambda m: -len(m[0]))  # the deepest first: each move applies to the chain as it was


def _former_urns(urn: str, moves: list[tuple[str, str]]) -> set[str]:
    head, chain, name = _split(urn)
    chains = {chain}
    for now, before in moves:
        chains |= {before + c[len(now):] for c in chains if c == now or c.startswith(now + "$")}
    return {f"{head}::{c}::{name}" for c in chains - {chain}}


def guarded_changes(base: dict[str, Any], head: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    inputs = _replace_inputs()
    head_by_urn = {_key(r["urn"]): r for r in head["resources"]}
    moves = _type_moves(head)
    for r in head["resources"]:  # an alias carries a resource over from its old URN
        for alias in _aliases(r):
            if "urn" in alias:
                head_by_urn.setdefault(_key(alias["urn"]), r)
        for former in _former_urns(r["urn"], moves):
            head_by_urn.setdefault(_key(former), r)
    replaced, deleted, unprotected = [], [], []
    for old in base["resources"]:
        if old["type"] not in GUARDED_TYPES:
            continue
        new = head_by_urn.get(_key(old["urn"]))
        entry = {"type": old["type"], "name": old["name"], "urn": old["urn"]}
        if new is None:
            deleted.append(entry)
            continue
        changed = []
        for path in inputs.get(old["type"], ()):
            before, after = _get(old.get("inputs"), path), _get(new.get("inputs"), path)
            if before != after:
                changed.append({"input": path, "from": None if before is MISSING else before,
                                "to": None if after is MISSING else after})
        if changed:
            replaced.append({**entry, "changes": changed})
        if (old.get("options") or {}).get("protect") and not (new.get("options") or {}).get("protect"):
            unprotected.append(entry)
    return {"replaced": replaced, "deleted": deleted, "unprotected": unprotected}


def _quotas(plan: dict[str, Any]) -> dict[tuple[str, str], Any]:
    out = {}
    for r in plan["resources"]:
        if r["type"] == QUOTA:
            meta = (r.get("inputs") or {}).get("metadata") or {}
            for key, value in (((r.get("inputs") or {}).get("spec") or {}).get("hard") or {}).items():
                out[(meta.get("namespace", "default"), key)] = value
    return out


def quota_changes(base: dict[str, Any], head: dict[str, Any]) -> list[dict[str, Any]]:
    before, after = _quotas(base), _quotas(head)
    return [{"namespace": ns, "resource": key, "from": before.get((ns, key)), "to": after.get((ns, key))}
            for ns, key in sorted(set(before) | set(after)) if before.get((ns, key)) != after.get((ns, key))]


def cost_changes(base: dict[str, Any], head: dict[str, Any]) -> Optional[dict[str, Any]]:
    old, new = base.get("cost"), head.get("cost")
    if not old and not new:
        return None
    totals = {}
    for key in ("monthlyUsdAtMin", "monthlyUsdAtMax"):
        a, b = ((old or {}).get("totals") or {}).get(key), ((new or {}).get("totals") or {}).get(key)
        totals[key] = {"from": a, "to": b, "delta": None if a is None or b is None else round(b - a, 2)}
    pools_a = {p["name"]: p.get("monthlyUsdAtMax") for p in (old or {}).get("pools") or []}
    pools_b = {p["name"]: p.get("monthlyUsdAtMax") for p in (new or {}).get("pools") or []}
    pools = [{"pool": n, "from": pools_a.get(n), "to": pools_b.get(n)} for n in sorted(set(pools_a) | set(pools_b))
             if pools_a.get(n) != pools_b.get(n)]
    budget = ((new or {}).get("budget") or {})
    return {"totals": totals, "pools": pools, "budget": budget or None}


def disruptions(base: dict[str, Any], head: dict[str, Any]) -> list[dict[str, Any]]:
    """Every pool whose node group, launch template or GPU Operator facts changed, worst first."""
    from gpu_platform.decisions import disruption

    def pools(plan: dict[str, Any]) -> dict[str, Any]:
        return disruption.pools_of((r["type"], r["name"], r.get("inputs") or {}) for r in plan["resources"])

    return [d.to_json() for d in disruption.compare(pools(base), pools(head))]


def compare(base: dict[str, Any], head: dict[str, Any]) -> dict[str, Any]:
    return {"base": base.get("stack"), "head": head.get("stack"), "disruptions": disruptions(base, head),
            **guarded_changes(base, head), "quotas": quota_changes(base, head), "cost": cost_changes(base, head)}


# --- rendering ---

def _v(value: Any) -> str:
    return "(none)" if value is None else json.dumps(value, sort_keys=True) if not isinstance(value, str) else value


def _money(value: Any) -> str:
    return "?" if value is None else f"${value:,.2f}"


def _lines(result: dict[str, Any]) -> list[tuple[str, str]]:
    """(section, line) pairs shared by both renderings."""
    out = []
    for r in result["replaced"]:
        why = "; ".join(f"{c['input']} {_v(c['from'])} -> {_v(c['to'])}" for c in r["changes"])
        out.append(("guarded", f"REPLACE {r['type']} {r['name']}: {why}"))
    for r in result["deleted"]:
        out.append(("guarded", f"DELETE {r['type']} {r['name']} (gone from HEAD, no alias points at it)"))
    for r in result["unprotected"]:
        out.append(("guarded", f"UNPROTECT {r['type']} {r['name']} (protect dropped)"))
    for q in result["quotas"]:
        out.append(("quota", f"{q['namespace']}: {q['resource']} {_v(q['from'])} -> {_v(q['to'])}"))
    cost = result["cost"]
    if cost:
        t = cost["totals"]["monthlyUsdAtMax"]
        if t["delta"]:
            out.append(("cost", f"monthly at max size {_money(t['from'])} -> {_money(t['to'])} ({t['delta']:+,.2f})"))
        t = cost["totals"]["monthlyUsdAtMin"]
        if t["delta"]:
            out.append(("cost", f"monthly at min size {_money(t['from'])} -> {_money(t['to'])} ({t['delta']:+,.2f})"))
        for p in cost["pools"]:
            out.append(("cost", f"pool {p['pool']} monthly at max {_money(p['from'])} -> {_money(p['to'])}"))
        budget = cost.get("budget")
        if budget and not budget.get("withinBudget", True):
            out.append(("cost", f"over the ${budget['monthlyUsd']:,.0f} budget at max size"))
    return out


def _verdict(result: dict[str, Any]) -> str:
    bad = len(result["replaced"]) + len(result["deleted"])
    verdict = (f"FAILED: {bad} guarded resource(s) would be replaced or deleted" if bad
               else "passed: no guarded resource is replaced or deleted")
    hit = [d for d in result["disruptions"] if d["effect"] != "none"]
    if hit:
        verdict += f"; {len(hit)} pool(s) disrupted, worst: {hit[0]['effect']} ({hit[0]['pool']})"
    return verdict


def _disrupted(result: dict[str, Any]) -> list[dict[str, Any]]:
    return [d for d in result["disruptions"] if d["effect"] != "none"]


def _other_changes(result: dict[str, Any]) -> list[str]:
    """Pool changes that disrupt nothing (applied in place), one line per change, in every pool: a pool that
    a worse change disrupts keeps its in-place changes listed here too (a maxSize 4 -> 6 beside a node roll)."""
    return [f"{d['pool']}: {c['detail']}" for d in result["disruptions"] for c in d["causes"] if c["effect"] == "none"]


def _shown_cause(d: dict[str, Any]) -> str:
    """A disrupted pool's cause, and each lesser disruptive change the worst one would otherwise hide."""
    lesser = [f"also {c['effect']}: {c['detail']}" for c in d["causes"]
              if c["effect"] not in ("none", d["effect"]) and c["detail"] not in d["cause"]]
    return "; ".join([d["cause"], *lesser])


TITLES = {"guarded": "Guarded resources", "quota": "Team quotas", "cost": "Cost (USD)"}


def text(result: dict[str, Any]) -> str:
    lines = [f"Diff {result['base']} -> {result['head']}: {_verdict(result)}", "Disruption to GPU nodes and jobs:"]
    hit = _disrupted(result)
    width = max((len(d["pool"]) for d in hit), default=0)
    lines += [f"  {d['pool']:<{width}}  {d['effect']:<16}  {d['nodes']} node(s), {d['gpus']} GPU(s)  {_shown_cause(d)}"
              for d in hit] or ["  (none)"]
    lines += ["Other changes (in place):"] + ([f"  {o}" for o in _other_changes(result)] or ["  (none)"])
    found = _lines(result)
    for key, title in TITLES.items():
        items = [line for section, line in found if section == key]
        lines += [f"{title}:"] + ([f"  {i}" for i in items] or ["  (no change)"])
    return "\n".join(lines) + "\n"


def _cell(value: str) -> str:
    return value.replace("|", "\\|")


def markdown(result: dict[str, Any]) -> str:
    mark = "❌" if result["replaced"] or result["deleted"] else "⚠️" if _disrupted(result) else "✅"
    lines = [f"### gpu-platform diff `{result['base']}` → `{result['head']}`", "", f"{mark} {_verdict(result)}", "",
             "**Disruption to GPU nodes and jobs**", ""]
    hit = _disrupted(result)
    if hit:
        lines += ["| Pool | Effect | Cause | Nodes | GPUs |", "|---|---|---|---:|---:|"]
        lines += [f"| {d['pool']} | {d['effect']} | {_cell(_shown_cause(d))} | {d['nodes']} | {d['gpus']} |"
                  for d in hit]
    else:
        lines.append("- none")
    lines += ["", "**Other changes (in place)**", ""] + ([f"- {_cell(o)}" for o in _other_changes(result)] or ["- none"])
    lines.append("")
    found = _lines(result)
    for key, title in TITLES.items():
        items = [line for section, line in found if section == key]
        lines += [f"**{title}**", ""] + ([f"- {i}" for i in items] or ["- no change"]) + [""]
    return "\n".join(lines)


def as_json(result: dict[str, Any]) -> str:
    return json.dumps(result, indent=2, sort_keys=True) + "\n"
