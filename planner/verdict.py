"""The policy verdict on a plan: the CrossGuard rules run against the recorded resources.

Placeholder until the policy pack lands: it finds no violations. The contract for the real one:
take the plan document (JSON-ready, sections included) and the path of a `--policy-pack-config`
file (or None), and return violations as dicts {policy, level: mandatory|advisory, urn, message}.
The CLI exits 1 when any violation is mandatory.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Optional


def evaluate(plan: dict[str, Any], policy_config_path: Optional[Path]) -> list[dict[str, Any]]:
    return []
