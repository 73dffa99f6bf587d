"""The log pipeline: stack-file `logging`, Fluent Bit's values and config, log groups, IAM and the prod rule."""
from __future__ import annotations

import json
import re

import pytest
import yaml

from gpu_platform.facts import catalog, names
from gpu_platform.facts.catalog import UPSTREAM
from gpu_platform.render import logging as logs
from tests.support.aws_api import api_problems, service_model
from tests.support.stacks import STACKS, only_spec_problem, resources, spec_of, stack_platform
from tests.support.plans import stack_plan
from tests.support.chart_values import key_paths

GROUP = "aws:cloudwatch/logGroup:LogGroup"
ROLE_POLICY = "aws:iam/rolePolicy:RolePolicy"
RELEASE = "kubernetes:helm.sh/v3:Release"
EXAMPLES = sorted(p.name.split(".")[1] for p in STACKS.glob("Pulumi.*.yaml"))


def test_the_retention_values_are_those_put_retention_policy_documents():
    doc = service_model("logs").operation_model("PutRetentionPolicy").input_shape.members["retentionInDays"]
    listed = re.search(r"Possible values are: ([\d, and]+)\.", doc.documentation).group(1)
    assert tuple(int(v) for v in re.findall(r"\d+", listed)) == catalog.LOG_RETENTION_DAYS


def test_a_retention_cloudwatch_refuses_is_refused_naming_the_field():
    platform = stack_platform("dev")
    platform["logging"] = {"retentionDays": 31}
    problem = only_spec_problem(platform, "logging.retentionDays")
    assert "30, 60" in problem


def test_retention_defaults_per_environment():
    spec = spec_of("dev", lambda p: p.pop("logging", None))
    assert logs.retention_days(spec) == catalog.DEFAULT_LOG_RETENTION_DAYS["dev"]
    assert logs.retention_days(spec_of("prod")) == 365


def _release(stack: str) -> dict:
    return next(r for r in resources(stack_plan(stack), RELEASE) if r["name"] == "logging-fluent-bit")["inputs"]


def test_the_release_is_the_pinned_chart_with_only_keys_of_its_values_yaml():
    release = _release("dev")
    repo, chart = catalog.FLUENT_BIT_CHART
    assert (release["chart"], release["version"], release["repositoryOpts"]) == (chart, "0.58.1", {"repo": repo})
    chart_values = yaml.safe_load((UPSTREAM / catalog.FLUENT_BIT_VALUES[release["version"]]).read_text())
    assert key_paths(release["values"]) - key_paths(chart_values) == set()
    assert set(release["values"]["config"]) <= set(chart_values["config"])


def _tolerated(tolerations: list[dict], key: str, value: str, effect: str) -> bool:
    """Kubernetes' toleration matching (core/v1 Toleration), written for this test alone."""
    for t in tolerations:
        if t.get("effect") not in (None, "", effect):
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t["key"] == key):
            return True
        if t.get("key") == key and t.get("value", "") == value:
            return True
    return False


KUBE_EFFECT = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}


@pytest.mark.parametrize("stack", EXAMPLES)
def test_fluent_bit_tolerates_every_pool_taint_of_every_example(stack: str):
    spec = spec_of(stack)
    tolerations = [dict(t) for t in logs.TOLERATE_ALL]
    # every GPU node's GPU taint, then each pool's own taints
    taints = [(names.GPU_TAINT_KEY, names.GPU_TAINT_VALUE, "NoSchedule") for _ in spec.node_pools]
    taints += [(t.key, t.value or "", KUBE_EFFECT.get(t.effect, t.effect)) for p in spec.node_pools for t in p.taints]
    assert taints
    for taint in taints:
        assert _tolerated(tolerations, *taint), (stack, taint)
    assert not _tolerated([{"key": "other", "operator": "Exists"}], "nvidia.com/gpu", "true", "NoSchedule")


def test_each_team_namespace_has_its_own_group_and_the_platform_the_rest():
    spec = spec_of("prod")
    out = logs.outputs(spec, "us-east-1")
    for team in spec.teams:
        group = f"/gpu-platform/{spec.cluster.name}/{team.name}"
        assert f"Match team.{team.name}.*\n    region us-east-1\n    log_group_name {group}\n" in out
        assert f"Path /var/log/containers/*_{team.name}_*.log" in logs.inputs(spec)
    platform_input = logs.inputs(spec).split("[INPUT]")[-2]
    assert "Tag platform.*" in platform_input
    assert all(f"*_{t.name}_*.log" in platform_input for t in spec.teams)  # excluded from the platform's group
    assert "auto_create_group Off" in out and "auto_create_group On" not in out


def test_log_groups_keep_the_retention_and_the_kms_key():
    plan = stack_plan("prod")
    groups = {g["inputs"]["name"]: g["inputs"] for g in resources(plan, GROUP)}
    assert set(groups) == {f"/gpu-platform/gpu-prod/{n}" for n in ("platform", "research", "inference", "batch")}
    logs_api = service_model("logs")
    for g in groups.values():
        assert g["retentionInDays"] == 365 and g["kmsKeyId"].startswith("arn:aws:kms:")
        params = {"logGroupName": g["name"], "kmsKeyId": g["kmsKeyId"]}
        assert api_problems(params, logs_api.operation_model("CreateLogGroup").input_shape) == []
        assert api_problems({"logGroupName": g["name"], "retentionInDays": g["retentionInDays"]},
                            logs_api.operation_model("PutRetentionPolicy").input_shape) == []


def test_team_read_roles_reach_only_their_own_group_and_pass_botocore():
    plan = stack_plan("prod")
    arns = {r["name"].removeprefix("logging-"): r for r in resources(plan, GROUP)}
    iam = service_model("iam").operation_model("PutRolePolicy").input_shape
    reads = {r["name"]: json.loads(r["inputs"]["policy"]) for r in resources(plan, ROLE_POLICY)
             if r["name"].endswith("-read")}
    assert set(reads) == {f"logging-{t}-read" for t in ("research", "inference", "batch")}
    for name, doc in reads.items():
        team = name.removeprefix("logging-").removesuffix("-read")
        [statement] = doc["Statement"]
        own = [r for r in statement["Resource"]]
        assert all(r.split(":*")[0].split(":")[-1].startswith(f"logging-{team}/") for r in own), own
        assert not any(f"logging-{other}/" in r for other in arns if other != team for r in own)
        params = {"RoleName": "r", "PolicyName": "p", "PolicyDocument": json.dumps(doc)}
        assert api_problems(params, iam) == []


def test_fluent_bit_writes_through_pod_identity():
    plan = stack_plan("dev")
    [assoc] = [r["inputs"] for r in resources(plan, "aws:eks/podIdentityAssociation:PodIdentityAssociation")
               if r["name"] == "logging-fluent-bit"]
    assert (assoc["namespace"], assoc["serviceAccount"]) == ("logging", "fluent-bit")
    role = next(r["inputs"] for r in resources(plan, "aws:iam/role:Role") if r["name"] == "logging-fluent-bit")
    trust = json.loads(role["assumeRolePolicy"])["Statement"][0]
    assert trust["Principal"] == {"Service": "pods.eks.amazonaws.com"} and "sts:TagSession" in trust["Action"]


def test_a_stack_can_turn_logging_off():
    platform = stack_platform("dev")
    platform["logging"] = {"enabled": False}
    from tests.support.plans import plan

    assert resources(plan(platform), GROUP) == []


# --- the plan's logging section ---

def test_the_plan_has_a_logging_row_per_namespace_priced_from_the_catalog():
    from gpu_platform.planner.logging_section import from_spec

    section = from_spec(spec_of("prod"))
    rows = {r["namespace"]: r for r in section["destinations"]}
    assert set(rows) == {"platform", "research", "inference", "batch"}
    research = rows["research"]
    assert (research["logGroup"], research["retentionDays"], research["ingestGbPerDay"]) == (
        "/gpu-platform/gpu-prod/research", 365, 20)
    ingest = 20 * catalog.HOURS_PER_MONTH / 24 * catalog.CLOUDWATCH_LOGS_INGEST_USD_PER_GB
    storage = 20 * 365 * catalog.CLOUDWATCH_LOGS_STORAGE_USD_PER_GB_MONTH
    assert research["monthlyUsd"] == round(ingest + storage, 2) == 523.17
    assert section["monthlyUsd"] == round(sum(r["monthlyUsd"] for r in rows.values()), 2)


def test_a_namespace_without_stated_ingestion_is_priced_at_the_stated_default():
    from gpu_platform.planner.logging_section import from_spec

    spec = spec_of("dev", lambda p: p["logging"].pop("ingestGbPerDay"))
    assert {r["ingestGbPerDay"] for r in from_spec(spec)["destinations"]} == {catalog.DEFAULT_LOG_INGEST_GB_PER_DAY}


def test_ingestion_stated_for_no_destination_is_named_in_the_plan():
    from gpu_platform.planner.logging_section import from_spec, text

    spec = spec_of("dev", lambda p: p["logging"]["ingestGbPerDay"].update({"reserch": 3}))
    section = from_spec(spec)
    assert section["unmatched"] == ["reserch"] and "reserch" in text(section)
    assert from_spec(spec_of("dev"))["unmatched"] == []


def test_the_plan_json_carries_the_section_and_the_text_its_rows():
    plan = stack_plan("dev")
    assert [r["namespace"] for r in plan["logging"]["destinations"]] == ["research", "applied-ml", "platform"]
