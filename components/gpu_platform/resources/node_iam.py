"""IAM roles for the cluster: the control-plane role and the node role every pool shares (their documents
are rendered in render/iam.py)."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pulumi

from gpu_platform.facts import catalog, names
from gpu_platform.render.iam import managed_policy_arns, trust_policy
from gpu_platform.resources.options import named

if TYPE_CHECKING:
    from pulumi_aws import iam

RoleAndAttachments = tuple["iam.Role", list["iam.RolePolicyAttachment"]]


def service_role(name: str, role_name: pulumi.Input[str], service: str, policy_names: tuple[str, ...],
                 opts: pulumi.ResourceOptions, tag_session: bool = False) -> "RoleAndAttachments":
    """A role for `service` with exactly the given AWS-managed policies; returns (role, attachments)."""
    from pulumi_aws import iam

    role = iam.Role(name, name=role_name, assume_role_policy=json.dumps(trust_policy(service, tag_session)), opts=opts)
    attachments = [
        iam.RolePolicyAttachment(f"{name}-{arn.rsplit('/', 1)[-1]}", role=role.name, policy_arn=arn, opts=opts)
        for arn in managed_policy_arns(policy_names)
    ]
    return role, attachments


def node_role(name: str, cluster: pulumi.Input[str], opts: pulumi.ResourceOptions) -> "RoleAndAttachments":
    """The role every node group (system and GPU) runs as: worker, CNI and ECR pull, nothing more. The
    cluster's name may be an Output (an adopted cluster's)."""
    return service_role(name, named(cluster, lambda c: names.role_name(c, "nodes")), "ec2.amazonaws.com",
                        catalog.NODE_MANAGED_POLICIES, opts)


def control_plane_role(name: str, cluster: str, opts: pulumi.ResourceOptions) -> "RoleAndAttachments":
    return service_role(name, names.role_name(cluster, "control-plane"), "eks.amazonaws.com",
                        catalog.CLUSTER_MANAGED_POLICIES, opts, tag_session=True)
