"""The admission policies that keep teams in their lane, as plain ValidatingAdmissionPolicy manifests.

Each policy is bound to the team namespaces (the `gpu-platform.io/team` label) and denies:

- `gpu-nodes`: a pod that tolerates the GPU taint without asking for a GPU or MIG slice (GPU nodes are for
  GPU pods), or that names its node itself (`spec.nodeName` skips the scheduler, and with it taints);
- `device-access`: a pod (or an ephemeral container added to one) that reaches GPUs around the device
  plugin: a device-selection variable of the NVIDIA Container Toolkit in any container's `env`, a privileged
  container, an NVIDIA RuntimeClass, or a CDI device annotation;
- `priority-tier`: a pod whose PriorityClass is above its team's tier (the namespace's
  `gpu-platform.io/priority-tier` label; a namespace without a known tier gets the lowest);
- `queue-priority`: any object whose Kueue WorkloadPriorityClass label is above the team's tier (Kueue reads
  the label from Jobs, JobSets, Pods and every other kind it queues);
- `team-monitors`: a ServiceMonitor or PodMonitor reaching beyond its own namespace, honouring the scraped
  series' labels, relabelling `namespace`, or reading files from Prometheus's disk.

Expressions use only CEL the API server offers ValidatingAdmissionPolicies from Kubernetes 1.30 (the
`admissionregistration.k8s.io/v1` API): standard macros and string functions, `object`, `namespaceObject`,
`variables` and Kubernetes' quantity library. tests/render/test_admission.py evaluates each against allowed
and refused objects. What CEL cannot see (a variable set by the image or `envFrom`) the runtime settings
close: render/operator_values.py and decisions/node_boot.py.
"""
from __future__ import annotations

from typing import Any
from collections.abc import Iterable, Sequence

from gpu_platform.facts import catalog, names
from gpu_platform.render.team_objects import PRIORITY_TIERS, _meta

API_VERSION = "admissionregistration.k8s.io/v1"
MONITORING_API = "monitoring.coreos.com"


# --- CEL pieces ---

def _str(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _list(values: Iterable[str]) -> str:
    return "[" + ", ".join(_str(v) for v in values) + "]"


def _requests_gpus(field: str) -> str:
    return (f"has(c.resources) && has(c.resources.{field}) && c.resources.{field}.exists(r, "
            f"r.startsWith('{names.NVIDIA_DOMAIN}') && quantity(c.resources.{field}[r]).isGreaterThan(quantity('0')))")


# The pod's containers of every kind (ephemeral containers cannot ask for resources, but can set env).
INIT_AND_APP = "(object.spec.containers + (has(object.spec.initContainers) ? object.spec.initContainers : []))"
ALL_CONTAINERS = (f"({INIT_AND_APP} + "
                  "(has(object.spec.ephemeralContainers) ? object.spec.ephemeralContainers : []))")
# A pod asks for GPUs when a container asks for a GPU or MIG slice (any nvidia.com/ resource above 0, in
# requests or limits) or when it claims DRA devices: its `resourceClaims` name a template or a claim, not a
# device class, so any claim counts (a team namespace can claim only the platform's GPUs and IMEX channels).
CLAIMS_DEVICES = "has(object.spec.resourceClaims) && size(object.spec.resourceClaims) > 0"
ASKS_FOR_GPUS = (f"{INIT_AND_APP}.exists(c, ({_requests_gpus('requests')}) || ({_requests_gpus('limits')})) || "
                 f"({CLAIMS_DEVICES})")
# A toleration of the GPU taint (nvidia.com/gpu=present:NoSchedule): by key and value, by key with Exists,
# or an empty key with Exists (every taint); with no effect, or NoSchedule.
TOLERATES_GPU_TAINT = (
    "has(object.spec.tolerations) && object.spec.tolerations.exists(t, "
    "(!has(t.effect) || t.effect == '' || t.effect == 'NoSchedule') && ("
    "(has(t.operator) && t.operator == 'Exists' && (!has(t.key) || t.key == '' "
    f"|| t.key == '{names.GPU_TAINT_KEY}')) || "
    f"(has(t.key) && t.key == '{names.GPU_TAINT_KEY}' && (!has(t.operator) || t.operator == 'Equal') && "
    f"has(t.value) && t.value == '{names.GPU_TAINT_VALUE}')))")
NAMES_NO_NODE = "!has(object.spec.nodeName) || object.spec.nodeName == ''"
NO_DEVICE_ENV = (f"{ALL_CONTAINERS}.all(c, !has(c.env) || "
                 f"c.env.all(e, !(e.name in {_list(catalog.NVIDIA_DEVICE_ENV_VARS)})))")
NOT_PRIVILEGED = (f"{ALL_CONTAINERS}.all(c, !has(c.securityContext) || !has(c.securityContext.privileged) || "
                  "!c.securityContext.privileged)")
NO_NVIDIA_RUNTIME = ("!has(object.spec.runtimeClassName) || "
                     f"!object.spec.runtimeClassName.startsWith('{catalog.NVIDIA_RUNTIME_CLASS_PREFIX}')")
NO_CDI_ANNOTATIONS = ("!has(object.metadata.annotations) || "
                      f"!object.metadata.annotations.exists(k, k.startsWith('{catalog.CDI_ANNOTATION_PREFIX}'))")


def _values(table: dict[str, int]) -> str:
    return "{" + ", ".join(f"{_str(k)}: {v}" for k, v in table.items()) + "}"


# Tier -> priority value, and each tier's class name -> the same value (PriorityClass and WorkloadPriorityClass
# share names and values: render/team_objects.py, render/queueing_objects.py).
TIER_VALUES = {tier: t.value for tier, t in PRIORITY_TIERS.items()}
CLASS_VALUES = {names.priority_class(tier): t.value for tier, t in PRIORITY_TIERS.items()}
LOWEST_TIER = min(TIER_VALUES, key=TIER_VALUES.__getitem__)
TIER_LABEL_SET = (f"has(namespaceObject.metadata.labels) && '{names.PRIORITY_TIER_LABEL}' in "
                  f"namespaceObject.metadata.labels && namespaceObject.metadata.labels['{names.PRIORITY_TIER_LABEL}'] "
                  f"in {_values(TIER_VALUES)}")
# The highest priority the namespace's team may use: its tier's value, the lowest tier's without a known tier.
CEILING = (f"{TIER_LABEL_SET} ? {_values(TIER_VALUES)}[namespaceObject.metadata.labels['{names.PRIORITY_TIER_LABEL}']]"
           f" : {TIER_VALUES[LOWEST_TIER]}")


def within_tier(value: str) -> str:
    """`value` (a CEL string) names one of the platform's classes at or below the namespace's ceiling."""
    return f"{value} in {_values(CLASS_VALUES)} && {_values(CLASS_VALUES)}[{value}] <= variables.ceiling"


POD_CLASS_WITHIN_TIER = ("!has(object.spec.priorityClassName) || object.spec.priorityClassName == '' || "
                         f"({within_tier('object.spec.priorityClassName')})")
HAS_QUEUE_PRIORITY = f"has(object.metadata.labels) && '{names.KUEUE_PRIORITY_CLASS_LABEL}' in object.metadata.labels"
QUEUE_PRIORITY_WITHIN_TIER = within_tier(f"object.metadata.labels['{names.KUEUE_PRIORITY_CLASS_LABEL}']")


def _endpoints_keep_to_themselves(field: str) -> str:
    """A monitor's endpoints: no honoured labels, no relabelling of `namespace`, no files from Prometheus's disk."""
    relabel = ("(!has(e.{0}) || e.{0}.all(r, !has(r.targetLabel) || r.targetLabel != 'namespace'))")
    tls_files = ("(!has(e.tlsConfig) || (!has(e.tlsConfig.caFile) && !has(e.tlsConfig.certFile) && "
                 "!has(e.tlsConfig.keyFile)))")
    return (f"!has(object.spec.{field}) || object.spec.{field}.all(e, "
            "(!has(e.honorLabels) || !e.honorLabels) && !has(e.bearerTokenFile) && "
            f"{tls_files} && {relabel.format('relabelings')} && {relabel.format('metricRelabelings')})")


MONITOR_OWN_NAMESPACE = (
    "!has(object.spec.namespaceSelector) || ((!has(object.spec.namespaceSelector.any) || "
    "!object.spec.namespaceSelector.any) && (!has(object.spec.namespaceSelector.matchNames) || "
    "object.spec.namespaceSelector.matchNames.all(n, n == namespaceObject.metadata.name)))")
SERVICE_MONITOR_ENDPOINTS = _endpoints_keep_to_themselves("endpoints")
POD_MONITOR_ENDPOINTS = _endpoints_keep_to_themselves("podMetricsEndpoints")


# --- the objects ---

def _rule(groups: Sequence[str], resources: Sequence[str], operations: Sequence[str],
          versions: Sequence[str] = ("*",)) -> dict[str, Any]:
    return {"apiGroups": list(groups), "apiVersions": list(versions), "operations": list(operations),
            "resources": list(resources), "scope": "Namespaced"}


def _validation(expression: str, message: str) -> dict[str, Any]:
    return {"expression": expression, "reason": "Forbidden", "message": message}


def _policy(name: str, rules: list[dict[str, Any]], validations: list[dict[str, Any]], conditions: Sequence[tuple[str, str]] = (),
            variables: Sequence[tuple[str, str]] = ()) -> dict[str, Any]:
    spec: dict[str, Any] = {"failurePolicy": "Fail", "matchConstraints": {"resourceRules": rules}}
    if conditions:
        spec["matchConditions"] = [{"name": n, "expression": e} for n, e in conditions]
    if variables:
        spec["variables"] = [{"name": n, "expression": e} for n, e in variables]
    spec["validations"] = validations
    return {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicy", "metadata": _meta(name), "spec": spec}


def team_namespaces() -> dict[str, Any]:
    """The namespaces every team policy binds to: those carrying the team label."""
    return {"matchExpressions": [{"key": names.TEAM_LABEL, "operator": "Exists"}]}


def binding(policy: dict[str, Any]) -> dict[str, Any]:
    """Deny what the policy refuses, in team namespaces only."""
    name = policy["metadata"]["name"]
    return {"apiVersion": API_VERSION, "kind": "ValidatingAdmissionPolicyBinding", "metadata": _meta(name),
            "spec": {"policyName": name, "validationActions": ["Deny"],
                     "matchResources": {"namespaceSelector": team_namespaces()}}}


POD_CREATE = _rule([""], ["pods"], ["CREATE"], ["v1"])
EPHEMERAL_CONTAINERS = _rule([""], ["pods/ephemeralcontainers"], ["UPDATE"], ["v1"])
TIER_VARIABLES = (("ceiling", CEILING),)
TIERS_TEXT = "; ".join(
    f"{tier} teams: {', '.join(names.priority_class(t) for t, v in TIER_VALUES.items() if v <= value)}"
    for tier, value in TIER_VALUES.items())


def gpu_nodes_policy() -> dict[str, Any]:
    return _policy(names.GPU_NODES_POLICY, [POD_CREATE], [
        _validation(f"!({TOLERATES_GPU_TAINT}) || ({ASKS_FOR_GPUS})",
                    f"a pod that tolerates the {names.GPU_TAINT_KEY} taint must request {names.GPU_RESOURCE} or a "
                    f"{names.MIG_RESOURCE_PREFIX}<profile> slice, or claim its GPUs (resourceClaims) on a DRA pool: GPU nodes "
                    "are for GPU pods. Remove the toleration "
                    "from a CPU pod, or request the GPU it needs (gpu_platform.render.workloads.gpu_pod_spec does both)"),
        _validation(NAMES_NO_NODE, "pods in team namespaces are placed by the scheduler: remove spec.nodeName (it "
                                   "skips taints, and lands a pod on a GPU node no request asked for)"),
    ])


def device_access_policy() -> dict[str, Any]:
    env = ", ".join(catalog.NVIDIA_DEVICE_ENV_VARS)
    return _policy(names.DEVICE_ACCESS_POLICY, [POD_CREATE, EPHEMERAL_CONTAINERS], [
        _validation(NO_DEVICE_ENV, f"containers in team namespaces may not set {env}: GPUs come from the device "
                                   f"plugin, by requesting {names.GPU_RESOURCE} or a MIG slice; remove the variable"),
        _validation(NOT_PRIVILEGED, "privileged containers are refused in team namespaces: a privileged container "
                                    "sees every GPU and device of its node; remove securityContext.privileged"),
        _validation(NO_NVIDIA_RUNTIME, f"RuntimeClasses named {catalog.NVIDIA_RUNTIME_CLASS_PREFIX}* are the GPU "
                                       "Operator's own: remove spec.runtimeClassName and request GPUs instead"),
        _validation(NO_CDI_ANNOTATIONS, f"{catalog.CDI_ANNOTATION_PREFIX}* annotations request devices from the "
                                        "container runtime directly: remove them and request GPUs instead"),
    ])


def priority_tier_policy() -> dict[str, Any]:
    return _policy(names.PRIORITY_TIER_POLICY, [POD_CREATE], [
        _validation(POD_CLASS_WITHIN_TIER,
                    f"spec.priorityClassName must be the team's tier (namespace label {names.PRIORITY_TIER_LABEL}) or "
                    f"a lower one, or none: {TIERS_TEXT}"),
    ], variables=TIER_VARIABLES)


def queue_priority_policy() -> dict[str, Any]:
    """Any namespaced object carrying Kueue's priority label: Kueue reads it from every kind it queues."""
    return _policy(names.QUEUE_PRIORITY_POLICY, [_rule(["*"], ["*"], ["CREATE", "UPDATE"])], [
        _validation(QUEUE_PRIORITY_WITHIN_TIER,
                    f"the {names.KUEUE_PRIORITY_CLASS_LABEL} label must name the team's tier (namespace label "
                    f"{names.PRIORITY_TIER_LABEL}) or a lower one: {TIERS_TEXT}"),
    ], conditions=(("names-a-queue-priority", HAS_QUEUE_PRIORITY),), variables=TIER_VARIABLES)


def team_monitors_policy() -> dict[str, Any]:
    keep = ("honorLabels, relabelling the namespace label, bearerTokenFile and tlsConfig files are refused: a team's "
            "series keep its namespace (alerts route by it) and Prometheus's files stay its own")
    return _policy(names.TEAM_MONITORS_POLICY, [
        _rule([MONITORING_API], ["servicemonitors", "podmonitors"], ["CREATE", "UPDATE"])], [
        _validation(MONITOR_OWN_NAMESPACE, "a team's monitor scrapes its own namespace only: drop "
                                           "namespaceSelector.any and list no other namespace in matchNames"),
        _validation(SERVICE_MONITOR_ENDPOINTS, f"spec.endpoints: {keep}"),
        _validation(POD_MONITOR_ENDPOINTS, f"spec.podMetricsEndpoints: {keep}"),
    ])


POLICIES = {"gpu-nodes": gpu_nodes_policy, "device-access": device_access_policy,
            "priority-tier": priority_tier_policy, "queue-priority": queue_priority_policy,
            "team-monitors": team_monitors_policy}


def admission_manifests() -> dict[str, dict[str, Any]]:
    """Every policy and its binding, keyed by a stable logical name (`<key>` and `<key>-binding`)."""
    out = {}
    for key, build in POLICIES.items():
        policy = build()
        out[key] = policy
        out[f"{key}-binding"] = binding(policy)
    return out
