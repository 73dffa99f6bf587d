"""Runtime ceilings per priority tier: how long one GPU job of a team may run (queueing.runtimeCeilingHours).

With Kueue the ceiling is the Workload's maximum execution time, counted over the time it is admitted (a
preempted job keeps what it used), after which Kueue deactivates it; without Kueue it is the Job's own
`activeDeadlineSeconds`, counted from its start. Either way the Job says what it gets, so the team sees it.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from gpu_platform.facts import names

if TYPE_CHECKING:
    from gpu_platform.spec.models import PlatformSpec, QueueingSpec, TeamSpec


def ceiling_seconds(spec: "PlatformSpec", team: "TeamSpec") -> Optional[int]:
    hours = spec.queueing.runtime_ceiling_hours.get(team.priority_tier)
    return None if hours is None else hours * 3600


def debug_ceiling_seconds(spec: "QueueingSpec") -> Optional[int]:
    """The longest a GPU job in a team's debug queue may run (Kueue's maximum execution time)."""
    return None if spec.debug_queue is None else spec.debug_queue.runtime_ceiling_minutes * 60


def tier_ceilings_seconds(spec: "QueueingSpec") -> dict[str, int]:
    """Priority tier -> the longest one GPU job of a team in it may run, in seconds (tiers with a ceiling)."""
    return {tier: hours * 3600 for tier, hours in spec.runtime_ceiling_hours.items()}


def job_ceiling(spec: "PlatformSpec", team: "TeamSpec", queue: Optional[str] = None) -> tuple[dict[str, str], dict[str, Any]]:
    """(Job labels, Job spec fields) that cap a job of `team` at its tier's ceiling, or in the debug queue at
    that queue's; empty without one."""
    debug = debug_ceiling_seconds(spec.queueing) if queue == names.DEBUG_LOCAL_QUEUE else None
    seconds = debug if debug is not None else ceiling_seconds(spec, team)
    if seconds is None:
        return {}, {}
    if spec.queueing.enabled:
        return {names.KUEUE_MAX_EXEC_TIME_LABEL: str(seconds)}, {}
    return {}, {"activeDeadlineSeconds": seconds}
