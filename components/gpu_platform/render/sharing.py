"""GPU sharing files: the device plugin's and the MIG manager's, as the GPU Operator's chart creates them.

Nodes pick their entry by label (`nvidia.com/device-plugin.config`, `nvidia.com/mig.config`: decided in
decisions/sharing.py), so one ConfigMap of each kind serves every pool. The renderers are pure; the
validators implement the upstream rules of both formats (NVIDIA k8s-device-plugin api/config/v1 and
mig-parted v1) so tests and the policy pack can hold any rendered file to them.
"""
from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any
from collections.abc import Sequence

import yaml

from gpu_platform.decisions.sharing import mig_configs
from gpu_platform.facts import names

if TYPE_CHECKING:
    from gpu_platform.decisions.sharing import ImagePool
    from gpu_platform.spec.models import GpuPool

MAX_RESOURCE_NAME = 63  # the name part after `nvidia.com/`, as for any Kubernetes qualified name
PCI_DEVICE_ID = re.compile(r"^0x[0-9A-Fa-f]{8}$")  # mig-parted device-filter, e.g. 0x233010DE


# --- device plugin (ConfigMap named in devicePlugin.config.name, one key per named config) ---

def device_plugin_configs(pools: Sequence["GpuPool"], mig_strategy: str) -> dict[str, str]:
    """ConfigMap data: the no-sharing default plus one entry per distinct time-slicing setting of `pools`.

    Every entry carries the cluster-wide MIG strategy so the file agrees with the operator's
    `mig.strategy`; shared replicas keep the name `nvidia.com/gpu` (autoscalers only know that one).
    """
    data = {names.DEVICE_PLUGIN_DEFAULT_CONFIG: _device_plugin_doc(mig_strategy)}
    for pool in pools:
        s = pool.sharing
        if s.mode == "time-slicing" and s.replicas:
            key = names.device_plugin_config_key(s.replicas, s.fail_requests_greater_than_one)
            data[key] = _device_plugin_doc(mig_strategy, s.replicas, s.fail_requests_greater_than_one)
    return {key: _dump(doc) for key, doc in sorted(data.items())}


def _device_plugin_doc(mig_strategy: str, replicas: int | None = None, fail_above_one: bool = True) -> dict[str, Any]:
    doc: dict[str, Any] = {"version": "v1", "flags": {"migStrategy": mig_strategy}}
    if replicas:
        doc["sharing"] = {"timeSlicing": {
            "renameByDefault": False,
            "failRequestsGreaterThanOne": fail_above_one,
            "resources": [{"name": names.GPU_RESOURCE, "replicas": replicas}],
        }}
    return doc


# --- MIG manager (mig-parted config under the ConfigMap key `config.yaml`) ---

def mig_parted_config(pools: Sequence["ImagePool"]) -> str:
    """The MIG manager's file: `all-disabled` (the only accepted default) plus one config per pool."""
    disabled = [{"devices": "all", "mig-enabled": False}]
    configs: dict[str, list[dict[str, Any]]] = {names.MIG_ALL_DISABLED: disabled}
    for name, layout in mig_configs(pools).items():
        configs[name] = [{"devices": "all", "mig-enabled": True, "mig-devices": layout}] if layout else disabled
    return _dump({"version": "v1", "mig-configs": configs})


def _dump(doc: dict[str, Any]) -> str:
    return yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)


# --- validators: every upstream rule; each returns `path: problem` lines, empty when valid ---

def check_device_plugin_config(text: str) -> list[str]:
    """Rules of k8s-device-plugin's v1 config file (api/config/v1), as the plugin applies them."""
    doc, problems = _load(text)
    if doc is None:
        return problems
    if doc.get("version") != "v1":
        problems.append("version: must be v1 (the only config version)")
    flags = doc.get("flags", {})
    if not isinstance(flags, dict):
        problems.append("flags: must be a mapping")
    elif "migStrategy" in flags and flags["migStrategy"] not in names.MIG_STRATEGIES:
        problems.append(f"flags.migStrategy: must be one of {', '.join(names.MIG_STRATEGIES)}")
    sharing = doc.get("sharing")
    if sharing is None:
        return problems
    if not isinstance(sharing, dict):
        return problems + ["sharing: must be a mapping"]
    if "timeSlicing" in sharing and "mps" in sharing:
        problems.append("sharing: timeSlicing and mps are mutually exclusive")
    for kind in ("timeSlicing", "mps"):
        if kind in sharing:
            problems += _check_shared_resources(f"sharing.{kind}", sharing[kind])
    return problems


def _check_shared_resources(at: str, section: Any) -> list[str]:
    if not isinstance(section, dict):
        return [f"{at}: must be a mapping"]
    problems = [f"{at}.{flag}: must be true or false" for flag in ("renameByDefault", "failRequestsGreaterThanOne")
                if flag in section and not isinstance(section[flag], bool)]
    resources = section.get("resources")
    if not isinstance(resources, list) or not resources:
        return problems + [f"{at}.resources: must be a non-empty list"]
    for i, res in enumerate(resources):
        where = f"{at}.resources[{i}]"
        if not isinstance(res, dict):
            problems.append(f"{where}: must be a mapping with name and replicas")
            continue
        problems += _check_resource_name(f"{where}.name", res.get("name"))
        replicas = res.get("replicas")
        if isinstance(replicas, bool) or not isinstance(replicas, int) or replicas < 2:
            problems.append(f"{where}.replicas: must be an integer >= 2")
    return problems


def _check_resource_name(at: str, name: Any) -> list[str]:
    if not isinstance(name, str) or not name:
        return [f"{at}: required"]
    if "/" in name and not name.startswith(names.NVIDIA_DOMAIN):
        return [f"{at}: must be in the {names.NVIDIA_DOMAIN} domain (a bare name gets that prefix)"]
    short = name.removeprefix(names.NVIDIA_DOMAIN)
    if len(short) > MAX_RESOURCE_NAME:
        return [f"{at}: the name after {names.NVIDIA_DOMAIN} must be at most {MAX_RESOURCE_NAME} characters"]
    return []


MIG_ITEM_KEYS = ("devices", "mig-enabled", "mig-devices", "device-filter")


def check_mig_parted_config(text: str) -> list[str]:
    """Rules of mig-parted's v1 config file, plus the MIG manager's need for `all-disabled`."""
    doc, problems = _load(text)
    if doc is None:
        return problems
    extra = sorted(str(k) for k in doc if k not in ("version", "mig-configs"))
    if extra:
        problems.append(f"unknown top-level key(s) {', '.join(extra)}: only version and mig-configs are allowed")
    if doc.get("version") != "v1":
        problems.append("version: must be v1")
    configs = doc.get("mig-configs")
    if not isinstance(configs, dict) or not configs:
        return problems + ["mig-configs: must be a non-empty mapping of config name -> list of items"]
    if names.MIG_ALL_DISABLED not in configs:
        problems.append(f"mig-configs: needs an `{names.MIG_ALL_DISABLED}` entry (the only accepted migManager.config.default)")
    for name, items in configs.items():
        at = f"mig-configs.{name}"
        if not isinstance(items, list) or not items:
            problems.append(f"{at}: must be a non-empty list of items")
            continue
        for j, item in enumerate(items):
            problems += _check_mig_item(f"{at}[{j}]", item)
        if name == names.MIG_ALL_DISABLED and any(isinstance(i, dict) and i.get("mig-enabled") is not False for i in items):
            problems.append(f"{at}: must disable MIG (mig-enabled: false) on every item")
    return problems


def _check_mig_item(at: str, item: Any) -> list[str]:
    if not isinstance(item, dict):
        return [f"{at}: must be a mapping"]
    problems = [f"{at}.{k}: unknown key; allowed: {', '.join(MIG_ITEM_KEYS)}" for k in item if k not in MIG_ITEM_KEYS]
    if "devices" not in item:
        problems.append(f"{at}.devices: required (\"all\" or a list of GPU indices)")
    elif not _valid_devices(item["devices"]):
        problems.append(f"{at}.devices: must be \"all\" or a non-empty list of GPU indices (integers >= 0)")
    enabled = item.get("mig-enabled")
    if not isinstance(enabled, bool):
        problems.append(f"{at}.mig-enabled: required, true or false")
    elif enabled:
        problems += _check_mig_devices(f"{at}.mig-devices", item.get("mig-devices"))
    elif "mig-devices" in item:
        problems.append(f"{at}.mig-devices: not allowed with mig-enabled: false")
    if "device-filter" in item:
        filters = item["device-filter"]
        filters = [filters] if isinstance(filters, str) else filters
        if not isinstance(filters, list) or not filters or not all(isinstance(f, str) and PCI_DEVICE_ID.match(f) for f in filters):
            problems.append(f"{at}.device-filter: must be a PCI device id like 0x233010DE, or a list of them")
    return problems


def _valid_devices(devices: Any) -> bool:
    if devices == "all":
        return True
    return (isinstance(devices, list) and bool(devices)
            and all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in devices))


def _check_mig_devices(at: str, devices: Any) -> list[str]:
    if not isinstance(devices, dict) or not devices:
        return [f"{at}: required with mig-enabled: true (profile -> count)"]
    problems = [f"{at}.{p}: count must be an integer >= 0" for p, n in devices.items()
                if isinstance(n, bool) or not isinstance(n, int) or n < 0]
    if not problems and not any(devices.values()):
        problems.append(f"{at}: all counts are zero")
    return problems


def _load(text: str) -> tuple[dict[str, Any] | None, list[str]]:
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as err:
        return None, [f"not valid YAML: {err}"]
    if not isinstance(doc, dict):
        return None, ["must be a YAML mapping"]
    return doc, []
