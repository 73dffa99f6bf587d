"""Time `gpu-platform plan` against the cost of importing the SDKs it needs.

    python benchmarks/plan_bench.py [--runs 5] [--pools 40] [--teams 200]

Runs the command as a subprocess (the way users and CI run it) on the dev and prod stacks and on a
large stack generated from stacks/Pulumi.dev.yaml (its pools and teams cloned under unique names),
each `--runs` times after one warm-up run, and prints medians of wall and CPU time, resources per
second, the ratio to the floor, and the cost of each extra resource (large minus dev).
The floor is the same interpreter importing only pulumi, the pulumi_aws submodules the program uses
and pulumi_kubernetes: what any Pulumi program of this shape pays before it registers anything.
Both SDKs load submodules lazily (an import is nearly free until first use), so a second figure, the
SDK floor, also loads every SDK module whose resource types the large plan registers (e.g.
pulumi_aws.ec2, pulumi_kubernetes.core.v1): the least any program registering those types pays.
CPU time (user + system of the child) is reported beside wall time because it is steadier on a
busy machine. The command runs without cyclic garbage collection (see planner/engine.py), which also
speeds up its imports: it can come in under the SDK floor, which is measured with the collector on.
This is a script, not a test: it asserts nothing.
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
FLOOR = ("import pulumi, pulumi_aws.eks, pulumi_aws.ec2, pulumi_aws.iam, pulumi_aws.efs, "
         "pulumi_aws.autoscaling, pulumi_kubernetes")
# The SDKs load submodules lazily, on first attribute access: touch each one so it really loads.
SDK_TOUCH = "import importlib; [getattr(importlib.import_module(m), '__all__', None) for m in %r]"


def sdk_modules(plan: dict) -> list[str]:
    """The SDK modules that define the plan's resource types: `kubernetes:rbac.authorization.k8s.io/v1:Role`
    -> pulumi_kubernetes.rbac.v1, `aws:vpc/securityGroupIngressRule:...` -> pulumi_aws.vpc."""
    modules = set()
    for type_ in {r["type"] for r in plan["resources"]}:
        package, module, _ = type_.split(":")
        if package == "aws":
            modules.add(f"pulumi_aws.{module.split('/')[0]}")
        elif package == "kubernetes":
            group, _, version = module.rpartition("/")
            known = group in ("core", "helm.sh") or group.endswith(".k8s.io")
            modules.add(f"pulumi_kubernetes.{group.split('.')[0]}.{version}" if known
                        else "pulumi_kubernetes.apiextensions")
    return sorted(modules)


def plan_command() -> list[str]:
    """The installed `gpu-platform` beside this interpreter, else `python -m gpu_platform.planner` (same code)."""
    script = Path(sys.executable).with_name("gpu-platform")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gpu_platform.planner"]


def timed(cmd: list[str]) -> tuple[float, float]:
    """(wall, cpu) seconds of one subprocess; fails loudly if it does not exit 0."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def medians(cmd: list[str], runs: int) -> tuple[float, float]:
    timed(cmd)  # warm-up: bytecode caches, file cache
    samples = [timed(cmd) for _ in range(runs)]
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def large_stack(pools: int, teams: int, into: Path) -> Path:
    """stacks/Pulumi.dev.yaml with its pools cloned to `pools` and its teams to `teams`.

    Quotas are scaled down so the teams fit the added capacity and the budget is lifted, so the
    generated stack is valid and plans clean like a real one would.
    """
    data = yaml.safe_load((ROOT / "stacks" / "Pulumi.dev.yaml").read_text())
    spec = data["config"]["gpu-platform:platform"]
    base_pools, base_teams = spec["nodePools"], spec["teams"]
    spec["nodePools"] = [_renamed(base_pools[i % len(base_pools)], f"p{i:02d}") for i in range(pools)]
    spec["teams"] = []
    for i in range(teams):
        team = _renamed(base_teams[i % len(base_teams)], f"t{i:03d}")
        team["quota"] = {"gpus": 1, "cpu": "4", "memory": "16Gi"}
        spec["teams"].append(team)
    spec.pop("budget", None)
    path = into / "Pulumi.large.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _renamed(item: dict, suffix: str) -> dict:
    clone = copy.deepcopy(item)
    clone["name"] = f"{clone['name'][:40 - len(suffix) - 1]}-{suffix}"
    return clone


def planned(cmd: list[str], tmp: Path, name: str) -> dict:
    out = tmp / f"{name}.json"
    subprocess.run([*cmd, "--json", str(out)], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pools", type=int, default=40)
    parser.add_argument("--teams", type=int, default=200)
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="plan-bench-"))
    try:
        base = plan_command()
        cases = {"dev": [*base, "plan", "--stack", "dev"], "prod": [*base, "plan", "--stack", "prod"],
                 "large": [*base, "plan", "--config", str(large_stack(args.pools, args.teams, tmp))]}
        plans = {name: planned(cmd, tmp, name) for name, cmd in cases.items()}
        floor_wall, floor_cpu = medians([sys.executable, "-c", FLOOR], args.runs)
        sdk_floor = f"{FLOOR}; {SDK_TOUCH % sdk_modules(plans['large'])}"
        sdk_wall, sdk_cpu = medians([sys.executable, "-c", sdk_floor], args.runs)
        print(f"gpu-platform plan: median of {args.runs} runs, Python {platform.python_version()}, "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
        print(f"  floor (imports only): {floor_wall:.2f} s wall, {floor_cpu:.2f} s CPU")
        print(f"  SDK floor (also the modules of every planned type): {sdk_wall:.2f} s wall, {sdk_cpu:.2f} s CPU")
        print(f"  {'stack':<6} {'resources':>9} {'wall s':>7} {'CPU s':>6} {'res/s':>6} {'x floor':>8} "
              f"{'x SDK floor':>11}")
        results = {}
        for name, cmd in cases.items():
            count = len(plans[name]["resources"])
            wall, cpu = medians(cmd, args.runs)
            results[name] = (count, wall, cpu)
            print(f"  {name:<6} {count:>9} {wall:>7.2f} {cpu:>6.2f} {count / wall:>6.0f} {wall / floor_wall:>8.1f} "
                  f"{wall / sdk_wall:>11.1f}")
        (n_dev, w_dev, c_dev), (n_big, w_big, c_big) = results["dev"], results["large"]
        extra = n_big - n_dev
        print(f"  per extra resource (large - dev, {extra} resources): {(w_big - w_dev) / extra * 1000:.2f} ms wall, "
              f"{(c_big - c_dev) / extra * 1000:.2f} ms CPU")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
