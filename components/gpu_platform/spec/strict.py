"""The base of every stack-file model: camelCase field names, unknown fields refused, and strict scalars.

Strict where a wrong type is surely a mistake, lenient where it is only a spelling:
- a boolean is never a number: `minSize: false` or `replicas: true` is refused (pydantic would read 0 and 1);
- a boolean field takes only true or false, not `"yes"`, `"on"`, `1` or `0`;
- numbers are finite (no infinity or NaN);
- a number field takes a number, not text: `maxSize: "4"` is refused (pydantic's lax mode would read 4, so a
  quoted value would pass here while a typed reader, the component's Args or the pack, sees a string);
- a quantity may be written as a number (`cpu: 32`, `memory: 128e9`): Kubernetes spells quantities both ways.
"""
from __future__ import annotations

import types
import typing
from typing import Any, Optional, Union

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel


class StrictModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", allow_inf_nan=False,
                              defer_build=True)

    @field_validator("*", mode="before")
    @classmethod
    def _strict_scalars(cls, value: Any, info: ValidationInfo) -> Any:
        assert info.field_name is not None  # a field validator is always given its field's name
        problem = scalar_problem(cls.model_fields[info.field_name].annotation, value)
        if problem:
            raise ValueError(problem)
        return value


def _scalars(annotation: Any) -> set[type]:
    """The scalar types (bool, int, float, str) an annotation admits, through Optional, Union and Annotated."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _scalars(typing.get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        return set().union(*(_scalars(a) for a in typing.get_args(annotation)))
    if origin is typing.Literal:
        return {type(a) for a in typing.get_args(annotation)}
    return {annotation} & {bool, int, float, str}


def _mapping(annotation: Any) -> Any:
    """The dict type an annotation admits (`dict[str, int]`, also through Optional), or None."""
    if typing.get_origin(annotation) is dict:
        return annotation
    if typing.get_origin(annotation) in (Union, types.UnionType):
        return next((m for a in typing.get_args(annotation) if (m := _mapping(a)) is not None), None)
    return None


def scalar_problem(annotation: Any, value: Any) -> Optional[str]:
    """What is wrong with `value` for a field of `annotation` under the strict rules above (None: nothing)."""
    mapping = _mapping(annotation)
    if mapping is not None and isinstance(value, dict):
        item = typing.get_args(mapping)[1] if typing.get_args(mapping) else Any
        return next((f"[{key!r}] {p}" for key, v in value.items() if (p := scalar_problem(item, v))), None)
    admitted = _scalars(annotation)
    numbers_only = bool(admitted & {int, float}) and not admitted & {bool, str}
    if isinstance(value, bool):
        if admitted & {int, float} and bool not in admitted:
            return f"must be a number, not {str(value).lower()}"
    elif isinstance(value, str) and numbers_only:
        return f"must be a number, not the text {value[:40]!r} (write it without quotes)"
    elif admitted == {bool} and value is not None:
        return f"must be true or false, not {value!r}"
    return None
