"""Karpenter's controller: its chart on the system nodes, its AWS identity and its interruption queue.

Built only when a pool uses `provisioner: karpenter`:
- the node role Karpenter's nodes run as (worker, CNI and ECR pull policies, as every node) with its
  own EKS access entry (EC2_LINUX), so nodes join without a managed node group vouching for the role;
- the controller role, assumed through EKS Pod Identity by the chart's service account, with the
  policies of render/karpenter_iam.py (this cluster's nodes, instance profiles, queue only);
- the SQS interruption queue and one EventBridge rule per interruption event (`settings.interruptionQueue`);
- the `karpenter.sh/discovery: <cluster>` tag on the cluster (node) security group, on extra node
  security groups and on subnets this stack does not create (the VPC's own subnets carry it already);
- the chart `oci://public.ecr.aws/karpenter/karpenter`, pinned (it installs the CRDs NodePools need).
"""
from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

import pulumi

from gpu_platform.decisions.karpenter import node_role_name
from gpu_platform.facts import catalog, component_types, names
from gpu_platform.render.iam import pod_identity_trust_policy
from gpu_platform.render.karpenter_iam import controller_policies, interruption_rules, queue_policy

if TYPE_CHECKING:
    from pulumi_kubernetes.helm.v3 import Release

    from gpu_platform.resources.cluster_base import ClusterBase as Cluster

RELEASE_TIMEOUT_SECONDS = 600
QUEUE_TARGET_ID = "karpenter-interruption-queue"


@dataclass(frozen=True)
class ControllerSettings:
    """What Karpenter's controller is built from: the cluster's name and region, the chart and its rendered
    values (render/karpenter.py), and the subnets this stack does not create (they need the discovery tag)."""

    cluster: str
    region: str
    namespace: str
    chart_version: str
    values: dict[str, Any]
    untagged_subnets: tuple[str, ...] = ()


class KarpenterController(pulumi.ComponentResource):
    """Attributes: node_role, access_entry, queue, role, release, and `ready` (what NodePools wait for)."""

    def __init__(self, name: str, settings: ControllerSettings, cluster: "Cluster",
                 depends_on: Sequence[pulumi.Resource], opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(component_types.INTERNAL["KarpenterController"], name, None, opts)
        from pulumi_aws import eks

        from gpu_platform.resources.node_iam import service_role

        child = pulumi.ResourceOptions(parent=self)
        cluster_name = settings.cluster
        self.node_role, attachments = service_role(f"{name}-nodes", node_role_name(cluster_name), "ec2.amazonaws.com",
                                                   catalog.NODE_MANAGED_POLICIES, child)
        self.access_entry = eks.AccessEntry(f"{name}-nodes", cluster_name=cluster.cluster_name,
                                            principal_arn=self.node_role.arn, type="EC2_LINUX",
                                            opts=pulumi.ResourceOptions(parent=self, depends_on=attachments))
        interruptions = self._interruption_queue(name, cluster_name)
        controller = self._controller_identity(name, settings, cluster)
        tags = self._discovery_tags(name, settings, cluster)
        self.release = self._release(name, settings, cluster, [*depends_on, *interruptions, *controller])
        self.ready: list[pulumi.Resource] = [self.release, self.access_entry, *attachments, *tags]
        self.register_outputs({"release": self.release.name, "roleArn": self.role.arn,
                               "nodeRoleName": self.node_role.name, "interruptionQueue": self.queue.name})

    def _interruption_queue(self, name: str, cluster_name: str) -> list[pulumi.Resource]:
        from pulumi_aws import cloudwatch, sqs

        child = pulumi.ResourceOptions(parent=self)
        self.queue = sqs.Queue(f"{name}-interruptions", name=names.karpenter_queue_name(cluster_name),
                               message_retention_seconds=catalog.KARPENTER_QUEUE_RETENTION_SECONDS,
                               sqs_managed_sse_enabled=True, opts=child)
        made: list[pulumi.Resource] = [sqs.QueuePolicy(
            f"{name}-interruptions", queue_url=self.queue.url,
            policy=self.queue.arn.apply(lambda arn: json.dumps(queue_policy(arn))), opts=child)]
        for suffix, pattern in interruption_rules():
            rule = cloudwatch.EventRule(f"{name}-{suffix}", name=names.karpenter_rule_name(cluster_name, suffix),
                                        description=f"Karpenter interruption handling for {cluster_name}: {suffix}",
                                        event_pattern=json.dumps(pattern), opts=child)
            made.append(cloudwatch.EventTarget(f"{name}-{suffix}", rule=rule.name, arn=self.queue.arn,
                                               target_id=QUEUE_TARGET_ID, opts=child))
        return made

    def _controller_identity(self, name: str, settings: ControllerSettings, cluster: "Cluster") -> list[pulumi.Resource]:
        from pulumi_aws import eks, iam

        child = pulumi.ResourceOptions(parent=self)
        self.role = iam.Role(f"{name}-controller", name=names.role_name(settings.cluster, names.KARPENTER_RELEASE),
                             assume_role_policy=pod_identity_trust_policy(),
                             opts=child)
        documents = pulumi.Output.all(self.node_role.arn, self.queue.arn).apply(
            lambda a: controller_policies(a[0], a[1], settings.region, settings.cluster))
        policies: list[pulumi.Resource] = [
            iam.RolePolicy(f"{name}-{key}", name=f"karpenter-{key}", role=self.role.name,
                           policy=documents.apply(_document(key)),
                           opts=child)
            for key in ("node-lifecycle", "iam-integration", "cluster-integration", "discovery")]
        association = eks.PodIdentityAssociation(
            f"{name}-identity", cluster_name=cluster.cluster_name, namespace=settings.namespace,
            service_account=names.KARPENTER_RELEASE, role_arn=self.role.arn, opts=child)
        return [*policies, association]

    def _discovery_tags(self, name: str, settings: ControllerSettings, cluster: "Cluster") -> list[pulumi.Resource]:
        from pulumi_aws import ec2

        child = pulumi.ResourceOptions(parent=self)
        key, value = names.KARPENTER_DISCOVERY_TAG, settings.cluster
        targets: list[tuple[str, pulumi.Input[str]]] = [("cluster-security-group", cluster.node_security_group_id)]
        targets += [(f"security-group-{i}", sg) for i, sg in enumerate(cluster.extra_node_security_group_ids)]
        targets += [(f"subnet-{i}", subnet) for i, subnet in enumerate(settings.untagged_subnets)]
        return [ec2.Tag(f"{name}-discovery-{what}", resource_id=resource, key=key, value=value, opts=child)
                for what, resource in targets]

    def _release(self, name: str, settings: ControllerSettings, cluster: "Cluster",
                 depends_on: list[pulumi.Resource]) -> "Release":
        from pulumi_kubernetes.helm.v3 import Release

        return Release(
            name,
            name=names.KARPENTER_RELEASE,
            chart=catalog.KARPENTER_CHART,
            version=settings.chart_version,
            namespace=settings.namespace,
            create_namespace=False,
            values=settings.values,
            skip_await=False,
            timeout=RELEASE_TIMEOUT_SECONDS,
            opts=pulumi.ResourceOptions(parent=self, provider=cluster.k8s_provider, depends_on=depends_on),
        )


def _document(key: str) -> Callable[[Mapping[str, Any]], str]:
    """The policy document named `key`, as compact JSON, once the documents resolve."""
    return lambda documents: json.dumps(documents[key], separators=(",", ":"))
