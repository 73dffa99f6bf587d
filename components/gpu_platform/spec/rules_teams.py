"""Rules on one team, shared by the stack file's `teams` and a TeamNamespace or TeamAccess given its own
arguments: its namespace name, the MIG slices it asks for, its access roles and its model-cache claim.

Each rule takes the field path of the team (`teams[0]` in a stack file, empty for a component) so a
problem names the field the reader wrote.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Iterator, Optional, Sequence

from gpu_platform.facts import syntax
from gpu_platform.spec.models import quantity_value

if TYPE_CHECKING:
    from gpu_platform.spec.models import QuotaSpec, TeamAccessSpec, TeamSpec

Problem = tuple[str, str]
ROLE_ARN = r"^arn:aws[a-z-]*:iam::\d{12}:role/[\w+=,.@/-]+$"
# Kubernetes' own namespaces; a platform adds its operator's and Prometheus's.
RESERVED_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


def _at(at: str, field: str) -> str:
    return f"{at}.{field}" if at else field


def name_rules(at: str, team: "TeamSpec", reserved: Sequence[str], name_field: str = "name") -> Iterator[Problem]:
    """The team's namespace is none of the system's: `reserved`, or any name with Kubernetes' `kube-` prefix."""
    if team.name in reserved or syntax.namespace(team.name):
        yield (_at(at, name_field), f"{team.name!r} is a system namespace; reserved: {', '.join(reserved)} and every "
               f"name starting with {syntax.RESERVED_NAMESPACE_PREFIX!r}")


def mig_slice_rules(at: str, quota: "QuotaSpec", offered: Optional[Sequence[str]]) -> Iterator[Problem]:
    """Each MIG profile the quota names is one the cluster offers (None: the caller does not say)."""
    if offered is None:
        return
    for profile in quota.mig_slices:
        if profile not in offered:
            yield (_at(at, "quota.migSlices"), f"no pool provides nvidia.com/mig-{profile} (MIG slices are per-profile "
                   f"resources under the mixed strategy); offered: {', '.join(offered) or 'none'}")


def role_arn_rules(at: str, access: "TeamAccessSpec") -> Iterator[Problem]:
    for role_field, arns in (("developerRoleArns", access.developer_role_arns),
                             ("adminRoleArns", access.admin_role_arns)):
        for j, arn in enumerate(arns):
            if not re.fullmatch(ROLE_ARN, arn):
                yield _at(at, f"{role_field}[{j}]"), "must be an IAM role ARN (arn:aws:iam::<account>:role/<name>)"


def cache_claim_rules(at: str, quota: "QuotaSpec", size: str, size_field: str) -> Iterator[Problem]:
    """The team's model-cache claim counts against its own quota: one claim, `size` of storage."""
    if quota.persistent_volume_claims < 1:
        yield _at(at, "quota.persistentVolumeClaims"), "must be >= 1: the team's model-cache claim counts against it"
    if quantity_value(quota.storage) < quantity_value(size):
        yield (_at(at, "quota.storage"), f"must be >= {size_field} ({size}): the team's model-cache claim counts "
               "against it")
