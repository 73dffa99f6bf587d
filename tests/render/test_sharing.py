"""Device-plugin and mig-parted files: rendered per pool setting, and held to their upstream rules."""
import itertools

import pytest
import yaml

from gpu_platform.decisions.sharing import mig_layout_tag, operand_labels, sharing_labels
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.facts.catalog import INSTANCE_TYPES, mig_class
from gpu_platform.facts.mig import fits
from gpu_platform.render.sharing import check_device_plugin_config, check_mig_parted_config, device_plugin_configs, mig_parted_config
from tests.support.stacks import spec_with_pools, stack_platform

UPSTREAM = catalog.UPSTREAM
AL2023 = {"type": "AL2023_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"}
BOTTLEROCKET = {"type": "BOTTLEROCKET_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"}


def pool(name, instance, sharing=None, ami=AL2023, **extra):
    out = {"name": name, "instanceTypes": [instance], "capacityType": "on-demand", "minSize": 0, "maxSize": 2,
           "ami": dict(ami), **extra}
    if sharing:
        out["sharing"] = sharing
    return out


def ts(replicas, fail=None):
    out = {"mode": "time-slicing", "replicas": replicas}
    if fail is not None:
        out["failRequestsGreaterThanOne"] = fail
    return out


def mig(layout, strategy="mixed"):
    return {"mode": "mig", "strategy": strategy, "layout": layout}


def load(text):
    return yaml.safe_load(text)


# --- device plugin: rendering ---

def test_dev_renders_default_and_one_time_slicing_entry():
    spec = parse_platform(stack_platform("dev"))
    replicas = spec.node_pools[0].sharing.replicas
    expected = {names.DEVICE_PLUGIN_DEFAULT_CONFIG, names.device_plugin_config_key(replicas)}
    assert set(device_plugin_configs(spec.node_pools, spec.mig_strategy)) == expected


def test_time_slicing_entry_has_the_upstream_shape():
    spec = spec_with_pools(pool("a", "g5.xlarge", ts(4)))
    doc = load(device_plugin_configs(spec.node_pools, spec.mig_strategy)[names.device_plugin_config_key(4)])
    assert doc == {"version": "v1", "flags": {"migStrategy": spec.mig_strategy}, "sharing": {"timeSlicing": {
        "renameByDefault": False, "failRequestsGreaterThanOne": True,
        "resources": [{"name": names.GPU_RESOURCE, "replicas": 4}]}}}


def test_one_entry_per_distinct_time_slicing_setting():
    spec = spec_with_pools(pool("a", "g5.xlarge", ts(4)), pool("b", "g6.xlarge", ts(4)), pool("c", "g5.2xlarge", ts(8)),
                   pool("d", "g6e.xlarge", ts(4, fail=False)))
    expected = {names.DEVICE_PLUGIN_DEFAULT_CONFIG, names.device_plugin_config_key(4),
                names.device_plugin_config_key(8), names.device_plugin_config_key(4, False)}
    assert set(device_plugin_configs(spec.node_pools, spec.mig_strategy)) == expected


def test_fail_requests_greater_than_one_follows_the_pool():
    spec = spec_with_pools(pool("a", "g5.xlarge", ts(3, fail=False)))
    doc = load(device_plugin_configs(spec.node_pools, spec.mig_strategy)[names.device_plugin_config_key(3, False)])
    assert doc["sharing"]["timeSlicing"]["failRequestsGreaterThanOne"] is False


def test_default_entry_shares_nothing():
    spec = spec_with_pools(pool("a", "g5.xlarge", ts(4)))
    doc = load(device_plugin_configs(spec.node_pools, spec.mig_strategy)[names.DEVICE_PLUGIN_DEFAULT_CONFIG])
    assert "sharing" not in doc and doc["flags"]["migStrategy"] == spec.mig_strategy


@pytest.mark.parametrize("strategy", ["single", "mixed"])
def test_every_entry_carries_the_cluster_mig_strategy(strategy):
    spec = spec_with_pools(pool("a", "g5.xlarge", ts(2)), pool("m", "p5.48xlarge", mig({"1g.10gb": 7}, strategy)))
    assert {load(t)["flags"]["migStrategy"] for t in device_plugin_configs(spec.node_pools, spec.mig_strategy).values()} == {strategy}


def test_rendered_device_plugin_entries_pass_the_upstream_rules():
    spec = spec_with_pools(pool("a", "g5.xlarge", ts(2)), pool("b", "g6.xlarge", ts(64, fail=False)),
                   pool("m", "p5.48xlarge", mig({"3g.40gb": 2})))
    for key, text in device_plugin_configs(spec.node_pools, spec.mig_strategy).items():
        assert check_device_plugin_config(text) == [], key


def test_time_slicing_pool_selects_an_existing_entry():
    spec = spec_with_pools(pool("a", "g5.xlarge", ts(4, fail=False)), pool("b", "g6.xlarge"))
    data = device_plugin_configs(spec.node_pools, spec.mig_strategy)
    a, b = (sharing_labels(p) for p in spec.node_pools)
    assert a[names.DEVICE_PLUGIN_CONFIG_LABEL] in data
    assert names.DEVICE_PLUGIN_CONFIG_LABEL not in b  # falls back to devicePlugin.config.default


# --- MIG manager: rendering ---

def test_mig_file_has_all_disabled_and_the_pool_layout():
    layout = {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}
    spec = spec_with_pools(pool("m", "p5.48xlarge", mig(layout)))
    configs = load(mig_parted_config(spec.node_pools))["mig-configs"]
    assert configs == {names.MIG_ALL_DISABLED: [{"devices": "all", "mig-enabled": False}],
                       "pool-m": [{"devices": "all", "mig-enabled": True, "mig-devices": layout}]}


def test_mig_file_top_level_is_version_and_configs_only():
    spec = spec_with_pools(pool("m", "p5.48xlarge", mig({"7g.80gb": 1})))
    assert list(load(mig_parted_config(spec.node_pools))) == ["version", "mig-configs"]


def test_one_mig_config_per_pool_the_mig_manager_serves():
    """A pool's config keeps its name while its layout changes, so running nodes are never relabelled."""
    same = {"1g.10gb": 7}
    spec = spec_with_pools(pool("h1", "p5.48xlarge", mig(same)), pool("h2", "p5.48xlarge", mig(same)),
                           pool("a80", "p4de.24xlarge"), pool("l4", "g6.xlarge"))
    configs = load(mig_parted_config(spec.node_pools))["mig-configs"]
    assert list(configs) == [names.MIG_ALL_DISABLED, "pool-a80", "pool-h1", "pool-h2"]  # no MIG on L4
    assert configs["pool-a80"] == configs[names.MIG_ALL_DISABLED]  # MIG-capable, no layout: disabled
    assert configs["pool-h1"] == configs["pool-h2"]


def test_mig_label_is_stable_and_the_layout_tag_follows_the_layout():
    one = spec_with_pools(pool("h", "p5.48xlarge", mig({"1g.10gb": 7})))
    two = spec_with_pools(pool("h", "p5.48xlarge", mig({"7g.80gb": 1})))
    off = spec_with_pools(pool("h", "p5.48xlarge"))
    labels = {sharing_labels(s.node_pools[0])[names.MIG_CONFIG_LABEL] for s in (one, two, off)}
    tags = [mig_layout_tag(s.node_pools[0])[names.MIG_LAYOUT_TAG] for s in (one, two, off)]
    assert labels == {"pool-h"}
    assert tags == ["h100-80gb-hbm3-7x1g.10gb", "h100-80gb-hbm3-1x7g.80gb", names.MIG_ALL_DISABLED]


def test_pools_without_the_mig_manager_carry_no_layout_tag():
    spec = spec_with_pools(pool("l4", "g6.xlarge"))
    assert mig_layout_tag(spec.node_pools[0]) == {} and names.MIG_CONFIG_LABEL not in sharing_labels(spec.node_pools[0])


def test_zero_counts_are_dropped_from_mig_devices():
    spec = spec_with_pools(pool("m", "p5.48xlarge", mig({"3g.40gb": 2, "1g.10gb": 0})))
    name = sharing_labels(spec.node_pools[0])[names.MIG_CONFIG_LABEL]
    assert load(mig_parted_config(spec.node_pools))["mig-configs"][name][0]["mig-devices"] == {"3g.40gb": 2}


def test_mig_file_does_not_depend_on_the_order_profiles_were_written_in():
    layout = {"1g.10gb": 2, "3g.40gb": 1, "2g.20gb": 1}
    reordered = dict(reversed(list(layout.items())))
    assert mig_parted_config((spec_with_pools(pool("m", "p5.48xlarge", mig(layout)))).node_pools) == \
        mig_parted_config((spec_with_pools(pool("m", "p5.48xlarge", mig(reordered)))).node_pools)


def test_mig_devices_list_larger_instances_first():
    spec = spec_with_pools(pool("m", "p5.48xlarge", mig({"1g.10gb": 2, "2g.20gb": 1, "3g.40gb": 1})))
    (devices,) = [c[0]["mig-devices"] for n, c in load(mig_parted_config(spec.node_pools))["mig-configs"].items()
                  if n != names.MIG_ALL_DISABLED]
    assert list(devices) == ["3g.40gb", "2g.20gb", "1g.10gb"]


def test_without_mig_pools_only_all_disabled_is_rendered():
    spec = parse_platform(stack_platform("dev"))
    assert list(load(mig_parted_config(spec.node_pools))["mig-configs"]) == [names.MIG_ALL_DISABLED]


def test_every_pool_selects_an_existing_mig_config():
    spec = spec_with_pools(pool("m", "p5.48xlarge", mig({"2g.20gb": 3})), pool("plain", "p4d.24xlarge"))
    configs = load(mig_parted_config(spec.node_pools))["mig-configs"]
    for p in spec.node_pools:
        assert sharing_labels(p)[names.MIG_CONFIG_LABEL] in configs


def test_prod_mig_file_passes_the_upstream_rules():
    assert check_mig_parted_config(mig_parted_config((parse_platform(stack_platform("prod"))).node_pools)) == []


def _layouts(gpu):
    profiles = list(gpu.mig_profiles)
    for counts in itertools.product(*(range(mig_class(gpu, p).max_per_gpu + 1) for p in profiles)):
        layout = {p: n for p, n in zip(profiles, counts, strict=True) if n}
        if layout and fits(gpu, layout):
            yield layout


def test_every_valid_h100_layout_renders_a_valid_mig_file():
    gpu = INSTANCE_TYPES["p5.48xlarge"].gpu_model
    for layout in _layouts(gpu):
        spec = spec_with_pools(pool("m", "p5.48xlarge", mig(layout)))
        text = mig_parted_config(spec.node_pools)
        assert check_mig_parted_config(text) == [], layout
        assert load(text)["mig-configs"]["pool-m"][0]["mig-devices"] == layout


# --- Bottlerocket: its own device plugin and MIG manager ---

def test_bottlerocket_pool_turns_operator_operands_off():
    spec = spec_with_pools(pool("br", "g5.xlarge", ami=BOTTLEROCKET))
    labels = operand_labels(spec.node_pools[0])
    assert labels == {names.gpu_deploy_label(op): "false"
                      for op in ("driver", "container-toolkit", "device-plugin", "mig-manager")}


def test_bottlerocket_mig_gpu_gets_no_mig_config_label():
    spec = spec_with_pools(pool("br", "p4d.24xlarge", ami=BOTTLEROCKET))
    assert names.MIG_CONFIG_LABEL not in sharing_labels(spec.node_pools[0])


def test_al2023_pool_keeps_every_operand():
    assert operand_labels(spec_with_pools(pool("a", "g5.xlarge")).node_pools[0]) == {}


# --- device plugin: upstream rules ---

GOOD_DP = """
version: v1
flags:
  migStrategy: none
sharing:
  timeSlicing:
    renameByDefault: false
    failRequestsGreaterThanOne: true
    resources:
    - name: nvidia.com/gpu
      replicas: 4
"""


def dp(mutate):
    doc = load(GOOD_DP)
    mutate(doc)
    return yaml.safe_dump(doc)


def _ts(doc):
    return doc["sharing"]["timeSlicing"]


def test_reference_device_plugin_example_is_valid():
    assert check_device_plugin_config(GOOD_DP) == []


@pytest.mark.parametrize("mutate, where", [
    (lambda d: d.update(version="v2"), "version"),
    (lambda d: d.pop("version"), "version"),
    (lambda d: d["flags"].update(migStrategy="auto"), "flags.migStrategy"),
    (lambda d: d.update(flags=["none"]), "flags"),
    (lambda d: _ts(d).update(resources=[]), "sharing.timeSlicing.resources"),
    (lambda d: _ts(d).pop("resources"), "sharing.timeSlicing.resources"),
    (lambda d: _ts(d)["resources"][0].update(replicas=1), "sharing.timeSlicing.resources[0].replicas"),
    (lambda d: _ts(d)["resources"][0].update(replicas="4"), "sharing.timeSlicing.resources[0].replicas"),
    (lambda d: _ts(d)["resources"][0].update(replicas=True), "sharing.timeSlicing.resources[0].replicas"),
    (lambda d: _ts(d)["resources"][0].pop("name"), "sharing.timeSlicing.resources[0].name"),
    (lambda d: _ts(d)["resources"][0].update(name="amd.com/gpu"), "sharing.timeSlicing.resources[0].name"),
    (lambda d: _ts(d)["resources"][0].update(name="nvidia.com/" + "g" * 64), "sharing.timeSlicing.resources[0].name"),
    (lambda d: _ts(d).update(renameByDefault="no"), "sharing.timeSlicing.renameByDefault"),
    (lambda d: _ts(d).update(failRequestsGreaterThanOne=1), "sharing.timeSlicing.failRequestsGreaterThanOne"),
    (lambda d: d["sharing"].update(mps={"resources": [{"name": "nvidia.com/gpu", "replicas": 2}]}), "sharing"),
    (lambda d: d["sharing"].update(mps={"resources": []}), "sharing.mps.resources"),
])
def test_device_plugin_rule_violations_are_reported(mutate, where):
    problems = check_device_plugin_config(dp(mutate))
    assert any(p.startswith(where + ":") for p in problems), problems


@pytest.mark.parametrize("mutate", [
    lambda d: _ts(d)["resources"][0].update(name="gpu"),  # a bare name gets the nvidia.com/ prefix
    lambda d: _ts(d)["resources"][0].update(name="nvidia.com/" + "g" * 63),
    lambda d: _ts(d)["resources"][0].update(name="nvidia.com/mig-1g.10gb"),
    lambda d: _ts(d)["resources"][0].update(replicas=2),
    lambda d: d["flags"].update(migStrategy="mixed"),
    lambda d: d.pop("sharing"),
])
def test_device_plugin_edge_cases_within_the_rules_are_valid(mutate):
    assert check_device_plugin_config(dp(mutate)) == []


@pytest.mark.parametrize("text", ["- a list", "version: [v1", ""])
def test_device_plugin_file_must_be_a_yaml_mapping(text):
    assert check_device_plugin_config(text) != []


# --- mig-parted: upstream rules ---

GOOD_MIG = """
version: v1
mig-configs:
  all-disabled:
  - devices: all
    mig-enabled: false
  h100-balanced:
  - devices: all
    mig-enabled: true
    mig-devices:
      "3g.40gb": 1
      "2g.20gb": 1
      "1g.10gb": 2
"""


def mp(mutate):
    doc = load(GOOD_MIG)
    mutate(doc)
    return yaml.safe_dump(doc)


def _item(doc):
    return doc["mig-configs"]["h100-balanced"][0]


def test_reference_mig_example_is_valid():
    assert check_mig_parted_config(GOOD_MIG) == []


@pytest.mark.parametrize("mutate, where", [
    (lambda d: d.update(flags={}), "unknown top-level key(s) flags"),
    (lambda d: d.update(version="v2"), "version"),
    (lambda d: d.pop("mig-configs"), "mig-configs"),
    (lambda d: d.update({"mig-configs": {}}), "mig-configs"),
    (lambda d: d["mig-configs"].pop("all-disabled"), "mig-configs"),
    (lambda d: d["mig-configs"]["all-disabled"][0].update({"mig-enabled": True, "mig-devices": {"7g.80gb": 1}}),
     "mig-configs.all-disabled"),
    (lambda d: d["mig-configs"].update({"empty": []}), "mig-configs.empty"),
    (lambda d: _item(d).pop("devices"), "mig-configs.h100-balanced[0].devices"),
    (lambda d: _item(d).update(devices="some"), "mig-configs.h100-balanced[0].devices"),
    (lambda d: _item(d).update(devices=[]), "mig-configs.h100-balanced[0].devices"),
    (lambda d: _item(d).update(devices=[-1]), "mig-configs.h100-balanced[0].devices"),
    (lambda d: _item(d).update(devices=["0"]), "mig-configs.h100-balanced[0].devices"),
    (lambda d: _item(d).pop("mig-enabled"), "mig-configs.h100-balanced[0].mig-enabled"),
    (lambda d: _item(d).update({"mig-enabled": "yes"}), "mig-configs.h100-balanced[0].mig-enabled"),
    (lambda d: _item(d).pop("mig-devices"), "mig-configs.h100-balanced[0].mig-devices"),
    (lambda d: _item(d).update({"mig-devices": {}}), "mig-configs.h100-balanced[0].mig-devices"),
    (lambda d: _item(d).update({"mig-devices": {"3g.40gb": 0, "1g.10gb": 0}}), "mig-configs.h100-balanced[0].mig-devices"),
    (lambda d: _item(d).update({"mig-devices": {"3g.40gb": -1}}), "mig-configs.h100-balanced[0].mig-devices.3g.40gb"),
    (lambda d: _item(d).update({"mig-enabled": False}), "mig-configs.h100-balanced[0].mig-devices"),
    (lambda d: _item(d).update({"device-filter": "0x2330"}), "mig-configs.h100-balanced[0].device-filter"),
    (lambda d: _item(d).update({"device-filter": ["0x233010DE", "H100"]}), "mig-configs.h100-balanced[0].device-filter"),
    (lambda d: _item(d).update({"mig-device": {"1g.10gb": 1}}), "mig-configs.h100-balanced[0].mig-device"),
])
def test_mig_rule_violations_are_reported(mutate, where):
    problems = check_mig_parted_config(mp(mutate))
    assert any(p.startswith(where) for p in problems), problems


@pytest.mark.parametrize("mutate", [
    lambda d: _item(d).update(devices=[0, 1, 7]),
    lambda d: _item(d).update({"device-filter": "0x233010DE"}),
    lambda d: _item(d).update({"device-filter": ["0x233010DE", "0x232210DE"]}),
    lambda d: _item(d).update({"mig-devices": {"3g.40gb": 2, "1g.10gb": 0}}),
    lambda d: d["mig-configs"]["h100-balanced"].append({"devices": [3], "mig-enabled": False}),
])
def test_mig_edge_cases_within_the_rules_are_valid(mutate):
    assert check_mig_parted_config(mp(mutate)) == []


def test_upstream_default_mig_configs_follow_the_rules_except_empty_all_enabled():
    """NVIDIA's own default file: every entry passes but `all-enabled`, which lists no MIG devices."""
    text = load((UPSTREAM / "default-mig-parted-config-v26.7.0.yaml").read_text())["data"]["config.yaml"]
    problems = check_mig_parted_config(text)
    assert problems and all(p.startswith("mig-configs.all-enabled[0].mig-devices") for p in problems), problems
