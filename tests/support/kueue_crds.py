"""Kueue objects against the CRDs of the pinned release: the openAPIV3Schema (jsonschema, strict on unknown
fields) and the CEL rules (`x-kubernetes-validations`, evaluated with cel-python as the API server would
on create: after the schema's defaults are applied, transition rules on `oldSelf` skipped).

The schema side (the upstream CRDs, strict on unknown fields) is tests/support/crd_schemas.py, shared with Karpenter's.
"""
from __future__ import annotations

import copy
from functools import cache
from typing import Any

import celpy
from celpy import celtypes

from gpu_platform.decisions.queueing import quantity as parse_quantity
from tests.support.crd_schemas import schema_of

# --- defaults and CEL ---

def with_defaults(schema: dict, value: Any) -> Any:
    """`value` with the schema's `default`s filled in for absent properties, as the API server does."""
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        out = {k: with_defaults(props.get(k) or schema.get("additionalProperties") or {}, v) for k, v in value.items()}
        for key, sub in props.items():
            if key not in out and "default" in sub:
                out[key] = with_defaults(sub, copy.deepcopy(sub["default"]))
        return out
    if isinstance(value, list):
        return [with_defaults(schema.get("items") or {}, v) for v in value]
    return value


def _rules(schema: dict, value: Any, path: str) -> list[tuple[str, dict, Any]]:
    """(path, rule, the value it applies to) for every CEL rule reached by `value`."""
    found = [(path or "(root)", rule, value) for rule in schema.get("x-kubernetes-validations") or []]
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties") if isinstance(schema.get("additionalProperties"), dict) else None
        for key, sub_value in value.items():
            sub = props.get(key) or extra
            if sub:
                found += _rules(sub, sub_value, f"{path}.{key}" if path else key)
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            found += _rules(schema["items"], item, f"{path}[{i}]")
    return found


class Quantity(celtypes.StringType):
    """Kubernetes' CEL quantity type, as far as the platform's expressions use it."""


# Kubernetes' CEL quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go): the functions used here.
KUBERNETES_FUNCTIONS = {
    "quantity": lambda text: Quantity(str(text)),
    "isGreaterThan": lambda a, b: celtypes.BoolType(parse_quantity(str(a)) > parse_quantity(str(b))),
    # CEL's string extension (cel-go ext/strings, which the API server enables): `split` without a limit.
    "split": lambda text, sep: celtypes.ListType([celtypes.StringType(p) for p in str(text).split(str(sep))]),
}


@cache
def _program(expression: str):
    env = celpy.Environment()
    return env.program(env.compile(expression), functions=KUBERNETES_FUNCTIONS)


def cel_true(expression: str, **variables: Any) -> bool:
    """Evaluate a CEL expression over JSON-like variables; raises on an evaluation error."""
    result = _program(expression).evaluate({k: celpy.json_to_cel(v) for k, v in variables.items()})
    if isinstance(result, celpy.CELEvalError):
        raise AssertionError(f"{expression}: {result}")
    return bool(result)


def cel_problems(folder: str, obj: dict) -> list[str]:
    """Every CEL rule of the object's CRD that the object (defaults applied) breaks, on create."""
    schema = schema_of(folder, obj)
    value = with_defaults(schema, obj)
    problems = []
    for path, rule, node in _rules(schema, value, ""):
        if "oldSelf" in rule["rule"]:
            continue  # transition rules only run on update
        if not cel_true(rule["rule"], self=node):
            problems.append(f"{path}: {rule.get('message') or rule['rule']}")
    return problems


def rule_count(folder: str, obj: dict) -> int:
    """How many create-time CEL rules the object reaches (a test can tell the checker did look)."""
    schema = schema_of(folder, obj)
    return sum("oldSelf" not in r["rule"] for _, r, _ in _rules(schema, with_defaults(schema, obj), ""))

