"""Show a plan to people: a `pulumi preview`-like tree (text) or a compact pull-request comment (Markdown).

Both read only the plan document (and the registered sections' renderers), so what a reviewer reads
is exactly what `--json` wrote.
"""
from __future__ import annotations

import json
from collections import Counter
from typing import Any
from collections.abc import Iterable

from gpu_platform.planner import unchecked
from gpu_platform.planner.sections import Section

STACK_TYPE = "pulumi:pulumi:Stack"


def text(plan: dict[str, Any], sections: Iterable[Section] = ()) -> str:
    blocks = [
        f"Plan for {plan['project']}/{plan['stack']}: {len(plan['resources'])} resources to create",
        _tree(plan),
        _outputs_text(plan["outputs"]),
        _counts_text(plan["resources"]),
        _verdict_text(plan["policy"]["violations"]),
        unchecked.text(plan.get("notChecked", [])),
        budget_line(plan["policy"].get("budget")),
    ]
    for section in sections:
        if section.name in plan:
            blocks.append(f"{section.title}\n{section.render_text(plan[section.name]).rstrip()}")
    return "\n\n".join(b for b in blocks if b) + "\n"


def markdown(plan: dict[str, Any], sections: Iterable[Section] = ()) -> str:
    violations = plan["policy"]["violations"]
    lines = [f"### gpu-platform plan: `{plan['stack']}`", "",
             f"**{len(plan['resources'])} resources** to create. {_verdict_line(violations)}", ""]
    lines += unchecked.markdown(plan.get("notChecked", []))
    if plan["policy"].get("budget"):
        lines += [budget_line(plan["policy"]["budget"]), ""]
    if violations:
        lines += ["| Level | Policy | Resource | Message |", "|---|---|---|---|"]
        lines += [f"| {v['level']} | `{v['policy']}` | `{_short(v.get('urn'))}` | {_cell(v['message'])} |"
                  for v in _by_severity(violations)]
        lines.append("")
    lines += ["<details><summary>Resources by type</summary>", "", "| Type | Count |", "|---|---:|"]
    lines += [f"| `{t}` | {n} |" for t, n in _counts(plan["resources"])]
    lines += ["", "</details>"]
    for section in sections:
        if section.name in plan:
            lines += ["", f"#### {section.title}", "", section.render_markdown(plan[section.name]).rstrip()]
    return "\n".join(lines) + "\n"


# --- the tree ---

def _tree(plan: dict[str, Any]) -> str:
    """Resources in plan order (depth-first) drawn as a tree under the root stack."""
    resources = plan["resources"]
    by_urn = {r["urn"]: r for r in resources}
    children: dict[str | None, list[dict]] = {}
    for r in resources:
        children.setdefault(r["parent"] if r["parent"] in by_urn else None, []).append(r)
    rows = [("", STACK_TYPE, f"{plan['project']}-{plan['stack']}", "")]

    def walk(parent: str | None, prefix: str) -> None:
        kids = children.get(parent, [])
        for i, r in enumerate(kids):
            last = i == len(kids) - 1
            rows.append((prefix + ("└─ " if last else "├─ "), r["type"], r["name"], _flags(r["options"])))
            walk(r["urn"], prefix + ("   " if last else "│  "))

    walk(None, "")
    width = max(len(p) + len(t) for p, t, _, _ in rows)
    name_width = max(len(n) for _, _, n, _ in rows)
    out = [f"     {'Type':<{width}}  {'Name':<{name_width}}  Options".rstrip()]
    for prefix, type_, name, flags in rows:
        out.append(f" +   {prefix + type_:<{width}}  {name:<{name_width}}  {flags}".rstrip())
    return "\n".join(out)


def _flags(options: dict[str, Any]) -> str:
    flags = []
    if options.get("protect"):
        flags.append("protect")
    if options.get("retainOnDelete"):
        flags.append("retain")
    if options.get("deleteBeforeReplace"):
        flags.append("delete-before-replace")
    if options.get("ignoreChanges"):
        flags.append("ignore:" + ",".join(options["ignoreChanges"]))
    return " ".join(flags)


# --- summaries ---

def _counts(resources: list[dict]) -> list[tuple[str, int]]:
    return sorted(Counter(r["type"] for r in resources).items())


def _counts_text(resources: list[dict]) -> str:
    counts = _counts(resources)
    if not counts:
        return "Resources by type\n  (none)"
    width = max(len(t) for t, _ in counts)
    lines = ["Resources by type"] + [f"  {n:>5}  {t}" for t, n in counts]
    lines.append(f"  {len(resources):>5}  {'total':<{width}}".rstrip())
    return "\n".join(lines)


def _outputs_text(outputs: dict[str, Any]) -> str:
    if not outputs:
        return ""
    width = max(len(k) for k in outputs)
    return "Outputs\n" + "\n".join(f"  {k:<{width}}  {_brief(v)}" for k, v in sorted(outputs.items()))


def _brief(value: Any, limit: int = 100) -> str:
    shown = value if isinstance(value, str) else json.dumps(value, sort_keys=True)
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def _by_severity(violations: list[dict]) -> list[dict]:
    order = {"mandatory": 0, "advisory": 1}
    return sorted(violations, key=lambda v: (order.get(v["level"], 2), v["policy"], v.get("urn") or ""))


def budget_line(budget: dict[str, Any] | None) -> str:
    """Which budget the verdict held the stack to, and why that one ("" without a budget)."""
    if not budget:
        return ""
    line = f"Budget in force: ${budget['monthlyUsd']:,.0f}/month, the {budget['source']}"
    stack, config = budget.get("stackFileUsd"), budget.get("policyConfigUsd")
    if stack is not None and config is not None and stack != config:
        other = config if budget["source"].startswith("stack file") else stack
        line += f" (stricter than the other, ${other:,.0f})"
    return line + "."


def _verdict_line(violations: list[dict]) -> str:
    levels = Counter(v["level"] for v in violations)
    if not violations:
        return "Policy: passed, no violations."
    detail = ", ".join(f"{n} {level}" for level, n in sorted(levels.items()))
    return f"Policy: {'FAILED' if levels['mandatory'] else 'passed'} ({detail})."


def _verdict_text(violations: list[dict]) -> str:
    lines = [_verdict_line(violations)]
    lines += [f"  {v['level']:<9}  {v['policy']}  {_short(v.get('urn'))}: {v['message']}"
              for v in _by_severity(violations)]
    return "\n".join(lines)


def _short(urn: str | None) -> str:
    """`urn:pulumi:dev::gpu-platform::a$b:c:D::name` -> `b:c:D::name` (the type and name)."""
    if not urn:
        return "(stack)"
    parts = urn.split("::")
    return f"{parts[2].rsplit('$', 1)[-1]}::{parts[3]}" if len(parts) >= 4 else urn


def _cell(text_: str) -> str:
    return text_.replace("|", "\\|").replace("\n", " ")
