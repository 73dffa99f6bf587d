"""Workload defaults for teams: the pod spec a GPU workload needs on this platform, as plain data.

It encodes the lessons users otherwise learn the hard way: tolerate the GPU taint, select the pool or
GPU product, give `/dev/shm` real memory (the container default of 64 MiB breaks PyTorch data loaders
and NCCL), mount the team's model cache and point `HF_HOME` at it, ask for GPUs with requests equal to
limits, and run at the team's priority tier (Kubernetes has no per-namespace default priority). On pools
whose kubelet pins CPUs (decisions/numa.py) the pod is Guaranteed with whole CPUs (CPU limit = request),
so the static CPU manager gives it exclusive cores beside its GPUs.

Job pods (`gpu_job`, or `job=True`) also carry what keeps a running job alive while the platform
changes: the label the GPU Operator's driver upgrade waits for (`waitForCompletion.podSelector`),
`cluster-autoscaler.kubernetes.io/safe-to-evict: "false"` so the autoscaler never drains their node to
save money, and `karpenter.sh/do-not-disrupt: "true"` so Karpenter neither consolidates nor drifts it.
Long-running services get neither: an upgrade must not wait for pods that never finish.
"""
from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Optional
from collections.abc import Sequence

from gpu_platform.decisions.capacity import max_gpus_per_pod, node_resources, platform_capacity
from gpu_platform.decisions.cuda import spec_pool_cuda
from gpu_platform.decisions.datasets import MOUNT_PATH as DATASETS_PATH
from gpu_platform.decisions.datasets import SHARED_MOUNT_PATH, claim_teams
from gpu_platform.decisions.dra import ClaimShape, DomainShape, claim_counts, is_dra, is_ultraserver, team_domain_shapes
from gpu_platform.decisions.efa import pod_devices, pod_env
from gpu_platform.decisions.local_storage import pool_local_storage
from gpu_platform.decisions.numa import pool_kubelet
from gpu_platform.decisions.pod_sizing import pod_size
from gpu_platform.decisions.pod_sizing import shm_size as default_shm
from gpu_platform.decisions.queueing import local_queues, queue_labels
from gpu_platform.decisions.topology import (DEFAULT_TOPOLOGY_LEVEL, TOPOLOGY_LEVELS, TOPOLOGY_MODES, proximity_layers,
                                            schedules_by_topology)
from gpu_platform.decisions.runtime import job_ceiling
from gpu_platform.facts import catalog, names
from gpu_platform.facts import cuda as cuda_facts
from gpu_platform.render.model_cache import BASE_PATH
from gpu_platform.spec.models import quantity_value, selector_labels

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec, PlatformSpec, TeamSpec

SHM_VOLUME = "dshm"
CACHE_VOLUME = "model-cache"
DATASETS_VOLUME = "datasets"
SHARED_DATASETS_VOLUME = "datasets-shared"
SCRATCH_VOLUME = "scratch"
SCRATCH_PATH = "/scratch"  # an emptyDir: on pools with instance-store NVMe it lives on the RAID0 array
HF_HOME = f"{BASE_PATH}/huggingface"
CLAIM = "gpus"  # the pod's claim on a DRA pool
CHANNEL = "imex"  # its IMEX channel claim on an UltraServer pool
CHECKPOINT_ENV = "CHECKPOINT_DIR"
CHECKPOINT_SUBDIR = "checkpoints"  # <volume>/checkpoints/<job name>: one directory per Job
MAX_EXIT_CODES = 255  # Kubernetes: onExitCodes.values holds at most 255 codes


def _team(spec: "PlatformSpec", name: str) -> "TeamSpec":
    for team in spec.teams:
        if team.name == name:
            return team
    raise ValueError(f"unknown team {name!r}; teams: {', '.join(t.name for t in spec.teams) or 'none'}")


def _pool(spec: "PlatformSpec", name: str) -> "NodePoolSpec":
    for pool in spec.node_pools:
        if pool.name == name:
            return pool
    raise ValueError(f"unknown pool {name!r}; pools: {', '.join(p.name for p in spec.node_pools)}")


def _gpu_resource(spec: "PlatformSpec", mig_profile: Optional[str]) -> str:
    if mig_profile is None:
        return names.GPU_RESOURCE
    resource = names.mig_resource(mig_profile)
    offered = [r for r in platform_capacity(spec).total if r.startswith(names.MIG_RESOURCE_PREFIX)]
    if resource not in offered:
        raise ValueError(f"no pool offers {resource}; offered: {', '.join(offered) or 'none'}")
    return resource


def _placement(spec: "PlatformSpec", resource: str, gpus: int, pool: Optional[str],
               gpu_product: Optional[str]) -> tuple[dict[str, str], list[dict[str, Any]], list["NodePoolSpec"]]:
    """Node selector, tolerations and the pools the pod may land in. Choosing a pool also tolerates that
    pool's own taints; choosing a product (or nothing) tolerates only the GPU taint, so pools reserved
    by an extra taint stay reserved. Refuses a placement no node can satisfy."""
    tolerations = [{"key": names.GPU_TAINT_KEY, "operator": "Equal", "value": names.GPU_TAINT_VALUE,
                    "effect": "NoSchedule"}]
    if pool is not None and gpu_product is not None:
        raise ValueError("select a pool or a GPU product, not both")
    if pool is not None:
        chosen = _pool(spec, pool)
        _fits(spec, [chosen], resource, gpus, f"pool {pool}", hint="")
        tolerations += [{"key": t.key, "operator": "Equal", "value": t.value, "effect": t.effect}
                        for t in chosen.taints]
        return {names.POOL_LABEL: pool}, tolerations, [chosen]
    open_pools = [p for p in spec.node_pools if not p.taints]
    if gpu_product is not None:
        offered = sorted({p.gpu.key for p in spec.node_pools})
        if gpu_product not in offered:
            raise ValueError(f"no pool has {gpu_product} GPUs; pools offer: {', '.join(offered)}")
        product_pools = [p for p in open_pools if p.gpu.key == gpu_product]
        _fits(spec, product_pools, resource, gpus, f"{gpu_product} pools without extra taints")
        selector = {names.GPU_PRODUCT_LABEL: catalog.GPU_MODELS[gpu_product].product_label}
        return selector, tolerations, _landing(spec, product_pools, resource, gpus)
    _fits(spec, open_pools, resource, gpus, "pools without extra taints")
    return {}, tolerations, _landing(spec, open_pools, resource, gpus)


def _landing(spec: "PlatformSpec", pools: list["NodePoolSpec"], resource: str, gpus: int) -> list["NodePoolSpec"]:
    """The pools whose nodes can hold the pod (the scheduler places it nowhere else)."""
    return [p for p in pools if node_resources(p, spec.mig_strategy).get(resource, 0) >= gpus]


def _fits(spec: "PlatformSpec", pools: list["NodePoolSpec"], resource: str, gpus: int, where: str,
          hint: str = " (select a pool by name to use one reserved by its own taints)") -> None:
    most = max((node_resources(p, spec.mig_strategy).get(resource, 0) for p in pools), default=0)
    if gpus > most:
        raise ValueError(f"{where}: nodes offer at most {most} {resource}; asked for {gpus}{hint}")


def _sizes(spec: "PlatformSpec", landing: list["NodePoolSpec"], resource: str, gpus: int, cpu: Optional[str],
           memory: Optional[str], shm_size: Optional[str]) -> tuple[str, str, str]:
    """CPU and memory requests and the /dev/shm size: the caller's, else the pool shape's per-GPU share.
    Refuses more than the largest instance of the landing pools has."""
    size = pod_size(landing, resource, gpus, spec.mig_strategy)
    largest = max((it for p in landing for it in p.instances), key=lambda it: (it.vcpu, it.memory_gib))
    for asked, have, what in ((cpu, largest.vcpu, "cpu"), (memory, largest.memory_gib * 2**30, "memory")):
        if asked is not None and quantity_value(asked) > have:
            shown = f"{largest.vcpu} vCPUs" if what == "cpu" else f"{largest.memory_gib} GiB"
            raise ValueError(f"{what} {asked} is more than a {largest.name} node has ({shown})")
    memory = memory or size.memory_quantity
    shm_size = shm_size or default_shm(quantity_value(memory))
    if quantity_value(shm_size) > quantity_value(memory):
        raise ValueError(f"shm_size {shm_size} exceeds memory {memory}: /dev/shm pages count against the memory limit")
    return cpu or size.cpu_quantity, memory, shm_size


def gpu_pod_spec(spec: "PlatformSpec", team: str, image: str, *, gpus: int = 1, pool: Optional[str] = None,
                 gpu_product: Optional[str] = None, mig_profile: Optional[str] = None,
                 shm_size: Optional[str] = None, cpu: Optional[str] = None, memory: Optional[str] = None,
                 container: str = "main", command: Optional[list[str]] = None, nodes: int = 1,
                 cuda: Optional[str] = None) -> dict[str, Any]:
    """A PodSpec for one GPU container of `team`, ready to put in a Deployment, Job or Pod template.

    `cuda` is the CUDA version ("major.minor") the image is built with: the pod lands only on pools whose
    driver runs it, natively or by minor-version compatibility (docs/cuda.md), through a node affinity on the
    pool label, which the autoscalers know before a node exists.

    `nodes` is the node count of the job the pod belongs to: on an UltraServer pool a multi-node job's pods
    also claim an IMEX channel of the team's ComputeDomain of that many nodes, so they share GPU memory
    across the NVLink domain.

    `gpus` counts `nvidia.com/gpu` (or slices of `mig_profile` under the mixed MIG strategy);
    `gpu_product` is a catalog GPU key such as `L4`. CPU and memory default to the GPUs' share of the
    node (pod_sizing), /dev/shm to half the memory. On EFA pools the pod asks for its share of the
    node's EFA devices and gets the libfabric/NCCL environment. Raises ValueError for anything the
    cluster cannot schedule (unknown team, pool or product, more GPUs than a node or the team's pod
    limit, more CPU or memory than a node has).
    """
    return _pod_and_landing(spec, team, image, gpus=gpus, pool=pool, gpu_product=gpu_product, mig_profile=mig_profile,
                            shm_size=shm_size, cpu=cpu, memory=memory, container=container, command=command,
                            nodes=nodes, cuda=cuda)[0]


def _pod_and_landing(spec: "PlatformSpec", team: str, image: str, *, gpus: int, pool: Optional[str],
                     gpu_product: Optional[str], mig_profile: Optional[str], shm_size: Optional[str],
                     cpu: Optional[str], memory: Optional[str], container: str, command: Optional[list[str]],
                     nodes: int, cuda: Optional[str]) -> tuple[dict[str, Any], list["NodePoolSpec"]]:
    """gpu_pod_spec's PodSpec and the pools it may land in."""
    t = _team(spec, team)
    if gpus < 1:
        raise ValueError("gpus must be >= 1")
    if nodes < 1:
        raise ValueError("nodes must be >= 1")
    resource = _gpu_resource(spec, mig_profile)
    if resource == names.GPU_RESOURCE and gpus > max_gpus_per_pod(spec, t):
        raise ValueError(f"team {team} pods may use at most {max_gpus_per_pod(spec, t)} {resource}; asked for {gpus}")
    selector, tolerations, landing = _placement(spec, resource, gpus, pool, gpu_product)
    cuda_pools = _cuda_landing(spec, landing, cuda) if cuda is not None else None
    landing = cuda_pools if cuda_pools is not None else landing
    claim = _claim(landing, gpus) if resource == names.GPU_RESOURCE else None
    if claim is None and any(is_dra(p) for p in landing):  # requests never land on DRA nodes
        landing = [p for p in landing if not is_dra(p)]
        if not landing:
            raise ValueError(f"{gpus} GPUs: the DRA pools this pod may land on offer no claim of that shape")
    cpu, memory, shm_size = _sizes(spec, landing, resource, gpus, cpu, memory, shm_size)
    requests: dict[str, str] = {} if claim else {resource: str(gpus)}
    limits: dict[str, str] = {} if claim else {resource: str(gpus)}  # extended resources: requests = limits
    efa_devices = _efa_devices(spec, landing, resource, gpus)
    if efa_devices:
        requests[names.EFA_RESOURCE] = limits[names.EFA_RESOURCE] = str(efa_devices)
    requests["cpu"] = cpu
    if any(pool_kubelet(p).aligned for p in landing):  # Guaranteed QoS: the static CPU manager pins its CPUs
        limits["cpu"] = cpu
    # elsewhere no CPU limit: limits only throttle
    requests["memory"] = limits["memory"] = memory  # memory limit = request: no OOM kill for using what was asked
    mounts: list[dict[str, Any]] = [{"name": SHM_VOLUME, "mountPath": "/dev/shm"}]
    volumes: list[dict[str, Any]] = [{"name": SHM_VOLUME, "emptyDir": {"medium": "Memory", "sizeLimit": shm_size}}]
    env: list[dict[str, Any]] = []
    if spec.model_cache.enabled:
        mounts.append({"name": CACHE_VOLUME, "mountPath": BASE_PATH})
        volumes.append({"name": CACHE_VOLUME, "persistentVolumeClaim": {"claimName": names.MODEL_CACHE_PVC}})
        env.append({"name": "HF_HOME", "value": HF_HOME})
    if t.name in {c.name for c in claim_teams(spec)}:
        mounts.append({"name": DATASETS_VOLUME, "mountPath": DATASETS_PATH})
        volumes.append({"name": DATASETS_VOLUME, "persistentVolumeClaim": {"claimName": names.DATASETS_PVC}})
        fsx = spec.datasets.fsx_lustre
        if fsx is not None and fsx.shared:  # read-only: the volume is, and the mount says so
            mounts.append({"name": SHARED_DATASETS_VOLUME, "mountPath": SHARED_MOUNT_PATH, "readOnly": True})
            volumes.append({"name": SHARED_DATASETS_VOLUME, "persistentVolumeClaim": {
                "claimName": names.DATASETS_SHARED_PVC, "readOnly": True}})
    if all(pool_local_storage(p).mount for p in landing):  # emptyDir lives on the instance-store array
        mounts.append({"name": SCRATCH_VOLUME, "mountPath": SCRATCH_PATH})
        volumes.append({"name": SCRATCH_VOLUME, "emptyDir": {}})
    if efa_devices:
        env += pod_env(landing)
    main: dict[str, Any] = {"name": container, "image": image}
    if command:
        main["command"] = list(command)
    resources: dict[str, Any] = {"requests": requests, "limits": limits}
    main.update({"resources": resources, "volumeMounts": mounts,
                 "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}})
    if env:
        main["env"] = env
    pod: dict[str, Any] = {"priorityClassName": names.priority_class(t.priority_tier), "tolerations": tolerations}
    if selector:
        pod["nodeSelector"] = selector
    if cuda_pools is not None and pool is None:
        pod["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": names.POOL_LABEL, "operator": "In", "values": [p.name for p in landing]}]}]}}}
    pod.update({"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                "containers": [main], "volumes": volumes})
    claims = [{"name": CLAIM, "resourceClaimTemplateName": claim}] if claim else []
    channel = _channel(t, landing, nodes) if resource == names.GPU_RESOURCE else None
    if channel:  # IMEX across an UltraServer's nodes, whether GPUs come by claim or by the device plugin
        claims.append({"name": CHANNEL, "resourceClaimTemplateName": channel})
    if claims:
        pod["resourceClaims"] = claims
        resources["claims"] = [{"name": c["name"]} for c in claims]
    return pod, landing


def _cuda_landing(spec: "PlatformSpec", landing: list["NodePoolSpec"], version: str) -> list["NodePoolSpec"]:
    """The landing pools whose driver runs CUDA `version`; refuses naming `cuda` when none does."""
    problem = cuda_facts.version_problem(version)
    if problem:
        raise ValueError(f"cuda: {problem}")
    found = {p.name: spec_pool_cuda(spec, p) for p in landing}
    fit = [p for p in landing if found[p.name].known and not found[p.name].shortfalls(version)]
    if not fit:
        ceilings = {name: pc.ceiling() for name, pc in found.items()}
        reach = "; ".join(f"{name}: " + (cuda_facts.ceiling_text(c) if c else "driver not known")
                          for name, c in ceilings.items())
        raise ValueError(f"cuda={version!r}: no pool this pod may land on runs CUDA {version} ({reach}); pin a newer "
                         "driver (docs/cuda.md) or build the image with an older CUDA")
    return fit


def _channel(team: "TeamSpec", landing: list["NodePoolSpec"], nodes: int) -> Optional[str]:
    """The IMEX channel template of the team's ComputeDomain for a job of `nodes` nodes on UltraServer pools."""
    if nodes == 1 or not all(is_ultraserver(p) for p in landing):
        return None
    shapes = team_domain_shapes(landing, team)
    if DomainShape(nodes) not in shapes:
        offered = ", ".join(str(d.nodes) for d in shapes)
        raise ValueError(f"team {team.name} has ComputeDomains for jobs of {offered} nodes; asked for {nodes}")
    return DomainShape(nodes).channel_template


def _claim(landing: list["NodePoolSpec"], gpus: int) -> Optional[str]:
    """The claim template when every pool the pod may land in allocates by DRA, one GPU model, and offers the
    count as a claim shape; None when the pod uses requests."""
    if not landing or not all(is_dra(p) for p in landing):
        return None
    shapes = {ClaimShape(p.gpu.key, n) for p in landing for n in claim_counts(p.gpus_per_node)}
    models = {p.gpu.key for p in landing}
    if len(models) != 1 or ClaimShape(models.pop(), gpus) not in shapes:
        offered = ", ".join(sorted(f"{s.count} {s.gpu}" for s in shapes))
        raise ValueError(f"DRA pools take claims of one GPU model in these shapes: {offered}; asked for {gpus}")
    return ClaimShape(landing[0].gpu.key, gpus).name


def _efa_devices(spec: "PlatformSpec", landing: list["NodePoolSpec"], resource: str, gpus: int) -> int:
    """EFA devices to ask for: only when every pool the pod may land in has EFA (whole GPUs)."""
    if resource != names.GPU_RESOURCE or not landing or not all(p.efa for p in landing):
        return 0
    return min(pod_devices(p, gpus, node_resources(p, spec.mig_strategy).get(resource, 0)) for p in landing)


def _proximity(job: str, landing: list["NodePoolSpec"]) -> Optional[dict[str, Any]]:
    """Preferred pod affinity to the Job's other pods, one term per network layer (bottom layer weighs most).
    Preferred, not required: Kueue admits the Job by quota alone, and a required term could then leave it
    pending on free nodes in other parts of the network."""
    terms = [{"weight": weight, "podAffinityTerm": {"labelSelector": {"matchLabels": {names.JOB_NAME_LABEL: job}},
                                                    "topologyKey": label}}
             for label, weight in proximity_layers(landing)]
    return {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}} if terms else None


def gpu_pod_metadata(spec: "PlatformSpec", team: str, *, job: bool = False) -> dict[str, Any]:
    """Labels (and, for job pods, annotations) for a GPU pod or a pod template of `team`; with queueing on,
    the labels that queue it in the team's LocalQueue."""
    labels = {names.TEAM_LABEL: team, **queue_labels(spec, _team(spec, team))}
    if not job:
        return {"labels": labels}
    labels.update(selector_labels(spec.gpu_operator.upgrade_policy.wait_for_completion.pod_selector))
    return {"labels": labels, "annotations": {names.CA_SAFE_TO_EVICT_ANNOTATION: "false",
                                              names.KARPENTER_DO_NOT_DISRUPT_ANNOTATION: "true"}}


def gpu_pod(spec: "PlatformSpec", team: str, name: str, image: str, *, job: bool = False, **options: Any) -> dict[str, Any]:
    """A complete Pod manifest in the team's namespace around `gpu_pod_spec` (for docs and checks)."""
    metadata = {"name": name, "namespace": names.team_namespace(team), **gpu_pod_metadata(spec, team, job=job)}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": gpu_pod_spec(spec, team, image, **options)}


def checkpoint_dir(pod_spec: dict[str, Any], job: str) -> Optional[str]:
    """The job's own directory on a volume that outlives the node: the team's datasets claim, else the model
    cache; None when the pod mounts neither (then no directory survives a node repair)."""
    mounted = {v["name"] for v in pod_spec["volumes"]}
    for volume, base in ((DATASETS_VOLUME, DATASETS_PATH), (CACHE_VOLUME, BASE_PATH)):
        if volume in mounted:
            return f"{base}/{CHECKPOINT_SUBDIR}/{job}"
    return None


def pod_failure_policy(container: str, fail_on_exit_codes: Sequence[int]) -> dict[str, Any]:
    """Disruptions (eviction for node repair, spot reclaim, a drain, preemption) do not count against
    `backoffLimit`; an exit code the team names fails the Job at once. Kubernetes requires 1-255 values, each
    nonzero for `In` (https://kubernetes.io/docs/concepts/workloads/controllers/job/#pod-failure-policy)."""
    codes = sorted(set(fail_on_exit_codes))
    bad = [c for c in codes if isinstance(c, bool) or not isinstance(c, int) or not 1 <= c <= 255]
    if bad:
        raise ValueError(f"fail_on_exit_codes: {bad} are not exit codes a container can fail with; give integers 1-255")
    if len(codes) > MAX_EXIT_CODES:
        raise ValueError(f"fail_on_exit_codes: at most {MAX_EXIT_CODES} values; got {len(codes)}")
    rules: list[dict[str, Any]] = [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget",
                                                                             "status": "True"}]}]
    if codes:
        rules.append({"action": "FailJob", "onExitCodes": {"containerName": container, "operator": "In",
                                                           "values": codes}})
    return {"rules": rules}


def topology_request(spec: "PlatformSpec", landing: Sequence["NodePoolSpec"], nodes: int, topology: str = "preferred",
                     topology_level: Optional[str] = None) -> dict[str, str]:
    """The pod-set annotation a Job's pods carry on pools Kueue places by topology (none elsewhere): a multi-node
    Job asks to fit within one domain of `topology_level` (default the bottom network layer), preferably or
    strictly; a single-node Job asks for no domain but still for topology, the only pod sets such pools admit."""
    if topology not in TOPOLOGY_MODES:
        raise ValueError(f"topology={topology!r}: one of {', '.join(TOPOLOGY_MODES)}")
    level = topology_level or DEFAULT_TOPOLOGY_LEVEL
    if level not in TOPOLOGY_LEVELS:
        raise ValueError(f"topology_level={level!r}: one of {', '.join(TOPOLOGY_LEVELS)}")
    if not landing or not all(schedules_by_topology(p, spec.queueing) for p in landing):
        return {}
    if nodes <= 1:
        return {names.KUEUE_UNCONSTRAINED_TOPOLOGY_ANNOTATION: "true"}
    key = names.KUEUE_REQUIRED_TOPOLOGY_ANNOTATION if topology == "required" else names.KUEUE_PREFERRED_TOPOLOGY_ANNOTATION
    return {key: level}


def gpu_job(spec: "PlatformSpec", team: str, name: str, image: str, *, backoff_limit: Optional[int] = None,
            fail_on_exit_codes: Sequence[int] = (), topology: str = "preferred", topology_level: Optional[str] = None,
            queue: Optional[str] = None, **options: Any) -> dict[str, Any]:
    """A batch/v1 Job of `team` whose pods the driver upgrade waits for and the autoscaler never evicts.

    A pod evicted by a disruption is replaced without counting as a failure, and `fail_on_exit_codes` (1-255,
    at most 255) end the Job at the first pod exiting with one of them, whatever `backoff_limit` allows.
    Pods get `CHECKPOINT_DIR`, the job's directory on the team's datasets or model-cache volume (docs/workloads.md).
    The pods of a multi-node Job on pools whose nodes carry the AWS network-layer labels prefer nodes close in
    the network to each other; on pools Kueue places by topology, the Job asks Kueue to admit it within one domain
    of `topology_level` (`topology`: "preferred", the default, or "required"; docs/topology.md).
    `queue` names another of the team's LocalQueues than its own: a sub-team's, or `debug` (whose ceiling it
    then carries; docs/queueing.md).
    """
    keywords = inspect.signature(gpu_pod_spec).parameters.items()
    defaults = {k: p.default for k, p in keywords if p.kind is p.KEYWORD_ONLY}
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise TypeError(f"gpu_job() got unexpected keyword arguments: {', '.join(unknown)}")
    pod, landing = _pod_and_landing(spec, team, image, **{**defaults, **options})
    pod_spec = {**pod, "restartPolicy": "Never"}  # podFailurePolicy needs it
    if options.get("nodes", 1) > 1:
        proximity = _proximity(name, landing)
        if proximity:  # beside a node affinity the pod may already have (cuda=)
            pod_spec["affinity"] = {**pod_spec.get("affinity", {}), **proximity}
    policy = pod_failure_policy(options.get("container", "main"), fail_on_exit_codes)
    checkpoints = checkpoint_dir(pod_spec, name)
    if checkpoints is not None:
        main = pod_spec["containers"][0]
        main["env"] = [*main.get("env", []), {"name": CHECKPOINT_ENV, "value": checkpoints}]
    nodes = options.get("nodes", 1)
    metadata = gpu_pod_metadata(spec, team, job=True)
    metadata["annotations"].update(topology_request(spec, landing, nodes, topology, topology_level))
    job: dict[str, Any] = {"podFailurePolicy": policy, "template": {"metadata": metadata, "spec": pod_spec}}
    if nodes > 1:  # one pod per node, each with its index (the rank of a multi-node job)
        job = {"parallelism": nodes, "completions": nodes, "completionMode": "Indexed", **job}
    if backoff_limit is not None:
        job = {"backoffLimit": backoff_limit, **job}
    ceiling_labels, ceiling = job_ceiling(spec, _team(spec, team), queue)  # the tier's or the queue's ceiling
    labels = {names.TEAM_LABEL: team, **queue_labels(spec, _team(spec, team)), **ceiling_labels}
    if queue is not None:
        _check_queue(spec, team, queue)
        labels[names.KUEUE_QUEUE_NAME_LABEL] = metadata["labels"][names.KUEUE_QUEUE_NAME_LABEL] = queue
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": name, "namespace": names.team_namespace(team), "labels": labels},
            "spec": {**ceiling, **job}}


def _check_queue(spec: "PlatformSpec", team: str, queue: str) -> None:
    if not spec.queueing.enabled:
        raise ValueError(f"queue={queue!r}: queues exist when queueing.mode is kueue")
    offered = [lq.name for lq in local_queues(spec.queueing, _team(spec, team))]
    if queue not in offered:
        raise ValueError(f"queue={queue!r}: team {team!r} has the LocalQueues {', '.join(offered)}")
