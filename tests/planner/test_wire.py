"""Protobuf values from the SDK into plain, JSON-ready Python."""
from __future__ import annotations

from pulumi.runtime import rpc

from gpu_platform.planner.wire import SECRET_MARK, Secret, for_mocks, reveal, struct_to_plain, to_json_ready, to_struct


def test_whole_numbers_become_ints_and_fractions_stay_floats():
    plain = struct_to_plain(to_struct({"replicas": 4.0, "ratio": 0.5}))
    assert plain == {"replicas": 4, "ratio": 0.5} and isinstance(plain["replicas"], int)


def test_nested_values_and_nulls_survive():
    data = {"a": [1, {"b": None, "c": True}], "d": {"e": "x"}}
    assert struct_to_plain(to_struct(data)) == data


def test_keys_are_sorted():
    assert list(struct_to_plain(to_struct({"b": 1, "a": 2, "c": 3}))) == ["a", "b", "c"]


def test_secret_becomes_a_marker_holding_the_value():
    wire = to_struct({"token": {rpc._special_sig_key: rpc._special_secret_sig, "value": "s3cr3t"}})
    assert struct_to_plain(wire) == {"token": Secret("s3cr3t")}


def test_resource_reference_becomes_its_urn():
    ref = {rpc._special_sig_key: rpc._special_resource_sig, "urn": "urn:pulumi:s::p::t:m:T::n", "id": "i-1"}
    assert struct_to_plain(to_struct({"r": ref})) == {"r": "urn:pulumi:s::p::t:m:T::n"}


def test_unknown_becomes_a_marker():
    assert struct_to_plain(to_struct({"x": rpc.UNKNOWN})) == {"x": "[unknown]"}


def test_json_ready_hides_secrets_everywhere():
    assert to_json_ready({"a": [Secret("x")], "b": Secret({"c": 1})}) == {"a": [SECRET_MARK], "b": SECRET_MARK}


def test_reveal_unwraps_secrets():
    assert reveal({"a": [Secret("x")]}) == {"a": ["x"]}


def test_mocks_get_secrets_in_the_sdk_wrapped_form():
    assert rpc.is_rpc_secret(for_mocks({"a": Secret("x")})["a"])
