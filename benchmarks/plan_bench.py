"""Time `gpu-platform plan` against what the SDK and the engine cost for the same resources.

    python benchmarks/plan_bench.py [--runs 5] [--pools 40] [--teams 200] [--scale 4] [--stacks dev,prod,...]

Runs the command as a subprocess (the way users and CI run it) on the dev and prod stacks, on a
large stack generated from stacks/Pulumi.dev.yaml (its pools and teams cloned under unique names,
about 2.5k resources) and on one `--scale` times larger (about 10k resources).

Two floors:
- the import floor: the same interpreter importing only pulumi, the pulumi_aws submodules the program
  uses and pulumi_kubernetes (both SDKs load submodules lazily, so a second figure, the SDK floor, also
  loads every SDK module whose resource types the large plan registers);
- the bare-engine floor (benchmarks/bare_engine.py): per stack, a program generated from the plan's
  own JSON that registers the same resources (types, names, parents, providers, inputs, options) and
  exports the same outputs with no logic, run under the planner's engine, through the SDK's generic
  classes; and the typed floor, the same through the SDKs' typed classes (pulumi_aws.eks.NodeGroup...),
  as any real program registers them. Before timing, each is checked to record exactly what the plan
  recorded. The plan's cost beyond the typed floor is the platform's own work; the typed floor's beyond
  the generic one is the SDKs' typed argument handling and output translation.
Against the bare engine, plan and floor runs alternate (plan, floor, typed floor, plan...) after one
warm-up each, so a busy machine slows them alike; times are CPU seconds (user + system of the
child, from getrusage), medians of `--runs`. Growth from the 2.5k to the 10k stack is given for each.
The command runs without cyclic garbage collection (see planner/engine.py), which also speeds up its
imports: it can come in under the SDK floor, which is measured with the collector on. This is a
script, not a test: it asserts nothing about times.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bare_engine import sdk_modules, write_floor

ROOT = Path(__file__).resolve().parents[1]
FLOOR = ("import pulumi, pulumi_aws.eks, pulumi_aws.ec2, pulumi_aws.iam, pulumi_aws.efs, "
         "pulumi_aws.autoscaling, pulumi_kubernetes")
# The SDKs load submodules lazily, on first attribute access: touch each one so it really loads.
SDK_TOUCH = "import importlib; [getattr(importlib.import_module(m), '__all__', None) for m in %r]"
# Children write and reuse bytecode caches, as an installed package has them (pip compiles on install):
# with PYTHONDONTWRITEBYTECODE set, every run would compile the platform's source (editable install) while
# the SDKs' caches from their install are used, charging the plan, not the floor, for the compiler.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def plan_command() -> list[str]:
    """The installed `gpu-platform` beside this interpreter, else `python -m gpu_platform.planner` (same code)."""
    script = Path(sys.executable).with_name("gpu-platform")
    return [str(script)] if script.exists() else [sys.executable, "-m", "gpu_platform.planner"]


def timed(cmd: list[str]) -> tuple[float, float]:
    """(wall, cpu) seconds of one subprocess; fails loudly if it does not exit 0."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(cmd, cwd=ROOT, env=CHILD_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {done.returncode}:\n{done.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def medians(cmd: list[str], runs: int) -> tuple[float, float]:
    timed(cmd)  # warm-up: bytecode caches, file cache
    samples = [timed(cmd) for _ in range(runs)]
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def interleaved(commands: list[list[str]], runs: int) -> list[tuple[float, float]]:
    """(wall, CPU) medians of each command, run in turn (a, b, c, a, b, c...) after one warm-up each."""
    for cmd in commands:
        timed(cmd)
    rounds = [[timed(cmd) for cmd in commands] for _ in range(runs)]
    return [(statistics.median(r[i][0] for r in rounds), statistics.median(r[i][1] for r in rounds))
            for i in range(len(commands))]


def floor_command(plan_json: Path, floor_dir: Path, *extra: str) -> list[str]:
    return [sys.executable, str(Path(__file__).with_name("bare_engine.py")), str(floor_dir), str(plan_json), *extra]


def large_stack(pools: int, teams: int, into: Path, name: str = "large") -> Path:
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
        for service in team.get("services", []):  # served from one of the clones of the pool it names
            clones = [p["name"] for p in spec["nodePools"] if p["name"].startswith(f"{service['gpu']['pool']}-p")]
            service["gpu"]["pool"] = clones[i % len(clones)]
            service["replicas"]["max"] = 1  # within the scaled-down quota
        spec["teams"].append(team)
    spec.pop("budget", None)
    path = into / f"Pulumi.{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _renamed(item: dict, suffix: str) -> dict:
    clone = copy.deepcopy(item)
    clone["name"] = f"{clone['name'][:40 - len(suffix) - 1]}-{suffix}"
    return clone


def planned(cmd: list[str], tmp: Path, name: str) -> Path:
    out = tmp / f"{name}.json"
    subprocess.run([*cmd, "--json", str(out)], cwd=ROOT, env=CHILD_ENV, check=True, stdout=subprocess.DEVNULL)
    return out


def import_floors(large_plan: dict, runs: int) -> None:
    floor_wall, floor_cpu = medians([sys.executable, "-c", FLOOR], runs)
    sdk_floor = f"{FLOOR}; {SDK_TOUCH % sdk_modules(large_plan)}"
    sdk_wall, sdk_cpu = medians([sys.executable, "-c", sdk_floor], runs)
    print(f"  import floor (imports only): {floor_wall:.2f} s wall, {floor_cpu:.2f} s CPU")
    print(f"  SDK floor (also the modules of every planned type): {sdk_wall:.2f} s wall, {sdk_cpu:.2f} s CPU")


def checked_floor(plan_json: Path, floor_dir: Path, typed: bool) -> list[str]:
    """The floor's command, once it is checked to register what the plan did (fails loudly if not)."""
    write_floor(json.loads(plan_json.read_text()), floor_dir, typed=typed)
    subprocess.run(floor_command(plan_json, floor_dir, "--check"), cwd=ROOT, env=CHILD_ENV, check=True,
                   stdout=subprocess.DEVNULL)
    return floor_command(plan_json, floor_dir)


def against_bare_engine(cases: dict[str, list[str]], jsons: dict[str, Path], tmp: Path, runs: int) -> dict:
    """Per stack: resources and the plan's, the floor's and the typed floor's CPU medians of interleaved runs."""
    print(f"  {'stack':<6} {'resources':>9} {'plan CPU s':>10} {'floor CPU s':>11} {'typed floor CPU s':>17} "
          f"{'x floor':>7} {'x typed':>7} {'typed x floor':>13} {'plan wall s':>11}")
    results = {}
    for name, cmd in cases.items():
        floor = checked_floor(jsons[name], tmp / f"floor-{name}", typed=False)
        typed = checked_floor(jsons[name], tmp / f"typed-floor-{name}", typed=True)
        (p_wall, p_cpu), (_, f_cpu), (_, t_cpu) = interleaved([cmd, floor, typed], runs)
        count = len(json.loads(jsons[name].read_text())["resources"])
        results[name] = (count, p_cpu, f_cpu, t_cpu)
        print(f"  {name:<6} {count:>9} {p_cpu:>10.2f} {f_cpu:>11.2f} {t_cpu:>17.2f} {p_cpu / f_cpu:>7.2f} "
              f"{p_cpu / t_cpu:>7.2f} {t_cpu / f_cpu:>13.2f} {p_wall:>11.2f}", flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--pools", type=int, default=40)
    parser.add_argument("--teams", type=int, default=200)
    parser.add_argument("--scale", type=int, default=4, help="the largest stack is this many times the large one")
    parser.add_argument("--stacks", default="dev,prod,large,larger",
                        help="which of dev, prod, large and larger to time (comma-separated; default: all)")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="plan-bench-"))
    try:
        base = plan_command()
        cases = {"dev": [*base, "plan", "--stack", "dev"], "prod": [*base, "plan", "--stack", "prod"]}
        wanted = args.stacks.split(",")
        if "large" in wanted:
            cases["large"] = [*base, "plan", "--config", str(large_stack(args.pools, args.teams, tmp))]
        if "larger" in wanted:
            big = large_stack(args.pools * args.scale, args.teams * args.scale, tmp, "larger")
            cases["larger"] = [*base, "plan", "--config", str(big)]
        cases = {name: cmd for name, cmd in cases.items() if name in wanted}
        jsons = {name: planned(cmd, tmp, name) for name, cmd in cases.items()}
        print(f"gpu-platform plan: medians of {args.runs} runs, Python {platform.python_version()}, "
              f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
        sdk_plan = jsons.get("large") or max(jsons.values(), key=lambda path: path.stat().st_size)
        import_floors(json.loads(sdk_plan.read_text()), args.runs)
        print("  against the bare engine (CPU time; plan, floor and typed floor runs interleaved):")
        results = against_bare_engine(cases, jsons, tmp, args.runs)
        if "large" in results and "larger" in results:
            (n_big, *big), (n_all, *everything) = results["large"], results["larger"]
            plan, floor, typed = (a / b for a, b in zip(everything, big, strict=True))
            print(f"  growth from {n_big} to {n_all} resources: plan {plan:.2f}x, floor {floor:.2f}x, "
                  f"typed floor {typed:.2f}x")
        print(f"  load average after: {os.getloadavg()[0]:.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
