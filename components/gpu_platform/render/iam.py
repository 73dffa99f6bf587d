"""IAM documents the platform's roles are made with: trust policies and AWS-managed policy ARNs.

The roles themselves are created in resources/node_iam.py and by the components that own them; the
policies specific to one capability (Karpenter's controller, the autoscaler, the FSx CSI driver) are
rendered beside that capability.
"""
from __future__ import annotations

from typing import Any

import json

from gpu_platform.facts import catalog


def trust_policy(service: str, tag_session: bool = False) -> dict[str, Any]:
    """A role only `service` may assume (EKS Pod Identity also needs sts:TagSession)."""
    actions = ["sts:AssumeRole", "sts:TagSession"] if tag_session else "sts:AssumeRole"
    return {"Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": actions}]}


def pod_identity_trust_policy() -> str:
    """Trust for EKS Pod Identity: the agent assumes the role and tags the session (JSON)."""
    return json.dumps(trust_policy(catalog.EKS_POD_IDENTITY_PRINCIPAL, tag_session=True))


def managed_policy_arns(policy_names: tuple[str, ...]) -> list[str]:
    return [f"{catalog.AWS_MANAGED_POLICY_PREFIX}{p}" for p in policy_names]
