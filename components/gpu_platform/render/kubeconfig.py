"""The kubeconfig users and the Kubernetes provider connect with: token from `aws eks get-token`.

No long-lived credential is ever written: the exec plugin asks AWS for a short-lived token with the
caller's own identity, which the cluster's access entries then authorise.
"""
from __future__ import annotations

from typing import Any

import json

EXEC_API_VERSION = "client.authentication.k8s.io/v1beta1"


def kubeconfig(cluster_name: str, endpoint: str, certificate_authority: str, region: str) -> dict[str, Any]:
    """A one-cluster kubeconfig; `certificate_authority` is the base64 PEM EKS returns."""
    user = {
        "exec": {
            "apiVersion": EXEC_API_VERSION,
            "command": "aws",
            "args": ["eks", "get-token", "--cluster-name", cluster_name, "--region", region, "--output", "json"],
            "interactiveMode": "Never",
        }
    }
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": cluster_name,
                      "cluster": {"server": endpoint, "certificate-authority-data": certificate_authority}}],
        "users": [{"name": cluster_name, "user": user}],
        "contexts": [{"name": cluster_name, "context": {"cluster": cluster_name, "user": cluster_name}}],
        "current-context": cluster_name,
        "preferences": {},
    }


def kubeconfig_json(cluster_name: str, endpoint: str, certificate_authority: str, region: str) -> str:
    return json.dumps(kubeconfig(cluster_name, endpoint, certificate_authority, region), sort_keys=True)
