"""Stack-file rules for pools that allocate GPUs by Dynamic Resource Allocation (`gpuAllocation: dra`).

A DRA pool's GPUs are published by NVIDIA's DRA driver and claimed through ResourceClaims; the GPU
Operator's device plugin is off on its nodes (AWS: never run both on one node, "silent oversubscription").
Each rule refuses a pool where that cannot work, with the field to edit (sources in docs/dra.md):

- Kubernetes below 1.34: DRA's stable API (resource.k8s.io/v1) and AWS's recommendation start there;
- Karpenter v1.14 ignores claims (IGNORE_DRA_REQUESTS on by default, its DRA support alpha): it would
  launch nodes that cannot serve the pending pods, or none;
- a managed node group that scales: the Cluster Autoscaler builds an empty group's node from its Auto
  Scaling group's tags, which cannot describe DRA devices, so it cannot scale a DRA pool from zero (and
  its DRA simulation is off by default); a DRA pool has a fixed size (minSize = maxSize);
- time-slicing and MIG are device-plugin settings: under DRA they are per-claim driver features still
  alpha (TimeSlicingSettings, DynamicMIG) or not wired by the platform yet;
- an image that runs its own device plugin, unless its user data turns it off: Bottlerocket from 1.63.0
  (the platform writes the setting; a pinned older release is refused);
- a driver older than R580 (the driver's prerequisite).
"""
from __future__ import annotations

from collections.abc import Iterator

from gpu_platform.facts import catalog
from gpu_platform.facts.karpenter import KARPENTER
from gpu_platform.facts.lifecycle_calendar import ami_driver_era
from gpu_platform.spec.field_path import GPU_OPERATOR, FieldPath, Problem
from gpu_platform.spec.models import NodePoolSpec
from gpu_platform.spec.pool_context import PoolContext

DRA = "dra"


def pool_rules(ctx: PoolContext, pool: NodePoolSpec) -> Iterator[Problem]:
    if pool.gpu_allocation != DRA:
        return
    at = ctx.at / "gpuAllocation"
    k8s = ctx.kubernetes_version
    if k8s is not None and catalog.version_key(k8s) < catalog.version_key(catalog.DRA_MIN_KUBERNETES):
        yield (at, f"DRA needs Kubernetes {catalog.DRA_MIN_KUBERNETES} or newer (resource.k8s.io/v1, NVIDIA's DRA "
               f"driver prerequisite); the cluster runs {k8s}: raise cluster.kubernetesVersion or use device-plugin")
    if pool.provisioner == KARPENTER:
        yield (at, "Karpenter v1.14 does not provision for ResourceClaims (its DRA support is alpha and the chart "
               "sets IGNORE_DRA_REQUESTS): use provisioner managed-node-group for a DRA pool, or device-plugin")
    elif pool.min_size != pool.max_size:
        yield (ctx.at / "minSize", f"a DRA pool has a fixed size (minSize = maxSize = {pool.max_size}): the Cluster "
               "Autoscaler cannot build a DRA node from an empty Auto Scaling group's tags, so it cannot scale "
               "the pool from zero for a pending claim")
    yield from sharing_rules(at, pool.sharing.mode)
    if not pool.ami.image.operator_device_plugin:
        yield from _own_device_plugin(ctx, pool)
    yield from _driver_floor(ctx, pool)


def sharing_rules(at: FieldPath, mode: str) -> Iterator[Problem]:
    """A DRA pool's GPU sharing (`at`: its gpuAllocation): whole GPUs only. Used by the stack file's pools
    and by the GPU Operator component's pools alike."""
    if mode == "time-slicing":
        yield (at, "time-slicing is a device-plugin setting; under DRA it is the driver's alpha TimeSlicingSettings "
               "gate, which the platform does not enable: use sharing.mode none on a DRA pool, or device-plugin")
    elif mode == "mig":
        yield (at, "MIG slices on DRA pools (mig.nvidia.com claims) are not supported by the platform yet: every "
               "profile shares that one DeviceClass, so quotas and queues could not count slices per profile; use "
               "whole GPUs (sharing.mode none) on a DRA pool, or device-plugin for MIG")


def _own_device_plugin(ctx: PoolContext, pool: NodePoolSpec) -> Iterator[Problem]:
    """The image's own device plugin is turned off by the pool's user data, from the release that can."""
    image, pin = pool.ami.image, pool.ami.release_version
    floor = image.own_device_plugin_off_from
    if not floor:
        yield (ctx.at / "ami.type", f"{image.key} runs its own device plugin, which cannot be turned off: a DRA "
               "pool needs AL2023, Ubuntu or Bottlerocket")
        return
    release = catalog.bottlerocket_version(pin or "")
    if release is not None and catalog.version_key(release) < catalog.version_key(floor):
        yield (ctx.at / "ami.releaseVersion", f"{pin} is {image.key} {release}, whose own device plugin cannot be "
               f"turned off before {floor} ({'.'.join(catalog.BOTTLEROCKET_DEVICE_PLUGIN_OFF[:2])}): pin "
               f"{floor} or newer, or use device-plugin")


def _driver_floor(ctx: PoolContext, pool: NodePoolSpec) -> Iterator[Problem]:
    floor = int(catalog.DRA_MIN_DRIVER_BRANCH)
    if ctx.driver_source == "operator":
        if ctx.driver_version and int(catalog.driver_branch(ctx.driver_version)) < floor:
            yield (GPU_OPERATOR / "driver.version", f"{ctx.at} allocates GPUs by DRA, which needs driver R{floor} or "
                   f"newer; {ctx.driver_version} is R{catalog.driver_branch(ctx.driver_version)}")
        return
    pin, fld = (pool.ami.alias, "alias") if pool.ami.alias else (pool.ami.release_version, "releaseVersion")
    era = ami_driver_era(pool.ami.image.eks_ami_type, pin or "")
    for family in dict.fromkeys(it.family for it in pool.instances):
        branch = era.branch_for(family) if era else None
        if branch and int(branch) < floor:
            yield (ctx.at.field("ami").field(fld), f"{pin} runs driver R{branch} on {family}; DRA needs R{floor} or newer: "
                   "pin a newer AMI release")
