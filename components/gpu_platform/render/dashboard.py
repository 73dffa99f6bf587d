"""The GPU dashboard: Grafana JSON (a dict) for the Grafana sidecar to load from a ConfigMap.

Panels read only fields from the exporter's CSV (render.dcgm_metrics), the cost and usage series the rules
record, and, beside a pod's GPU activity, the kubelet's cAdvisor CPU and network series (CADVISOR_METRICS).
Every DCGM query matches both spellings of the exporter's host label (`Hostname`, and
`hostname` in builds after May 2026) so the node filter works on either.
"""
from __future__ import annotations

from typing import Any

from gpu_platform.render import usage_rules as usage
from gpu_platform.render.alerts import HOURLY_COST
from gpu_platform.render.efa_exporter import DEVICES_METRIC as EFA_DEVICES
from gpu_platform.render.efa_exporter import metric_name as efa_metric

UID = "gpu-platform-gpus"
FILE_NAME = f"{UID}.json"  # key in the dashboard ConfigMap
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
GPU_LEGEND = "{{Hostname}}{{hostname}} GPU {{gpu}} ({{modelName}})"
VARIABLES = ("datasource", "node", "model")


def dcgm(metric: str, *matchers: str) -> str:
    """A DCGM series filtered by the node and model variables, for either host label spelling."""
    extra = "".join(f",{m}" for m in matchers)
    return " or ".join(f'{metric}{{{host}=~"$node",modelName=~"$model"{extra}}}' for host in ("Hostname", "hostname"))


def _target(expr: str, legend: str = GPU_LEGEND, instant: bool = False) -> dict[str, Any]:
    target: dict[str, Any] = {"refId": "A", "datasource": DATASOURCE, "expr": expr, "legendFormat": legend}
    if instant:
        target.update(instant=True, range=False, format="table")
    return target


def _thresholds(red_at: float | None) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [{"color": "green", "value": None}]
    if red_at is not None:
        steps.append({"color": "red", "value": red_at})
    return {"mode": "absolute", "steps": steps}


def _panel(kind: str, title: str, expr: str, grid: tuple[int, int, int, int], unit: str = "short",
           red_at: float | None = None, description: str = "", **target: Any) -> dict[str, Any]:
    x, y, w, h = grid
    panel: dict[str, Any] = {
        "type": kind, "title": title, "description": description, "datasource": DATASOURCE,
        "gridPos": {"x": x, "y": y, "w": w, "h": h},
        "targets": [_target(expr, **target)],
        "fieldConfig": {"defaults": {"unit": unit, "thresholds": _thresholds(red_at)}, "overrides": []},
    }
    if kind == "timeseries" and red_at is not None:
        panel["fieldConfig"]["defaults"]["custom"] = {"thresholdsStyle": {"mode": "line"}}
    return panel


def panels(t: Any, efa: bool = False) -> list[dict[str, Any]]:
    idle_below = f"{t.idle_utilization_percent:g}"
    util = dcgm("DCGM_FI_DEV_GPU_UTIL")
    used, free = dcgm("DCGM_FI_DEV_FB_USED"), dcgm("DCGM_FI_DEV_FB_FREE")
    held = dcgm("DCGM_FI_DEV_GPU_UTIL", 'namespace!=""')  # GPUs a pod holds (exporter pod mapping)
    out = [
        _panel("stat", "GPUs reporting", f"count({dcgm('DCGM_FI_DEV_GPU_TEMP')})", (0, 0, 6, 4), legend=""),
        _panel("stat", f"GPUs under {idle_below}% utilisation", f"count(({util}) < {idle_below}) or vector(0)",
               (6, 0, 6, 4), legend=""),
        _panel("stat", "Hourly cost of GPUs under the idle threshold", f"sum(count by (modelName) (({util}) < "
               f"{idle_below}) * on (modelName) {HOURLY_COST}) or vector(0)", (12, 0, 6, 4), unit="currencyUSD",
               legend="", description="Estimate from the platform's price catalog; models without a price are "
               "not counted."),
        _panel("stat", "GPUs with an XID error", f"count(({dcgm('DCGM_FI_DEV_XID_ERRORS')}) != 0) or vector(0)",
               (18, 0, 6, 4), red_at=1, legend=""),
        _panel("timeseries", "GPU utilisation", util, (0, 4, 12, 8), unit="percent"),
        _panel("timeseries", "GPU memory used", f"100 * ({used}) / (({used}) + ({free}))", (12, 4, 12, 8),
               unit="percent", red_at=t.memory_used_percent),
        _panel("timeseries", "GPU temperature", dcgm("DCGM_FI_DEV_GPU_TEMP"), (0, 12, 12, 8), unit="celsius",
               red_at=t.temperature_celsius),
        _panel("timeseries", "GPU power draw", dcgm("DCGM_FI_DEV_POWER_USAGE"), (12, 12, 12, 8), unit="watt"),
        _panel("timeseries", "Busy GPUs per team namespace",
               f"sum by (namespace) ({held}) / 100", (0, 20, 12, 8),
               legend="{{namespace}}",
               description="Sum of utilisation of the GPUs each namespace's pods hold, in whole GPUs."),
        _panel("timeseries", "Graphics engine activity (whole GPUs and MIG instances)",
               f"100 * ({dcgm('DCGM_FI_PROF_GR_ENGINE_ACTIVE')})", (12, 20, 12, 8), unit="percent",
               legend=GPU_LEGEND + " {{GPU_I_PROFILE}}",
               description="MIG instances report no DCGM_FI_DEV_GPU_UTIL; this is their utilisation."),
        _panel("table", "Last XID per GPU (non-zero only)", f"({dcgm('DCGM_FI_DEV_XID_ERRORS')}) != 0",
               (0, 28, 24, 8), legend="", instant=True,
               description="The last XID code each GPU reported. 13 and 31 are usually the application; 48 "
               "(double-bit ECC) and 79 (fell off the bus) mean the node must be replaced."),
    ]
    out += usage_panels(efa=efa)
    for panel_id, panel in enumerate(out, start=1):
        panel["id"] = panel_id
    return out


WELL_RUN_UTILISATION = 60  # percent of allocated GPU time busy that a well-run fleet reaches (docs/usage.md)
CADVISOR_METRICS = frozenset({"container_cpu_cfs_throttled_periods_total", "container_cpu_cfs_periods_total",
                              "container_network_receive_bytes_total"})
POD_LEGEND = "{{namespace}}/{{pod}}"


def usage_panels(top: int = 36, efa: bool = False) -> list[dict[str, Any]]:
    """Fleet utilisation against the well-run line and idle cost, each team's GPUs, and each GPU pod's activity
    beside its CPU throttling and network intake (a data-feeding bottleneck shows as low activity beside high
    throttling or a flat network); with EFA pools, each EFA node's GPU activity beside its EFA throughput."""
    alloc, used = f"sum({usage.ALLOCATED_GPUS})", f"sum({usage.USED_GPUS})"
    fleet = _panel("timeseries", "Fleet GPU utilisation (busy / allocated)", f"100 * {used} / {alloc}",
                   (0, top, 12, 8), unit="percent", legend="fleet",
                   description=f"GPU time busy over GPU time allocated to pods; the line is {WELL_RUN_UTILISATION}%, "
                   "what a well-run fleet reaches.")
    fleet["fieldConfig"]["defaults"]["thresholds"] = {"mode": "absolute", "steps": [
        {"color": "red", "value": None}, {"color": "green", "value": WELL_RUN_UTILISATION}]}
    fleet["fieldConfig"]["defaults"]["custom"] = {"thresholdsStyle": {"mode": "line"}}
    per_team = f"sum by (team) ({usage.ALLOCATED_GPUS} * on (namespace) group_left (team) {usage.TEAM_INFO})"
    return [
        fleet,
        _panel("stat", "Idle GPU cost per hour (allocated, not busy)",
               f"sum({usage.ALLOCATED_USD}) - sum({usage.USED_USD})", (12, top, 6, 8), unit="currencyUSD", legend="",
               description="Allocated GPU dollars less busy GPU dollars, at the plan's unit prices."),
        _panel("stat", "GPU dollars per hour allocated", f"sum({usage.ALLOCATED_USD})", (18, top, 6, 8),
               unit="currencyUSD", legend=""),
        _panel("timeseries", "GPUs allocated per team", per_team, (0, top + 8, 12, 8), legend="{{team}}",
               description="GPU-equivalents held by the team's running pods (MIG slices at their compute share, "
               "time-sliced replicas as a fraction); compare with the team's quota in the plan."),
        _pod_activity((12, top + 8, 12, 8)),
        _pod_throttling((0, top + 16, 12, 8)),
        _pod_network((12, top + 16, 12, 8), efa),
        *(efa_panels(top + 24, 'node=~"$node"') if efa else []),
    ]


BUSY_POD = 'max by (namespace, pod) (DCGM_FI_PROF_GR_ENGINE_ACTIVE{pod!=""})'
GPU_PODS = f"on (namespace, pod) {BUSY_POD}"  # keeps only pods that hold a GPU


def _pod_activity(grid: tuple[int, int, int, int]) -> dict[str, Any]:
    return _panel("timeseries", "GPU activity per pod", f"100 * {BUSY_POD}", grid, unit="percent",
                  legend=POD_LEGEND)


def _pod_throttling(grid: tuple[int, int, int, int]) -> dict[str, Any]:
    throttled = ('sum by (namespace, pod) (rate(container_cpu_cfs_throttled_periods_total{container!=""}[5m])) / '
                 'sum by (namespace, pod) (rate(container_cpu_cfs_periods_total{container!=""}[5m]))')
    return _panel("timeseries", "CPU throttled share of GPU pods", f"100 * ({throttled}) and {GPU_PODS}", grid,
                  unit="percent", legend=POD_LEGEND,
                  description="CFS periods in which the pod's containers were throttled: high beside low GPU "
                  "activity means the CPU cannot feed the GPUs (GpuStarvedByCpu).")


def _pod_network(grid: tuple[int, int, int, int], efa: bool = False) -> dict[str, Any]:
    efa_traffic = ("the EFA panels show it per node" if efa else "no exporter the platform runs counts it")
    return _panel("timeseries", "Network received by GPU pods",
                  f'sum by (namespace, pod) (rate(container_network_receive_bytes_total{{interface!="lo"}}[5m])) '
                  f"and {GPU_PODS}", grid, unit="Bps", legend=POD_LEGEND,
                  description=f"The pod's network intake through the kernel (ENA). EFA traffic bypasses the kernel "
                  f"and {efa_traffic}; the file systems' throughput (CloudWatch) is on the "
                  "data-feeding dashboard of stacks that have one.")


# EFA throughput per node, from the platform's EFA collector (render/efa_metrics.py): (title, (counter, legend)...)
EFA_THROUGHPUT = (
    ("EFA bytes per second per node", (("rx_bytes", "received"), ("tx_bytes", "sent"))),
    ("EFA RDMA bytes per second per node", (("rdma_read_bytes", "RDMA read"), ("rdma_write_bytes", "RDMA write"))),
)
RATE_WINDOW = "5m"


def efa_rate(counter: str, node: str = "") -> str:
    """Bytes per second of one driver counter, every EFA device of a node added (`node`: a label matcher)."""
    return f"sum by (node) (rate({efa_metric(counter)}{{{node}}}[{RATE_WINDOW}]))"


def efa_node_activity(node: str = "") -> str:
    """The mean graphics-engine activity of the GPUs pods hold on each node that has EFA devices (percent)."""
    held = ",".join(m for m in ('pod!=""', node) if m)
    return f"100 * avg by (node) (DCGM_FI_PROF_GR_ENGINE_ACTIVE{{{held}}}) and on (node) {EFA_DEVICES}{{{node}}}"


def _multi(panel: dict[str, Any], exprs: list[tuple[str, str]]) -> dict[str, Any]:
    panel["targets"] = [{**_target(expr, legend), "refId": chr(ord("A") + i)} for i, (expr, legend) in enumerate(exprs)]
    return panel


def efa_panels(top: int, node: str = "") -> list[dict[str, Any]]:
    """Each EFA node's GPU activity beside its EFA throughput, in one row: GPUs idle while EFA runs at the
    instance's line rate is a collective waiting on the network."""
    activity = _panel("timeseries", "GPU activity on EFA nodes", efa_node_activity(node), (0, top, 8, 8),
                      unit="percent", legend="{{node}}",
                      description="Mean graphics-engine activity of the GPUs pods hold on each node with EFA devices.")
    rates = [_multi(_panel("timeseries", title, "", (8 * (i + 1), top, 8, 8), unit="Bps",
                           description="Every EFA device of the node added (the driver's hw_counters, scraped from "
                           "the platform's EFA collector). Near the instance type's EFA bandwidth while GPU "
                           "activity drops: the collective waits on the network."),
                    [(efa_rate(counter, node), f"{{{{node}}}} {legend}") for counter, legend in series])
             for i, (title, series) in enumerate(EFA_THROUGHPUT)]
    return [activity, *rates]


def pod_activity_panels(top: int, efa: bool = False) -> list[dict[str, Any]]:
    """Each GPU pod's activity, CPU throttling and network intake in one row (the data-feeding dashboard)."""
    return [_pod_activity((0, top, 8, 8)), _pod_throttling((8, top, 8, 8)), _pod_network((16, top, 8, 8), efa)]


def _variables() -> list[dict[str, Any]]:
    hosts = "query_result(count by (Hostname, hostname) (DCGM_FI_DEV_GPU_TEMP))"
    common = {"datasource": DATASOURCE, "refresh": 2, "includeAll": True, "multi": True, "allValue": ".*",
              "current": {"text": "All", "value": "$__all"}, "sort": 1}
    return [
        {"type": "datasource", "name": "datasource", "label": "Data source", "query": "prometheus"},
        {**common, "type": "query", "name": "node", "label": "Node",
         "query": {"query": hosts, "refId": "node"}, "definition": hosts,
         "regex": '/[Hh]ostname="([^"]+)"/'},
        {**common, "type": "query", "name": "model", "label": "GPU model",
         "query": {"query": "label_values(DCGM_FI_DEV_GPU_TEMP, modelName)", "refId": "model"},
         "definition": "label_values(DCGM_FI_DEV_GPU_TEMP, modelName)"},
    ]


def dashboard(thresholds: Any, efa: bool = False) -> dict[str, Any]:
    """The dashboard; threshold lines follow the stack file's alert thresholds; `efa`: the stack has EFA pools
    (the EFA panels)."""
    return {
        "uid": UID,
        "title": "GPU platform: GPUs",
        "tags": ["gpu-platform", "gpu", "dcgm"],
        "timezone": "browser",
        "schemaVersion": 39,
        "version": 1,
        "editable": True,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {"list": _variables()},
        "annotations": {"list": []},
        "panels": panels(thresholds, efa),
    }
