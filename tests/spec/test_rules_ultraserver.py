"""UltraServer pools (p6e-gb200.36xlarge) are refused wherever AWS or NVIDIA documents them as unsupported,
each refusal naming the field to edit."""
import pytest

from gpu_platform.facts import catalog
from tests.support.stacks import only_spec_problem, spec_problems
from tests.support.ultraserver import pool_of, ultraserver


def test_the_example_is_valid():
    assert spec_problems(ultraserver()) == []


def test_the_catalog_knows_the_instance_from_its_sources():
    it = catalog.instance_type("p6e-gb200.36xlarge")
    assert (it.gpu, it.gpu_count, it.ami_types, it.cards, it.first_efa_card) == (
        "GB200", 4, ("AL2023_ARM_64_NVIDIA",), 17, 1)
    assert not it.gpu_model.mig_capable  # coherent driver-based memory: no MIG
    assert catalog.INSTANCE_STORE[it.name].total_gb == 22500
    assert it.family in catalog.CAPACITY_BLOCK_FAMILIES
    assert catalog.ULTRASERVERS[it.name].sizes == {"u-p6e-gb200x36": 9, "u-p6e-gb200x72": 18}
    assert catalog.CAPACITY_BLOCK_PRICES[it.name].usd_per_hour == pytest.approx(761.904 / 18, abs=1e-3)


def test_mig_is_refused_naming_the_sharing_mode():
    platform = ultraserver()
    i, pool = pool_of(platform)
    pool["sharing"] = {"mode": "mig", "strategy": "mixed", "layout": {"1g.23gb": 7}}
    found = [p for p in spec_problems(platform) if p.startswith(f"nodePools[{i}].sharing.mode: ")]
    assert any("coherent driver-based memory" in p for p in found), spec_problems(platform)


def test_r595_from_the_operator_is_refused_naming_the_driver_version():
    platform = ultraserver()
    platform["gpuOperator"]["driver"] = {"source": "operator", "version": "595.91.07"}
    found = spec_problems(platform)
    version = [p for p in found if p.startswith("gpuOperator.driver.version: ")]
    assert len(version) == 1 and "R595" in version[0] and "EFA" in version[0], found
    assert any(p.startswith("gpuOperator.driver.source: ") for p in found), found


def test_the_device_plugin_is_taken_as_aws_sets_gpus_up():
    """AWS's EKS guide keeps GPUs on the device plugin and needs DRA for ComputeDomains only."""
    platform = ultraserver()
    _, pool = pool_of(platform)
    pool["gpuAllocation"] = "device-plugin"
    assert spec_problems(platform) == []


def test_a_device_plugin_ultraserver_beside_a_dra_pool_is_refused():
    platform = ultraserver()
    i, pool = pool_of(platform)
    pool["gpuAllocation"] = "device-plugin"
    platform["nodePools"].append({**pool, "name": "gb200-dra", "gpuAllocation": "dra",
                                  "reservation": {**pool["reservation"], "id": "cr-0a1b2c3d4e5f60718"}})
    msg = only_spec_problem(platform, f"nodePools[{i}].gpuAllocation")
    assert f"nodePools[{len(platform['nodePools']) - 1}] allocates GPUs by DRA" in msg


def test_a_device_plugin_ultraserver_still_needs_the_dra_drivers_kubernetes():
    platform = ultraserver()
    i, pool = pool_of(platform)
    pool["gpuAllocation"] = "device-plugin"
    found = [p for p in spec_problems_on(platform, "1.33") if p.startswith(f"nodePools[{i}].gpuAllocation: ")]
    assert found and "ComputeDomains" in found[0] and "1.34" in found[0]


def spec_problems_on(platform: dict, version: str) -> list[str]:
    from gpu_platform.spec.field_path import FieldPath
    from gpu_platform.spec.parse import read_models
    from gpu_platform.spec.pool_context import PoolContext
    from gpu_platform.spec.rules_ultraserver import pool_rules

    spec = read_models(platform)
    i, _ = pool_of(platform)
    ctx = PoolContext(at=FieldPath.of("nodePools").index(i), cluster_name="c", kubernetes_version=version)
    return [f"{path}: {msg}" for path, msg in pool_rules(ctx, spec.node_pools[i])]


@pytest.mark.parametrize("capacity", ["on-demand", "spot"])
def test_anything_but_a_capacity_block_is_refused(capacity):
    platform = ultraserver()
    i, pool = pool_of(platform)
    pool["capacityType"] = capacity
    pool.pop("reservation")
    found = [p for p in spec_problems(platform) if p.startswith(f"nodePools[{i}].capacityType: ")]
    assert len(found) == 1 and "Capacity Blocks" in found[0], spec_problems(platform)


def test_a_block_of_part_of_an_ultraserver_is_refused():
    platform = ultraserver()
    i, pool = pool_of(platform)
    pool["reservation"]["instanceCount"] = 12
    pool.update(minSize=12, maxSize=12)
    assert "one UltraServer" in only_spec_problem(platform, f"nodePools[{i}].reservation.instanceCount")


@pytest.mark.parametrize("count", [27, 36])
def test_a_block_of_several_ultraservers_is_refused(count):
    platform = ultraserver()
    i, pool = pool_of(platform)
    pool["reservation"]["instanceCount"] = count
    pool.update(minSize=count, maxSize=count)
    msg = only_spec_problem(platform, f"nodePools[{i}].reservation.instanceCount")
    assert "9 (u-p6e-gb200x36) or 18 (u-p6e-gb200x72)" in msg and "a block each" in msg


def test_a_block_without_its_count_is_one_ultraserver_by_max_size():
    platform = ultraserver()
    i, pool = pool_of(platform)
    del pool["reservation"]["instanceCount"]
    platform["teams"] = []  # 9 nodes hold fewer GPUs than the example's teams ask
    pool.update(minSize=9, maxSize=9)
    assert spec_problems(platform) == []
    pool.update(minSize=27, maxSize=27)
    assert "one UltraServer" in only_spec_problem(platform, f"nodePools[{i}].maxSize")


def test_two_ultraservers_are_two_pools_on_two_blocks():
    platform = ultraserver()
    _, pool = pool_of(platform)
    second = {**pool, "name": "gb200-nvl-2", "reservation": {**pool["reservation"], "id": "cr-0a1b2c3d4e5f60718"}}
    platform["nodePools"].append(second)
    assert spec_problems(platform) == []


def test_an_ultraserver_pool_without_efa_is_refused():
    platform = ultraserver()
    i, pool = pool_of(platform)
    pool["efa"] = False
    assert "efa: true" in only_spec_problem(platform, f"nodePools[{i}].efa")


def test_the_x86_image_is_refused():
    platform = ultraserver()
    i, pool = pool_of(platform)
    pool["ami"]["type"] = "AL2023_x86_64_NVIDIA"
    found = [p for p in spec_problems(platform) if p.startswith(f"nodePools[{i}].ami.type: ")]
    assert any("AL2023_ARM_64_NVIDIA" in p for p in found), spec_problems(platform)


def test_a_scaling_ultraserver_group_is_refused_as_any_dra_group():
    platform = ultraserver()
    i, pool = pool_of(platform)
    pool["minSize"] = 0
    assert "fixed size" in only_spec_problem(platform, f"nodePools[{i}].minSize")
