"""The disruption gate: a change that evicts GPU pods or rolls nodes is approved through the lock.

The lock (written by `gpu-platform lock`, named by the policy config: policy.locks) records, per pool, the
fingerprint of everything whose change restarts the GPU Operator's operands, evicts GPU pods or replaces
nodes (decisions/disruption.py: driver version and source, MIG layout, sharing config, launch template
content, AMI release and Kubernetes version; for Karpenter pools every NodePool template and EC2NodeClass
field whose change drifts nodes, decisions/karpenter_disruption.py). A head whose pool differs from the lock in an input whose
change evicts GPU pods or rolls nodes is not approved:

- `disruption-approved` (mandatory) reports it in the environments listed (default prod);
- `disruption-advisory` (advisory) reports the same elsewhere, so dev and staging see it too.

Operand restarts and in-place changes never need approval. Replace-forcing inputs and removed pools
belong to the replacement guard (policy.replacement). A value unknown during the preview cannot
be proven unchanged and counts as changed (fails closed). Approving is one reviewed act: regenerate the
lock in the same pull request, so reviewers see the lock diff beside `gpu-platform diff`'s table.
"""
from __future__ import annotations

from typing import Any, Optional
from collections.abc import Iterator, Mapping

from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity, StackValidationArgs

from gpu_platform.decisions import disruption, disruption_model
from gpu_platform.facts import karpenter
from gpu_platform.policy.common import applies_in, environment_properties, plain_or_unknown, stack_environment, stack_of, stack_policy
from gpu_platform.policy.locks import CONFIG_PROPERTIES, LockError
from gpu_platform.policy.replacement import lock_of

READ_TYPES = (disruption.NODE_GROUP, disruption.LAUNCH_TEMPLATE, disruption.HELM_RELEASE, karpenter.NODE_POOL,
              karpenter.NODE_CLASS)
POOL_TYPES = (disruption.NODE_GROUP, karpenter.NODE_POOL)  # the resource each pool is named after
Finding = Iterator[tuple[str, Optional[str]]]


def head_pools(args: StackValidationArgs) -> tuple[dict[str, disruption_model.Pool], dict[str, str]]:
    """The stack's pools as the model reads them, and each pool's node group URN."""
    resources = [r for r in args.resources if r.resource_type in READ_TYPES]
    pools = disruption.pools_of((r.resource_type, r.name, plain_or_unknown(r.props, disruption_model.UNKNOWN))
                                for r in resources)
    urns = {r.name: r.urn for r in resources if r.resource_type in POOL_TYPES}
    return pools, {name: urns.get(pool.node_group, "") for name, pool in pools.items()}


def unapproved(lock: Mapping[str, Any], pools: Mapping[str, disruption_model.Pool]) -> list[disruption_model.Disruption]:
    """Each locked pool whose head evicts GPU pods or rolls nodes against the lock (replace-forcing
    inputs excluded: the replacement guard owns them)."""
    out = []
    for name, entry in sorted((lock.get("pools") or {}).items()):
        head = pools.get(name)
        if head is None:
            continue  # a removed pool: locked-node-groups-present
        found = disruption.classify(disruption.pool_from_lock(name, entry, head), head, locked_only=True)
        causes = tuple(c for c in (found.causes if found else ())
                       if disruption_model.NEEDS_APPROVAL <= c.effect < disruption_model.Effect.REPLACEMENT)
        if causes:
            effect = max(c.effect for c in causes)
            out.append(disruption_model.Disruption(name, effect, causes, head.nodes, head.gpus))
    return out


def message(found: disruption_model.Disruption, stack: str) -> str:
    return (f"pool {found.pool}: {found.effect.label} of {found.nodes} node(s) and {found.gpus} GPU(s) at max size "
            f"is not approved by the lock: {found.cause}. Approve it in the same pull request: "
            f"`gpu-platform lock --stack {stack}` records it, so reviewers see the lock diff beside the "
            "disruption table of `gpu-platform diff` (docs/policies.md)")


def _gate(args: StackValidationArgs, config: Mapping[str, Any], *, strict: bool) -> Finding:
    if applies_in(stack_environment(args, config), config.get("environments", ["prod"])) != strict:
        return
    urn = next((r.urn for r in args.resources), "")
    stack = stack_of(urn) or "<stack>"
    try:
        lock = lock_of(config, urn).doc
    except LockError as err:
        yield str(err), None
        return
    if lock is None:
        return  # no lock, nothing approved or refused (`requireLock` on locked-node-groups-present)
    pools, urns = head_pools(args)
    if "pools" not in lock:
        yield (f"the lock records no pool fingerprints (it predates the disruption gate), so no GPU pod eviction "
               f"or node roll can be approved: regenerate it with `gpu-platform lock --stack {stack}`"), None
        return
    for found in unapproved(lock, pools):
        yield message(found, stack), urns.get(found.pool) or None


def approved(args: StackValidationArgs, config: Mapping[str, Any]) -> Finding:
    yield from _gate(args, config, strict=True)


def advisory(args: StackValidationArgs, config: Mapping[str, Any]) -> Finding:
    yield from _gate(args, config, strict=False)


SCHEMA = PolicyConfigSchema({
    **CONFIG_PROPERTIES,
    **environment_properties("Where an unapproved eviction or node roll is refused (elsewhere: advisory)."),
})

POLICIES = [
    stack_policy(
        "disruption-approved",
        "A change that evicts GPU pods or rolls nodes matches the lock (approved in the same change).",
        approved, severity=Severity.CRITICAL, schema=SCHEMA,
        remediation="Revert the change, or approve it with `gpu-platform lock` in the same pull request."),
    stack_policy(
        "disruption-advisory",
        "Outside the strict environments, a change that evicts GPU pods or rolls nodes is reported.",
        advisory, severity=Severity.LOW, level=EnforcementLevel.ADVISORY, schema=SCHEMA),
]
