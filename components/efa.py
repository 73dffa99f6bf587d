"""EFA end to end for `efa: true` pools: what multi-node NCCL needs besides the interfaces themselves.

- Interfaces: one `efa` interface per network card the instance type has (catalog; the launch template
  attaches them, see launch_template.efa_interfaces) and a cluster placement group in one zone.
- Security group: EFA's OS-bypass traffic is only delivered between interfaces whose security group
  allows all traffic to and from itself (AWS EC2 user guide, "Prepare an EFA-enabled security group").
  Each EFA pool gets such a group beside the cluster's, on every EFA interface.
- Driver: AL2023 NVIDIA and Bottlerocket AMIs ship the host components (AWS EKS user guide, "Manage EFA
  devices"). On Ubuntu the AWS kernel's `efa` module is loaded at boot and the node refuses to join unless
  every interface's device shows up, and containerd gets unlimited locked memory (EFA registers buffers).
- Device plugin: the official `aws-efa-k8s-device-plugin` chart, pinned, only on EFA pools (node label
  `gpu-platform.io/efa`), tolerating the GPU taint and the pools' own taints, advertising
  `vpc.amazonaws.com/efa`.
- Workloads: `gpu_pod_spec` requests EFA devices and sets the libfabric/NCCL environment (see workloads).
"""
from __future__ import annotations

import copy
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Optional, Sequence

import pulumi
import yaml

from . import catalog, names
from .launch_template import efa_interface_count
from .operator_values import UPSTREAM, unknown_keys, with_tolerations

if TYPE_CHECKING:
    from .spec import NodePoolSpec, PlatformSpec, TaintSpec

ALL_TRAFFIC = "-1"


def efa_pools(spec: "PlatformSpec") -> list["NodePoolSpec"]:
    return [p for p in spec.node_pools if p.efa]


def rdma(pool: "NodePoolSpec") -> bool:
    """GPUDirect RDMA over EFA: every instance type of the pool supports it."""
    return pool.efa and all(it.family in catalog.EFA_RDMA_FAMILIES for it in pool.instances)


def pod_env(pools: Sequence["NodePoolSpec"]) -> list[dict]:
    """libfabric/NCCL environment for pods that may land on any of these EFA pools. Device RDMA only when
    every one of them has it: libfabric aborts a process asking for it on a device without RDMA read."""
    pairs = [*catalog.EFA_ENV, *(catalog.EFA_RDMA_ENV if all(rdma(p) for p in pools) else ())]
    return [{"name": k, "value": v} for k, v in pairs]


def pod_devices(pool: "NodePoolSpec", units: int, units_per_node: int) -> int:
    """EFA devices for a pod with `units` of the node's `units_per_node` GPUs (or time-sliced replicas):
    the node's interfaces in proportion, rounded down, so pods filling a node never ask for more
    devices than it has. A pod whose share is under one interface asks for none (an interface cannot
    be shared between pods)."""
    return efa_interface_count(pool) * units // units_per_node if units_per_node else 0


# --- the device plugin chart ---

@lru_cache(maxsize=None)
def _chart_defaults(chart_version: str) -> dict:
    return yaml.safe_load((UPSTREAM / catalog.EFA_DEVICE_PLUGIN_VALUES[chart_version]).read_text())


def chart_defaults(chart_version: str) -> dict:
    """The pinned chart's values.yaml (a private copy)."""
    return copy.deepcopy(_chart_defaults(chart_version))


def device_plugin_values(spec: "PlatformSpec") -> dict[str, Any]:
    """Run only on EFA pools' nodes, tolerating the GPU taint and every EFA pool's own taints."""
    taints: list["TaintSpec"] = []
    for pool in efa_pools(spec):
        taints += [t for t in pool.taints if t not in taints]
    defaults = chart_defaults(spec.efa_device_plugin.chart_version)
    return {"nodeSelector": {names.EFA_LABEL: "true"},
            "tolerations": with_tolerations(defaults["tolerations"] or [], taints)}


def unknown_device_plugin_keys(values: dict, chart_version: str) -> list[str]:
    return unknown_keys(values, _chart_defaults(chart_version))


def supported_instance_types(chart_version: str) -> list[str]:
    """Instance types the chart's node affinity admits (its `supportedInstanceLabels`)."""
    return list(_chart_defaults(chart_version)["supportedInstanceLabels"]["values"])


# --- Ubuntu boot ---

def ubuntu_boot_lines(pool: "NodePoolSpec") -> list[str]:
    """Bash for the Ubuntu boot script of an EFA pool: the driver, every device, unlimited memlock."""
    expected = efa_interface_count(pool)
    return [
        f"# EFA: the kernel driver and all {expected} devices, or the node never joins (no silent TCP fallback).",
        "modprobe efa",
        "efa_devices() { find /sys/class/infiniband -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }",
        f"for _ in $(seq 60); do (( $(efa_devices) >= {expected} )) && break; sleep 1; done",
        f'if (( $(efa_devices) < {expected} )); then echo "EFA: expected {expected} devices, found $(efa_devices)" >&2; exit 1; fi',
        "mkdir -p /etc/systemd/system/containerd.service.d",
        "printf '[Service]\\nLimitMEMLOCK=infinity\\n' > /etc/systemd/system/containerd.service.d/50-efa-memlock.conf",
        "systemctl daemon-reload",
        "systemctl restart containerd",
    ]


# --- resources ---

def efa_security_group(name: str, spec: "PlatformSpec", pool: "NodePoolSpec", vpc_id: pulumi.Input[str],
                       parent: pulumi.Resource):
    """A group allowing all traffic to and from itself, for the pool's EFA interfaces."""
    from pulumi_aws import ec2, vpc

    physical = names.efa_security_group_name(spec.cluster.name, pool.name)
    child = pulumi.ResourceOptions(parent=parent)
    group = ec2.SecurityGroup(name, name=physical, vpc_id=vpc_id, tags={"Name": physical},
                              description=f"EFA traffic between the nodes of GPU pool {pool.name}", opts=child)
    vpc.SecurityGroupIngressRule(f"{name}-in", security_group_id=group.id, referenced_security_group_id=group.id,
                                 ip_protocol=ALL_TRAFFIC, description="all traffic from EFA peers", opts=child)
    vpc.SecurityGroupEgressRule(f"{name}-out", security_group_id=group.id, referenced_security_group_id=group.id,
                                ip_protocol=ALL_TRAFFIC, description="all traffic to EFA peers", opts=child)
    return group


class EfaDevicePlugin(pulumi.ComponentResource):
    """The EFA Kubernetes device plugin (Helm chart, pinned) on the EFA pools' nodes."""

    def __init__(self, name: str, spec: "PlatformSpec", k8s_provider: pulumi.ProviderResource,
                 depends_on: Sequence[pulumi.Resource] = (), opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__("gpu-platform:efa:EfaDevicePlugin", name, None, opts)
        from pulumi_kubernetes.helm.v3 import Release, RepositoryOptsArgs

        repo, chart = catalog.EFA_DEVICE_PLUGIN_CHART
        self.release = Release(
            name,
            name=names.EFA_DEVICE_PLUGIN_RELEASE,
            chart=chart,
            version=spec.efa_device_plugin.chart_version,
            repository_opts=RepositoryOptsArgs(repo=repo),
            namespace=catalog.EFA_DEVICE_PLUGIN_NAMESPACE,
            values=device_plugin_values(spec),
            opts=pulumi.ResourceOptions(parent=self, provider=k8s_provider, depends_on=list(depends_on)),
        )
        self.register_outputs({"release": self.release.name})

