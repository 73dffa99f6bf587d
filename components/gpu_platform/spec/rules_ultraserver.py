"""Stack-file rules for UltraServer pools (`p6e-gb200.36xlarge`: GB200 NVL72, one NVLink domain across nodes).

Each refuses what AWS or NVIDIA documents as unsupported there (AWS EKS user guide,
ml-eks-nvidia-ultraserver @00e3293d; next-gen-gpus.md §1.4, §1.6), with the field to edit:

- the instances exist only inside UltraServers bought as EC2 Capacity Blocks: capacityType capacity-block,
  for whole UltraServers (a block's instanceCount a multiple of the smallest UltraServer);
- DRA is "a requirement to use the P6e-GB200 UltraServers with EKS" (IMEX channels are handed out by the DRA
  driver's ComputeDomains): gpuAllocation dra, so never Karpenter (no DRA, and not in its catalog);
- no MIG: the AMI runs the GPUs with coherent driver-based memory, under which MIG is not supported;
- the AMI owns the driver, fabric manager and IMEX (the operator's driver, toolkit and MIG manager are off
  there), and the driver is R580: R595 breaks NCCL over EFA on P6e;
- one instance type per pool (an UltraServer holds one), and EFA on, for traffic between UltraServers.
"""
from __future__ import annotations

from typing import Iterator

from gpu_platform.facts import catalog
from gpu_platform.facts.karpenter import KARPENTER
from gpu_platform.facts.lifecycle_calendar import ami_driver_era
from gpu_platform.spec.models import NodePoolSpec
from gpu_platform.spec.pool_context import PoolContext

Problem = tuple[str, str]


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
    smallest = min(us.sizes.values())
    count = pool.reservation.instance_count if pool.reservation else None
    if count is not None and count % smallest:
        sizes = ", ".join(f"{k} = {v}" for k, v in us.sizes.items())
        yield (at / "reservation.instanceCount", f"a block holds whole UltraServers ({sizes} instances): "
               f"{count} is not a multiple of {smallest}")
    if pool.provisioner == KARPENTER:
        yield (at / "provisioner", f"Karpenter has no {us.instance_type} in its catalog and does not provision for "
               "DRA claims: use managed-node-group")
    if pool.gpu_allocation != "dra":
        yield (at / "gpuAllocation", "an UltraServer's NVLink domain spans nodes only through IMEX channels, which "
               "NVIDIA's DRA driver hands out (ComputeDomains); AWS requires DRA on P6e-GB200: set gpuAllocation dra")
    if pool.sharing.mode == "mig":
        yield (at / "sharing.mode", "MIG is not supported on GB200 here: the EKS AMI runs it with coherent driver-based "
               "memory (CDMM), under which MIG and vGPU are off; use sharing.mode none")
    elif pool.sharing.mode != "none":
        yield (at / "sharing.mode", "an UltraServer pool hands out whole GPUs by DRA: use sharing.mode none")
    if not pool.efa:
        yield (at / "efa", "multi-node jobs reach GPUs outside their UltraServer over EFA (the AMI ships it): set "
               "efa: true")
    yield from _driver_rules(ctx, pool, us)


def _driver_rules(ctx: PoolContext, pool: NodePoolSpec, us: catalog.UltraServer) -> Iterator[Problem]:
    branches = "/".join(f"R{b}" for b in us.driver_branches)
    if ctx.driver_source != "ami":
        yield ("gpuOperator.driver.source", f"{ctx.at} runs {us.instance_type}, whose AMI owns the driver, fabric "
               "manager and IMEX (AWS: the operator's driver and toolkit off there): use source ami")
    branch = catalog.driver_branch(ctx.driver_version) if ctx.driver_version else None
    if branch and branch not in us.driver_branches:
        yield ("gpuOperator.driver.version", f"{ctx.at} runs {us.instance_type}, which runs {branches} only: "
               f"{ctx.driver_version} is R{branch}; R595 drops NVreg_GrdmaPciTopoCheckOverride and NCCL over EFA "
               "aborts on P6e (pin 580.173.02)")
    pin = pool.ami.alias or pool.ami.release_version
    era = ami_driver_era(pool.ami.image.eks_ami_type, pin or "")
    ami_branch = era.branch_for(catalog.instance_type(us.instance_type).family) if era else None
    if ami_branch and ami_branch not in us.driver_branches:
        fld = "alias" if pool.ami.alias else "releaseVersion"
        yield (ctx.at.field("ami").field(fld), f"{pin} runs driver R{ami_branch} on {us.instance_type}, which runs {branches} "
               "only (R595 breaks EFA there): pin a release that runs R580")
