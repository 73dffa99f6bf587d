"""Which DCGM fields dcgm-exporter collects, and the GPU Operator values that turn them on.

The field list is data: each field says whether it exists on every GPU in the catalog and, if not,
what the exporter does on a GPU that lacks it. Profiling fields (DCGM_FI_PROF_*) need the profiling
module's support for the GPU: asking for one a GPU lacks fails the exporter (DCGM_FI_PROF_PIPE_FP64_ACTIVE
on an A10G), so those are collected only when every GPU has them. Device fields (DCGM_FI_DEV_*) a GPU
lacks come back as DCGM's "not supported"/blank sentinel values, which dcgm-exporter skips (no series;
its ToString returns SkipDCGMValue for every blank and not-supported sentinel): the datacenter health
fields (ECC, row remapping, NVLink errors, HBM temperature) are collected cluster-wide and simply have
no series on GPUs without them. The alerts and the dashboard read only fields from this CSV; tests hold
all three together.
"""
from __future__ import annotations

from typing import Any

import re
from dataclasses import dataclass

CSV_KEY = "dcgm-metrics.csv"  # the key the GPU Operator mounts as the exporter's collectors file
SCRAPE_INTERVAL = "15s"

# Catalog GPU keys whose field support was reviewed for the flags below. A GPU added to the catalog
# must be reviewed (and added here) before its pools are monitored with this CSV.
# Blackwell (B200, B300, RTX PRO 6000): DCGM reads Hopper's and newer GPUs' profiling fields through NVML's GPM
# (DCGM API reference, Profiling), so the cluster-wide profiling fields below exist on them too.
# GB200 is the B200's Blackwell GPU with HBM3e and NVLink (to the NVL72 switch tray): the same fields.
REVIEWED_GPUS = ("A10G", "L4", "L40S", "A100-SXM4-40GB", "A100-SXM4-80GB", "H100-80GB-HBM3", "H200", "B200", "B300",
                 "GB200", "RTX-PRO-6000")
# memory temperature, row remapping
HBM_GPUS = ("A100-SXM4-40GB", "A100-SXM4-80GB", "H100-80GB-HBM3", "H200", "B200", "B300", "GB200")
NVLINK_GPUS = HBM_GPUS  # the SXM boards of p4d/p4de/p5/p5e/p5en/p6; the g-family PCIe boards have no NVLink
ECC_GPUS = REVIEWED_GPUS  # every reviewed board has ECC; on GDDR6/GDDR7 boards it can be switched off (then blank)


@dataclass(frozen=True)
class DcgmField:
    name: str
    prom_type: str  # gauge | counter
    help: str  # no commas: the exporter splits lines on them
    group: str  # comment heading in the CSV
    on_all_gpus: bool  # exists on every reviewed GPU: safe to collect cluster-wide
    note: str = ""  # why it is excluded, or what reads it
    gpus: tuple[str, ...] = ()  # where it exists, when not on every GPU (catalog GPU keys)

    @property
    def skipped_when_absent(self) -> bool:
        """A GPU without it reports DCGM's not-supported value, which the exporter skips (no series)."""
        return self.name.startswith("DCGM_FI_DEV_")


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
    DcgmField("DCGM_FI_DEV_MEMORY_TEMP", "gauge", "Memory temperature (in C).", "Temperature and power",
              False, "ad-hoc queries; HBM boards only (GDDR6 and GDDR7 boards report none)", gpus=HBM_GPUS),
    DcgmField("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", "Clocks", True,
              "throttling shows as a falling SM clock"),
    DcgmField("DCGM_FI_DEV_MEM_CLOCK", "gauge", "Memory clock frequency (in MHz).", "Clocks", True),
    DcgmField("DCGM_FI_DEV_CLOCKS_EVENT_REASONS", "gauge", "Current clock event reasons (bitmask).", "Clocks", True,
              "GpuClockThrottled, GpuPowerBrake (NVML clocks-event reasons; DCGM field 112)"),
    DcgmField("DCGM_FI_DEV_XID_ERRORS", "gauge", "Value of the last XID error encountered.", "Errors", True,
              "GpuXidError, dashboard"),
    DcgmField("DCGM_FI_DEV_PCIE_REPLAY_COUNTER", "counter", "Total number of PCIe retries.", "Errors", True),
    DcgmField("DCGM_FI_PROF_PCIE_TX_BYTES", "gauge", "PCIe bytes transmitted per second.", "PCIe", True),
    DcgmField("DCGM_FI_PROF_PCIE_RX_BYTES", "gauge", "PCIe bytes received per second.", "PCIe", True),
    # Not on every catalog GPU. A profiling field is never collected cluster-wide (it fails the exporter
    # on GPUs without it); a device field is, and has no series where the GPU lacks it.
    DcgmField("DCGM_FI_PROF_PIPE_FP64_ACTIVE", "gauge", "Ratio of cycles the FP64 pipe is active.",
              "Utilisation", False, "absent on A10G: requesting it crashes dcgm-exporter",
              gpus=("A100-SXM4-40GB", "A100-SXM4-80GB", "H100-80GB-HBM3", "H200", "B200")),
    DcgmField("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "counter", "Volatile single-bit ECC errors (corrected).",
              "Datacenter health", False, "ad-hoc queries; blank where ECC is off", gpus=ECC_GPUS),
    DcgmField("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "counter", "Volatile double-bit ECC errors (uncorrected).",
              "Datacenter health", False, "GpuEccUncorrectable; blank where ECC is off", gpus=ECC_GPUS),
    DcgmField("DCGM_FI_DEV_CORRECTABLE_REMAPPED_ROWS", "counter", "Rows remapped for correctable errors.",
              "Datacenter health", False, "ad-hoc queries; row remapping is an HBM feature", gpus=HBM_GPUS),
    DcgmField("DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS", "counter", "Rows remapped for uncorrectable errors.",
              "Datacenter health", False, "ad-hoc queries; row remapping is an HBM feature", gpus=HBM_GPUS),
    DcgmField("DCGM_FI_DEV_ROW_REMAP_FAILURE", "gauge", "Whether remapping of rows has failed.",
              "Datacenter health", False, "GpuRowRemapFailure; row remapping is an HBM feature", gpus=HBM_GPUS),
    DcgmField("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "counter", "Total NVLink bandwidth counter.", "NVLink",
              False, "ad-hoc queries; A10G, L4, L40S and RTX PRO 6000 have no NVLink", gpus=NVLINK_GPUS),
    DcgmField("DCGM_FI_DEV_NVLINK_CRC_FLIT_ERROR_COUNT_TOTAL", "counter", "NVLink flow-control CRC errors.",
              "NVLink", False, "ad-hoc queries (corrected by replay)", gpus=NVLINK_GPUS),
    DcgmField("DCGM_FI_DEV_NVLINK_REPLAY_ERROR_COUNT_TOTAL", "counter", "NVLink retries.", "NVLink", False,
              "ad-hoc queries", gpus=NVLINK_GPUS),
    DcgmField("DCGM_FI_DEV_NVLINK_RECOVERY_ERROR_COUNT_TOTAL", "counter", "NVLink link recoveries.", "NVLink",
              False, "GpuNvlinkErrors", gpus=NVLINK_GPUS),
)

FIELDS_BY_NAME = {f.name: f for f in FIELDS}


def collected_fields() -> tuple[DcgmField, ...]:
    """The fields the exporter is asked for: those every catalog GPU has, and device fields the exporter
    skips on GPUs that lack them."""
    return tuple(f for f in FIELDS if f.on_all_gpus or f.skipped_when_absent)


def metrics_csv() -> str:
    """The exporter's collectors file: `DCGM field, prometheus type, help`, grouped under comments."""
    lines = [
        "# gpu-platform: DCGM fields collected on every GPU node.",
        "# Format: DCGM field, Prometheus metric type, help message. Lines starting with # are comments.",
        "# Profiling fields only where every supported GPU has them (a missing one can crash the exporter);",
        "# device fields a GPU lacks are reported as not supported and skipped by the exporter.",
    ]
    group = None
    for f in collected_fields():
        if f.group != group:
            group = f.group
            lines += ["", f"# {group}"]
        lines.append(f"{f.name}, {f.prom_type}, {f.help}")
    return "\n".join(lines) + "\n"


def exporter_values(csv_configmap_name: str, service_monitor_enabled: bool,
                    service_monitor_labels: dict[str, str], dra: bool = False) -> dict[str, Any]:
    """The `dcgmExporter:` block of the GPU Operator chart values.

    The chart renders `config.data` into a ConfigMap named `config.name` in the release namespace
    (create=true; key `dcgm-metrics.csv`), and the operator mounts it as the exporter's collectors file.
    The ServiceMonitor honours the exporter's own pod/namespace/container labels (the workload using
    the GPU) and drops the exporter pod's target labels of the same names, so an unallocated GPU is not
    attributed to the operator's namespace; it labels every series with the node it came from.
    With DRA pools, KUBERNETES_ENABLE_DRA makes the exporter attribute GPUs allocated by ResourceClaims to their
    pods (`dra_*` labels beside namespace and pod), which the usage records count as allocated (docs/usage.md).
    """
    return {
        "enabled": True,
        **({"env": [{"name": "KUBERNETES_ENABLE_DRA", "value": "true"}]} if dra else {}),
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
