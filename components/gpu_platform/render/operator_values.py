"""The GPU Operator chart's values, decided from its settings (pure), and the guard on their keys.

`OperatorSettings` is what the values are made from: the stack file's operator block and pools (`of`),
or a GpuOperator component's arguments.

The chart ships no values schema: Helm silently ignores a misspelt or removed key. `unknown_value_keys`
holds every key we set to the chart's own values.yaml for the pinned version (a copy is kept in
facts/upstream/ for each chart version the catalog supports).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any
from collections.abc import Iterator, Mapping, Sequence


from gpu_platform.decisions.tolerations import startup_toleration, tolerates, toleration
from gpu_platform.decisions.dra import DRA
from gpu_platform.facts import catalog, names
from gpu_platform.render.dcgm_metrics import exporter_values
from gpu_platform.render.sharing import device_plugin_configs, mig_parted_config

if TYPE_CHECKING:
    from gpu_platform.decisions.sharing import ImagePool
    from gpu_platform.spec.models import GpuOperatorSpec, GpuPool, PlatformSpec, TaintSpec, UpgradePolicySpec

NFD = "node-feature-discovery"

# Keys the chart's templates read although values.yaml only mentions them in a comment. Each entry
# allows the key and everything under it; say why, and re-check it when a chart version is added.
ABSENT_BUT_READ: Mapping[str, str] = {
    "dcgmExporter.config": "only a commented example in values.yaml; the chart reads config.name (the "
                           "collectors ConfigMap the exporter mounts) and, with config.create, renders "
                           "config.data under the key dcgm-metrics.csv in the release namespace",
}
# Maps whose keys are data (node labels, ConfigMap entries), not chart settings.
FREE_FORM: tuple[str, ...] = ("operator.nodeSelector",)


@dataclass(frozen=True)
class OperatorSettings:
    operator: "GpuOperatorSpec"  # chart, namespace, driver and its upgrade policy
    pools: Sequence["ImagePool"]  # the GPU pools it serves: their sharing files, MIG configs and taints
    mig_strategy: str = "none"  # cluster-wide
    service_monitor: bool = False  # Prometheus (and its CRDs) will be there to read one
    service_monitor_labels: Mapping[str, str] = field(default_factory=dict)  # what that Prometheus selects
    system_node_selector: Mapping[str, str] = field(default_factory=lambda: dict(names.SYSTEM_NODE_SELECTOR))

    @classmethod
    def of(cls, spec: "PlatformSpec") -> "OperatorSettings":
        mon = spec.monitoring
        return cls(spec.gpu_operator, spec.node_pools, spec.mig_strategy,
                   service_monitor=mon.enabled and mon.prometheus.mode != "none",
                   service_monitor_labels=dict(mon.prometheus.selector_labels),
                   system_node_selector=dict(spec.cluster.system_node_selector))


@cache
def _chart_defaults(chart_version: str) -> dict[str, Any]:
    chart = catalog.GPU_OPERATOR_CHARTS[chart_version]
    values: dict[str, Any] = catalog.upstream_yaml(chart.values_file)
    return values


def chart_defaults(chart_version: str) -> dict[str, Any]:
    """The pinned chart's values.yaml (a private copy: callers may change it)."""
    return copy.deepcopy(_chart_defaults(chart_version))


def operator_values(settings: OperatorSettings) -> dict[str, Any]:
    """Chart values: driver ownership, sharing files, MIG manager, tolerations, placement, exporter."""
    op = settings.operator
    defaults = chart_defaults(op.chart_version)
    system = dict(settings.system_node_selector)
    extra = list(_extra_taints(settings.pools))
    operator_owned = op.driver.source == "operator"
    values: dict[str, Any] = {
        "operator": {"nodeSelector": {**defaults["operator"]["nodeSelector"], **system}},
        "driver": driver_values(op),
        "cdi": {"enabled": True},  # the device plugin hands GPUs to the runtime as CDI devices, not variables
        "toolkit": toolkit_values(operator_owned),
        "nfd": {"enabled": True},
        "gfd": {"enabled": True},
        "mig": {"strategy": settings.mig_strategy},
        "devicePlugin": {"enabled": True, "config": {
            "create": True,
            "name": names.DEVICE_PLUGIN_CONFIGMAP,
            "default": names.DEVICE_PLUGIN_DEFAULT_CONFIG,
            "data": device_plugin_configs(settings.pools, settings.mig_strategy),
        }},
        "migManager": {
            "enabled": True,
            # EC2 GPUs cannot be reset in place: changing MIG mode needs a node reboot.
            "env": [{"name": "WITH_REBOOT", "value": "true"}],
            "config": {
                "create": True,
                "name": names.MIG_PARTED_CONFIGMAP,
                "default": names.MIG_ALL_DISABLED,
                "data": {names.MIG_PARTED_CONFIG_KEY: mig_parted_config(settings.pools)},
            },
        },
        "dcgmExporter": exporter_values(names.DCGM_METRICS_CONFIGMAP, settings.service_monitor,
                                        dict(settings.service_monitor_labels),
                                        dra=any(str(getattr(p, "gpu_allocation", "")) == DRA for p in settings.pools)),
        "daemonsets": {"tolerations": with_tolerations(defaults["daemonsets"]["tolerations"], extra)},
        NFD: {"worker": {"tolerations": with_tolerations(defaults[NFD]["worker"]["tolerations"], extra)}},
    }
    for part in ("master", "gc"):  # only where the pinned chart exposes the key (not in v26.7.0)
        if "nodeSelector" in (defaults[NFD].get(part) or {}):
            values[NFD][part] = {"nodeSelector": dict(system)}
    return values


def toolkit_values(operator_owned: bool) -> dict[str, Any]:
    """The operator's container toolkit (operator-owned driver only): it ignores NVIDIA_VISIBLE_DEVICES in
    unprivileged containers, so a pod reaches only the GPUs the device plugin allocated it."""
    if not operator_owned:
        return {"enabled": False}
    return {"enabled": True, "env": [{"name": catalog.TOOLKIT_ENVVAR_WHEN_UNPRIVILEGED, "value": "false"}]}


def driver_values(operator: "GpuOperatorSpec") -> dict[str, Any]:
    """AMI-owned: the operator installs no driver or toolkit. Operator-owned: the exact pinned driver."""
    drv = operator.driver
    if drv.source == "ami":
        return {"enabled": False}
    return {
        "enabled": True,
        "version": drv.version,
        "kernelModuleType": drv.kernel_module_type,
        "upgradePolicy": upgrade_policy_values(operator.upgrade_policy),
    }


def upgrade_policy_values(policy: "UpgradePolicySpec") -> dict[str, Any]:
    wait, delete, drain = policy.wait_for_completion, policy.gpu_pod_deletion, policy.drain
    return {
        "autoUpgrade": policy.auto_upgrade,
        "maxParallelUpgrades": policy.max_parallel_upgrades,
        "maxUnavailable": policy.max_unavailable,
        "waitForCompletion": {"timeoutSeconds": wait.timeout_seconds, "podSelector": wait.pod_selector},
        "gpuPodDeletion": {"force": delete.force, "timeoutSeconds": delete.timeout_seconds,
                           "deleteEmptyDir": delete.delete_empty_dir},
        "drain": {"enable": drain.enable, "force": drain.force, "podSelector": drain.pod_selector,
                  "timeoutSeconds": drain.timeout_seconds, "deleteEmptyDir": drain.delete_empty_dir},
    }


def _extra_taints(pools: Sequence["GpuPool"]) -> Iterator["TaintSpec"]:
    seen = set()
    for pool in pools:
        for t in pool.taints:
            if (t.key, t.value, t.effect) not in seen:
                seen.add((t.key, t.value, t.effect))
                yield t


def with_tolerations(defaults: list[dict[str, Any]], taints: list["TaintSpec"]) -> list[dict[str, Any]]:
    """The chart's default tolerations, the platform's GPU taint, the acceptance gate's startup taint (a node
    needs its agents before its checks can pass), and every extra pool taint."""
    out = [dict(t) for t in defaults]
    if not tolerates(out, names.GPU_TAINT_KEY, names.GPU_TAINT_VALUE, "NoSchedule"):
        out.append({"key": names.GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"})
    if not tolerates(out, names.ACCEPTANCE_TAINT_KEY, names.ACCEPTANCE_TAINT_VALUE, names.ACCEPTANCE_TAINT_EFFECT):
        out.append(startup_toleration())
    for taint in taints:
        if not tolerates(out, taint.key, taint.value, taint.effect):
            out.append(toleration(taint))
    return out


def unknown_value_keys(values: Mapping[str, Any], chart_version: str) -> list[str]:
    """Dotted paths in `values` that the pinned chart's values.yaml does not have (empty: all known).

    Maps are walked key by key; a list or scalar only needs its own key. Keys under a map the chart
    leaves empty (`data: {}`, `additionalLabels: {}`) are data, as are FREE_FORM maps.
    """
    return unknown_keys(values, _chart_defaults(chart_version), (*ABSENT_BUT_READ, *FREE_FORM))


def unknown_keys(values: Mapping[str, Any], defaults: Mapping[str, Any], exempt: tuple[str, ...] = ()) -> list[str]:
    """The same guard for any chart: dotted paths of `values` its values.yaml (`defaults`) lacks;
    `exempt` paths, and everything under them, are allowed."""
    return list(_unknown(values, defaults, "", exempt))


def _unknown(values: Mapping[str, Any], defaults: Any, prefix: str, exempt: tuple[str, ...]) -> Iterator[str]:
    for key, value in values.items():
        path = f"{prefix}{key}"
        if path in exempt:
            continue
        if not isinstance(defaults, dict) or key not in defaults:
            yield path
            continue
        default = defaults[key]
        if isinstance(value, Mapping) and isinstance(default, dict) and default:
            yield from _unknown(value, default, path + ".", exempt)
        elif isinstance(value, Mapping) and default is not None and not isinstance(default, dict):
            yield f"{path} (a map where the chart expects {type(default).__name__})"


def driver_summary(settings: OperatorSettings) -> dict[str, Any]:
    """Who owns the NVIDIA driver, and where it is pinned: stated in the stack outputs."""
    drv = settings.operator.driver
    if drv.source == "operator":
        return {"source": "operator", "version": drv.version}
    return {"source": "ami", "amiReleases": {p.name: f"{p.ami.type} {p.ami.release_version or p.ami.alias or p.ami.image_id}"
                                             for p in settings.pools}}
