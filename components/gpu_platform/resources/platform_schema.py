"""The stack file's object as the component package's own object types: GpuPlatform's `platform` argument typed
in every language's SDK, from the pydantic models that validate it (spec/models.py), never a second copy.

The models' JSON schema (by alias: the stack file's camelCase keys) gives each object's keys, their types and
which are required; each key's description is the comment written beside it in the model (when there is one)
and what the model holds it to (allowed values, bounds, pattern, default), so a key added to a model reaches
the schema described. The `platform` value still reaches the component as the stack file's plain object: the
provider passes it through as it is, and the models validate it whole.
"""
from __future__ import annotations

import inspect
import io
import json
import re
import tokenize
from collections.abc import Iterator
from functools import cache
from typing import Any, Optional, get_args

from pydantic import BaseModel

from gpu_platform.spec.models import PlatformSpec

JsonObject = dict[str, Any]
PRIMITIVES = {"string", "integer", "number", "boolean"}
ANY = {"$ref": "pulumi.json#/Any"}


def type_token(package: str, definition: str) -> str:
    """`gpu-platform:index:Platform...`: the stack file's objects, apart from the components' own Args types."""
    name = definition if definition.startswith("Platform") else f"Platform{definition.removesuffix('Spec')}"
    return f"{package}:index:{name}"


def models() -> dict[str, type[BaseModel]]:
    """Every model reachable from PlatformSpec, by class name (the JSON schema's definition names)."""
    found: dict[str, type[BaseModel]] = {}

    def walk(annotation: Any) -> None:
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            if annotation.__name__ not in found:
                found[annotation.__name__] = annotation
                for f in annotation.model_fields.values():
                    walk(f.annotation)
            return
        for arg in get_args(annotation):
            walk(arg)

    walk(PlatformSpec)
    return found


@cache
def _comments(model: type[BaseModel]) -> dict[str, str]:
    """Each field's comment in the model's source: the comment ending its line, or the comment lines just above."""
    lines, _ = inspect.getsourcelines(model)
    text = "".join(lines)
    trailing: dict[int, str] = {}
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            trailing[tok.start[0] - 1] = tok.string.lstrip("#").strip()
    found: dict[str, str] = {}
    for name in model.model_fields:
        at = next((i for i, line in enumerate(lines) if re.match(rf"\s+{name}\s*:", line)), None)
        if at is None:
            continue
        above: list[str] = []
        i = at - 1
        while i >= 0 and lines[i].strip().startswith("#"):
            above.insert(0, lines[i].strip().lstrip("#").strip())
            i -= 1
        own = trailing.get(at) if "#" in lines[at] else None
        found[name] = " ".join(part for part in (" ".join(above), own or "") if part)
    return found


def _rules(fragment: JsonObject) -> Iterator[str]:
    """What the model holds a value to, in words."""
    values = fragment.get("enum") or ([fragment["const"]] if "const" in fragment else None)
    if values:
        yield "One of: " + ", ".join(json.dumps(v) for v in values) + "."
    for key, words in (("minimum", "at least"), ("exclusiveMinimum", "above"), ("maximum", "at most"),
                       ("exclusiveMaximum", "below"), ("minLength", "length at least"),
                       ("maxLength", "length at most"), ("minItems", "items at least"), ("maxItems", "items at most")):
        if key in fragment:
            yield f"{words.capitalize()} {fragment[key]}."
    if "pattern" in fragment:
        yield f"Matches `{fragment['pattern']}`."


def _branches(fragment: JsonObject) -> list[JsonObject]:
    """The alternatives of an optional or union value, null left out."""
    options = fragment.get("anyOf") or fragment.get("oneOf") or [fragment]
    return [o for o in options if o.get("type") != "null"]


def description(model: type[BaseModel], field: str, fragment: JsonObject) -> str:
    """The comment beside the key (or the docstring of the object it holds), then what the model holds it to."""
    info = model.model_fields[field]
    parts = [info.description or _comments(model).get(field, "") or _referenced_doc(fragment)]
    parts += [rule for branch in _branches(fragment) for rule in _rules(branch)]
    if fragment.get("default") is not None:
        parts.append(f"Default: {json.dumps(fragment['default'])}.")
    return " ".join(p for p in parts if p).strip()


def _doc(model: type[BaseModel]) -> str:
    return inspect.cleandoc(model.__doc__) if model.__doc__ and model.__doc__ != BaseModel.__doc__ else ""


def _referenced_doc(fragment: JsonObject) -> str:
    """The docstring of the model a key holds (directly, in a list or in a map), if it has one."""
    text = json.dumps(fragment)
    refs = re.findall(r'"\$ref": "#/\$defs/(\w+)"', text)
    return _doc(models()[refs[0]]) if len(set(refs)) == 1 else ""


def property_type(fragment: JsonObject, package: str) -> JsonObject:
    """A JSON-schema value as a Pulumi schema type: primitives, arrays, maps and references to object types; a
    union of several shapes (a quantity as a number or a string, say) is the schema's `Any`."""
    branches = _branches(fragment)
    if len(branches) != 1:
        kinds = {b.get("type") for b in branches}
        return {"type": kinds.pop()} if len(kinds) == 1 and kinds <= PRIMITIVES else dict(ANY)
    (one,) = branches
    if "$ref" in one:
        return {"$ref": f"#/types/{type_token(package, one['$ref'].rsplit('/', 1)[-1])}"}
    kind = one.get("type") or _const_type(one)
    if kind == "array":
        return {"type": "array", "items": property_type(one.get("items", {}), package)}
    if kind == "object":
        extra = one.get("additionalProperties")
        values = property_type(extra, package) if isinstance(extra, dict) else dict(ANY)
        return {"type": "object", "additionalProperties": values}
    return {"type": kind} if kind in PRIMITIVES else dict(ANY)


def _const_type(fragment: JsonObject) -> Optional[str]:
    values = fragment.get("enum") or ([fragment["const"]] if "const" in fragment else [])
    kinds = {type(v) for v in values}
    return {str: "string", bool: "boolean", int: "integer", float: "number"}.get(kinds.pop()) \
        if len(kinds) == 1 else None


def object_types(package: str) -> dict[str, JsonObject]:
    """Every object of the stack file as a Pulumi object type, keyed by its type token: described by its model's
    docstring, or else by the comment beside the key that holds it."""
    schema = PlatformSpec.model_json_schema(by_alias=True, mode="validation")
    definitions: dict[str, JsonObject] = {**schema.pop("$defs", {}), "PlatformSpec": schema}
    by_name = models()
    types: dict[str, JsonObject] = {}
    held_by: dict[str, str] = {}
    for name, definition in definitions.items():
        model = by_name[name]
        aliases = {f.alias or n: n for n, f in model.model_fields.items()}
        properties = {}
        for key, fragment in definition.get("properties", {}).items():
            properties[key] = {**property_type(fragment, package),
                               "description": description(model, aliases[key], fragment)}
            for ref in set(re.findall(r'"\$ref": "#/\$defs/(\w+)"', json.dumps(fragment))):
                held_by.setdefault(ref, _comments(model).get(aliases[key], ""))
        types[type_token(package, name)] = {"type": "object", "properties": properties,
                                            "required": sorted(definition.get("required", [])),
                                            "description": _doc(model)}
    for name in definitions:
        entry = types[type_token(package, name)]
        entry["description"] = entry["description"] or held_by.get(name, "")
    return types


def platform_property(package: str, description_: str) -> JsonObject:
    """GpuPlatform's `platform` input: the stack file's object type."""
    return {"$ref": f"#/types/{type_token(package, 'PlatformSpec')}", "description": description_}
