"""The stack file onto the components: each function takes the validated PlatformSpec (and the components
built before) and gives one component what it builds from, as the already-validated models and their
context (`X.of(name, settings)`) or as plain Args. Nothing here validates: `parse_platform` did, once.
"""
from __future__ import annotations

from typing import Any, Optional

from gpu_platform.render.team_objects import TeamContext
from gpu_platform.resources.team import TeamRolesArgs, TeamSettings
from gpu_platform.spec.models import PlatformSpec, TeamSpec


def team_settings(spec: PlatformSpec, team: TeamSpec, k8s_provider: Any, storage_class: Optional[Any]) -> TeamSettings:
    """A stack-file team as TeamNamespace builds it: the pools' GPUs, Prometheus, Kueue and the model cache's
    StorageClass (None without a cache)."""
    return TeamSettings(team, TeamContext.of(spec, team, storage_class), k8s_provider)


def team_roles(spec: PlatformSpec) -> list[TeamRolesArgs]:
    """Every team's IAM roles, as TeamAccess takes them."""
    return [TeamRolesArgs(name=t.name, **t.access.model_dump()) for t in spec.teams]
