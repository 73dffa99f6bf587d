"""The log pipeline: CloudWatch log groups per team namespace (retention, KMS), Fluent Bit on every node
with EKS Pod Identity, and a read role per team scoped to its own log group.

What goes in is rendered in render/logging.py; this component only registers it (docs/logging.md).
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Optional

import pulumi

from gpu_platform.facts import catalog, component_types, names
from gpu_platform.render.alerts import gpu_nodes
from gpu_platform.render.log_alerts import log_rule_group
from gpu_platform.render.logging import LoggingSettings, key_policy, team_read_policy, team_read_trust, writer_policy
from gpu_platform.render.monitoring import PROMETHEUS_RULE_API

if TYPE_CHECKING:
    from pulumi_aws import iam
    from pulumi_kubernetes.apiextensions import CustomResource
    from pulumi_kubernetes.helm.v3 import Release

# Fluent Bit reads the node's /var/log through hostPath volumes.
POD_SECURITY_LEVEL = "privileged"


class LogPipeline(pulumi.ComponentResource):
    """Log groups, Fluent Bit's role, Pod Identity association and release, and the teams' read roles."""

    def __init__(self, name: str, settings: LoggingSettings, region: str, cluster_name: pulumi.Input[str],
                 k8s_provider: pulumi.ProviderResource, service_monitor: bool,
                 depends_on: Sequence[pulumi.Resource] = (),
                 opts: Optional[pulumi.ResourceOptions] = None):
        """`settings`: what the stack file decides (render/logging.py); `service_monitor`: a Prometheus scrapes
        Fluent Bit's counters, so the log-derived alerts go beside the GPU alerts."""
        super().__init__(component_types.INTERNAL["LogPipeline"], name, None, opts)
        from pulumi_aws import cloudwatch, eks, iam

        import pulumi_aws as aws

        child = pulumi.ResourceOptions(parent=self)
        self._root = aws.get_caller_identity_output(opts=pulumi.InvokeOutputOptions(parent=self)).account_id.apply(
            lambda a: f"arn:aws:iam::{a}:root")
        key_arn = self._key(name, settings, region, child)
        days = settings.retention_days
        self.log_groups = {key: cloudwatch.LogGroup(f"{name}-{key}", name=dest.group, retention_in_days=days,
                                                    kms_key_id=key_arn, opts=child)
                           for key, dest in settings.destinations.items()}
        arns = [g.arn for g in self.log_groups.values()]
        self.role = iam.Role(f"{name}-fluent-bit", name=names.role_name(settings.cluster, "fluent-bit"),
                             assume_role_policy=_pod_identity_trust(),
                             description="Fluent Bit: write pod and node logs to the platform's log groups",
                             opts=child)
        policy = iam.RolePolicy(f"{name}-fluent-bit", role=self.role.name,
                                policy=pulumi.Output.all(*arns).apply(lambda a: json.dumps(writer_policy(list(a)))),
                                opts=child)
        self.association = eks.PodIdentityAssociation(
            f"{name}-fluent-bit", cluster_name=cluster_name, namespace=settings.namespace,
            service_account=names.FLUENT_BIT_SERVICE_ACCOUNT, role_arn=self.role.arn,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy, *depends_on]))
        self.read_roles = self._read_roles(name, settings, child)
        self.release = self._release(name, settings, k8s_provider, depends_on)
        self.rules = self._rules(name, settings, k8s_provider, depends_on) if service_monitor else None
        self.register_outputs({"logGroups": {k: g.name for k, g in self.log_groups.items()},
                               "retentionDays": days})

    def _key(self, name: str, settings: LoggingSettings, region: str,
             child: pulumi.ResourceOptions) -> pulumi.Input[str]:
        if settings.kms_key_arn:
            return settings.kms_key_arn
        from pulumi_aws import kms

        key = kms.Key(f"{name}-logs", description=f"{settings.cluster}: CloudWatch log groups",
                      enable_key_rotation=True,
                      policy=self._root.apply(lambda r: json.dumps(key_policy(r, region))), opts=child)
        return key.arn

    def _read_roles(self, name: str, settings: LoggingSettings,
                    child: pulumi.ResourceOptions) -> dict[str, "iam.Role"]:
        from pulumi_aws import iam

        roles: dict[str, iam.Role] = {}
        for team, given in settings.team_readers.items():
            # The team's own roles may take it; without any, the account decides who may (its IAM policies).
            principals = pulumi.Output.from_input(list(given)) if given else self._root.apply(lambda r: [r])
            role = iam.Role(f"{name}-{team}-read", name=names.role_name(settings.cluster, f"{team}-logs"),
                            assume_role_policy=principals.apply(lambda p: json.dumps(team_read_trust(list(p)))),
                            description=f"Read the {team} team's logs", opts=child)
            iam.RolePolicy(f"{name}-{team}-read", role=role.name, opts=child,
                           policy=self.log_groups[team].arn.apply(lambda a: json.dumps(team_read_policy(a))))
            roles[team] = role
        return roles

    def _release(self, name: str, settings: LoggingSettings, k8s_provider: pulumi.ProviderResource,
                 depends_on: Sequence[pulumi.Resource]) -> "Release":
        from pulumi_kubernetes.core.v1 import Namespace
        from pulumi_kubernetes.helm.v3 import Release, RepositoryOptsArgs

        k8s = pulumi.ResourceOptions(parent=self, provider=k8s_provider)
        namespace = Namespace(f"{name}-namespace", metadata={
            "name": settings.namespace, "labels": names.platform_namespace_labels(POD_SECURITY_LEVEL)}, opts=k8s)
        repo, chart = catalog.FLUENT_BIT_CHART
        # Credentials are injected at pod creation: the association exists before the first pod.
        return Release(f"{name}-fluent-bit", name=names.FLUENT_BIT_RELEASE, chart=chart,
                       version=settings.chart_version, repository_opts=RepositoryOptsArgs(repo=repo),
                       namespace=namespace.metadata.name, create_namespace=False,
                       values=dict(settings.chart_values),
                       opts=pulumi.ResourceOptions.merge(k8s, pulumi.ResourceOptions(
                           depends_on=[namespace, self.association, *self.log_groups.values(), *depends_on])))


    def _rules(self, name: str, settings: LoggingSettings, k8s_provider: pulumi.ProviderResource,
               depends_on: Sequence[pulumi.Resource]) -> "CustomResource":
        """The log-derived alerts, beside the GPU alerts in Prometheus' namespace (its CRDs are in `depends_on`)."""
        from pulumi_kubernetes.apiextensions import CustomResource

        api_version, kind = PROMETHEUS_RULE_API
        return CustomResource(
            f"{name}-rules", api_version=api_version, kind=kind,
            metadata={"name": names.LOG_RULES_NAME, "namespace": settings.rule_namespace,
                      "labels": dict(settings.rule_labels)},
            spec={"groups": [log_rule_group(gpu_nodes())]},
            opts=pulumi.ResourceOptions(parent=self, provider=k8s_provider, depends_on=list(depends_on)))


def _pod_identity_trust() -> str:
    from gpu_platform.render.iam import pod_identity_trust_policy

    return pod_identity_trust_policy()

