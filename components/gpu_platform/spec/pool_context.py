"""What a GPU pool's rules and decisions read besides the pool itself: its cluster, its environment and the
settings it shares with the other pools of a platform.

The stack file gives it whole (`PoolContext.of(spec, pool)`); a pool component builds it from its own
arguments, so a node pool can be validated and built without a stack file.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from collections.abc import Mapping
from typing import TYPE_CHECKING, Optional, Union

from gpu_platform.spec.field_path import FieldPath

if TYPE_CHECKING:
    from gpu_platform.spec.models import DisruptionWindowSpec, NodePoolSpec, PlatformSpec, VpcSpec


@dataclass(frozen=True)
class PoolContext:
    at: FieldPath  # the pool's field path in problems: nodePools[1] in a stack file, the root for a component's arguments
    cluster_name: Optional[str]  # None: known only when deployed (an Output of another resource)
    kubernetes_version: Optional[str]  # None: the cluster's (a node group follows its control plane)
    environment: str = "dev"  # prod: protected pools, one node at a time, conservative repair
    # The environment is stated (a stack file's, or the one a program gave the pool) and tagged on what the
    # pool launches; False: nobody stated one, so no tag claims it and the policy pack holds the pool to prod.
    environment_stated: bool = True
    tags: Mapping[str, str] = field(default_factory=dict)  # on every instance and volume
    driver_source: str = "ami"  # who installs the NVIDIA driver: the AMI or the GPU Operator
    driver_version: Optional[str] = None  # the operator's pinned driver (driver_source operator)
    mig_strategy: str = "none"  # the cluster-wide MIG strategy (none, single, mixed)
    lustre_client: bool = False  # nodes install the FSx for Lustre client (the platform has a datasets file system)
    vpc: Optional["VpcSpec"] = None  # the VPC the platform creates: pool zones are its zones
    subnet_zones: Optional[tuple[str, ...]] = None  # else the zones of the pool's subnets, in order, when known
    disruption_window: Optional["DisruptionWindowSpec"] = None  # when Karpenter may disrupt pool nodes
    today: Optional[date] = None  # the plan's day (reservation windows are judged against it); None: today
    # The environment's default acceptance gate applies when the pool sets none: GpuPlatform installs the checker
    # and the node readiness controller; a pool component alone gates only when its arguments ask.
    acceptance_defaults: bool = False

    @property
    def prod(self) -> bool:
        return self.environment == "prod"

    def protected(self, pool: "NodePoolSpec") -> bool:
        return self.prod if pool.protect is None else pool.protect

    def max_unavailable(self, pool: "NodePoolSpec") -> Union[int, str]:
        """Nodes a rolling update replaces at a time: one in prod (GPU jobs die with their node), else 25%."""
        if pool.max_unavailable is not None:
            return pool.max_unavailable
        return 1 if self.prod else "25%"

    @classmethod
    def of(cls, spec: "PlatformSpec", pool: "NodePoolSpec", today: Optional[date] = None) -> "PoolContext":
        """The context of one of the stack file's pools."""
        index = next(i for i, p in enumerate(spec.node_pools) if p is pool)
        driver = spec.gpu_operator.driver
        return cls(
            at=FieldPath.of("nodePools").index(index), cluster_name=spec.cluster.name,
            kubernetes_version=spec.cluster.kubernetes_version, environment=spec.environment, tags=spec.tags,
            driver_source=driver.source, driver_version=driver.version, mig_strategy=spec.mig_strategy,
            lustre_client=spec.datasets.fsx_lustre is not None,
            vpc=spec.cluster.create.vpc if spec.cluster.create else None,
            disruption_window=spec.karpenter.disruption_window, today=today, acceptance_defaults=True)
