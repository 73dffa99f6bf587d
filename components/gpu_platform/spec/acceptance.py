"""`nodePools[].acceptance`: what a new node of the pool must pass before it takes work (docs/acceptance.md).

Unset, the environment decides (decisions/acceptance.py): prod runs DCGM level 2 and every check the pool's
hardware has, staging level 1, dev none. Cross-field rules (a check the pool's hardware cannot run, a floor
without its check) are in `acceptance_rules`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Literal, Optional
from collections.abc import Iterator

from pydantic import Field

from gpu_platform.facts import acceptance as facts
from gpu_platform.facts import catalog
from gpu_platform.spec.field_path import FieldPath, Problem
from gpu_platform.spec.strict import StrictModel

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec

Check = Literal[facts.CHECKS]  # type: ignore[valid-type]
Level = Literal[tuple(facts.DCGM_LEVELS)]  # type: ignore[valid-type]


class AcceptanceSpec(StrictModel):
    """GPU acceptance checks a new node passes before it takes work."""

    enabled: bool = True
    level: Level = 2  # type: ignore[valid-type]  # dcgmi diag -r <level>: 1 quick (seconds), 2 medium (~2 min), 3 long (~15 min)
    checks: Optional[list[Check]] = Field(None, min_length=1)  # default: dcgm and every check the hardware has
    timeout_minutes: Optional[int] = Field(None, ge=1, le=240)  # default: the level's and the checks' own
    nccl_bus_bandwidth_gbps: Optional[float] = Field(None, gt=0, le=5000)  # default: the catalog's floor
    # Hours between passive health re-checks of the pool's idle accepted nodes; 0 turns them off.
    # Default: the environment's (decisions/acceptance.py: prod 24, others off).
    recheck_hours: Optional[int] = Field(None, ge=0, le=facts.RECHECK_MAX_HOURS)


def hardware_checks(pool: "NodePoolSpec") -> tuple[str, ...]:
    """The checks this pool's nodes can run: DCGM always; the in-node all-reduce with several whole GPUs;
    EFA on EFA pools; the IMEX domain on UltraServer nodes."""
    out = ["dcgm"]
    if pool.gpus_per_node > 1 and pool.sharing.mode != "mig":
        out.append("nccl")
    if pool.efa:
        out.append("efa")
    if any(t in catalog.ULTRASERVERS for t in pool.instance_types):
        out.append("imex")
    return tuple(out)


def acceptance_rules(at: FieldPath, pool: "NodePoolSpec") -> Iterator[Problem]:
    spec = pool.acceptance
    if spec is None:
        return
    where = at.field("acceptance")
    if not spec.enabled:
        for name in ("checks", "timeout_minutes", "nccl_bus_bandwidth_gbps", "recheck_hours"):
            if getattr(spec, name) is not None:
                yield where.field(_camel(name)), "applies only with enabled: true"
        return
    possible = hardware_checks(pool)
    for j, check in enumerate(spec.checks or []):
        if check not in possible:
            yield (where.field("checks").index(j),
                   f"{check!r} cannot run on this pool ({_why(check)}); this pool's checks: {', '.join(possible)}")
    if len(set(spec.checks or [])) != len(spec.checks or []):
        yield where.field("checks"), "lists a check twice"
    if "dcgm" not in (spec.checks or ["dcgm"]):
        yield where.field("checks"), "must include dcgm: every other check assumes healthy GPUs"
    if spec.nccl_bus_bandwidth_gbps is not None and "nccl" not in (spec.checks or possible):
        yield (where.field("ncclBusBandwidthGbps"), "sets a floor for the nccl check, which this pool does "
               "not run (it needs two or more whole GPUs per node)")


def _why(check: str) -> str:
    return {"nccl": "it needs two or more whole GPUs per node, without MIG", "efa": "the pool does not set efa: true",
            "imex": "only UltraServer instance types have an IMEX domain", "dcgm": ""}[check]


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.capitalize() for w in rest)
