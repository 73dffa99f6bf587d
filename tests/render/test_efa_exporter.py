"""The EFA collector's script (render/efa_exporter.py) against a fake /sys laid out as the kernel lays it out:
class/infiniband/<device> links to the PCI device, whose `driver` links to the bound driver; the EFA driver's
counters sit in ports/<port>/hw_counters/. A Mellanox device beside it must be skipped."""
from __future__ import annotations

import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from gpu_platform.facts import catalog
from gpu_platform.render import efa_exporter as x

COUNTERS = catalog.EFA_PORT_COUNTERS


def device(sys_root: Path, name: str, pci: str, driver: str, counters: dict[str, str], port: str = "1") -> None:
    """One RDMA device: its PCI directory bound to `driver`, and the class entry linking to it (relative links,
    as sysfs has them, so they resolve under any mount point)."""
    drivers = sys_root / "bus" / "pci" / "drivers" / driver
    drivers.mkdir(parents=True, exist_ok=True)
    pci_dir = sys_root / "devices" / "pci0000:00" / pci
    hw = pci_dir / "infiniband" / name / "ports" / port / "hw_counters"
    hw.mkdir(parents=True)
    (pci_dir / "driver").symlink_to(Path("../../../bus/pci/drivers") / driver)
    for counter, value in counters.items():
        (hw / counter).write_text(f"{value}\n")
    (hw / "lifespan").write_text("10\n")  # rdma core's refresh interval: not a counter
    klass = sys_root / "class" / "infiniband"
    klass.mkdir(parents=True, exist_ok=True)
    (pci_dir / "infiniband" / name / "device").symlink_to(Path("../.."))
    (klass / name).symlink_to(Path("../../devices/pci0000:00") / pci / "infiniband" / name)


@pytest.fixture
def sys_root(tmp_path) -> Path:
    root = tmp_path / "sys"
    device(root, "rdmap16s27", "0000:10:1b.0", "efa", {"rx_bytes": "1000", "tx_bytes": "2000", "rdma_read_bytes": "300",
                                                      "rdma_write_bytes": "400", "rx_drops": "0"})
    device(root, "rdmap32s27", "0000:20:1b.0", "efa", {"rx_bytes": "5", "tx_bytes": "6"})
    device(root, "mlx5_0", "0000:30:00.0", "mlx5_core", {"rx_bytes": "999", "tx_bytes": "999"})
    return root


def test_only_devices_bound_to_the_efa_driver_count(sys_root):
    assert [d.name for d in x.efa_devices(sys_root)] == ["rdmap16s27", "rdmap32s27"]


def test_a_node_without_infiniband_has_no_devices(tmp_path):
    assert x.efa_devices(tmp_path) == [] and x.read_samples(tmp_path, COUNTERS) == []


def test_each_named_counter_of_each_efa_port_is_read_and_others_are_not(sys_root):
    samples = {(s.device, s.port, s.counter): s.value for s in x.read_samples(sys_root, COUNTERS)}
    assert samples == {
        ("rdmap16s27", "1", "tx_bytes"): 2000, ("rdmap16s27", "1", "rx_bytes"): 1000,
        ("rdmap16s27", "1", "rx_drops"): 0, ("rdmap16s27", "1", "rdma_read_bytes"): 300,
        ("rdmap16s27", "1", "rdma_write_bytes"): 400,
        ("rdmap32s27", "1", "tx_bytes"): 6, ("rdmap32s27", "1", "rx_bytes"): 5}


def test_a_value_that_is_not_a_count_is_left_out(sys_root):
    hw = sys_root / "class" / "infiniband" / "rdmap32s27" / "ports" / "1" / "hw_counters"
    (hw / "tx_bytes").write_text("N/A\n")
    assert ("rdmap32s27", "tx_bytes") not in {(s.device, s.counter) for s in x.read_samples(sys_root, COUNTERS)}


def test_exposition_is_prometheus_text_with_counters_and_the_device_count(sys_root):
    text = x.scrape(sys_root, ["rx_bytes", "tx_bytes"])
    assert text == (
        "# HELP gpu_platform_efa_rx_bytes_total EFA hw_counters/rx_bytes of the device's port, since the driver loaded.\n"
        "# TYPE gpu_platform_efa_rx_bytes_total counter\n"
        'gpu_platform_efa_rx_bytes_total{device="rdmap16s27",port="1"} 1000\n'
        'gpu_platform_efa_rx_bytes_total{device="rdmap32s27",port="1"} 5\n'
        "# HELP gpu_platform_efa_tx_bytes_total EFA hw_counters/tx_bytes of the device's port, since the driver loaded.\n"
        "# TYPE gpu_platform_efa_tx_bytes_total counter\n"
        'gpu_platform_efa_tx_bytes_total{device="rdmap16s27",port="1"} 2000\n'
        'gpu_platform_efa_tx_bytes_total{device="rdmap32s27",port="1"} 6\n'
        "# HELP gpu_platform_efa_devices Devices bound to the EFA driver on this node.\n"
        "# TYPE gpu_platform_efa_devices gauge\n"
        "gpu_platform_efa_devices 2\n")


def test_promtool_accepts_the_exposition(promtool, sys_root):
    result = subprocess.run([promtool, "check", "metrics"], input=x.scrape(sys_root, COUNTERS), capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_server_answers_a_scrape_with_fresh_counters(sys_root):
    httpd = x.server("127.0.0.1", 0, sys_root, COUNTERS)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{httpd.server_address[1]}"
        with urllib.request.urlopen(f"{url}/metrics", timeout=10) as answer:
            assert answer.headers["Content-Type"] == x.CONTENT_TYPE
            assert 'gpu_platform_efa_rx_bytes_total{device="rdmap16s27",port="1"} 1000' in answer.read().decode()
        hw = sys_root / "class" / "infiniband" / "rdmap16s27" / "ports" / "1" / "hw_counters"
        (hw / "rx_bytes").write_text("4096\n")
        with urllib.request.urlopen(f"{url}/metrics", timeout=10) as answer:
            assert 'gpu_platform_efa_rx_bytes_total{device="rdmap16s27",port="1"} 4096' in answer.read().decode()
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"{url}/other", timeout=10)
        assert err.value.code == 404
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_script_runs_as_shipped_and_serves_on_its_port(sys_root, tmp_path):
    """As the DaemonSet runs it: `python3 <script>` with only the standard library, configured by environment."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = {"PORT": str(port), "SYS_ROOT": str(sys_root), "COUNTERS": ",".join(COUNTERS)}
    proc = subprocess.Popen([sys.executable, "-I", x.__file__], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        body = ""
        for _ in range(100):
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as answer:
                    body = answer.read().decode()
                break
            except OSError:
                time.sleep(0.1)
        assert "gpu_platform_efa_devices 2" in body
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_script_refuses_to_start_without_counters(tmp_path):
    result = subprocess.run([sys.executable, "-I", x.__file__], env={"SYS_ROOT": str(tmp_path)},
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 2 and "COUNTERS" in result.stderr
