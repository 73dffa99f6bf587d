"""AWS access for SNS receivers: Alertmanager publishes to the stack's SNS topics through EKS Pod Identity.

One role, trusted by the Pod Identity agent, allowed `sns:Publish` on exactly the receivers' topics and
associated with the service account the platform names for the chart's Alertmanager. The association
must exist before the Alertmanager pod starts (credentials are injected at pod creation), so the
Prometheus stack's release waits for it. Topics encrypted with a customer-managed KMS key also need
`kms:GenerateDataKey`/`kms:Decrypt` for this role in the key's policy (docs/monitoring.md).
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Optional

import pulumi

from gpu_platform.facts import component_types, names


def publish_policy(topics: Sequence[str]) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Action": "sns:Publish", "Resource": sorted(topics)}]})


class AlertPublishing(pulumi.ComponentResource):
    """IAM role and Pod Identity association letting Alertmanager publish to the SNS receivers' topics."""

    def __init__(self, name: str, topics: Sequence[str], cluster: str, namespace: str, cluster_name: pulumi.Input[str],
                 depends_on: Sequence[pulumi.Resource] = (), opts: Optional[pulumi.ResourceOptions] = None):
        """`topics`: the SNS receivers' topic ARNs; `cluster`: the cluster's name (the role's); `namespace`: the
        Alertmanager's (Prometheus's)."""
        super().__init__(component_types.INTERNAL["AlertPublishing"], name, None, opts)
        from pulumi_aws import eks, iam

        from gpu_platform.render.iam import pod_identity_trust_policy

        child = pulumi.ResourceOptions(parent=self)
        topics = list(topics)
        self.role = iam.Role(name, name=names.role_name(cluster, "alertmanager-sns"),
                             assume_role_policy=pod_identity_trust_policy(),
                             description="Alertmanager: publish alerts to the SNS receivers' topics", opts=child)
        policy = iam.RolePolicy(name, role=self.role.name, policy=publish_policy(topics), opts=child)
        self.association = eks.PodIdentityAssociation(
            name, cluster_name=cluster_name, namespace=namespace,
            service_account=names.ALERTMANAGER_SERVICE_ACCOUNT, role_arn=self.role.arn,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy, *depends_on]))
        self.register_outputs({"roleArn": self.role.arn, "topics": topics})
