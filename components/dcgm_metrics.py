"""Which DCGM fields dcgm-exporter collects, and the GPU Operator values that turn them on.

The field list is data: each field says whether it exists on every GPU in the catalog. Only those are
rendered into the exporter's CSV, because asking dcgm-exporter for a field a GPU lacks can crash it
(DCGM_FI_PROF_PIPE_FP64_ACTIVE on an A10G) or leave blank series. The alerts and the dashboard read only
fields from this CSV; tests hold all three together.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

CSV_KEY = "dcgm-metrics.csv"  # the key the GPU Operator mounts as the exporter's collectors file
SCRAPE_INTERVAL = "15s"

# Catalog GPU keys whose field support was reviewed for the flags below. A GPU added to the catalog
# must be reviewed (and added here) before its pools are monitored with this CSV.
REVIEWED_GPUS = ("A10G", "L4", "L40S", "A100-SXM4-40GB", "A100-SXM4-80GB", "H100-80GB-HBM3", "H200")


@dataclass(frozen=True)
class DcgmField:
    name: str
    prom_type: str  # gauge | counter
    help: str  # no commas: the exporter splits lines on them
    group: str  # comment heading in the CSV
    on_all_gpus: bool  # exists on every reviewed GPU: safe to collect cluster-wide
    note: str = ""  # why it is excluded, or what reads it


FIELDS: tuple[DcgmField, ...] = (
    DcgmField("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilisation (in %).", "Utilisation", True,
              "GpuIdle, dashboard; not reported for MIG instances"),
    DcgmField("DCGM_FI_PROF_GR_ENGINE_ACTIVE", "gauge", "Ratio of time the graphics engine is active.",
              "Utilisation", True, "dashboard: activity per MIG instance"),
    DcgmField("DCGM_FI_PROF_PIPE_TENSOR_ACTIVE", "gauge", "Ratio of cycles the tensor pipe is active.",
              "Utilisation", True, "dashboard"),
    DcgmField("DCGM_FI_PROF_DRAM_ACTIVE", "gauge", "Ratio of cycles the device memory interface is active.",
              "Utilisation", True, "dashboard"),
    DcgmField("DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", "Memory", True,
              "GpuMemoryNearLimit, dashboard"),
    DcgmField("DCGM_FI_DEV_FB_FREE", "gauge", "Framebuffer memory free (in MiB).", "Memory", True,
              "GpuMemoryNearLimit, dashboard"),
    DcgmField("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", "Temperature and power", True,
              "GpuTemperatureHigh, GpuNotDetected, dashboard"),
    DcgmField("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", "Temperature and power", True,
              "dashboard"),
    DcgmField("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", "Clocks", True,
              "throttling shows as a falling SM clock"),
    DcgmField("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", "Clocks", True),
    DcgmField("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", "Errors", True,
              "GpuXidError, dashboard"),
    DcgmField("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.", "Errors", True),
    DcgmField("DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "PCIe bytes transmitted per second.", "PCIe", True),
    DcgmField("DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "PCIe bytes received per second.", "PCIe", True),
    # Not on every catalog GPU: never collected cluster-wide.
    DcgmField("DCGM_FI_PROF_PIPE_FP64_ACTIVE", "gauge", "Ratio of cycles the FP64 pipe is active.",
              "Utilisation", False, "absent on A10G: requesting it crashes dcgm-exporter"),
    DcgmField("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "Total NVLink bandwidth counter.", "NVLink",
              False, "A10G, L4 and L40S have no NVLink"),
    DcgmField("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", "Temperature and power",
              False, "GDDR6 boards (A10G, L4, L40S) report no memory temperature"),
    DcgmField("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed.", "Errors",
              False, "row remapping is an HBM feature; unverified on the GDDR6 boards"),
    DcgmField("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Rows remapped for uncorrectable errors.",
              "Errors", False, "row remapping is an HBM feature; unverified on the GDDR6 boards"),
    DcgmField("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Volatile double-bit ECC errors.", "Errors", False,
              "blank where ECC is disabled, which GDDR6 boards allow"),
)

FIELDS_BY_NAME = {f.name: f for f in FIELDS}


def collected_fields() -> tuple[DcgmField, ...]:
    """The fields the exporter is asked for: only those every catalog GPU has."""
    return tuple(f for f in FIELDS if f.on_all_gpus)


def metrics_csv() -> str:
    """The exporter's collectors file: `DCGM field, prometheus type, help`, grouped under comments."""
    lines = [
        "# gpu-platform: DCGM fields collected on every GPU node.",
        "# Format: DCGM field, Prometheus metric type, help message. Lines starting with # are comments.",
        "# Only fields present on every supported GPU are listed: a missing field can crash the exporter.",
    ]
    group = None
    for f in collected_fields():
        if f.group != group:
            group = f.group
            lines += ["", f"# {group}"]
        lines.append(f"{f.name}, {f.prom_type}, {f.help}")
    return "\n".join(lines) + "\n"


def exporter_values(csv_configmap_name: str, service_monitor_enabled: bool,
                    service_monitor_labels: dict[str, str]) -> dict:
    """The `dcgmExporter:` block of the GPU Operator chart values.

    The chart renders `config.data` into a ConfigMap named `config.name` in the release namespace
    (create=true; key `dcgm-metrics.csv`), and the operator mounts it as the exporter's collectors file.
    The ServiceMonitor honours the exporter's own pod/namespace/container labels (the workload using
    the GPU) and drops the exporter pod's target labels of the same names, so an unallocated GPU is not
    attributed to the operator's namespace; it labels every series with the node it came from.
    """
    return {
        "enabled": True,
        "config": {"name": csv_configmap_name, "create": True, "data": metrics_csv()},
        "serviceMonitor": {
            "enabled": service_monitor_enabled,
            "interval": SCRAPE_INTERVAL,
            "honorLabels": True,
            "additionalLabels": dict(service_monitor_labels),
            "relabelings": [
                {"sourceLabels": ["__meta_kubernetes_pod_node_name"], "targetLabel": "node", "action": "replace"},
                {"regex": "pod|namespace|container", "action": "labeldrop"},
            ],
        },
    }


_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_LABEL_LISTS = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)")
_MATCHERS = re.compile(r"\{[^}]*\}")
_RANGES = re.compile(r"\[[^\]]*\]")
_IDENT = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*")
_KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left", "group_right", "bool",
             "offset", "inf", "nan"}


def metrics_in(expr: str) -> set[str]:
    """Metric names a PromQL expression reads (identifiers that are neither functions nor keywords)."""
    text = _RANGES.sub(" ", _MATCHERS.sub(" ", _LABEL_LISTS.sub(" ", _STRINGS.sub('""', expr))))
    names = set()
    for m in _IDENT.finditer(text):
        rest = text[m.end():].lstrip()
        if rest.startswith("(") or m.group().lower() in _KEYWORDS:
            continue
        if m.start() > 0 and (text[m.start() - 1].isdigit() or text[m.start() - 1] == "."):
            continue  # exponent or unit suffix of a number, e.g. 1e3, 5m
        names.add(m.group())
    return names
