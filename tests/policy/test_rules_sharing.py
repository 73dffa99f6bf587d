"""MIG, time-slicing and operator reach: mig-on-capable-instances, mig-layout-valid, time-slicing-forbidden,
operator-tolerates-gpu-taints."""
from __future__ import annotations

from gpu_platform.facts import names
from tests.policy.harness import (
    HELM_RELEASE,
    NODE_GROUP,
    gpu_node_group,
    operator_release,
    run_resource,
    run_stack,
    stack_resource,
    with_provider,
)

H100 = dict(instance_types=("p5.48xlarge",))
BALANCED = {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}
CONFIG = "h100-balanced"


def mig_group(config=CONFIG, **kw):
    return gpu_node_group("h100", labels={names.MIG_CONFIG_LABEL: config}, **{**H100, **kw})


def stack(release, *groups, environment="prod"):
    res = [stack_resource(HELM_RELEASE, release, "gpu-operator")]
    res += [stack_resource(NODE_GROUP, g, g["labels"].get(names.POOL_LABEL, "pool")) for g in groups]
    return with_provider(res, environment)


def test_mig_on_h100_passes():
    assert run_resource("mig-on-capable-instances", NODE_GROUP, mig_group()) == []


def test_mig_on_a10g_is_refused():
    found = run_resource("mig-on-capable-instances", NODE_GROUP, mig_group(instance_types=("g5.xlarge",)))
    assert len(found) == 1 and "g5.xlarge have no MIG" in found[0] and "p5.48xlarge" in found[0]


def test_mig_on_bottlerocket_is_refused():
    found = run_resource("mig-on-capable-instances", NODE_GROUP, mig_group(ami_type="BOTTLEROCKET_x86_64_NVIDIA"))
    assert len(found) == 1 and "BOTTLEROCKET" in found[0]


def test_all_disabled_selects_no_layout():
    props = mig_group(config=names.MIG_ALL_DISABLED, instance_types=("g5.xlarge",))
    assert run_resource("mig-on-capable-instances", NODE_GROUP, props) == []


def test_valid_layout_passes():
    release = operator_release(mig={CONFIG: BALANCED}, strategy="mixed")
    assert run_stack("mig-layout-valid", stack(release, mig_group())) == []


def test_layout_that_fits_compute_but_not_placement_is_refused():
    release = operator_release(mig={CONFIG: {"3g.40gb": 2, "1g.10gb": 1}}, strategy="mixed")
    found = run_stack("mig-layout-valid", stack(release, mig_group()))
    assert len(found) == 1 and "does not fit one H100-80GB-HBM3" in found[0][0] and "placement" in found[0][0]


def test_profile_of_another_gpu_is_refused():
    release = operator_release(mig={CONFIG: {"1g.5gb": 7}}, strategy="mixed")
    found = run_stack("mig-layout-valid", stack(release, mig_group()))
    assert len(found) == 1 and "1g.5gb" in found[0][0]


def test_selected_config_missing_from_the_mig_file_is_refused():
    release = operator_release(mig={"other": BALANCED}, strategy="mixed")
    found = run_stack("mig-layout-valid", stack(release, mig_group()))
    assert len(found) == 1 and "does not define" in found[0][0]


def test_mig_file_breaking_upstream_rules_is_refused():
    release = operator_release(mig={CONFIG: BALANCED}, strategy="mixed")
    release["values"]["migManager"]["config"]["data"][names.MIG_PARTED_CONFIG_KEY] = "version: v2\nmig-configs: {}\n"
    found = run_stack("mig-layout-valid", stack(release, mig_group()))
    assert found and all(urn.endswith("::gpu-operator") for _, urn in found)


def test_disabled_mig_manager_is_refused():
    release = operator_release(mig={CONFIG: BALANCED}, strategy="mixed")
    release["values"]["migManager"]["enabled"] = False
    assert run_stack("mig-layout-valid", stack(release, mig_group()))


def test_mig_pools_without_an_operator_in_the_stack_are_refused_naming_both_fixes():
    groups = with_provider([stack_resource(NODE_GROUP, mig_group(), "h100")], "dev")
    ((message, urn),) = run_stack("mig-layout-valid", groups)
    assert "installs no GPU Operator" in message and "GpuOperator" in message and "existingGpuOperator: true" in message


def test_mig_pools_on_a_cluster_that_runs_the_operator_pass():
    groups = with_provider([stack_resource(NODE_GROUP, mig_group(), "h100")], "dev")
    assert run_stack("mig-layout-valid", groups, {"existingGpuOperator": True}) == []


def test_an_operator_in_the_stack_is_checked_even_when_the_cluster_runs_one():
    release = operator_release(mig={"other": BALANCED}, strategy="mixed")
    found = run_stack("mig-layout-valid", stack(release, mig_group()), {"existingGpuOperator": True})
    assert found and "does not define" in found[0][0]


def test_time_slicing_in_dev_passes():
    release = operator_release(time_slicing={"ts-4": 4})
    group = gpu_node_group(labels={names.DEVICE_PLUGIN_CONFIG_LABEL: "ts-4"})
    assert run_stack("time-slicing-forbidden", stack(release, group, environment="dev")) == []


def test_time_slicing_in_prod_is_refused():
    release = operator_release(time_slicing={"ts-4": 4})
    group = gpu_node_group(labels={names.DEVICE_PLUGIN_CONFIG_LABEL: "ts-4"})
    found = run_stack("time-slicing-forbidden", stack(release, group))
    assert len(found) == 1 and "4 ways" in found[0][0] and "environment prod" in found[0][0]


def test_time_slicing_on_a_critical_pool_is_refused_anywhere():
    release = operator_release(time_slicing={"ts-2": 2})
    group = gpu_node_group(labels={names.DEVICE_PLUGIN_CONFIG_LABEL: "ts-2", names.CRITICAL_LABEL: "true"})
    found = run_stack("time-slicing-forbidden", stack(release, group, environment="dev"))
    assert len(found) == 1 and "critical" in found[0][0]


def test_time_slicing_on_a_listed_pool_is_refused():
    release = operator_release(time_slicing={"ts-4": 4})
    group = gpu_node_group("shared", labels={names.DEVICE_PLUGIN_CONFIG_LABEL: "ts-4"})
    found = run_stack("time-slicing-forbidden", stack(release, group, environment="dev"), config={"pools": ["shared"]})
    assert len(found) == 1 and "pool shared" in found[0][0]


def test_time_slicing_by_default_config_counts():
    release = operator_release(time_slicing={"ts-4": 4})
    release["values"]["devicePlugin"]["config"]["default"] = "ts-4"
    assert run_stack("time-slicing-forbidden", stack(release, gpu_node_group()))


def test_prod_may_allow_time_slicing_through_config():
    release = operator_release(time_slicing={"ts-4": 4})
    group = gpu_node_group(labels={names.DEVICE_PLUGIN_CONFIG_LABEL: "ts-4"})
    assert run_stack("time-slicing-forbidden", stack(release, group), config={"environments": []}) == []


TRAINING = {"effect": "NO_SCHEDULE", "key": "workload", "value": "training"}
GPU_TAINT = {"effect": "NO_SCHEDULE", "key": names.GPU_TAINT_KEY, "value": names.GPU_TAINT_VALUE}
GPU_TOLERATION = {"effect": "NoSchedule", "key": names.GPU_TAINT_KEY, "operator": "Exists"}


def test_operator_tolerating_every_taint_passes():
    toleration = {"effect": "NoSchedule", "key": "workload", "operator": "Equal", "value": "training"}
    release = operator_release(tolerations=[GPU_TOLERATION, toleration], nfd_tolerations=[GPU_TOLERATION, toleration])
    group = gpu_node_group(taints=[GPU_TAINT, TRAINING])
    assert run_stack("operator-tolerates-gpu-taints", stack(release, group)) == []


def test_extra_taint_untolerated_by_nfd_is_refused():
    toleration = {"key": "workload", "operator": "Exists"}
    release = operator_release(tolerations=[GPU_TOLERATION, toleration])
    found = run_stack("operator-tolerates-gpu-taints", stack(release, gpu_node_group(taints=[GPU_TAINT, TRAINING])))
    assert len(found) == 1 and "node-feature-discovery.worker.tolerations" in found[0][0]


def test_chart_default_tolerations_cover_only_the_gpu_taint():
    release = operator_release()
    del release["values"]["daemonsets"]
    del release["values"]["node-feature-discovery"]
    assert run_stack("operator-tolerates-gpu-taints", stack(release, gpu_node_group())) == []
    assert len(run_stack("operator-tolerates-gpu-taints", stack(release, gpu_node_group(taints=[GPU_TAINT, TRAINING])))) == 2


def test_equal_toleration_with_another_value_does_not_match():
    wrong = {"effect": "NoSchedule", "key": "workload", "operator": "Equal", "value": "inference"}
    release = operator_release(tolerations=[GPU_TOLERATION, wrong], nfd_tolerations=[GPU_TOLERATION, wrong])
    assert len(run_stack("operator-tolerates-gpu-taints", stack(release, gpu_node_group(taints=[GPU_TAINT, TRAINING])))) == 2


# --- device-plugin-config-valid ---

def test_device_plugin_config_the_release_carries_passes():
    release = operator_release(time_slicing={"ts-4": 4})
    groups = [gpu_node_group("shared", labels={names.DEVICE_PLUGIN_CONFIG_LABEL: "ts-4"}), gpu_node_group()]
    assert run_stack("device-plugin-config-valid", stack(release, *groups)) == []


def test_device_plugin_config_missing_from_the_release_is_refused():
    release = operator_release(time_slicing={"ts-4": 4})
    group = gpu_node_group("shared", labels={names.DEVICE_PLUGIN_CONFIG_LABEL: "ts-8"})
    ((message, urn),) = run_stack("device-plugin-config-valid", stack(release, group))
    assert "'ts-8'" in message and "defined: default, ts-4" in message and urn.endswith("::shared")


def test_device_plugin_default_missing_from_the_release_is_refused():
    release = operator_release()
    release["values"]["devicePlugin"]["config"]["default"] = "ts-2"
    ((message, urn),) = run_stack("device-plugin-config-valid", stack(release, gpu_node_group()))
    assert "devicePlugin.config.default 'ts-2'" in message and urn.endswith("::gpu-operator")


def test_device_plugin_config_label_without_an_operator_is_refused():
    group = gpu_node_group("shared", labels={names.DEVICE_PLUGIN_CONFIG_LABEL: "ts-4"})
    res = with_provider([stack_resource(NODE_GROUP, group, "shared")], "prod")
    assert run_stack("device-plugin-config-valid", res)


def test_device_plugin_configmap_made_outside_the_release_is_not_second_guessed():
    release = operator_release()
    release["values"]["devicePlugin"]["config"] = {"create": False, "name": "site-device-plugin-configs"}
    group = gpu_node_group("shared", labels={names.DEVICE_PLUGIN_CONFIG_LABEL: "site-ts-4"})
    assert run_stack("device-plugin-config-valid", stack(release, group)) == []


def test_a_device_plugin_config_is_parsed_once_however_many_pools_name_it(monkeypatch):
    """Every GPU pool of a large stack names one of a few device-plugin configs, and several rules read each
    pool's: the config text is parsed once, not once per pool per rule."""
    import yaml

    from gpu_platform.policy import sharing

    parsed: list[str] = []
    real = yaml.safe_load
    monkeypatch.setattr(sharing.yaml, "safe_load", lambda text: parsed.append(text) or real(text))
    text = "version: v1\nsharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/gpu\n      replicas: 13\n"
    values = {"devicePlugin": {"config": {"default": "ts-13", "data": {"ts-13": text}}}}
    pools = [{"labels": {}} for _ in range(50)]
    assert [sharing.time_slicing_replicas(p, values) for p in pools] == [13] * 50
    assert parsed == [text]
