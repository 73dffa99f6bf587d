"""Helm values as key paths: what a release passes, compared with what the pinned chart's values.yaml declares."""
from __future__ import annotations


def key_paths(values: dict, prefix: str = "") -> set[str]:
    """Every key of `values` as a dotted path (`serviceMonitor.enabled`), maps walked, lists as leaves."""
    out = set()
    for key, value in values.items():
        out.add(prefix + key)
        if isinstance(value, dict):
            out |= key_paths(value, f"{prefix}{key}.")
    return out
