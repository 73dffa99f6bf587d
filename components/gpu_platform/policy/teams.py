"""Tenancy: every team namespace bounds its GPUs, and the bounds add up to what the pools provide.

- Each namespace labelled `gpu-platform.io/team` has a ResourceQuota with `requests.nvidia.com/gpu`
  and `requests.nvidia.com/mig-<profile>` for every MIG profile the cluster offers (extended resources
  are quota'd on requests only; a quota without a key leaves that resource unbounded).
- Advisory: the teams' quotas sum to at most the pools' capacity at max size times a ratio.
"""
from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any, Optional

import yaml
from pulumi_policy import EnforcementLevel, PolicyConfigSchema, Severity, StackValidationArgs

from gpu_platform.decisions.capacity import shared_resources
from gpu_platform.facts import catalog, names
from gpu_platform.policy.common import (
    NAMESPACE, RESOURCE_QUOTA, get, gpu_operator_release, is_gpu_node_group, of_type, release_values, stack_policy,
)
from gpu_platform.policy.pools import pool_resources
from gpu_platform.policy.sharing import mig_config_of, time_slicing_replicas

Finding = Iterator[tuple[str, Optional[str]]]


def _mig_layouts(values: Mapping[str, Any]) -> dict[str, dict[str, int]]:
    """MIG config name -> layout of one GPU, from the release's MIG manager file (empty if unreadable)."""
    text = ((((values.get("migManager") or {}).get("config") or {}).get("data") or {})
            .get(names.MIG_PARTED_CONFIG_KEY))
    # a text only: another program may register anything there, and the parse is cached by its text
    return {name: dict(layout) for name, layout in _layouts_in(text).items()} if isinstance(text, str) else {}


@lru_cache(maxsize=16)
def _layouts_in(text: str) -> dict[str, dict[str, int]]:
    """`_mig_layouts` of one MIG manager file, parsed once per text: rules read it once per flavor and pool."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}
    out: dict[str, dict[str, int]] = {}
    configs = doc.get("mig-configs") if isinstance(doc, dict) else None
    for name, items in (configs.items() if isinstance(configs, dict) else ()):
        enabled = [i for i in items if isinstance(i, dict) and i.get("mig-enabled")] if isinstance(items, list) else []
        devices = enabled[0].get("mig-devices") if enabled else None
        if isinstance(devices, dict):
            out[name] = dict(devices)
    return out


def capacity_at_max(args: StackValidationArgs) -> dict[str, int]:
    """Extended resources the GPU pools (node groups and NodePools) offer at max size (decisions/capacity.py)."""
    release = gpu_operator_release(args)
    values = release_values(release.props) if release is not None else {}
    strategy = (values.get("mig") or {}).get("strategy") or "single"
    layouts = _mig_layouts(values)
    total: dict[str, int] = {}
    for ng in pool_resources(args):
        props = ng.props
        types = [catalog.INSTANCE_TYPES[t] for t in get(props, "instanceTypes", []) if t in catalog.INSTANCE_TYPES]
        if not types or not is_gpu_node_group(props):
            continue
        replicas = time_slicing_replicas(props, values)
        layout = layouts.get(mig_config_of(props) or "")
        mode = "mig" if layout else "time-slicing" if replicas >= 2 else "none"
        max_size = int(get(props, "scalingConfig.maxSize", 0) or 0)
        for resource, n in shared_resources(types[0].gpu_count, mode, replicas, layout, strategy).items():
            total[resource] = total.get(resource, 0) + n * max_size
    return total


def _quotas_by_namespace(args: StackValidationArgs) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for q in of_type(args, RESOURCE_QUOTA):
        ns = get(q.props, "metadata.namespace", "default")
        out.setdefault(ns, {}).update(get(q.props, "spec.hard", {}))
    return out


def _team_namespaces(args: StackValidationArgs) -> list[tuple[str, Any]]:
    teams = []
    for ns in of_type(args, NAMESPACE):
        if names.TEAM_LABEL in get(ns.props, "metadata.labels", {}):
            teams.append((get(ns.props, "metadata.name", ns.name), ns))
    return teams


def quotas_bound_gpus(args: StackValidationArgs, config: Mapping[str, Any]) -> Finding:
    offered = capacity_at_max(args)
    needed = [names.quota_key(names.GPU_RESOURCE)] + sorted(
        names.quota_key(r) for r in offered if r.startswith(names.MIG_RESOURCE_PREFIX))
    quotas = _quotas_by_namespace(args)
    for ns_name, ns in _team_namespaces(args):
        hard = quotas.get(ns_name)
        if hard is None:
            yield (f"team namespace {ns_name!r} has no ResourceQuota: its pods could take every GPU; add a "
                   "ResourceQuota bounding requests.nvidia.com/gpu to the namespace (stack file: teams[].quota)", ns.urn)
            continue
        missing = [k for k in needed if k not in hard]
        if missing:
            bare = [k for k in missing if k.removeprefix("requests.") in hard]
            hint = (f" ({', '.join(k.removeprefix('requests.') for k in bare)} is not enforced for extended resources: "
                    "quota them as requests.<resource>)") if bare else ""
            yield (f"team namespace {ns_name!r} quota does not bound {', '.join(missing)}{hint}: add them to the "
                   "ResourceQuota's hard limits, 0 where the team gets none (stack file: teams[].quota.gpus and "
                   "quota.migSlices for every MIG profile the pools offer)", ns.urn)


def _quantity(value: Any) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 0


def quotas_within_capacity(args: StackValidationArgs, config: Mapping[str, Any]) -> Finding:
    ratio = float(config.get("capacityRatio", 1.0))
    offered = capacity_at_max(args)
    asked: dict[str, int] = {}
    # A queued team's quota is its ceiling (nominal + borrowing); queue-nominal-within-capacity checks its guarantees.
    queued = {get(r.props, "metadata.namespace") for r in args.resources if r.resource_type.endswith(":LocalQueue")}
    teams = {name for name, _ in _team_namespaces(args)} - queued
    for ns, hard in _quotas_by_namespace(args).items():
        if ns not in teams:
            continue
        for key, value in hard.items():
            if key.startswith("requests.nvidia.com/"):
                resource = key.removeprefix("requests.")
                asked[resource] = asked.get(resource, 0) + _quantity(value)
    for resource, n in sorted(asked.items()):
        have = offered.get(resource, 0)
        if n > have * ratio:
            yield (f"team quotas ask for {n} {resource} but the pools offer {have} at max size (capacity ratio "
                   f"{ratio:g} allows {int(have * ratio)}): raise a node group's maxSize or lower the quotas (stack "
                   "file: nodePools[].maxSize, teams[].quota)", None)


CAPACITY_SCHEMA = PolicyConfigSchema({
    "capacityRatio": {"type": "number", "minimum": 0, "default": 1.0,
                      "description": "How far team quotas may overcommit pool capacity at max size."},
})

POLICIES = [
    stack_policy(
        "team-gpu-quota", "Every team namespace has a ResourceQuota bounding GPUs and every offered MIG profile.",
        quotas_bound_gpus, severity=Severity.HIGH),
    stack_policy(
        "team-quota-within-capacity", "Team GPU quotas add up to at most the pools' capacity (times a ratio).",
        quotas_within_capacity, severity=Severity.LOW, level=EnforcementLevel.ADVISORY, schema=CAPACITY_SCHEMA),
]
