"""Every number of every example stack, written as text, is refused naming its field: the stack file is strict
about numbers everywhere, not only where a field happens to be checked (pydantic's lax mode reads "4" as 4)."""
from __future__ import annotations

import re
from datetime import date
from typing import Any

import pytest

from gpu_platform.spec.parse import _path
from tests.support.stacks import STACKS, spec_problems, stack_platform

TODAY = date(2026, 11, 23)
EXAMPLES = sorted(p.name.split(".")[1] for p in STACKS.glob("Pulumi.*.yaml"))


def _numbers(node: Any, at: tuple = ()) -> list[tuple]:
    """Paths of every int and float (not bool) below `node`."""
    if isinstance(node, dict):
        return [p for key, child in node.items() for p in _numbers(child, (*at, key))]
    if isinstance(node, list):
        return [p for i, child in enumerate(node) for p in _numbers(child, (*at, i))]
    return [at] if isinstance(node, (int, float)) and not isinstance(node, bool) else []


NUMBERS = [(stack, path) for stack in EXAMPLES for path in _numbers(stack_platform(stack))]


def test_the_examples_hold_numbers_of_many_fields():
    assert len({path[-1] for _, path in NUMBERS if isinstance(path[-1], str)}) > 15


@pytest.mark.parametrize("stack, path", NUMBERS, ids=[f"{s}:{_path(p)}" for s, p in NUMBERS])
def test_a_number_written_as_text_is_refused_naming_its_field(stack, path):
    platform = stack_platform(stack)
    parent = platform
    for key in path[:-1]:
        parent = parent[key]
    text = str(parent[path[-1]])
    parent[path[-1]] = text
    found = spec_problems(platform, TODAY)
    field = _path(path)
    mapping = _path(path[:-1])  # a map of numbers (sharing.layout, quota.migSlices) reports the map, naming the key
    assert len(found) == 1 and re.match(rf"({re.escape(field)}|{re.escape(mapping)}): .*must be a number, not the "
                                        rf"text {re.escape(repr(text))}", found[0]), found
