"""What a component does with its caller's ResourceOptions (resources/options.py)."""
from __future__ import annotations

import asyncio

import pulumi
import pytest

from gpu_platform.resources.options import child


def resource() -> pulumi.CustomResource:
    """A resource object for option plumbing only (never registered)."""
    return object.__new__(pulumi.CustomResource)


PARENT, MINE, THEIRS, MORE = resource(), resource(), resource(), resource()


@pytest.mark.parametrize(("given", "expected"), [
    (None, [MINE]),
    ([], [MINE]),
    (THEIRS, [THEIRS, MINE]),
    ([THEIRS, MORE], [THEIRS, MORE, MINE]),
])
def test_a_child_waits_for_the_callers_depends_on_then_its_own(given, expected):
    opts = child(PARENT, pulumi.ResourceOptions(depends_on=given), depends_on=[MINE], protect=True)
    assert opts.depends_on == expected and opts.parent is PARENT and opts.protect is True


def test_without_a_caller_or_own_dependencies_a_child_waits_for_nothing():
    assert child(PARENT, None).depends_on is None
    assert child(PARENT, pulumi.ResourceOptions()).depends_on is None


def test_depends_on_given_as_an_output_is_left_to_pulumi_s_merge():
    # Resolved only by the engine: tests/resources/test_components_alone.py holds every child back on it.
    async def options() -> pulumi.ResourceOptions:  # an Output is made on an event loop, as in a program
        later = pulumi.Output.from_input([THEIRS])
        return child(PARENT, pulumi.ResourceOptions(depends_on=later), depends_on=[MINE])

    loop = asyncio.new_event_loop()
    try:
        opts = loop.run_until_complete(options())
    finally:
        loop.close()
    assert isinstance(opts.depends_on, pulumi.Output) and opts.parent is PARENT
