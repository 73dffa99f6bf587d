"""The shape of each argument, read from the component's Args TypedDict: an object where a map or nested
Args is declared, a list where a list is, a string where a string is (a version given as the number 26.7
is not one), a plain value where the component reads it to decide what to build (only `pulumi.Input[...]`
takes an Output, at any depth), and a required argument not empty.

Checked before any other rule reads an argument, so a wrong shape is refused naming the argument instead of
surfacing as a TypeError in the component or the provider SDK. A number or a flag of the wrong kind (the
text "big" for a size) is left to the stack file's models, which read those fields and name them."""
import types
import typing
from collections.abc import Mapping, Sequence
from functools import cache
from typing import Any, Union, get_args, get_origin

import pulumi

from gpu_platform.facts import syntax
from gpu_platform.spec.field_path import ROOT, FieldPath

EMPTY: tuple[Any, ...] = ("", [], {}, ())
PLAIN = "a plain value known when the program runs, not an Output (the component reads it to decide what to build)"


def shape_problems(args: Mapping[str, Any], kind: type, at: FieldPath = ROOT, lifted: bool = False) -> list[str]:
    """`path: reason` for each argument of `args` whose value does not have the shape `kind` declares, and
    each required argument given as None or empty. `lifted`: inside a `pulumi.Input`, where an Output may
    stand for any part."""
    hints, required = _hints(kind), required_keys(kind)
    found: list[str] = []
    for key, value in args.items():
        path = at / camel(key)
        if key in required and (value is None or _empty(value)):
            found.append(f"{path}: required; must not be {'None' if value is None else 'empty'}")
        elif key in hints and value is not None:
            found += _problems(value, hints[key], path, lifted)
    return found


def required_keys(kind: type) -> frozenset[str]:
    """The keys a TypedDict class requires (typing has no type for "a TypedDict class" to declare them on)."""
    return frozenset(kind.__required_keys__)  # type: ignore[attr-defined]


def _empty(value: Any) -> bool:
    return any(type(value) is type(e) and value == e for e in EMPTY)


def _problems(value: Any, hint: Any, path: FieldPath, lifted: bool) -> list[str]:
    members = get_args(hint) if get_origin(hint) in (Union, types.UnionType) else (hint,)
    lifted = lifted or any(_is_output(m) for m in members)
    if isinstance(value, pulumi.Output):
        return [] if lifted else [f"{path}: must be {PLAIN}"]
    plain = [m for m in members if not _is_output(m) and get_origin(m) is not _AWAITABLE]
    if value is None and type(None) in plain:
        return []
    results = [_one(value, m, path, lifted) for m in plain if m is not type(None)]
    return [] if not results or [] in results else results[0]


def _one(value: Any, hint: Any, path: FieldPath, lifted: bool) -> list[str]:
    origin = get_origin(hint)
    if typing.is_typeddict(hint):
        if not isinstance(value, Mapping):
            return [f"{path}: must be an object, not {syntax.kind_of(value)}"]
        missing = [f"{path / camel(k)}: required" for k in sorted(hint.__required_keys__ - set(value))]
        named = {k: v for k, v in value.items() if isinstance(k, str)}
        return missing + shape_problems(named, hint, path, lifted)
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        if not isinstance(value, Mapping):
            return [f"{path}: must be an object, not {syntax.kind_of(value)}"]
        inner = get_args(hint)[1] if get_args(hint) else Any
        return [p for k, v in value.items() for p in _problems(v, inner, path.key(str(k)), lifted)]
    if origin in (list, Sequence) or hint in (list, Sequence):
        if not isinstance(value, (list, tuple)):
            return [f"{path}: must be a list, not {syntax.kind_of(value)}"]
        inner = get_args(hint)[0] if get_args(hint) else Any
        return [p for i, v in enumerate(value) for p in _problems(v, inner, path.index(i), lifted)]
    if hint in (str, int, float, bool) and isinstance(value, (Mapping, list, tuple)):
        return [f"{path}: must be {_SCALAR[hint]}, not {syntax.kind_of(value)}"]
    if hint is str and not isinstance(value, str):
        return [f"{path}: must be a string (quoted, e.g. \"{value}\"), not {syntax.kind_of(value)}"]
    return []  # Any, Literal, numbers and flags (the models check them), resources (Pulumi checks their types)


_AWAITABLE = get_origin(typing.Awaitable[int])
_SCALAR = {str: "a string", bool: "true or false", int: "a whole number", float: "a number"}


def _is_output(hint: Any) -> bool:
    return hint is pulumi.Output or get_origin(hint) is pulumi.Output


@cache
def _hints(kind: type) -> dict[str, Any]:
    # pulumi.Input's members name `Output` and `T` as forward references, resolved in pulumi's own namespace
    return typing.get_type_hints(kind, localns=vars(pulumi.output))


def camel(key: str) -> str:
    """A Python keyword as Pulumi's schema names it: `subnet_ids` -> `subnetIds`."""
    head, *rest = key.split("_")
    return head + "".join(part.title() for part in rest)
