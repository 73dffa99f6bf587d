"""Reading the stack file's object into the models: structure, types, enums, ranges and unknown fields.

Errors name the field path a user must edit (`nodePools[1].maxSize`) and, for an unknown field, the
fields allowed there. Cross-field rules run after this (spec/rules.py, then decisions/validation.py).
"""
from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Mapping
from typing import Any, Optional, TypeVar, Union

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from gpu_platform.spec.alerting import plaintext_secret_message
from gpu_platform.spec.errors import PLATFORM_KEY, SpecError
from gpu_platform.spec.field_path import ROOT, FieldPath
from gpu_platform.spec.models import PlatformSpec

M = TypeVar("M", bound=BaseModel)
Loc = tuple[Union[int, str], ...]  # where pydantic found a problem: field names, list positions, mapping keys


def read_models(data: Any) -> PlatformSpec:
    """The stack file's object as a PlatformSpec; SpecError listing every structural problem."""
    if not isinstance(data, Mapping):
        raise SpecError(["gpu-platform:platform: must be an object (see the stack file contract in the README)"])
    return read_part(PlatformSpec, data)


def read_part(model: type[M], data: Mapping[str, Any], at: FieldPath = ROOT) -> M:
    """One part of the platform (a pool, a team...) as its model: the stack file's whole object, or a
    component's arguments (`at`: where the part is among them). SpecError lists every problem at its path."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise SpecError([_format_error(e, model, at) for e in exc.errors()]) from None


def _path(loc: Loc, at: FieldPath = ROOT) -> str:
    path = at
    for part in loc:
        if part == "[key]":  # pydantic's marker for a problem with a mapping's key: the message names the key
            continue
        if isinstance(part, int):
            path = path.index(part)
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part):
            path = path / part
        else:
            path = path.key(part)
    return str(path) or PLATFORM_KEY


def _aliased(loc: Loc, root: type[BaseModel]) -> Loc:
    """`loc` with each model field as the schema names it (camelCase), however the data named it: a component's
    arguments arrive by Python name, a stack file by alias. Mapping keys and list indexes stay as they are."""
    out: list[Union[int, str]] = []
    model: Optional[type[BaseModel]] = root
    for part in loc:
        field = model.model_fields.get(part) if model is not None and isinstance(part, str) else None
        if field is not None:
            out.append(field.alias or part)
            model = _model_of(field.annotation)
        else:
            out.append(part)
            model = model if isinstance(part, int) else None
    return tuple(out)


def _format_error(err: ErrorDetails, root: type[BaseModel] = PlatformSpec, at: FieldPath = ROOT) -> str:
    loc = _aliased(tuple(err["loc"]), root)
    msg = err["msg"]
    if err["type"] == "extra_forbidden":
        allowed = _fields_at(loc[:-1], root)
        msg = plaintext_secret_message(loc) or (
            "unknown field" + (f"; allowed: {', '.join(allowed)}" if allowed else "") + did_you_mean(str(loc[-1]), allowed))
    elif err["type"] == "literal_error" and isinstance(err.get("input"), str):
        msg += did_you_mean(err["input"], re.findall(r"'([^']*)'", str(err.get("ctx", {}).get("expected", ""))), "'")
    elif err["type"] == "missing":
        msg = "required field is missing"
    elif err["type"] == "value_error":
        msg = msg.removeprefix("Value error, ")
    return f"{_path(loc, at)}: {msg}"


def did_you_mean(name: str, known: Iterable[str], quote: str = "`") -> str:
    """`; did you mean `maxSize`?` for the known name `name` most likely misspells, or nothing (case is
    ignored in the comparison: `maxsize` is `maxSize`). A value is quoted as pydantic quotes values ('),
    a field name in backticks."""
    by_lower = {k.lower(): k for k in known}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.75)
    return f"; did you mean {quote}{by_lower[close[0]]}{quote}?" if close else ""


def _fields_at(loc: Loc, root: type[BaseModel] = PlatformSpec) -> list[str]:
    """The camelCase field names of the model found at `loc` below `root`, for 'unknown field' messages."""
    model = root
    for part in loc:
        if isinstance(part, int):
            continue
        field = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        found = _model_of(field.annotation) if field is not None else None
        if found is None:
            return []
        model = found
    return [f.alias or n for n, f in model.model_fields.items()]


def _model_of(annotation: Any) -> Optional[type[BaseModel]]:  # Any: whatever a field's annotation holds
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found is not None:
            return found
    return None
