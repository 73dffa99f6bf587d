"""Kueue through the real program (offline plans): the release, its objects exactly as rendered, their
order and parents, and nothing at all when a stack does not queue."""
import pytest

from gpu_platform.decisions import queueing as q
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render.queueing_objects import chart_values, queueing_manifests
from tests.support.stacks import cached_plan, resource, resources, stack_platform, without_services

COMPONENT = "gpu-platform:index:KueueQueueing"
RELEASE = "kubernetes:helm.sh/v3:Release"
KUEUE = "kubernetes:kueue.x-k8s.io/v1beta2:"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"


@pytest.fixture(scope="module")
def prod_plan():
    return cached_plan(stack_platform("prod"), "prod")


def kueue_release(plan):
    return next(r for r in resources(plan, RELEASE) if r["inputs"]["chart"] == catalog.KUEUE_CHART)


def by_urn(plan):
    return {r["urn"]: r for r in plan["resources"]}


def test_the_release_is_the_pinned_official_chart_on_system_nodes(prod_plan):
    release = kueue_release(prod_plan)["inputs"]
    assert (release["chart"], release["version"], release["name"]) == (
        "oci://registry.k8s.io/kueue/charts/kueue", "0.19.2", names.KUEUE_RELEASE)
    assert "repositoryOpts" not in release  # an OCI reference needs no repository
    assert release["namespace"] == "kueue-system" and release["createNamespace"] is False
    spec = parse_platform(stack_platform("prod"))
    assert release["values"] == chart_values(True, {names.ROLE_LABEL: names.SYSTEM_ROLE}, "monitoring",
                                             fair_sharing=spec.queueing.fair_sharing, weights=q.usage_weights(spec))
    assert release["values"]["controllerManager"]["nodeSelector"] == {names.ROLE_LABEL: names.SYSTEM_ROLE}


def test_the_release_waits_for_system_nodes_and_the_prometheus_crds(prod_plan):
    release, urns = kueue_release(prod_plan), by_urn(prod_plan)
    after = [urns[u] for u in release["options"]["dependsOn"]]
    assert any(r["type"] == NODE_GROUP and r["inputs"]["labels"] == {names.ROLE_LABEL: names.SYSTEM_ROLE} for r in after)
    assert any(r["type"] == RELEASE and r["inputs"]["chart"] == "kube-prometheus-stack" for r in after)


def test_every_object_is_registered_as_rendered(prod_plan):
    spec = parse_platform(stack_platform("prod"))
    queues = {t.name: q.team_queue(spec, t) for t in spec.teams}
    rendered = queueing_manifests(spec.teams, queues, q.gpu_flavors(spec), spec.queueing)
    ours = [r["inputs"] for r in prod_plan["resources"]
            if r["type"].startswith(KUEUE) or ("AdmissionPolicy" in r["type"] and ":KueueQueueing::" in r["parent"])]
    registered = {f"{m['kind']}/{m['metadata'].get('namespace', '')}/{m['metadata']['name']}": m for m in ours}
    expected = {f"{m['kind']}/{m['metadata'].get('namespace', '')}/{m['metadata']['name']}": m for m in rendered.values()}
    assert registered == expected


def test_kueue_objects_wait_for_the_release_and_belong_to_the_component(prod_plan):
    release = kueue_release(prod_plan)
    (component,) = resources(prod_plan, COMPONENT)
    objects = [r for r in prod_plan["resources"] if r["type"].startswith(KUEUE)]
    # flavors, topology, the platform's cohort and research's, priorities, cluster queues (each team's and
    # research's two sub-teams'), and local queues: each team's own and debug queue, and research's two sub-teams
    assert len(objects) == 6 + 1 + 2 + 3 + 3 + 2 + 3 * 2 + 2
    for r in objects:
        assert release["urn"] in r["options"]["dependsOn"], r["name"]
        assert r["parent"] == component["urn"] and r["provider"] and "kubernetes" in r["provider"]


def test_queues_wait_for_their_flavors_and_local_queues_for_their_namespace(prod_plan):
    urns = by_urn(prod_plan)
    queue = resource(prod_plan, KUEUE + "ClusterQueue", "kueue-queue-research")
    kinds = {urns[u]["type"].rsplit(":", 1)[-1] for u in queue["options"]["dependsOn"]}
    assert {"ResourceFlavor", "Cohort", "WorkloadPriorityClass"} <= kinds
    local = resource(prod_plan, KUEUE + "LocalQueue", "kueue-local-queue-research")
    after = [urns[u] for u in local["options"]["dependsOn"]]
    assert any(r["type"] == "kubernetes:core/v1:Namespace" and r["inputs"]["metadata"]["name"] == "research" for r in after)
    assert queue["urn"] in local["options"]["dependsOn"]


def test_the_admission_policy_comes_after_kueue_and_its_binding_after_it(prod_plan):
    release = kueue_release(prod_plan)
    policy = resource(prod_plan, "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy", "kueue-policy")
    binding = resource(prod_plan, "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding",
                       "kueue-policy")
    assert release["urn"] in policy["options"]["dependsOn"]
    assert policy["urn"] in binding["options"]["dependsOn"]


def test_outputs_name_the_queues(prod_plan):
    assert prod_plan["outputs"]["queueing"] == {
        "namespace": "kueue-system", "chartVersion": "0.19.2", "cohort": names.KUEUE_COHORT,
        "clusterQueues": {"research": "team-research", "inference": "team-inference", "batch": "team-batch"},
        "localQueue": names.TEAM_LOCAL_QUEUE}


def test_the_kueue_namespace_is_not_a_team_namespace(prod_plan):
    (ns,) = [r for r in resources(prod_plan, "kubernetes:core/v1:Namespace")
             if r["inputs"]["metadata"]["name"] == "kueue-system"]
    assert names.TEAM_LABEL not in ns["inputs"]["metadata"]["labels"]


def test_a_stack_that_does_not_queue_has_no_kueue():
    plan = cached_plan(stack_platform("dev"), "dev")
    assert not resources(plan, COMPONENT) and "queueing" not in plan["outputs"]
    assert not [r for r in plan["resources"] if r["type"].startswith(KUEUE)]


def test_without_prometheus_the_release_neither_scrapes_nor_waits_for_crds():
    platform = stack_platform("prod")
    platform["monitoring"]["prometheus"] = {"mode": "none"}
    platform["monitoring"].pop("usageReport", None)  # the report queries Prometheus
    without_services(platform)  # services scale on Prometheus
    release = kueue_release(cached_plan(platform, "prod"))
    assert release["inputs"]["values"]["enablePrometheus"] is False


def test_a_team_cohort_comes_before_its_queues_and_sub_team_queues_before_their_local_queues(prod_plan):
    urns = by_urn(prod_plan)
    cohort = resource(prod_plan, KUEUE + "Cohort", "kueue-cohort-research")
    assert resource(prod_plan, KUEUE + "Cohort", "kueue-cohort")["urn"] in cohort["options"]["dependsOn"]
    for name in ("kueue-queue-research", "kueue-queue-research-vision", "kueue-queue-research-language"):
        assert cohort["urn"] in resource(prod_plan, KUEUE + "ClusterQueue", name)["options"]["dependsOn"]
    vision = resource(prod_plan, KUEUE + "LocalQueue", "kueue-local-queue-research-vision")
    after = {urns[u]["name"] for u in vision["options"]["dependsOn"]}
    assert "kueue-queue-research-vision" in after and "kueue-queue-research" not in after
