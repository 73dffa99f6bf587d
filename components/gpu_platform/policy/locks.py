"""Where the lock comes from: the policy config, read the same way by the pack and by `gpu-platform plan`.

A lock-reading policy (the replacement guard and the disruption gate) takes one of:
- `lock`: the lock document itself, inline (what `gpu-platform lock --policy-config FILE` writes). It works
  wherever the pack runs, including a pack published to Pulumi Cloud and enforced by a policy group;
- `lockFile`: a path. `{stack}` stands for the stack's name; a relative path is resolved against the
  working directory of the pack's process, which is the pack's own folder: the Pulumi CLI starts a
  Python pack's analyzer there (pulumi/pulumi sdk/go/common/resource/plugin/analyzer_plugin.go,
  NewPolicyAnalyzer: `pwd := policyPackPath`). A published pack runs from its install folder under
  ~/.pulumi/policies, so a relative path only suits a pack kept in the project (`--policy-pack policies`).
Neither: the stack has no lock (`requireLock` on `locked-node-groups-present` refuses that). A lock made
for another stack is refused rather than compared. The pack never looks beside its own installed code.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Optional
from collections.abc import Mapping

from gpu_platform.facts import input_files

LOCK, LOCK_FILE = "lock", "lockFile"
READABLE_VERSIONS = (1, 2)
CONFIG_PROPERTIES = {
    LOCK: {"type": "object",
           "description": "The lock document inline (gpu-platform lock --policy-config FILE writes it); works "
                          "wherever the pack runs, Pulumi Cloud included. Set this or lockFile."},
    LOCK_FILE: {"type": "string",
                "description": "The lock file; {stack} is the stack's name; a relative path is resolved against the "
                               "policy pack's folder (where the Pulumi CLI runs the pack)."},
}


class LockError(ValueError):
    pass


@dataclass(frozen=True)
class LockSource:
    doc: Optional[dict[str, Any]]  # None: no lock
    where: str  # how messages name it ("" when the config names no lock)


def lock_file_path(given: str, stack: str, base: Path) -> Path:
    """`lockFile` as the pack resolves it: `{stack}` replaced, a relative path taken from `base`."""
    path = Path(str(given).replace("{stack}", stack)).expanduser()
    return path if path.is_absolute() else base / path


def resolve(config: Mapping[str, Any], stack: str, base: Optional[Path] = None) -> LockSource:
    """The lock `config` names for `stack`; `base` defaults to the working directory (the pack's folder)."""
    inline, given = config.get(LOCK), config.get(LOCK_FILE)
    if inline is not None and given:
        raise LockError("the policy config sets both `lock` and `lockFile`: keep one")
    if given and not isinstance(given, str):
        raise LockError(f"the policy config's `lockFile` must be a path (a string), not {type(given).__name__}")
    if inline is not None:
        where = "the policy config's `lock`"
        return LockSource(_for_stack(checked(_integral(inline), where), stack, where), where)
    if not given:
        return LockSource(None, "")
    path = lock_file_path(given, stack, base or Path.cwd())
    # A named lock that cannot be read is refused, never taken for "no lock": outside prod that would turn the
    # replacement guard off without a word.
    return LockSource(_for_stack(read_lock(path, f"the policy config's `lockFile` {path}"), stack, str(path)), str(path))


def checked(doc: Any, where: str) -> dict[str, Any]:
    """`doc` if it is a lock this version reads, else LockError naming `where` and what is wrong."""
    if not isinstance(doc, dict) or doc.get("version") not in READABLE_VERSIONS:
        raise LockError(f"{where} is not a node-group lock this version reads (versions "
                        f"{', '.join(map(str, READABLE_VERSIONS))}); regenerate it with `gpu-platform lock`")
    problem = _shape_problem(doc)
    if problem:
        raise LockError(f"{where}: {problem}; regenerate it with `gpu-platform lock`")
    return doc


# Each section of a lock: name -> an object (what a node group, pool or NodePool is locked to).
SECTIONS = {"nodeGroups": "the node group's locked inputs", "pools": "the pool's node group and fingerprint",
            "nodePools": "the NodePool's locked inputs", "teams": "the team's minCuda and the pools held to it"}


def _shape_problem(doc: Mapping[str, Any]) -> Optional[str]:
    if not isinstance(doc.get("stack", ""), str):
        return "`stack` must be the stack's name"
    for section, holds in SECTIONS.items():
        entries = doc.get(section, {} if section != "nodeGroups" else None)
        if not isinstance(entries, dict):
            return f"`{section}` must be an object of {holds} by name"
        for name, entry in entries.items():
            if not isinstance(entry, dict):
                return f"`{section}.{name}` must be an object ({holds}), not {type(entry).__name__}"
            if section == "pools" and not (isinstance(entry.get("nodeGroup", ""), str)
                                           and isinstance(entry.get("fingerprint", {}), dict)):
                return f"`pools.{name}` must hold a `nodeGroup` name and a `fingerprint` object"
            if section == "teams" and not (isinstance(entry.get("minCuda"), str)
                                           and isinstance(entry.get("pools", []), list)):
                return f"`teams.{name}` must hold a `minCuda` version and, optionally, a `pools` list"
    return None


def load_lock(path: Optional[Path]) -> Optional[dict[str, Any]]:
    """The lock document in `path`, or None when there is no such file."""
    if path is None or not path.is_file():
        return None
    return read_lock(path)


def read_lock(path: Path, label: Optional[str] = None) -> dict[str, Any]:
    """The lock document in `path`; LockError when it is missing, unreadable or not a lock."""
    try:
        stamp = path.stat().st_mtime
    except OSError:
        stamp = 0.0
    return _read(str(path), stamp, label or str(path))


@lru_cache(maxsize=16)
def _read(path: str, mtime: float, label: str) -> dict[str, Any]:
    try:
        doc = input_files.read_json(path, label)
    except input_files.InputError as err:
        raise LockError(f"{err}; regenerate it with `gpu-platform lock`") from None
    return checked(doc, label)


def _for_stack(doc: Optional[dict[str, Any]], stack: str, where: str) -> Optional[dict[str, Any]]:
    """A lock written for another stack would hold this one to the wrong values: refused, never compared."""
    locked = doc.get("stack") if doc else None
    if locked and stack and locked != stack:
        raise LockError(f"{where} is the lock of stack {locked!r}, not of stack {stack!r}, so the lock lookup failed "
                        f"and nothing holds stack {stack!r}: plan the change as stack {locked!r} (in its own stack "
                        f"file), or give this stack its own lock (`gpu-platform lock --stack {stack}`), or "
                        "`{stack}` in lockFile")
    return doc


def _integral(value: Any) -> Any:
    """Config values reach the pack as protobuf numbers (floats): whole numbers back to ints, as in a file."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, Mapping):
        return {k: _integral(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_integral(v) for v in value]
    return value
