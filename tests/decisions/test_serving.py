"""Services checked against their pools before deploy: each refusal names the field a user edits; the decided
shape (resource, units, memory, surge, cold start, cost) follows the pool and the catalog."""
import pytest

from gpu_platform.decisions.capacity import service_floor_nodes
from gpu_platform.decisions.serving import plans
from gpu_platform.facts import serving
from tests.support.stacks import only_spec_problem, spec_of, spec_problems, stack_platform

QWEN = {"repo": "Qwen/Qwen3-8B", "revision": "b968826d9c46dd6066d109eabc6255188de91218"}


def _service(**over):
    service = {"name": "chat", "model": {"huggingFace": dict(QWEN), "parameterCount": 8.2, "dtype": "bf16"},
               "gpu": {"pool": "h100-mig", "migProfile": "3g.40gb"}, "replicas": {"min": 1, "max": 2}}
    service.update(over)
    return service


def _prod(service):
    platform = stack_platform("prod")
    platform["teams"][0]["services"] = [service]
    return platform


def test_the_examples_plan_their_services():
    [dev] = plans(spec_of("dev"))
    [prod] = plans(spec_of("prod"))
    assert (dev.resource, dev.units, dev.pool.name) == ("nvidia.com/gpu", 1, "a10g-spot")
    assert (prod.resource, prod.units) == ("nvidia.com/mig-3g.40gb", 1)
    assert dev.margin_gib > 0 and prod.margin_gib > 0


def test_a_mig_slice_holds_its_memory_share_of_the_gpu():
    [p] = plans(spec_of("prod"))
    assert p.memory_gib == pytest.approx(40e9 / 2**30)  # 3g on a 7-slice H100 80GB: 4/8 of its memory
    assert p.engine_memory_fraction == 0.9  # the slice is a device of its own


def test_a_time_sliced_replica_takes_its_share_of_the_gpu_and_of_the_engine_fraction():
    [p] = plans(spec_of("dev"))
    assert p.memory_gib == pytest.approx(24e9 / 2**30 / 4)
    assert p.engine_memory_fraction == pytest.approx(0.9 / 4)


def test_weights_over_the_slice_are_refused_naming_the_weights():
    problem = only_spec_problem(_prod(_service(model={"huggingFace": QWEN, "weightsGiB": 40})),
                                "teams[0].services[0].model.weightsGiB")
    assert "3g.40gb" in problem and "gpuMemoryUtilization 0.9" in problem


def test_derived_weights_over_the_slice_name_the_parameter_count():
    only_spec_problem(_prod(_service(model={"huggingFace": QWEN, "parameterCount": 30, "dtype": "bf16"})),
                      "teams[0].services[0].model.parameterCount")


def test_a_smaller_dtype_fits_where_bf16_does_not():
    fits = _service(model={"huggingFace": QWEN, "parameterCount": 30, "dtype": "int4"})
    assert spec_problems(_prod(fits)) == []


def test_the_kv_cache_floor_counts_against_the_memory():
    only_spec_problem(_prod(_service(kvCacheFloorGiB=25)), "teams[0].services[0].model.parameterCount")


def test_an_unknown_mig_profile_is_refused_with_those_offered():
    problem = only_spec_problem(_prod(_service(gpu={"pool": "h100-mig", "migProfile": "7g.80gb"})),
                                "teams[0].services[0].gpu.migProfile")
    assert "1g.10gb, 2g.20gb, 3g.40gb" in problem


def test_a_mig_profile_on_a_whole_gpu_pool_is_refused():
    only_spec_problem(_prod(_service(gpu={"pool": "a100-train", "migProfile": "3g.40gb", "count": 1})),
                      "teams[0].services[0].gpu.migProfile")


def test_tensor_parallelism_over_a_node_is_refused():
    problem = only_spec_problem(_prod(_service(gpu={"pool": "a100-train", "count": 8, "tensorParallel": 16})),
                                "teams[0].services[0].gpu.tensorParallel")
    assert "within one node" in problem and "8 GPUs" in problem


def test_more_gpus_than_a_node_gives_one_pod_are_refused():
    found = spec_problems(_prod(_service(gpu={"pool": "a100-train", "count": 9}, replicas={"min": 1, "max": 1})))
    assert any(p.startswith("teams[0].services[0].gpu.count: one node of pool a100-train") for p in found), found


def test_max_replicas_over_the_team_quota_are_refused():
    problem = only_spec_problem(_prod(_service(replicas={"min": 1, "max": 3})), "teams[0].services[0].replicas.max")
    assert "teams[0].quota.migSlices (2)" in problem


def test_max_replicas_over_the_pool_are_refused_counting_the_pools_other_services():
    platform = stack_platform("dev")
    platform["quotaOvercommitRatio"] = 2
    research, applied = platform["teams"]
    research["quota"]["gpus"] = 16
    research["services"][0]["replicas"] = {"min": 0, "max": 8}  # the whole pool: 4 nodes x 2 replicas' memory
    applied["services"] = [{**research["services"][0], "replicas": {"min": 1, "max": 4}}]
    problem = only_spec_problem(platform, "teams[1].services[0].replicas.max")
    assert "pool a10g-spot's nodes leave" in problem and "60.0 GiB of host memory at max" in problem


def test_prod_services_keep_a_warm_replica():
    problem = only_spec_problem(_prod(_service(replicas={"min": 0, "max": 2}, autoscaling={"target": 4})),
                                "teams[0].services[0].replicas.min")
    assert "prod" in problem


def test_scale_to_zero_outside_prod_needs_an_autoscaler_to_wake_it():
    platform = stack_platform("dev")
    del platform["teams"][0]["services"][0]["autoscaling"]
    only_spec_problem(platform, "teams[0].services[0].replicas.min")


def test_scale_to_zero_needs_a_pool_that_scales_from_zero():
    platform = stack_platform("dev")
    platform["clusterAutoscaler"] = {"enabled": False}
    only_spec_problem(platform, "teams[0].services[0].replicas.min")


def test_an_unknown_pool_is_refused_with_the_pools():
    problem = only_spec_problem(_prod(_service(gpu={"pool": "nope"})), "teams[0].services[0].gpu.pool")
    assert "h100-mig" in problem


def test_a_time_sliced_replica_holds_one_shared_gpu():
    platform = stack_platform("dev")
    platform["teams"][0]["services"][0]["gpu"]["count"] = 2
    found = spec_problems(platform)
    assert any(p.startswith("teams[0].services[0].gpu.count: ") for p in found), found


def test_services_need_the_model_cache():
    platform = stack_platform("dev")
    platform["modelCache"] = {"enabled": False}
    assert "teams[0].services[0]: a service reads its weights from the model cache: set modelCache.enabled" in (
        spec_problems(platform))


def test_two_services_of_a_team_cannot_share_a_name():
    platform = stack_platform("dev")
    platform["teams"][0]["services"].append(dict(platform["teams"][0]["services"][0]))
    found = spec_problems(platform)
    assert any(p.startswith("teams[0].services[1].name: ") for p in found), found


def test_weights_come_from_parameters_and_dtype():
    [p] = plans(spec_of("prod"))
    assert p.weights_gib == pytest.approx(8.2e9 * 2 / 2**30)
    assert serving.DTYPE_BYTES["int4"] == 0.5


def test_a_model_names_exactly_one_source_and_a_size():
    platform = _prod(_service(model={"huggingFace": QWEN, "s3": "s3://models/qwen", "weightsGiB": 1}))
    assert any("exactly one source" in p for p in spec_problems(platform))
    platform = _prod(_service(model={"huggingFace": QWEN}))
    assert any("weightsGiB, or parameterCount" in p for p in spec_problems(platform))


def test_a_revision_is_a_commit_not_a_branch():
    platform = _prod(_service(model={"huggingFace": {**QWEN, "revision": "main"}, "weightsGiB": 1}))
    assert any(p.startswith("teams[0].services[0].model.huggingFace.revision: ") for p in spec_problems(platform))


def test_no_surge_on_a_pool_without_warm_capacity_and_one_where_always_on_nodes_hold_a_spare():
    [cold] = plans(spec_of("prod"))
    assert cold.max_surge == 0  # h100-mig has minSize 0: a surge replica would wait for a node

    def warm(platform):
        platform["nodePools"][0]["minSize"] = 1
    [p] = plans(spec_of("prod", warm))
    assert p.pool.name == "h100-mig" and p.max_surge == 1


def test_cold_start_reads_the_weights_at_the_cache_share_then_warms_up():
    [p] = plans(spec_of("prod"))
    mibps = serving.MODEL_CACHE_CLIENT_MIBPS * serving.MODEL_CACHE_READ_SHARE
    assert p.load_seconds == -(-p.weights_gib * 1024 // mibps)
    assert p.cold_start_seconds == p.load_seconds + serving.ENGINE_WARMUP_SECONDS
    assert p.startup_failure_threshold * 10 >= 2 * p.cold_start_seconds


def test_cost_is_the_replicas_share_of_the_node_price():
    [p] = plans(spec_of("prod"))
    assert p.usd_per_hour(2) == pytest.approx(2 * p.unit_usd_per_hour)
    assert p.unit_usd_per_hour < p.pool.instances[0].price.usd_per_hour / 8  # a 3g slice: 3/7 of a GPU-hour


def test_min_replicas_hold_nodes_that_the_cost_counts_at_min():
    spec = spec_of("prod")
    pool = next(p for p in spec.node_pools if p.name == "h100-mig")
    assert pool.min_size == 0 and service_floor_nodes(spec, pool) == 1
