"""Component Args as typed dictionaries: how they are declared, and the checks every component runs first.

The component provider host (`pulumi.provider.experimental`) finds a TypedDict's optional keys only when
`typing.is_typeddict` accepts the class, which it does not for typing_extensions' own TypedDict before
Python 3.13: every key would be published as required to other languages. Python 3.11 has `Required` in
`typing`, so typing's TypedDict is used there; 3.10 falls back to typing_extensions (Python programs work,
the published schema needs 3.11+).

Problems are found with the schema's (camelCase) paths; ArgumentsError names them as Python keywords in its
message and as the schema's properties in its per-property errors.
"""
import re
import sys
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Optional

from pulumi.errors import InputPropertiesError, InputPropertyErrorDetails

from gpu_platform.facts import catalog, syntax
from gpu_platform.facts.names import ENVIRONMENTS
from gpu_platform.resources.arg_enums import plain
from gpu_platform.resources.arg_shapes import camel, required_keys, shape_problems
from gpu_platform.spec.errors import COMPONENT_ARGUMENTS, PLATFORM_KEY, SpecError
from gpu_platform.spec.field_path import ROOT, FieldPath
from gpu_platform.spec.parse import did_you_mean

if sys.version_info >= (3, 11):
    from typing import NotRequired, Required, TypedDict
else:  # pragma: no cover - the published schema needs 3.11; Python programs run on 3.10 as well
    from typing_extensions import NotRequired, Required, TypedDict

__all__ = ["NotRequired", "Required", "TypedDict", "ArgumentsError", "as_arguments", "camel", "argument_problems",
           "syntax_problems", "unknown_arguments", "below", "moved"]


class ArgumentsError(SpecError, InputPropertiesError):
    """A component's arguments are invalid. Each problem is `path: reason`, the path the argument's as the
    schema names it; as Pulumi's per-property error (pulumi.errors.InputPropertiesError), a component host
    and `pulumi up` show each property. A SpecError too, so a program or the planner handles it as any."""

    def __init__(self, where: str, problems: list[str], within: str = ""):
        """`where`: the component and its name, e.g. "GpuNodePool 'a10g': "; `problems`: `path: reason`, the
        path as the schema names it. The message names the Python keyword path (`max_unavailable_percent`),
        what a Python program wrote; `errors` the schema's (`maxUnavailablePercent`), which the engine maps
        to the property another language's program set. `within`: the argument whose value is a stack file's
        object (GpuPlatform's `platform`): the paths are in that object, written as a stack file writes them
        in every language, and are named below it as they are (`platform.teams[0].quota.gpus`)."""
        given = list(dict.fromkeys(problems))
        if within:
            given = [below(within, p) for p in given]
        shown = given if within else [python_path(p) for p in given]
        # a program's arguments, not the stack file's gpu-platform:platform key it may never have had
        SpecError.__init__(self, [where + p for p in shown], subject=COMPONENT_ARGUMENTS)
        self.message = str(self)
        self.errors: list[InputPropertyErrorDetails] = [_object_details(p) if within else _details(p) for p in given]


def below(argument: str, problem: str) -> str:
    """`path: reason` of a stack file's object as a path below the `argument` that holds it."""
    path, sep, reason = problem.partition(": ")
    if not sep:
        return f"{argument}: {problem}"
    return f"{argument}{'' if path == PLATFORM_KEY else '.' + path}: {reason}"  # the object itself: the argument


def _object_details(problem: str) -> InputPropertyErrorDetails:
    path, _, reason = problem.partition(": ")
    return InputPropertyErrorDetails(property_path=path, reason=reason or problem)


def _details(problem: str) -> InputPropertyErrorDetails:
    """The problem as the schema's property (each name as Pulumi's schema camel-cases the Python keyword)."""
    text, path, reason = _located(problem)  # the reason as written: the schema's names
    schema = str(path.renamed(lambda name: camel(_snake(name)))) if path is not None else text
    return InputPropertyErrorDetails(property_path=schema, reason=reason)


def _located(problem: str) -> tuple[str, Optional[FieldPath], str]:
    """`path: reason` read back into the path's text, the path (None when the text is not one) and the reason."""
    text, _, reason = problem.partition(": ")
    try:
        return text, FieldPath.parse(text), reason
    except ValueError:
        return text, None, reason


def moved(problem: str, old: FieldPath, new: FieldPath) -> str:
    """`path: reason` with the path moved from `old` to `new` (FieldPath.moved): a model's field where the
    component's Args name it differently or flatten it."""
    _, path, reason = _located(problem)
    return problem if path is None or ": " not in problem else f"{path.moved(old, new)}: {reason}"


def python_path(problem: str) -> str:
    """`path: reason` with the path's field names as Python keywords (snake_case); mapping keys, in
    quotes, and the reason stay as they are."""
    _, path, reason = _located(problem)
    if path is None or ": " not in problem:
        return problem
    return f"{path.renamed(_snake)}: {_NAMED_IN_REASON.sub(_python_names_in, reason)}"


# The field names a reason lists: "allowed: type, releaseVersion" and "did you mean `releaseVersion`?".
_NAMED_IN_REASON = re.compile(r"(allowed: )([A-Za-z0-9, ]+)|(did you mean `)([A-Za-z][A-Za-z0-9]*)(`)")


def _python_names_in(match: "re.Match[str]") -> str:
    if match.group(1):
        return match.group(1) + ", ".join(_snake(n) for n in match.group(2).split(", "))
    return match.group(3) + _snake(match.group(4)) + match.group(5)


def _snake(name: str) -> str:
    return _python_names().get(name) or re.sub(r"(?<=[a-z0-9])([A-Z])", lambda m: "_" + m.group(1).lower(), name)


@lru_cache(maxsize=1)
def _python_names() -> dict[str, str]:
    """Each stack-file alias (storageCapacityGiB) -> its Python name (storage_capacity_gib), from the models."""
    from pydantic import BaseModel

    from gpu_platform.spec import models

    kinds = [k for k in vars(models).values() if isinstance(k, type) and issubclass(k, BaseModel)]
    return {f.alias: n for k in kinds for n, f in k.model_fields.items() if f.alias and f.alias != n}


def as_arguments(component: str, name: str, args: Any, kind: Optional[type] = None) -> dict[str, Any]:
    """A component's arguments as a dict: ArgumentsError, naming them, when they are not a mapping (None, a
    list, a string), before any key is read; and, given the component's Args `kind`, naming each argument
    whose value has the wrong shape or a required one that is empty (arg_shapes.py), before any rule reads
    one."""
    where = f"{component} {name!r}: "
    if not isinstance(args, Mapping):
        raise ArgumentsError(where, [
            f"args: must be an object of {component}Args (keyword arguments by name), not {syntax.kind_of(args)}"])
    given: dict[str, Any] = plain(dict(args))  # an enum member is its value to the models and the rules
    if kind is not None:  # None for an optional keyword is Python's "not given"
        optional = set(kind.__annotations__) - required_keys(kind)
        given = {k: v for k, v in given.items() if v is not None or k not in optional}
    wrong = shape_problems(given, kind) if kind is not None else []
    if wrong:
        raise ArgumentsError(where, wrong)
    return given


def argument_problems(args: Mapping[str, Any], kind: type, at: FieldPath = ROOT, *,
                      required: bool = True) -> list[str]:
    """Keys `kind` does not declare, keys it requires that `args` lacks (unless the component's own model
    reports those), an environment that is not one of ENVIRONMENTS, and the syntax of AWS names and ids."""
    problems = unknown_arguments(args, kind, at)
    if required:
        problems += [f"{at / camel(k)}: required" for k in sorted(required_keys(kind) - set(args))]
    if "environment" in kind.__annotations__ and args.get("environment") not in (None, *ENVIRONMENTS):
        problems.append(f"{at / 'environment'}: must be one of {', '.join(ENVIRONMENTS)}")
    return problems + syntax_problems(args, at)


def unknown_arguments(args: Mapping[str, Any], kind: type, at: FieldPath = ROOT) -> list[str]:
    """Each key of `args` that `kind` does not declare, with the declared one it most likely misspells."""
    known = [camel(k) for k in kind.__annotations__]
    return [f"{at / camel(k)}: unknown argument{did_you_mean(camel(k), known)}"
            for k in sorted(set(args) - set(kind.__annotations__))]


# Arguments naming something in AWS, by name, and the rule each follows (facts/syntax.py).
AWS_NAMES = {"region": syntax.region, "subnet_ids": syntax.subnet_id, "subnet_zones": syntax.zone,
             "security_group_ids": syntax.security_group_id, "node_security_group_ids": syntax.security_group_id,
             "node_security_group_id": syntax.security_group_id}

# Arguments that are Kubernetes label maps (a node selector, a selector's labels), checked as the API server
# checks labels.
LABEL_MAPS = ("system_node_selector", "service_monitor_labels")


def syntax_problems(args: Mapping[str, Any], at: FieldPath = ROOT) -> list[str]:
    """Regions, zones, resource ids and tags given as plain strings, checked as AWS checks them (an Output is
    checked by AWS once it is known), label maps as Kubernetes checks them, and the Kubernetes version, one
    the catalog knows."""
    tags = args.get("tags")
    found = [f"{(at / 'tags').key(str(key))}: {p}" for key, value in (tags.items() if isinstance(tags, Mapping) else ())
             if (p := (syntax.tag_key(key) if isinstance(key, str) else None)
                 or (syntax.tag_value(value) if isinstance(value, str) else None))]
    for key in LABEL_MAPS:
        labels = args.get(key)
        found += [f"{(at / camel(key)).key(str(k))}: {p}"
                  for k, v in (labels.items() if isinstance(labels, Mapping) else ())
                  if (p := (syntax.label_key(k) if isinstance(k, str) else None)
                      or (syntax.label_value(v) if isinstance(v, str) else None))]
    version = args.get("kubernetes_version")
    if isinstance(version, str) and version not in catalog.KUBERNETES_VERSIONS:  # as the stack file's cluster
        found.append(f"{at / 'kubernetesVersion'}: must be one of {', '.join(catalog.KUBERNETES_VERSIONS)}")
    for key, check in AWS_NAMES.items():
        given = args.get(key)
        many = isinstance(given, (list, tuple))
        for j, value in enumerate(list(given) if isinstance(given, (list, tuple)) else [given]):
            problem = check(value) if isinstance(value, str) else None
            if problem:
                found.append(f"{(at / camel(key)).index(j) if many else at / camel(key)}: {problem}")
    return found
