"""GPU Operator chart values: driver ownership, sharing, tolerations, placement, and the Helm-keys guard."""

import pytest
import yaml

from gpu_platform.decisions.tolerations import startup_toleration
from gpu_platform.decisions.tolerations import tolerates
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.render import operator_values as ov
from gpu_platform.render.operator_values import ABSENT_BUT_READ, OperatorSettings, chart_defaults, operator_values, unknown_value_keys
from gpu_platform.render.sharing import check_mig_parted_config, device_plugin_configs, mig_parted_config
from tests.support.stacks import stack_platform, without_services

AL2023 = {"type": "AL2023_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"}
BOTTLEROCKET = {"type": "BOTTLEROCKET_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"}
REMOVED_KEYS = [("operator", "defaultRuntime"), ("driver", "useOpenKernelModules"), ("driver", "maxParallelUpgrades")]


def pool(name, instance, ami=AL2023, **extra):
    return {"name": name, "instanceTypes": [instance], "capacityType": "on-demand", "minSize": 0, "maxSize": 2,
            "ami": dict(ami), **extra}


def dev_with(*pools):
    platform = stack_platform("dev")
    platform["nodePools"] = list(pools)
    platform["teams"] = []
    return parse_platform(platform)


def dev():
    return parse_platform(stack_platform("dev"))


def prod():
    return parse_platform(stack_platform("prod"))


def mig_single():
    return dev_with(pool("h", "p5.48xlarge", sharing={"mode": "mig", "strategy": "single", "layout": {"1g.10gb": 7}}),
                    pool("a", "p4de.24xlarge", sharing={"mode": "mig", "strategy": "single", "layout": {"3g.40gb": 2}}))


def bottlerocket():
    return dev_with(pool("br", "g5.xlarge", ami=BOTTLEROCKET), pool("al", "g5.xlarge"))


def tainted():
    return dev_with(pool("a", "g5.xlarge", taints=[{"key": "workload", "value": "training", "effect": "NoSchedule"},
                                                    {"key": "dedicated", "effect": "NoExecute"}]),
                    pool("b", "g6.xlarge", taints=[{"key": "workload", "value": "training", "effect": "NoSchedule"}]))


def no_prometheus():
    platform = stack_platform("dev")
    platform["monitoring"]["prometheus"] = {"mode": "none"}  # the volume settings go with the installed Prometheus
    return parse_platform(without_services(platform))  # services scale on Prometheus


def custom_upgrade():
    platform = stack_platform("prod")
    platform["gpuOperator"]["upgradePolicy"] = {
        "maxParallelUpgrades": 2, "maxUnavailable": 1,
        "waitForCompletion": {"timeoutSeconds": 3600, "podSelector": "app=trainer"},
        "drain": {"enable": True, "timeoutSeconds": 900, "podSelector": "app=batch"},
    }
    return parse_platform(platform)


VARIANTS = {"dev": dev, "prod": prod, "mig-single": mig_single, "bottlerocket": bottlerocket, "tainted": tainted,
            "no-prometheus": no_prometheus, "custom-upgrade": custom_upgrade}


# --- driver ownership ---

def test_ami_owned_driver_disables_driver_and_toolkit():
    values = operator_values(OperatorSettings.of(dev()))
    assert values["driver"] == {"enabled": False} and values["toolkit"] == {"enabled": False}


@pytest.mark.parametrize("operand", ["devicePlugin", "gfd", "dcgmExporter", "migManager"])
def test_ami_owned_driver_keeps_the_other_operands_on(operand):
    assert operator_values(OperatorSettings.of(dev()))[operand]["enabled"] is True


def test_operator_owned_driver_is_pinned_exactly():
    spec = prod()
    driver = operator_values(OperatorSettings.of(spec))["driver"]
    assert (driver["enabled"], driver["version"], driver["kernelModuleType"]) == (
        True, spec.gpu_operator.driver.version, spec.gpu_operator.driver.kernel_module_type)


def test_operator_owned_driver_enables_the_toolkit_ignoring_device_variables_when_unprivileged():
    assert operator_values(OperatorSettings.of(prod()))["toolkit"] == {
        "enabled": True, "env": [{"name": "ACCEPT_NVIDIA_VISIBLE_DEVICES_ENVVAR_WHEN_UNPRIVILEGED", "value": "false"}]}


@pytest.mark.parametrize("variant", ["dev", "prod", "bottlerocket"])
def test_gpus_reach_containers_as_cdi_devices_on_every_driver_owner(variant):
    values = operator_values(OperatorSettings.of(VARIANTS[variant]()))
    assert values["cdi"] == {"enabled": True}
    assert isinstance(chart_defaults(VARIANTS[variant]().gpu_operator.chart_version)["toolkit"]["env"], list)


def test_default_upgrade_policy_waits_for_labelled_jobs_and_never_forces():
    policy = operator_values(OperatorSettings.of(prod()))["driver"]["upgradePolicy"]
    assert policy["waitForCompletion"] == {"timeoutSeconds": 0, "podSelector": f"{names.DOMAIN}/wait-for-completion=true"}
    assert policy["gpuPodDeletion"]["force"] is False and policy["drain"]["enable"] is False
    assert policy["autoUpgrade"] is True and policy["maxParallelUpgrades"] == 1


def test_upgrade_policy_comes_from_the_spec():
    spec = custom_upgrade()
    policy, wanted = operator_values(OperatorSettings.of(spec))["driver"]["upgradePolicy"], spec.gpu_operator.upgrade_policy
    assert policy["maxParallelUpgrades"] == wanted.max_parallel_upgrades
    assert policy["maxUnavailable"] == wanted.max_unavailable
    assert policy["waitForCompletion"]["timeoutSeconds"] == wanted.wait_for_completion.timeout_seconds
    assert policy["waitForCompletion"]["podSelector"] == wanted.wait_for_completion.pod_selector
    assert (policy["drain"]["enable"], policy["drain"]["podSelector"]) == (wanted.drain.enable, wanted.drain.pod_selector)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("section, key", REMOVED_KEYS)
def test_removed_or_no_op_keys_are_never_set(variant, section, key):
    assert key not in operator_values(OperatorSettings.of(VARIANTS[variant]())).get(section, {})


# --- sharing ---

def test_device_plugin_config_is_created_from_the_rendered_entries():
    spec = dev()
    config = operator_values(OperatorSettings.of(spec))["devicePlugin"]["config"]
    assert config == {"create": True, "name": names.DEVICE_PLUGIN_CONFIGMAP,
                      "default": names.DEVICE_PLUGIN_DEFAULT_CONFIG, "data": device_plugin_configs(spec.node_pools, spec.mig_strategy)}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_created_configmaps_have_a_name_data_and_their_default(variant):
    """The chart fails to render create=true with an empty name or data; a missing default breaks nodes."""
    values = operator_values(OperatorSettings.of(VARIANTS[variant]()))
    for config in (values["devicePlugin"]["config"], values["migManager"]["config"]):
        assert config["create"] and config["name"] and config["data"]
    assert values["devicePlugin"]["config"]["default"] in values["devicePlugin"]["config"]["data"]


def test_mig_manager_reboots_to_change_mig_mode_on_ec2():
    assert {"name": "WITH_REBOOT", "value": "true"} in operator_values(OperatorSettings.of(prod()))["migManager"]["env"]


def test_mig_manager_config_holds_config_yaml_and_defaults_to_all_disabled():
    spec = prod()
    config = operator_values(OperatorSettings.of(spec))["migManager"]["config"]
    assert config["default"] == names.MIG_ALL_DISABLED  # the ClusterPolicy CRD accepts only this or ""
    assert config["data"] == {names.MIG_PARTED_CONFIG_KEY: mig_parted_config(spec.node_pools)}
    assert check_mig_parted_config(config["data"][names.MIG_PARTED_CONFIG_KEY]) == []


@pytest.mark.parametrize("variant, strategy", [("dev", "none"), ("prod", "mixed"), ("mig-single", "single")])
def test_mig_strategy_is_the_clusters(variant, strategy):
    spec = VARIANTS[variant]()
    assert operator_values(OperatorSettings.of(spec))["mig"] == {"strategy": strategy} and spec.mig_strategy == strategy


# --- tolerations ---

def test_daemonset_tolerations_keep_chart_defaults_and_add_each_distinct_extra_taint():
    spec = tainted()
    defaults = chart_defaults(spec.gpu_operator.chart_version)["daemonsets"]["tolerations"]
    got = operator_values(OperatorSettings.of(spec))["daemonsets"]["tolerations"]
    assert got == defaults + [startup_toleration(),
        {"key": "workload", "operator": "Equal", "value": "training", "effect": "NoSchedule"},
        {"key": "dedicated", "operator": "Exists", "effect": "NoExecute"},
    ]


def test_nfd_worker_tolerations_keep_chart_defaults_and_add_each_distinct_extra_taint():
    spec = tainted()
    defaults = chart_defaults(spec.gpu_operator.chart_version)[ov.NFD]["worker"]["tolerations"]
    got = operator_values(OperatorSettings.of(spec))[ov.NFD]["worker"]["tolerations"]
    assert got[:len(defaults)] == defaults and len(got) == len(defaults) + 3
    assert startup_toleration() in got
    for t in spec.node_pools[0].taints:
        assert tolerates(got, t.key, t.value, t.effect)


def test_prod_training_taint_is_tolerated_by_operands_and_nfd():
    spec = prod()
    values = operator_values(OperatorSettings.of(spec))
    taints = [t for p in spec.node_pools for t in p.taints]
    assert taints  # prod keeps a tainted pool
    for t in taints:
        assert tolerates(values["daemonsets"]["tolerations"], t.key, t.value, t.effect)
        assert tolerates(values[ov.NFD]["worker"]["tolerations"], t.key, t.value, t.effect)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_gpu_taint_is_always_tolerated(variant):
    values = operator_values(OperatorSettings.of(VARIANTS[variant]()))
    for tolerations in (values["daemonsets"]["tolerations"], values[ov.NFD]["worker"]["tolerations"]):
        assert tolerates(tolerations, names.GPU_TAINT_KEY, names.GPU_TAINT_VALUE, "NoSchedule")


def test_gpu_taint_toleration_is_added_when_chart_defaults_lack_it():
    assert ov.with_tolerations([], []) == [{"key": names.GPU_TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"},
                                           startup_toleration()]


def test_untainted_pools_add_only_the_startup_taints_toleration():
    """Operands must run on a node before its acceptance checks can pass, gated or not: turning a pool's gate
    on then changes no operand."""
    spec = dev()
    defaults = chart_defaults(spec.gpu_operator.chart_version)
    got = operator_values(OperatorSettings.of(spec))
    for tolerations, default in ((got["daemonsets"]["tolerations"], defaults["daemonsets"]["tolerations"]),
                                 (got[ov.NFD]["worker"]["tolerations"], defaults[ov.NFD]["worker"]["tolerations"])):
        assert tolerations == [*default, startup_toleration()]


@pytest.mark.parametrize("toleration, taint, expected", [
    ({"key": "k", "operator": "Exists"}, ("k", "v", "NoSchedule"), True),
    ({"key": "k", "operator": "Exists", "effect": "NoSchedule"}, ("k", "v", "NoExecute"), False),
    ({"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}, ("k", "v", "NoSchedule"), True),
    ({"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}, ("k", "w", "NoSchedule"), False),
    ({"key": "k", "value": "v"}, ("k", "v", "PreferNoSchedule"), True),  # operator defaults to Equal
    ({"key": "other", "operator": "Exists"}, ("k", "", "NoSchedule"), False),
    ({"operator": "Exists"}, ("k", "v", "NoExecute"), True),  # no key + Exists tolerates everything
    ({"value": "v"}, ("k", "v", "NoSchedule"), False),  # no key needs Exists
])
def test_toleration_matching_follows_kubernetes(toleration, taint, expected):
    assert tolerates([toleration], *taint) is expected


# --- placement and exporter ---

def test_operator_runs_on_system_nodes_and_keeps_the_chart_selector():
    spec = dev()
    selector = operator_values(OperatorSettings.of(spec))["operator"]["nodeSelector"]
    default = chart_defaults(spec.gpu_operator.chart_version)["operator"]["nodeSelector"]
    assert selector == {**default, names.ROLE_LABEL: names.SYSTEM_ROLE}


def test_nfd_master_and_gc_selectors_are_left_out_when_the_chart_has_no_such_key():
    values = operator_values(OperatorSettings.of(dev()))
    assert set(values[ov.NFD]) == {"worker"}


def test_nfd_master_and_gc_go_to_system_nodes_when_the_chart_exposes_the_key(monkeypatch):
    spec = dev()
    defaults = chart_defaults(spec.gpu_operator.chart_version)
    for part in ("master", "gc"):
        defaults[ov.NFD][part]["nodeSelector"] = {}
    monkeypatch.setattr(ov, "chart_defaults", lambda version: defaults)
    values = operator_values(OperatorSettings.of(spec))
    for part in ("master", "gc"):
        assert values[ov.NFD][part] == {"nodeSelector": {names.ROLE_LABEL: names.SYSTEM_ROLE}}


def test_service_monitor_is_on_with_prometheus_and_matches_its_selector():
    spec = dev()
    monitor = operator_values(OperatorSettings.of(spec))["dcgmExporter"]["serviceMonitor"]
    assert monitor["enabled"] is True and monitor["additionalLabels"] == spec.monitoring.prometheus.selector_labels


def test_service_monitor_is_off_without_prometheus():
    assert operator_values(OperatorSettings.of(no_prometheus()))["dcgmExporter"]["serviceMonitor"]["enabled"] is False


def test_service_monitor_is_off_when_monitoring_is_disabled():
    platform = stack_platform("dev")
    platform["monitoring"]["enabled"] = False
    without_services(platform)  # services scale on Prometheus
    assert operator_values(OperatorSettings.of(parse_platform(platform)))["dcgmExporter"]["serviceMonitor"]["enabled"] is False


def test_exporter_reads_the_platform_metrics_configmap():
    config = operator_values(OperatorSettings.of(dev()))["dcgmExporter"]["config"]
    assert config["name"] == names.DCGM_METRICS_CONFIGMAP and config["create"] is True and config["data"]


# --- the Helm values guard ---

@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_every_key_set_exists_in_the_pinned_chart(variant):
    spec = VARIANTS[variant]()
    assert unknown_value_keys(operator_values(OperatorSettings.of(spec)), spec.gpu_operator.chart_version) == []


@pytest.mark.parametrize("section, key", REMOVED_KEYS)
def test_guard_rejects_removed_keys(section, key):
    assert unknown_value_keys({section: {key: True}}, "v26.7.0") == [f"{section}.{key}"]


@pytest.mark.parametrize("values, path", [
    ({"devicePlugin": {"confg": {"name": "x"}}}, "devicePlugin.confg"),
    ({"driver": {"upgradePolicy": {"drain": {"enabled": True}}}}, "driver.upgradePolicy.drain.enabled"),
    ({"migManger": {"enabled": True}}, "migManger"),
    ({"daemonsets": {"nodeSelector": {"a": "b"}}}, "daemonsets.nodeSelector"),  # operands are placed by labels
    ({"node-feature-discovery": {"master": {"nodeSelector": {"a": "b"}}}}, "node-feature-discovery.master.nodeSelector"),
])
def test_guard_rejects_keys_the_chart_does_not_have(values, path):
    assert unknown_value_keys(values, "v26.7.0") == [path]


def test_guard_rejects_a_map_where_the_chart_takes_a_scalar():
    problems = unknown_value_keys({"mig": {"strategy": {"value": "mixed"}}}, "v26.7.0")
    assert len(problems) == 1 and problems[0].startswith("mig.strategy")


def test_guard_treats_empty_chart_maps_and_lists_as_data():
    values = {"devicePlugin": {"config": {"data": {"any-key": "x"}}}, "daemonsets": {"tolerations": [{"key": "k"}]},
              "dcgmExporter": {"serviceMonitor": {"additionalLabels": {"release": "x"}}}}
    assert unknown_value_keys(values, "v26.7.0") == []


@pytest.mark.parametrize("chart_version", sorted(catalog.GPU_OPERATOR_CHARTS))
@pytest.mark.parametrize("path", sorted(ABSENT_BUT_READ))
def test_allow_list_entries_are_really_absent_from_values_yaml(chart_version, path):
    """An allowed key that values.yaml does have needs no exception: the allow-list must stay minimal."""
    node = chart_defaults(chart_version)
    *parents, last = path.split(".")
    for part in parents:
        node = node[part]
    assert last not in node and ABSENT_BUT_READ[path]


@pytest.mark.parametrize("chart_version", sorted(catalog.GPU_OPERATOR_CHARTS))
def test_a_values_copy_is_kept_for_every_supported_chart(chart_version):
    path = catalog.UPSTREAM / catalog.GPU_OPERATOR_CHARTS[chart_version].values_file
    assert isinstance(yaml.safe_load(path.read_text()), dict)
