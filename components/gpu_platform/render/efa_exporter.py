"""The EFA collector: serves the EFA devices' byte and packet counters of the node it runs on as Prometheus text.

This module runs on the node as it is (the Python standard library only: it is shipped as text in the EFA
collector's ConfigMap, render/efa_metrics.py). It reads /sys through a read-only mount: every device under
class/infiniband whose `device/driver` resolves to the `efa` driver, and in each of its ports the counters named
in COUNTERS from `hw_counters/`. Other RDMA devices (mlx5, irdma...) are skipped: node_exporter's InfiniBand
collector covers those. Each counter is served as `gpu_platform_efa_<counter>_total{device, port}`; the node
comes from the scrape (the PodMonitor's relabelling), as for every other node series.
"""
from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PREFIX = "gpu_platform_efa_"
DRIVER = "efa"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
DEVICES_METRIC = f"{PREFIX}devices"  # how many EFA devices the node shows: 0 means no counter can follow


@dataclass(frozen=True)
class Sample:
    counter: str  # the driver's file name, e.g. rx_bytes
    device: str
    port: str
    value: int


def metric_name(counter: str) -> str:
    return f"{PREFIX}{counter}_total"


def efa_devices(sys_root: Path) -> list[Path]:
    """The class/infiniband entries whose device is bound to the EFA driver, by name."""
    base = sys_root / "class" / "infiniband"
    if not base.is_dir():
        return []
    return [entry for entry in sorted(base.iterdir(), key=lambda p: p.name)
            if os.path.basename(os.path.realpath(entry / "device" / "driver")) == DRIVER]


def _counter(path: Path) -> int | None:
    """A counter file's value; None when it is absent, unreadable or not a count (older drivers lack some)."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def read_samples(sys_root: Path, counters: Sequence[str]) -> list[Sample]:
    """Every named counter of every port of every EFA device under `sys_root`."""
    out = []
    for device in efa_devices(sys_root):
        ports = device / "ports"
        for port in sorted(ports.iterdir(), key=lambda p: p.name) if ports.is_dir() else []:
            for counter in counters:
                value = _counter(port / "hw_counters" / counter)
                if value is not None:
                    out.append(Sample(counter, device.name, port.name, value))
    return out


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def exposition(samples: Iterable[Sample], devices: int, counters: Sequence[str]) -> str:
    """Prometheus' text format: one counter family per driver counter, then the device count."""
    by_counter: dict[str, list[Sample]] = {c: [] for c in counters}
    for s in samples:
        by_counter.setdefault(s.counter, []).append(s)
    lines = []
    for counter, rows in by_counter.items():
        name = metric_name(counter)
        lines += [f"# HELP {name} EFA hw_counters/{counter} of the device's port, since the driver loaded.",
                  f"# TYPE {name} counter"]
        lines += [f'{name}{{device="{_escape(s.device)}",port="{_escape(s.port)}"}} {s.value}' for s in rows]
    lines += [f"# HELP {DEVICES_METRIC} Devices bound to the EFA driver on this node.",
              f"# TYPE {DEVICES_METRIC} gauge", f"{DEVICES_METRIC} {devices}"]
    return "\n".join(lines) + "\n"


def scrape(sys_root: Path, counters: Sequence[str]) -> str:
    return exposition(read_samples(sys_root, counters), len(efa_devices(sys_root)), counters)


def server(address: str, port: int, sys_root: Path, counters: Sequence[str]) -> ThreadingHTTPServer:
    """An HTTP server answering GET /metrics with a fresh read of the counters (port 0: any free port)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path.split("?", 1)[0] != "/metrics":
                self.send_error(404, "only /metrics")
                return
            body = scrape(sys_root, counters).encode()
            self.send_response(200)
            self.send_header("Content-Type", CONTENT_TYPE)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            return  # a scrape every 30 s is not worth a log line

    return ThreadingHTTPServer((address, port), Handler)


def main(env: dict[str, str]) -> int:
    counters = [c for c in env.get("COUNTERS", "").split(",") if c]
    if not counters:
        print("COUNTERS: required (comma-separated hw_counters file names)", file=sys.stderr)
        return 2
    httpd = server("", int(env.get("PORT", "9810")), Path(env.get("SYS_ROOT", "/host/sys")), counters)
    httpd.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(dict(os.environ)))
