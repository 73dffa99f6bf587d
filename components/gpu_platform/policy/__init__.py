"""The gpu-platform CrossGuard rules, importable without starting a policy pack.

`POLICIES` is every policy in the order the pack registers them; `policies/__main__.py` only builds the
pack from it, and `gpu-platform plan` evaluates the very same objects offline (planner/verdict.py).
"""
from __future__ import annotations

from pulumi_policy import EnforcementLevel

from gpu_platform.policy import (
    acceptance, cost, cuda, disruption, driver, endpoint, karpenter, lifecycle, logging, metrics, node_groups, pinning,
    queueing, replacement, reservations, shapes, sharing, storage, teams,
)

PACK_NAME = "gpu-platform"
PACK_DESCRIPTION = ("Blocks unsafe GPU platform changes and node-pool replacements: pinned drivers, chart and add-on "
                    "versions, tainted and protected pools, reserved capacity as EKS accepts it, valid MIG, quotas, "
                    "budget, support windows, and a node-group lock that also approves GPU pod evictions and node "
                    "rolls.")
# Each policy sets its own level; this is the pack's default for any that do not.
ENFORCEMENT_LEVEL = EnforcementLevel.MANDATORY

POLICIES = [
    *driver.POLICIES,
    *node_groups.POLICIES,
    *acceptance.POLICIES,
    *reservations.POLICIES,
    *karpenter.POLICIES,
    *sharing.POLICIES,
    *teams.POLICIES,
    *queueing.POLICIES,
    *storage.POLICIES,
    *endpoint.POLICIES,
    *pinning.POLICIES,
    *cost.POLICIES,
    *lifecycle.POLICIES,
    *replacement.POLICIES,
    *disruption.POLICIES,
    *cuda.POLICIES,
    *shapes.POLICIES,
    *logging.POLICIES,
    *metrics.POLICIES,
]

BY_NAME = {p.name: p for p in POLICIES}
if len(BY_NAME) != len(POLICIES):  # the engine keys config and results by name
    raise RuntimeError("duplicate policy names in gpu_platform.policy")
