"""Stack-file rules for UltraServer pools (`p6e-gb200.36xlarge`: GB200 NVL72, one NVLink domain across nodes).

Each refuses what AWS or NVIDIA documents as unsupported there (AWS EKS user guide,
ml-eks-nvidia-ultraserver @00e3293d; awslabs/amazon-eks-ami templates/al2023/runtime/gpu/nvidia-kmod-load.sh
@81fec2e8; NVIDIA/aicr PR#2439 for the R580 hold), with the field to edit:

- the instances exist only inside UltraServers bought as EC2 Capacity Blocks: capacityType capacity-block,
  one UltraServer per block ("each UltraServer corresponds to one Capacity Block", EC2 user guide): a block's
  instanceCount is 9 (u-p6e-gb200x36) or 18 (x72), and more UltraServers are more pools;
- IMEX channels are handed out by the DRA driver's ComputeDomains, which AWS requires ("DRA is a requirement
  to use the P6e-GB200 UltraServers with EKS"), while its guide keeps the GPUs themselves on the device plugin:
  either gpuAllocation works, the driver runs for ComputeDomains either way (so Kubernetes 1.34 for its API),
  and never Karpenter (not in its catalog, and no DRA); the driver's GPU side is cluster-wide, so a
  device-plugin UltraServer pool and a DRA pool do not share a cluster (`platform_rules`);
- no MIG: the AMI runs the GPUs with coherent driver-based memory, under which MIG is not supported;
- the AMI owns the driver, fabric manager and IMEX (the operator's driver, toolkit and MIG manager are off
  there), and the driver is R580: R595 breaks NCCL over EFA on P6e;
- one instance type per pool (an UltraServer holds one), and EFA on, for traffic between UltraServers.
"""
from __future__ import annotations

from collections.abc import Iterator

from gpu_platform.facts import catalog
from gpu_platform.facts.karpenter import KARPENTER
from gpu_platform.facts.lifecycle_calendar import ami_driver_era
from gpu_platform.spec.field_path import GPU_OPERATOR, NODE_POOLS, FieldPath, Problem
from gpu_platform.spec.models import NodePoolSpec, PlatformSpec
from gpu_platform.spec.pool_context import PoolContext


def ultraservers(pool: NodePoolSpec) -> list[catalog.UltraServer]:
    return [catalog.ULTRASERVERS[t] for t in pool.instance_types if t in catalog.ULTRASERVERS]


def pool_rules(ctx: PoolContext, pool: NodePoolSpec) -> Iterator[Problem]:
    found = ultraservers(pool)
    if not found:
        return
    at, us = ctx.at, found[0]
    if len(pool.instance_types) > 1:
        yield (at / "instanceTypes", f"{us.instance_type} runs only inside its UltraServer: list it alone in the pool")
    if pool.capacity_type != "capacity-block":
        yield (at / "capacityType", f"{us.instance_type} is sold only as UltraServers on EC2 Capacity Blocks: use "
               "capacityType capacity-block with the block's reservation {id, start, end}")
    yield from _one_ultraserver(at, pool, us)
    if pool.provisioner == KARPENTER:
        yield (at / "provisioner", f"Karpenter has no {us.instance_type} in its catalog and does not provision for "
               "DRA claims: use managed-node-group")
    k8s = ctx.kubernetes_version
    if pool.gpu_allocation != "dra" and k8s and catalog.version_key(k8s) < catalog.version_key(catalog.DRA_MIN_KUBERNETES):
        yield (at / "gpuAllocation", f"an UltraServer's IMEX channels come from NVIDIA's DRA driver (ComputeDomains), "
               f"which needs Kubernetes {catalog.DRA_MIN_KUBERNETES} or newer; the cluster runs {k8s}")
    if pool.sharing.mode == "mig":
        yield (at / "sharing.mode", "MIG is not supported on GB200 here: the EKS AMI runs it with coherent driver-based "
               "memory (CDMM), under which MIG and vGPU are off; use sharing.mode none")
    elif pool.sharing.mode != "none":
        yield (at / "sharing.mode", "an UltraServer pool hands out whole GPUs: use sharing.mode none")
    if not pool.efa:
        yield (at / "efa", "multi-node jobs reach GPUs outside their UltraServer over EFA (the AMI ships it): set "
               "efa: true")
    yield from _driver_rules(ctx, pool, us)


def platform_rules(spec: PlatformSpec) -> Iterator[Problem]:
    """The DRA driver publishes GPUs on every node its kubelet plugin runs on, or on none: an UltraServer pool on
    the device plugin (the plugin there for ComputeDomains only) cannot share a cluster with a DRA pool."""
    dra = [i for i, p in enumerate(spec.node_pools) if p.gpu_allocation == "dra"]
    for i, pool in enumerate(spec.node_pools):
        if ultraservers(pool) and pool.gpu_allocation != "dra" and dra:
            yield (NODE_POOLS.index(i) / "gpuAllocation", f"{NODE_POOLS.index(dra[0])} allocates GPUs by DRA, so the "
                   "DRA driver publishes GPUs on every node it runs on, and it runs on this UltraServer pool for "
                   "ComputeDomains: the device plugin would hand out the same GPUs; set gpuAllocation dra here too")


def _one_ultraserver(at: FieldPath, pool: NodePoolSpec, us: catalog.UltraServer) -> Iterator[Problem]:
    """A block is one UltraServer ("each UltraServer corresponds to one Capacity Block", EC2 user guide): its
    instances are one UltraServer's, and more UltraServers are more blocks, one pool each."""
    r = pool.reservation
    if r is None or pool.capacity_type != "capacity-block":
        return
    count, field = (r.instance_count, "reservation.instanceCount") if r.instance_count else (pool.max_size, "maxSize")
    if count not in us.sizes.values():
        sizes = " or ".join(f"{v} ({k})" for k, v in us.sizes.items())
        yield (at / field, f"a Capacity Block holds one UltraServer: {sizes} instances, not {count}; for more "
               "UltraServers buy a block each and give each its own pool")


def _driver_rules(ctx: PoolContext, pool: NodePoolSpec, us: catalog.UltraServer) -> Iterator[Problem]:
    branches = "/".join(f"R{b}" for b in us.driver_branches)
    if ctx.driver_source != "ami":
        yield (GPU_OPERATOR / "driver.source", f"{ctx.at} runs {us.instance_type}, whose AMI owns the driver, fabric "
               "manager and IMEX (AWS: the operator's driver and toolkit off there): use source ami")
    branch = catalog.driver_branch(ctx.driver_version) if ctx.driver_version else None
    if branch and branch not in us.driver_branches:
        yield (GPU_OPERATOR / "driver.version", f"{ctx.at} runs {us.instance_type}, which runs {branches} only: "
               f"{ctx.driver_version} is R{branch}; R595 drops NVreg_GrdmaPciTopoCheckOverride and NCCL over EFA "
               "aborts on P6e (pin 580.173.02)")
    pin = pool.ami.alias or pool.ami.release_version
    era = ami_driver_era(pool.ami.image.eks_ami_type, pin or "")
    ami_branch = era.branch_for(catalog.instance_type(us.instance_type).family) if era else None
    if ami_branch and ami_branch not in us.driver_branches:
        fld = "alias" if pool.ami.alias else "releaseVersion"
        yield (ctx.at.field("ami").field(fld), f"{pin} runs driver R{ami_branch} on {us.instance_type}, which runs {branches} "
               "only (R595 breaks EFA there): pin a release that runs R580")
