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
from typing import Any

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
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULE_OF})


def component_classes() -> list[type]:
    """The published components' classes (imports the provider SDKs)."""
    return [__getattr__(name) for name in COMPONENTS]
