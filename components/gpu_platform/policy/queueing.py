"""Queueing (Kueue): queued teams have a queue, guarantees fit the hardware, flavors name real MIG slices.

A stack queues when it registers ClusterQueues. A flavor's capacity is what the GPU node groups carrying
all of its node labels schedule at max size, counted as team-quota-within-capacity counts (the node groups
and the GPU Operator's release, decisions/capacity.py arithmetic).

- queue-team-local-queue: every team namespace of a queued stack has a LocalQueue naming a declared
  ClusterQueue that selects the namespace (without one its jobs wait forever and its GPU pods are refused).
- queue-nominal-within-capacity: per cohort tree (nested cohorts counted in their root) and flavor, the
  ClusterQueues' nominal GPU quotas add up to at most the flavor's capacity at max size (a nominal quota is a
  guarantee; borrowing is what may overcommit).
- queue-flavor-mig-profile: a flavor that names a MIG profile (its `gpu-platform.io/mig-profile` label or a
  `nvidia.com/mig-<profile>` quota) selects node groups that offer that profile.
"""
from __future__ import annotations

from typing import Any, Optional
from collections.abc import Iterator, Mapping

from pulumi_policy import Severity, StackValidationArgs

from gpu_platform.facts import names
from gpu_platform.policy.common import (
    NAMESPACE, NODE_GROUP, NODE_POOL, get, gpu_operator_release, is_gpu_node_group, of_type, release_values,
    stack_policy,
)
from gpu_platform.policy.pools import pool_resources
from gpu_platform.policy.sharing import mig_config_of
from gpu_platform.policy.teams import _mig_layouts, _quantity, _team_namespaces, capacity_at_max

Finding = Iterator[tuple[str, Optional[str]]]
KUEUE_GROUP = "kubernetes:kueue.x-k8s.io/"


def kueue_objects(args: StackValidationArgs, kind: str) -> list:
    """Registered Kueue objects of one kind, whatever API version they use."""
    return [r for r in args.resources if r.resource_type.startswith(KUEUE_GROUP) and r.resource_type.endswith(f":{kind}")]


def _name(r: Any) -> str:
    return get(r.props, "metadata.name", r.name)


def selects(selector: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """A Kubernetes label selector (matchLabels and matchExpressions) against a set of labels."""
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for e in selector.get("matchExpressions") or []:
        key, op, values = e.get("key"), e.get("operator"), e.get("values") or []
        ok = {"In": key in labels and labels[key] in values, "NotIn": labels.get(key) not in values,
              "Exists": key in labels, "DoesNotExist": key not in labels}.get(op, False)
        if not ok:
            return False
    return True


def _namespace_labels(ns: Any) -> dict[str, str]:
    name = get(ns.props, "metadata.name", ns.name)
    return {**get(ns.props, "metadata.labels", {}), names.NAMESPACE_NAME_LABEL: name}  # set by the API server


def local_queues(args: StackValidationArgs, config: Mapping[str, Any]) -> Finding:
    queues = {_name(q): q for q in kueue_objects(args, "ClusterQueue")}
    if not queues:
        return
    locals_by_ns: dict[str, list] = {}
    for lq in kueue_objects(args, "LocalQueue"):
        locals_by_ns.setdefault(get(lq.props, "metadata.namespace", "default"), []).append(lq)
    namespaces = {get(ns.props, "metadata.name", ns.name): ns for ns in of_type(args, NAMESPACE)}
    for ns_name, ns in _team_namespaces(args):
        mine = locals_by_ns.get(ns_name, [])
        if not mine:
            yield (f"team namespace {ns_name!r} has no LocalQueue: the stack queues GPU work, so its Jobs would wait "
                   "for a queue that does not exist and its GPU pods are refused; add a Kueue LocalQueue to the "
                   "namespace (stack file: queueing.mode kueue gives every team one)", ns.urn)
            continue
        for lq in mine:
            target = get(lq.props, "spec.clusterQueue")
            cq = queues.get(target)
            if cq is None:
                yield (f"LocalQueue {ns_name}/{_name(lq)} points at ClusterQueue {target!r}, which the stack does not "
                       f"declare; declared: {', '.join(sorted(queues))}", lq.urn)
            elif not selects(get(cq.props, "spec.namespaceSelector", {}), _namespace_labels(namespaces[ns_name])):
                yield (f"LocalQueue {ns_name}/{_name(lq)} points at ClusterQueue {target!r}, whose namespaceSelector "
                       f"does not select namespace {ns_name!r}: nothing queued there is ever admitted", lq.urn)


# --- flavors and what the node groups under them offer ---

def _group_labels(group: Any) -> dict[str, str]:
    return get(group.props, "labels", {})


def flavor_groups(args: StackValidationArgs, flavor: Any) -> list:
    """GPU pools (node groups and Karpenter NodePools) whose nodes carry every node label of the flavor."""
    wanted = get(flavor.props, "spec.nodeLabels", {})
    return [g for g in pool_resources(args) if is_gpu_node_group(g.props)
            and all(_group_labels(g).get(k) == v for k, v in wanted.items())]


def flavor_capacity(args: StackValidationArgs, flavor: Any) -> dict[str, int]:
    """Extended resources the flavor's pools schedule at max size."""
    urns = {g.urn for g in flavor_groups(args, flavor)}
    kept = [r for r in args.resources if r.resource_type not in (NODE_GROUP, NODE_POOL) or r.urn in urns]
    return capacity_at_max(StackValidationArgs(kept, args.get_config()))


def offered_profiles(args: StackValidationArgs, groups: list) -> set[str]:
    """MIG profiles the node groups' MIG configs create (under either strategy)."""
    release = gpu_operator_release(args)
    layouts = _mig_layouts(release_values(release.props) if release is not None else {})
    out: set[str] = set()
    for g in groups:
        out.update(p for p, n in layouts.get(mig_config_of(g.props) or "", {}).items() if n)
    return out


def _flavor_quotas(cq: Any) -> Iterator[tuple[str, str, int]]:
    """(flavor, resource, nominal quota) of every GPU entry of a ClusterQueue."""
    for group in get(cq.props, "spec.resourceGroups", []):
        for flavor in group.get("flavors") or []:
            for res in flavor.get("resources") or []:
                if str(res.get("name", "")).startswith(names.NVIDIA_DOMAIN):
                    yield flavor.get("name"), res["name"], _quantity(res.get("nominalQuota", 0))


def root_cohort(parents: Mapping[str, Optional[str]], cohort: Optional[str]) -> Optional[str]:
    """The root of a cohort's tree (nested cohorts share their root's capacity); a cycle stops where it closes."""
    seen: set[str] = set()
    while cohort and parents.get(cohort) and cohort not in seen:
        seen.add(cohort)
        cohort = parents[cohort]
    return cohort


def nominal_within_capacity(args: StackValidationArgs, config: Mapping[str, Any]) -> Finding:
    flavors = {_name(f): f for f in kueue_objects(args, "ResourceFlavor")}
    held: dict[tuple[str, str, str], int] = {}  # (root cohort, flavor, resource) -> nominal quota
    parents = {_name(c): get(c.props, "spec.parentName") for c in kueue_objects(args, "Cohort")}
    for cq in kueue_objects(args, "ClusterQueue"):
        cohort = root_cohort(parents, get(cq.props, "spec.cohortName")) or f"(ClusterQueue {_name(cq)} alone)"
        for flavor, resource, nominal in _flavor_quotas(cq):
            held[(cohort, flavor, resource)] = held.get((cohort, flavor, resource), 0) + nominal
    capacity: dict[str, dict[str, int]] = {}
    for (cohort, flavor, resource), nominal in sorted(held.items()):
        if flavor not in flavors:
            yield (f"cohort {cohort!r} holds nominal quota on flavor {flavor!r}, which the stack does not declare", None)
            continue
        have = capacity.setdefault(flavor, flavor_capacity(args, flavors[flavor])).get(resource, 0)
        if nominal > have:
            yield (f"cohort {cohort!r} guarantees {nominal} {resource} on flavor {flavor!r} but its node groups offer "
                   f"{have} at max size: nominal quotas are guarantees and must fit the hardware; lower the "
                   "ClusterQueues' nominalQuota or raise the node groups' maxSize (borrowing limits are what may exceed "
                   "it; stack file: teams[].queue, nodePools[].maxSize)", flavors[flavor].urn)


def flavor_mig_profiles(args: StackValidationArgs, config: Mapping[str, Any]) -> Finding:
    flavors = {_name(f): f for f in kueue_objects(args, "ResourceFlavor")}
    named: dict[str, set[str]] = {}  # flavor -> MIG profiles it names
    for name, f in flavors.items():
        label = get(f.props, "metadata.labels", {}).get(names.MIG_PROFILE_LABEL)
        if label:
            named.setdefault(name, set()).add(label)
    for cq in kueue_objects(args, "ClusterQueue"):
        for flavor, resource, _ in _flavor_quotas(cq):
            if resource.startswith(names.MIG_RESOURCE_PREFIX) and flavor in flavors:
                named.setdefault(flavor, set()).add(resource.removeprefix(names.MIG_RESOURCE_PREFIX))
    for name, profiles in sorted(named.items()):
        groups = flavor_groups(args, flavors[name])
        offered = {p.replace("+", ".") for p in offered_profiles(args, groups)}
        missing = sorted(p for p in profiles if p.replace("+", ".") not in offered)
        if missing:
            yield (f"flavor {name!r} names MIG profile {', '.join(missing)} but the node groups it selects offer "
                   f"{', '.join(sorted(offered)) or 'no MIG profile'}: its quota could never be used; derive flavors from "
                   "the pools' MIG layouts", flavors[name].urn)


POLICIES = [
    stack_policy("queue-team-local-queue",
                 "In a stack that queues GPU work, every team namespace has a LocalQueue on a ClusterQueue selecting it.",
                 local_queues, severity=Severity.HIGH),
    stack_policy("queue-nominal-within-capacity",
                 "Per cohort tree and flavor, nominal GPU quotas add up to at most the flavor's capacity at max size.",
                 nominal_within_capacity, severity=Severity.HIGH),
    stack_policy("queue-flavor-mig-profile", "Every MIG profile a Kueue flavor names is offered by the node groups it selects.",
                 flavor_mig_profiles, severity=Severity.HIGH),
]
