"""The acceptance gate's Kubernetes objects, as plain manifests (docs/acceptance.md).

- The node readiness controller (kubernetes-sigs, pinned image): its Deployment on the system nodes, its RBAC
  as the release's `config/rbac` grants it, and one NodeReadinessRule per accepted pool (bootstrap only):
  the startup taint goes once the node's `GpuAcceptance` condition is True.
- The checker, one DaemonSet per accepted pool on nodes not yet judged: a check container per check (DCGM's
  image for `dcgmi diag` and `nvidia-smi`, AWS's NCCL tests image for the all-reduce and `fi_info`), each
  recording its output and exit code, then the reporter (render/acceptance_reporter.py, shipped as text in a
  ConfigMap) judging them and writing the condition and labels. The label moves the pod off the node.
- The checker's identity may patch nodes and their status and nothing else (RBAC); a ValidatingAdmissionPolicy
  narrows that to the node its pod runs on (the pod-bound token's node name), its own condition and its own
  labels, never a taint, annotation or other condition.

Nothing here runs on a node without the startup taint, and the platform's node agents tolerate it.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Sequence

from gpu_platform.decisions.tolerations import startup_toleration, toleration
from gpu_platform.facts import acceptance as facts
from gpu_platform.facts import names
from gpu_platform.render import acceptance_reporter as reporter

if TYPE_CHECKING:
    from gpu_platform.decisions.acceptance import PoolAcceptance
    from gpu_platform.spec.models import NodePoolSpec

API = "admissionregistration.k8s.io/v1"
RULE_API = "readiness.node.x-k8s.io/v1alpha1"
REPORTER_KEY = "reporter.py"
RESULTS = "/results"
SCRIPT_DIR = "/opt/acceptance"
NVIDIA_RUNTIME_CLASS = "nvidia"  # the GPU Operator's RuntimeClass (chart value operator.runtimeClass)
CHECKER_USER = f"system:serviceaccount:{names.ACCEPTANCE_NAMESPACE}:{names.ACCEPTANCE_NAME}"


def _meta(name: str, namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {names.MANAGED_BY_LABEL: names.MANAGED_BY}}
    if namespace:
        meta["namespace"] = namespace
    return meta


def _namespace_labels(pod_security_level: str) -> dict[str, str]:
    """Its Pod Security level and managed-by: no monitors live there, so Prometheus does not select it."""
    return {**names.pod_security_labels(pod_security_level), names.MANAGED_BY_LABEL: names.MANAGED_BY}


def checker_name(pool: str) -> str:
    return f"{names.ACCEPTANCE_NAME}-{pool}"[:63].rstrip("-")


# --- the node readiness controller ---

def readiness_rule(gate: "PoolAcceptance") -> dict[str, Any]:
    """Lift the startup taint from the pool's nodes once their acceptance condition is True, once per node."""
    return {"apiVersion": RULE_API, "kind": "NodeReadinessRule", "metadata": _meta(checker_name(gate.pool)),
            "spec": {"conditions": [{"type": names.ACCEPTANCE_CONDITION, "requiredStatus": "True"}],
                     "taint": {"key": names.ACCEPTANCE_TAINT_KEY, "value": names.ACCEPTANCE_TAINT_VALUE,
                               "effect": names.ACCEPTANCE_TAINT_EFFECT},
                     "enforcementMode": "bootstrap-only",
                     "nodeSelector": {"matchLabels": {names.POOL_LABEL: gate.pool}}}}


CONTROLLER_RULES = (  # the v0.4.1 release's config/rbac/role.yaml
    {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
    {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "patch", "update", "watch"]},
    {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["get"]},
    {"apiGroups": ["readiness.node.x-k8s.io"], "resources": ["nodereadinessrules"],
     "verbs": ["get", "list", "patch", "update", "watch"]},
    {"apiGroups": ["readiness.node.x-k8s.io"], "resources": ["nodereadinessrules/finalizers"], "verbs": ["update"]},
    {"apiGroups": ["readiness.node.x-k8s.io"], "resources": ["nodereadinessrules/status"],
     "verbs": ["get", "patch", "update"]},
)
LEADER_ELECTION_RULES = ({"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                          "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"]},
                         {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]})


def controller_objects(system_node_selector: dict[str, str], replicas: int) -> list[dict[str, Any]]:
    ns, name = names.NODE_READINESS_NAMESPACE, names.NODE_READINESS_NAME
    labels = {"app.kubernetes.io/name": name}
    subject = [{"kind": "ServiceAccount", "name": name, "namespace": ns}]
    container = {
        "name": "manager", "image": facts.NODE_READINESS_IMAGE, "command": ["/manager"],
        "args": ["--leader-elect", "--health-probe-bind-address=:8081"],
        "securityContext": {"readOnlyRootFilesystem": True, "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]}},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8081}, "initialDelaySeconds": 15, "periodSeconds": 20},
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": 8081}, "initialDelaySeconds": 5, "periodSeconds": 10},
        "resources": {"requests": {"cpu": "10m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "128Mi"}},
    }
    return [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": ns, "labels": _namespace_labels("restricted")}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(name, ns)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": _meta(name),
         "rules": [dict(r) for r in CONTROLLER_RULES]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": _meta(name),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name}, "subjects": subject},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": _meta(f"{name}-leader-election", ns),
         "rules": [dict(r) for r in LEADER_ELECTION_RULES]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": _meta(f"{name}-leader-election", ns),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": f"{name}-leader-election"},
         "subjects": subject},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta(name, ns), "spec": {
            "replicas": replicas, "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": {
                "serviceAccountName": name, "priorityClassName": "system-cluster-critical",
                "nodeSelector": dict(system_node_selector), "terminationGracePeriodSeconds": 10,
                "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
                "containers": [container]}}}},
    ]


# --- the checker ---

NODECLAIM_GROUP = "karpenter.sh"


def checker_rbac(replaces: bool = False) -> list[dict[str, Any]]:
    """`replaces`: some pool's failed nodes are replaced by deleting their NodeClaims."""
    ns, name = names.ACCEPTANCE_NAMESPACE, names.ACCEPTANCE_NAME
    claims = [{"apiGroups": [NODECLAIM_GROUP], "resources": ["nodeclaims"], "verbs": ["delete"]}] if replaces else []
    return [
        {"apiVersion": "v1", "kind": "Namespace",
         "metadata": {"name": ns, "labels": _namespace_labels("privileged")}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(name, ns)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": _meta(name), "rules": [
            # list: how many of a pool's nodes failed, before a failed one is replaced
            {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "patch"]},
            {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"]},
            # the precheck: does the node already run work (its pool gated after it registered)?
            {"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}, *claims]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": _meta(name),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
         "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}]},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta(name, ns),
         "data": {REPORTER_KEY: reporter_source()}},
    ]


def reporter_source() -> str:
    return Path(reporter.__file__).read_text()


def _recorded(check: str, command: str, minutes: int) -> list[str]:
    """Run a check under a time limit, keeping its output and exit code (124: timed out) for the reporter."""
    return ["/bin/sh", "-c", f"[ -e {RESULTS}/{reporter.SKIP} ] || {{ timeout {minutes * 60} {command} > "
                             f"{RESULTS}/{check}.out 2>&1; echo $? > {RESULTS}/{check}.rc; }}"]


def check_minutes(gate: "PoolAcceptance") -> dict[str, int]:
    """Each check's time limit: the others' own, DCGM the rest of the pool's timeout."""
    others = {c: facts.CHECK_TIMEOUT_MINUTES[c] for c in gate.checks if c != "dcgm"}
    return {"dcgm": max(1, gate.timeout_minutes - sum(others.values())), **others}


def efa_script() -> str:
    """List the EFA devices, then send between the first and the last RDM domain on the node itself
    (fi_pingpong's server in the background, its client over the loopback control socket). Shared memory is off:
    otherwise libfabric would carry the bytes between the two processes without touching the device."""
    pingpong = (f"{facts.EFA_BIN}/fi_pingpong -p efa -e rdm -I {facts.EFA_PINGPONG_ITERATIONS} "
                f"-S {facts.EFA_PINGPONG_BYTES}")
    return "; ".join([
        "fi_info -p efa -t FI_EP_RDM", "ls /dev/infiniband",
        'set -- $(fi_info -p efa -t FI_EP_RDM | sed -n "s/^ *domain: *//p")', "[ $# -gt 0 ] || exit 1",
        "for d; do last=$d; done", "export FI_EFA_ENABLE_SHM_TRANSFER=0", 'echo "transfer: $1 -> $last"',
        f"{pingpong} -d $1 > /dev/null 2>&1 & sleep 2", f"{pingpong} -d $last localhost", "rc=$?",
        "wait", "exit $rc",
    ])


def check_containers(gate: "PoolAcceptance") -> list[dict[str, Any]]:
    minutes = check_minutes(gate)
    commands = {
        "dcgm": (facts.DCGM_IMAGE, f"sh -c 'nv-hostengine && dcgmi diag -r {gate.level} -j'"),
        "nccl": (facts.NCCL_TESTS_IMAGE, f"all_reduce_perf -b 8 -e 8G -f 2 -g {gate.gpus}"),
        "efa": (facts.NCCL_TESTS_IMAGE, f"sh -c '{efa_script()}'"),
        "imex": (facts.DCGM_IMAGE, "nvidia-smi -q"),
    }
    out = []
    for check in gate.checks:
        image, command = commands[check]
        out.append({
            "name": check, "image": image, "command": _recorded(check, command, minutes[check]),
            "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
                    {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"}],
            # Active diagnostics and device listings need the GPUs and /dev/infiniband of the host.
            "securityContext": {"privileged": True},
            "volumeMounts": [{"name": "results", "mountPath": RESULTS}],
        })
    return out


def precheck_container() -> dict[str, Any]:
    """Runs first: on a node without the startup taint, no check runs (render/acceptance_reporter.py)."""
    container = reporter_container_base()
    return {**container, "name": "precheck", "command": [*container["command"], "precheck"],
            "volumeMounts": [{"name": "results", "mountPath": RESULTS},
                             {"name": "reporter", "mountPath": SCRIPT_DIR, "readOnly": True}]}


def reporter_container_base() -> dict[str, Any]:
    return {
        "name": "reporter", "image": facts.REPORTER_IMAGE, "command": ["python3", f"{SCRIPT_DIR}/{REPORTER_KEY}"],
        "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
                {"name": "RESULTS", "value": RESULTS}],
        "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "runAsNonRoot": True, "runAsUser": 65534, "capabilities": {"drop": ["ALL"]}},
    }


def reporter_container(gate: "PoolAcceptance") -> dict[str, Any]:
    env = {"LEVEL": str(gate.level), "CHECKS": ",".join(gate.checks),
           "NCCL_FLOOR_GBPS": f"{gate.nccl_floor_gbps:g}" if gate.nccl_floor_gbps else "",
           "EFA_INTERFACES": str(gate.efa_interfaces),
           "EFA_FLOOR_MBPS": f"{facts.EFA_FLOOR_MBPS:g}" if "efa" in gate.checks else "", "REPLACE_VIA": gate.replace_via,
           "MAX_FAILED_NODES": str(gate.max_failed_nodes or ""),
           "MAX_FAILED_PERCENT": str(gate.max_failed_percent or "")}
    base = reporter_container_base()
    return {
        **base, "env": [*base["env"], *({"name": k, "value": v} for k, v in env.items())],
        "volumeMounts": [{"name": "results", "mountPath": RESULTS, "readOnly": True},
                         {"name": "reporter", "mountPath": SCRIPT_DIR, "readOnly": True}],
    }


def pool_tolerations(pool: "NodePoolSpec") -> list[dict[str, str]]:
    """The GPU taint, the startup taint and the pool's own: the checker runs only on the pool's new nodes."""
    out = [{"key": names.GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"}, startup_toleration()]
    return out + [toleration(t) for t in pool.taints if toleration(t) not in out]


def checker_daemonset(pool: "NodePoolSpec", gate: "PoolAcceptance") -> dict[str, Any]:
    name = checker_name(gate.pool)
    labels = {"app.kubernetes.io/name": names.ACCEPTANCE_NAME, names.POOL_LABEL: gate.pool}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": names.POOL_LABEL, "operator": "In", "values": [gate.pool]},
                              {"key": names.ACCEPTANCE_LABEL, "operator": "DoesNotExist"}]}]}}}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": _meta(name, names.ACCEPTANCE_NAMESPACE), "spec": {
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels, "annotations": names.script_digest(reporter_source())}, "spec": {
            "serviceAccountName": names.ACCEPTANCE_NAME, "priorityClassName": "system-node-critical",
            "runtimeClassName": NVIDIA_RUNTIME_CLASS, "affinity": affinity, "tolerations": pool_tolerations(pool),
            "initContainers": [precheck_container(), *check_containers(gate)],
            "containers": [reporter_container(gate)],
            "volumes": [{"name": "results", "emptyDir": {}},
                        {"name": "reporter", "configMap": {"name": names.ACCEPTANCE_NAME}}]}}}}


# --- passive re-checks of idle accepted nodes ---

RECHECK_PRIORITY = -1000  # below every workload's (default 0): the scheduler preempts it, never the other way


def recheck_priority_class() -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": _meta(names.ACCEPTANCE_RECHECK),
            "value": RECHECK_PRIORITY, "preemptionPolicy": "Never", "globalDefault": False,
            "description": "GPU nodes' passive health re-checks: yield to any work, never preempt it"}


def health_script() -> str:
    """Start a host engine, set every health watch, let them sample, then answer each request of the reporter
    beside it (the request file) with `dcgmi health -c`."""
    report = f"{RESULTS}/health.out"
    return "; ".join([
        "nv-hostengine", "dcgmi health -s a", f"sleep {facts.HEALTH_WATCH_SECONDS}",
        f"while true; do if [ -e {RESULTS}/{reporter.RUN} ]; then dcgmi health -c > {report}.tmp 2>&1; "
        f"mv {report}.tmp {report}; rm -f {RESULTS}/{reporter.RUN}; fi; sleep 5; done",
    ])


def recheck_daemonset(pool: "NodePoolSpec", gate: "PoolAcceptance") -> dict[str, Any]:
    """On the pool's accepted nodes only (no startup toleration), at the lowest priority, requesting no GPU."""
    name = f"{names.ACCEPTANCE_RECHECK}-{gate.pool}"[:63].rstrip("-")
    labels = {"app.kubernetes.io/name": names.ACCEPTANCE_RECHECK, names.POOL_LABEL: gate.pool}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": names.POOL_LABEL, "operator": "In", "values": [gate.pool]},
                              {"key": names.ACCEPTANCE_LABEL, "operator": "In", "values": ["passed"]}]}]}}}
    tolerations = [t for t in pool_tolerations(pool) if t != startup_toleration()]
    base = reporter_container_base()
    env = [*base["env"], {"name": "RECHECK_HOURS", "value": str(gate.recheck_hours)},
           {"name": "HEALTH_TIMEOUT_SECONDS", "value": str(facts.HEALTH_TIMEOUT_MINUTES * 60)}]
    mounts = [{"name": "results", "mountPath": RESULTS}]
    reporter_ = {**base, "command": [*base["command"], "recheck"], "env": env,
                 "volumeMounts": [*mounts, {"name": "reporter", "mountPath": SCRIPT_DIR, "readOnly": True}]}
    dcgm = {"name": "health", "image": facts.DCGM_IMAGE, "command": ["/bin/sh", "-c", health_script()],
            "env": [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
                    {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "compute,utility"}],
            "resources": {"requests": {"cpu": "10m", "memory": "128Mi"}, "limits": {"memory": "512Mi"}},
            "securityContext": {"privileged": True}, "volumeMounts": mounts}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": _meta(name, names.ACCEPTANCE_NAMESPACE), "spec": {
        "selector": {"matchLabels": labels},
        "template": {"metadata": {"labels": labels, "annotations": names.script_digest(reporter_source())}, "spec": {
            "serviceAccountName": names.ACCEPTANCE_NAME, "priorityClassName": names.ACCEPTANCE_RECHECK,
            "runtimeClassName": NVIDIA_RUNTIME_CLASS, "affinity": affinity, "tolerations": tolerations,
            "containers": [dcgm, reporter_],
            "volumes": [{"name": "results", "emptyDir": {}},
                        {"name": "reporter", "configMap": {"name": names.ACCEPTANCE_NAME}}]}}}}


def recheck_objects(pools: Sequence[tuple["NodePoolSpec", "PoolAcceptance"]]) -> list[dict[str, Any]]:
    rechecked = [(pool, gate) for pool, gate in pools if gate.recheck_hours]
    return [recheck_priority_class(), *(recheck_daemonset(p, g) for p, g in rechecked)] if rechecked else []


# --- the admission policy narrowing the checker's identity ---

_LABELS = "(has({o}.metadata.labels) ? {o}.metadata.labels : {{}})"
_ANNOTATIONS = "(has({o}.metadata.annotations) ? {o}.metadata.annotations : {{}})"
_CONDITIONS = "(has({o}.status) && has({o}.status.conditions) ? {o}.status.conditions : [])"


_NOT_OURS = f"!(c.type in ['{names.ACCEPTANCE_CONDITION}', '{names.HEALTH_CONDITION}'])"


def _own(expr: str, o: str) -> str:
    return expr.format(o=o)


def admission_policy() -> list[dict[str, Any]]:
    """The checker may change only the node its pod runs on, only its acceptance labels and condition."""
    prefix, extra = names.ACCEPTANCE_LABEL_PREFIX, names.SA_NODE_NAME_EXTRA
    new_labels, old_labels = _own(_LABELS, "object"), _own(_LABELS, "oldObject")
    validations = [
        (f"'{extra}' in request.userInfo.extra && request.userInfo.extra['{extra}'].exists(n, n == object.metadata.name)",
         "the acceptance checker may change only the node its pod runs on"),
        ("object.spec == oldObject.spec", "the acceptance checker may not change a node's spec (taints are the node "
                                          "readiness controller's)"),
        (f"{_own(_ANNOTATIONS, 'object')} == {_own(_ANNOTATIONS, 'oldObject')}",
         "the acceptance checker may not change a node's annotations"),
        (f"{new_labels}.all(k, k.startsWith('{prefix}') || (k in {old_labels} && {old_labels}[k] == {new_labels}[k])) "
         f"&& {old_labels}.all(k, k.startsWith('{prefix}') || k in {new_labels})",
         f"the acceptance checker may change only labels under {prefix}"),
        (f"{_own(_CONDITIONS, 'object')}.filter(c, {_NOT_OURS}) == {_own(_CONDITIONS, 'oldObject')}.filter(c, {_NOT_OURS})",
         f"the acceptance checker may change only the {names.ACCEPTANCE_CONDITION} and {names.HEALTH_CONDITION} "
         "conditions"),
    ]
    name = names.ACCEPTANCE_NAME
    policy = {"apiVersion": API, "kind": "ValidatingAdmissionPolicy", "metadata": _meta(name), "spec": {
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["UPDATE"],
                                                "resources": ["nodes", "nodes/status"]}]},
        "matchConditions": [{"name": "checker", "expression": f"request.userInfo.username == '{CHECKER_USER}'"}],
        "validations": [{"expression": e, "message": m} for e, m in validations]}}
    binding = {"apiVersion": API, "kind": "ValidatingAdmissionPolicyBinding", "metadata": _meta(name),
               "spec": {"policyName": name, "validationActions": ["Deny"]}}
    return [policy, binding]


def nodeclaim_policy(pools: Sequence[str]) -> list[dict[str, Any]]:
    """The checker may delete only the NodeClaim of the node its pod runs on, in a pool that replaces failed
    nodes: a failed node's own (Karpenter then drains and replaces it)."""
    extra, pool_key = names.SA_NODE_NAME_EXTRA, names.KARPENTER_NODEPOOL_LABEL
    claim = "oldObject"
    validations = [
        (f"'{extra}' in request.userInfo.extra && has({claim}.status) && has({claim}.status.nodeName) && "
         f"request.userInfo.extra['{extra}'].exists(n, n == {claim}.status.nodeName)",
         "the acceptance checker may delete only the NodeClaim of the node its pod runs on"),
        (f"'{pool_key}' in {_own(_LABELS, claim)} && {_own(_LABELS, claim)}['{pool_key}'] in {list(pools)}",
         "the acceptance checker may delete only NodeClaims of pools that replace failed nodes"
         f" ({', '.join(pools) or 'none'})"),
    ]
    name = f"{names.ACCEPTANCE_NAME}-replace"
    policy = {"apiVersion": API, "kind": "ValidatingAdmissionPolicy", "metadata": _meta(name), "spec": {
        "failurePolicy": "Fail",
        "matchConstraints": {"resourceRules": [{"apiGroups": [NODECLAIM_GROUP], "apiVersions": ["*"],
                                                "operations": ["DELETE"], "resources": ["nodeclaims"]}]},
        "matchConditions": [{"name": "checker", "expression": f"request.userInfo.username == '{CHECKER_USER}'"}],
        "validations": [{"expression": e, "message": m} for e, m in validations]}}
    binding = {"apiVersion": API, "kind": "ValidatingAdmissionPolicyBinding", "metadata": _meta(name),
               "spec": {"policyName": name, "validationActions": ["Deny"]}}
    return [policy, binding]


def terminate_policy(cluster: str) -> dict[str, Any]:
    """The checker's AWS identity: terminate instances only in Auto Scaling groups this cluster owns (the tag the
    Cluster Autoscaler discovers node groups by), never changing their size (the reporter asks for that)."""
    return {"Version": "2012-10-17", "Statement": [{
        "Sid": "ReplaceFailedNodes", "Effect": "Allow", "Resource": "*",
        "Action": "autoscaling:TerminateInstanceInAutoScalingGroup",
        "Condition": {"StringEquals": {f"aws:ResourceTag/{names.ca_cluster_tag(cluster)}": names.CA_OWNED_VALUE}}}]}


def acceptance_manifests(pools: Sequence[tuple["NodePoolSpec", "PoolAcceptance"]], system_node_selector: dict[str, str],
                         prod: bool) -> list[dict[str, Any]]:
    """Every object of the gate, in the order they can be applied."""
    if not pools:
        return []
    replacing = [gate.pool for _, gate in pools if gate.replace_via == "nodeclaim"]
    return [*controller_objects(system_node_selector, 2 if prod else 1), *checker_rbac(bool(replacing)),
            *admission_policy(), *(nodeclaim_policy(replacing) if replacing else []),
            *(readiness_rule(gate) for _, gate in pools), *(checker_daemonset(pool, gate) for pool, gate in pools),
            *recheck_objects(pools)]
