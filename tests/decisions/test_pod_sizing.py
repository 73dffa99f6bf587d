"""CPU and memory per GPU unit, derived from the instance: the figures on p5, p4d, L4, MIG slices and
time-sliced replicas, and the promise behind them: a node's units taken one per pod, or all in one pod,
always fit what the node has for GPU pods. Also whether team quotas hold their largest pod."""
from __future__ import annotations

import pytest

from gpu_platform.decisions import pod_sizing as ps
from gpu_platform.decisions.capacity import node_resources
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render.workloads import gpu_pod_spec
from gpu_platform.spec.models import quantity_value
from tests.support.stacks import spec_of, spec_with_pools
from tests.support.training import AL2023, ubuntu_training
from tests.support.ultraserver import ultraserver

IMAGE = "registry.example.com/trainer:1.0"
GPU = names.GPU_RESOURCE


def _budget(instance_type: str, reserved: int = 0) -> tuple[float, float]:
    """CPUs and GiB a node keeps for GPU pods, from the catalog's figures for the instance, after `reserved`
    CPUs the kubelet keeps for the system."""
    it = catalog.INSTANCE_TYPES[instance_type]
    keep = 1 - ps.RESERVED_FRACTION
    return (it.vcpu - reserved) * keep - ps.RESERVED_CPU, it.memory_gib * keep - ps.RESERVED_MEMORY_GIB


def _requests(pod_spec: dict) -> tuple[float, float]:
    requests = pod_spec["containers"][0]["resources"]["requests"]
    return quantity_value(requests["cpu"]), quantity_value(requests["memory"]) / 2**30


def _pool(instance_types: list[str], **extra) -> dict:
    return {"name": "p", "instanceTypes": instance_types, "capacityType": "on-demand", "minSize": 0, "maxSize": 1,
            "ami": dict(AL2023), **extra}


# --- the figures ---

@pytest.fixture(scope="module")
def training():
    return parse_platform(ubuntu_training())


def test_an_8_gpu_pod_on_p5_asks_at_least_8_per_gpu_cpu_shares(training):
    cpu_budget, memory_budget = _budget("p5.48xlarge", reserved=4)  # 192 vCPUs less CPUs 0-3, 2048 GiB
    per_gpu_cpu, per_gpu_memory = cpu_budget / 8, memory_budget / 8
    one = _requests(gpu_pod_spec(training, "research", IMAGE, gpus=1, pool="h100-train"))
    eight = _requests(gpu_pod_spec(training, "research", IMAGE, gpus=8, pool="h100-train"))
    # p5 pins CPUs by default: CPUs 0-3 are kept, the rest shared, whole CPUs (decisions/numa.py)
    assert one == (21, 230)  # 21.025 CPUs and 230.15 GiB per GPU, rounded down
    assert eight == (168, 1841)
    assert eight[0] >= 8 * one[0] and eight[1] >= 8 * one[1]
    assert 8 * per_gpu_cpu - 1 < eight[0] <= 8 * per_gpu_cpu  # the whole share, less rounding to a whole CPU
    assert 8 * per_gpu_memory - 1 < eight[1] <= 8 * per_gpu_memory
    assert eight[0] > 100 * quantity_value(training.teams[0].container_defaults.cpu)  # nothing like 250m


@pytest.mark.parametrize("pool, gpus, cpu, memory", [
    ("a100-train", 8, "81", "1034Gi"),  # p4d: 96 vCPUs less CPUs 0-3 kept, 1152 GiB; whole CPUs
    ("a100-train", 1, "10", "129Gi"),
    ("l4-inference", 1, "6", "26Gi"),  # g6.2xlarge (8 vCPUs, 32 GiB), the smaller of the pool's types
])
def test_whole_gpu_pods_get_their_gpus_share(training, pool, gpus, cpu, memory):
    requests = gpu_pod_spec(training, "research", IMAGE, gpus=gpus, pool=pool)["containers"][0]["resources"]["requests"]
    assert (requests["cpu"], requests["memory"]) == (cpu, memory)


@pytest.mark.parametrize("profile, cpu, memory", [
    ("1g.10gb", "3", "28Gi"),  # a seventh of an H100's 21.475 CPUs, an eighth of its 230.15 GiB
    ("2g.20gb", "6", "57Gi"),
    ("3g.40gb", "9", "115Gi"),  # 3/7 of the CPUs, 4/8 of the memory (3g.40gb holds half the GPU's memory)
])
def test_a_mig_slice_gets_its_compute_and_memory_share_of_a_gpu(training, profile, cpu, memory):
    requests = gpu_pod_spec(training, "research", IMAGE, mig_profile=profile)["containers"][0]["resources"]["requests"]
    assert (requests["cpu"], requests["memory"]) == (cpu, memory)


def test_a_time_sliced_replica_gets_its_share_of_the_gpus_node(dev):
    """dev: g5.xlarge (4 vCPUs, 16 GiB) with 4 replicas: 0.65 CPU and 3.1 GiB each."""
    requests = gpu_pod_spec(dev, "research", IMAGE)["containers"][0]["resources"]["requests"]
    assert (requests["cpu"], requests["memory"]) == ("500m", "3Gi")


@pytest.mark.parametrize("instance_type, replicas, cpu, memory", [
    ("g5.xlarge", 16, "160m", "793Mi"),  # 2.6 CPUs and 12.4 GiB over 16 replicas
    ("g6.xlarge", 64, "40m", "198Mi"),
    ("g5.48xlarge", 64, "330m", "1Gi"),  # 171.8 CPUs and 689.2 GiB over 512 replicas
])
def test_small_shares_round_down_in_millicores_and_mib(instance_type, replicas, cpu, memory):
    spec = spec_with_pools(_pool([instance_type], sharing={"mode": "time-slicing", "replicas": replicas}))
    size = ps.pod_size(spec.node_pools, GPU, 1, spec.mig_strategy)
    assert (size.cpu_quantity, size.memory_quantity) == (cpu, memory)


def test_a_pool_of_several_types_is_sized_by_its_smallest():
    spec = spec_with_pools(_pool(["g6.4xlarge", "g6.2xlarge"]))
    assert ps.node_budget(spec.node_pools[0]) == ps.Budget(*_budget("g6.2xlarge"))


def test_a_pod_that_may_land_in_several_pools_gets_the_smallest_share():
    spec = spec_with_pools(_pool(["g6.2xlarge"]), {**_pool(["g6.12xlarge"]), "name": "q"})  # 6.2 and 10.55 CPUs per GPU
    assert ps.pod_size(spec.node_pools, GPU, 1, spec.mig_strategy) == ps.PodSize(6.0, 26 * 1024)
    assert ps.pod_size(spec.node_pools[1:], GPU, 1, spec.mig_strategy) == ps.PodSize(10.5, 42 * 1024)


@pytest.mark.parametrize("memory, shm", [("1034Gi", "517Gi"), ("3Gi", "1Gi"), ("2Gi", "1Gi"), ("1Gi", "512Mi"),
                                         ("793Mi", "396Mi")])
def test_dev_shm_is_half_the_memory(memory, shm):
    assert ps.shm_size(quantity_value(memory)) == shm


# --- the promise: one unit per pod, or every unit in one pod, fits the node ---

MIG_LAYOUTS = {
    "p4d.24xlarge": [{"1g.5gb": 7}, {"1g.10gb": 4}, {"4g.20gb": 1, "3g.20gb": 1}, {"2g.10gb": 3, "1g.5gb": 1}],
    "p5.48xlarge": [{"1g.10gb": 7}, {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}],
    "p5en.48xlarge": [{"1g.18gb": 7}, {"3g.71gb": 2}],
}
SHAPES = (
    [(t, {"mode": "none"}) for t in sorted(catalog.INSTANCE_TYPES)]
    + [(t, {"mode": "time-slicing", "replicas": r}) for t in ("g5.xlarge", "g6.xlarge", "g6e.xlarge", "g5.48xlarge",
                                                              "g6.12xlarge") for r in (2, 4, 7, 16, 64)]
    + [(t, {"mode": "mig", "strategy": s, "layout": layout}) for t, layouts in MIG_LAYOUTS.items()
       for layout in layouts for s in ("single", "mixed") if s == "mixed" or len(layout) == 1]
)


def _shape_id(instance_type: str, sharing: dict) -> str:
    detail = sharing.get("replicas") or "+".join(f"{n}x{p}" for p, n in (sharing.get("layout") or {}).items())
    return "-".join(str(x) for x in (instance_type, sharing["mode"], sharing.get("strategy"), detail) if x)


@pytest.mark.parametrize("instance_type, sharing", SHAPES, ids=[_shape_id(*s) for s in SHAPES])
def test_a_nodes_units_one_per_pod_or_all_in_one_fit_the_node(instance_type, sharing):
    if instance_type in catalog.ULTRASERVERS:  # its own stack shape (capacity block, ARM image, DRA)
        spec = parse_platform(ultraserver())
    else:
        spec = spec_with_pools(_pool([instance_type], sharing=sharing))
    pool = spec.node_pools[0]
    assert pool.instance_types == [instance_type]
    cpu_budget, memory_budget = _budget(instance_type)
    units = node_resources(pool, spec.mig_strategy)
    assert units
    cpu = memory = 0.0
    for resource, count in units.items():
        one = ps.pod_size([pool], resource, 1, spec.mig_strategy)
        whole = ps.pod_size([pool], resource, count, spec.mig_strategy)
        assert one.cpu > 0 and one.memory_mib > 0
        assert whole.cpu <= cpu_budget and whole.memory_mib <= memory_budget * 1024
        cpu, memory = cpu + count * one.cpu, memory + count * one.memory_mib / 1024
    assert cpu <= cpu_budget + 1e-9 and memory <= memory_budget + 1e-9  # every slice of a mixed node, one per pod


# --- team quotas against their largest pod ---

def test_prod_teams_hold_their_largest_pod(prod):
    fits = {f.team: (f.gpus, f.size.cpu_quantity, f.size.memory_quantity, f.problems) for f in ps.team_fits(prod)}
    assert fits == {"research": (8, "81", "1034Gi", []), "inference": (1, "6", "26Gi", []),
                    "batch": (4, "40", "517Gi", [])}


def test_a_team_is_sized_on_the_pools_its_queue_reaches_not_the_smallest_anywhere():
    """Queued on the A100 pool only, one-GPU pods get an A100's share: an L4's smaller share elsewhere must not
    make a quota that refuses them look sufficient."""
    def edit(p):
        team = p["teams"][2]  # batch
        team["queue"] = {"pools": ["a100-train"]}
        team["maxGpusPerPod"] = 1
        team["quota"].update(cpu="8", memory="200Gi", migSlices={})
    spec = spec_of("prod", edit)
    batch = next(t for t in spec.teams if t.name == "batch")
    assert [p.name for p in ps.team_pools(spec, batch)] == ["a100-train"]
    (fit,) = [f for f in ps.team_fits(spec) if f.team == "batch"]
    a100 = next(p for p in spec.node_pools if p.name == "a100-train")
    assert fit.size == ps.pod_size([a100], names.GPU_RESOURCE, 1, spec.mig_strategy)
    assert fit.problems == [f"quota.cpu 8 < {fit.size.cpu_quantity}"]
    any_pool = [p for p in spec.node_pools if node_resources(p, spec.mig_strategy).get(names.GPU_RESOURCE, 0)]
    everywhere = ps.pod_size(any_pool, names.GPU_RESOURCE, 1, spec.mig_strategy)
    assert everywhere.cpu < 8 < fit.size.cpu  # the old reading (smallest share of any pool) said it fits


def test_without_queueing_a_team_reaches_every_pool(dev):
    assert ps.team_pools(dev, dev.teams[0]) == list(dev.node_pools)


def test_a_quota_below_the_largest_pod_is_named():
    spec = spec_of("prod", lambda p: p["teams"][2]["quota"].update(cpu="39", memory="500Gi"))
    (batch,) = [f for f in ps.team_fits(spec) if f.team == "batch"]
    assert batch.problems == ["quota.cpu 39 < 40", "quota.memory 500Gi < 517Gi"]


def test_team_fits_works_out_each_pool_once_however_many_teams(monkeypatch, prod):
    """Kueue's placement and each pool's GPUs and share depend on the pools alone: worked out once per
    plan and once per pool, not again for every team (a plan of hundreds of teams and pools)."""
    from gpu_platform.decisions import queueing

    calls: dict[str, int] = {}

    def counting(module, name):
        real = getattr(module, name)

        def wrapper(*args, **kwargs):
            calls[name] = calls.get(name, 0) + 1
            return real(*args, **kwargs)
        monkeypatch.setattr(module, name, wrapper)

    for module, name in ((queueing, "placement"), (ps, "node_resources"), (ps, "unit_share")):
        counting(module, name)
    fits = ps.team_fits(prod)
    assert len(prod.teams) == len(fits) == 3 and prod.queueing.enabled
    assert calls["placement"] == 1
    assert calls["unit_share"] <= len(prod.node_pools)
    assert calls["node_resources"] == len(prod.node_pools) + calls["unit_share"]  # each share reads its pool's once


def test_team_fits_reads_each_pools_kubelet_as_often_however_many_teams(monkeypatch, prod):
    """Whether a pool pins CPUs (its kubelet) depends on the pool alone: a plan of hundreds of teams reads it
    no more often than one of three."""
    calls = []
    real = ps.pool_kubelet
    monkeypatch.setattr(ps, "pool_kubelet", lambda pool: calls.append(pool.name) or real(pool))
    many = prod.model_copy(update={"teams": list(prod.teams) * 40})
    assert len(ps.team_fits(many)) == 40 * len(ps.team_fits(prod))
    calls.clear()
    ps.team_fits(prod)
    few = len(calls)
    calls.clear()
    ps.team_fits(many)
    assert 0 < len(calls) == few
