"""Logs outlive nodes: in the configured environments (default prod) a GPU cluster ships its logs.

- `log-pipeline-required` (mandatory): a stack that creates an EKS cluster registers a log pipeline
  (a Helm release of a Fluent Bit chart, or the Amazon CloudWatch Observability add-on), and every CloudWatch
  log group it registers has a retention and a KMS key. Reads the registered resources only. A program that
  only adds node pools to a cluster made elsewhere is left alone: the pipeline belongs with the cluster.
"""
from __future__ import annotations

from typing import Any, Optional
from collections.abc import Iterator, Mapping

from pulumi_policy import PolicyConfigSchema, Severity, StackValidationArgs

from gpu_platform.policy.common import (
    ADDON, CLUSTER, HELM_RELEASE, applies_in, environment_phrase, environment_properties, get, of_type,
    stack_environment, stack_policy,
)

LOG_GROUP = "aws:cloudwatch/logGroup:LogGroup"
# Charts and add-ons that ship node and pod logs (fluent/helm-charts fluent-bit, aws/eks-charts
# aws-for-fluent-bit, the EKS add-on amazon-cloudwatch-observability).
PIPELINE_CHARTS = ("fluent-bit", "aws-for-fluent-bit")
PIPELINE_ADDONS = ("amazon-cloudwatch-observability",)


def _chart_name(chart: Any) -> str:
    return str(chart or "").rstrip("/").rsplit("/", 1)[-1]


def has_pipeline(args: StackValidationArgs) -> bool:
    releases = (_chart_name(get(r.props, "chart")) for r in of_type(args, HELM_RELEASE))
    addons = (get(r.props, "addonName") for r in of_type(args, ADDON))
    return any(c in PIPELINE_CHARTS for c in releases) or any(a in PIPELINE_ADDONS for a in addons)


def log_pipeline_required(args: StackValidationArgs, config: Mapping[str, Any]) -> Iterator[tuple[str, Optional[str]]]:
    env = stack_environment(args, config)
    if not applies_in(env, config.get("environments", ["prod"])):
        return
    if not of_type(args, CLUSTER):
        return  # pools added to a cluster made elsewhere: its pipeline is that program's
    if not has_pipeline(args):
        yield (f"No log pipeline {environment_phrase(env)}: pod logs live on the node and are lost when it is "
               "repaired or reclaimed. Install Fluent Bit (stack file: logging.enabled: true) or the Amazon "
               "CloudWatch Observability add-on.", None)
    for group in of_type(args, LOG_GROUP):
        missing = [k for k in ("retentionInDays", "kmsKeyId") if not get(group.props, k)]
        if missing:
            yield (f"Log group {group.name!r} {environment_phrase(env)} has no {' and no '.join(missing)}: set a "
                   "retention and a KMS key (stack file: logging.retentionDays, logging.kmsKeyArn).", group.urn)


LOGGING_SCHEMA = PolicyConfigSchema({**environment_properties("Environments whose clusters must ship their logs.")})

POLICIES = [
    stack_policy("log-pipeline-required",
                 "A GPU cluster ships its logs to encrypted log groups with a retention (mandatory in the configured "
                 "environments).", log_pipeline_required, severity=Severity.HIGH, schema=LOGGING_SCHEMA,
                 remediation="Set logging.enabled: true in the stack file, or install a log pipeline."),
]
