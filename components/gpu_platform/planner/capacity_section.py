"""The plan's `capacity` section: what Kubernetes can schedule per pool and in total, beside team quotas.

Computed from the validated spec of the stack being planned (decisions.capacity does the counting).
JSON shape documented in docs/cost.md; `VERSION` changes only when a field changes meaning.
"""
from __future__ import annotations

from typing import Any, Optional

from gpu_platform.decisions.capacity import platform_capacity, team_quota_totals
from gpu_platform.decisions.dra import is_dra, is_ultraserver
from gpu_platform.decisions.cuda import spec_pool_cuda
from gpu_platform.decisions.launch_template import efa_interface_count
from gpu_platform.decisions.local_storage import pool_local_storage
from gpu_platform.decisions.numa import pool_kubelet
from gpu_platform.planner.sections import PlanContext, Section, register
from gpu_platform.planner.tables import count, md_table, percent, span, text_table
from gpu_platform.spec.models import NodePoolSpec, PlatformSpec

NAME = "capacity"
TITLE = "GPU capacity at max size"
VERSION = 1


def build(ctx: PlanContext) -> Optional[dict[str, Any]]:
    return None if ctx.spec is None else from_spec(ctx.spec)


def from_spec(spec: PlatformSpec) -> dict[str, Any]:
    cap = platform_capacity(spec)
    quotas = team_quota_totals(spec)
    pools = []
    for pool, pc in zip(spec.node_pools, cap.pools, strict=True):
        pools.append({
            "name": pool.name, "gpu": pc.gpu, "instanceType": pool.instance_types[0],
            "minSize": pool.min_size, "maxSize": pool.max_size, "sharing": _sharing(pool),
            "physicalGpusPerNode": pool.gpus_per_node, "physicalGpusAtMax": pc.physical_gpus_max,
            "perNode": pc.per_node, "atMax": pc.at_max, **_training(pool), "numa": _numa(pool),
            **_allocation(pool),
            "cudaCeiling": _cuda(spec, pool),
            **({"warmNodes": pool.warm.nodes} if pool.warm else {}),
        })
    ratio = spec.quota_overcommit_ratio
    resources = []
    for res in sorted(set(cap.total) | set(quotas)):
        offered, asked = cap.total.get(res, 0), quotas.get(res, 0)
        resources.append({"resource": res, "capacityAtMax": offered, "teamQuota": asked,
                          "quotaToCapacity": round(asked / offered, 6) if offered else None, "overcommitted": asked > offered})
    return {
        "version": VERSION, "migStrategy": spec.mig_strategy, "pools": pools,
        "total": {"physicalGpusAtMax": sum(p.physical_gpus_max for p in cap.pools), "atMax": cap.total},
        "teamQuotas": quotas, "quotaOvercommitRatio": ratio, "resources": resources,
        "overcommitted": any(r["overcommitted"] for r in resources),
    }


def _nodes(pool: dict[str, Any]) -> str:
    """`0-6`, or `0-6 (1 warm)` when placeholders hold nodes ready (nodePools[].warm)."""
    warm = f" ({pool['warmNodes']} warm)" if pool.get("warmNodes") else ""
    return f"{span(pool['minSize'], pool['maxSize'])}{warm}"


def _training(pool: NodePoolSpec) -> dict[str, Any]:
    """Local NVMe scratch (decimal GB, 0 without the RAID0) and EFA interfaces per node."""
    scratch = pool_local_storage(pool)
    return {"localScratchGBPerNode": scratch.gb_per_node if scratch.mount else 0,
            "efaInterfacesPerNode": efa_interface_count(pool)}


def _cuda(spec: PlatformSpec, pool: NodePoolSpec) -> dict[str, Any]:
    """The drivers the pool's nodes run and the newest CUDA they run natively and by minor-version
    compatibility (docs/cuda.md); nulls when the calendar does not know the pool's driver."""
    found = spec_pool_cuda(spec, pool)
    c = found.ceiling()
    return {"drivers": [{"driver": d, "certain": certain} for d, certain in found.drivers],
            "native": c.native if c else None,
            "minorVersionCompatibility": f"{c.minor_version_major}.x" if c and c.minor_version_major else None}


def cuda_text(pool: dict[str, Any]) -> str:
    """`13.0 (13.x)`: the native ceiling and, in brackets, the family minor-version compatibility reaches; `?`
    when the pool's driver is not known; `~` marks a driver the AMI only may pick."""
    c = pool.get("cudaCeiling")
    if not c or not c["drivers"]:
        return "?"
    mvc = c["minorVersionCompatibility"]
    text = f"{c['native'] or '-'}" + (f" ({mvc})" if mvc else "")
    return text + ("" if all(d["certain"] for d in c["drivers"]) else " ~")
def _numa(pool: NodePoolSpec) -> dict[str, Any]:
    """The kubelet's CPU and topology managers (decisions/numa.py): `aligned` when pods get pinned CPUs."""
    k = pool_kubelet(pool)
    return {"aligned": k.aligned, "cpuManagerPolicy": k.cpu_manager_policy,
            "topologyManagerPolicy": k.topology_manager_policy, "topologyManagerScope": k.topology_manager_scope,
            "reservedSystemCpus": k.reserved_system_cpus}


def numa_text(pool: dict[str, Any]) -> str:
    """`restricted/pod, 0-3 kept` on an aligned pool, `-` elsewhere."""
    numa = pool.get("numa") or {}
    if not numa.get("aligned"):
        return "-"
    kept = f", {numa['reservedSystemCpus']} kept" if numa.get("reservedSystemCpus") else ""
    return f"{numa['topologyManagerPolicy']}/{numa['topologyManagerScope']}{kept}"


def _sharing(pool: NodePoolSpec) -> dict[str, Any]:
    s = pool.sharing
    if s.mode == "time-slicing":
        return {"mode": s.mode, "replicas": s.replicas}
    if s.mode == "mig":
        return {"mode": s.mode, "layout": {p: n for p, n in sorted((s.layout or {}).items()) if n}}
    return {"mode": s.mode}


def sharing_text(sharing: dict[str, Any]) -> str:
    if sharing["mode"] == "time-slicing":
        return f"time-slicing x{sharing['replicas']}"
    if sharing["mode"] == "mig":
        return "MIG " + " + ".join(f"{n}x{p}" for p, n in sharing["layout"].items())
    return "whole GPUs"


def short(resource: str) -> str:
    """`nvidia.com/mig-1g.10gb` -> `mig-1g.10gb`: the vendor prefix is the same on every line."""
    return resource.split("/", 1)[-1]


def _allocation(pool: NodePoolSpec) -> dict[str, Any]:
    """How the pool's GPUs are handed out, on DRA pools and UltraServer pools (which use ComputeDomains either
    way); nothing on the others, whose GPUs are the device plugin's."""
    if not is_dra(pool) and not is_ultraserver(pool):
        return {}
    return {"gpuAllocation": pool.gpu_allocation, **({"computeDomains": True} if is_ultraserver(pool) else {})}


def _allocation_text(p: dict[str, Any]) -> str:
    how = {"dra": " (DRA claims", "device-plugin": " (device plugin"}.get(p.get("gpuAllocation", ""), "")
    return how + ("; IMEX by ComputeDomains)" if p.get("computeDomains") else ")" if how else "")


def text(section: dict[str, Any]) -> str:
    rows = []
    for p in section["pools"]:
        for i, (res, per_node) in enumerate(p["perNode"].items()):
            shared = sharing_text(p["sharing"]) + _allocation_text(p)
            head = [p["name"], p["gpu"], shared, _nodes(p),
                    count(p["physicalGpusPerNode"]), count(p["physicalGpusAtMax"]), scratch(p), numa_text(p),
                    cuda_text(p)] if i == 0 else [""] * 9
            rows.append([*head, res, count(per_node), count(p["atMax"][res])])
    lines = text_table(["Pool", "GPU", "Sharing", "Nodes", "GPUs/node", "GPUs at max", "Scratch/node", "NUMA pinning",
                        "CUDA",
                        "Resource", "Per node", "At max"], rows, right=(3, 4, 5, 6, 10, 11))
    lines.append("")
    res_rows = [[r["resource"], count(r["capacityAtMax"]), count(r["teamQuota"]), percent(r["quotaToCapacity"]),
                 "OVERCOMMITTED" if r["overcommitted"] else ""] for r in section["resources"]]
    lines += text_table(["Resource", "At max", "Team quotas", "Quota/capacity", ""], res_rows, right=(1, 2, 3))
    lines.append(f"  Physical GPUs at max size: {count(section['total']['physicalGpusAtMax'])}; "
                 f"MIG strategy {section['migStrategy']}. {_verdict(section)}")
    return "\n".join(lines)


def scratch(pool: dict[str, Any]) -> str:
    """Local NVMe scratch per node: `8,000 GB`, or `-` without it."""
    gb = pool.get("localScratchGBPerNode", 0)
    return f"{count(gb)} GB" if gb else "-"


def _verdict(section: dict[str, Any]) -> str:
    ratio = f"{section['quotaOvercommitRatio']:g}"
    if section["overcommitted"]:
        return (f"Team quotas exceed capacity at max size (allowed by quotaOvercommitRatio {ratio}): "
                "not every team can use its full quota at once.")
    return "Team quotas fit capacity at max size."


def markdown(section: dict[str, Any]) -> str:
    rows = [[p["name"], _nodes(p), f"{count(p['physicalGpusAtMax'])} x {p['gpu']}",
             sharing_text(p["sharing"]), scratch(p), cuda_text(p),
             ", ".join(f"{count(n)} {short(r)}" for r, n in p["atMax"].items())]
            for p in section["pools"]]
    rows.append(["**Total**", "", f"**{count(section['total']['physicalGpusAtMax'])} GPUs**", "", "", "",
                 ", ".join(f"{count(n)} {short(r)}" for r, n in section["total"]["atMax"].items())])
    quota = ", ".join(f"{count(r['teamQuota'])} {short(r['resource'])} ({percent(r['quotaToCapacity'])})"
                      for r in section["resources"] if r["teamQuota"])
    if quota:
        rows.append(["Team quotas", "", "", "", "", "", quota])
    headers = ["Pool", "Nodes", "GPUs at max", "Sharing", "Scratch/node", "CUDA ceiling",
               "Schedulable at max (nvidia.com/...)"]
    lines = [*md_table(headers, rows)]
    if section["overcommitted"]:
        lines += ["", f"⚠️ {_verdict(section)}"]
    return "\n".join(lines)


SECTION = register(Section(NAME, TITLE, build, text, markdown, needs_platform=True))
