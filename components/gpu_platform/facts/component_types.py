"""Every component's type token, defined once: what a URN carries, so a change here moves resources.

Public components register as `gpu-platform:index:<Class>`, the tokens of the component package's schema
(Pulumi derives a component's token from the package name and the `index` module), each with an alias to
the type it had before so stacks made then keep their resources in place. Internal components keep
`gpu-platform:<module>:<Class>`: a token stays when code moves between files.
"""
PACKAGE = "gpu-platform"

# Public component -> the types it was registered as before (its aliases).
FORMER: dict[str, tuple[str, ...]] = {
    "GpuPlatform": ("gpu-platform:platform:GpuPlatform",),
    "Cluster": ("gpu-platform:cluster:Cluster",),
    "AdoptedCluster": ("gpu-platform:cluster:Cluster",),  # an adopted cluster was a Cluster without `create`
    "GpuNodePool": ("gpu-platform:node_pool:GpuNodePool",),
    "KarpenterNodePool": ("gpu-platform:karpenter:KarpenterNodePool",),
    "GpuOperator": ("gpu-platform:gpu_operator:GpuOperator",),
    "GpuMonitoring": ("gpu-platform:monitoring:GpuMonitoring",),
    "ModelCache": ("gpu-platform:model_cache:ModelCache",),
    "Datasets": ("gpu-platform:datasets:Datasets",),
    "TeamNamespace": ("gpu-platform:team:TeamNamespace",),
    "PriorityTiers": ("gpu-platform:team:PriorityTiers",),
    "TeamAdmission": (),
    "TeamAccess": ("gpu-platform:team:TeamAccess",),
    "KueueQueueing": ("gpu-platform:kueue:KueueQueueing",),
}

# The platform's own components, which other programs do not build.
INTERNAL: dict[str, str] = {
    "AlertPublishing": "gpu-platform:alerting:AlertPublishing",
    "FileSystemMetrics": "gpu-platform:monitoring:FileSystemMetrics",
    "AutoscalerMetrics": "gpu-platform:autoscaler:AutoscalerMetrics",
    "UsageReport": "gpu-platform:usage:UsageReport",
    "DraDriver": "gpu-platform:dra:DraDriver",
    "EfaDevicePlugin": "gpu-platform:efa:EfaDevicePlugin",
    "EfaMetrics": "gpu-platform:efa:EfaMetrics",
    "ClusterAutoscaler": "gpu-platform:autoscaler:ClusterAutoscaler",
    "KarpenterController": "gpu-platform:karpenter:KarpenterController",
    "LogPipeline": "gpu-platform:logging:LogPipeline",
    "NodeAcceptance": "gpu-platform:acceptance:NodeAcceptance",
    "AcceptanceReplacement": "gpu-platform:acceptance:AcceptanceReplacement",
    "ModelServing": "gpu-platform:serving:ModelServing",
    "ServingControl": "gpu-platform:serving:ServingControl",
    "Network": "gpu-platform:network:Network",
    "WarmCapacity": "gpu-platform:warm:WarmCapacity",
}


def public(component: str) -> str:
    """A public component's type token: the package's `index` module, as the component schema names it."""
    return f"{PACKAGE}:index:{component}"
