"""Valid stack files, generated: a GPU pool drawn across the product of what a pool can be, with teams and
queueing, on the dev example stack. Instance types, images, drivers and MIG layouts come from the catalog
(facts/catalog.py) and MIG placement (facts/mig.py), so each part is real; combinations the docs name as
refused are judged by the property test against its allow-list (tests/planner/test_valid_stacks.py).
"""
from __future__ import annotations

import math
import re
from datetime import datetime, time, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

from gpu_platform.facts import catalog, serving
from gpu_platform.facts.mig import fits
from tests.support.stacks import AS_OF, stack_platform

RELEASE_DAY = "20260917"  # the example stacks' newest AL2023/Bottlerocket NVIDIA release (driver R580)
ALIASES = {"AL2023_x86_64_NVIDIA": "al2023@v20260917", "BOTTLEROCKET_x86_64_NVIDIA": "bottlerocket@v1.50.0"}
# A Bottlerocket node group pins Bottlerocket's own release and build (catalog.BOTTLEROCKET_RELEASE): one from
# before the release that can turn its device plugin off (catalog.NODE_IMAGES' own_device_plugin_off_from), one
# from it on.
BOTTLEROCKET_RELEASES = ("1.50.0", catalog.NODE_IMAGES["BOTTLEROCKET_x86_64_NVIDIA"].own_device_plugin_off_from)
UBUNTU_IMAGE = "ami-0e2f8c4d7a1b3f596"  # the prod example's Ubuntu image id
IMAGES = ("AL2023_x86_64_NVIDIA", "BOTTLEROCKET_x86_64_NVIDIA", "UBUNTU_24_04", "UBUNTU_22_04")
MIG_MANAGED = tuple(i for i in IMAGES if catalog.NODE_IMAGES[i].operator_mig)  # the operator's MIG manager runs there
OPERATOR_DRIVER = "580.173.02"  # the prod example's pinned R580 driver (supported by gpu-operator v26.7.0)
ZONE = "us-east-1a"
# Reserved-capacity windows as EC2 sells Capacity Blocks: 1-14 days in 1-day steps, or up to 182 days in 7-day
# steps, each starting and ending at 11:30 UTC (EC2 user guide, "Capacity Blocks for ML").
BLOCK_DAYS = (*range(1, 15), *range(21, 183, 7))
BLOCK_TIME = time(11, 30, tzinfo=timezone.utc)
# UltraServers (GB200 NVL72) have their own example stack and rules: whole UltraServers on a block, DRA only.
INSTANCE_TYPES = tuple(name for name, it in catalog.INSTANCE_TYPES.items() if it.family not in catalog.ULTRASERVERS)


def _instance_types(capacity: str, efa: bool, sharing: str, image: str) -> list[str]:
    return [name for name in INSTANCE_TYPES if
            (capacity != "capacity-block" or catalog.INSTANCE_TYPES[name].family in catalog.CAPACITY_BLOCK_FAMILIES)
            and (not efa or catalog.INSTANCE_TYPES[name].efa_interfaces > 0)
            and (sharing != "mig" or catalog.INSTANCE_TYPES[name].gpu_model.mig_capable)
            and image in catalog.INSTANCE_TYPES[name].ami_types]


def _shape(name: str) -> tuple[str, int]:
    return catalog.INSTANCE_TYPES[name].gpu, catalog.INSTANCE_TYPES[name].gpu_count


@st.composite
def mig_layout(draw: st.DrawFn, gpu: catalog.GpuModel, single: bool) -> dict[str, int]:
    """A layout that fits one `gpu` (facts/mig.py placement), one profile only under the single strategy."""
    profiles = sorted(gpu.mig_profiles)
    if single:
        profile = draw(st.sampled_from(profiles))
        most = max(n for n in range(1, 8) if fits(gpu, {profile: n}))
        return {profile: draw(st.integers(1, most))}
    layout: dict[str, int] = {}
    for profile in draw(st.lists(st.sampled_from(profiles), min_size=1, max_size=8)):
        trial = {**layout, profile: layout.get(profile, 0) + 1}
        if fits(gpu, trial):
            layout = trial
    return layout


def release(kubernetes: str) -> str:
    return f"{kubernetes}.7-{RELEASE_DAY}"


def _ami(image: str, provisioner: str, kubernetes: str, bottlerocket: str = "") -> dict[str, str]:
    """The image pinned as its provisioner pins it; `bottlerocket`: a Bottlerocket node group's release."""
    if image.startswith("UBUNTU"):
        return {"type": image, "imageId": UBUNTU_IMAGE}
    if provisioner == "karpenter":
        return {"type": image, "alias": ALIASES[image]}
    return {"type": image, "releaseVersion": bottlerocket if image.startswith("BOTTLEROCKET") else release(kubernetes)}


@st.composite
def bottlerocket_release(draw: st.DrawFn) -> str:
    build = draw(st.text("0123456789abcdef", min_size=8, max_size=8))
    return f"{draw(st.sampled_from(BOTTLEROCKET_RELEASES))}-{build}"


@st.composite
def _reservation(draw: st.DrawFn, capacity: str, size: int) -> dict[str, Any] | None:
    """A Capacity Block (with a window holding the planning day) or an On-Demand Capacity Reservation."""
    reserved = capacity == "capacity-block" or (capacity == "on-demand" and draw(st.booleans()))
    if not reserved:
        return None
    found: dict[str, Any] = {"id": "cr-0" + draw(st.text("0123456789abcdef", min_size=16, max_size=16)),
                             "instanceCount": size}
    if capacity == "capacity-block":
        days = draw(st.sampled_from(BLOCK_DAYS))
        start = datetime.combine(datetime.fromisoformat(AS_OF).date(), BLOCK_TIME) - timedelta(
            days=draw(st.integers(0, days - 1)))
        found.update(start=start.strftime("%Y-%m-%dT%H:%M:%SZ"),
                     end=(start + timedelta(days=days)).strftime("%Y-%m-%dT%H:%M:%SZ"))
    return found


@st.composite
def gpu_pool(draw: st.DrawFn, kubernetes: str, slices: bool = False) -> dict[str, Any]:
    """One pool across provisioner, capacity, reservation, image (and so driver owner), sharing, allocation,
    EFA and repair; instance types that carry what was drawn. MIG is `single` (slices counted as whole GPUs),
    or `mixed` (slices per profile) when the pool is for teams holding `slices`."""
    # Slices per profile need what serves them: a node group (the autoscaler learns slices from its tags; Karpenter
    # knows only nvidia.com/gpu), the device plugin, and the operator's MIG manager (not Bottlerocket's):
    # docs/karpenter.md "Sharing on Karpenter pools", docs/dra.md, docs/gpu-operator.md. Those are drawn most
    # often; the rest are drawn too, and must be refused as those pages say.
    provisioner = draw(st.sampled_from(["managed-node-group"] * (3 if slices else 1) + ["karpenter"]))
    capacity = draw(st.sampled_from(["spot", "on-demand", "capacity-block"]))
    # Bottlerocket less often: it cannot serve much of what is drawn
    image = draw(st.sampled_from(MIG_MANAGED * 3 + IMAGES[1:2] if slices else IMAGES + IMAGES[::2]))
    sharing_mode = "mig" if slices else draw(st.sampled_from(["none", "time-slicing", "mig"]))
    efa = draw(st.booleans())
    allocation = draw(st.sampled_from(["device-plugin"] * (3 if slices else 2) + ["dra"]))
    names = _instance_types(capacity, efa, sharing_mode, image)
    instance_type = draw(st.sampled_from(names))
    gpu = catalog.INSTANCE_TYPES[instance_type].gpu_model
    size = draw(st.integers(1, 4))
    reserved = draw(_reservation(capacity, size))
    # A pool may list several instance types of one GPU model and count; a reservation holds one type.
    alike = [n for n in names if _shape(n) == _shape(instance_type) and n != instance_type]
    more = [] if reserved or not alike else draw(st.lists(st.sampled_from(alike), max_size=2, unique=True))
    fixed = allocation == "dra" and provisioner == "managed-node-group"  # a DRA node group has a fixed size
    pool: dict[str, Any] = {
        "name": "gpu-pool", "provisioner": provisioner, "instanceTypes": [instance_type, *more],
        "capacityType": capacity,
        "minSize": size if fixed else 0, "maxSize": size, "efa": efa,
        "ami": _ami(image, provisioner, kubernetes, draw(bottlerocket_release())),
        "gpuAllocation": allocation, "repair": {"enabled": draw(st.booleans())}}
    if sharing_mode == "time-slicing":
        pool["sharing"] = {"mode": "time-slicing", "replicas": draw(st.integers(2, 8))}
    elif sharing_mode == "mig":
        single = not slices
        pool["sharing"] = {"mode": "mig", "strategy": "single" if single else "mixed",
                           "layout": draw(mig_layout(gpu, single))}
    if reserved is not None:
        pool["reservation"] = reserved
    if (reserved is not None and provisioner == "managed-node-group") or efa:
        pool["zones"] = [ZONE]  # a reservation lives in one zone; an EFA pool in one placement group
    return pool


def whole_gpus(pool: dict[str, Any]) -> int:
    """The GPUs a pool holds at its maximum size that teams can hold whole: none on a MIG pool of the `mixed`
    strategy (every GPU is partitioned into slices); a time-sliced or `single` MIG pool offers at least as many."""
    if pool.get("sharing", {}).get("strategy") == "mixed":
        return 0
    return catalog.INSTANCE_TYPES[pool["instanceTypes"][0]].gpu_count * pool["maxSize"]


@st.composite
def team(draw: st.DrawFn, pool: dict[str, Any], whole: int) -> dict[str, Any]:
    """A team holding 1 to `whole` whole GPUs, or MIG slices only on a pool that offers slices (mixed strategy:
    such a pool has no whole GPUs left, every GPU is partitioned)."""
    sharing = pool.get("sharing", {})
    quota: dict[str, Any] = {"gpus": draw(st.integers(1, max(whole, 1))), "cpu": "16", "memory": "64Gi"}
    if sharing.get("strategy") == "mixed":
        profiles = draw(st.lists(st.sampled_from(sorted(sharing["layout"])), min_size=1, unique=True))
        quota = {"gpus": 0, "migSlices": dict.fromkeys(profiles, 1), "cpu": "16", "memory": "64Gi"}
    return {"name": "research", "quota": quota}


def device_gib(pool: dict[str, Any], profile: str | None) -> float:
    """The memory one replica's device has (docs/serving.md, "The model fits"): a whole GPU's catalog GB read as
    GiB, a MIG slice its memory share of that, a time-sliced replica the GPU over the pool's replicas."""
    gpu = catalog.INSTANCE_TYPES[pool["instanceTypes"][0]].gpu_model
    whole = gpu.memory_gb * 1e9 / 2**30
    sharing = pool.get("sharing", {})
    if profile is not None:
        return whole * catalog.mig_memory_share(gpu, profile)
    return whole / sharing["replicas"] if sharing.get("mode") == "time-slicing" else whole


def host_gib(tp: int, weights_gib: float) -> int:
    """A server's own host memory in whole GiB (docs/serving.md, "Host memory for the server")."""
    staged = min(weights_gib, serving.CHECKPOINT_SHARD_GB * 1e9 / 2**30)
    return math.ceil(serving.SERVER_HOST_BASE_GIB + serving.SERVER_HOST_PER_GPU_GIB * tp + staged)


@st.composite
def model(draw: st.DrawFn, room_gib: float) -> dict[str, Any] | None:
    """A pinned model whose weights fit `room_gib`: given in GiB, or as parameters and a dtype; None when the
    smallest a stack file can state (0.01) does not fit."""
    share = draw(st.sampled_from([0.02, 0.25, 0.6, 0.99]))
    source: dict[str, Any] = (
        {"huggingFace": {"repo": "Qwen/Qwen2.5-0.5B-Instruct", "revision": draw(st.text("0123456789abcdef",
                                                                                          min_size=40, max_size=40))}}
        if draw(st.booleans()) else {"s3": f"s3://models-{draw(st.integers(0, 99))}/qwen/"})
    if draw(st.booleans()):
        dtype = draw(st.sampled_from(sorted(serving.DTYPE_BYTES)))
        billions = math.floor(room_gib * share * 2**30 / (1e9 * serving.DTYPE_BYTES[dtype]) * 100) / 100
        return {**source, "parameterCount": billions, "dtype": dtype} if billions > 0 else None
    weights = math.floor(room_gib * share * 100) / 100
    return {**source, "weightsGiB": weights} if weights > 0 else None


def scales_from_zero(platform: dict[str, Any], pool: dict[str, Any]) -> bool:
    """docs/serving.md, "Scale to zero": outside prod, on a pool the Cluster Autoscaler or Karpenter grows."""
    return (platform.get("environment") != "prod" and (
        pool["provisioner"] == "karpenter" or platform.get("clusterAutoscaler", {}).get("enabled", True)
        or pool["minSize"] > 0))


@st.composite
def service(draw: st.DrawFn, platform: dict[str, Any], pool: dict[str, Any], name: str, units_left: int,
            replicas_left: int, profile: str | None) -> dict[str, Any] | None:
    """One service on `pool` sized to fit (docs/serving.md, "What each check means"): whole GPUs with tensor
    parallelism within a node, or one MIG slice of `profile`, or one time-sliced replica; at most `units_left`
    of the team's quota at max replicas and at most `replicas_left` replicas (each node of the pool holds one
    replica: its GPUs and, with room to spare, its host memory); None when nothing fits."""
    it = catalog.INSTANCE_TYPES[pool["instanceTypes"][0]]
    smallest = min((catalog.INSTANCE_TYPES[n] for n in pool["instanceTypes"]), key=lambda i: (i.vcpu, i.memory_gib))
    whole = "sharing" not in pool
    count = draw(st.integers(1, min(it.gpu_count, units_left))) if whole else 1
    utilization = draw(st.sampled_from([0.5, 0.9, 0.98]))
    floor = draw(st.sampled_from([0, 0.5, 2]))
    room = (device_gib(pool, profile) * utilization - serving.ENGINE_OVERHEAD_GIB_PER_GPU - floor) * count
    found = draw(model(room)) if room > 0 else None
    if found is None or host_gib(count, room) * 2 > smallest.memory_gib:  # a node leaves it room, with margin
        return None
    top = draw(st.integers(1, min(units_left // count, replicas_left)))
    autoscaling = draw(st.sampled_from([None, {"signal": "queue", "target": 4}, {"signal": "ttft", "target": 1.5}]))
    bottom = draw(st.integers(0 if autoscaling and scales_from_zero(platform, pool) else 1, top))
    gpu: dict[str, Any] = {"pool": pool["name"], "count": count} if whole else {"pool": pool["name"]}
    if profile is not None:
        gpu["migProfile"] = profile
    drawn: dict[str, Any] = {"name": name, "model": found, "gpu": gpu, "replicas": {"min": bottom, "max": top},
                             "gpuMemoryUtilization": utilization, "kvCacheFloorGiB": floor}
    if autoscaling is not None:
        drawn["autoscaling"] = autoscaling
    if draw(st.booleans()):
        drawn["loadBalancer"] = "internal"  # the stack creates its VPC
    return drawn


def pool_units(pool: dict[str, Any], profile: str | None) -> int:
    """What `pool` offers at maxSize of the resource a replica on it asks: whole or time-sliced GPUs, or slices
    of `profile` (counted as GPUs under the single strategy)."""
    it, sharing = catalog.INSTANCE_TYPES[pool["instanceTypes"][0]], pool.get("sharing", {})
    per_gpu = (sharing["replicas"] if sharing.get("mode") == "time-slicing"
               else sharing["layout"][profile] if profile is not None else 1)
    return it.gpu_count * per_gpu * pool["maxSize"]


@st.composite
def services(draw: st.DrawFn, platform: dict[str, Any], first: dict[str, Any]) -> list[dict[str, Any]]:
    """Up to two services of `first` on the generated pool (none on a DRA pool: servers ask the device plugin's
    resources), within its quota of whole GPUs or, on a mixed MIG pool, of each slice profile it holds, together
    no more replicas than the pool has nodes at maxSize; the team's memory quota raised to hold them."""
    pool = platform["nodePools"][0]
    if pool["gpuAllocation"] == "dra":
        return []
    sharing, quota = pool.get("sharing", {}), first["quota"]
    mixed = sharing.get("strategy") == "mixed"
    single = next(iter(sharing["layout"])) if sharing.get("mode") == "mig" and not mixed else None
    left = dict(quota["migSlices"]) if mixed else {"": quota["gpus"]}
    replicas_left, found = pool["maxSize"], []
    smallest = min(catalog.INSTANCE_TYPES[n].memory_gib for n in pool["instanceTypes"])
    for index in range(draw(st.integers(0, 2))):
        key = draw(st.sampled_from(sorted(left)))
        profile = key if mixed else single
        units = min(left[key], pool_units(pool, profile))
        drawn = draw(service(platform, pool, f"model-{index}", units, replicas_left, profile)) \
            if units >= 1 and replicas_left >= 1 else None
        if drawn is None:
            continue
        found.append(drawn)
        top = drawn["replicas"]["max"]
        left[key] -= top * drawn["gpu"].get("count", 1)
        replicas_left -= top
        # a replica asks at most its node's memory (its GPUs' share) or its own need (under half a node)
        quota["memory"] = f"{int(quota['memory'].removesuffix('Gi')) + top * smallest}Gi"
    return found


def reachable(pools: list[dict[str, Any]], queued: bool) -> int:
    """The whole GPUs of `pools` a team of the default (standard) tier can be given: under Kueue a quota is a
    guaranteed nominal quota placed on the pools, never on spot for that tier (docs/queueing.md)."""
    return sum(whole_gpus(p) for p in pools if not queued or p["capacityType"] != "spot")


@st.composite
def teams(draw: st.DrawFn, pools: list[dict[str, Any]], queued: bool) -> list[dict[str, Any]]:
    """`research` on the generated pool (whole GPUs, or slices only), its queue maybe bound to that pool, and maybe
    `serving` holding whole GPUs beside it, the two together within the whole GPUs they can be given. A queue bound
    to a spot pool alone still draws a quota there: refused as docs/queueing.md says."""
    pool, bound = pools[0], queued and draw(st.booleans())
    listed = [pool] if bound else pools
    first = draw(team(pool, reachable(listed, queued) or sum(whole_gpus(p) for p in listed)))
    if bound:
        first["queue"] = {"pools": [pool["name"]]}
    found = [first]
    left = reachable(pools, queued) - (first["quota"]["gpus"] if reachable(listed, queued) else 0)
    if left >= 1 and draw(st.booleans()):
        found.append({"name": "serving", "quota": {"gpus": draw(st.integers(1, left)), "cpu": "8", "memory": "32Gi"}})
    return found


# S3 bucket names S3 creates (S3 user guide, "General purpose bucket naming rules"): drawn from the allowed
# characters, then kept only when no listed rule forbids them.
BUCKETS = st.from_regex(r"[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]", fullmatch=True).filter(
    lambda n: ".." not in n and not re.fullmatch(r"[0-9]+(\.[0-9]+){3}", n)
    and not n.startswith(("xn--", "sthree-", "amzn-s3-demo-"))
    and not n.endswith(("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")))
CLAIM_SIZES = st.sampled_from(["1", "1Gi", "500Gi", "1Ti", "1200Gi", "1e9", "0.5Ti"])


@st.composite
def datasets(draw: st.DrawFn) -> dict[str, Any]:
    """An FSx for Lustre file system linked to S3 under a valid bucket, with a claim size above zero."""
    prefix = draw(st.sampled_from(["", "/", "/training", "/a/b/c"]))
    fsx: dict[str, Any] = {"addonVersion": "v1.7.0-eksbuild.1", "claimSize": draw(CLAIM_SIZES),
                           "dataRepository": {"s3Path": f"s3://{draw(BUCKETS)}{prefix}",
                                              "fileSystemPath": draw(st.sampled_from(["/", "/ns1", "/data set/x"]))}}
    return {"fsxLustre": fsx}


@st.composite
def valid_platform(draw: st.DrawFn, slices: bool = False, prod: bool = False) -> dict[str, Any]:
    """The dev example on a Kubernetes version of the catalog with one generated pool (maybe beside a plain
    on-demand pool of the same image) and team (holding MIG slices only when `slices`), in prod when `prod`,
    the driver owned as the pool's image requires, queueing on or off, maybe model services of the first team on
    the pool, maybe datasets on FSx, and no budget
    (a generated pool of eight-GPU nodes outspends dev's on purpose)."""
    platform = stack_platform("dev")
    kubernetes = draw(st.sampled_from(catalog.KUBERNETES_VERSIONS))
    platform["cluster"]["kubernetesVersion"] = kubernetes
    platform["cluster"]["create"]["systemNodes"]["releaseVersion"] = release(kubernetes)
    pool = draw(gpu_pool(kubernetes, slices))
    platform["nodePools"] = [pool]
    if draw(st.booleans()):
        platform["nodePools"].append({
            "name": "l4-serve", "provisioner": pool["provisioner"], "instanceTypes": ["g6.xlarge", "g6.2xlarge"],
            "capacityType": draw(st.sampled_from(["on-demand", "spot"])), "minSize": 0, "maxSize": 2,
            "ami": dict(pool["ami"]),
            "repair": pool["repair"]})  # Karpenter's repair is one switch for all its pools
    platform.pop("budget")
    if pool["ami"]["type"].startswith("UBUNTU"):
        platform["gpuOperator"]["driver"] = {"source": "operator", "version": OPERATOR_DRIVER}
    queued = draw(st.booleans())
    if queued:
        platform["queueing"] = {"mode": "kueue", "chartVersion": "0.19.2"}
    platform["teams"] = draw(teams(platform["nodePools"], queued))
    if prod:  # what prod asks beyond dev: an API endpoint open to listed networks, a Karpenter window
        platform["environment"] = "prod"
        platform["cluster"]["create"]["publicAccessCidrs"] = ["203.0.113.0/24"]
        platform["karpenter"] = {"disruptionWindow": {"schedule": "0 2 * * sun", "duration": "4h"}}
    served = draw(services(platform, platform["teams"][0]))
    if served:
        platform["teams"][0]["services"] = served
    if draw(st.booleans()):
        platform["datasets"] = draw(datasets())
        for each in platform["teams"]:  # every team gets the datasets claim beside the model-cache claim
            each["quota"]["storage"] = "4Ti"
    return platform
