"""What every rule shares: resource types, reading the engine's proxied values, the stack's environment,
config defaults, and the wrappers that turn plain rule functions into CrossGuard policies.

Rules are plain generator functions that yield one message per problem, each saying what to change:
- resource rules: `rule(args, config)` over a `ResourceValidationArgs` (props are the NEW inputs,
  camelCase, behind the SDK's unknown-checking proxy) and the policy's config with defaults applied;
- stack rules: `rule(args, config)` over a `StackValidationArgs`, yielding `(message, urn or None)`.
A rule that touches a value unknown during preview raises UnknownValueError: ordinary rules let it go
(the SDK then reports "can't run during preview" as advisory); guard rules are wrapped `fail_closed`
and turn it into a violation at their own (mandatory) level.
"""
from __future__ import annotations

import copy
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Optional
from collections.abc import Callable, Iterable, Iterator

from pulumi_policy import (
    EnforcementLevel, PolicyConfigSchema, ReportViolation, ResourceValidationArgs, ResourceValidationPolicy, Severity,
    StackValidationArgs, StackValidationPolicy,
)
from pulumi_policy.proxy import UnknownValueError

from gpu_platform.facts import catalog, names
from gpu_platform.facts.recognise import GPU_AMI_TYPES, is_gpu_instance_type, is_gpu_operator_chart
from gpu_platform.policy import shapes
from gpu_platform.policy.resource_types import (  # noqa: F401 re-exported: the rules import them from here
    ADDON, AWS_PROVIDER, CLUSTER, FILE_SYSTEM, HELM_RELEASE, KARPENTER_VIEW, LAUNCH_TEMPLATE, LUSTRE, NAMESPACE,
    NAT_GATEWAY, NODE_CLASS, NODE_GROUP, NODE_POOL, RESOURCE_QUOTA, STACK, TypedResourcePolicy,
)
from gpu_platform.policy.shapes import UNREADABLE_PREFIX  # noqa: F401

EXACT_SEMVER = re.compile(r"^v?\d+\.\d+\.\d+$")  # no ranges, no "latest", no pre-release wildcards

# The GPU Operator chart's tolerations when the release does not set them (values.yaml of the pinned
# chart, daemonsets.tolerations and node-feature-discovery.worker.tolerations: the GPU taint only).
CHART_DEFAULT_TOLERATIONS = ({"key": names.GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"},)
K8S_EFFECTS = {eks: k8s for k8s, eks in names.TAINT_EFFECTS.items()}  # NO_SCHEDULE -> NoSchedule


# --- reading values ---

def plain(value: Any) -> Any:
    """A deep plain copy of a proxied value; raises UnknownValueError if any part is unknown."""
    if isinstance(value, Mapping):
        return {k: plain(value[k]) for k in value}
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return [plain(value[i]) for i in range(len(value))]
    return value


def plain_or_unknown(value: Any, marker: str) -> Any:
    """A deep plain copy in which each value unknown during the preview is `marker` (nothing raises)."""
    keys: Sequence[Any]
    if isinstance(value, Mapping):
        keys, read = list(value), lambda k: value[k]
    elif isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        keys, read = range(len(value)), lambda i: value[i]
    else:
        return value
    out = {}
    for key in keys:
        try:
            out[key] = plain_or_unknown(read(key), marker)
        except UnknownValueError:
            out[key] = marker
    return out if isinstance(value, Mapping) else [out[i] for i in keys]


def get(props: Any, path: str, default: Any = None) -> Any:
    """`props["a"]["b"]` for path `a.b` as a plain value, `default` when any step is missing."""
    node = props
    for part in path.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return default
        node = node[part]
    return default if node is None else plain(node)


def has(props: Any, key: str) -> bool:
    """`key` is set (not null), without reading anything under it (parts may be unknown in a preview)."""
    return isinstance(props, Mapping) and key in props and props[key] is not None


# The GPU Operator chart values the rules read. Each is read on its own, so a value elsewhere in the
# release that is unknown during a preview does not stop a rule.
OPERATOR_VALUE_KEYS = ("driver", "mig", "devicePlugin", "migManager", "daemonsets", "node-feature-discovery")


def release_values(props: Any, keys: Iterable[str] = OPERATOR_VALUE_KEYS) -> dict[str, Any]:
    return {k: v for k in keys if (v := get(props, f"values.{k}")) is not None}


def truthy(value: Any) -> bool:
    """Provider booleans sometimes travel as strings ("true")."""
    return value is True or (isinstance(value, str) and value.lower() == "true")


def is_gpu_node_group(props: Any) -> bool:
    """A GPU node group however it was built: a GPU AMI type, a GPU instance type, the `nvidia.com/gpu`
    taint, or this platform's pool and GPU product labels."""
    labels = get(props, "labels", {})
    if names.POOL_LABEL in labels and names.GPU_PRODUCT_LABEL in labels:
        return True
    if get(props, "amiType") in GPU_AMI_TYPES:
        return True
    if any(t.get("key") == names.GPU_TAINT_KEY for t in get(props, "taints", []) if isinstance(t, Mapping)):
        return True
    return any(is_gpu_instance_type(t) for t in get(props, "instanceTypes", []))


def node_group_label(name: str, props: Any) -> str:
    """How messages name a node group (or a Karpenter NodePool seen as one): its pool, else its logical name."""
    pool = get(props, "labels", {}).get(names.POOL_LABEL)
    what = "NodePool" if get(props, KARPENTER_VIEW) else "node group"
    return f"{what} {name!r} (pool {pool})" if pool else f"{what} {name!r}"


def gpu_model_of(props: Any) -> Optional[catalog.GpuModel]:
    """The GPU of a node group's first known instance type, else of its GPU product label (a Capacity Block
    group names its instance type in its launch template only)."""
    types = [catalog.INSTANCE_TYPES[t] for t in get(props, "instanceTypes", []) if t in catalog.INSTANCE_TYPES]
    if types:
        return types[0].gpu_model
    product = get(props, "labels", {}).get(names.GPU_PRODUCT_LABEL)
    return next((g for g in catalog.GPU_MODELS.values() if product and g.product_label == product), None)


def stack_of(urn: str) -> str:
    """`urn:pulumi:<stack>::<project>::<type>::<name>` -> stack."""
    return urn.split("::", 1)[0].rsplit(":", 1)[-1] if urn.startswith("urn:pulumi:") else ""


# --- environment: policy config first, else a pool's own tag, else the aws provider's default tag ---

def provider_environment(provider_props: Any) -> Optional[str]:
    if provider_props is None:
        return None
    try:
        tags = get(provider_props, "defaultTags")
    except UnknownValueError:
        return None
    if isinstance(tags, str):  # provider inputs travel JSON-encoded
        try:
            tags = json.loads(tags)
        except ValueError:
            return None
    env = ((tags or {}).get("tags") or {}).get(names.ENVIRONMENT_TAG) if isinstance(tags, dict) else None
    return env if env in names.ENVIRONMENTS else None


def own_environment(props: Any, path: str = "tags") -> Optional[str]:
    """The environment a resource's own tags state (a library component tags what the program gave it);
    `path`: where its tags are (an EC2NodeClass's: `spec.tags`, put on every instance launched for it). The
    tag alone is read: another tag computed during a preview does not hide it."""
    node = props
    try:
        for part in [*path.split("."), names.ENVIRONMENT_TAG]:
            if not isinstance(node, Mapping) or part not in node:
                return None
            node = node[part]
    except UnknownValueError:
        return None
    return node if node in names.ENVIRONMENTS else None


# Where a pool's own environment tag is: a node group's tags, a Karpenter pool's EC2NodeClass's.
POOL_TAGS = {NODE_GROUP: "tags", NODE_CLASS: "spec.tags"}


def resource_environment(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Optional[str]:
    """The policy config's, else the resource's own tag (which wins over a default tag in AWS too), else its
    aws provider's default tag."""
    if config.get("environment"):
        return config["environment"]
    return own_environment(args.props) or provider_environment(args.provider.props if args.provider is not None
                                                              else None)


def declared_environment(args: StackValidationArgs, config: Mapping[str, Any]) -> Optional[str]:
    """The environment the stack declares as a whole: the policy config's, else an aws provider's default tag."""
    if config.get("environment"):
        return config["environment"]
    for r in args.resources:
        if r.resource_type == AWS_PROVIDER:
            env = provider_environment(r.props)
            if env:
                return env
    for r in args.resources:
        env = provider_environment(r.provider.props if r.provider is not None else None)
        if env:
            return env
    return None


def stack_environment(args: StackValidationArgs, config: Mapping[str, Any]) -> Optional[str]:
    """The declared environment, else the one the pools' own tags state when they agree."""
    declared = declared_environment(args, config)
    if declared:
        return declared
    tagged = {own_environment(r.props, POOL_TAGS[r.resource_type]) for r in args.resources
              if r.resource_type in POOL_TAGS} - {None}
    return tagged.pop() if len(tagged) == 1 else None


def pool_environment(args: StackValidationArgs, config: Mapping[str, Any], node_class: Any) -> Optional[str]:
    """A Karpenter pool's environment, as a node group's (`resource_environment`): the policy config's, else
    its EC2NodeClass's own tag (None: the stack has no class of that name), else the stack's aws provider's."""
    if config.get("environment"):
        return config["environment"]
    own = own_environment(node_class.props, POOL_TAGS[NODE_CLASS]) if node_class is not None else None
    return own or declared_environment(args, config)


def applies_in(environment: Optional[str], environments: Iterable[str]) -> bool:
    """Strict when the environment cannot be told: a rule scoped to any environment then applies."""
    scope = set(environments)
    return bool(scope) and (environment is None or environment in scope)


def environment_phrase(environment: Optional[str]) -> str:
    """`in prod`, or how to tell the pack the environment when it could not be read."""
    if environment:
        return f"in {environment}"
    return (f"when the environment is unknown (held to prod: set `environment` in this policy's config, the aws "
            f"provider's default tag {names.ENVIRONMENT_TAG}, or `environment` on the pool's component)")


ENVIRONMENT_PROPERTY = {
    "type": "string", "enum": list(names.ENVIRONMENTS),
    "description": "The stack's environment, for programs whose aws provider does not carry the default tag "
                   f"{names.ENVIRONMENT_TAG} (gpu-platform's program sets it); when set it wins over the tag. "
                   "Neither: prod strictness.",
}


def environment_properties(description: str) -> dict[str, Any]:
    """A rule's config properties for where it is mandatory (`environments`, default prod: `description` says
    what is refused there) and the stack's own `environment`."""
    return {"environments": {"type": "array", "items": {"type": "string"}, "default": ["prod"],
                             "description": description},
            "environment": ENVIRONMENT_PROPERTY}


# --- config defaults, exactly as the CLI fills them ---

def config_defaults(schema: Optional[PolicyConfigSchema]) -> dict[str, Any]:
    """The CLI fills every schema property's `default`; the SDK does not (tests and the planner must)."""
    if schema is None:
        return {}
    return {k: json.loads(json.dumps(v["default"])) for k, v in schema.properties.items() if "default" in v}


def with_defaults(policy: Any, given: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    return {**config_defaults(policy.config_schema), **(dict(given) if given else {})}


# --- wrappers ---

ResourceRule = Callable[[ResourceValidationArgs, Mapping[str, Any]], Iterator[str]]
StackRule = Callable[[StackValidationArgs, Mapping[str, Any]], Iterator[tuple[str, Optional[str]]]]


def fail_closed_message(err: UnknownValueError) -> str:
    path = ".".join(err.props) if getattr(err, "props", None) else "a value"
    return (f"{path} is computed during this preview and cannot be proven unchanged (fails closed): the resource "
            "it comes from is being created or replaced. Deploy that change on its own first, or run with "
            "this policy set to advisory for a deliberate replacement.")


class RuleFailed(UnknownValueError):
    """A rule stopped on a value it could not read: reported as the SDK reports an unknown value, advisory
    ("can't run policy ... during preview"), never an exception that fails the whole preview. The shapes in
    policy/shapes.py keep rules from getting here; this is the last guard."""

    def __init__(self, where: str, err: Exception):  # no super().__init__: there is no unknown sentinel here
        Exception.__init__(self, where)
        self.unknown_type_sentinel, self.props = "", []
        self.message = f"{RULE_FAILED_PREFIX} {where}: {type(err).__name__}: {err}"


RULE_FAILED_PREFIX = "the rule could not read"


def readable_resource_args(args: ResourceValidationArgs) -> ResourceValidationArgs:
    """`args` with props as the rules may read them (policy/shapes.py): wrong shapes taken out."""
    view, _ = shapes.readable(args.resource_type, args.props)
    if view is args.props:
        return args
    out = copy.copy(args)
    out.props = view
    return out


class _ReadableResource:
    """A stack resource as the rules may read it: its props narrowed by policy/shapes.py on first read (a stack
    rule reads the props of a few types only), its parent and dependencies the same kind of view."""

    __slots__ = ("_resource", "_views", "_props", "resource_type")

    def __init__(self, resource: Any, views: dict[int, "_ReadableResource"]):
        self._resource, self._views, self._props = resource, views, None
        self.resource_type = resource.resource_type  # what every stack rule filters on (of_type): read directly

    def __getattr__(self, name: str) -> Any:  # urn, name, opts, provider...
        return getattr(self._resource, name)

    @property
    def props(self) -> Any:
        if self._props is None:
            self._props = shapes.readable(self._resource.resource_type, self._resource.props)[0]
        return self._props

    @property
    def parent(self) -> Any:
        parent = self._resource.parent
        return self._views.get(id(parent), parent) if parent is not None else None

    @property
    def dependencies(self) -> list[Any]:
        return [self._views.get(id(d), d) for d in self._resource.dependencies or []]


class _Resources(list[Any]):
    """A stack's readable resources, in the engine's order, with the same views by type (what `of_type` reads)."""

    def __init__(self, views: list[Any], by_type: dict[str, list[Any]]):
        super().__init__(views)
        self.by_type = by_type


_last: Optional[tuple[list[Any], _Resources]] = None  # the engine's resources (held) and their views


def readable_stack_args(args: StackValidationArgs) -> StackValidationArgs:
    """`args` with each resource read through `_ReadableResource`. The views are built once per validation and
    shared by its stack rules, which only read them: a large stack has thousands of resources and the pack two
    dozen stack rules."""
    global _last
    if _last is None or _last[0] is not args.resources:
        views: dict[int, _ReadableResource] = {}
        for r in args.resources:
            views[id(r)] = _ReadableResource(r, views)
        ordered = [views[id(r)] for r in args.resources]  # read as PolicyResources are
        by_type: dict[str, list[Any]] = {}
        for view in ordered:
            by_type.setdefault(view.resource_type, []).append(view)
        _last = (args.resources, _Resources(ordered, by_type))
    out = copy.copy(args)
    out.resources = _Resources(_last[1], _last[1].by_type)
    return out


def resource_policy(name: str, description: str, types: Iterable[str], rule: ResourceRule, *,
                    severity: Severity, level: EnforcementLevel = EnforcementLevel.MANDATORY,
                    schema: Optional[PolicyConfigSchema] = None, remediation: str = "",
                    fail_closed: bool = False) -> ResourceValidationPolicy:
    """A resource policy running `rule` on the given types and reporting each message it yields."""
    wanted = frozenset(types)

    def validate(args: ResourceValidationArgs, report: ReportViolation) -> None:
        if args.resource_type not in wanted:
            return
        config = args.get_config()
        try:
            for message in rule(readable_resource_args(args), config):
                report(message, None)
        except UnknownValueError as err:
            if not fail_closed:
                raise
            report(fail_closed_message(err), None)
        except Exception as err:  # noqa: BLE001 never fail the user's preview: see RuleFailed
            raise RuleFailed(f"{args.resource_type} {args.name!r}", err) from err

    policy = TypedResourcePolicy(name, description, validate, enforcement_level=level, config_schema=schema,
                                 severity=severity, remediation_steps=remediation or None)
    policy.resource_types = wanted
    return policy


def stack_policy(name: str, description: str, rule: StackRule, *, severity: Severity,
                 level: EnforcementLevel = EnforcementLevel.MANDATORY,
                 schema: Optional[PolicyConfigSchema] = None, remediation: str = "",
                 fail_closed: bool = False) -> StackValidationPolicy:
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        config = args.get_config()
        try:
            for message, urn in rule(readable_stack_args(args), config):
                report(message, urn)
        except UnknownValueError as err:
            if not fail_closed:
                raise
            report(fail_closed_message(err), None)
        except Exception as err:  # noqa: BLE001 never fail the user's preview: see RuleFailed
            raise RuleFailed("the stack's resources", err) from err

    return StackValidationPolicy(name, description, validate, enforcement_level=level, config_schema=schema,
                                 severity=severity, remediation_steps=remediation or None)


def of_type(args: StackValidationArgs, type_: str) -> list:
    """The stack's resources of one type, in the engine's order."""
    if isinstance(args.resources, _Resources):  # readable_stack_args indexed them once for every rule
        return list(args.resources.by_type.get(type_, ()))
    return [r for r in args.resources if r.resource_type == type_]


def is_operator_release(props: Any) -> bool:
    """A Helm release of NVIDIA's GPU Operator chart, by any chart reference (facts.recognise)."""
    return is_gpu_operator_chart(get(props, "chart"))


def gpu_operator_release(args: StackValidationArgs) -> Any:
    """The GPU Operator's Helm release among the stack's resources (None when the stack has none)."""
    return next((r for r in of_type(args, HELM_RELEASE) if is_operator_release(r.props)), None)
