"""Reading the stack file's object into the models: structure, types, enums, ranges and unknown fields.

Errors name the field path a user must edit (`nodePools[1].maxSize`) and, for an unknown field, the
fields allowed there. Cross-field rules run after this (spec/rules.py, then decisions/validation.py).
"""
from __future__ import annotations

import difflib
import re
from typing import Any, Iterable, Mapping, TypeVar

from pydantic import BaseModel, ValidationError

from gpu_platform.spec.alerting import plaintext_secret_message
from gpu_platform.spec.errors import SpecError
from gpu_platform.spec.field_path import quoted
from gpu_platform.spec.models import PlatformSpec

M = TypeVar("M", bound=BaseModel)


def read_models(data: Any) -> PlatformSpec:
    """The stack file's object as a PlatformSpec; SpecError listing every structural problem."""
    if not isinstance(data, Mapping):
        raise SpecError(["gpu-platform:platform: must be an object (see the stack file contract in the README)"])
    return read_part(PlatformSpec, data)


def read_part(model: type[M], data: Mapping[str, Any], where: str = "") -> M:
    """One part of the platform (a pool, a team...) as its model: the stack file's whole object, or a
    component's arguments. SpecError lists every problem, each prefixed with `where`."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise SpecError([f"{where}{_format_error(e, model)}" for e in exc.errors()]) from None


def _path(loc: tuple) -> str:
    out = ""
    for part in loc:
        if part == "[key]":  # pydantic's marker for a problem with a mapping's key: the message names the key
            continue
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", str(part)):
            out += f".{part}" if out else str(part)
        else:
            out += f"[{quoted(str(part))}]"
    return out or "gpu-platform:platform"


def _aliased(loc: tuple, root: Any) -> tuple:
    """`loc` with each model field as the schema names it (camelCase), however the data named it: a component's
    arguments arrive by Python name, a stack file by alias. Mapping keys and list indexes stay as they are."""
    out, model = [], root
    for part in loc:
        field = model.model_fields.get(part) if model is not None and isinstance(part, str) else None
        if field is not None:
            out.append(field.alias or part)
            model = _model_of(field.annotation)
        else:
            out.append(part)
            model = model if isinstance(part, int) else None
    return tuple(out)


def _format_error(err: dict, root: Any = PlatformSpec) -> str:
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
    return f"{_path(loc)}: {msg}"


def did_you_mean(name: str, known: Iterable[str], quote: str = "`") -> str:
    """`; did you mean `maxSize`?` for the known name `name` most likely misspells, or nothing (case is
    ignored in the comparison: `maxsize` is `maxSize`). A value is quoted as pydantic quotes values ('),
    a field name in backticks."""
    by_lower = {k.lower(): k for k in known}
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1, cutoff=0.75)
    return f"; did you mean {quote}{by_lower[close[0]]}{quote}?" if close else ""


def _fields_at(loc: tuple, root: Any = PlatformSpec) -> list[str]:
    """The camelCase field names of the model found at `loc` below `root`, for 'unknown field' messages."""
    model: Any = root
    for part in loc:
        if isinstance(part, int):
            continue
        field = next((f for n, f in model.model_fields.items() if (f.alias or n) == part), None)
        if field is None:
            return []
        model = _model_of(field.annotation)
        if model is None:
            return []
    return [f.alias or n for n, f in model.model_fields.items()]


def _model_of(annotation: Any) -> Any:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in getattr(annotation, "__args__", ()):
        found = _model_of(arg)
        if found is not None:
            return found
    return None
