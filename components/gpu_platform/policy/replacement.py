"""The replacement guard: locked node groups keep every input whose change would replace them.

Policies never see the old state or the step (create, update, replace), so the guard compares against a
lock that `gpu-platform lock` writes from a plan (committed beside the stack file as
`stacks/Pulumi.<stack>.lock.json`, and handed to the pack through its config: policy.locks):

    {"version": 2, "stack": "prod",
     "nodeGroups": {"<logical name>": {"amiType": ..., "instanceTypes": [...], ...}},
     "pools": {"<pool>": {"nodeGroup": "<logical name>", "fingerprint": {...}}},
     "nodePools": {"<logical name>": {"metadata.name": "<NodePool name>"}}}

(`pools` is what the disruption gate in policy.disruption holds each pool to; version-1 locks,
without it, are still read here. `nodePools`, present when the stack has Karpenter pools, holds each
Karpenter NodePool the way `nodeGroups` holds node groups: renamed or deleted, Karpenter drains and
terminates every node it launched for it.)

- `node-group-replacement-guard` (resource): a locked node group whose replace-forcing input differs from
  the lock fails; an input unknown during preview (its source resource is being created or replaced)
  fails closed, because nothing can prove it unchanged.
- `locked-node-groups-present` (stack): a locked node group missing from the stack is about to be
  deleted (or renamed without an alias, which is a replacement).
Changing a replace-forcing input on purpose is a two-step, reviewed act: regenerate the lock
(`gpu-platform lock --stack <stack>`) and commit it with the change.
"""
from __future__ import annotations

import json
from typing import Any, Optional
from collections.abc import Iterator, Mapping

from pulumi_policy import PolicyConfigSchema, ResourceValidationArgs, Severity, StackValidationArgs
from pulumi_policy.proxy import UnknownValueError

from gpu_platform.facts import catalog
from gpu_platform.policy.common import NODE_GROUP, fail_closed_message, get, of_type, resource_policy, stack_of, stack_policy
from gpu_platform.policy.locks import CONFIG_PROPERTIES, LockError, LockSource, resolve

LOCK_VERSION = 2
REPLACE_INPUTS = catalog.REPLACE_FORCING_INPUTS[NODE_GROUP]
# Inputs that carry another resource's id or ARN: an offline plan only has stand-ins for them, so the
# lock does not pin their values. The guard still fails closed when one is unknown during a preview.
REFERENCE_INPUTS = ("launchTemplate.id", "nodeRoleArn", "subnetIds")
LOCKED_INPUTS = tuple(i for i in REPLACE_INPUTS if i not in REFERENCE_INPUTS)
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_POOL_INPUTS = catalog.REPLACE_FORCING_INPUTS[NODE_POOL]
# Lock section, replace-forcing inputs and how messages name the resource, per guarded type.
SECTIONS = {NODE_GROUP: ("nodeGroups", REPLACE_INPUTS, "node group"), NODE_POOL: ("nodePools", NODE_POOL_INPUTS, "NodePool")}


def lock_of(config: Mapping[str, Any], urn: str) -> LockSource:
    """The lock the policy config names for the stack `urn` belongs to (policy.locks)."""
    return resolve(config, stack_of(urn))


def locked_values(props: Any) -> dict[str, Any]:
    """The lockable replace-forcing inputs of a node group (raises UnknownValueError if one is unknown)."""
    return {name: get(props, name) for name in LOCKED_INPUTS}


def new_lock(stack: str, node_groups: Mapping[str, Any], pools: Optional[Mapping[str, Any]] = None,
             node_pools: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
    """A lock document from node group (and Karpenter NodePool) props by logical name, and each pool's
    disruption fingerprint."""
    doc = {"version": LOCK_VERSION, "stack": stack,
           "nodeGroups": {name: locked_values(props) for name, props in sorted(node_groups.items())}}
    if pools is not None:
        doc["pools"] = {name: pools[name] for name in sorted(pools)}
    if node_pools:
        doc["nodePools"] = {name: {i: get(props, i) for i in NODE_POOL_INPUTS} for name, props in sorted(node_pools.items())}
    return doc


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def guard(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    try:
        lock = lock_of(config, args.urn).doc
    except LockError as err:
        yield str(err)
        return
    section, inputs, what = SECTIONS[args.resource_type]
    locked = (lock or {}).get(section, {}).get(args.name)
    if locked is None:
        return
    where = f"locked {what} {args.name!r}"
    for name in inputs:
        try:
            value = get(args.props, name)
        except UnknownValueError as err:
            yield f"{where}: {fail_closed_message(err)}"
            continue
        if name in locked and value != locked[name]:
            yield (f"{where}: {name} would change from {_show(locked[name])} to {_show(value)}, which REPLACES the "
                   f"{what} (every node drained and recreated): revert it, or make the replacement deliberate by "
                   f"regenerating the lock (`gpu-platform lock --stack {stack_of(args.urn) or '<stack>'}`) in the same "
                   "reviewed change (docs/policies.md)")


def locked_groups_present(args: StackValidationArgs, config: Mapping[str, Any]) -> Iterator[tuple[str, Optional[str]]]:
    groups = of_type(args, NODE_GROUP)
    urn = next((r.urn for r in args.resources), "")
    try:
        source = lock_of(config, urn)
    except LockError as err:
        yield str(err), None
        return
    lock = source.doc
    if lock is None:
        if config.get("requireLock"):
            stack = stack_of(urn) or "<stack>"
            where = f"at {source.where}" if source.where else "in the policy config (neither `lock` nor `lockFile` is set)"
            yield (f"no node-group lock {where}: write one with `gpu-platform lock --stack {stack}` (add "
                   "`--policy-config FILE` to put it in the pack's config) so replacements of node groups are refused",
                   None)
        return
    declared = {ng.name for ng in groups}
    for name in sorted(set(lock["nodeGroups"]) - declared):
        yield (f"locked node group {name!r} is no longer declared: this update would DELETE it (a renamed pool or "
               "a moved component without `aliases` is a delete plus a create); restore it, add an alias, or remove it "
               "from the lock deliberately (`gpu-platform lock`)", None)
    node_pools = {r.name for r in of_type(args, NODE_POOL)}
    for name in sorted(set(lock.get("nodePools") or {}) - node_pools):
        yield (f"locked NodePool {name!r} is no longer declared: this update would DELETE it and Karpenter would drain "
               "and terminate every node it launched; restore the pool, add an alias, or remove it from the lock "
               "deliberately (`gpu-platform lock`)", None)


LOCK_SCHEMA = PolicyConfigSchema(dict(CONFIG_PROPERTIES))
PRESENT_SCHEMA = PolicyConfigSchema({
    **CONFIG_PROPERTIES,
    "requireLock": {"type": "boolean", "default": False,
                    "description": "Fail when the stack has no lock file (set true for prod)."},
})

POLICIES = [
    resource_policy(
        "node-group-replacement-guard",
        "Locked node groups keep every replace-forcing input; unknown values fail closed.",
        [NODE_GROUP, NODE_POOL], guard, severity=Severity.CRITICAL, schema=LOCK_SCHEMA, fail_closed=True,
        remediation="Revert the input, or regenerate the lock with `gpu-platform lock` in the same change."),
    stack_policy(
        "locked-node-groups-present", "Every locked node group is still declared (no silent delete or rename).",
        locked_groups_present, severity=Severity.CRITICAL, schema=PRESENT_SCHEMA, fail_closed=True),
]
