"""Rules on one team, shared by the stack file's `teams` and a TeamNamespace or TeamAccess given its own
arguments: its namespace name, the MIG slices it asks for, its access roles and its model-cache claim.

Each rule takes the field path of the team (`teams[0]` in a stack file, the root for a component) so a
problem names the field the reader wrote.
"""
from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Optional

from gpu_platform.facts import catalog, syntax
from gpu_platform.spec.field_path import FieldPath, Problem
from gpu_platform.spec.models import quantity_value

if TYPE_CHECKING:
    from gpu_platform.spec.models import QuotaSpec, TeamAccessSpec, TeamSpec

ROLE_ARN = r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+$"
KUBERNETES_MINOR = r"^1\.\d{1,2}$"
# Kubernetes' own namespaces; a platform adds its operator's and Prometheus's.
RESERVED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def name_rules(at: FieldPath, team: "TeamSpec", reserved: Sequence[str], name_field: str = "name") -> Iterator[Problem]:
    """The team's namespace is none of the system's: `reserved`, or any name with Kubernetes' `kube-` prefix."""
    if team.name in reserved or syntax.namespace(team.name):
        yield (at / name_field, f"{team.name!r} is a system namespace; reserved: {', '.join(reserved)} and every "
               f"name starting with {syntax.RESERVED_NAMESPACE_PREFIX!r}")


def mig_slice_rules(at: FieldPath, quota: "QuotaSpec", offered: Optional[Sequence[str]]) -> Iterator[Problem]:
    """Each MIG profile the quota names is one the cluster offers (None: the caller does not say)."""
    if offered is None:
        return
    for profile in quota.mig_slices:
        if profile not in offered:
            yield (at / "quota.migSlices", f"no pool provides nvidia.com/mig-{profile} (MIG slices are per-profile "
                   f"resources under the mixed strategy); offered: {', '.join(offered) or 'none'}")


def role_arn_rules(at: FieldPath, access: "TeamAccessSpec") -> Iterator[Problem]:
    for role_field, arns in (("developerRoleArns", access.developer_role_arns),
                             ("adminRoleArns", access.admin_role_arns)):
        for j, arn in enumerate(arns):
            if not re.fullmatch(ROLE_ARN, arn):
                yield (at / role_field).index(j), "must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)"


def cache_claim_rules(at: FieldPath, quota: "QuotaSpec", size: str, size_field: FieldPath) -> Iterator[Problem]:
    """The team's model-cache claim counts against its own quota: one claim, `size` of storage."""
    if quota.persistent_volume_claims < 1:
        yield at / "quota.persistentVolumeClaims", "must be >= 1: the team's model-cache claim counts against it"
    if quantity_value(quota.storage) < quantity_value(size):
        yield (at / "quota.storage", f"must be >= {size_field} ({size}): the team's model-cache claim counts "
               "against it")


def cluster_context_rules(version: object, claims: Sequence[Mapping[str, object]], domains: Sequence[object],
                          dra: Optional[bool]) -> Iterator[Problem]:
    """What a TeamNamespace is told of its cluster, where the stack file decides it from the pools: the
    Kubernetes minor, the DRA claim templates (a catalog GPU, whole GPUs), the ComputeDomains' node counts
    (multi-node) and whether the cluster allocates by DRA (claims need it)."""
    if version is not None and not re.fullmatch(KUBERNETES_MINOR, str(version)):
        yield FieldPath.of("kubernetesVersion"), f"must be a Kubernetes minor such as 1.35, not {version!r}"
    for i, claim in enumerate(claims):
        gpu, count, at = claim.get("gpu"), claim.get("count"), FieldPath.of("gpuClaims").index(i)
        if gpu not in catalog.GPU_MODELS:
            yield at / "gpu", f"unknown GPU {gpu!r}; known: {', '.join(catalog.GPU_MODELS)}"
        elif not _whole(count, 1):
            yield at / "count", f"must be a whole number of GPUs >= 1, not {count!r}"
    for i, nodes in enumerate(domains):
        if not _whole(nodes, 2):
            yield FieldPath.of("computeDomains").index(i), f"a multi-node job's node count (>= 2), not {nodes!r}"
    if claims and dra is False:
        yield (FieldPath.of("dra"),
               "gpuClaims need the cluster's DRA driver; leave dra true (the default with gpuClaims)")


def _whole(value: object, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least
