"""The plan's `serving` section: a row per team service: its runtime, GPU shape and pool, replicas, how much
memory it leaves on each GPU (fit margin), its expected cold start and its cost at min and max replicas.

Cost is the replicas' share of their pool's node price (a MIG slice its compute share of a GPU, a time-sliced
replica its share of the GPU), as the cost section prices team quotas. Cold start on a running node is the weights
read from the model cache plus the engine's warm-up; from zero a node's launch comes first.
JSON shape in docs/serving.md; `VERSION` changes only when a field changes meaning.
"""
from __future__ import annotations

from typing import Any, Optional

from gpu_platform.decisions.serving import ServicePlan, plans
from gpu_platform.facts import catalog, serving
from gpu_platform.planner.sections import PlanContext, Section, register
from gpu_platform.planner.tables import md_table, text_table
from gpu_platform.spec.models import PlatformSpec

NAME = "serving"
TITLE = "Serving: each team service's GPUs, fit, cold start and cost"
VERSION = 1


def build(ctx: PlanContext) -> Optional[dict[str, Any]]:
    if ctx.spec is None or not any(t.services for t in ctx.spec.teams):
        return None
    return from_spec(ctx.spec)


def _monthly(hourly: Optional[float]) -> Optional[float]:
    return None if hourly is None else round(hourly * catalog.HOURS_PER_MONTH, 2)


def _row(p: ServicePlan) -> dict[str, Any]:
    s = p.service
    rt = serving.RUNTIMES[s.runtime]
    return {"team": p.team, "service": s.name, "runtime": f"{rt.key} {rt.version}", "image": rt.reference,
            "pool": p.pool.name, "shape": p.shape, "resource": p.resource, "unitsPerReplica": p.units,
            "minReplicas": s.replicas.min, "maxReplicas": s.replicas.max,
            "weightsGiB": round(p.weights_gib, 2), "memoryGiBPerGpu": round(p.memory_gib, 2),
            "gpuMemoryUtilization": s.gpu_memory_utilization, "fitMarginGiB": round(p.margin_gib, 2),
            "coldStartSeconds": p.cold_start_seconds,
            "coldStartFromZeroSeconds": p.cold_start_seconds + serving.NODE_READY_SECONDS,
            "hostMemoryGiB": round(p.host_memory_mib / 1024, 2), "replicasPerNode": p.replicas_per_node,
            "maxSurge": p.max_surge, "autoscaling": s.autoscaling.signal if s.autoscaling else None,
            "monthlyUsdAtMin": _monthly(p.usd_per_hour(s.replicas.min)),
            "monthlyUsdAtMax": _monthly(p.usd_per_hour(s.replicas.max))}


def from_spec(spec: PlatformSpec) -> dict[str, Any]:
    rows = [_row(p) for p in plans(spec)]
    return {"version": VERSION, "services": rows,
            "monthlyUsdAtMin": round(sum(r["monthlyUsdAtMin"] or 0 for r in rows), 2),
            "monthlyUsdAtMax": round(sum(r["monthlyUsdAtMax"] or 0 for r in rows), 2),
            "assumptions": {"modelCacheClientMiBps": serving.MODEL_CACHE_CLIENT_MIBPS,
                            "readShare": round(serving.MODEL_CACHE_READ_SHARE, 3),
                            "engineWarmupSeconds": serving.ENGINE_WARMUP_SECONDS,
                            "nodeReadySeconds": serving.NODE_READY_SECONDS,
                            "engineOverheadGiBPerGpu": serving.ENGINE_OVERHEAD_GIB_PER_GPU,
                            "serverHostBaseGiB": serving.SERVER_HOST_BASE_GIB,
                            "serverHostGiBPerGpu": serving.SERVER_HOST_PER_GPU_GIB,
                            "checkpointShardGB": serving.CHECKPOINT_SHARD_GB}}


HEADERS = ["Team", "Service", "GPU shape", "Pool", "Replicas", "Weights GiB", "Fit margin GiB", "Cold start",
           "$/month min", "$/month max"]


def _usd(v: Optional[float]) -> str:
    return "unpriced" if v is None else f"{v:,.2f}"


def _rows(section: dict[str, Any]) -> list[list[str]]:
    return [[r["team"], r["service"], r["shape"], r["pool"], f"{r['minReplicas']}-{r['maxReplicas']}",
             f"{r['weightsGiB']:g}", f"{r['fitMarginGiB']:g}",
             f"{r['coldStartSeconds']}s ({r['coldStartFromZeroSeconds']}s from zero)",
             _usd(r["monthlyUsdAtMin"]), _usd(r["monthlyUsdAtMax"])] for r in section["services"]]


def _note(section: dict[str, Any]) -> str:
    a = section["assumptions"]
    return (f"Total ${section['monthlyUsdAtMin']:,.2f}/month at min replicas, ${section['monthlyUsdAtMax']:,.2f} at "
            f"max. Fit margin: memory left per GPU after the weights' share, {a['engineOverheadGiBPerGpu']} GiB engine "
            f"overhead and the KV-cache floor. Cold start: weights read at {a['readShare']:g} of the cache's "
            f"{a['modelCacheClientMiBps']} MiB/s per node, plus {a['engineWarmupSeconds']}s warm-up; from zero, "
            f"{a['nodeReadySeconds']}s for a node first (image pull not counted).")


def text(section: dict[str, Any]) -> str:
    return "\n".join([*text_table(HEADERS, _rows(section), right=(5, 6, 8, 9)), f"  {_note(section)}"])


def markdown(section: dict[str, Any]) -> str:
    return "\n".join([*md_table(HEADERS, _rows(section), right=(5, 6, 8, 9)), "", _note(section)])


SECTION = register(Section(NAME, TITLE, build, text, markdown, needs_platform=True))
