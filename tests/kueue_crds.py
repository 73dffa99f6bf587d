"""Kueue objects against the CRDs of the pinned release: the openAPIV3Schema (jsonschema, strict on unknown
fields) and the CEL rules (`x-kubernetes-validations`, evaluated with cel-python as the API server would
on create: after the schema's defaults are applied, transition rules on `oldSelf` skipped).

The CRDs are the upstream files in components/upstream/crds/<release>/ (see SOURCE.md there). A structural
schema lets the API server prune unknown fields silently; here every object schema that lists properties
and neither allows more (`additionalProperties`) nor keeps unknown fields (`x-kubernetes-preserve-unknown-fields`)
gets `additionalProperties: false`, so a misspelt field fails instead of vanishing.
"""
from __future__ import annotations

import copy
from functools import lru_cache
from pathlib import Path
from typing import Any

import celpy
import jsonschema
import yaml
from celpy import celtypes

from components.queueing import quantity as parse_quantity

CRDS = Path(__file__).resolve().parents[1] / "components" / "upstream" / "crds"


def strict(schema: Any) -> Any:
    """A copy of `schema` refusing properties it does not declare (where the schema does not allow them)."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: strict(v) for k, v in schema.items()}
    if ("properties" in schema and "additionalProperties" not in schema
            and not schema.get("x-kubernetes-preserve-unknown-fields")):
        out["additionalProperties"] = False
    return out


@lru_cache(maxsize=None)
def crd_schemas(folder: str) -> dict[tuple[str, str], dict]:
    """(apiVersion, kind) -> the served version's openAPIV3Schema, for every CRD in the folder."""
    out = {}
    for path in sorted((CRDS / folder).glob("*.yaml")):
        crd = yaml.safe_load(path.read_text())
        group, kind = crd["spec"]["group"], crd["spec"]["names"]["kind"]
        for version in crd["spec"]["versions"]:
            if version.get("served"):
                out[(f"{group}/{version['name']}", kind)] = version["schema"]["openAPIV3Schema"]
    return out


def schema_of(folder: str, obj: dict) -> dict:
    return crd_schemas(folder)[(obj["apiVersion"], obj["kind"])]


@lru_cache(maxsize=None)
def _validator(folder: str, api_version: str, kind: str) -> jsonschema.protocols.Validator:
    return jsonschema.Draft202012Validator(strict(copy.deepcopy(crd_schemas(folder)[(api_version, kind)])))


def schema_problems(folder: str, obj: dict) -> list[str]:
    """`path: message` for every way `obj` breaks its CRD's schema (empty when it matches)."""
    v = _validator(folder, obj["apiVersion"], obj["kind"])
    return [f"{'.'.join(map(str, e.absolute_path)) or '(root)'}: {e.message}"
            for e in sorted(v.iter_errors(obj), key=lambda e: list(map(str, e.absolute_path)))]


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
}


@lru_cache(maxsize=None)
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

