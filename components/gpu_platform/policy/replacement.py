"""The replacement guard: locked node groups keep every input whose change would replace them.

Policies never see the old state or the step (create, update, replace), so the guard compares against a
lock committed beside the stack file, `stacks/Pulumi.<stack>.lock.json`, which `gpu-platform lock`
writes from a plan:

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
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator, Mapping, Optional

from pulumi_policy import PolicyConfigSchema, ResourceValidationArgs, Severity, StackValidationArgs
from pulumi_policy.proxy import UnknownValueError

from gpu_platform.facts import catalog
from gpu_platform.policy.common import NODE_GROUP, fail_closed_message, get, of_type, resource_policy, stack_of, stack_policy

LOCK_VERSION = 2
READABLE_VERSIONS = (1, 2)
ROOT = Path(__file__).resolve().parents[3]  # the checkout: components/gpu_platform/policy/ sits three levels down
REPLACE_INPUTS = catalog.REPLACE_FORCING_INPUTS[NODE_GROUP]
# Inputs that carry another resource's id or ARN: an offline plan only has stand-ins for them, so the
# lock does not pin their values. The guard still fails closed when one is unknown during a preview.
REFERENCE_INPUTS = ("launchTemplate.id", "nodeRoleArn", "subnetIds")
LOCKED_INPUTS = tuple(i for i in REPLACE_INPUTS if i not in REFERENCE_INPUTS)
NODE_POOL = "kubernetes:karpenter.sh/v1:NodePool"
NODE_POOL_INPUTS = catalog.REPLACE_FORCING_INPUTS[NODE_POOL]
# Lock section, replace-forcing inputs and how messages name the resource, per guarded type.
SECTIONS = {NODE_GROUP: ("nodeGroups", REPLACE_INPUTS, "node group"), NODE_POOL: ("nodePools", NODE_POOL_INPUTS, "NodePool")}


LOCK_FILE = "stacks/Pulumi.{stack}.lock.json"  # beside the stack file, relative to the repository


def default_lock_path(stack: str, root: Optional[Path] = None) -> Path:
    return (root or ROOT) / LOCK_FILE.format(stack=stack)


def lock_path(config: Mapping[str, Any], urn: str) -> Optional[Path]:
    """The lock to hold a resource to: `lockFile` from config (relative to the repository), else the stack's."""
    given = config.get("lockFile")
    if given:
        path = Path(given)
        return path if path.is_absolute() else ROOT / path
    stack = stack_of(urn)
    return default_lock_path(stack) if stack else None


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


class LockError(ValueError):
    pass


@lru_cache(maxsize=16)
def _read(path: str, mtime: float) -> dict[str, Any]:
    try:
        doc = json.loads(Path(path).read_text())
    except ValueError as err:
        raise LockError(f"{path} is not valid JSON ({err}); regenerate it with `gpu-platform lock`") from None
    if (not isinstance(doc, dict) or doc.get("version") not in READABLE_VERSIONS
            or not isinstance(doc.get("nodeGroups"), dict) or not isinstance(doc.get("pools", {}), dict)
            or not isinstance(doc.get("nodePools", {}), dict)):
        raise LockError(f"{path} is not a node-group lock this version reads (versions "
                        f"{', '.join(map(str, READABLE_VERSIONS))}); regenerate it with `gpu-platform lock`")
    return doc


def load_lock(path: Optional[Path]) -> Optional[dict[str, Any]]:
    """The lock document, or None when there is no lock file."""
    if path is None or not path.is_file():
        return None
    return _read(str(path), path.stat().st_mtime)


def _show(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def guard(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    try:
        lock = load_lock(lock_path(config, args.urn))
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
    path = lock_path(config, urn)
    try:
        lock = load_lock(path)
    except LockError as err:
        yield str(err), None
        return
    if lock is None:
        if config.get("requireLock"):
            yield (f"no node-group lock at {path}: write one with `gpu-platform lock --stack {stack_of(urn) or '<stack>'}` "
                   "and commit it, so replacements of node groups are refused", None)
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


LOCK_SCHEMA = PolicyConfigSchema({
    "lockFile": {"type": "string",
                 "description": "Lock file (relative to the repository); default stacks/Pulumi.<stack>.lock.json."},
})
PRESENT_SCHEMA = PolicyConfigSchema({
    "lockFile": LOCK_SCHEMA.properties["lockFile"],
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
