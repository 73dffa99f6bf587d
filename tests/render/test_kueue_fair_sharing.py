"""Fairness over time with Kueue (render/queueing_objects.py): admission fair sharing in the controller's
Configuration and on each ClusterQueue, a LocalQueue per sub-team and the debug queue, and the admission
policy holding every GPU Job in a team namespace to its runtime ceiling, evaluated with cel-python."""
import copy

import kubernetes_validate
import pytest
import yaml

from gpu_platform.decisions import queueing as q
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render import queueing_objects as o
from gpu_platform.render.team_objects import TeamContext, namespace
from gpu_platform.render.workloads import gpu_job
from tests.support.admission import applies, denials
from tests.support.stacks import stack_platform

IMAGE = "registry.example.com/trainer:2.3"
HOUR = 3600


def manifests(spec):
    queues = {t.name: q.team_queue(spec, t) for t in spec.teams}
    return o.queueing_manifests(spec.teams, queues, q.gpu_flavors(spec), spec.queueing)


def team_of(spec, name):
    return next(t for t in spec.teams if t.name == name)


def ns(spec, team):
    return namespace(TeamContext.of(spec, team_of(spec, team)), team_of(spec, team))


def job(team="research", gpus="1", labels=None):
    container = {"name": "main", "image": IMAGE}
    if gpus is not None:
        container["resources"] = {"limits": {names.GPU_RESOURCE: gpus}}
    meta = {"name": "train", "namespace": team, **({"labels": labels} if labels is not None else {})}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": {"template": {"spec": {"containers": [container], "restartPolicy": "Never"}}}}


def queued(seconds=None, queue=names.TEAM_LOCAL_QUEUE):
    labels = {names.KUEUE_QUEUE_NAME_LABEL: queue}
    if seconds is not None:
        labels[names.KUEUE_MAX_EXEC_TIME_LABEL] = str(seconds)
    return labels


@pytest.fixture(scope="module")
def ceilings(prod):
    m = manifests(prod)
    return m["ceilings-policy"], m["ceilings-policy-binding"]


def refused(policy, spec, obj, team="research"):
    return denials(policy, obj, ns(spec, team))


# --- the runtime ceilings policy ---

def test_prod_sets_ceilings_and_a_debug_queue(prod):
    assert prod.queueing.runtime_ceiling_hours == {"preemptible-batch": 24, "standard": 168}
    assert prod.queueing.debug_queue.runtime_ceiling_minutes == 60
    assert team_of(prod, "research").priority_tier == "standard"


def test_the_policy_binds_to_job_creation_in_team_namespaces(prod, ceilings):
    policy, binding = ceilings
    team = ns(prod, "research")
    assert applies(policy, binding, group="batch", resource="jobs", operation="CREATE", namespace=team)
    assert not applies(policy, binding, group="batch", resource="jobs", operation="CREATE",
                       namespace={"metadata": {"name": "kube-system", "labels": {}}})
    assert not applies(policy, binding, group="", resource="pods", operation="CREATE", namespace=team)
    assert binding["spec"]["validationActions"] == ["Deny"]


def test_a_gpu_job_without_a_ceiling_is_refused(prod, ceilings):
    (message,) = refused(ceilings[0], prod, job(labels=queued()))
    assert names.KUEUE_MAX_EXEC_TIME_LABEL in message and "standard: 168h" in message


@pytest.mark.parametrize("seconds", [168 * HOUR, 1, 3 * HOUR])
def test_a_gpu_job_within_its_tiers_ceiling_is_admitted(prod, ceilings, seconds):
    assert not refused(ceilings[0], prod, job(labels=queued(seconds)))


@pytest.mark.parametrize("value", [str(168 * HOUR + 1), "0", "-5", "1h", ""])
def test_a_gpu_job_above_its_ceiling_or_with_no_number_is_refused(prod, ceilings, value):
    labels = {**queued(), names.KUEUE_MAX_EXEC_TIME_LABEL: value}
    assert refused(ceilings[0], prod, job(labels=labels))


def test_each_tier_has_its_own_ceiling(prod, ceilings):
    # batch is preemptible-batch: 24 hours; inference is critical-inference, which has none
    assert refused(ceilings[0], prod, job("batch", labels=queued(25 * HOUR)), "batch")
    assert not refused(ceilings[0], prod, job("batch", labels=queued(24 * HOUR)), "batch")
    assert not refused(ceilings[0], prod, job("inference", labels=queued()), "inference")


def test_the_debug_queue_holds_jobs_to_its_own_ceiling_in_every_tier(prod, ceilings):
    for team in ("research", "inference", "batch"):
        assert refused(ceilings[0], prod, job(team, labels=queued(None, names.DEBUG_LOCAL_QUEUE)), team)
        assert refused(ceilings[0], prod, job(team, labels=queued(HOUR + 1, names.DEBUG_LOCAL_QUEUE)), team)
        assert not refused(ceilings[0], prod, job(team, labels=queued(HOUR, names.DEBUG_LOCAL_QUEUE)), team)


def test_cpu_jobs_are_not_matched(prod, ceilings):
    assert not refused(ceilings[0], prod, job(gpus=None, labels=queued()))
    assert not refused(ceilings[0], prod, job(gpus="0", labels=queued()))


def test_the_helpers_jobs_pass_in_each_queue(prod, ceilings):
    for team in prod.teams:
        for lq in q.local_queues(prod.queueing, team):
            made = gpu_job(prod, team.name, "train", IMAGE, queue=lq.name)
            assert made["metadata"]["labels"][names.KUEUE_QUEUE_NAME_LABEL] == lq.name
            assert made["spec"]["template"]["metadata"]["labels"][names.KUEUE_QUEUE_NAME_LABEL] == lq.name
            assert not refused(ceilings[0], prod, made, team.name), (team.name, lq.name)
    debug = gpu_job(prod, "research", "try", IMAGE, queue=names.DEBUG_LOCAL_QUEUE)
    assert debug["metadata"]["labels"][names.KUEUE_MAX_EXEC_TIME_LABEL] == str(HOUR)


def test_the_helper_refuses_a_queue_the_team_lacks(prod):
    with pytest.raises(ValueError, match="vision"):
        gpu_job(prod, "batch", "train", IMAGE, queue="vision")


def test_without_ceilings_or_a_debug_queue_there_is_no_policy():
    platform = stack_platform("prod")
    platform["queueing"].pop("runtimeCeilingHours")
    platform["queueing"].pop("debugQueue")
    assert "ceilings-policy" not in manifests(parse_platform(platform))


def test_the_policy_matches_the_kubernetes_schema(prod, ceilings):
    for obj in ceilings:
        kubernetes_validate.validate(obj, prod.cluster.kubernetes_version, strict=True)


# --- admission fair sharing and the LocalQueues ---

def test_every_cluster_queue_admits_by_usage_with_fair_sharing(prod):
    m = manifests(prod)
    for team in prod.teams:
        scope = m[f"queue-{team.name}"]["spec"]["admissionScope"]
        assert scope == {"admissionMode": "UsageBasedAdmissionFairSharing"}


def test_without_fair_sharing_no_queue_has_an_admission_scope():
    platform = stack_platform("prod")
    platform["queueing"].pop("fairSharing")
    for team in platform["teams"]:
        team.get("queue", {}).pop("subTeams", None)
    m = manifests(parse_platform(platform))
    assert not [k for k, v in m.items() if "admissionScope" in v.get("spec", {})]
    assert not [k for k, v in m.items() if v["kind"] == "LocalQueue" and "fairSharing" in v["spec"]]


def test_sub_teams_feed_their_own_cluster_queues_and_the_team_s_queues_the_team_s(prod):
    m = manifests(prod)
    research = {v["metadata"]["name"]: v for v in m.values()
                if v["kind"] == "LocalQueue" and v["metadata"]["namespace"] == "research"}
    assert set(research) == {names.TEAM_LOCAL_QUEUE, names.DEBUG_LOCAL_QUEUE, "vision", "language"}
    feeds = {name: lq["spec"]["clusterQueue"] for name, lq in research.items()}
    assert feeds == {names.TEAM_LOCAL_QUEUE: "team-research", names.DEBUG_LOCAL_QUEUE: "team-research",
                     "vision": "team-research-vision", "language": "team-research-language"}
    # Each LocalQueue is the whole of what it shares with others in its ClusterQueue.
    assert {lq["spec"]["fairSharing"]["weight"] for lq in research.values()} == {100}
    for cq in ("team-research-vision", "team-research-language"):
        queue = next(v for v in m.values() if v["kind"] == "ClusterQueue" and v["metadata"]["name"] == cq)
        assert queue["spec"]["admissionScope"] == {"admissionMode": "UsageBasedAdmissionFairSharing"}


def test_sub_teams_leave_the_nominal_quotas_unchanged(prod):
    platform = stack_platform("prod")
    for team in platform["teams"]:
        team.get("queue", {}).pop("subTeams", None)
    whole = parse_platform(platform)
    for team in prod.teams:
        assert q.team_queue(prod, team).quotas == q.team_queue(whole, team_of(whole, team.name)).quotas


def test_the_configuration_weighs_gpu_time_only(prod):
    config = yaml.safe_load(o.chart_values(True, {}, "monitoring", fair_sharing=prod.queueing.fair_sharing,
                                           weights=q.usage_weights(prod))["managerConfig"]["controllerManagerConfigYaml"])
    fair = config["admissionFairSharing"]
    assert (fair["usageHalfLifeTime"], fair["usageSamplingInterval"]) == ("168h", "5m")
    weights = fair["resourceWeights"]
    assert weights["cpu"] == weights["memory"] == 0 and weights[names.GPU_RESOURCE] == 1
    assert weights[names.mig_resource("3g.40gb")] == pytest.approx(3 / 7, abs=1e-4)
    assert weights[names.mig_resource("1g.10gb")] == pytest.approx(1 / 7, abs=1e-4)


def test_without_fair_sharing_the_configuration_has_none():
    assert "admissionFairSharing" not in o.manager_config()


def test_the_pinned_kueue_enables_admission_fair_sharing_by_default():
    # AdmissionFairSharing is a beta feature gate on by default from Kueue 0.15 (pkg/features/kube_features.go),
    # so the pinned release needs no gate set; a pin below 0.15 would need `featureGates`.
    assert all(tuple(int(x) for x in v.split(".")[:2]) >= (0, 15) for v in catalog.KUEUE_RELEASES)


def test_the_rendered_objects_are_not_changed_by_rendering_twice(prod):
    assert copy.deepcopy(manifests(prod)) == manifests(prod)
