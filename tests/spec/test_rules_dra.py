"""A pool on `gpuAllocation: dra` is refused where DRA cannot work, naming the field and the reason."""
import pytest

from tests.support.dra import bottlerocket_dra, dra_pool_of, prod_with_dra
from tests.support.stacks import on_kubernetes, only_spec_problem, spec_problems


def test_the_prod_variant_with_one_dra_pool_is_valid():
    assert spec_problems(prod_with_dra()) == []


def test_a_karpenter_dra_pool_is_refused():
    platform = stack_platform_karpenter_dra()
    found = [p for p in spec_problems(platform) if ".gpuAllocation: " in p]
    assert len(found) == 1 and "Karpenter v1.14" in found[0], found


def stack_platform_karpenter_dra() -> dict:
    from tests.support.stacks import stack_platform

    platform = stack_platform("karpenter")
    pool = next(p for p in platform["nodePools"] if p.get("provisioner") == "karpenter" and
                p.get("sharing", {}).get("mode", "none") == "none")
    pool["gpuAllocation"] = "dra"
    return platform


def test_time_slicing_on_a_dra_pool_is_refused():
    platform = prod_with_dra()
    i, pool = dra_pool_of(platform)
    pool["sharing"] = {"mode": "time-slicing", "replicas": 2}
    problem = only_spec_problem(platform, f"nodePools[{i}].gpuAllocation")
    assert "time-slicing" in problem


def test_mig_on_a_dra_pool_is_refused():
    platform = prod_with_dra("h100-mig")
    i, pool = dra_pool_of(platform, "h100-mig")
    assert "MIG slices on DRA pools" in only_spec_problem(platform, f"nodePools[{i}].gpuAllocation")


@pytest.mark.parametrize("version", ["1.32", "1.33"])
def test_a_dra_pool_below_kubernetes_1_34_is_refused(version):
    platform = on_kubernetes("prod", version)
    i, pool = dra_pool_of(platform)
    pool.update(gpuAllocation="dra", minSize=pool["maxSize"])
    found = [p for p in spec_problems(platform) if p.startswith(f"nodePools[{i}].gpuAllocation: ")]
    assert len(found) == 1 and "Kubernetes 1.34 or newer" in found[0], spec_problems(platform)


def test_a_dra_node_group_has_a_fixed_size():
    platform = prod_with_dra()
    i, pool = dra_pool_of(platform)
    pool["minSize"] = 0
    assert "Cluster Autoscaler cannot" in only_spec_problem(platform, f"nodePools[{i}].minSize")


def test_an_operator_driver_older_than_r580_is_refused_for_dra():
    platform = prod_with_dra()
    platform["gpuOperator"]["driver"]["version"] = "535.309.01"
    found = [p for p in spec_problems(platform) if "allocates GPUs by DRA" in p]
    assert found and found[0].startswith("gpuOperator.driver.version: "), spec_problems(platform)


def test_bottlerocket_from_1_63_hosts_a_dra_pool():
    """Bottlerocket 1.63.0 turns its own device plugin off from user data (AWS EKS user guide)."""
    assert spec_problems(bottlerocket_dra("1.63.0-18d04e52")) == []
    assert spec_problems(bottlerocket_dra("1.66.1-0a1b2c3d")) == []


def test_a_bottlerocket_release_before_1_63_is_refused_for_dra():
    found = only_spec_problem(bottlerocket_dra("1.62.1-18d04e52"), "nodePools[0].ami.releaseVersion")
    assert "1.63.0" in found and "settings.kubelet-device-plugins.nvidia.enabled" in found, found


def test_a_bottlerocket_dra_node_turns_its_device_plugin_off():
    import base64

    from gpu_platform.decisions.node_boot import eks_image_user_data
    from gpu_platform.decisions.validation import parse_platform
    from gpu_platform.spec.pool_context import PoolContext

    for allocation, expected in (("dra", "[settings.kubelet-device-plugins.nvidia]\nenabled = false\n"),
                                 ("device-plugin", None)):
        platform = bottlerocket_dra("1.63.0-18d04e52")
        platform["nodePools"][0]["gpuAllocation"] = allocation
        spec = parse_platform(platform)
        data = eks_image_user_data(PoolContext.of(spec, spec.node_pools[0]), spec.node_pools[0])
        assert (base64.b64decode(data).decode() if data else None) == expected
