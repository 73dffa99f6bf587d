"""Scale from zero: the Cluster Autoscaler on the system nodes, with a Pod Identity role scoped to this cluster.

The Auto Scaling group tags it builds empty pools from are decided in decisions/node_pool.py and put on
each pool's group by the node pool component; the chart's values and the role's policy are rendered in
render/autoscaler.py.
"""
from __future__ import annotations

import json
from typing import Any, Optional

import pulumi

from gpu_platform.facts import catalog, component_types, names
from gpu_platform.render.autoscaler import autoscaler_policy
from gpu_platform.render.iam import pod_identity_trust_policy


class ClusterAutoscaler(pulumi.ComponentResource):
    """The Cluster Autoscaler on the system nodes, with a Pod Identity role scoped to this cluster."""

    def __init__(self, name: str, version: str, values: dict[str, Any], cluster: str, cluster_name: pulumi.Input[str],
                 k8s_provider: pulumi.ProviderResource, depends_on: list[pulumi.Resource],
                 opts: Optional[pulumi.ResourceOptions] = None):
        """`version`: the chart's, pinned; `values`: rendered for the cluster (render/autoscaler.py); `cluster`:
        the cluster's name as the stack file gives it (its role's name), `cluster_name` as its resource has it."""
        super().__init__(component_types.INTERNAL["ClusterAutoscaler"], name, None, opts)
        from pulumi_aws import eks, iam
        from pulumi_kubernetes.helm.v3 import Release, RepositoryOptsArgs

        child = pulumi.ResourceOptions(parent=self)
        self.role = iam.Role(f"{name}-role", name=names.role_name(cluster, names.CA_RELEASE),
                             assume_role_policy=pod_identity_trust_policy(),
                             opts=child)
        policy = iam.RolePolicy(f"{name}-policy", role=self.role.name,
                                policy=pulumi.Output.from_input(cluster_name).apply(
                                    lambda c: json.dumps(autoscaler_policy(c))),
                                opts=child)
        association = eks.PodIdentityAssociation(
            f"{name}-identity", cluster_name=cluster_name, namespace=names.CA_NAMESPACE,
            service_account=names.CA_RELEASE, role_arn=self.role.arn, opts=child)
        repo, chart = catalog.CLUSTER_AUTOSCALER_CHART
        self.release = Release(
            name,
            name=names.CA_RELEASE,
            chart=chart,
            version=version,
            repository_opts=RepositoryOptsArgs(repo=repo),
            namespace=names.CA_NAMESPACE,
            values=values,
            opts=pulumi.ResourceOptions(parent=self, provider=k8s_provider,
                                        depends_on=[*depends_on, policy, association]),
        )
        self.register_outputs({"release": self.release.name, "roleArn": self.role.arn})
