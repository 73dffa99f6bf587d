"""Kueue keeps the higher tiers off spot and puts preemptible batch there first, on the prod stack with a spot
pool added (prod itself runs on-demand only): the ClusterQueues' flavor order, checked against the pinned CRDs."""
import re

import pytest

from gpu_platform.decisions.queueing import gpu_flavors, team_queue
from gpu_platform.facts import catalog, names
from gpu_platform.planner.queueing_section import from_spec
from gpu_platform.render.queueing_objects import queueing_manifests
from gpu_platform.spec.errors import SpecError
from tests.support.crd_schemas import schema_problems
from tests.support.kueue_crds import cel_problems
from tests.support.stacks import spec_of

SPOT_POOL = {"name": "l4-spot", "instanceTypes": ["g6.2xlarge", "g6.4xlarge"], "capacityType": "spot",
             "minSize": 0, "maxSize": 4, "ami": {"type": "UBUNTU_24_04", "imageId": "ami-0e2f8c4d7a1b3f596"}}


def with_spot(p):
    p["nodePools"].append(dict(SPOT_POOL))
    batch = next(t for t in p["teams"] if t["name"] == "batch")
    batch["queue"]["pools"].append("l4-spot")  # listed last: batch's tier still puts it first


@pytest.fixture(scope="module")
def prod_spot():
    return spec_of("prod", with_spot)


@pytest.fixture(scope="module")
def objects(prod_spot):
    queues = {t.name: team_queue(prod_spot, t) for t in prod_spot.teams}
    return queueing_manifests(prod_spot.teams, queues, gpu_flavors(prod_spot))


def spot_flavors(objects) -> set[str]:
    return {o["metadata"]["name"] for o in objects.values() if o["kind"] == "ResourceFlavor"
            and o["metadata"].get("labels", {}).get(names.CAPACITY_TYPE_LABEL) == "spot"}


def queue_flavors(objects, team: str) -> dict[str, list[str]]:
    spec = objects[f"queue-{team}"]["spec"]
    return {r: [f["name"] for f in g["flavors"] if f["name"] != names.KUEUE_CPU_MEMORY_FLAVOR]
            for g in spec["resourceGroups"] for r in g["coveredResources"] if r not in ("cpu", "memory")}


def test_higher_tiers_have_no_spot_flavor_in_prod(objects):
    spot = spot_flavors(objects)
    assert spot == {"l4-spot"}
    for team in ("research", "inference"):  # standard, critical-inference
        used = {f for flavors in queue_flavors(objects, team).values() for f in flavors}
        assert not used & spot, team


def test_batch_tries_spot_first_and_holds_its_quota_there(objects, prod_spot):
    assert queue_flavors(objects, "batch")[names.GPU_RESOURCE] == ["l4-spot", "a100-train", "l4-inference"]
    batch = next(t for t in prod_spot.teams if t.name == "batch")
    quota = team_queue(prod_spot, batch).quotas[("l4-spot", names.GPU_RESOURCE)]
    assert quota.nominal == 4  # its 4 GPUs fill the spot pool (4 nodes x 1 L4) before the on-demand A100s


def test_the_objects_keep_the_pinned_crds(objects, prod_spot):
    crds = catalog.KUEUE_RELEASES[prod_spot.queueing.chart_version].crds
    kueue = [o for o in objects.values() if o["apiVersion"].startswith("kueue.x-k8s.io/")]
    failures = [p for o in kueue for p in [*schema_problems(crds, o), *cel_problems(crds, o)]]
    assert not failures


def test_the_plan_says_which_flavors_each_tier_may_use(prod_spot):
    teams = {t["name"]: t for t in from_spec(prod_spot)["teams"]}
    assert (teams["research"]["spot"], teams["inference"]["spot"], teams["batch"]["spot"]) == ("never", "never", "first")
    gpu = [g["flavors"] for g in teams["batch"]["flavorOrder"] if g["resource"] == names.GPU_RESOURCE]
    assert gpu == [["l4-spot", "a100-train", "l4-inference"]]
    assert all("l4-spot" not in g["flavors"] for t in ("research", "inference") for g in teams[t]["flavorOrder"])


def test_a_standard_quota_only_spot_offers_is_refused_naming_the_way_out():
    def spot_only(p):
        p["queueing"] = {"mode": "kueue", "chartVersion": "0.19.2"}
    with pytest.raises(SpecError, match=re.escape(
            "teams[0].quota: a standard team never runs on spot, and only spot pools offer nvidia.com/gpu (a10g-spot)")):
        spec_of("dev", spot_only)


def test_a_resource_only_spot_offers_is_covered_at_zero_and_shown_as_none():
    def spot_mig(p):
        with_spot(p)
        p["nodePools"].append({**SPOT_POOL, "name": "h100-spot", "instanceTypes": ["p5.48xlarge"], "maxSize": 1,
                               "sharing": {"mode": "mig", "strategy": "mixed", "layout": {"7g.80gb": 1}}})
    spec = spec_of("prod", spot_mig)
    research = next(t for t in spec.teams if t.name == "research")
    queue = team_queue(spec, research)
    mig = names.mig_resource("7g.80gb")
    assert [f for (covered, flavors) in queue.groups if covered == (mig,) for f in flavors] == ["h100-spot-7g.80gb"]
    zero = queue.quotas[("h100-spot-7g.80gb", mig)]
    assert (zero.nominal, zero.borrowing_limit) == (0, 0)  # covered, never admitted
    order = next(t for t in from_spec(spec)["teams"] if t["name"] == "research")["flavorOrder"]
    assert {"resource": mig, "flavors": []} in order
