"""The CUDA gate: no pool's driver drops below the CUDA minimum of a team held to it (docs/cuda.md).

The pack never reads the stack file: team minimums come from the lock's `teams` section, which
`gpu-platform lock` writes from each team namespace's `gpu-platform.io/min-cuda` annotations (the team's
minCuda and the pools it reaches). The pools' drivers are read as the lifecycle rules read them
(decisions/pinned.py): the GPU Operator's driver on images without one, else the branch the AMI release
carries (decisions/lifecycle.pool_driver). A lock that approves a driver change below a team's minimum is
still refused: approving a node roll does not make the team's images run.
"""
from __future__ import annotations

from typing import Any, Optional
from collections.abc import Iterator, Mapping

from pulumi_policy import PolicyConfigSchema, Severity, StackValidationArgs
from pulumi_policy.proxy import UnknownValueError

from gpu_platform.decisions.cuda_drivers import below_minimums
from gpu_platform.facts import names
from gpu_platform.policy.common import NODE_GROUP, get, stack_policy
from gpu_platform.policy.lifecycle import pins
from gpu_platform.policy.locks import CONFIG_PROPERTIES, LockError
from gpu_platform.policy.replacement import lock_of

Finding = Iterator[tuple[str, Optional[str]]]


def minimum_met(args: StackValidationArgs, config: Mapping[str, Any]) -> Finding:
    urn = next((r.urn for r in args.resources), "")
    try:
        lock = lock_of(config, urn).doc
    except LockError as err:
        yield str(err), None
        return
    teams = (lock or {}).get("teams") or {}
    if not teams:
        return
    try:
        pinned = pins(args)
    except UnknownValueError:
        return  # an AMI release or driver unknown in a preview: the lifecycle rules say so
    urns = _pool_urns(args)
    for pool, text in below_minimums(teams, pinned):
        yield (f"{text}: pin an AMI release (stack file: nodePools[].ami.releaseVersion) or GPU Operator driver "
               "(gpuOperator.driver.version) that runs it, or lower the team's minCuda and regenerate the lock "
               "(docs/cuda.md)"), urns.get(pool)


def _pool_urns(args: StackValidationArgs) -> dict[str, str]:
    """Each GPU node group's URN by the pool label it carries (the name decisions/pinned.py reads)."""
    out = {}
    for r in args.resources:
        if r.resource_type == NODE_GROUP:
            try:
                pool = (get(r.props, "labels") or {}).get(names.POOL_LABEL)
            except UnknownValueError:
                continue
            if pool:
                out[str(pool)] = r.urn
    return out


SCHEMA = PolicyConfigSchema({**CONFIG_PROPERTIES})

POLICIES = [
    stack_policy(
        "cuda-minimum-met",
        "Every pool's driver runs the CUDA minimum of each team the lock holds it to.",
        minimum_met, severity=Severity.HIGH, schema=SCHEMA,
        remediation="Keep the pool on a driver that runs the team's CUDA version, or lower the team's minCuda and "
                    "regenerate the lock with `gpu-platform lock`."),
]
