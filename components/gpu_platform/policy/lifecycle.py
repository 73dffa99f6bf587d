"""Support windows: nothing the stack pins is past end of life, and what soon will be is named.

Reads what the program registered, as decisions/pinned.py reads a plan (the EKS cluster's `version`, the
GPU node groups' AMI type, release and instance types, the GPU Operator release's chart version and
driver), and judges it with decisions/lifecycle.py on the as-of date: config `asOf` (YYYY-MM-DD), default
today; `gpu-platform plan --as-of` passes its own date, as it passes the budget. Each message names the field
to change where the program set it (policy/lifecycle_fields.py): the platform object's field below a
GpuPlatform, a component's Python argument in a program of its own, else the resource's input.
- `lifecycle-end-of-life` (mandatory): a Kubernetes version past EKS extended support (or not on EKS yet),
  a GPU Operator line or a driver branch past end of life, in a strict environment (`environments`,
  default prod; an unknown environment counts as prod).
- `lifecycle-support-window` (advisory): EKS extended support with its monthly cost, an end of support
  within `warnDays`, a GPU Operator line in maintenance, and past end of life anywhere not strict.
"""
from __future__ import annotations

from datetime import date
from typing import Any, Optional
from collections.abc import Iterator, Mapping

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity, StackValidationArgs
from pulumi_policy.proxy import UnknownValueError

from gpu_platform.decisions import lifecycle, pinned
from gpu_platform.facts import names
from gpu_platform.policy import lifecycle_fields
from gpu_platform.policy.common import (
    ENVIRONMENT_PROPERTY, applies_in, get, is_operator_release, stack_environment, stack_policy,
)

Found = Iterator[tuple[str, Optional[str]]]


def _inputs(props: Any, keys: tuple[str, ...], optional: frozenset = frozenset()) -> dict[str, Any]:
    """The plain inputs pinned.py reads, key by key (`values.driver` nests), so an unknown value elsewhere in
    the resource does not stop the rule; an `optional` key still unknown is left out."""
    out: dict[str, Any] = {}
    for key in keys:
        try:
            value = get(props, key)
        except UnknownValueError:
            if key not in optional:
                raise
            continue
        if value is None:
            continue
        *parents, leaf = key.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out


def pins(args: StackValidationArgs) -> pinned.Pinned:
    return pinned.from_resources((r.resource_type, _inputs(r.props, pinned.INPUT_KEYS[r.resource_type],
                                                           pinned.OPTIONAL_INPUTS.get(r.resource_type, frozenset())))
                                 for r in args.resources if r.resource_type in pinned.INPUT_KEYS)


def as_of(config: Mapping[str, Any]) -> date:
    """The day to judge: config `asOf`, else today. Raises ValueError for a malformed date."""
    return date.fromisoformat(config["asOf"]) if config.get("asOf") else date.today()


def _urns(args: StackValidationArgs) -> dict[str, str]:
    """Where each kind of verdict is reported: the cluster, the GPU Operator release."""
    found: dict[str, str] = {}
    for r in args.resources:
        if r.resource_type == pinned.CLUSTER:
            found.setdefault(lifecycle.KUBERNETES, r.urn)
        elif r.resource_type == pinned.HELM_RELEASE and is_operator_release(r.props):
            found.setdefault(lifecycle.OPERATOR, r.urn)
    return found


def _verdicts(args: StackValidationArgs, config: Mapping[str, Any], severity: str) -> Found:
    try:
        day = as_of(config)
    except ValueError:
        yield f"policy config asOf {config.get('asOf')!r} is not a date (YYYY-MM-DD)", None
        return
    strict = applies_in(stack_environment(args, config), config.get("environments", ["prod"]))
    warn_days = int(config.get("warnDays", lifecycle.WARN_DAYS))
    urns, pinned_now = _urns(args), pins(args)
    named = lifecycle_fields.fields(args, pinned_now)
    for v in lifecycle.verdicts(pinned_now, day, strict, warn_days, named):
        if v.severity == severity:
            cost = f" (+${v.monthly_usd:,.2f}/month)" if v.monthly_usd and severity == lifecycle.WARNING else ""
            where = lifecycle.OPERATOR if v.field == named.driver else v.kind  # the operator's driver
            yield f"{v.field}: {v.message}{cost}", urns.get(where)


def end_of_life(args: StackValidationArgs, config: Mapping[str, Any]) -> Found:
    yield from _verdicts(args, config, lifecycle.ERROR)


def support_window(args: StackValidationArgs, config: Mapping[str, Any]) -> Found:
    yield from _verdicts(args, config, lifecycle.WARNING)


SCHEMA = PolicyConfigSchema({
    "asOf": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$",
             "description": "The day to judge support windows on (YYYY-MM-DD); unset: today."},
    "environment": ENVIRONMENT_PROPERTY,
    "environments": {"type": "array", "items": {"enum": list(names.ENVIRONMENTS)}, "default": ["prod"],
                     "description": "Environments where a version past end of life is an error, not a warning."},
    "warnDays": {"type": "integer", "minimum": 0, "default": lifecycle.WARN_DAYS,
                 "description": "Warn this many days before an end of EKS standard support or a driver's end of life."},
})

POLICIES = [
    stack_policy("lifecycle-end-of-life",
                 "Nothing the stack pins (EKS Kubernetes version, GPU Operator line, NVIDIA driver branch) is past "
                 "end of life in the configured environments.",
                 end_of_life, severity=Severity.HIGH, schema=SCHEMA,
                 remediation="Upgrade the named field: Kubernetes and GPU Operator one step at a time "
                             "(`gpu-platform upgrade-check` names each step)."),
    stack_policy("lifecycle-support-window",
                 "Extended support (with its cost), ends of support within warnDays and deprecated release lines "
                 "are named before they bite.",
                 support_window, severity=Severity.MEDIUM, schema=SCHEMA,
                 level=EnforcementLevel.ADVISORY),
]
