"""Turn the protobuf values the SDK sends to the engine into plain, JSON-ready Python.

The SDK's own `rpc.deserialize_properties` rebuilds resource objects and Output values and drops
nulls; a plan wants what was on the wire: resource references as URNs, secrets marked, numbers that
are whole as ints (protobuf only has doubles, and `replicas: 4.0` is not a valid Kubernetes manifest).
"""
from __future__ import annotations

from typing import Any

from google.protobuf import struct_pb2
from pulumi.runtime import rpc

SECRET_MARK = "[secret]"
UNKNOWN_MARK = "[unknown]"

_SIG = rpc._special_sig_key  # the SDK's wire signatures; private names, stable since SDK v1
_SECRET = rpc._special_secret_sig
_RESOURCE = rpc._special_resource_sig
_OUTPUT = rpc._special_output_value_sig
_ASSET = rpc._special_asset_sig
_ARCHIVE = rpc._special_archive_sig


class Secret:
    """A value the program marked secret. Plans show it as SECRET_MARK; the value stays in memory."""

    __slots__ = ("value",)

    def __init__(self, value: Any):
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other.value == self.value

    def __repr__(self) -> str:
        return "Secret(...)"


def struct_to_plain(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A Struct as a dict with the markers above. Keys are sorted: a protobuf map has no order, and
    plans must be byte-identical from run to run."""
    return {key: _value(value) for key, value in sorted(struct.fields.items())}


def _value(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "string_value":
        text = value.string_value
        return UNKNOWN_MARK if text == rpc.UNKNOWN else text
    if kind == "number_value":
        number = value.number_value
        return int(number) if number.is_integer() else number
    if kind == "bool_value":
        return value.bool_value
    if kind == "struct_value":
        return _struct(value.struct_value)
    if kind == "list_value":
        return [_value(item) for item in value.list_value.values]
    return None


def _struct(struct: struct_pb2.Struct) -> Any:
    fields = struct.fields
    signature = fields.get(_SIG)
    if signature is None:
        return {key: _value(item) for key, item in sorted(fields.items())}
    sig = signature.string_value
    if sig == _SECRET:
        return Secret(_value(fields["value"]))
    if sig == _RESOURCE:
        return fields["urn"].string_value
    if sig == _OUTPUT:
        inner = _value(fields["value"]) if "value" in fields else UNKNOWN_MARK
        return Secret(inner) if fields.get("secret") and fields["secret"].bool_value else inner
    if sig in (_ASSET, _ARCHIVE):
        kind = "asset" if sig == _ASSET else "archive"
        return {kind: {key: _value(item) for key, item in sorted(fields.items()) if key != _SIG}}
    return {key: _value(item) for key, item in sorted(fields.items())}


def for_mocks(value: Any) -> Any:
    """Secrets in the SDK's wrapped form, which mocks echo back and the SDK reads as secret again."""
    if isinstance(value, Secret):
        return {_SIG: _SECRET, "value": for_mocks(value.value)}
    if isinstance(value, dict):
        return {key: for_mocks(item) for key, item in value.items()}
    if isinstance(value, list):
        return [for_mocks(item) for item in value]
    return value


def to_struct(value: dict[str, Any]) -> struct_pb2.Struct:
    """Plain data (as the mocks return it) as the Struct the SDK expects from the engine."""
    struct = struct_pb2.Struct()
    struct.update(value)
    return struct


def to_json_ready(value: Any, keep_secret_keys: bool = False) -> Any:
    """Replace Secret values with SECRET_MARK (a new structure; the input is not changed). With
    `keep_secret_keys`, a secret mapping keeps its keys and masks each value, so a manifest holding one
    (a Secret's `stringData`) still has the shape its schema asks for."""
    if isinstance(value, Secret):
        inner = reveal(value.value)
        if keep_secret_keys and isinstance(inner, dict):
            return {key: SECRET_MARK for key in inner}
        return SECRET_MARK
    if isinstance(value, dict):
        return {key: to_json_ready(item, keep_secret_keys) for key, item in value.items()}
    if isinstance(value, list):
        return [to_json_ready(item, keep_secret_keys) for item in value]
    return value


def reveal(value: Any) -> Any:
    """Replace Secret values with what they hold, for consumers that need the real value."""
    if isinstance(value, Secret):
        return reveal(value.value)
    if isinstance(value, dict):
        return {key: reveal(item) for key, item in value.items()}
    if isinstance(value, list):
        return [reveal(item) for item in value]
    return value
