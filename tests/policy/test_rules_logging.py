"""log-pipeline-required: prod clusters ship their logs to encrypted log groups with a retention."""
from __future__ import annotations

from tests.policy.harness import gpu_node_group, run_stack, stack_resource, with_provider

GROUP = "aws:cloudwatch/logGroup:LogGroup"
RELEASE = "kubernetes:helm.sh/v3:Release"


def _stack(env: str, *extra) -> list:
    return with_provider([stack_resource("aws:eks/cluster:Cluster", {"name": "gpu-prod"}, "cluster"),
                          stack_resource("aws:eks/nodeGroup:NodeGroup", gpu_node_group(), "gpu"), *extra],
                         environment=env)


def _fluent_bit(chart: str = "fluent-bit"):
    return stack_resource(RELEASE, {"chart": chart, "version": "0.58.1"}, "logs")


def _group(**props):
    return stack_resource(GROUP, {"name": "/gpu-platform/c/research", **props}, "research")


def test_prod_without_a_log_pipeline_is_refused():
    [(message, _)] = run_stack("log-pipeline-required", _stack("prod"))
    assert "No log pipeline in prod" in message and "logging.enabled" in message


def test_prod_with_fluent_bit_or_the_cloudwatch_add_on_passes():
    assert run_stack("log-pipeline-required", _stack("prod", _fluent_bit())) == []
    assert run_stack("log-pipeline-required", _stack("prod", _fluent_bit("oci://example/aws-for-fluent-bit"))) == []
    addon = stack_resource("aws:eks/addon:Addon", {"addonName": "amazon-cloudwatch-observability"}, "cw")
    assert run_stack("log-pipeline-required", _stack("prod", addon)) == []


def test_dev_may_run_without_logs_unless_configured():
    assert run_stack("log-pipeline-required", _stack("dev")) == []
    assert run_stack("log-pipeline-required", _stack("dev"), {"environments": ["dev", "prod"]}) != []


def test_a_log_group_without_retention_or_key_is_refused_in_prod():
    found = run_stack("log-pipeline-required", _stack("prod", _fluent_bit(), _group()))
    assert [m for m, _ in found] == [
        "Log group 'research' in prod has no retentionInDays and no kmsKeyId: set a retention and a KMS key "
        "(stack file: logging.retentionDays, logging.kmsKeyArn)."]
    ok = _group(retentionInDays=365, kmsKeyId="arn:aws:kms:us-east-1:123456789012:key/k")
    assert run_stack("log-pipeline-required", _stack("prod", _fluent_bit(), ok)) == []


def test_a_program_adding_pools_to_a_cluster_made_elsewhere_is_left_alone():
    pools_only = with_provider([stack_resource("aws:eks/nodeGroup:NodeGroup", gpu_node_group(), "gpu")],
                               environment="prod")
    assert run_stack("log-pipeline-required", pools_only) == []
