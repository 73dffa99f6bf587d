"""The plan's `training` section: per pool its EFA, local NVMe scratch, datasets mount and the network
layers its multi-node Jobs prefer to share, and the datasets file system, each with what it adds to the bill.

Computed from the validated spec (decisions.efa, local_storage, datasets, cost). EFA interfaces and
instance-store NVMe come with the instance: they add nothing to the pool's price, and the section says
so rather than leaving the reader to wonder. JSON shape documented in docs/training.md; `VERSION`
changes only when a field changes meaning.
"""
from __future__ import annotations

from typing import Any, Optional

from gpu_platform.decisions.cost import Pricing, fsx_lustre_item
from gpu_platform.decisions.datasets import (
    MOUNT_PATH, SHARED_MOUNT_PATH, aggregate_throughput_mbps, associations, claim_teams, fsx_lustre, mounts_datasets,
    protected, shared_path, team_path, throughput,
)
from gpu_platform.decisions.efa import efa_pools, rdma
from gpu_platform.decisions.launch_template import efa_interface_count
from gpu_platform.decisions.local_storage import pool_local_storage
from gpu_platform.decisions.placement import subnet_index, subnet_indices
from gpu_platform.decisions.pod_sizing import team_fits
from gpu_platform.decisions.topology import proximity_layers
from gpu_platform.facts import catalog, names
from gpu_platform.planner.sections import PlanContext, Section, register
from gpu_platform.planner.tables import count, md_table, money, text_table
from gpu_platform.render import efa_metrics
from gpu_platform.render.monitoring import efa_metrics_wanted
from gpu_platform.render.monitoring import scraping_namespace
from gpu_platform.spec.models import NodePoolSpec, PlatformSpec
from gpu_platform.spec.pool_context import PoolContext

NAME = "training"
TITLE = "Training: EFA, local scratch and datasets"
VERSION = 1
INCLUDED = "in the instance price"
HEADERS = ["Pool", "Zones", "EFA", "Local scratch per node", "Datasets mount", "Extra cost"]


def build(ctx: PlanContext) -> Optional[dict[str, Any]]:
    return None if ctx.spec is None else from_spec(ctx.spec, ctx.stack.config.get("aws:region"))


def _zone_names(spec: PlatformSpec, region: Optional[str]) -> Optional[list[str]]:
    create = spec.cluster.create
    if region is None or create is None or create.vpc is None:
        return None
    from gpu_platform.decisions.network import all_zones

    return all_zones(region, create.vpc)


def from_spec(spec: PlatformSpec, region: Optional[str] = None) -> dict[str, Any]:
    zone_names = _zone_names(spec, region)
    return {
        "version": VERSION,
        "pools": [_pool(spec, p, zone_names) for p in spec.node_pools],
        "efaDevicePlugin": ({"chart": catalog.EFA_DEVICE_PLUGIN_CHART[1], "version": spec.efa_device_plugin.chart_version,
                             "namespace": catalog.EFA_DEVICE_PLUGIN_NAMESPACE, "pools": [p.name for p in efa_pools(spec)]}
                            if efa_pools(spec) else None),
        **({"efaMetrics": _efa_metrics(spec)} if efa_metrics_wanted(spec) else {}),
        "datasets": _datasets(spec, zone_names),
        "teams": [{"name": f.team, "largestPodGpus": f.gpus, "cpu": f.size.cpu_quantity,
                   "memory": f.size.memory_quantity, "fits": not f.problems, "problems": f.problems}
                  for f in team_fits(spec)],
    }


def _efa_metrics(spec: PlatformSpec) -> dict[str, Any]:
    """The EFA collector: where it runs, what it serves and who scrapes it (docs/monitoring.md#efa-throughput)."""
    return {"daemonSet": f"{efa_metrics.NAMESPACE}/{names.EFA_METRICS_NAME}", "image": catalog.PYTHON_IMAGE,
            "port": efa_metrics.PORT, "pools": [p.name for p in efa_pools(spec)],
            "podMonitor": f"{scraping_namespace(spec.monitoring)}/{names.EFA_METRICS_NAME}",
            "series": sorted(efa_metrics.EFA_METRICS)}


def _zones(spec: PlatformSpec, pool: NodePoolSpec, zone_names: Optional[list[str]]) -> Optional[list[str]]:
    """The pool's zones when known; None for every subnet of the cluster."""
    indices = subnet_indices(PoolContext.of(spec, pool), pool, zone_names)
    if indices is None:
        return None
    return [zone_names[i] for i in indices] if zone_names else [f"subnet {i + 1}" for i in indices]


def _pool(spec: PlatformSpec, pool: NodePoolSpec, zone_names: Optional[list[str]]) -> dict[str, Any]:
    cluster = spec.cluster.name
    interfaces = efa_interface_count(pool)
    scratch = pool_local_storage(pool)
    mounted = mounts_datasets(PoolContext.of(spec, pool), pool)
    return {
        "name": pool.name, "instanceType": pool.instance_types[0], "maxSize": pool.max_size,
        "zones": _zones(spec, pool, zone_names),
        "efa": {"enabled": pool.efa, "interfacesPerNode": interfaces, "rdma": rdma(pool),
                "driver": pool.ami.image.efa_driver if pool.efa else None,
                "placementGroup": names.placement_group_name(cluster, pool.name) if pool.efa else None,
                "securityGroup": names.efa_security_group_name(cluster, pool.name) if pool.efa else None},
        "localScratch": {"strategy": scratch.strategy, "setup": scratch.how or None, "disksPerNode": scratch.disks,
                         "gbPerNode": scratch.gb_per_node if scratch.mount else 0,
                         "gbAtMax": scratch.gb_per_node * pool.max_size if scratch.mount else 0,
                         "mount": scratch.mount, "note": scratch.reason},
        "datasets": {"mounted": mounted, "path": MOUNT_PATH if mounted else None},
        # the network-layer labels its nodes carry, bottom layer first: what multi-node Jobs prefer to share
        "networkLayers": [label for label, _ in proximity_layers([pool])],
        "monthlyUsdAtMax": 0.0, "cost": INCLUDED,
    }


def _datasets(spec: PlatformSpec, zone_names: Optional[list[str]]) -> Optional[dict[str, Any]]:
    fsx = fsx_lustre(spec)
    if fsx is None:
        return None
    item = fsx_lustre_item(fsx.deployment_type, throughput(fsx), fsx.storage_capacity_gib, Pricing.from_spec(spec.pricing))
    repo = fsx.data_repository
    index = subnet_index(spec, zone_names)
    return {
        "type": "fsx-lustre", "deploymentType": fsx.deployment_type, "storageGiB": fsx.storage_capacity_gib,
        "throughputPerTiB": throughput(fsx), "throughputMBps": aggregate_throughput_mbps(fsx),
        "zone": zone_names[index] if zone_names else f"subnet {index + 1}",
        "encryption": fsx.kms_key_arn or "AWS-managed FSx key", "protected": protected(fsx, spec.prod),
        "dataRepository": ({"s3Path": repo.s3_path, "fileSystemPath": repo.file_system_path,
                            "autoImport": repo.auto_import, "autoExport": repo.auto_export} if repo else None),
        "teams": [t.name for t in claim_teams(spec)], "mountPath": MOUNT_PATH,
        "directories": {t.name: team_path(fsx, t.name) for t in claim_teams(spec)},
        "shared": ({"path": shared_path(fsx), "mountPath": SHARED_MOUNT_PATH, "readOnly": True}
                   if fsx.shared else None),
        "owner": f"{fsx.owner.uid}:{fsx.owner.gid}",
        "links": [{"path": a.file_system_path, "s3Path": a.s3_path, "import": a.auto_import, "export": a.auto_export}
                  for a in associations(fsx, [t.name for t in claim_teams(spec)])],
        "csiAddonVersion": fsx.addon_version,
        "usdPerGbMonth": item.price.usd if item.price else None, "monthlyUsd": item.monthly_at_max,
        "source": item.price.source if item.price else None, "asOf": item.price.as_of if item.price else None,
    }


# --- rendering ---

def efa_text(efa: dict[str, Any]) -> str:
    if not efa["enabled"]:
        return "-"
    extra = ", GPUDirect RDMA" if efa["rdma"] else ""
    driver = "driver checked at boot" if efa["driver"] == "boot-check" else "driver in the AMI"
    return f"{efa['interfacesPerNode']} interfaces{extra}, {driver}"


def scratch_text(scratch: dict[str, Any]) -> str:
    if not scratch["mount"]:
        return f"none ({scratch['note']})"
    return f"{count(scratch['gbPerNode'])} GB RAID0 of {scratch['disksPerNode']} disk(s)"


def _rows(section: dict[str, Any]) -> list[list[str]]:
    return [[p["name"], ", ".join(p["zones"]) if p["zones"] else "all", efa_text(p["efa"]),
             scratch_text(p["localScratch"]), p["datasets"]["path"] or "-",
             _cost(p)] for p in section["pools"]]


def _cost(pool: dict[str, Any]) -> str:
    if not (pool["efa"]["enabled"] or pool["localScratch"]["mount"]):
        return "-"
    return f"+{money(pool['monthlyUsdAtMax'])}/month ({pool['cost']})"


def _datasets_line(d: dict[str, Any]) -> str:
    repo = d["dataRepository"]
    link = ""
    if repo:
        ways = [w for w, on in (("import", repo["autoImport"]), ("export", repo["autoExport"])) if on]
        link = f"; each directory linked to the same path under {repo['s3Path']} ({', '.join(ways) or 'linked'})"
    tier = f", {d['throughputPerTiB']} MB/s/TiB ({count(d['throughputMBps'])} MB/s)" if d["throughputPerTiB"] else ""
    shared = d.get("shared")
    area = f"; {shared['path']} read-only at {shared['mountPath']}" if shared else ""
    dirs = ", ".join(f"{team} {path}" for team, path in (d.get("directories") or {}).items()) or "none"
    return (f"Datasets: FSx for Lustre {d['deploymentType']}, {count(d['storageGiB'])} GiB{tier}, {d['zone']}, "
            f"encrypted ({d['encryption']}){', protected' if d['protected'] else ''}{link}; each team mounts only its "
            f"directory at {d['mountPath']} ({dirs}; owner {d.get('owner')}){area}; ${money(d['monthlyUsd'])}/month.")


def _plugin_line(section: dict[str, Any]) -> Optional[str]:
    plugin = section["efaDevicePlugin"]
    if plugin is None:
        return None
    return (f"EFA device plugin: {plugin['chart']} {plugin['version']} in {plugin['namespace']}, on "
            f"{', '.join(plugin['pools'])}.")


def _metrics_line(section: dict[str, Any]) -> Optional[str]:
    m = section.get("efaMetrics")
    if m is None:
        return None
    return (f"EFA metrics: DaemonSet {m['daemonSet']} on {', '.join(m['pools'])} (port {m['port']}), scraped by "
            f"PodMonitor {m['podMonitor']}: each EFA device's bytes and packets per port, beside GPU activity on the "
            "dashboards.")


def _team_lines(section: dict[str, Any]) -> list[str]:
    """Teams whose quota refuses their largest GPU pod at the workload helper's default sizes."""
    return [f"Team {t['name']}: its largest pod ({t['largestPodGpus']} GPUs) asks {t['cpu']} CPU and {t['memory']} by "
            f"default, beyond its quota ({'; '.join(t['problems'])}): raise the quota, lower maxGpusPerPod, or size "
            "such pods explicitly" for t in section["teams"] if not t["fits"]]


def _proximity_line(section: dict[str, Any]) -> Optional[str]:
    pools = [p for p in section["pools"] if p.get("networkLayers")]
    if not pools:
        return None
    layers = ", then ".join(label.rsplit("/", 1)[-1] for label in pools[0]["networkLayers"])
    return (f"Network proximity: multi-node Jobs (gpu_job nodes > 1) on {', '.join(p['name'] for p in pools)} prefer "
            f"nodes sharing {layers} with the Job's other pods.")


def _extra(section: dict[str, Any]) -> list[str]:
    lines = [_plugin_line(section), _metrics_line(section), _proximity_line(section),
             _datasets_line(section["datasets"]) if section["datasets"] else None]
    return [x for x in lines if x]


def text(section: dict[str, Any]) -> str:
    lines = text_table(HEADERS, _rows(section))
    return "\n".join([*lines, *(f"  {x}" for x in _extra(section)), *(f"  WARNING {x}" for x in _team_lines(section))])


def markdown(section: dict[str, Any]) -> str:
    lines = md_table(HEADERS, _rows(section))
    return "\n".join([*lines, *(f"\n{x}" for x in _extra(section)), *(f"\n⚠️ {x}" for x in _team_lines(section))])


SECTION = register(Section(NAME, TITLE, build, text, markdown, needs_platform=True))
