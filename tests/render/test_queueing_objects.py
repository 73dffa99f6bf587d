"""Kueue's objects, chart values and the queued-GPU-pods admission policy (render/queueing_objects.py):
the CEL intent of the policy, the objects against Kubernetes' schema, and the chart keys against the chart."""
import copy

import kubernetes_validate
import pytest
import yaml

from gpu_platform.decisions import queueing as q
from gpu_platform.decisions.node_pool import node_labels, node_taints
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render import queueing_objects as o
from gpu_platform.render.team_objects import PRIORITY_TIERS, TeamContext, namespace, priority_class
from gpu_platform.render.workloads import gpu_job, gpu_pod
from tests.support.kueue_crds import cel_true
from tests.support.stacks import spec_of


def values(spec, prometheus_namespace):
    """The chart values a stack file's queueing gets."""
    return o.chart_values(spec.prod, spec.cluster.system_node_selector, prometheus_namespace)


IMAGE = "registry.example.com/trainer:2.3"


def team_of(spec, name):
    return next(t for t in spec.teams if t.name == name)


def pod(requests=None, limits=None, labels=None, init=False):
    container = {"name": "main", "image": IMAGE}
    if requests is not None or limits is not None:
        container["resources"] = {k: v for k, v in (("requests", requests), ("limits", limits)) if v is not None}
    spec = {"containers": [{"name": "side", "image": IMAGE}]}
    spec["initContainers" if init else "containers"] = (spec["containers"] if not init else []) + [container]
    meta = {"name": "p", "namespace": "research"}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def asks_for_gpus(obj) -> bool:
    return cel_true(o.ASKS_FOR_GPUS, object=obj)


def is_queued(obj) -> bool:
    return cel_true(o.IS_QUEUED, object=obj)


# --- the admission policy's CEL ---

@pytest.mark.parametrize("p", [
    pod(requests={names.GPU_RESOURCE: "1", "cpu": "2"}),
    pod(limits={names.GPU_RESOURCE: "2"}),  # requests default to limits for extended resources
    pod(requests={names.mig_resource("1g.10gb"): "1"}),
    pod(requests={names.GPU_RESOURCE: "1"}, init=True),
], ids=["gpu-request", "gpu-limit-only", "mig-slice", "init-container"])
def test_pods_asking_for_gpus_are_matched(p):
    assert asks_for_gpus(p)


@pytest.mark.parametrize("p", [
    pod(),
    pod(requests={"cpu": "2", "memory": "1Gi"}),
    pod(requests={names.GPU_RESOURCE: "0", "cpu": "250m"}, limits={names.GPU_RESOURCE: "0"}),  # the LimitRange default
    pod(requests={"vpc.amazonaws.com/efa": "1"}),
], ids=["no-resources", "cpu-only", "zero-gpus", "efa-only"])
def test_pods_without_gpus_are_not_matched(p):
    assert not asks_for_gpus(p)


def _claiming(p: dict, claims: list) -> dict:
    p["spec"]["resourceClaims"] = claims
    return p


def test_a_pod_claiming_dra_devices_outside_a_queue_is_refused():
    claimed = _claiming(pod(), [{"name": "gpus", "resourceClaimTemplateName": "b200-x8"}])
    assert asks_for_gpus(claimed) and not is_queued(claimed)
    queued = _claiming(pod(labels={names.KUEUE_QUEUE_NAME_LABEL: names.TEAM_LOCAL_QUEUE}),
                       [{"name": "gpus", "resourceClaimName": "shared"}])
    assert asks_for_gpus(queued) and is_queued(queued)
    assert not asks_for_gpus(_claiming(pod(), []))


def test_the_helpers_dra_pods_pass_the_policy():
    from tests.support.dra import DRA_POOL, prod_with_dra

    spec = parse_platform(prod_with_dra())
    job = gpu_job(spec, "research", "train", IMAGE, pool=DRA_POOL, gpus=8)
    job_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": job["spec"]["template"]["metadata"],
               "spec": job["spec"]["template"]["spec"]}
    assert job_pod["spec"]["resourceClaims"] and asks_for_gpus(job_pod) and is_queued(job_pod)


def test_a_pod_is_queued_by_a_non_empty_queue_label():
    assert is_queued(pod(labels={names.KUEUE_QUEUE_NAME_LABEL: names.TEAM_LOCAL_QUEUE}))
    assert not is_queued(pod(labels={names.KUEUE_QUEUE_NAME_LABEL: ""}))
    assert not is_queued(pod(labels={names.TEAM_LABEL: "research"}))
    assert not is_queued(pod())


def test_the_helpers_gpu_pods_pass_the_policy_when_the_stack_queues(prod):
    service = gpu_pod(prod, "inference", "llm", IMAGE, pool="l4-inference")
    job = gpu_job(prod, "research", "train", IMAGE, pool="a100-train", gpus=8)
    job_pod = {"apiVersion": "v1", "kind": "Pod", "metadata": job["spec"]["template"]["metadata"],
               "spec": job["spec"]["template"]["spec"]}
    for p in (service, job_pod):
        assert asks_for_gpus(p) and is_queued(p)


def test_a_gpu_pod_written_without_the_queue_label_is_refused(prod):
    p = gpu_pod(prod, "inference", "llm", IMAGE, pool="l4-inference")
    del p["metadata"]["labels"][names.KUEUE_QUEUE_NAME_LABEL]
    assert asks_for_gpus(p) and not is_queued(p)


def test_the_policy_and_binding_match_the_kubernetes_schema(prod):
    for obj in (o.queued_gpu_pods_policy(), o.queued_gpu_pods_binding()):
        kubernetes_validate.validate(obj, prod.cluster.kubernetes_version, strict=True)


def test_the_policy_denies_pod_creation_in_team_namespaces_only(prod):
    policy, binding = o.queued_gpu_pods_policy(), o.queued_gpu_pods_binding()
    assert policy["spec"]["matchConstraints"]["resourceRules"] == [
        {"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]
    assert (policy["spec"]["failurePolicy"], binding["spec"]["validationActions"]) == ("Fail", ["Deny"])
    assert binding["spec"]["policyName"] == policy["metadata"]["name"] == names.QUEUED_GPU_PODS_POLICY
    selector = binding["spec"]["matchResources"]["namespaceSelector"]
    assert selector == o.manager_config()["managedJobsNamespaceSelector"]
    team_labels = namespace(TeamContext.of(prod, prod.teams[0]), prod.teams[0])["metadata"]["labels"]
    assert all(e["key"] in team_labels for e in selector["matchExpressions"])  # Exists on the team label


def test_the_policy_message_names_the_label_to_add():
    message = o.queued_gpu_pods_policy()["spec"]["validations"][0]["message"]
    assert f"{names.KUEUE_QUEUE_NAME_LABEL}: {names.TEAM_LOCAL_QUEUE}" in message


# --- flavors and queues ---

def test_a_flavor_lands_pods_on_its_pool_and_keeps_the_pool_s_own_taints(prod):
    pools = {p.name: p for p in prod.node_pools}
    for flavor in q.gpu_flavors(prod):
        rendered = o.resource_flavor(flavor)["spec"]
        pool = pools[flavor.pool]
        assert rendered["nodeLabels"].items() <= node_labels(pool).items()
        taints = [(t["key"], t["value"], t["effect"]) for t in rendered.get("nodeTaints", [])]
        assert taints == node_taints(pool)[1:]  # everything but the GPU taint, which the flavor tolerates
        assert rendered["tolerations"] == [{"key": names.GPU_TAINT_KEY, "operator": "Equal",
                                            "value": names.GPU_TAINT_VALUE, "effect": "NoSchedule"}]


def test_a_pod_the_helper_places_on_a_reserved_pool_tolerates_its_flavor(prod):
    (flavor,) = [f for f in q.gpu_flavors(prod) if f.pool == "a100-train"]
    spec = gpu_job(prod, "research", "train", IMAGE, pool="a100-train", gpus=8)["spec"]["template"]["spec"]
    rendered = o.resource_flavor(flavor)["spec"]
    assert rendered["nodeLabels"].items() <= spec["nodeSelector"].items()
    for taint in rendered["nodeTaints"]:
        assert {"key": taint["key"], "operator": "Equal", "value": taint["value"], "effect": taint["effect"]} \
            in spec["tolerations"]


def test_mig_flavors_are_labelled_with_their_profile(prod):
    labels = {f.name: o.resource_flavor(f)["metadata"]["labels"] for f in q.gpu_flavors(prod)}
    assert labels["h100-mig-2g.20gb"][names.MIG_PROFILE_LABEL] == "2g.20gb"
    assert names.MIG_PROFILE_LABEL not in labels["l4-inference"]
    assert labels["l4-inference"][names.GPU_MODEL_LABEL] == "L4"


@pytest.mark.parametrize("team, within, reclaim", [
    ("inference", "LowerPriority", "Any"), ("research", "LowerPriority", "Any"), ("batch", "Never", "LowerPriority")])
def test_preemption_follows_the_team_s_tier(prod, team, within, reclaim):
    t = team_of(prod, team)
    preemption = o.cluster_queue(t, q.team_queue(prod, t))["spec"]["preemption"]
    assert preemption == {"withinClusterQueue": within, "reclaimWithinCohort": reclaim}


def test_every_queue_shares_one_cohort_tree_and_selects_its_team_namespace_only(prod):
    for team in prod.teams:
        queue = q.team_queue(prod, team)
        spec = o.cluster_queue(team, queue)["spec"]
        if team.queue.sub_teams:  # in the team's cohort, itself under the platform's
            assert spec["cohortName"] == o.team_cohort(team, queue)["metadata"]["name"] == names.team_cohort(team.name)
            assert o.team_cohort(team, queue)["spec"]["parentName"] == names.KUEUE_COHORT
        else:
            assert spec["cohortName"] == names.KUEUE_COHORT == o.cohort()["metadata"]["name"]
        assert spec["namespaceSelector"] == {"matchLabels": {names.NAMESPACE_NAME_LABEL: team.name}}
        assert o.local_queue(team)["spec"]["clusterQueue"] == names.cluster_queue(team.name)
        assert o.local_queue(team)["metadata"]["namespace"] == team.name


def test_fair_sharing_weight_is_the_team_s(prod):
    def in_platform_cohort(t):  # a team with sub-teams competes as its cohort
        make = o.team_cohort if t.queue.sub_teams else o.cluster_queue
        return make(t, q.team_queue(prod, t))["spec"]["fairSharing"]["weight"]
    weights = {t.name: in_platform_cohort(t) for t in prod.teams}
    assert weights == {"research": 2, "inference": 1, "batch": 1}
    spec = spec_of("prod", lambda p: p["teams"][2]["queue"].update(weight=0.5))
    batch = team_of(spec, "batch")
    assert o.cluster_queue(batch, q.team_queue(spec, batch))["spec"]["fairSharing"]["weight"] == "0.5"


def test_a_queue_covers_exactly_the_resources_the_resource_quota_bounds(prod):
    from gpu_platform.render.team_objects import quota_hard

    for team in prod.teams:
        spec = o.cluster_queue(team, q.team_queue(prod, team))["spec"]
        covered = {r for g in spec["resourceGroups"] for r in g["coveredResources"]}
        hard = quota_hard(TeamContext.of(prod, team), team)
        bounded = {k.removeprefix("requests.") for k in hard if k.startswith("requests.")} - {"storage"}
        assert covered == bounded


def test_workload_priority_classes_equal_the_tiers_priority_classes():
    for tier in PRIORITY_TIERS:
        wpc, pc = o.workload_priority_class(tier), priority_class(tier)
        assert (wpc["metadata"]["name"], wpc["value"]) == (pc["metadata"]["name"], pc["value"])


# --- the controller's configuration and the chart values ---

# Every Kueue chart value the platform sets, checked by hand against the chart's values.yaml and README
# (kubernetes-sigs/kueue, charts/kueue; no package registry serves the chart, so there is no copy to read
# here), with the default seen there. Re-check when the pinned chart version moves.
VERIFIED_KEYS = {
    "controllerManager.replicas": "1",
    "controllerManager.nodeSelector": "{}",
    "controllerManager.podDisruptionBudget.enabled": "false",
    "controllerManager.podDisruptionBudget.minAvailable": "1",
    "managerConfig.controllerManagerConfigYaml": "the chart's Configuration (a string)",
    "enablePrometheus": "false",
    "metrics.prometheusNamespace": "monitoring",
}
# Configuration (config.kueue.x-k8s.io/v1beta2, kubernetes-sigs/kueue apis/config/v1beta2/configuration_types.go).
VERIFIED_CONFIG_KEYS = {
    "apiVersion", "kind", "health.healthProbeBindAddress", "metrics.bindAddress", "metrics.enableClusterQueueResources",
    "webhook.port", "leaderElection.leaderElect", "leaderElection.resourceName", "managedJobsNamespaceSelector",
    "manageJobsWithoutQueueName", "integrations.frameworks", "fairSharing.preemptionStrategies",
    "resources.excludeResourcePrefixes",
    # AdmissionFairSharing (apis/config/v1beta2): usageHalfLifeTime, usageSamplingInterval, resourceWeights
    "admissionFairSharing.usageHalfLifeTime", "admissionFairSharing.usageSamplingInterval",
    "admissionFairSharing.resourceWeights",
}
CONFIG_DATA_KEYS = ("resourceWeights",)  # resource name -> weight: data, not further keys
DATA_KEYS = ("nodeSelector", "managedJobsNamespaceSelector")  # values that are data, not further keys


def leaf_keys(values, prefix=""):
    out = set()
    for key, value in values.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value and not key.endswith(DATA_KEYS):
            out |= leaf_keys(value, f"{path}.")
        else:
            out.add(path)
    return out


@pytest.mark.parametrize("stack", ["prod", "dev"])
def test_every_chart_value_is_a_verified_key(stack):
    spec = spec_of(stack)
    assert leaf_keys(values(spec, "monitoring")) <= set(VERIFIED_KEYS)


def test_every_configuration_key_is_verified(prod):
    assert leaf_keys(o.manager_config()) <= VERIFIED_CONFIG_KEYS


def test_every_configuration_key_with_fair_sharing_is_verified(prod):
    config = o.manager_config(fair_sharing=prod.queueing.fair_sharing, weights=q.usage_weights(prod))
    weights = config["admissionFairSharing"].pop("resourceWeights")
    assert weights and all(isinstance(w, float) and w >= 0 for w in weights.values())  # Kueue refuses negatives
    assert leaf_keys(config) | {f"admissionFairSharing.{k}" for k in CONFIG_DATA_KEYS} <= VERIFIED_CONFIG_KEYS


def test_the_chart_takes_the_configuration_the_manager_reads(prod):
    text = values(prod, None)["managerConfig"]["controllerManagerConfigYaml"]
    assert yaml.safe_load(text) == o.manager_config()
    assert yaml.safe_load(text)["apiVersion"] == catalog.KUEUE_CONFIG_API_VERSION


def test_the_manager_keeps_the_chart_s_listeners(prod):
    """The chart's metrics and webhook Services and its probes target these ports (values.yaml defaults)."""
    config = o.manager_config()
    assert (config["metrics"]["bindAddress"], config["webhook"]["port"], config["health"]["healthProbeBindAddress"]) \
        == (":8443", 9443, ":8081")
    assert config["leaderElection"] == {"leaderElect": True, "resourceName": "c1f6bfd2.kueue.x-k8s.io"}


def test_plain_pods_are_admitted_because_pod_integration_is_on(prod):
    frameworks = o.manager_config()["integrations"]["frameworks"]
    assert {"batch/job", "pod", "deployment", "statefulset"} <= set(frameworks)
    assert o.manager_config()["manageJobsWithoutQueueName"] is False


def test_efa_requests_are_not_counted(prod):
    assert any("vpc.amazonaws.com/efa".startswith(p) for p in o.manager_config()["resources"]["excludeResourcePrefixes"])


def test_prod_runs_two_replicas_behind_a_disruption_budget_and_dev_one(prod, dev):
    assert values(prod, None)["controllerManager"]["replicas"] == 2
    assert values(prod, None)["controllerManager"]["podDisruptionBudget"] == {"enabled": True, "minAvailable": 1}
    assert "podDisruptionBudget" not in values(dev, None)["controllerManager"]
    assert values(dev, None)["controllerManager"]["nodeSelector"] == {names.ROLE_LABEL: names.SYSTEM_ROLE}


def test_metrics_are_scraped_only_with_prometheus(prod):
    assert values(prod, "monitoring")["enablePrometheus"] is True
    assert values(prod, "monitoring")["metrics"] == {"prometheusNamespace": "monitoring"}
    assert values(prod, None)["enablePrometheus"] is False and "metrics" not in values(prod, None)


def test_manifests_are_keyed_stably(prod):
    queues = {t.name: q.team_queue(prod, t) for t in prod.teams}
    m = o.queueing_manifests(prod.teams, queues, q.gpu_flavors(prod))
    assert copy.deepcopy(m) == o.queueing_manifests(prod.teams, queues, q.gpu_flavors(prod))
    assert {k for k in m if k.startswith("queue-")} == {"queue-research", "queue-inference", "queue-batch",
                                                        "queue-research-vision", "queue-research-language"}
    assert {k for k in m if k.startswith("cohort")} == {"cohort", "cohort-research"}
