"""What the kubelet's CPU and topology managers accept, and how each node format spells them.

- KubeletConfiguration (kubelet.config.k8s.io/v1beta1): the JSON field names of the kubelet's config file,
  from kubernetes/kubelet config/v1beta1/types.go at tag kubernetes-1.35.7 (the cluster minor); the
  values from the same file's comments and https://kubernetes.io/docs/tasks/administer-cluster/topology-manager/
  and https://kubernetes.io/docs/tasks/administer-cluster/cpu-management-policies/.
- nodeadm's NodeConfig (node.eks.aws/v1alpha1): `spec.kubelet.config` is merged into the kubelet's
  KubeletConfiguration, `spec.kubelet.flags` are extra command-line flags (awslabs/amazon-eks-ami
  nodeadm/api/v1alpha1/nodeconfig_types.go, NodeConfigSpec and KubeletOptions;
  https://awslabs.github.io/amazon-eks-ami/nodeadm/doc/api/).
- Ubuntu (Canonical's EKS bootstrap): kubelet flags through `--kubelet-extra-args`; the flag names are the
  kubelet's (https://kubernetes.io/docs/reference/command-line-tools-reference/kubelet/).
- Bottlerocket: `settings.kubernetes.cpu-manager-policy`, `topology-manager-policy`, `topology-manager-scope`
  and `reserved-cpus` (a CPU list), the kebab-case TOML names of the settings model's fields
  (bottlerocket-os/bottlerocket-settings-sdk bottlerocket-settings-models/settings-extensions/kubernetes/
  src/lib.rs, there since before settings-models v0.2.0, 2024-07).
- Karpenter v1.14 EC2NodeClass `spec.kubelet` has no CPU or topology manager field (the pinned CRD, see
  upstream/crds): they go through the node class's user data, which Karpenter merges with its own.
"""
from __future__ import annotations

from types import MappingProxyType
from collections.abc import Mapping
from typing import Literal, get_args

CpuManagerPolicy = Literal["none", "static"]
CPU_MANAGER_POLICIES: tuple[CpuManagerPolicy, ...] = get_args(CpuManagerPolicy)
TopologyManagerPolicy = Literal["none", "best-effort", "restricted", "single-numa-node"]
TOPOLOGY_MANAGER_POLICIES: tuple[TopologyManagerPolicy, ...] = get_args(TopologyManagerPolicy)
TopologyManagerScope = Literal["container", "pod"]
TOPOLOGY_MANAGER_SCOPES: tuple[TopologyManagerScope, ...] = get_args(TopologyManagerScope)

# Instance families whose 8 GPUs and their EFA NICs sit on two CPU sockets (two NUMA nodes): a pod's CPUs on
# the far socket cross the socket link for every batch it stages (AWS EC2 accelerated computing instance
# specifications: p4d/p4de 2 x Intel Xeon Platinum 8275CL; p5/p5e/p5en/p6-b200/p6-b300 2 sockets). Pools of
# only these types get the CPU and topology managers by default (docs/numa.md).
NUMA_ALIGNED_FAMILIES = ("p4d", "p4de", "p5", "p5e", "p5en", "p6-b200", "p6-b300")
# What the default keeps back for the system: the first four vCPUs (docs/numa.md).
DEFAULT_RESERVED_SYSTEM_CPUS = "0-3"

# KubeletConfiguration v1beta1 JSON field names (types.go above, kubernetes-1.35.7, all 123 of the struct):
# a rendered config using any other key is ignored by a lenient decoder or refused by the kubelet's strict one.
KUBELET_CONFIGURATION_FIELDS = frozenset({
    "apiVersion", "kind",
    "enableServer", "staticPodPath", "podLogsDir", "syncFrequency", "fileCheckFrequency", "httpCheckFrequency",
    "staticPodURL", "staticPodURLHeader", "address", "port", "readOnlyPort", "tlsCertFile", "tlsPrivateKeyFile",
    "tlsCipherSuites", "tlsMinVersion", "rotateCertificates", "serverTLSBootstrap", "authentication",
    "authorization", "registryPullQPS", "registryBurst", "imagePullCredentialsVerificationPolicy",
    "preloadedImagesVerificationAllowlist", "eventRecordQPS", "eventBurst", "enableDebuggingHandlers",
    "enableContentionProfiling", "healthzPort", "healthzBindAddress", "oomScoreAdj", "clusterDomain", "clusterDNS",
    "streamingConnectionIdleTimeout", "nodeStatusUpdateFrequency", "nodeStatusReportFrequency",
    "nodeLeaseDurationSeconds", "imageMinimumGCAge", "imageMaximumGCAge", "imageGCHighThresholdPercent",
    "imageGCLowThresholdPercent", "volumeStatsAggPeriod", "kubeletCgroups", "systemCgroups", "cgroupRoot",
    "cgroupsPerQOS", "cgroupDriver", "cpuManagerPolicy", "singleProcessOOMKill", "cpuManagerPolicyOptions",
    "cpuManagerReconcilePeriod", "memoryManagerPolicy", "topologyManagerPolicy", "topologyManagerScope",
    "topologyManagerPolicyOptions", "qosReserved", "runtimeRequestTimeout", "hairpinMode", "maxPods", "podCIDR",
    "podPidsLimit", "resolvConf", "runOnce", "cpuCFSQuota", "cpuCFSQuotaPeriod", "nodeStatusMaxImages",
    "maxOpenFiles", "contentType", "kubeAPIQPS", "kubeAPIBurst", "serializeImagePulls", "maxParallelImagePulls",
    "evictionHard", "evictionSoft", "evictionSoftGracePeriod", "evictionPressureTransitionPeriod",
    "evictionMaxPodGracePeriod", "evictionMinimumReclaim", "mergeDefaultEvictionSettings", "podsPerCore",
    "enableControllerAttachDetach", "protectKernelDefaults", "makeIPTablesUtilChains", "iptablesMasqueradeBit",
    "iptablesDropBit", "featureGates", "failSwapOn", "memorySwap", "containerLogMaxSize", "containerLogMaxFiles",
    "containerLogMaxWorkers", "containerLogMonitorInterval", "configMapAndSecretChangeDetectionStrategy",
    "systemReserved", "kubeReserved", "reservedSystemCPUs", "showHiddenMetricsForVersion",
    "systemReservedCgroup", "kubeReservedCgroup", "enforceNodeAllocatable", "allowedUnsafeSysctls",
    "volumePluginDir", "providerID", "kernelMemcgNotification", "logging", "enableSystemLogHandler",
    "enableSystemLogQuery", "shutdownGracePeriod", "shutdownGracePeriodCriticalPods",
    "shutdownGracePeriodByPodPriority", "crashLoopBackOff", "reservedMemory", "enableProfilingHandler",
    "enableDebugFlagsHandler", "seccompDefault", "memoryThrottlingFactor", "registerWithTaints", "registerNode",
    "tracing", "localStorageCapacityIsolation", "containerRuntimeEndpoint", "imageServiceEndpoint",
    "failCgroupV1", "userNamespaces",
})

# nodeadm NodeConfig `spec.kubelet` fields (api reference above): `config` (KubeletConfiguration fields, merged)
# and `flags` (extra kubelet flags).
NODEADM_KUBELET_FIELDS = frozenset({"config", "flags"})
NODEADM_SPEC_FIELDS = frozenset({"cluster", "containerd", "instance", "kubelet", "featureGates"})

# Each KubeletConfiguration field the pool setting writes, its kubelet flag (Ubuntu) and its Bottlerocket
# setting under settings.kubernetes.
_SPELLINGS: dict[str, tuple[str, str]] = {
    "cpuManagerPolicy": ("--cpu-manager-policy", "cpu-manager-policy"),
    "topologyManagerPolicy": ("--topology-manager-policy", "topology-manager-policy"),
    "topologyManagerScope": ("--topology-manager-scope", "topology-manager-scope"),
    "reservedSystemCPUs": ("--reserved-cpus", "reserved-cpus"),
}
KUBELET_FLAGS: Mapping[str, str] = MappingProxyType({k: v[0] for k, v in _SPELLINGS.items()})
BOTTLEROCKET_SETTINGS: Mapping[str, str] = MappingProxyType({k: v[1] for k, v in _SPELLINGS.items()})
BOTTLEROCKET_KUBERNETES_TABLE = "settings.kubernetes"


def cpu_list(cpuset: str) -> list[int]:
    """`0-3,96` -> [0, 1, 2, 3, 96]: a Linux CPU list, the syntax of reservedSystemCPUs; [] for ""."""
    out: set[int] = set()
    for term in filter(None, cpuset.split(",")):
        first, _, last = term.partition("-")
        out.update(range(int(first), int(last or first) + 1))
    return sorted(out)
