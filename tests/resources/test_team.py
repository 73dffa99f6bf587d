"""Tenancy through offline plans: a complete unit per team, priority tiers, and access entries."""
import json

import pytest

from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import names
from gpu_platform.render import team_objects as objects
from tests.support.stacks import AS_OF, resources, stack_platform, write_stack

TEAM = "gpu-platform:index:TeamNamespace"
UNIT = {("Namespace", None), ("ResourceQuota", names.TEAM_QUOTA), ("LimitRange", names.TEAM_LIMITS),
        ("NetworkPolicy", names.TEAM_INGRESS_POLICY), ("Role", names.team_role("developers")),
        ("Role", names.team_role("admins")), ("RoleBinding", names.team_role("developers")),
        ("RoleBinding", names.team_role("admins")), ("PersistentVolumeClaim", names.MODEL_CACHE_PVC)}
SHARED = "arn:aws:iam::123456789012:role/ml-oncall"


def plan(platform: dict, tmp, stack: str) -> dict:
    from gpu_platform.planner.cli import main

    folder = tmp.mktemp(stack)
    out = folder / "plan.json"
    code = main(["plan", "--config", str(write_stack(folder / f"Pulumi.{stack}.yaml", platform)), "--json", str(out),
                 "--as-of", AS_OF])
    assert code == 0, f"plan of {stack} exited {code}"
    return json.loads(out.read_text())


def shared_role() -> dict:
    platform = stack_platform("prod")
    platform["teams"][1]["access"]["adminRoleArns"] = [SHARED]
    platform["teams"][2]["access"] = {"developerRoleArns": [SHARED]}
    return platform


@pytest.fixture(scope="module")
def plans(tmp_path_factory):
    return {"dev": plan(stack_platform("dev"), tmp_path_factory, "dev"),
            "prod": plan(stack_platform("prod"), tmp_path_factory, "prod"),
            "shared": plan(shared_role(), tmp_path_factory, "shared")}


def unit(plan_: dict, team: str) -> tuple[dict, list[dict]]:
    (component,) = [r for r in resources(plan_, TEAM) if r["name"] == f"team-{team}"]
    return component, [r for r in plan_["resources"] if r["parent"] == component["urn"]]


def kind_name(r: dict) -> tuple[str, str]:
    """(kind, name) of a registered resource or of a plain manifest."""
    obj = r.get("inputs", r)
    return obj["kind"], obj["metadata"]["name"]


# --- one complete unit per team ---

@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_team_has_a_complete_unit(stack, plans):
    spec = parse_platform(stack_platform(stack))
    for team in spec.teams:
        _, children = unit(plans[stack], team.name)
        found = {(k, None if k == "Namespace" else n) for k, n in map(kind_name, children)}
        assert found == UNIT, team.name


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_registered_objects_are_the_builders_manifests(stack, plans):
    spec = parse_platform(stack_platform(stack))
    for team in spec.teams:
        context = objects.TeamContext.of(spec, team, names.MODEL_CACHE_STORAGE_CLASS)
        built = {kind_name(m): m for m in objects.team_manifests(context, team).values()}
        _, children = unit(plans[stack], team.name)
        assert {kind_name(c): c["inputs"] for c in children} == built, team.name


def test_every_team_object_uses_the_clusters_kubernetes_provider(plans):
    (provider,) = resources(plans["prod"], "pulumi:providers:kubernetes")
    for team in ("research", "inference", "batch"):
        _, children = unit(plans["prod"], team)
        assert {c["provider"].rsplit("::", 1)[0] for c in children} == {provider["urn"]}


def test_objects_in_the_namespace_wait_for_it(plans):
    _, children = unit(plans["dev"], "research")
    (namespace,) = [c for c in children if c["inputs"]["kind"] == "Namespace"]
    for child in children:
        if child is not namespace:
            assert namespace["urn"] in child["options"]["dependsOn"], kind_name(child)


def test_bindings_wait_for_their_roles(plans):
    _, children = unit(plans["dev"], "research")
    roles = {c["inputs"]["metadata"]["name"]: c["urn"] for c in children if c["inputs"]["kind"] == "Role"}
    for binding in (c for c in children if c["inputs"]["kind"] == "RoleBinding"):
        assert roles[binding["inputs"]["roleRef"]["name"]] in binding["options"]["dependsOn"]


def test_cache_claim_waits_for_the_quota_and_the_cache(plans):
    _, children = unit(plans["dev"], "research")
    (claim,) = [c for c in children if c["inputs"]["kind"] == "PersistentVolumeClaim"]
    (quota,) = [c for c in children if c["inputs"]["kind"] == "ResourceQuota"]
    (addon,) = [a for a in resources(plans["dev"], "aws:eks/addon:Addon") if a["name"] == "model-cache-csi"]
    (storage_class,) = [c for c in resources(plans["dev"], "kubernetes:storage.k8s.io/v1:StorageClass")
                        if c["inputs"]["provisioner"] == "efs.csi.aws.com"]  # the model cache's, not the metrics
    mounts = [m["urn"] for m in resources(plans["dev"], "aws:efs/mountTarget:MountTarget")]
    assert {quota["urn"], addon["urn"], storage_class["urn"], *mounts} <= set(claim["options"]["dependsOn"])


def test_team_with_mig_quota_bounds_every_offered_profile(plans):
    _, children = unit(plans["prod"], "research")
    (quota,) = [c for c in children if c["inputs"]["kind"] == "ResourceQuota"]
    hard = quota["inputs"]["spec"]["hard"]
    # prod queues: each bound is the ceiling, the nominal quota (16 and 2) plus research's 100% borrowing limit
    assert {k: v for k, v in hard.items() if k.startswith(names.quota_key(names.MIG_RESOURCE_PREFIX))} == {
        "requests.nvidia.com/mig-1g.10gb": "32", "requests.nvidia.com/mig-2g.20gb": "0",
        "requests.nvidia.com/mig-3g.40gb": "4"}


@pytest.mark.parametrize("stack, expected", [("dev", ["research", "applied-ml"]),
                                             ("prod", ["research", "inference", "batch"])])
def test_team_namespaces_are_exported(stack, expected, plans):
    assert plans[stack]["outputs"]["teamNamespaces"] == expected


# --- priority tiers ---

def test_one_priority_class_per_tier(plans):
    classes = resources(plans["dev"], "kubernetes:scheduling.k8s.io/v1:PriorityClass")
    assert sorted(c["inputs"]["metadata"]["name"] for c in classes) == sorted(
        names.priority_class(t) for t in objects.PRIORITY_TIERS)
    assert all(c["inputs"] == objects.priority_class(c["inputs"]["metadata"]["labels"][names.PRIORITY_TIER_LABEL])
               for c in classes)


def test_team_tier_is_labelled_on_its_namespace(plans):
    _, children = unit(plans["prod"], "inference")
    (namespace,) = [c for c in children if c["inputs"]["kind"] == "Namespace"]
    assert namespace["inputs"]["metadata"]["labels"][names.PRIORITY_TIER_LABEL] == "critical-inference"


# --- access entries ---

def entries(plan_: dict) -> dict[str, dict]:
    (access,) = resources(plan_, "gpu-platform:index:TeamAccess")
    found = [r for r in resources(plan_, "aws:eks/accessEntry:AccessEntry") if r["parent"] == access["urn"]]
    return {r["inputs"]["principalArn"]: r for r in found}


def test_each_team_role_gets_a_standard_entry_mapping_it_to_its_group(plans):
    found = entries(plans["prod"])
    assert {arn: e["inputs"]["kubernetesGroups"] for arn, e in found.items()} == objects.access_entries(
        (t.name, t.access) for t in parse_platform(stack_platform("prod")).teams)
    assert {(e["inputs"]["type"], e["inputs"]["clusterName"]) for e in found.values()} == {("STANDARD", "gpu-prod")}


def test_team_roles_get_no_cluster_wide_access_policy(plans):
    team_arns = set(entries(plans["prod"]))
    associations = resources(plans["prod"], "aws:eks/accessPolicyAssociation:AccessPolicyAssociation")
    assert team_arns and not [a for a in associations if a["inputs"]["principalArn"] in team_arns]


def test_a_role_shared_by_two_teams_gets_one_entry_with_both_groups(plans):
    found = entries(plans["shared"])
    assert found[SHARED]["inputs"]["kubernetesGroups"] == ["batch:developers", "inference:admins"]
    assert len([r for r in resources(plans["shared"], "aws:eks/accessEntry:AccessEntry")
                if r["inputs"]["principalArn"] == SHARED]) == 1


def test_entry_names_are_stable_and_distinct(plans):
    found = entries(plans["shared"])
    assert {e["name"] for e in found.values()} == {names.access_entry_resource(arn) for arn in found}


def test_no_roles_no_entries(plans):
    assert entries(plans["dev"]) == {}


# --- the admission policies every team namespace is held to ---

ADMISSION = "gpu-platform:index:TeamAdmission"
POLICY, BINDING = ("kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy",
                   "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicyBinding")


@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_stack_registers_the_team_admission_policies_as_rendered(stack, plans):
    from gpu_platform.render.admission import admission_manifests

    (component,) = resources(plans[stack], ADMISSION)
    children = [r for r in plans[stack]["resources"] if r["parent"] == component["urn"]]
    expected = {(o["kind"], o["metadata"]["name"]): o for o in admission_manifests().values()}
    assert {kind_name(r) for r in children} == set(expected)
    for r in children:
        assert {k: r["inputs"][k] for k in ("metadata", "spec")} == {k: expected[kind_name(r)][k] for k in ("metadata", "spec")}
    policies = {r["inputs"]["metadata"]["name"]: r["urn"] for r in children if r["type"] == POLICY}
    for r in children:
        if r["type"] == BINDING:
            assert policies[r["inputs"]["spec"]["policyName"]] in r["options"]["dependsOn"]
