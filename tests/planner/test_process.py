"""A process that ends with the command collects nothing cyclically, during the run or at exit."""
from __future__ import annotations

import os
import subprocess
import sys

from tests.support.stacks import ROOT

# Registered first, so it runs after every handler registered later (atexit runs them last in, first out),
# just before the interpreter's final collections: it prints what those collections would still scan.
PROBE = """
import atexit, gc
atexit.register(lambda: print(gc.isenabled(), gc.get_freeze_count() > 0, len(gc.get_objects())))
{call}
"""


def _at_exit(call: str) -> list[str]:
    done = subprocess.run([sys.executable, "-c", PROBE.format(call=call)], cwd=ROOT, capture_output=True, text=True,
                          check=True, env={**os.environ, "PYTHONPATH": str(ROOT / "components")})
    return done.stdout.split()


def test_a_process_ending_with_the_command_leaves_its_objects_out_of_the_exit_collection():
    enabled, frozen, scanned = _at_exit("from gpu_platform.planner.process import ends_with_command\n"
                                        "ends_with_command(); ends_with_command()")
    assert (enabled, frozen, scanned) == ("False", "True", "0")


def test_an_ordinary_process_is_collected_as_usual():
    enabled, frozen, scanned = _at_exit("import gpu_platform.planner.process")
    assert (enabled, frozen) == ("True", "False") and int(scanned) > 0
