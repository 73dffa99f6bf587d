"""gpu-platform: a production GPU platform on AWS EKS, whole from one stack file or a part at a time.

`GpuPlatform` builds everything a stack file describes. Each capability is also a Pulumi component of its
own, with Args of its own (typed dictionaries of plain values and Pulumi Inputs), checked by the rules the
stack file uses for that part:

- clusters: `Cluster` (a new EKS cluster), `AdoptedCluster` (one that exists, by name);
- GPU nodes: `GpuNodePool` (an EKS managed node group), `KarpenterNodePool` (a Karpenter NodePool);
- the GPU stack: `GpuOperator` (NVIDIA GPU Operator, pinned driver, time-slicing and MIG configs),
  `GpuMonitoring` (DCGM scraping, GPU alerts and their delivery);
- storage: `ModelCache` (a ReadWriteMany EFS cache), `Datasets` (FSx for Lustre, linked to S3);
- tenancy: `TeamNamespace`, `PriorityTiers`, `TeamAdmission`, `TeamAccess`, `KueueQueueing`.

Names are imported on first use, so `import gpu_platform` costs no provider SDK. The same components
are a Pulumi component package for every Pulumi language (`provider/`, docs/library.md).
"""
import importlib
from typing import TYPE_CHECKING, Any

__version__: str  # read on first use (importlib.metadata costs more than the rest of this module)


def _version() -> str:
    """The version lives in pyproject.toml; an installed package reads it from its metadata."""
    import importlib.metadata

    try:
        return importlib.metadata.version("gpu-platform")
    except importlib.metadata.PackageNotFoundError:  # imported from a source tree that was never installed
        return "0+unknown"

_RESOURCES = "gpu_platform.resources"
_EXPORTS: dict[str, tuple[str, ...]] = {
    "gpu_platform.platform": ("GpuPlatform", "GpuPlatformArgs"),
    f"{_RESOURCES}.cluster": ("Cluster", "ClusterArgs", "VpcArgs", "SystemNodesArgs"),
    f"{_RESOURCES}.adopted_cluster": ("AdoptedCluster", "AdoptedClusterArgs"),
    f"{_RESOURCES}.node_pool": ("GpuNodePool", "GpuNodePoolArgs"),
    f"{_RESOURCES}.karpenter_pool": ("KarpenterNodePool", "KarpenterNodePoolArgs"),
    f"{_RESOURCES}.arg_enums": ("CapacityType", "AmiType", "SharingMode"),
    f"{_RESOURCES}.pool_args": ("PoolAmiArgs", "PoolSharingArgs", "PoolTaintArgs", "PoolRepairArgs",
                                "KarpenterSettingsArgs", "DisruptionWindowArgs"),
    f"{_RESOURCES}.gpu_operator": ("GpuOperator", "GpuOperatorArgs", "OperatorDriverArgs", "OperatorPoolArgs",
                                   "OperatorUpgradePolicyArgs"),
    f"{_RESOURCES}.monitoring": ("GpuMonitoring", "GpuMonitoringArgs"),
    f"{_RESOURCES}.model_cache": ("ModelCache", "ModelCacheArgs"),
    f"{_RESOURCES}.datasets": ("Datasets", "DatasetsArgs", "FsxLustreArgs"),
    f"{_RESOURCES}.team": ("TeamNamespace", "TeamNamespaceArgs", "TeamQuotaArgs", "TeamModelCacheArgs",
                           "PriorityTiers", "PriorityTiersArgs", "TeamAccess", "TeamAccessArgs", "TeamRolesArgs"),
    f"{_RESOURCES}.admission": ("TeamAdmission", "TeamAdmissionArgs"),
    f"{_RESOURCES}.kueue": ("KueueQueueing", "KueueQueueingArgs", "QueuePoolArgs", "QueuedTeamArgs"),
    "gpu_platform.decisions.validation": ("parse_platform",),
    "gpu_platform.spec.models": ("PlatformSpec",),
    "gpu_platform.spec.errors": ("SpecError",),
}
if TYPE_CHECKING:  # the same names, imported statically for type checkers and IDEs (tests/test_public_types.py)
    from gpu_platform.decisions.validation import parse_platform as parse_platform
    from gpu_platform.platform import GpuPlatform as GpuPlatform, GpuPlatformArgs as GpuPlatformArgs
    from gpu_platform.resources.admission import TeamAdmission as TeamAdmission, TeamAdmissionArgs as TeamAdmissionArgs
    from gpu_platform.resources.adopted_cluster import (
        AdoptedCluster as AdoptedCluster, AdoptedClusterArgs as AdoptedClusterArgs)
    from gpu_platform.resources.arg_enums import (
        CapacityType as CapacityType, AmiType as AmiType, SharingMode as SharingMode)
    from gpu_platform.resources.cluster import (
        Cluster as Cluster, ClusterArgs as ClusterArgs, VpcArgs as VpcArgs, SystemNodesArgs as SystemNodesArgs)
    from gpu_platform.resources.datasets import (
        Datasets as Datasets, DatasetsArgs as DatasetsArgs, FsxLustreArgs as FsxLustreArgs)
    from gpu_platform.resources.gpu_operator import (
        GpuOperator as GpuOperator, GpuOperatorArgs as GpuOperatorArgs, OperatorDriverArgs as OperatorDriverArgs,
        OperatorPoolArgs as OperatorPoolArgs, OperatorUpgradePolicyArgs as OperatorUpgradePolicyArgs)
    from gpu_platform.resources.karpenter_pool import (
        KarpenterNodePool as KarpenterNodePool, KarpenterNodePoolArgs as KarpenterNodePoolArgs)
    from gpu_platform.resources.kueue import (
        KueueQueueing as KueueQueueing, KueueQueueingArgs as KueueQueueingArgs, QueuePoolArgs as QueuePoolArgs,
        QueuedTeamArgs as QueuedTeamArgs)
    from gpu_platform.resources.model_cache import ModelCache as ModelCache, ModelCacheArgs as ModelCacheArgs
    from gpu_platform.resources.monitoring import GpuMonitoring as GpuMonitoring, GpuMonitoringArgs as GpuMonitoringArgs
    from gpu_platform.resources.node_pool import GpuNodePool as GpuNodePool, GpuNodePoolArgs as GpuNodePoolArgs
    from gpu_platform.resources.pool_args import (
        PoolAmiArgs as PoolAmiArgs, PoolSharingArgs as PoolSharingArgs, PoolTaintArgs as PoolTaintArgs,
        PoolRepairArgs as PoolRepairArgs, KarpenterSettingsArgs as KarpenterSettingsArgs,
        DisruptionWindowArgs as DisruptionWindowArgs)
    from gpu_platform.resources.team import (
        TeamNamespace as TeamNamespace, TeamNamespaceArgs as TeamNamespaceArgs, TeamQuotaArgs as TeamQuotaArgs,
        TeamModelCacheArgs as TeamModelCacheArgs, PriorityTiers as PriorityTiers,
        PriorityTiersArgs as PriorityTiersArgs, TeamAccess as TeamAccess, TeamAccessArgs as TeamAccessArgs,
        TeamRolesArgs as TeamRolesArgs)
    from gpu_platform.spec.errors import SpecError as SpecError
    from gpu_platform.spec.models import PlatformSpec as PlatformSpec

_MODULE_OF = {name: module for module, names in _EXPORTS.items() for name in names}

# The components the component package publishes to other Pulumi languages, in the order its docs list them.
COMPONENTS = ("GpuPlatform", "Cluster", "AdoptedCluster", "GpuNodePool", "KarpenterNodePool", "GpuOperator",
              "GpuMonitoring", "ModelCache", "Datasets", "TeamNamespace", "PriorityTiers", "TeamAdmission",
              "TeamAccess", "KueueQueueing")

__all__ = ["__version__", "COMPONENTS", "component_classes", *_MODULE_OF]


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if name == "__version__":
        value: Any = _version()
    elif module is None:
        raise AttributeError(f"module 'gpu_platform' has no attribute {name!r}")
    else:
        value = getattr(importlib.import_module(module), name)
        if name.endswith("Args"):  # help() lists each argument and its documentation
            from gpu_platform.resources.arg_docs import with_argument_docs

            value = with_argument_docs(value)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULE_OF})


def component_classes() -> list[type]:
    """The published components' classes (imports the provider SDKs)."""
    return [__getattr__(name) for name in COMPONENTS]
