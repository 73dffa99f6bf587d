"""Which lock the offline verdict holds a plan to: the pack's own resolution (policy.locks), plus the
planner's default beside the stack files.

For each lock-reading policy, in order:
1. `--lock FILE` (the flag beats the config file);
2. the policy config's inline `lock`, or its `lockFile` resolved exactly as the pack resolves it under the
   Pulumi CLI (`{stack}`, relative to the policy pack's folder);
3. `Pulumi.<stack>.lock.json` beside the project's stack files, when it exists.
Step 3 is the planner's alone: under `pulumi preview` the pack only knows what its config names, so a
config that names no lock while the default exists is worth a warning (`unnamed_warning`).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional
from collections.abc import Mapping

from gpu_platform.facts.input_files import absolute, read_json
from gpu_platform.policy.locks import LOCK, LOCK_FILE, lock_file_path

Settings = dict[str, tuple[str, dict[str, Any]]]


def lock_policies(pack: Any) -> list[str]:
    """The policies that read a lock (their schema takes `lockFile`)."""
    return [p.name for p in pack.POLICIES if p.config_schema and LOCK_FILE in p.config_schema.properties]


def hold_to(settings: Mapping[str, tuple[str, dict[str, Any]]], pack: Any, *, stack: str, flag: Optional[Path] = None,
            default: Optional[Path] = None, pack_dir: Optional[Path] = None) -> Settings:
    """`settings` with every lock-reading policy's lock made explicit (absolute `lockFile`, or inline `lock`)."""
    out = dict(settings)
    for name in lock_policies(pack):
        level, props = settings[name]
        props = dict(props)
        if flag is not None:
            props.pop(LOCK, None)
            props[LOCK_FILE] = str(absolute(flag))
        elif props.get(LOCK) is None and isinstance(props.get(LOCK_FILE), str) and props[LOCK_FILE]:
            props[LOCK_FILE] = str(absolute(lock_file_path(props[LOCK_FILE], stack, pack_dir or Path.cwd())))
        elif props.get(LOCK) is None and default is not None and default.is_file():
            props[LOCK_FILE] = str(absolute(default))
        out[name] = (level, props)
    return out


def names_a_lock(given: Mapping[str, Any], pack: Any) -> bool:
    """Whether a policy config file gives any lock-reading policy a `lock` or `lockFile`."""
    entries = [given.get(name) for name in lock_policies(pack)]
    return any(isinstance(e, dict) and (e.get(LOCK) is not None or e.get(LOCK_FILE)) for e in entries)


def unnamed_warning(config_path: Path, default: Path) -> str:
    return (f"warning: policy config {config_path} names no lock (`lock` or `lockFile`), so `pulumi preview` with it "
            f"holds the stack to none; this plan uses {default}. Name it in the config (`gpu-platform lock "
            f"--policy-config {config_path}` writes it inline)")


def write_inline(config_path: Path, lock: dict[str, Any], pack: Any) -> Optional[dict[str, Any]]:
    """Put `lock` inline into every lock-reading policy's entry of the config file (created if missing),
    dropping any `lockFile`; returns the lock the file held before (None: none)."""
    data = read_json(config_path) if config_path.is_file() else {}
    if not isinstance(data, dict):
        raise ValueError(f"{config_path}: not a policy config (a JSON object)")
    previous = None
    for name in lock_policies(pack):
        entry = data.get(name)
        if entry is not None and not isinstance(entry, (str, dict)):
            raise ValueError(f"{config_path}: `{name}` must be an enforcement level or an object")
        entry = {"enforcementLevel": entry} if isinstance(entry, str) else dict(entry or {})
        previous = previous or entry.get(LOCK)
        entry.pop(LOCK_FILE, None)
        entry[LOCK] = lock
        data[name] = entry
    config_path.parent.mkdir(parents=True, exist_ok=True)
    config_path.write_text(json.dumps(data, indent=2) + "\n")
    return previous
