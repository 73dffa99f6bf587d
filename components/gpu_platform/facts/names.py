"""Every label, taint and annotation key, resource name and physical-name builder: one place each."""
from __future__ import annotations

import hashlib
from typing import Literal, get_args

# --- NVIDIA / Kubernetes resource and label keys ---
NVIDIA_DOMAIN = "nvidia.com/"
GPU_RESOURCE = f"{NVIDIA_DOMAIN}gpu"
MIG_RESOURCE_PREFIX = f"{NVIDIA_DOMAIN}mig-"
GPU_TAINT_KEY = GPU_RESOURCE
GPU_TAINT_VALUE = "present"
GPU_PRESENT_LABEL = f"{NVIDIA_DOMAIN}gpu.present"
GPU_PRODUCT_LABEL = f"{NVIDIA_DOMAIN}gpu.product"
DEVICE_PLUGIN_CONFIG_LABEL = f"{NVIDIA_DOMAIN}device-plugin.config"
MIG_CONFIG_LABEL = f"{NVIDIA_DOMAIN}mig.config"
GPU_DEPLOY_LABEL_PREFIX = f"{NVIDIA_DOMAIN}gpu.deploy."
ACCELERATOR_LABEL = "k8s.amazonaws.com/accelerator"  # Cluster Autoscaler's GPU node hint
EFA_RESOURCE = "vpc.amazonaws.com/efa"  # the EFA device plugin's extended resource
# NVIDIA's DRA driver: the DeviceClasses its chart creates (templates/deviceclass-*.yaml at v0.4.1).
DRA_GPU_CLASS = "gpu.nvidia.com"  # whole GPUs
DRA_MIG_CLASS = "mig.nvidia.com"  # MIG devices the GPUs already carry
COMPUTE_DOMAIN_CHANNEL_CLASS = "compute-domain-default-channel.nvidia.com"  # an IMEX channel of a ComputeDomain
DRA_GPU_DRIVER = "gpu.nvidia.com"  # the driver name devices are published under (ResourceSlice spec.driver)
DRA_DRIVER_RELEASE = "nvidia-dra-driver-gpu"  # Helm release of the DRA driver
RESOURCE_API_GROUP = "resource.k8s.io"  # ResourceClaim, ResourceClaimTemplate, DeviceClass
COMPUTE_DOMAIN_API_GROUP = "resource.nvidia.com"  # the DRA driver's ComputeDomain

# --- The platform's vocabulary: the values a stack file, a component's Args and the pack all accept ---
# Each a Literal type (the stack file's field is typed by it) and its values, in order.
Environment = Literal["dev", "staging", "prod"]  # prod protects what holds data or runs jobs, rolls one node at a time
ENVIRONMENTS: tuple[Environment, ...] = get_args(Environment)
DriverSource = Literal["ami", "operator"]  # who installs the NVIDIA driver: the node image, or the GPU Operator
DRIVER_SOURCES: tuple[DriverSource, ...] = get_args(DriverSource)
MIG_STRATEGIES = ("none", "single", "mixed")  # the GPU Operator's migStrategy (cluster-wide)

# --- The platform's own keys ---
DOMAIN = "gpu-platform.io"
POOL_LABEL = f"{DOMAIN}/pool"
ROLE_LABEL = f"{DOMAIN}/role"
TEAM_LABEL = f"{DOMAIN}/team"
PRIORITY_TIER_LABEL = f"{DOMAIN}/priority-tier"
SUB_TEAM_LABEL = f"{DOMAIN}/sub-team"  # on a sub-team's ClusterQueue: the part of the team it holds quota for
CRITICAL_LABEL = f"{DOMAIN}/critical"  # node label "true" on pools marked critical (policies require on-demand)
WAIT_FOR_COMPLETION_LABEL = f"{DOMAIN}/wait-for-completion"  # job pods a driver upgrade waits for
GPU_ALLOCATION_LABEL = f"{DOMAIN}/gpu-allocation"  # node label: device-plugin | dra (the DRA driver runs on dra)
# Node label of an UltraServer pool whose GPUs stay on the device plugin: the DRA driver's kubelet plugin runs
# there for ComputeDomains (IMEX channels) only, with its GPU side off.
COMPUTE_DOMAINS_LABEL = f"{DOMAIN}/compute-domains"
EFA_LABEL = f"{DOMAIN}/efa"  # node label "true" on EFA pools: where the EFA device plugin and collector run
ENVIRONMENT_TAG = "gpu-platform/environment"  # aws provider default tag policies read the environment from
CLUSTER_TAG = "gpu-platform/cluster"
MANAGED_BY_LABEL = "app.kubernetes.io/managed-by"
MANAGED_BY = "gpu-platform"
MANAGED_BY_TAG = "managed-by"  # AWS tag on every resource (default tags of the aws provider)
SYSTEM_ROLE = "system"
# Where the platform's controllers run (operator, autoscaler, Karpenter, Prometheus, Kueue): the label the
# platform's own system node group carries. An adopted cluster's stack file names its own system nodes.
SYSTEM_NODE_SELECTOR = {ROLE_LABEL: SYSTEM_ROLE}

# --- Cluster Autoscaler tags on Auto Scaling groups (kubernetes/autoscaler, cluster-autoscaler/cloudprovider/aws/
# README.md: auto-discovery and scaling a node group from zero) ---
CA_ENABLED_TAG = "k8s.io/cluster-autoscaler/enabled"
CA_TEMPLATE_PREFIX = "k8s.io/cluster-autoscaler/node-template/"


CA_SAFE_TO_EVICT_ANNOTATION = "cluster-autoscaler.kubernetes.io/safe-to-evict"  # "false" on job pods
CA_ENABLED_VALUE = "true"  # the values EKS itself puts on managed node groups' Auto Scaling groups
CA_OWNED_VALUE = "owned"
CA_RELEASE = "cluster-autoscaler"  # Helm release and service account of the Cluster Autoscaler
CA_NAMESPACE = "kube-system"
EPHEMERAL_STORAGE = "ephemeral-storage"
ELB_SUBNET_TAG = "kubernetes.io/role/elb"  # public subnets for internet-facing load balancers
INTERNAL_ELB_SUBNET_TAG = "kubernetes.io/role/internal-elb"

# --- Karpenter's keys (karpenter.sh v1 docs) and the platform's keys on Karpenter objects ---
KARPENTER_RELEASE = "karpenter"  # Helm release, fullname and service account of the controller
KARPENTER_DISCOVERY_TAG = "karpenter.sh/discovery"  # on the subnets and security groups EC2NodeClasses select
KARPENTER_NODEPOOL_LABEL = "karpenter.sh/nodepool"  # on a NodeClaim and its Node: the NodePool that made it
KARPENTER_CAPACITY_TYPE_LABEL = "karpenter.sh/capacity-type"
# On reserved nodes only: `default` (an ODCR) or `capacity-block` (karpenter.sh v1.14, ODCRs and Capacity Blocks).
KARPENTER_RESERVATION_TYPE_LABEL = "karpenter.k8s.aws/capacity-reservation-type"
KARPENTER_DO_NOT_DISRUPT_ANNOTATION = "karpenter.sh/do-not-disrupt"  # "true" on job pods
KARPENTER_UNREGISTERED_TAINT = "karpenter.sh/unregistered"  # custom-image nodes must register with it
INSTANCE_TYPE_LABEL = "node.kubernetes.io/instance-type"
ARCH_LABEL = "kubernetes.io/arch"
OS_LABEL = "kubernetes.io/os"
# On a NodePool (not its template): the window outside which no node is drifted or consolidated.
# A team namespace's CUDA minimum and the pools it reaches: what the pack's cuda gate reads through the lock.
MIN_CUDA_ANNOTATION = f"{DOMAIN}/min-cuda"
MIN_CUDA_POOLS_ANNOTATION = f"{DOMAIN}/min-cuda-pools"  # comma-separated pool names; absent: every pool
DISRUPTION_WINDOW_SCHEDULE_ANNOTATION = f"{DOMAIN}/disruption-window-schedule"
DISRUPTION_WINDOW_DURATION_ANNOTATION = f"{DOMAIN}/disruption-window-duration"
SCRIPT_DIGEST_ANNOTATION = f"{DOMAIN}/script-sha256"  # a pod template's shipped script: a new one rolls the pods

# --- node acceptance: a new GPU node proves itself before it takes work (docs/acceptance.md) ---
# The startup taint nodes of an accepted pool register with; the node readiness controller removes it once the
# node's acceptance condition is True. Its rules manage only keys under readiness.k8s.io/ (NodeReadinessRule CRD).
ACCEPTANCE_TAINT_KEY = "readiness.k8s.io/gpu-acceptance"
ACCEPTANCE_TAINT_VALUE = "pending"
ACCEPTANCE_TAINT_EFFECT = "NoSchedule"
ACCEPTANCE_CONDITION = "GpuAcceptance"  # node condition the checker sets: True passed, False failed
HEALTH_CONDITION = "GpuHealthPassive"  # node condition of the idle re-checks: False when DCGM's health fails
ACCEPTANCE_RECHECK = "gpu-acceptance-recheck"  # the re-checks' DaemonSets (with the pool) and PriorityClass
ACCEPTANCE_LABEL = f"{DOMAIN}/acceptance"  # node label: passed | failed (the checker then leaves the node)
ACCEPTANCE_CHECK_LABEL = f"{DOMAIN}/acceptance-check"  # node label: the check that failed
ACCEPTANCE_LABEL_PREFIX = f"{DOMAIN}/acceptance"  # the only labels the checker may write
ACCEPTANCE_NAMESPACE = "gpu-acceptance"
ACCEPTANCE_NAME = "gpu-acceptance"  # the checker's DaemonSet, ServiceAccount, ConfigMap and RBAC objects
ACCEPTANCE_RULE = "gpu-acceptance"  # the NodeReadinessRule
NODE_READINESS_NAME = "node-readiness-controller"  # its Deployment, ServiceAccount and RBAC objects
NODE_READINESS_NAMESPACE = "node-readiness-system"
SA_NODE_NAME_EXTRA = "authentication.kubernetes.io/node-name"  # a pod-bound token's node, in userInfo.extra


def ca_cluster_tag(cluster: str) -> str:
    return f"k8s.io/cluster-autoscaler/{cluster}"


def ca_label_tag(label: str) -> str:
    return f"{CA_TEMPLATE_PREFIX}label/{label}"


def ca_taint_tag(key: str) -> str:
    return f"{CA_TEMPLATE_PREFIX}taint/{key}"


def ca_resource_tag(resource: str) -> str:
    return f"{CA_TEMPLATE_PREFIX}resources/{resource}"


def mig_resource(profile: str) -> str:
    """`1g.10gb` -> `nvidia.com/mig-1g.10gb` (mixed strategy)."""
    return f"{MIG_RESOURCE_PREFIX}{profile}"


def quota_key(resource: str) -> str:
    """Extended resources are quota'd on requests only: `requests.nvidia.com/gpu`."""
    return f"requests.{resource}"


def dra_devices_quota_key(device_class: str) -> str:
    """ResourceQuota's key for devices claimed through a DeviceClass (Kubernetes resource quotas, "Quota for
    devices"): `gpu.nvidia.com.deviceclass.resource.k8s.io/devices`."""
    return f"{device_class}.deviceclass.resource.k8s.io/devices"


def claim_template_name(gpu_key: str, gpus: int) -> str:
    """A team's ResourceClaimTemplate for `gpus` whole GPUs of one model on one node: `b200-x8`."""
    return f"{gpu_key.lower()}-x{gpus}"


def compute_domain_name(nodes: int) -> str:
    """A team's ComputeDomain for a job spanning `nodes` nodes of an UltraServer: `nvl-4-nodes`."""
    return f"nvl-{nodes}-nodes"


def compute_domain_claim_template(nodes: int) -> str:
    """The ResourceClaimTemplate the driver generates for that ComputeDomain's IMEX channel."""
    return f"{compute_domain_name(nodes)}-channel"


def gpu_deploy_label(operand: str) -> str:
    return f"{GPU_DEPLOY_LABEL_PREFIX}{operand}"


# --- Kubernetes taint effects: spec spelling -> EKS API spelling ---
TAINT_EFFECTS = {"NoSchedule": "NO_SCHEDULE", "NoExecute": "NO_EXECUTE", "PreferNoSchedule": "PREFER_NO_SCHEDULE"}

# --- Physical names: derived from spec names only, stable across runs ---


def _bounded(name: str, limit: int) -> str:
    """Keep names within a service limit deterministically: truncate and add a short hash."""
    if len(name) <= limit:
        return name
    digest = hashlib.sha256(name.encode()).hexdigest()[:6]
    return f"{name[: limit - 7].rstrip('-')}-{digest}"


def node_group_name(cluster: str, pool: str) -> str:
    return _bounded(f"{cluster}-{pool}", 63)


def system_node_group_name(cluster: str) -> str:
    return _bounded(f"{cluster}-system", 63)


def launch_template_name(cluster: str, pool: str) -> str:
    return _bounded(f"{cluster}-{pool}", 128)


def placement_group_name(cluster: str, pool: str) -> str:
    return _bounded(f"{cluster}-{pool}", 255)


def role_name(cluster: str, purpose: str) -> str:
    return _bounded(f"{cluster}-{purpose}", 64)



def karpenter_queue_name(cluster: str) -> str:
    """The SQS interruption queue (`settings.interruptionQueue`): 80 characters at most."""
    return _bounded(f"{cluster}-karpenter", 80)


def karpenter_rule_name(cluster: str, event: str) -> str:
    """An EventBridge rule feeding the interruption queue: 64 characters at most."""
    return _bounded(f"{cluster}-karpenter-{event}", 64)

def team_namespace(team: str) -> str:
    return team


def device_plugin_config_key(replicas: int, fail_requests_greater_than_one: bool = True) -> str:
    """Device-plugin ConfigMap key of one time-slicing setting: `ts-4`, or `ts-4-multi` when a pod may
    ask for more than one shared replica."""
    return f"ts-{replicas}" if fail_requests_greater_than_one else f"ts-{replicas}-multi"


# GPU Operator: Helm release and the ConfigMaps its chart creates from our rendered sharing files.
GPU_OPERATOR_RELEASE = "gpu-operator"
DEVICE_PLUGIN_CONFIGMAP = "gpu-platform-device-plugin-config"
DEVICE_PLUGIN_DEFAULT_CONFIG = "default"  # the no-sharing entry nodes without a config label use
MIG_PARTED_CONFIGMAP = "gpu-platform-mig-parted-config"
MIG_PARTED_CONFIG_KEY = "config.yaml"  # the only key the MIG manager reads
DCGM_METRICS_CONFIGMAP = "gpu-platform-dcgm-metrics"  # dcgm-exporter's collectors CSV
# Monitoring: the kube-prometheus-stack release (when the platform installs one), the GPU alert rules and
# the dashboard ConfigMap the Grafana sidecar loads.
KUBE_PROMETHEUS_STACK_RELEASE = "kube-prometheus-stack"
GPU_RULES_NAME = "gpu-platform-gpu-alerts"
SERVING_RULES_NAME = "gpu-platform-serving-alerts"  # the model servers' alerts (render/serving_scaling.py)
LOG_RULES_NAME = "gpu-platform-log-alerts"  # the log pipeline's PrometheusRule (alerts counted from logs)
GPU_DASHBOARD_CONFIGMAP = "gpu-platform-gpu-dashboard"
# Alert delivery: the Secret holding receivers' secrets (mounted into Alertmanager) and the service account
# the platform names for the chart's Alertmanager (SNS receivers get AWS access through it).
ALERT_RECEIVERS_SECRET = "gpu-platform-alert-receivers"
ALERTMANAGER_SERVICE_ACCOUNT = f"{KUBE_PROMETHEUS_STACK_RELEASE}-alertmanager"
# Grafana reads the file systems' CloudWatch metrics through EKS Pod Identity on the chart's service account
# (the grafana subchart names it <release>-grafana); its CloudWatch data source and the dashboard that uses it.
GRAFANA_SERVICE_ACCOUNT = f"{KUBE_PROMETHEUS_STACK_RELEASE}-grafana"
CLOUDWATCH_DATASOURCE_UID = "gpu-platform-cloudwatch"
DATA_FEEDING_DASHBOARD_CONFIGMAP = "gpu-platform-data-feeding-dashboard"
# The monthly usage report: its CronJob, service account (Pod Identity) and ConfigMap (script and queries).
USAGE_REPORT_NAME = "gpu-usage-report"
USAGE_REPORT_SERVICE_ACCOUNT = USAGE_REPORT_NAME
USAGE_REPORT_CONFIGMAP = USAGE_REPORT_NAME
# The operator's governing Service of every Prometheus it runs (port 9090, `web`): the report's default URL.
PROMETHEUS_OPERATED_SERVICE = "prometheus-operated"


def usage_bucket_prefix(cluster: str) -> str:
    """The name prefix of the stack's usage-report bucket (S3 adds a unique suffix; the prefix takes 37 at most)."""
    return f"{cluster[:26].rstrip('-.')}-gpu-usage-"
POD_SECURITY_LABEL_PREFIX = "pod-security.kubernetes.io/"
# The log pipeline: Fluent Bit's release (its service account takes the release's name) and the log groups.
FLUENT_BIT_RELEASE = "fluent-bit"
FLUENT_BIT_SERVICE_ACCOUNT = FLUENT_BIT_RELEASE
PLATFORM_LOG_GROUP = "platform"


def log_group_name(cluster: str, namespace: str) -> str:
    """A team namespace's log group; the platform's namespaces and the nodes share `PLATFORM_LOG_GROUP`."""
    return f"/gpu-platform/{cluster}/{namespace}"


def pod_security_labels(level: str) -> dict[str, str]:
    """Pod Security Admission labels enforcing (and auditing, warning at) one level on a namespace."""
    return {f"{POD_SECURITY_LABEL_PREFIX}{mode}": level for mode in ("enforce", "audit", "warn")}


# On the namespaces whose ServiceMonitors and PodMonitors the platform's Prometheus picks up: the platform's
# own (monitoring, GPU Operator, Kueue) and the team namespaces. Monitors anywhere else are not scraped.
SCRAPE_LABEL = f"{DOMAIN}/scrape"
SCRAPE_VALUE = "true"


def platform_namespace_labels(pod_security_level: str) -> dict[str, str]:
    """Labels of a namespace the platform runs a controller in: its Pod Security level, managed-by, and the
    label that lets the platform's Prometheus pick up the monitors there."""
    return {**pod_security_labels(pod_security_level), MANAGED_BY_LABEL: MANAGED_BY, SCRAPE_LABEL: SCRAPE_VALUE}


def mig_layout_id(gpu_key: str, layout: dict[str, int] | None) -> str:
    """A readable id per distinct layout, e.g. `h100-80gb-hbm3-1x3g.40gb-2x1g.10gb` (`all-disabled`
    without one): what a pool's launch template records, so a layout change makes a new version."""
    if not layout or not any(layout.values()):
        return MIG_ALL_DISABLED
    parts = "-".join(f"{n}x{p.replace('+', '.')}" for p, n in sorted(layout.items()) if n)
    return _bounded(f"{gpu_key.lower()}-{parts}", 63)


def mig_config_name(pool: str) -> str:
    """The MIG manager config a pool's nodes select: one per pool, stable while its layout changes.

    The MIG manager applies a config when a node's `nvidia.com/mig.config` label changes and never
    re-applies a changed config under the same name, so a layout change reaches only nodes that boot
    after it: the pool rolls one node at a time instead of every node being reconfigured at once.
    """
    return _bounded(f"pool-{pool}", 63)


MIG_ALL_DISABLED = "all-disabled"
MIG_LAYOUT_TAG = f"{DOMAIN}/mig-layout"  # EC2 instance tag in a MIG-capable pool's launch template


def accelerator_value(gpu_key: str) -> str:
    """Value of `k8s.amazonaws.com/accelerator`, e.g. `nvidia-a10g`."""
    return f"nvidia-{gpu_key.lower()}"


# --- Teams, priority tiers and the model cache ---
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"  # the API server sets it on every namespace
TEAM_QUOTA = "team-quota"  # object names inside a team namespace: fixed, so tools and docs can rely on them
TEAM_LIMITS = "team-limits"
TEAM_INGRESS_POLICY = "team-ingress"
TEAM_ROLES = ("developers", "admins")
MODEL_CACHE_PVC = "model-cache"
MODEL_CACHE_STORAGE_CLASS = "model-cache-efs"
METRICS_STORAGE_CLASS = "metrics-gp3"  # Prometheus and Alertmanager volumes (render/monitoring.py)


def pod_security_label(mode: str) -> str:
    """`enforce` -> `pod-security.kubernetes.io/enforce`; `enforce-version` likewise."""
    return f"{POD_SECURITY_LABEL_PREFIX}{mode}"


def team_group(team: str, role: str) -> str:
    """The Kubernetes group a team role is bound to and EKS access entries map IAM roles to."""
    return f"{team}:{role}"


def team_role(role: str) -> str:
    """Name of the Role (and its RoleBinding) for `developers` or `admins` inside a team namespace."""
    return f"team-{role}"


# Warm capacity (nodePools[].warm): the placeholders' namespace and PriorityClass, one Deployment per pool.
WARM_NAMESPACE = f"{MANAGED_BY}-warm"
WARM_PRIORITY_CLASS = f"{MANAGED_BY}-warm-capacity"
WARM_APP_LABEL = f"{DOMAIN}/warm-pool"  # on each placeholder pod: the pool it holds nodes of


def warm_deployment(pool: str) -> str:
    return f"warm-{pool}"


def priority_class(tier: str) -> str:
    return f"{MANAGED_BY}-{tier}"


def access_entry_resource(principal_arn: str) -> str:
    """Stable logical name of the one EKS access entry per IAM principal: role name plus a short hash."""
    digest = hashlib.sha256(principal_arn.encode()).hexdigest()[:8]
    return f"access-{principal_arn.rsplit('/', 1)[-1].lower()}-{digest}"


def model_cache_name(cluster: str) -> str:
    """The cache's file system creation token, security group and IAM role purpose share this name."""
    return _bounded(f"{cluster}-model-cache", 64)


# --- Kueue: the labels it reads on workloads, and the platform's queueing objects ---
KUEUE_QUEUE_NAME_LABEL = "kueue.x-k8s.io/queue-name"  # on a Job, Deployment or Pod: the LocalQueue it waits in
# On a Job: its Workload's maximumExecutionTimeSeconds, after which Kueue deactivates it (Kueue docs, Workload).
KUEUE_MAX_EXEC_TIME_LABEL = "kueue.x-k8s.io/max-exec-time-seconds"
KUEUE_PRIORITY_CLASS_LABEL = "kueue.x-k8s.io/priority-class"  # the WorkloadPriorityClass of a workload
KUEUE_RELEASE = "kueue"  # Helm release (and fullname prefix of the controller)
KUEUE_COHORT = MANAGED_BY  # every team's ClusterQueue lends and borrows inside this one cohort
TEAM_LOCAL_QUEUE = "team-queue"  # the LocalQueue inside each team namespace
DEBUG_LOCAL_QUEUE = "debug"  # the short-job LocalQueue inside each team namespace (queueing.debugQueue)
KUEUE_CPU_MEMORY_FLAVOR = "cpu-memory"  # the ResourceFlavor CPU and memory quota is counted in (any node)
# A node's place in the AWS network, top layer first, set by the cloud controller from EC2
# DescribeInstanceTopology (kubernetes/cloud-provider-aws pkg/providers/v1/well_known_labels.go,
# https://github.com/kubernetes/cloud-provider-aws/pull/1038;
# https://docs.aws.amazon.com/eks/latest/userguide/ml-workload-topology.html).
NETWORK_NODE_LAYER_LABELS = tuple(f"topology.k8s.aws/network-node-layer-{n}" for n in (1, 2, 3))
HOSTNAME_LABEL = "kubernetes.io/hostname"
# Kueue's Topology of the AWS network layers (topology-aware scheduling), and the pod-set annotations by which a
# workload asks for a level (kueue apis/kueue/v1beta2/topology_types.go at v0.19.2).
KUEUE_TOPOLOGY = "aws-network"
KUEUE_REQUIRED_TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-required-topology"
KUEUE_PREFERRED_TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-preferred-topology"
KUEUE_UNCONSTRAINED_TOPOLOGY_ANNOTATION = "kueue.x-k8s.io/podset-unconstrained-topology"
JOB_NAME_LABEL = "batch.kubernetes.io/job-name"  # the Job controller's label on the Job's pods (Kubernetes 1.27+)
QUEUED_GPU_PODS_POLICY = f"{MANAGED_BY}-queued-gpu-pods"  # ValidatingAdmissionPolicy (and its binding)
JOB_CEILINGS_POLICY = f"{MANAGED_BY}-gpu-job-runtime-ceilings"  # ValidatingAdmissionPolicy (and its binding)
# The ValidatingAdmissionPolicies (each with a binding of the same name) every team namespace is held to.
GPU_NODES_POLICY = f"{MANAGED_BY}-gpu-nodes-for-gpu-pods"
DEVICE_ACCESS_POLICY = f"{MANAGED_BY}-gpus-through-the-device-plugin"
PRIORITY_TIER_POLICY = f"{MANAGED_BY}-priority-within-tier"
QUEUE_PRIORITY_POLICY = f"{MANAGED_BY}-queue-priority-within-tier"
TEAM_MONITORS_POLICY = f"{MANAGED_BY}-team-monitors"
# Labels on ResourceFlavor objects (not on nodes): what kind of GPU a flavor stands for.
GPU_MODEL_LABEL = f"{DOMAIN}/gpu"
MIG_PROFILE_LABEL = f"{DOMAIN}/mig-profile"
CAPACITY_TYPE_LABEL = f"{DOMAIN}/capacity-type"


def cluster_queue(team: str) -> str:
    """The ClusterQueue holding a team's nominal quota (cluster-scoped, so prefixed)."""
    return f"team-{team}"


def team_cohort(team: str) -> str:
    """The Cohort a team with sub-teams becomes, under the platform's cohort (Cohorts and ClusterQueues are
    separate kinds, so it shares the team's prefix)."""
    return f"team-{team}"


def sub_team_cluster_queue(team: str, sub_team: str) -> str:
    """The ClusterQueue holding a sub-team's part of its team's nominal quota."""
    return f"team-{team}-{sub_team}"


def gpu_flavor(pool: str, mig_profile: str | None = None) -> str:
    """ResourceFlavor of one pool's GPUs: `a100-train`, or `h100-mig-1g.10gb` per MIG profile (mixed strategy).
    Pool names have no dots and profiles always do, so the two kinds of name never collide."""
    return pool if mig_profile is None else f"{pool}-{mig_profile.replace('+', '.')}"


# --- Training: EFA and the datasets file system ---
EFA_DEVICE_PLUGIN_RELEASE = "aws-efa-k8s-device-plugin"
EFA_METRICS_NAME = f"{MANAGED_BY}-efa-metrics"  # the EFA collector's DaemonSet, ConfigMap and PodMonitor
DATASETS_PVC = "datasets"  # each team's claim on its own directory of the FSx for Lustre file system
DATASETS_SHARED_PVC = "datasets-shared"  # each team's read-only claim on the shared area, when there is one
DATASETS_TEAMS_DIR = "teams"  # team directories are <base>/teams/<team>
DATASETS_SETUP = f"{MANAGED_BY}-datasets-setup"  # the Job making the directories, its volume and claim


def efa_security_group_name(cluster: str, pool: str) -> str:
    return _bounded(f"{cluster}-{pool}-efa", 255)


def datasets_name(cluster: str) -> str:
    """The datasets file system's Name tag, security group and IAM role purpose share this name."""
    return _bounded(f"{cluster}-datasets", 64)


def datasets_volume(team: str) -> str:
    """The cluster-scoped PersistentVolume bound to one team's datasets claim."""
    return _bounded(f"{MANAGED_BY}-datasets-{team}", 253)


def datasets_shared_volume(team: str) -> str:
    """The read-only PersistentVolume of the shared area bound to one team's claim (a volume binds one claim)."""
    return _bounded(f"{MANAGED_BY}-datasets-shared-{team}", 253)


def script_digest(source: str) -> dict[str, str]:
    """The pod-template annotation of a script shipped in a ConfigMap: Kubernetes does not restart pods when a
    mounted ConfigMap changes, so a new script changes the template and the pods roll."""
    return {SCRIPT_DIGEST_ANNOTATION: hashlib.sha256(source.encode()).hexdigest()}
