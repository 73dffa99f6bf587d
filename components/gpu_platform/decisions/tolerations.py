"""Taints and tolerations as Kubernetes matches them: the toleration a taint needs, and whether a list of
tolerations already covers a taint (used for the operator's, the EFA plugin's and the repair agent's pods)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any
from collections.abc import Mapping, Sequence

from gpu_platform.facts import names

if TYPE_CHECKING:
    from gpu_platform.spec.models import TaintSpec


def toleration(taint: "TaintSpec") -> dict[str, str]:
    """The toleration a pod needs to run on nodes with this taint."""
    if taint.value:
        return {"key": taint.key, "operator": "Equal", "value": taint.value, "effect": taint.effect}
    return {"key": taint.key, "operator": "Exists", "effect": taint.effect}


def startup_toleration() -> dict[str, str]:
    """The acceptance gate's startup taint: every agent a GPU node needs before its checks pass tolerates it,
    whether or not its pool is gated (turning a gate on then rolls no agent)."""
    return {"key": names.ACCEPTANCE_TAINT_KEY, "operator": "Exists", "effect": names.ACCEPTANCE_TAINT_EFFECT}


def tolerates(tolerations: Sequence[Mapping[str, Any]], key: str, value: str, effect: str) -> bool:
    """Kubernetes toleration matching (Kubernetes effect spelling): the effect, or none for any effect; then
    `Exists` on the key, or on no key for every key, or `Equal` (the default operator) on key and value."""
    for t in tolerations:
        if t.get("effect") not in (None, "", effect):
            continue
        op = t.get("operator") or "Equal"
        if op == "Exists" and t.get("key") in (None, "", key):
            return True
        if op == "Equal" and t.get("key") == key and (t.get("value") or "") == (value or ""):
            return True
    return False
