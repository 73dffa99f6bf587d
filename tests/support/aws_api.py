"""Checks of what a plan sends to AWS: the provider SDK's input types (the schema `pulumi up` serialises
against) and botocore's service models (the API's own types, enums, lengths and ranges)."""
from __future__ import annotations

import functools
import inspect
import typing
from collections import abc
from typing import Any

import botocore.session
from botocore.validate import ParamValidator
from pulumi import _types


@functools.cache
def service_model(name: str):
    """botocore's model of one AWS service (eks, ec2, fsx, iam, ...), loaded once per test run."""
    return botocore.session.get_session().get_service_model(name)


def model_problems(value, shape, path="") -> list[str]:
    """Enums, lengths and ranges from the model (botocore's own validator checks types and minimums)."""
    problems, meta = [], shape.metadata
    if shape.type_name == "structure":
        for name, member in shape.members.items():
            if isinstance(value, dict) and name in value:
                problems += model_problems(value[name], member, f"{path}.{name}")
    elif shape.type_name == "list":
        problems += [p for i, v in enumerate(value) for p in model_problems(v, shape.member, f"{path}[{i}]")]
    elif shape.type_name == "map":
        for k, v in value.items():
            problems += model_problems(k, shape.key, f"{path} key {k!r}")
            problems += model_problems(v, shape.value, f"{path}[{k}]")
    elif shape.type_name == "string":
        if getattr(shape, "enum", None) and value not in shape.enum:
            problems.append(f"{path}: {value!r} not in {shape.enum}")
        if not meta.get("min", 0) <= len(value) <= meta.get("max", 10**9):
            problems.append(f"{path}: length {len(value)} outside {meta}")
    elif shape.type_name == "integer":
        if not meta.get("min", -10**9) <= value <= meta.get("max", 10**9):
            problems.append(f"{path}: {value} outside {meta}")
    if shape.type_name in ("list", "map") and not meta.get("min", 0) <= len(value) <= meta.get("max", 10**9):
        problems.append(f"{path}: {len(value)} entries outside {meta}")
    return problems


def api_problems(params: dict, shape) -> list[str]:
    """Everything botocore finds wrong with `params` as the input `shape`: its validator's report (types,
    required members, unknown members, minimums) and `model_problems`."""
    report = ParamValidator().validate(params, shape)
    return ([report.generate_report()] if report.has_errors() else []) + model_problems(params, shape)


def args_class(resource_class: type) -> type:
    """The `...Args` input type of a provider resource class (e.g. fsx.LustreFileSystem)."""
    return getattr(inspect.getmodule(resource_class), f"{resource_class.__name__}Args")


def sdk_problems(value: Any, typ: Any, path: str = "") -> list[str]:
    """What does not match the provider SDK's declared input type: unknown or missing properties (wire
    names, as the plan records them), wrong scalar, list or map types, recursively into nested Args."""
    typ = _types.unwrap_type(typ)
    origin = typing.get_origin(typ)
    if _types.is_input_type(typ):
        if not isinstance(value, dict):
            return [f"{path}: {value!r} is not an object ({typ.__name__})"]
        declared = _types.input_type_types(typ)
        params = inspect.signature(typ.__init__).parameters
        wire = _types.input_type_py_to_pulumi_names(typ)
        required = {wire[n] for n, p in params.items() if n in wire and p.default is inspect.Parameter.empty}
        problems = [f"{path}.{k}: not an input of {typ.__name__}" for k in sorted(set(value) - set(declared))]
        problems += [f"{path}.{k}: required by {typ.__name__}" for k in sorted(required - set(value))]
        for key in sorted(set(value) & set(declared)):
            problems += sdk_problems(value[key], declared[key], f"{path}.{key}")
        return problems
    if origin in (abc.Sequence, list):
        if not isinstance(value, list):
            return [f"{path}: {value!r} is not a list"]
        (item,) = typing.get_args(typ)
        return [p for i, v in enumerate(value) for p in sdk_problems(v, item, f"{path}[{i}]")]
    if origin in (abc.Mapping, dict):
        if not isinstance(value, dict):
            return [f"{path}: {value!r} is not a map"]
        _, item = typing.get_args(typ)
        return [p for k, v in value.items() for p in sdk_problems(v, item, f"{path}[{k}]")]
    if typ in (str, int, bool, float):
        ok = isinstance(value, typ) and not (typ is int and isinstance(value, bool))
        return [] if ok or (typ is float and isinstance(value, int)) else [f"{path}: {value!r} is not {typ.__name__}"]
    return []  # Any and JSON-valued inputs: nothing declared to hold the value to
