"""NodeAcceptance: the acceptance gate's objects in the cluster (rendered by render/acceptance.py): the node
readiness controller with its NodeReadinessRule CRD (the pinned release's file), the checker's RBAC, ConfigMap
and admission policy, and each accepted pool's rule and checker DaemonSet."""
from __future__ import annotations

import json
from typing import Any, Optional
from collections.abc import Sequence

import pulumi
import yaml

from gpu_platform.facts import acceptance as facts
from gpu_platform.facts import catalog, component_types, names
from gpu_platform.resources.kubernetes_object import KubernetesObject

CRD_FILE = catalog.UPSTREAM / "crds" / facts.NODE_READINESS_CRDS / "nodereadinessrules.yaml"
IMMUTABLE_KINDS = ("NodeReadinessRule",)  # its conditions, taint and node selector cannot change in place


def crd() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(CRD_FILE.read_text())
    return loaded


class AcceptanceReplacement(pulumi.ComponentResource):
    """The acceptance checker's AWS identity on clusters whose managed node groups replace failed nodes: a role the
    Pod Identity agent assumes for the checker's service account, allowed to terminate instances only in this
    cluster's Auto Scaling groups (render/acceptance.py terminate_policy)."""

    def __init__(self, name: str, cluster: str, cluster_name: pulumi.Input[str],
                 depends_on: Sequence[pulumi.Resource] = (), opts: Optional[pulumi.ResourceOptions] = None):
        """`cluster`: the cluster's name (the role's and the tag's); `cluster_name`: the cluster, as an input."""
        super().__init__(component_types.INTERNAL["AcceptanceReplacement"], name, None, opts)
        from pulumi_aws import eks, iam

        from gpu_platform.render.acceptance import terminate_policy
        from gpu_platform.render.iam import pod_identity_trust_policy

        child = pulumi.ResourceOptions(parent=self)
        self.role = iam.Role(name, name=names.role_name(cluster, "gpu-acceptance"),
                             assume_role_policy=pod_identity_trust_policy(),
                             description="GPU node acceptance: replace failed nodes of managed node groups", opts=child)
        policy = iam.RolePolicy(name, role=self.role.name, policy=json.dumps(terminate_policy(cluster)), opts=child)
        self.association = eks.PodIdentityAssociation(
            name, cluster_name=cluster_name, namespace=names.ACCEPTANCE_NAMESPACE,
            service_account=names.ACCEPTANCE_NAME, role_arn=self.role.arn,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy, *depends_on]))
        self.register_outputs({"roleArn": self.role.arn})


class NodeAcceptance(pulumi.ComponentResource):
    """The acceptance gate of the platform's accepted pools (docs/acceptance.md)."""

    def __init__(self, name: str, manifests: Sequence[dict[str, Any]], k8s_provider: pulumi.ProviderResource,
                 depends_on: Sequence[pulumi.Resource] = (), opts: Optional[pulumi.ResourceOptions] = None):
        """`manifests`: render/acceptance.py's acceptance_manifests, namespaces first."""
        super().__init__(component_types.INTERNAL["NodeAcceptance"], name, None, opts)
        base = pulumi.ResourceOptions(parent=self, provider=k8s_provider, depends_on=list(depends_on))
        definition = KubernetesObject(f"{name}-crd", crd(), base)
        first = [definition]
        for obj in manifests:
            if obj["kind"] == "Namespace":
                first.append(KubernetesObject(f"{name}-{obj['metadata']['name']}", obj, base))
        self.objects = [definition, *first[1:]]
        for obj in manifests:
            if obj["kind"] == "Namespace":
                continue
            replace = obj["kind"] in IMMUTABLE_KINDS
            opts_ = pulumi.ResourceOptions.merge(base, pulumi.ResourceOptions(
                depends_on=first, replace_on_changes=["spec"] if replace else None,
                delete_before_replace=True if replace else None))
            key = f"{name}-{obj['kind'].lower()}-{obj['metadata']['name']}"
            self.objects.append(KubernetesObject(key, obj, opts_))
        self.register_outputs({"objects": len(self.objects)})
