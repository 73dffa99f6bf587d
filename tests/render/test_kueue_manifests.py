"""Every Kueue object `gpu-platform plan --out` writes, for every stack that queues, against the CRDs of the
pinned Kueue release: the openAPIV3Schema (strict: unknown fields fail) and the CEL rules on create."""
import copy

import pytest
import yaml

from gpu_platform.decisions.queueing import local_queues
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog
from tests.support.crd_schemas import schema_problems
from tests.support.kueue_crds import cel_problems, rule_count
from tests.support.plans import STACK_NAMES, written_manifests
from tests.support.stacks import STACKS, stack_platform

QUEUED = [s for s in STACK_NAMES if parse_platform(stack_platform(s)).queueing.enabled]


def crds_of(stack: str) -> str:
    return catalog.KUEUE_RELEASES[parse_platform(stack_platform(stack)).queueing.chart_version].crds


@pytest.fixture(scope="module", params=QUEUED)
def kueue_objects(request, tmp_path_factory):
    stack = request.param
    files = written_manifests(stack, tmp_path_factory.mktemp(stack) / "out")
    objects = [yaml.safe_load(f.read_text()) for f in files]
    return stack, [o for o in objects if o["apiVersion"].startswith("kueue.x-k8s.io/")]


def test_a_stack_queues():
    assert "prod" in QUEUED and "dev" not in QUEUED and (STACKS / "Pulumi.prod.yaml").exists()


def test_every_kueue_object_matches_its_crd_schema(kueue_objects):
    stack, objects = kueue_objects
    failures = [f"{o['kind']}/{o['metadata']['name']}: {p}" for o in objects for p in schema_problems(crds_of(stack), o)]
    assert not failures, "\n".join(failures)


def test_every_kueue_object_keeps_its_crd_s_cel_rules(kueue_objects):
    stack, objects = kueue_objects
    failures = [f"{o['kind']}/{o['metadata']['name']}: {p}" for o in objects for p in cel_problems(crds_of(stack), o)]
    assert not failures, "\n".join(failures)
    assert sum(rule_count(crds_of(stack), o) for o in objects) > 20  # the rules were reached, not skipped


def test_the_stack_writes_every_kind(kueue_objects):
    stack, objects = kueue_objects
    spec = parse_platform(stack_platform(stack))
    kinds = sorted(o["kind"] for o in objects)
    split = [t for t in spec.teams if t.queue.sub_teams]
    assert kinds.count("ClusterQueue") == len(spec.teams) + sum(len(t.queue.sub_teams) for t in split)
    assert kinds.count("LocalQueue") == sum(len(local_queues(spec.queueing, t)) for t in spec.teams)
    assert kinds.count("WorkloadPriorityClass") == 3 and kinds.count("Cohort") == 1 + len(split)


def test_a_team_cohort_nests_under_the_platform_s_and_holds_its_sub_teams(kueue_objects):
    stack, objects = kueue_objects
    cohorts = {o["metadata"]["name"]: o for o in objects if o["kind"] == "Cohort"}
    nested = [c for c in cohorts.values() if "parentName" in c["spec"]]
    assert nested or stack != "prod"  # prod splits research into sub-teams
    for c in nested:
        assert c["spec"]["parentName"] in cohorts and "parentName" not in cohorts[c["spec"]["parentName"]]["spec"]
        queues = [o for o in objects if o["kind"] == "ClusterQueue" and o["spec"]["cohortName"] == c["metadata"]["name"]]
        assert len(queues) >= 3  # the team's own queue and one per sub-team
        # Borrowing and lending limits on a Cohort are valid only under a parent (Kueue's webhook refuses them on a root).
        assert all("borrowingLimit" in r for g in c["spec"]["resourceGroups"] for f in g["flavors"] for r in f["resources"])


def test_cel_rules_refuse_a_team_cohort_flavor_missing_a_covered_resource(kueue_objects):
    stack, objects = kueue_objects
    nested = [o for o in objects if o["kind"] == "Cohort" and "parentName" in o["spec"]]
    if not nested:
        pytest.skip(f"{stack} has no nested cohort")
    broken = copy.deepcopy(nested[0])
    broken["spec"]["resourceGroups"][0]["flavors"][0]["resources"].pop()
    assert cel_problems(crds_of(stack), broken) == [
        "spec.resourceGroups[0]: flavors must have the same number of resources as the coveredResources"]


def test_strict_schema_refuses_a_misspelt_field(kueue_objects):
    stack, objects = kueue_objects
    queue = copy.deepcopy(next(o for o in objects if o["kind"] == "ClusterQueue"))
    queue["spec"]["cohort"] = queue["spec"].pop("cohortName")  # the v1beta1 spelling
    assert any("cohort" in p for p in schema_problems(crds_of(stack), queue))


def test_cel_rules_refuse_a_flavor_missing_a_covered_resource(kueue_objects):
    stack, objects = kueue_objects
    queue = copy.deepcopy(next(o for o in objects if o["kind"] == "ClusterQueue"))
    queue["spec"]["resourceGroups"][0]["flavors"][0]["resources"].pop()
    assert cel_problems(crds_of(stack), queue) == [
        "spec.resourceGroups[0]: flavors must have the same number of resources as the coveredResources"]


def test_cel_rules_refuse_borrowing_without_a_cohort(kueue_objects):
    stack, objects = kueue_objects
    queue = copy.deepcopy(next(o for o in objects if o["kind"] == "ClusterQueue"))
    del queue["spec"]["cohortName"]
    assert cel_problems(crds_of(stack), queue) == ["spec: borrowingLimit must be nil when cohort is empty"]


def test_cel_rules_see_schema_defaults(kueue_objects):
    """reclaimWithinCohort defaults to Never: with a borrowWithinCohort policy that is refused."""
    stack, objects = kueue_objects
    queue = copy.deepcopy(next(o for o in objects if o["kind"] == "ClusterQueue"))
    queue["spec"]["preemption"] = {"borrowWithinCohort": {"policy": "LowerPriority"}}
    assert cel_problems(crds_of(stack), queue) == ["spec.preemption: reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never"]


def test_cel_rules_refuse_a_toleration_value_with_exists(kueue_objects):
    stack, objects = kueue_objects
    flavor = copy.deepcopy(next(o for o in objects if o["kind"] == "ResourceFlavor" and o["spec"].get("tolerations")))
    flavor["spec"]["tolerations"][0]["operator"] = "Exists"
    assert cel_problems(crds_of(stack), flavor) == ["spec.tolerations: a value must be empty when 'operator' is 'Exists'"]
