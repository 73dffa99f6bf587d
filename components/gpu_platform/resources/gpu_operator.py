"""The NVIDIA GPU Operator: one Helm release in its own namespace, values decided in render/operator_values.py.

The chart creates the device-plugin and MIG ConfigMaps from the rendered sharing files; nodes pick their
entries by the labels their pool carries from birth. The operator itself runs on the system nodes and
waits for what its caller makes it wait for (the system nodes, the Prometheus CRDs). `GpuOperator` takes
its own arguments: the chart, the driver and the GPU pools it serves.
"""
from collections.abc import Mapping
from datetime import date
from typing import Any, Optional

import pulumi
import pulumi_kubernetes

from gpu_platform.facts import component_types
from gpu_platform.facts import catalog, names
from gpu_platform.render.operator_values import OperatorSettings, driver_summary, operator_values
from gpu_platform.resources import options
from gpu_platform.resources.pool_args import PoolAmiArgs, PoolSharingArgs, PoolTaintArgs
from gpu_platform.resources.typed_args import ArgumentsError, Required, TypedDict, argument_problems, as_arguments
from gpu_platform.spec.errors import SpecError
from gpu_platform.spec.field_path import FieldPath
from gpu_platform.spec.models import GpuOperatorSpec, OperatorPoolSpec, mig_strategy_of
from gpu_platform.spec.parse import read_part
from gpu_platform.spec.rules import driver_rules, gpu_shape_rules, mig_strategy_rules, sharing_rules
from gpu_platform.spec.rules_dra import DRA, sharing_rules as dra_sharing_rules

# Operator install plus CRDs and NFD on fresh system nodes; Helm's wait covers the chart's own workloads.
RELEASE_TIMEOUT_SECONDS = 1200
# The operands need host access (driver, toolkit, device plugin, MIG manager): Pod Security must allow it.
POD_SECURITY_LEVEL = "privileged"


class OperatorDriverArgs(TypedDict, total=False):
    """Who installs the NVIDIA driver, and which one."""

    source: Required[str]
    """ami (the AMI ships it) or operator (the operator installs it; Ubuntu pools)."""
    version: str
    """The exact driver when the operator owns it, e.g. 580.173.02."""
    kernel_module_type: str
    """auto, open or proprietary."""


class WaitForCompletionArgs(TypedDict, total=False):
    """The pods a driver upgrade waits for before it touches a node (training Jobs from `gpu_job`)."""

    timeout_seconds: int
    """0: wait as long as it takes."""
    pod_selector: str
    """An equality-based label selector."""


class GpuPodDeletionArgs(TypedDict, total=False):
    """How the upgrade deletes the GPU pods still on a node."""

    force: bool
    """Delete GPU pods no controller manages too."""
    timeout_seconds: int
    """How long deletion may take before the upgrade moves on."""
    delete_empty_dir: bool
    """GPU pods with emptyDir volumes may be deleted (their data is lost)."""


class DrainArgs(TypedDict, total=False):
    """Whether the upgrade drains a node first."""

    enable: bool
    """Drain the node when deleting its GPU pods failed."""
    force: bool
    """Drain pods no controller manages too."""
    pod_selector: str
    """Only pods matching this label selector are drained."""
    timeout_seconds: int
    """How long the drain may take (0: no limit)."""
    delete_empty_dir: bool
    """Pods with emptyDir volumes may be drained (their data is lost)."""


class OperatorUpgradePolicyArgs(TypedDict, total=False):
    """How the operator upgrades an operator-owned driver on running nodes (defaults are the stack file's)."""

    auto_upgrade: bool
    """Whether the operator rolls a new driver out node by node by itself."""
    max_parallel_upgrades: int
    """Nodes upgraded at once (0: all at once)."""
    max_unavailable: str
    """Nodes upgraded at once: a count ("1") or a percentage ("25%")."""
    wait_for_completion: WaitForCompletionArgs
    """Which pods the upgrade waits for before deleting a node's GPU pods."""
    gpu_pod_deletion: GpuPodDeletionArgs
    """How the upgrade deletes the GPU pods still on a node."""
    drain: DrainArgs
    """Whether the upgrade drains the whole node when deleting its GPU pods failed."""


class OperatorPoolArgs(TypedDict, total=False):
    """A GPU pool the operator serves: its GPUs, image, sharing and extra taints."""

    name: Required[str]
    """The pool's name: its nodes carry it in the gpu-platform.io/pool label."""
    instance_types: Required[list[str]]
    """The pool's instance types (one GPU model and count)."""
    ami: Required[PoolAmiArgs]
    """The pool's node image: who owns the driver follows from it."""
    sharing: PoolSharingArgs
    """Time-slicing or MIG on the pool's GPUs."""
    taints: list[PoolTaintArgs]
    """The pool's extra taints, which the operator's pods tolerate."""
    gpu_allocation: str
    """device-plugin (default) or dra: the pool's GPUs are allocated by NVIDIA's DRA driver."""


class GpuOperatorArgs(TypedDict, total=False):
    """The GPU Operator's chart, driver and the GPU pools it serves."""

    chart_version: Required[str]
    """The chart version, pinned: one the catalog checks (e.g. v26.7.0)."""
    driver: Required[OperatorDriverArgs]
    """Whose driver the GPUs run (the AMI's or the operator's) and its exact version."""
    namespace: str
    """Default gpu-operator."""
    upgrade_policy: OperatorUpgradePolicyArgs
    """How an operator-owned driver is upgraded on running nodes."""
    pools: list[OperatorPoolArgs]
    """Every GPU pool the operator serves: their time-slicing and MIG configs are rendered from these."""
    mig_strategy: str
    """none, single or mixed (default: the MIG pools' strategy)."""
    k8s_provider: pulumi_kubernetes.Provider
    """The cluster's Kubernetes provider (default: the provider the resource options give)."""
    service_monitor: bool
    """Create dcgm-exporter's ServiceMonitor (Prometheus operator CRDs must exist)."""
    service_monitor_labels: dict[str, str]
    """Labels the ServiceMonitor carries for the Prometheus that selects it."""
    system_node_selector: dict[str, str]
    """Where the operator runs: the system nodes' labels (default gpu-platform.io/role=system)."""
    kubernetes_version: str
    """The cluster's Kubernetes minor: operator-owned drivers are supported on some only."""
    environment: str
    """dev, staging or prod: prod refuses a driver branch past its end of life."""


class GpuOperator(pulumi.ComponentResource):
    """The NVIDIA GPU Operator release in its own namespace, with the pools' sharing and MIG configs."""

    namespace_name: pulumi.Output[str]
    """The operator's namespace."""
    release_name: pulumi.Output[str]
    """The Helm release's name."""

    def __init__(self, name: str, args: GpuOperatorArgs, opts: Optional[pulumi.ResourceOptions] = None):
        self._build(name, operator_settings(name, args), args.get("k8s_provider"), opts)

    @classmethod
    def of(cls, name: str, settings: OperatorSettings, k8s_provider: Optional[pulumi.ProviderResource] = None,
           opts: Optional[pulumi.ResourceOptions] = None) -> "GpuOperator":
        """An operator whose settings the stack file's rules already validated (GpuPlatform's), built as they
        are: not checked again."""
        component = cls.__new__(cls)
        component._build(name, settings, k8s_provider, opts)
        return component

    def _build(self, name: str, settings: OperatorSettings, k8s_provider: Optional[pulumi.ProviderResource],
               opts: Optional[pulumi.ResourceOptions]) -> None:
        super().__init__(component_types.public("GpuOperator"), name, None,
                         options.formerly(opts, "GpuOperator"))
        from pulumi_kubernetes.core.v1 import Namespace
        from pulumi_kubernetes.helm.v3 import Release, RepositoryOptsArgs

        op = settings.operator
        chart = catalog.GPU_OPERATOR_CHARTS[op.chart_version]
        provider = options.kubernetes({"k8s_provider": k8s_provider})
        self.namespace = Namespace(
            name,
            metadata={"name": op.namespace, "labels": names.platform_namespace_labels(POD_SECURITY_LEVEL)},
            opts=options.child(self, opts, **provider),
        )
        self.values = operator_values(settings)
        self.release = Release(
            name,
            name=names.GPU_OPERATOR_RELEASE,
            chart=catalog.GPU_OPERATOR_CHART,
            version=op.chart_version,
            repository_opts=RepositoryOptsArgs(repo=chart.repository),
            namespace=self.namespace.metadata.name,
            create_namespace=False,
            values=self.values,
            skip_await=False,
            timeout=RELEASE_TIMEOUT_SECONDS,
            opts=options.child(self, opts, depends_on=[self.namespace], **provider),
        )
        self.driver = driver_summary(settings)
        self.namespace_name = self.namespace.metadata.name
        # named above: the SDK types a release's name Optional
        self.release_name = self.release.name  # type: ignore[assignment]
        self.register_outputs({"namespace": self.namespace.metadata.name, "release": self.release.name,
                               "chartVersion": op.chart_version, "driver": self.driver})


def operator_settings(name: str, args: Mapping[str, Any], today: Optional[date] = None) -> OperatorSettings:
    """The operator's settings from its arguments, checked with the stack file's operator and pool rules."""
    where = f"GpuOperator {name!r}: "
    args = as_arguments("GpuOperator", name, args, GpuOperatorArgs)
    problems = argument_problems(args, GpuOperatorArgs, required=False)  # the operator's model names them
    fields: dict[str, Any] = {k: args[k] for k in ("chart_version", "namespace", "driver", "upgrade_policy")
                              if k in args}
    policy = dict(fields.get("upgrade_policy") or {})
    if str(policy.get("max_unavailable", "")).isdigit():  # a count travels as a string through other languages
        fields["upgrade_policy"] = {**policy, "max_unavailable": int(policy["max_unavailable"])}
    try:
        operator = read_part(GpuOperatorSpec, fields)
        pools = [read_part(OperatorPoolSpec, p, FieldPath.of("pools").index(i))
                 for i, p in enumerate(args.get("pools") or [])]
    except SpecError as err:
        raise ArgumentsError(where, [*problems, *err.problems]) from None
    found = [p for i, pool in enumerate(pools) for p in gpu_shape_rules(FieldPath.of("pools").index(i), pool)]
    if not found:
        found += [p for i, pool in enumerate(pools) for p in sharing_rules(FieldPath.of("pools").index(i), pool)]
        found += driver_rules(operator, pools, args.get("kubernetes_version"), args.get("environment") == "prod",
                              today or date.today(), at=FieldPath(), pools_at=FieldPath.of("pools"),
                              k8s_at=FieldPath.of("kubernetesVersion"))
        found += mig_strategy_rules(pools, FieldPath.of("pools"))
        found += [p for i, pool in enumerate(pools) if pool.gpu_allocation == DRA
                  for p in dra_sharing_rules(FieldPath.of("pools").index(i) / "gpuAllocation", pool.sharing.mode)]
    problems += [f"{path}: {message}" for path, message in found]
    if problems:
        raise ArgumentsError(where, problems)
    labels = args.get("service_monitor_labels") or {}
    return OperatorSettings(
        operator, pools, args.get("mig_strategy") or mig_strategy_of(pools),
        service_monitor=bool(args.get("service_monitor")), service_monitor_labels=dict(labels),
        system_node_selector=dict(args.get("system_node_selector") or names.SYSTEM_NODE_SELECTOR))
