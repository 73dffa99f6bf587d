"""The policy verdict on a plan: the pack's own rule objects, run on the recorded resources.

This is what `pulumi preview --policy-pack policies --policy-pack-config FILE` does, without the CLI:
- config is reconciled the way the CLI does it: schema defaults, then `all`, then per-policy levels and
  properties (a string is a level; an object may hold `enforcementLevel` and properties), validated
  against each policy's schema;
- values the stack file decides and policies cannot read (budget, price overrides, quota overcommit
  ratio) come from the plan's cost and capacity sections, and the as-of date (`plan --as-of`) from its
  lifecycle section (a program without the platform object has none: the plan's day), below anything the
  config file sets; the budget is the exception: when both the
  stack file (`budget.monthlyUsd`) and the config set one, the stricter holds (`budget_in_force` says
  which, and the plan records it under `policy.budget`);
- resource policies get `ResourceValidationArgs` per resource (inputs behind the SDK's unknown-checking
  proxy, options, provider); stack policies get one `StackValidationArgs` of every resource;
- a policy that touches an unknown value is reported as the SDK reports it: advisory, "can't run
  during preview"; `disabled` policies do not run; `remediate` counts as mandatory.
Result: [{policy, level, urn, message}], mandatory first.
"""
from __future__ import annotations

import json
import re
import sys
from datetime import date
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional
from collections.abc import Mapping

from gpu_platform.facts import input_files
from gpu_platform.planner.errors import PlannerError

LEVELS = ("advisory", "mandatory", "remediate", "disabled")
UNKNOWN_MARK = "[unknown]"  # planner/wire.py writes unknowns so
BUDGET_POLICY = "monthly-budget"
AS_OF_POLICIES = (BUDGET_POLICY, "lifecycle-end-of-life", "lifecycle-support-window")  # read config `asOf`
STACK_BUDGET, CONFIG_BUDGET = "stack file budget.monthlyUsd", f"policy config {BUDGET_POLICY}.monthlyUsd"


def load_pack() -> Any:
    """The pack's rules (`gpu_platform.policy`): the very objects policies/__main__.py builds the pack from.
    Imported on first use: the plan's other sections never pay for pulumi_policy."""
    from gpu_platform import policy

    return policy


# --- config ---

def read_config(path: Optional[Path]) -> dict[str, Any]:
    """The `--policy-config` file (read within facts/input_files.py's limits); {} without one."""
    if path is None:
        return {}
    label = f"--policy-config {path}"
    try:
        data = input_files.read_json(path, label)
    except input_files.InputError as exc:
        raise PlannerError(str(exc)) from None
    if not isinstance(data, dict):
        raise PlannerError(f"{label}: must be a JSON object like {{\"all\": \"mandatory\"}}")
    return data


def read_lock(path: Path) -> dict[str, Any]:
    """The `--lock` file, refused (exit 2) when it is missing or not a lock this version reads."""
    from gpu_platform.policy.locks import LockError
    from gpu_platform.policy.locks import read_lock as read

    try:
        return read(path, f"--lock {path}")
    except LockError as exc:
        raise PlannerError(str(exc)) from None


def check_locks(settings: Mapping[str, tuple[str, dict[str, Any]]], pack: Any, stack: str) -> None:
    """Every lock the settings hold the plan to is readable: a broken lock is bad input (exit 2) for the
    planner, where the pack under `pulumi preview` reports it as a violation of each lock-reading policy."""
    from gpu_platform.planner.lock_config import lock_policies
    from gpu_platform.policy.locks import LockError, resolve

    problems = []
    for name in lock_policies(pack):
        try:
            resolve(settings[name][1], stack)
        except LockError as exc:
            problems.append(str(exc))
    if problems:
        raise PlannerError(list(dict.fromkeys(problems)))


def _parse_entry(name: str, value: Any) -> tuple[Optional[str], dict[str, Any]]:
    """A config entry as (level or None, properties), as the CLI parses `--policy-pack-config`."""
    if isinstance(value, str):
        level, props = value, {}
    elif isinstance(value, dict):
        props = dict(value)
        level = props.pop("enforcementLevel", None)
    else:
        raise PlannerError(f"policy config {name!r}: must be an enforcement level or an object")
    if level is not None and level not in LEVELS:
        raise PlannerError(f"policy config {name!r}: {level!r} is not an enforcement level ({', '.join(LEVELS)})")
    return level, props


def _block(pool: Mapping[str, Any], r: Mapping[str, Any]) -> dict[str, Any]:
    """A block as the budget rule prices it: hours and instances in the month, its window, charge month and rate."""
    out = {"hours": r["hoursInMonth"], "instances": r["instances"]}
    if r.get("windowHours"):
        out.update(windowHours=r["windowHours"], chargeMonth=r["chargeMonth"])
    if pool.get("usdPerNodeHour") is not None:
        out.update(usdPerHour=pool["usdPerNodeHour"], source=pool["source"], asOf=pool["asOf"])
    return out


def plan_derived_config(plan: Mapping[str, Any], as_of: Optional[date] = None) -> dict[str, dict[str, Any]]:
    """Policy properties the stack file decides, read from the plan's cost and capacity sections; the day the
    plan is judged on from its lifecycle section, else `as_of` (`plan --as-of` of a program with no stack file's
    platform, which has no such section)."""
    derived: dict[str, dict[str, Any]] = {}
    cost = plan.get("cost") or {}
    if cost:
        budget = (cost.get("budget") or {}).get("monthlyUsd")
        pools = cost.get("pools") or []
        pricing: dict[str, Any] = {
            "spotDiscount": (cost.get("prices") or {}).get("spotDiscount"),
            "onDemandUsdPerHour": {p["pricedInstanceType"]: p["onDemandUsdPerNodeHour"] for p in pools
                                   if p.get("onDemandUsdPerNodeHour") is not None},
            "spotDiscounts": {p["pricedInstanceType"]: p["discount"] for p in pools if p.get("capacityType") == "spot"},
            "capacityBlockUsdPerHour": {p["pricedInstanceType"]: p["usdPerNodeHour"] for p in pools
                                        if p.get("capacityType") == "capacity-block" and p.get("usdPerNodeHour") is not None},
            "capacityBlocks": {p["name"]: _block(p, r) for p in pools
                               if (r := p.get("reservation")) and r.get("kind") == "capacity-block"},
        }
        fixed = {f["key"]: f for f in cost.get("fixed") or []}
        prices = {"eksControlPlane": "eksControlPlane", "natGateways": "natGateway",
                  "efsModelCache": "efsStandard", "ebsRootVolumes": "ebsGp3", "fsxDatasets": "fsxLustre",
                  "cloudwatchLogsIngestion": "cloudwatchLogsIngestion", "cloudwatchLogsStorage": "cloudwatchLogsStorage"}
        pricing["fixedPrices"] = {price: fixed[key]["usdPerUnit"] for key, price in prices.items()
                                  if key in fixed and fixed[key].get("usdPerUnit") is not None}
        if "efsModelCache" in fixed:
            pricing["efsStorageGiB"] = fixed["efsModelCache"].get("quantityAtMax") or 0
        if "cloudwatchLogsIngestion" in fixed:
            pricing["logIngestGbPerMonth"] = fixed["cloudwatchLogsIngestion"].get("quantityAtMax") or 0
            pricing["logStoredGb"] = (fixed.get("cloudwatchLogsStorage") or {}).get("quantityAtMax") or 0
        if budget is not None:
            pricing["monthlyUsd"] = budget
        derived[BUDGET_POLICY] = {k: v for k, v in pricing.items() if v is not None}
    day = (plan.get("lifecycle") or {}).get("asOf") or (as_of.isoformat() if as_of else None)
    if day:  # `plan --as-of`: the pack judges the same day
        for name in AS_OF_POLICIES:
            derived.setdefault(name, {})["asOf"] = day
    ratio = (plan.get("capacity") or {}).get("quotaOvercommitRatio")
    if ratio is not None:
        derived["team-quota-within-capacity"] = {"capacityRatio": ratio}
    return derived


def reconcile(pack: Any, given: Mapping[str, Any], derived: Mapping[str, Mapping[str, Any]] | None = None
              ) -> dict[str, tuple[str, dict[str, Any]]]:
    """Policy name -> (enforcement level, properties), as the CLI hands them to the pack. The config file is
    checked against each policy's schema first, as the Pulumi CLI builds and checks it: schema defaults with
    the file's entries over them, before the values the plan derives are added."""
    entries = {name: _parse_entry(name, value) for name, value in given.items()}
    if entries:
        _validate(pack, _apply(pack, entries, {}), set(entries))
    result = _apply(pack, entries, derived or {})
    budget = budget_in_force(derived or {}, given)
    if budget is not None and BUDGET_POLICY in result:
        level, props = result[BUDGET_POLICY]
        result[BUDGET_POLICY] = (level, {**props, "monthlyUsd": budget["monthlyUsd"], "budgetSource": budget["source"]})
    return result


def _apply(pack: Any, entries: Mapping[str, tuple[Optional[str], dict[str, Any]]],
           derived: Mapping[str, Mapping[str, Any]]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Schema defaults, then `derived`, then `all`'s level, then each policy's entry (pulumi/pulumi
    sdk/go/common/resource/analyzer/config.go, ReconcilePolicyPackConfig and applyConfig)."""
    from gpu_platform.policy.common import config_defaults

    result: dict[str, tuple[str, dict[str, Any]]] = {}
    for policy in pack.POLICIES:
        level = (policy.enforcement_level or pack.ENFORCEMENT_LEVEL).value
        props = config_defaults(policy.config_schema)
        known = set(policy.config_schema.properties) if policy.config_schema else set()
        props.update({k: v for k, v in derived.get(policy.name, {}).items() if k in known})
        result[policy.name] = (level, props)
    all_level = entries.get("all", (None, {}))[0]
    if all_level:
        result = {name: (all_level, props) for name, (_, props) in result.items()}
    for name, (level, props) in entries.items():
        if name == "all" or name not in result:
            continue  # the CLI ignores names no policy has
        old_level, old_props = result[name]
        result[name] = (level or old_level, {**old_props, **props})
    return result


def budget_in_force(derived: Mapping[str, Mapping[str, Any]], given: Mapping[str, Any]) -> Optional[dict[str, Any]]:
    """The monthly budget the plan holds the stack to: the stricter of the stack file's and the policy
    config's, with where it comes from (None when neither sets one). A config meant for every stack must
    not loosen a stack that set itself a tighter budget, nor a stack file loosen the config's."""
    stack_usd = (derived.get(BUDGET_POLICY) or {}).get("monthlyUsd")
    entry = given.get(BUDGET_POLICY)
    config_usd = entry.get("monthlyUsd") if isinstance(entry, dict) else None
    if not isinstance(config_usd, (int, float)) or isinstance(config_usd, bool):
        config_usd = None  # an invalid value is the schema check's to report
    if stack_usd is None and config_usd is None:
        return None
    stricter = min(u for u in (stack_usd, config_usd) if u is not None)
    source = STACK_BUDGET if stricter == stack_usd else CONFIG_BUDGET
    return {"monthlyUsd": stricter, "source": source, "stackFileUsd": stack_usd, "policyConfigUsd": config_usd}


def _validate(pack: Any, result: Mapping[str, tuple[str, dict[str, Any]]], given: set[str]) -> None:
    """The properties of the policies the config file sets, against their config schemas as the Pulumi CLI
    checks them: `{"type": "object", "properties": ..., "required": ...}` by gojsonschema (JSON Schema draft
    7), keys the schema does not declare allowed (pulumi/pulumi sdk/go/common/resource/analyzer/config.go,
    validatePolicyConfig). The others hold only schema defaults: without a config file there is nothing to
    check, and jsonschema is not even imported."""
    if not given:
        return
    try:
        import jsonschema  # only when a policy config is given: plans without one never pay for it
    except ImportError:
        raise PlannerError("checking --policy-config against the policies' schemas needs the jsonschema package "
                           "(pip install 'jsonschema>=4.20,<5')") from None
    problems = []
    for policy in pack.POLICIES:
        schema = policy.config_schema
        if schema is None or policy.name not in given:
            continue
        doc = {"type": "object", "properties": schema.properties, **({"required": schema.required} if schema.required else {})}
        for err in jsonschema.Draft7Validator(doc).iter_errors(result[policy.name][1]):
            where = "".join(f".{part}" for part in err.absolute_path)
            problems.append(f"policy config {policy.name}{where}: {err.message}")
    if problems:
        raise PlannerError(problems)


def unknown_config_names(pack: Any, given: Mapping[str, Any]) -> list[str]:
    return sorted(n for n in given if n != "all" and n not in pack.BY_NAME)


# --- the engine's argument objects, from plan resources ---

def swap_marker(value: Any, old: str, new: str) -> Any:
    """A copy of JSON `value` with every leaf equal to `old` replaced by `new`."""
    if value == old:
        return new
    if isinstance(value, dict):
        return {k: swap_marker(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [swap_marker(v, old, new) for v in value]
    return value


def _engine_value(value: Any) -> Any:
    """Plan JSON -> what the engine sends a pack: unknowns become the SDK's unknown sentinel."""
    from pulumi_policy.proxy import UNKNOWN_STRING_VALUE

    return swap_marker(value, UNKNOWN_MARK, UNKNOWN_STRING_VALUE)


def _props(resource: Mapping[str, Any]) -> Any:
    from pulumi_policy.proxy import unknown_checking_proxy

    return unknown_checking_proxy(_engine_value(resource.get("inputs") or {}))


GO_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(h|m|s|ms|us|µs|ns)")
DURATION_UNITS = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def duration_seconds(text: Any) -> float:
    """A custom timeout (a Go duration such as "20m" or "1h30m", as `pulumi.CustomTimeouts` takes it) in
    seconds, as the engine hands it to a pack; 0 when unset or not a duration."""
    text = str(text or "").strip()
    parts = GO_DURATION.findall(text)
    if not parts or "".join(n + u for n, u in parts) != text:
        return 0.0
    return sum(float(n) * DURATION_UNITS[u] for n, u in parts)


def _options(resource: Mapping[str, Any]) -> Any:
    from pulumi_policy import PolicyCustomTimeouts, PolicyResourceOptions

    o = resource.get("options") or {}
    timeouts = o.get("customTimeouts") or {}
    aliases = [a["urn"] if isinstance(a, dict) and "urn" in a else json.dumps(a, sort_keys=True)
               for a in o.get("aliases") or []]
    return PolicyResourceOptions(
        bool(o.get("protect")), list(o.get("ignoreChanges") or []), o.get("deleteBeforeReplace"), aliases,
        PolicyCustomTimeouts(*(duration_seconds(timeouts.get(k)) for k in ("create", "update", "delete"))),
        list(o.get("additionalSecretOutputs") or []), resource.get("parent"))


class _Built(dict):
    """urn -> object, built by `make` on first lookup and kept."""

    def __init__(self, make: Any):
        super().__init__()
        self.make = make

    def __missing__(self, urn: str) -> Any:
        self[urn] = made = self.make(urn)
        return made


class EngineView:
    """Each plan resource as the engine shows it to a pack: props, options and provider, each built once,
    when a policy first reads it.

    The objects are read-only and shared by every resource and stack policy, so a large plan pays for
    one proxy per resource read instead of one per resource per use, and none for resources no rule reads.
    """

    def __init__(self, plan: Mapping[str, Any]):
        self.plan = plan
        self.entries = list(plan.get("resources") or [])
        self.by_urn = {r["urn"]: r for r in self.entries}
        self._by_type: dict[str, list[int]] = {}  # type -> positions in plan order, for read_by
        for i, r in enumerate(self.entries):
            self._by_type.setdefault(r["type"], []).append(i)
        self.props = _Built(lambda urn: _props(self.by_urn[urn]))
        self.options = _Built(lambda urn: _options(self.by_urn[urn]))
        self._providers: dict[str, Any] = {}

    def read_by(self, policy: Any) -> list[Mapping[str, Any]]:
        """The resources a resource policy reads, in plan order: those of the types it names (a policy
        of the pack returns at once for any other type, so running it there reports nothing), else all."""
        types = getattr(policy, "resource_types", None)
        if types is None:
            return self.entries
        return [self.entries[i] for i in sorted(i for t in types for i in self._by_type.get(t, ()))]

    def provider(self, resource: Mapping[str, Any]) -> Any:
        from pulumi_policy import PolicyProviderResource

        ref = resource.get("provider")
        urn = ref.rsplit("::", 1)[0] if ref else None
        if urn is None or urn not in self.by_urn:
            return None
        if urn not in self._providers:
            p = self.by_urn[urn]
            self._providers[urn] = PolicyProviderResource(p["type"], self.props[urn], urn, p["name"])
        return self._providers[urn]

    def resource_args(self, resource: Mapping[str, Any], config: Mapping[str, Any]) -> Any:
        from pulumi_policy import ResourceValidationArgs

        urn = resource["urn"]
        return ResourceValidationArgs(resource["type"], self.props[urn], urn, resource["name"], self.options[urn],
                                      self.provider(resource), dict(config))

    def stack_resources(self) -> list[Any]:
        """Every resource as a PolicyResource (parents and dependencies linked), plus the root stack."""
        from pulumi_policy import PolicyCustomTimeouts, PolicyResource, PolicyResourceOptions
        from pulumi_policy.proxy import unknown_checking_proxy

        plan = self.plan
        view_resource = _view_resource_type()
        out = {r["urn"]: view_resource(self, r) for r in self.entries}
        for r in self.entries:
            res = out[r["urn"]]
            res.parent = out.get(r.get("parent") or "")
            res.dependencies = [out[d] for d in (r.get("options") or {}).get("dependsOn") or [] if d in out]
        name = f"{plan.get('project', '')}-{plan.get('stack', '')}"
        root_urn = f"urn:pulumi:{plan.get('stack', '')}::{plan.get('project', '')}::pulumi:pulumi:Stack::{name}"
        root = PolicyResource("pulumi:pulumi:Stack", unknown_checking_proxy(_engine_value(plan.get("outputs") or {})),
                              root_urn, name,
                              PolicyResourceOptions(False, [], None, [], PolicyCustomTimeouts(0, 0, 0), []),
                              None, None, [], {})
        return [root, *out.values()]


@lru_cache(maxsize=1)
def _view_resource_type() -> type:
    from pulumi_policy import PolicyResource

    class ViewResource(PolicyResource):
        """A plan resource as a PolicyResource whose props and options are built when a rule first reads
        them: stack rules read a few types (common.of_type) of every resource."""

        def __init__(self, view: EngineView, r: Mapping[str, Any]):
            self._view = view
            self._given: Any = None  # props set after construction (the pack's readable view), else the plan's
            self._built = False
            unset: Any = None  # props and opts come from the view (the properties below)
            super().__init__(r["type"], {}, r["urn"], r["name"], unset, view.provider(r), None, [], {})
            self._built = True

        @property
        def props(self) -> Any:
            return self._view.props[self.urn] if self._given is None else self._given

        @props.setter
        def props(self, value: Any) -> None:
            # PolicyResource.__init__ assigns it (the view holds it); a copy the pack narrows keeps its own
            if self._built:
                self._given = value

        @property
        def opts(self) -> Any:
            return self._view.options[self.urn]

        @opts.setter
        def opts(self, _: Any) -> None:
            pass

    return ViewResource


def stack_resources(plan: Mapping[str, Any]) -> list[Any]:
    return EngineView(plan).stack_resources()


# --- running ---

def _run(policy: Any, args: Any, level: str, default_urn: Optional[str]) -> list[dict[str, Any]]:
    from pulumi_policy.proxy import UnknownValueError

    found: list[dict[str, Any]] = []

    def report(message: str, urn: Optional[str] = None) -> None:
        found.append({"policy": policy.name, "level": level, "urn": default_urn or urn or None, "message": message})

    try:
        policy.validate(args, report)
    except UnknownValueError as err:
        found.append({"policy": policy.name, "level": "advisory", "urn": default_urn,
                      "message": f"can't run policy '{policy.name}' during preview: {err.message}"})
    return found


def _held_settings(plan: Mapping[str, Any], pack: Any, given: Mapping[str, Any], lock: Optional[Path],
                   default: Optional[Path], pack_dir: Optional[Path],
                   as_of: Optional[date] = None) -> dict[str, tuple[str, dict[str, Any]]]:
    """Each policy's level and properties, with the lock each lock-reading policy holds the plan to made
    explicit (planner/lock_config.py)."""
    from gpu_platform.planner import lock_config

    settings = reconcile(pack, given, plan_derived_config(plan, as_of))
    return lock_config.hold_to(settings, pack, stack=plan.get("stack", ""), flag=lock, default=default,
                               pack_dir=pack_dir)


def holds_a_lock(plan: Mapping[str, Any], policy_config_path: Optional[Path], lock: Optional[Path], *,
                 project: Any, pack_dir: Optional[Path] = None) -> bool:
    """Whether any lock-reading policy holds the plan to a lock (`--lock`, the policy config's, or the one
    beside the stack files), as `evaluate` does."""
    from gpu_platform.planner import lock_config
    from gpu_platform.planner import project as projects

    pack = load_pack()
    default = project.lock_file(plan.get("stack", "")) if project else None
    settings = _held_settings(plan, pack, read_config(policy_config_path), lock, default,
                              pack_dir or projects.pack_dir(project, None))
    return any(props.get(lock_config.LOCK) is not None or props.get(lock_config.LOCK_FILE)
               for name in lock_config.lock_policies(pack) for _, props in [settings[name]])


def evaluate(plan: dict[str, Any], policy_config_path: Optional[Path], lock: Optional[Path] = None, *,
             project: Any = None, pack_dir: Optional[Path] = None, as_of: Optional[date] = None) -> list[dict[str, Any]]:
    """The violations of `plan` under the pack and the policy config file (or none). The lock comes from
    `lock` (`plan --lock`), else the config, else beside `project`'s stack files (planner/lock_config.py);
    `project` defaults to the one found from the working directory; `as_of`: the day judged (`plan --as-of`)."""
    from pulumi_policy import ResourceValidationPolicy, StackValidationArgs

    from gpu_platform.planner import lock_config
    from gpu_platform.planner import project as projects

    pack = load_pack()
    given = read_config(policy_config_path)
    project = project or projects.find_optional(None)
    default = project.lock_file(plan.get("stack", "")) if project else None
    settings = _held_settings(plan, pack, given, lock, default, pack_dir or projects.pack_dir(project, None), as_of)
    check_locks(settings, pack, plan.get("stack", ""))
    if policy_config_path and lock is None and default and default.is_file() and not lock_config.names_a_lock(given, pack):
        print(lock_config.unnamed_warning(policy_config_path, default), file=sys.stderr)
    for name in unknown_config_names(pack, given):
        print(f"warning: policy config names {name!r}, which no policy has (ignored)", file=sys.stderr)
    view = EngineView(plan)
    stack = None
    violations: list[dict[str, Any]] = []
    for policy in pack.POLICIES:
        level, config = settings[policy.name]
        if level == "disabled":
            continue
        level = "mandatory" if level == "remediate" else level
        if isinstance(policy, ResourceValidationPolicy):
            for r in view.read_by(policy):
                violations += _run(policy, view.resource_args(r, config), level, r["urn"])
        else:
            stack = stack if stack is not None else view.stack_resources()
            violations += _run(policy, StackValidationArgs(stack, dict(config)), level, None)
    order = {"mandatory": 0, "advisory": 1}
    return sorted(violations, key=lambda v: order.get(v["level"], 2))
