"""Taints and tolerations as Kubernetes matches them: the toleration a taint needs, and whether a list of
tolerations already covers a taint (used for the operator's, the EFA plugin's and the repair agent's pods)."""
from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpu_platform.spec.models import TaintSpec


def toleration(taint: "TaintSpec") -> dict:
    """The toleration a pod needs to run on nodes with this taint."""
    if taint.value:
        return {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect}
    return {"key": taint.key, "operator": "Exists", "effect": taint.effect}


def tolerates(tolerations: list[dict], key: str, value: str, effect: str) -> bool:
    """Kubernetes toleration matching: key (or none with Exists), effect (or any), Exists or equal value."""
    for t in tolerations:
        exists = t.get("operator", "Equal") == "Exists"
        if t.get("key", "") not in ("", key) or (not t.get("key") and not exists):
            continue
        if t.get("effect") not in (None, "", effect):
            continue
        if exists or t.get("value", "") == value:
            return True
    return False
