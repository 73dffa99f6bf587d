"""Every Kubernetes object the planner writes with `--out`, for every stack, against the Kubernetes
OpenAPI schema of the stack's cluster version (kubernetes-validate, strict: unknown fields fail).

kubernetes-validate ships one schema per Kubernetes minor; a stack whose minor it does not ship is
checked against the newest older one it has, and a failure message says which. Custom resources have
no schema in Kubernetes' OpenAPI document: only the API groups listed below are let through, each with
the check that covers it instead; any other kind without a schema fails.
"""

import kubernetes_validate
import pytest
import yaml
from kubernetes_validate.utils import all_versions, major_minor
from packaging.version import Version

from gpu_platform.decisions.validation import parse_platform
from tests.support.plans import STACK_NAMES, written_manifests
from tests.support.stacks import stack_platform

CUSTOM_RESOURCE_GROUPS = {
    "monitoring.coreos.com": "Prometheus Operator CRDs; the alert rules inside are checked with promtool",
    "karpenter.sh": "Karpenter's CRDs at the pinned release: test_karpenter_objects_match_their_crds below",
    "karpenter.k8s.aws": "Karpenter's CRDs at the pinned release: test_karpenter_objects_match_their_crds below",
}
KARPENTER_CRDS = "karpenter-v1.14.1"  # facts/catalog.KARPENTER_RELEASES["1.14.1"].crds
CUSTOM_RESOURCE_GROUPS["kueue.x-k8s.io"] = "Kueue's CRDs at the pinned release: tests/render/test_kueue_manifests.py"
CUSTOM_RESOURCE_GROUPS["keda.sh"] = "KEDA's ScaledObject CRD at the pinned chart: tests/render/test_serving_scaling.py"
CUSTOM_RESOURCE_GROUPS["resource.nvidia.com"] = "the ComputeDomain CRDs: test_compute_domains_match_their_crd"
CUSTOM_RESOURCE_GROUPS["readiness.node.x-k8s.io"] = ("the node readiness controller's CRD at the pinned release: "
                                                     "test_readiness_rules_match_their_crd")
# The ComputeDomain CRD a cluster serves is the GPU Operator chart's (catalog.COMPUTE_DOMAIN_CRDS_OWNER); a
# cluster whose DRA driver release came first serves the driver chart's copy: objects must fit both.
DRA_CRDS = ("gpu-operator-v26.7.0",  # facts/catalog.GPU_OPERATOR_CHARTS["v26.7.0"].compute_domain_crds
            "dra-driver-nvidia-gpu-v0.4.1")  # facts/catalog.DRA_DRIVER_RELEASES["0.4.1"].crds


def schema_version(kubernetes: str) -> str:
    """The schema kubernetes-validate uses for a cluster minor: that minor, else the newest older one."""
    shipped = sorted({major_minor(v) for v in all_versions()}, key=Version)
    older = [v for v in shipped if Version(v) <= Version(kubernetes)]
    if not older:
        raise AssertionError(f"kubernetes-validate has no schema for Kubernetes {kubernetes} or older")
    return older[-1]


@pytest.fixture(scope="module", params=STACK_NAMES)
def stack_manifests(request, tmp_path_factory):
    stack = request.param
    version = parse_platform(stack_platform(stack)).cluster.kubernetes_version
    files = written_manifests(stack, tmp_path_factory.mktemp(stack) / "out")
    return stack, version, files


def test_schema_version_is_the_clusters_minor_when_shipped():
    assert schema_version("1.33") == "1.33"


def test_schema_version_falls_back_to_the_newest_older_minor():
    newest = sorted({major_minor(v) for v in all_versions()}, key=Version)[-1]
    major, minor = newest.split(".")
    assert schema_version(f"{major}.{int(minor) + 1}") == newest


def test_planner_writes_manifests(stack_manifests):
    stack, _, files = stack_manifests
    kinds = {yaml.safe_load(f.read_text())["kind"] for f in files}
    assert {"Namespace", "ResourceQuota", "LimitRange", "NetworkPolicy", "Role", "RoleBinding",
            "PriorityClass"} <= kinds, stack


def schema_problem(obj: dict, schema: str) -> str | None:
    """Why `obj` does not match the schema, or None."""
    try:
        kubernetes_validate.validate(obj, schema, strict=True)
    except kubernetes_validate.ValidationError as err:
        return f"{'.'.join(map(str, err.path))}: {err.message}"
    except kubernetes_validate.SchemaNotFoundError as err:
        if obj["apiVersion"].split("/")[0] not in CUSTOM_RESOURCE_GROUPS:
            return err.message
    return None


def test_every_written_object_matches_the_kubernetes_schema(stack_manifests):
    stack, version, files = stack_manifests
    schema = schema_version(version)
    failures = []
    for path in files:
        problem = schema_problem(yaml.safe_load(path.read_text()), schema)
        if problem:
            failures.append(f"{path.parent.name}/{path.name}: {problem}")
    assert not failures, f"{stack} (Kubernetes {version}, schema {schema}):\n" + "\n".join(failures)


def test_strict_validation_refuses_an_unknown_field(stack_manifests):
    _, version, files = stack_manifests
    objects = (yaml.safe_load(f.read_text()) for f in files)
    obj = next(o for o in objects if o["apiVersion"].split("/")[0] not in CUSTOM_RESOURCE_GROUPS)
    obj["metadata"]["unexpected"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(obj, schema_version(version), strict=True)


def test_a_kind_without_a_schema_outside_the_listed_groups_fails():
    widget = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}
    assert "Couldn't find schema for kind Widget" in schema_problem(widget, "1.33")


def test_a_listed_custom_resource_is_let_through():
    rule = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PrometheusRule", "metadata": {"name": "r"}}
    assert schema_problem(rule, "1.33") is None


def test_karpenter_objects_match_their_crds(stack_manifests):
    """Every NodePool and EC2NodeClass a stack writes, against the CRD's schema (strict) and CEL rules."""
    from gpu_platform.decisions.karpenter import karpenter_pools
    from tests.support.crd_schemas import cel_problems, schema_problems

    stack, _, files = stack_manifests
    failures, kinds = [], []
    for path in files:
        obj = yaml.safe_load(path.read_text())
        if obj["apiVersion"].split("/")[0] in ("karpenter.sh", "karpenter.k8s.aws"):
            kinds.append(obj["kind"])
            failures += [f"{path.name}: {p}" for p in schema_problems(KARPENTER_CRDS, obj) + cel_problems(obj)]
    assert not failures, f"{stack}:\n" + "\n".join(failures)
    pools = len(karpenter_pools(parse_platform(stack_platform(stack))))
    assert sorted(kinds) == ["EC2NodeClass"] * pools + ["NodePool"] * pools


def test_the_karpenter_crds_are_the_pinned_chart_s():
    from gpu_platform.facts import catalog

    assert catalog.KARPENTER_RELEASES["1.14.1"].crds == KARPENTER_CRDS


def test_the_compute_domain_crds_are_the_pinned_charts_():
    from gpu_platform.facts import catalog

    operator = catalog.GPU_OPERATOR_CHARTS["v26.7.0"].compute_domain_crds
    assert (operator, catalog.DRA_DRIVER_RELEASES["0.4.1"].crds) == DRA_CRDS


def test_the_datasets_volumes_and_claims_are_among_the_validated_objects(stack_manifests):
    """Each team's datasets claim and the volume bound to it are written, and are core kinds the schema
    check above validates (none is let through as a custom resource)."""
    from gpu_platform.decisions.datasets import claim_teams
    from gpu_platform.facts import names

    stack, version, files = stack_manifests
    teams = [names.team_namespace(t.name) for t in claim_teams(parse_platform(stack_platform(stack)))]
    assert stack != "prod" or len(teams) == 3
    objects = [yaml.safe_load(f.read_text()) for f in files]
    claims = [o for o in objects if o["kind"] == "PersistentVolumeClaim" and o["metadata"]["name"] == names.DATASETS_PVC]
    volumes = [o for o in objects if o["kind"] == "PersistentVolume" and o["spec"]["claimRef"]["name"] == names.DATASETS_PVC]
    assert sorted(c["metadata"]["namespace"] for c in claims) == sorted(teams) and len(volumes) == len(teams)
    for obj in claims + volumes:
        kubernetes_validate.validate(obj, schema_version(version), strict=True)  # a missing schema would raise


def test_compute_domains_match_their_crd(stack_manifests):
    """Every ComputeDomain a stack writes, against both charts' CRDs (strict), one per team job shape."""
    from gpu_platform.decisions.dra import team_domain_shapes
    from tests.support.crd_schemas import schema_problems

    stack, _, files = stack_manifests
    failures, count = [], 0
    for path in files:
        obj = yaml.safe_load(path.read_text())
        if obj["apiVersion"].split("/")[0] == "resource.nvidia.com":
            count += 1
            failures += [f"{path.name} ({crds}): {p}" for crds in DRA_CRDS for p in schema_problems(crds, obj)]
    assert not failures, f"{stack}:\n" + "\n".join(failures)
    spec = parse_platform(stack_platform(stack))
    assert count == sum(len(team_domain_shapes(spec.node_pools, t)) for t in spec.teams)


def test_readiness_rules_match_their_crd(stack_manifests):
    """Every NodeReadinessRule a stack writes, against the pinned controller's CRD (strict) and its CEL rules, one
    per gated pool."""
    from gpu_platform.decisions.acceptance import accepted_pools
    from gpu_platform.facts.acceptance import NODE_READINESS_CRDS
    from tests.support.crd_schemas import schema_problems
    from tests.support.kueue_crds import cel_problems

    stack, _, files = stack_manifests
    rules = [obj for obj in (yaml.safe_load(p.read_text()) for p in files) if obj["kind"] == "NodeReadinessRule"]
    for obj in rules:
        assert schema_problems(NODE_READINESS_CRDS, obj) == [] and cel_problems(NODE_READINESS_CRDS, obj) == []
    assert len(rules) == len(accepted_pools(parse_platform(stack_platform(stack))))
