"""The base of every stack-file model: camelCase field names, unknown fields refused, and strict scalars.

Strict where a wrong type is surely a mistake, lenient where it is only a spelling:
- a boolean is never a number: `minSize: false` or `replicas: true` is refused (pydantic would read 0 and 1);
- a boolean field takes only true or false, not `"yes"`, `"on"`, `1` or `0`;
- numbers are finite (no infinity or NaN);
- a whole number written as text (`maxSize: "4"`) is still read as 4, and a quantity may be written as a
  number (`cpu: 32`, `memory: 128e9`): both are how the same value is spelled in YAML and by Kubernetes.
"""
from __future__ import annotations

import types
import typing
from typing import Any, Optional, Union

from pydantic import BaseModel, ConfigDict, ValidationInfo, field_validator
from pydantic.alias_generators import to_camel


class StrictModel(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _strict_scalars(cls, value: Any, info: ValidationInfo) -> Any:
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


def scalar_problem(annotation: Any, value: Any) -> Optional[str]:
    """What is wrong with `value` for a field of `annotation` under the strict rules above (None: nothing)."""
    if typing.get_origin(annotation) is dict and isinstance(value, dict):
        item = typing.get_args(annotation)[1] if typing.get_args(annotation) else Any
        return next((f"[{key!r}] {p}" for key, v in value.items() if (p := scalar_problem(item, v))), None)
    admitted = _scalars(annotation)
    if isinstance(value, bool):
        if admitted & {int, float} and bool not in admitted:
            return f"must be a number, not {str(value).lower()}"
    elif admitted == {bool} and value is not None:
        return f"must be true or false, not {value!r}"
    return None
