"""Log-derived GPU alerts: the patterns on recorded log lines, the rules under promtool, routing under amtool.

Fluent Bit is not packaged for this test machine's Debian (no `fluent-bit` candidate in apt), so its dry-run is
not used: the patterns are checked with Python's `re`, which reads these expressions as Onigmo does.
"""
from __future__ import annotations

import re
import subprocess

import pytest
import yaml

from gpu_platform.facts import log_patterns as lp
from gpu_platform.render import log_alerts, logging as logs
from gpu_platform.render.alerts import gpu_nodes
from tests.render.test_alert_routing import config_file, planned, route  # noqa: F401 (planned is a fixture)
from tests.support.stacks import spec_of, without_services

# Recorded lines, as each program writes them.
POSITIVE = {
    lp.CUDA_OOM: [
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "22.06 GiB of which 1.19 GiB is free. Including non-PyTorch memory, this process has 20.86 GiB memory in use.",
        "RuntimeError: CUDA error: out of memory",
        "cudaMalloc failed: cudaErrorMemoryAllocation",
    ],
    lp.NCCL_ERROR: [
        "ip-10-0-1-17:1234:1290 [0] NCCL INFO NET/OFI ... ip-10-0-1-17:1234:1290 [0] NCCL WARN NET/OFI Request "
        "completed with error",
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
        "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
        "ncclUnhandledCudaError: Call to CUDA function failed.",
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
    ],
    lp.NCCL_TIMEOUT: [
        "[rank3]:[E1127 06:12:44.123456 140 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=4411, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran "
        "for 600023 milliseconds before timing out.",
    ],
    lp.XID: [
        "NVRM: Xid (PCI:0000:10:1c): 79, pid=1234, name=python, GPU has fallen off the bus.",
        "NVRM: Xid (PCI:0000:a0:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) "
        "has been detected on GPU in the framebuffer at partition 6, subpartition 0.",
    ],
    lp.OOM_KILL: [
        "Memory cgroup out of memory: Killed process 48211 (python) total-vm:81234567kB, anon-rss:31234567kB, "
        "file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:123456kB oom_score_adj:999",
    ],
}
# Ordinary output: training progress, NCCL's INFO chatter, memory summaries, the kernel's routine lines.
NEGATIVE = [
    "Epoch 3/10 step 1200 loss=1.873 lr=3.0e-4 gpu_mem=18.2GiB",
    "ip-10-0-1-17:1234:1290 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM",
    "NCCL INFO Init COMPLETE comm 0x55d0 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 101c0 commId 0x1 - Init COMPLETE",
    "torch.cuda.memory_summary(): allocated 12.1 GiB, reserved 14.0 GiB, out of 22.0 GiB",
    "Setting NCCL_TIMEOUT=1800 for this job",
    "NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.95.05",
    "nvidia-modeset: Loading NVIDIA Kernel Mode Setting Driver for UNIX platforms",
    "oom_score_adj set to 999 for the data loader",
    "INFO: checkpoint saved to /checkpoints/step-1200 (out of memory pressure: none)",
]


@pytest.mark.parametrize("pattern", lp.LOG_PATTERNS, ids=lambda p: p.metric)
def test_each_pattern_matches_its_recorded_lines_and_no_ordinary_output(pattern):
    for line in POSITIVE[pattern]:
        assert re.search(pattern.regex, line), line
    for line in NEGATIVE:
        assert not re.search(pattern.regex, line), line
    others = [line for p, lines in POSITIVE.items() if p is not pattern for line in lines]
    assert not [line for line in others if re.search(pattern.regex, line)]


def test_fluent_bit_counts_every_pattern_with_its_own_regex():
    filters = logs.filters(spec_of("prod"))
    for p in lp.LOG_PATTERNS:
        key = "MESSAGE" if p.source == "kernel" else "log"
        assert f"    metric_name {p.metric}\n" in filters
        assert f"    regex {key} {p.regex}\n" in filters
    assert filters.count("kubernetes_mode On") == 3 and filters.count("add_label node ${NODE_NAME}") == 2


# --- promtool: rules and unit tests on synthetic counters ---

def _write(promtool: str, tmp_path, tests: list[dict]) -> subprocess.CompletedProcess:
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": [log_alerts.log_rule_group(gpu_nodes())]}))
    spec = {"rule_files": ["rules.yaml"], "evaluation_interval": "1m", "tests": tests}
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    return subprocess.run([promtool, "test", "rules", "tests.yaml"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120)


def _pod_series(metric: str, values: str, namespace: str = "research") -> dict:
    labels = f'namespace_name="{namespace}",pod_name="train-0",container_name="trainer",docker_id="abc"'
    return {"series": f"{lp.METRIC_PREFIX}{metric}{{{labels}}}", "values": values}


def _fired(name: str, labels: dict) -> dict:
    [rule] = [r for r in log_alerts.log_alert_rules(gpu_nodes()) if r["alert"] == name]
    summary = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels[m.group(1)], rule["annotations"]["summary"])
    return {"exp_labels": {**rule["labels"], **labels},
            "exp_annotations": {"summary": summary, "description": rule["annotations"]["description"]}}


def _passes(promtool: str, tmp_path, tests: list[dict]) -> None:
    result = _write(promtool, tmp_path, tests)
    assert result.returncode == 0, result.stdout + result.stderr


POD = {"namespace": "research", "pod": "train-0", "container": "trainer"}


@pytest.mark.parametrize("name,metric", [("GpuLogCudaOutOfMemory", "cuda_oom"), ("GpuLogNcclError", "nccl_error"),
                                         ("GpuLogNcclTimeout", "nccl_timeout")])
def test_container_alerts_fire_on_a_new_line_and_fall_silent_after_the_window(promtool, tmp_path, name, metric):
    result = _write(promtool, tmp_path, [{
        "interval": "1m",
        # absent for 5 minutes, then the first line (the counter appears at 1), a second at minute 30
        "input_series": [_pod_series(metric, "_x5 1x24 2x30")],
        "alert_rule_test": [
            {"eval_time": "4m", "alertname": name, "exp_alerts": []},
            {"eval_time": "6m", "alertname": name, "exp_alerts": [_fired(name, POD)]},
            {"eval_time": "25m", "alertname": name, "exp_alerts": []},
            {"eval_time": "31m", "alertname": name, "exp_alerts": [_fired(name, POD)]},
        ],
    }])
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_steady_counter_is_silent(promtool, tmp_path):
    _passes(promtool, tmp_path, [{"interval": "1m", "input_series": [_pod_series("cuda_oom", "3x60")],
                                 "alert_rule_test": [{"eval_time": "40m", "alertname": "GpuLogCudaOutOfMemory",
                                                      "exp_alerts": []}]}])


def test_xid_and_oom_kill_alert_per_gpu_node(promtool, tmp_path):
    xid = f'{lp.METRIC_PREFIX}xid{{node="gpu-1"}}'
    oom_gpu, oom_cpu = (f'{lp.METRIC_PREFIX}oom_kill{{node="{n}"}}' for n in ("gpu-1", "cpu-1"))
    taint = 'kube_node_spec_taint{node="gpu-1",key="nvidia.com/gpu",value="true",effect="NoSchedule"}'
    _passes(promtool, tmp_path, [{
        "interval": "1m",
        "input_series": [{"series": xid, "values": "0x5 1x20"}, {"series": oom_gpu, "values": "_x5 1x20"},
                         {"series": oom_cpu, "values": "_x5 1x20"}, {"series": taint, "values": "1x30"}],
        "alert_rule_test": [
            {"eval_time": "7m", "alertname": "GpuLogXid", "exp_alerts": [_fired("GpuLogXid", {"node": "gpu-1"})]},
            {"eval_time": "7m", "alertname": "GpuLogOomKill",
             "exp_alerts": [_fired("GpuLogOomKill", {"node": "gpu-1"})]},
        ],
    }])


def test_promtool_checks_the_rules(promtool, tmp_path):
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": [log_alerts.log_rule_group(gpu_nodes())]}))
    result = subprocess.run([promtool, "check", "rules", "rules.yaml"], cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0 and "5 rules found" in result.stdout, result.stdout + result.stderr


def test_every_log_alert_has_a_runbook():
    for rule in log_alerts.log_alert_rules(gpu_nodes()):
        assert len(rule["annotations"]["description"]) > 120, rule["alert"]


# --- amtool: each reaches the team of its namespace, node-level ones the platform ---

@pytest.mark.parametrize("labels,receiver", [
    ({"alertname": "GpuLogNcclTimeout", "severity": "high", "namespace": "inference"}, "inference-oncall"),
    ({"alertname": "GpuLogCudaOutOfMemory", "severity": "high", "namespace": "inference"}, "inference-oncall"),
    ({"alertname": "GpuLogNcclError", "severity": "high", "namespace": "research"}, "platform-chat"),
    ({"alertname": "GpuLogXid", "severity": "critical", "node": "gpu-1"}, "platform-pager"),
    ({"alertname": "GpuLogOomKill", "severity": "high", "node": "gpu-1"}, "platform-chat"),
])
def test_routing_sends_each_log_alert_to_its_namespace_team(amtool, planned, labels, receiver):  # noqa: F811
    assert route(amtool, config_file(planned, "prod"), **labels) == receiver


def test_the_log_alerts_are_a_prometheus_rule_of_the_pipeline_only_with_logging_and_prometheus():
    from gpu_platform.facts import names
    from tests.support.plans import plan
    from tests.support.stacks import resources, stack_platform

    rule_type = "kubernetes:monitoring.coreos.com/v1:PrometheusRule"

    def rules(platform: dict) -> dict:
        return {r["inputs"]["metadata"]["name"]: r["inputs"] for r in resources(plan(platform), rule_type)}

    found = rules(stack_platform("dev"))[names.LOG_RULES_NAME]
    assert found["metadata"]["namespace"] == "monitoring"
    assert found["spec"]["groups"] == [log_alerts.log_rule_group(gpu_nodes())]
    off = stack_platform("dev")
    off["logging"] = {"enabled": False}
    assert names.LOG_RULES_NAME not in rules(off) and names.GPU_RULES_NAME in rules(off)
    no_prometheus = stack_platform("dev")
    no_prometheus["monitoring"] = {"prometheus": {"mode": "none"}}
    without_services(no_prometheus)  # services scale on Prometheus
    for team in no_prometheus["teams"]:
        team.pop("alerting", None)
    assert rules(no_prometheus) == {}
