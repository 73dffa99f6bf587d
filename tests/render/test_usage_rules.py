"""GPU usage recording rules under promtool: synthetic kube-state-metrics and dcgm-exporter series of each
allocation kind, checked against GPU counts and dollars worked out by hand, and a month of a team's quota in
use against the plan's team figure."""
from __future__ import annotations

import subprocess

import yaml

from gpu_platform.decisions.cost import team_costs
from gpu_platform.decisions.usage import PoolRate, UsageUnit, pool_rates, team_namespaces, usage_units
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog
from gpu_platform.render import usage_rules as u
from tests.support.stacks import stack_platform

# Hand-made units with round prices: a10g whole GPUs at $1/h, l4-ts replicas (4 per GPU) at $0.25/h,
# h100-mig 3g.40gb slices (3/7 of a GPU, $7/GPU-hour) at $3/h, b200-dra claimed GPUs at $5/h.
UNITS = (
    UsageUnit("a10g", "nvidia.com/gpu", "whole", 1.0, 1.0),
    UsageUnit("l4-ts", "nvidia.com/gpu", "time-sliced", 0.25, 0.25),
    UsageUnit("h100-mig", "nvidia.com/mig-3g.40gb", "mig", 3 / 7, 3.0, "NVIDIA H100 80GB HBM3"),
    UsageUnit("b200-dra", "dra", "dra", 1.0, 5.0),
)
RATES = (PoolRate("a10g", 1.0), PoolRate("l4-ts", 1.0), PoolRate("h100-mig", 7.0), PoolRate("b200-dra", 5.0))
TEAMS = {"research": "research", "inference": "inference"}
H100 = "NVIDIA H100 80GB HBM3"
NODES = {"n1": "a10g", "n2": "l4-ts", "n3": "h100-mig", "n4": "b200-dra"}


def series(metric: str, values: str, **labels: str) -> dict[str, str]:
    inner = ",".join(f'{k}="{v}"' for k, v in labels.items())
    return {"series": f"{metric}{{{inner}}}", "values": values}


def pod(namespace: str, name: str, node: str, resource: str, count: int, phase: str, values: str) -> list[dict]:
    """A pod's GPU request and its phase series as kube-state-metrics exports them."""
    out = [series("kube_pod_container_resource_requests", f"{count}x{values}", namespace=namespace, pod=name,
                  container="main", node=node, resource=resource, unit="integer")]
    for p in ("Pending", "Running", "Succeeded"):
        out.append(series("kube_pod_status_phase", f"{int(p == phase)}x{values}", namespace=namespace, pod=name,
                          phase=p))
    return out


def nodes(values: str) -> list[dict]:
    return [series("kube_node_labels", f"1x{values}", node=n, label_gpu_platform_io_pool=p) for n, p in NODES.items()]


def dcgm(metric: str, value: float, values: str, node: str, uuid: str, **labels: str) -> dict:
    return series(metric, f"{value:g}x{values}", node=node, UUID=uuid, gpu="0", modelName=labels.pop("model", "X"),
                  Hostname=node, **labels)


def run(promtool: str, tmp_path, groups: list[dict], tests: list[dict], interval: str = "1m") -> None:
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump({"groups": groups}, sort_keys=False))
    spec = {"rule_files": ["rules.yaml"], "evaluation_interval": interval, "tests": tests}
    (tmp_path / "tests.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    result = subprocess.run([promtool, "test", "rules", "tests.yaml"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


def kinds_input() -> list[dict]:
    v = "60"
    return [
        *nodes(v),
        *pod("research", "train", "n1", "nvidia_com_gpu", 2, "Running", v),  # 2 whole GPUs
        *pod("research", "waiting", "n1", "nvidia_com_gpu", 4, "Pending", v),  # not running: not allocated
        *pod("research", "notebook", "n2", "nvidia_com_gpu", 1, "Running", v),  # 1 replica of 4
        *pod("inference", "serve", "n2", "nvidia_com_gpu", 3, "Running", v),  # 3 replicas of 4
        *pod("inference", "eval", "n3", "nvidia_com_mig_3g_40gb", 2, "Running", v),  # 2 x 3/7 of a GPU
        # two GPUs a DRA claim gave one pod (one series per GPU, with the claim's labels)
        *(dcgm("DCGM_FI_DEV_GPU_TEMP", 40, v, "n4", f"GPU-d{i}", namespace="research", pod="big", container="main",
               dra_driver_name="gpu.nvidia.com", dra_claim_name="gpus", dra_claim_namespace="research")
          for i in range(2)),
        dcgm("DCGM_FI_DEV_GPU_TEMP", 40, v, "n4", "GPU-d9"),  # a GPU no claim holds
        # used: whole GPUs 0.5 and 0.3 busy; a time-sliced GPU 0.6 busy, reported for two pods; a MIG
        # instance 0.7 busy (3/7 of a GPU); the DRA pod's GPUs 1.0 and 0.5
        dcgm("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.5, v, "n1", "GPU-a0", namespace="research", pod="train"),
        dcgm("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.3, v, "n1", "GPU-a1", namespace="research", pod="train"),
        dcgm("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.6, v, "n2", "GPU-l0", namespace="research", pod="notebook"),
        dcgm("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.6, v, "n2", "GPU-l0", namespace="inference", pod="serve"),
        dcgm("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.7, v, "n3", "GPU-h0", namespace="inference", pod="eval", model=H100,
             GPU_I_ID="1", GPU_I_PROFILE="3g.40gb"),
        dcgm("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 1.0, v, "n4", "GPU-d0", namespace="research", pod="big"),
        dcgm("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.5, v, "n4", "GPU-d1", namespace="research", pod="big"),
        dcgm("DCGM_FI_PROF_GR_ENGINE_ACTIVE", 0.9, v, "n4", "GPU-d9"),  # no pod: nobody's usage
    ]


def check(record: str, rows: list[tuple[dict, float]], at: str = "30m") -> dict:
    """The recorded series `record` at `at`: exactly these label sets and values."""
    def labels(lab: dict) -> str:
        return record + "{" + ",".join(f'{k}="{v}"' for k, v in sorted(lab.items())) + "}"
    return {"expr": record, "eval_time": at, "exp_samples": [{"labels": labels(lab), "value": v} for lab, v in rows]}


def alloc(ns: str, pool: str, resource: str, kind: str) -> dict:
    return {"namespace": ns, "pool": pool, "resource": resource, "kind": kind}


RESEARCH_A10G = alloc("research", "a10g", "nvidia_com_gpu", "whole")
RESEARCH_TS = alloc("research", "l4-ts", "nvidia_com_gpu", "time-sliced")
INFERENCE_TS = alloc("inference", "l4-ts", "nvidia_com_gpu", "time-sliced")
INFERENCE_MIG = alloc("inference", "h100-mig", "nvidia_com_mig_3g_40gb", "mig")
RESEARCH_DRA = alloc("research", "b200-dra", "dra", "dra")


def test_each_allocation_kind_is_recorded_in_gpus_and_dollars_as_worked_out_by_hand(promtool, tmp_path):
    groups = u.usage_groups(UNITS, RATES, TEAMS)
    tests = [{"interval": "1m", "input_series": kinds_input(), "promql_expr_test": [
        check(u.ALLOCATED_UNITS, [(RESEARCH_A10G, 2), (RESEARCH_TS, 1), (INFERENCE_TS, 3), (INFERENCE_MIG, 2),
                                  (RESEARCH_DRA, 2)]),
        check(u.ALLOCATED_GPUS, [(RESEARCH_A10G, 2), (RESEARCH_TS, 0.25), (INFERENCE_TS, 0.75),
                                 (INFERENCE_MIG, 6 / 7), (RESEARCH_DRA, 2)]),
        check(u.ALLOCATED_USD, [(RESEARCH_A10G, 2), (RESEARCH_TS, 0.25), (INFERENCE_TS, 0.75),
                                (INFERENCE_MIG, 6), (RESEARCH_DRA, 10)]),
        check(u.USED_GPUS, [({"namespace": "research", "pool": "a10g"}, 0.8),
                            ({"namespace": "research", "pool": "l4-ts"}, 0.3),
                            ({"namespace": "inference", "pool": "l4-ts"}, 0.3),
                            ({"namespace": "inference", "pool": "h100-mig"}, 0.3),
                            ({"namespace": "research", "pool": "b200-dra"}, 1.5)]),
        check(u.USED_USD, [({"namespace": "research", "pool": "a10g"}, 0.8),
                           ({"namespace": "research", "pool": "l4-ts"}, 0.3),
                           ({"namespace": "inference", "pool": "l4-ts"}, 0.3),
                           ({"namespace": "inference", "pool": "h100-mig"}, 2.1),
                           ({"namespace": "research", "pool": "b200-dra"}, 7.5)]),
    ]}]
    run(promtool, tmp_path, groups, tests)


def test_a_month_of_a_teams_quota_in_use_costs_the_plans_team_figure(promtool, tmp_path):
    """mig-slices: `evaluation` holds 4 x 3g.40gb and 4 x 2g.20gb, offered by one on-demand pool; its pods hold
    them every hour of a month (catalog.HOURS_PER_MONTH), and the recorded dollars add up to the plan's figure."""
    spec = parse_platform(stack_platform("mig-slices"))
    [team] = [c for c in team_costs(spec) if c.name == "evaluation"]
    groups = u.usage_groups(tuple(usage_units(spec)), tuple(pool_rates(spec)), team_namespaces(spec))
    hours = catalog.HOURS_PER_MONTH
    v = str(hours)  # samples at 0h..730h, one an hour
    inputs = [series("kube_node_labels", f"1x{v}", node="n1", label_gpu_platform_io_pool="h100-mig")]
    for share in team.shares:
        resource = share.resource.replace("nvidia.com/", "nvidia_com_").replace("-", "_").replace(".", "_")
        inputs += pod("evaluation", resource, "n1", resource, share.quota, "Running", v)
    month = f"sum(sum_over_time({u.ALLOCATED_USD}{{namespace=\"evaluation\"}}[{hours * 60 - 1}m:1h]))"
    gpu_hours = f"sum(sum_over_time({u.ALLOCATED_GPUS}{{namespace=\"evaluation\"}}[{hours * 60 - 1}m:1h]))"
    gpus = sum(s.quota * catalog.mig_compute_share(spec.node_pools[0].gpu, s.resource.split("mig-")[1])
               for s in team.shares)
    tests = [{"interval": "1h", "input_series": inputs, "promql_expr_test": [
        {"expr": f"abs({month} - {team.on_demand_monthly!r}) < bool 1e-6", "eval_time": f"{hours}h",
         "exp_samples": [{"labels": "{}", "value": 1}]},
        {"expr": f"abs({gpu_hours} - {gpus * hours!r}) < bool 1e-9", "eval_time": f"{hours}h",
         "exp_samples": [{"labels": "{}", "value": 1}]},
    ]}]
    assert team.on_demand_monthly > 0
    run(promtool, tmp_path, groups, tests, interval="1h")
