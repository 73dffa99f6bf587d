"""EFA resources: each EFA pool's self-referencing security group, and the EFA device plugin's release
(decided in decisions/efa.py, its values rendered in render/efa.py)."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Optional

import pulumi

from gpu_platform.facts import catalog, component_types, names
from gpu_platform.resources.options import named

if TYPE_CHECKING:
    from pulumi_aws import ec2

    from gpu_platform.spec.models import NodePoolSpec

ALL_TRAFFIC = "-1"


def efa_security_group(name: str, cluster_name: pulumi.Input[str], pool: "NodePoolSpec",
                       vpc_id: Optional[pulumi.Input[str]],
                       child: pulumi.ResourceOptions) -> "ec2.SecurityGroup":
    """A group allowing all traffic to and from itself, for the pool's EFA interfaces."""
    from pulumi_aws import ec2, vpc

    physical = named(cluster_name, lambda cluster: names.efa_security_group_name(cluster, pool.name))
    group = ec2.SecurityGroup(name, name=physical, vpc_id=vpc_id, tags={"Name": physical},
                              description=f"EFA traffic between the nodes of GPU pool {pool.name}", opts=child)
    vpc.SecurityGroupIngressRule(f"{name}-in", security_group_id=group.id, referenced_security_group_id=group.id,
                                 ip_protocol=ALL_TRAFFIC, description="all traffic from EFA peers", opts=child)
    vpc.SecurityGroupEgressRule(f"{name}-out", security_group_id=group.id, referenced_security_group_id=group.id,
                                ip_protocol=ALL_TRAFFIC, description="all traffic to EFA peers", opts=child)
    return group


class EfaDevicePlugin(pulumi.ComponentResource):
    """The EFA Kubernetes device plugin (Helm chart, pinned) on the EFA pools' nodes."""

    def __init__(self, name: str, version: str, values: dict[str, Any], k8s_provider: pulumi.ProviderResource,
                 depends_on: Sequence[pulumi.Resource] = (), opts: Optional[pulumi.ResourceOptions] = None):
        """`version`: the chart's, pinned; `values`: rendered for the EFA pools (render/efa.py)."""
        super().__init__(component_types.INTERNAL["EfaDevicePlugin"], name, None, opts)
        from pulumi_kubernetes.helm.v3 import Release, RepositoryOptsArgs

        repo, chart = catalog.EFA_DEVICE_PLUGIN_CHART
        self.release = Release(
            name,
            name=names.EFA_DEVICE_PLUGIN_RELEASE,
            chart=chart,
            version=version,
            repository_opts=RepositoryOptsArgs(repo=repo),
            namespace=catalog.EFA_DEVICE_PLUGIN_NAMESPACE,
            values=values,
            opts=pulumi.ResourceOptions(parent=self, provider=k8s_provider, depends_on=list(depends_on)),
        )
        self.register_outputs({"release": self.release.name})
