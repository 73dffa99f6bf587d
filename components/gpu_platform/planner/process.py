"""A process that ends with the command it runs (`gpu-platform plan` on the command line).

The objects a run builds (the SDK's Outputs, tasks and futures per property, the plan) live until the
process exits. At exit the interpreter runs a full cyclic collection over all of them, even with the
collector disabled: on a dev stack that costs about a third of the whole command's CPU time and frees
nothing the operating system would not take back anyway. Freezing every object just before it moves
them out of that collection's reach; everything else about exiting (atexit handlers, flushing and closing
files, module teardown) happens as before.
"""
from __future__ import annotations

import atexit
import gc

_registered = False


def ends_with_command() -> None:
    """No cyclic collection for the rest of this process, nor at its exit (call it once the process is
    known to end with the command; calling it again changes nothing)."""
    global _registered
    gc.disable()
    if not _registered:
        atexit.register(gc.freeze)  # atexit handlers run before the interpreter's final collections
        _registered = True
