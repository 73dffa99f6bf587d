"""The team namespace objects and priority tiers, built directly from specs, checked field by field and
against the Kubernetes OpenAPI schema of the cluster's version."""
import kubernetes_validate
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gpu_platform.decisions import capacity
from gpu_platform.facts import names
from gpu_platform.render import team_objects as t
from gpu_platform.render.team_objects import TeamContext
from tests.support.stacks import spec_of, unqueued, without_services

GPU_QUOTA = names.quota_key(names.GPU_RESOURCE)


# The objects as the stack file's context gives them to each team.
def quota_hard(spec, team):
    return t.quota_hard(t.TeamContext.of(spec, team), team)


def limit_range(spec, team):
    return t.limit_range(t.TeamContext.of(spec, team), team)


def network_policy(spec, team):
    return t.network_policy(t.TeamContext.of(spec, team), team)


def namespace(spec, team):
    return t.namespace(t.TeamContext.of(spec, team), team)


def roles(spec):
    return [(team.name, team.access) for team in spec.teams]


def team_of(spec, name):
    return next(team for team in spec.teams if team.name == name)


def validate(manifest, spec):
    kubernetes_validate.validate(manifest, spec.cluster.kubernetes_version, strict=True)


# --- schema ---

@pytest.mark.parametrize("stack", ["dev", "prod"])
def test_every_team_object_matches_the_kubernetes_schema(stack):
    spec = spec_of(stack)
    for team in spec.teams:
        for manifest in t.team_manifests(t.TeamContext.of(spec, team, names.MODEL_CACHE_STORAGE_CLASS), team).values():
            validate(manifest, spec)


@pytest.mark.parametrize("tier", list(t.PRIORITY_TIERS))
def test_priority_class_matches_the_kubernetes_schema(tier, dev):
    validate(t.priority_class(tier), dev)


def test_schema_check_refuses_an_unknown_field(dev):
    manifest = limit_range(dev, dev.teams[0])
    manifest["spec"]["limits"][0]["maximum"] = manifest["spec"]["limits"][0].pop("max")
    with pytest.raises(kubernetes_validate.ValidationError):
        validate(manifest, dev)


# --- namespace ---

def test_namespace_enforces_baseline_and_warns_restricted_at_the_cluster_version(dev):
    labels = namespace(dev, dev.teams[0])["metadata"]["labels"]
    assert labels[names.pod_security_label("enforce")] == "baseline"
    assert labels[names.pod_security_label("warn")] == "restricted"
    assert labels[names.pod_security_label("enforce-version")] == f"v{dev.cluster.kubernetes_version}"


def test_namespace_carries_team_tier_and_manager_labels(dev):
    team = team_of(dev, "applied-ml")
    meta = namespace(dev, team)["metadata"]
    assert meta["name"] == names.team_namespace("applied-ml")
    assert (meta["labels"][names.TEAM_LABEL], meta["labels"][names.PRIORITY_TIER_LABEL],
            meta["labels"][names.MANAGED_BY_LABEL]) == ("applied-ml", "preemptible-batch", names.MANAGED_BY)


def test_namespaced_objects_live_in_the_team_namespace(prod):
    team = team_of(prod, "inference")
    for key, manifest in t.team_manifests(t.TeamContext.of(prod, team, "sc"), team).items():
        if key != "namespace":
            assert manifest["metadata"]["namespace"] == "inference", key
            assert manifest["metadata"]["labels"][names.TEAM_LABEL] == "inference", key


# --- quota ---

def test_quota_counts_gpus_on_requests(dev):
    hard = quota_hard(dev, team_of(dev, "research"))
    assert hard[GPU_QUOTA] == "8"
    assert not any(key.startswith(("nvidia.com/", "limits.")) for key in hard)


def test_quota_always_bounds_whole_gpus_even_at_zero():
    spec = spec_of("dev", lambda p: p["teams"][1]["quota"].update(gpus=0))
    assert quota_hard(spec, team_of(spec, "applied-ml"))[GPU_QUOTA] == "0"


def test_quota_holds_the_teams_mig_slices():
    spec = spec_of("prod", unqueued)
    hard = quota_hard(spec, team_of(spec, "research"))
    assert (hard[names.quota_key(names.mig_resource("1g.10gb"))],
            hard[names.quota_key(names.mig_resource("3g.40gb"))]) == ("16", "2")


def test_quota_bounds_offered_mig_profiles_the_team_has_none_of_at_zero(prod):
    hard = quota_hard(prod, team_of(prod, "inference"))  # no migSlices at all
    for profile in ("1g.10gb", "2g.20gb", "3g.40gb"):
        assert hard[names.quota_key(names.mig_resource(profile))] == "0"


def test_quota_has_no_mig_keys_without_mig_pools(dev):
    assert not [k for k in quota_hard(dev, dev.teams[0]) if names.MIG_RESOURCE_PREFIX in k]


def test_quota_copies_cpu_memory_pods_claims_and_storage():
    spec = spec_of("prod", unqueued)
    hard = quota_hard(spec, team_of(spec, "batch"))
    assert {k: hard[k] for k in ("requests.cpu", "requests.memory", "pods", "persistentvolumeclaims",
                                 "requests.storage")} == {"requests.cpu": "64", "requests.memory": "1Ti",
                                                          "pods": "200", "persistentvolumeclaims": "20",
                                                          "requests.storage": "2Ti"}


@settings(max_examples=40, deadline=None)
@given(gpus=st.integers(0, 6), slices=st.dictionaries(st.sampled_from(["1g.10gb", "2g.20gb", "3g.40gb"]),
                                                      st.integers(0, 4)))
def test_every_gpu_resource_the_pools_offer_is_bounded(gpus, slices):
    def edit(p):
        unqueued(p)
        p["teams"][1]["quota"].update(gpus=gpus, migSlices=slices)
    spec = spec_of("prod", edit)
    from gpu_platform.decisions.capacity import platform_capacity

    hard = quota_hard(spec, team_of(spec, "inference"))
    for resource in platform_capacity(spec).total:
        assert names.quota_key(resource) in hard


def test_queued_quota_is_the_ceiling_nominal_plus_borrowing_limit(prod):
    hard = quota_hard(prod, team_of(prod, "batch"))  # 100% borrowing (the batch tier's default)
    assert {k: hard[k] for k in (GPU_QUOTA, names.quota_key(names.mig_resource("2g.20gb")), "requests.cpu",
                                 "requests.memory")} == {GPU_QUOTA: "8", names.quota_key(names.mig_resource("2g.20gb")): "4",
                                                         "requests.cpu": "224", "requests.memory": "3200Gi"}
    # (64 CPUs + 1Ti stated, and the share of its 4 A100s' p4d nodes: 4 x 12 CPUs, 4 x 144Gi) x 2 with borrowing:
    # a100-train schedules by topology, so its flavor carries CPU and memory with the GPUs (docs/topology.md)
    assert (hard["pods"], hard["persistentvolumeclaims"], hard["requests.storage"]) == ("200", "20", "2Ti")


def test_queued_quota_of_a_team_that_does_not_borrow_is_its_nominal_quota(prod):
    hard = quota_hard(prod, team_of(prod, "inference"))  # critical inference borrows 0% by default
    # 64 CPUs and 256Gi stated, and its 6 L4s' g6.2xlarge share (8 CPUs, 32Gi each) on the whole-GPU flavor
    assert (hard[GPU_QUOTA], hard["requests.cpu"], hard["requests.memory"]) == ("6", "112", "448Gi")


def test_queued_quota_still_bounds_every_offered_mig_profile(prod):
    hard = quota_hard(prod, team_of(prod, "inference"))
    assert [hard[names.quota_key(names.mig_resource(p))] for p in ("1g.10gb", "2g.20gb", "3g.40gb")] == ["0"] * 3


# --- limits ---

def test_limit_range_gives_default_requests_from_the_spec():
    spec = spec_of("dev", lambda p: p["teams"][0].update(containerDefaults={"cpu": "500m", "memory": "1Gi"}))
    container = limit_range(spec, team_of(spec, "research"))["spec"]["limits"][0]
    assert container["type"] == "Container"
    assert (container["defaultRequest"]["cpu"], container["defaultRequest"]["memory"]) == ("500m", "1Gi")


def test_limit_range_sets_no_cpu_or_memory_limits(dev):
    container = limit_range(dev, dev.teams[0])["spec"]["limits"][0]
    assert set(container["default"]) == {names.GPU_RESOURCE}


def test_limit_range_defaults_gpus_to_zero_so_the_maximum_never_refuses_cpu_pods(dev):
    container = limit_range(dev, dev.teams[0])["spec"]["limits"][0]
    assert container["default"][names.GPU_RESOURCE] == container["defaultRequest"][names.GPU_RESOURCE] == "0"


def test_limit_range_caps_gpus_per_container_and_per_pod(prod):
    limits = limit_range(prod, team_of(prod, "research"))["spec"]["limits"]
    assert [(item["type"], item["max"][names.GPU_RESOURCE]) for item in limits] == [("Container", "8"), ("Pod", "8")]


def test_pod_limit_has_no_defaults(prod):
    pod = limit_range(prod, prod.teams[0])["spec"]["limits"][1]
    assert "default" not in pod and "defaultRequest" not in pod


def test_team_max_gpus_per_pod_overrides_the_node_maximum():
    spec = spec_of("prod", lambda p: p["teams"][2].update(maxGpusPerPod=2))
    assert capacity.max_gpus_per_pod(spec, team_of(spec, "batch")) == 2


def test_largest_request_is_the_biggest_gpu_node(prod):
    assert capacity.largest_gpu_request(prod) == 8  # p4d.24xlarge; the H100 pool exposes MIG slices only


def test_time_slicing_refusing_multi_gpu_requests_caps_pods_at_one(dev):
    assert capacity.largest_gpu_request(dev) == 1


def test_time_slicing_accepting_multi_gpu_requests_allows_every_replica():
    spec = spec_of("dev", lambda p: p["nodePools"][0]["sharing"].update(failRequestsGreaterThanOne=False))
    assert capacity.largest_gpu_request(spec) == 4


def test_mig_single_strategy_counts_slices_as_gpus():
    def edit(p):
        single = {"mode": "mig", "strategy": "single", "layout": {"1g.10gb": 7}}
        p["nodePools"] = [p["nodePools"][0] | {"sharing": single}]
        p["teams"] = [p["teams"][0] | {"quota": {"gpus": 8, "cpu": "8", "memory": "8Gi"}, "queue": {}}]
        without_services(p)  # its 3g.40gb service has no slice under this layout
    spec = spec_of("prod", edit)
    assert capacity.largest_gpu_request(spec) == 56  # 8 GPUs x 7 slices


def test_only_mixed_mig_pools_leave_no_whole_gpu_to_ask_for():
    def edit(p):
        p["nodePools"] = [p["nodePools"][0]]
        p["teams"] = [{"name": "research", "quota": {"migSlices": {"1g.10gb": 4}, "cpu": "8", "memory": "8Gi"}}]
    spec = spec_of("prod", edit)
    assert capacity.largest_gpu_request(spec) == 0
    validate(limit_range(spec, spec.teams[0]), spec)


# --- RBAC ---

def verbs_on(rules, group, resource):
    out = set()
    for rule in rules:
        if group in rule["apiGroups"] and (resource in rule["resources"] or "*" in rule["resources"]):
            out |= set(rule["verbs"])
    return out


WRITE_VERBS = {"create", "update", "patch", "delete", "deletecollection", "*"}


def test_developers_run_and_debug_workloads():
    rules = t.developer_rules()
    for group, resource in (("", "pods"), ("apps", "deployments"), ("batch", "jobs"), ("", "persistentvolumeclaims")):
        assert {"create", "delete"} <= verbs_on(rules, group, resource), resource
    assert "create" in verbs_on(rules, "", "pods/exec") and "get" in verbs_on(rules, "", "pods/log")


def test_developers_cannot_touch_secrets_or_rbac():
    rules = t.developer_rules()
    assert verbs_on(rules, "", "secrets") == set()
    assert not any(t.RBAC_API in rule["apiGroups"] for rule in rules)


@pytest.mark.parametrize("rules", [t.developer_rules(), t.admin_rules()], ids=["developers", "admins"])
@pytest.mark.parametrize("resource", ["resourcequotas", "limitranges"])
def test_nobody_in_the_team_edits_quota_or_limits(rules, resource):
    assert verbs_on(rules, "", resource) == {"get", "list", "watch"}


def test_admins_manage_secrets_and_workloads():
    rules = t.admin_rules()
    assert verbs_on(rules, "", "secrets") == {"*"}
    assert verbs_on(rules, "apps", "deployments") == {"*"}


def test_admins_cannot_escalate_through_rbac():
    verbs = verbs_on(t.admin_rules(), t.RBAC_API, "roles") | verbs_on(t.admin_rules(), t.RBAC_API, "rolebindings")
    assert "create" in verbs and not verbs & {"escalate", "bind", "*"}


def test_no_role_uses_a_wildcard_resource_in_the_core_group():
    for rules in (t.developer_rules(), t.admin_rules()):
        assert not [r for r in rules if "" in r["apiGroups"] and "*" in r["resources"]]


@pytest.mark.parametrize("role", names.TEAM_ROLES)
def test_binding_maps_the_team_group_to_its_role(role, dev):
    binding = t.role_binding(dev.teams[0], role)
    assert binding["roleRef"]["name"] == t.role(dev.teams[0], role)["metadata"]["name"] == names.team_role(role)
    assert binding["subjects"] == [{"apiGroup": t.RBAC_API, "kind": "Group", "name": f"research:{role}"}]


# --- network policy ---

def test_ingress_only_from_the_namespace_and_prometheus(dev):
    policy = network_policy(dev, dev.teams[0])["spec"]
    assert policy["podSelector"] == {} and policy["policyTypes"] == ["Ingress"]
    assert policy["ingress"] == [{"from": [
        {"podSelector": {}},
        {"namespaceSelector": {"matchLabels": {names.NAMESPACE_NAME_LABEL: "monitoring"}}}]}]


def test_ingress_follows_the_configured_prometheus_namespace():
    spec = spec_of("dev", lambda p: p["monitoring"]["prometheus"].update(namespace="observability"))
    peers = network_policy(spec, spec.teams[0])["spec"]["ingress"][0]["from"]
    assert peers[1]["namespaceSelector"]["matchLabels"][names.NAMESPACE_NAME_LABEL] == "observability"


def test_ingress_without_monitoring_is_the_namespace_only():
    spec = spec_of("dev", lambda p: without_services(p)["monitoring"].update(enabled=False))
    assert network_policy(spec, spec.teams[0])["spec"]["ingress"] == [{"from": [{"podSelector": {}}]}]


# --- model cache claim ---

def test_cache_claim_is_read_write_many_on_the_cache_class(dev):
    claim = t.model_cache_claim(dev.teams[0], "efs-class", dev.model_cache.pvc_size)
    assert claim["metadata"]["name"] == names.MODEL_CACHE_PVC
    assert claim["spec"] == {"accessModes": ["ReadWriteMany"], "storageClassName": "efs-class",
                             "resources": {"requests": {"storage": dev.model_cache.pvc_size}}}


def test_no_cache_class_means_no_claim(dev):
    assert "model-cache" not in t.team_manifests(t.TeamContext.of(dev, dev.teams[0]), dev.teams[0])


# --- priority tiers ---

def test_tiers_cover_the_spec_and_are_ordered():
    from gpu_platform.spec.models import PRIORITY_TIERS

    assert list(t.PRIORITY_TIERS) == list(PRIORITY_TIERS)
    values = [t.priority_class(tier)["value"] for tier in PRIORITY_TIERS]
    assert values == sorted(values, reverse=True) and values[0] < 1_000_000_000  # below system classes


def test_batch_never_preempts_and_inference_does():
    assert t.priority_class("preemptible-batch")["preemptionPolicy"] == "Never"
    assert t.priority_class("critical-inference")["preemptionPolicy"] == "PreemptLowerPriority"


def test_no_tier_is_the_global_default():
    assert not any(t.priority_class(tier)["globalDefault"] for tier in t.PRIORITY_TIERS)


# --- access entries ---

def test_access_entries_map_each_role_to_its_team_group(prod):
    assert t.access_entries(roles(prod)) == {
        "arn:aws:iam::123456789012:role/inference-oncall": ["inference:developers"],
        "arn:aws:iam::123456789012:role/research-developers": ["research:developers"],
        "arn:aws:iam::123456789012:role/research-leads": ["research:admins"],
    }


def test_a_role_listed_by_two_teams_gets_one_entry_with_both_groups():
    shared = "arn:aws:iam::123456789012:role/ml-oncall"

    def edit(p):
        p["teams"][0]["access"] = {"developerRoleArns": [shared]}
        p["teams"][2]["access"] = {"adminRoleArns": [shared], "developerRoleArns": [shared]}
    spec = spec_of("prod", edit)
    assert t.access_entries(roles(spec))[shared] == ["batch:admins", "batch:developers", "research:developers"]


def test_no_roles_no_entries(dev):
    assert t.access_entries(roles(dev)) == {}


# --- seeing why a job waits, and scraping the team's own pods ---

@pytest.mark.parametrize("rules", [t.developer_rules(), t.admin_rules()], ids=["developers", "admins"])
def test_both_roles_read_their_queue_and_workloads_and_manage_their_monitors(rules):
    for resource in ("workloads", "workloads/status", "localqueues", "localqueues/status"):
        assert verbs_on(rules, t.KUEUE_API, resource) == {"get", "list", "watch"}, resource
    assert verbs_on(rules, f"visibility.{t.KUEUE_API}", "localqueues/pendingworkloads") == {"get", "list", "watch"}
    for resource in ("servicemonitors", "podmonitors"):
        assert {"create", "update", "patch", "delete"} <= verbs_on(rules, t.MONITORING_API, resource)
    # nothing that changes what Kueue admits: no ClusterQueues, flavors, priorities, nor writing a Workload
    assert not [r for r in rules if t.KUEUE_API in r["apiGroups"] and set(r["verbs"]) & WRITE_VERBS]
    assert verbs_on(rules, t.MONITORING_API, "prometheusrules") == set()


def test_the_kueue_resources_the_roles_name_are_the_crds_plurals():
    from gpu_platform.facts import catalog

    folder = catalog.UPSTREAM / "crds" / catalog.KUEUE_RELEASES["0.19.2"].crds
    lq = yaml.safe_load((folder / "kueue.x-k8s.io_localqueues.yaml").read_text())
    assert (lq["spec"]["group"], lq["spec"]["names"]["plural"]) == (t.KUEUE_API, "localqueues")
    assert "status" in lq["spec"]["versions"][0]["subresources"]


def test_team_namespaces_carry_the_label_the_platform_s_prometheus_selects_monitors_by(dev):
    labels = t.namespace(TeamContext.of(dev, dev.teams[0]), dev.teams[0])["metadata"]["labels"]
    assert labels[names.SCRAPE_LABEL] == names.SCRAPE_VALUE


@pytest.mark.parametrize("rules", [t.developer_rules(), t.admin_rules()], ids=["developers", "admins"])
@pytest.mark.parametrize("group, resource", [("resource.k8s.io", "resourceclaims"),
                                             ("resource.k8s.io", "resourceclaimtemplates"),
                                             ("resource.nvidia.com", "computedomains")])
def test_the_team_reads_its_dra_objects_and_writes_none(rules, group, resource):
    assert verbs_on(rules, group, resource) == {"get", "list", "watch"}


@pytest.mark.parametrize("stack", ["dev", "prod", "training-blackwell", "training-ultraserver"])
def test_the_contexts_of_all_teams_are_each_teams_own_context(stack):
    spec = spec_of(stack)
    assert t.TeamContext.of_teams(spec, spec.teams) == [t.TeamContext.of(spec, team) for team in spec.teams]


def test_each_team_reads_only_the_dra_and_ultraserver_pools(monkeypatch):
    """A team's claim and ComputeDomain shapes come from the DRA and UltraServer pools it may use: the pools are
    sorted into those once, so the work grows with teams plus pools, not with their product."""
    from gpu_platform.decisions import dra

    ultraserver = spec_of("training-ultraserver")  # beside prod's pools: few pools of each kind among many
    spec = ultraserver.model_copy(update={"node_pools": [*ultraserver.node_pools, *spec_of("prod").node_pools * 10]})
    special = [p for p in spec.node_pools if dra.is_dra(p) or dra.is_ultraserver(p)]
    assert special and len(special) < len(spec.node_pools)
    read = []
    for name in ("is_dra", "is_ultraserver"):
        real = getattr(dra, name)
        monkeypatch.setattr(dra, name, lambda pool, _f=real: read.append(pool.name) or _f(pool))
    contexts = t.TeamContext.of_teams(spec, list(spec.teams) * 30)
    assert len(contexts) == 30 * len(spec.teams) and any(c.domain_shapes for c in contexts)
    assert len(read) <= 2 * len(spec.node_pools) + 4 * 30 * len(spec.teams) * len(special)  # not x all pools


def test_the_cluster_a_team_sees_is_worked_out_once_for_all_teams(monkeypatch):
    """The platform's capacity and largest GPU request are the same for every team: read once, not per team."""
    spec = spec_of("prod")
    assert len(spec.teams) > 1
    calls = []
    for name in ("platform_capacity", "largest_gpu_request"):
        original = getattr(t, name)
        monkeypatch.setattr(t, name, lambda s, _f=original, _n=name: calls.append(_n) or _f(s))
    t.TeamContext.of_teams(spec, spec.teams)
    assert sorted(calls) == ["largest_gpu_request", "platform_capacity"]
