"""Node groups and launch templates: taint, protect, deleteBeforeReplace, desired size, critical pools,
instance allow-list, IMDSv2, encrypted volumes."""
from __future__ import annotations

from gpu_platform.facts import names
from tests.policy.harness import LAUNCH_TEMPLATE, NODE_GROUP, gpu_node_group, launch_template, options, run_resource, system_node_group

SAFE = options(protect=True, ignore_changes=("scalingConfig.desiredSize",))


def test_gpu_pool_with_gpu_taint_passes():
    assert run_resource("gpu-pool-tainted", NODE_GROUP, gpu_node_group()) == []


def test_gpu_pool_without_taints_is_refused():
    found = run_resource("gpu-pool-tainted", NODE_GROUP, gpu_node_group(taints=[]), name="a10g")
    assert len(found) == 1 and names.GPU_TAINT_KEY in found[0] and "NO_SCHEDULE" in found[0]


def test_gpu_taint_with_prefer_no_schedule_is_refused():
    taint = {"key": names.GPU_TAINT_KEY, "value": names.GPU_TAINT_VALUE, "effect": "PREFER_NO_SCHEDULE"}
    assert run_resource("gpu-pool-tainted", NODE_GROUP, gpu_node_group(taints=[taint]))


def test_gpu_instance_types_alone_make_a_gpu_pool():
    props = gpu_node_group(taints=[], labels={})
    props["labels"] = {}
    assert run_resource("gpu-pool-tainted", NODE_GROUP, props)


def test_system_node_group_needs_no_gpu_taint():
    assert run_resource("gpu-pool-tainted", NODE_GROUP, system_node_group()) == []


def test_protected_node_group_in_prod_passes():
    assert run_resource("node-group-protected", NODE_GROUP, gpu_node_group(), opts=SAFE) == []


def test_unprotected_node_group_in_prod_is_refused():
    found = run_resource("node-group-protected", NODE_GROUP, gpu_node_group(), opts=options(), name="a10g")
    assert len(found) == 1 and "in prod" in found[0] and "protect" in found[0]


def test_unprotected_node_group_in_dev_passes_by_default():
    assert run_resource("node-group-protected", NODE_GROUP, gpu_node_group(), environment="dev") == []


def test_protect_environments_come_from_config():
    found = run_resource("node-group-protected", NODE_GROUP, gpu_node_group(), environment="staging",
                         config={"environments": ["staging", "prod"]})
    assert found


def test_configured_environment_overrides_the_provider_tag():
    assert run_resource("node-group-protected", NODE_GROUP, gpu_node_group(), environment="dev",
                        config={"environment": "prod"})


def test_unknown_environment_gets_prod_strictness():
    found = run_resource("node-group-protected", NODE_GROUP, gpu_node_group(), provider=None)
    assert len(found) == 1 and "environment is unknown" in found[0]


def test_a_pool_tagged_with_its_environment_is_judged_by_it():
    """A library pool carries the environment its program gave it as a tag of its own."""
    dev = gpu_node_group(tags={names.ENVIRONMENT_TAG: "dev"})
    assert run_resource("node-group-protected", NODE_GROUP, dev, provider=None) == []
    prod = gpu_node_group(tags={names.ENVIRONMENT_TAG: "prod"})
    assert "in prod" in run_resource("node-group-protected", NODE_GROUP, prod, provider=None)[0]


def test_the_pools_own_tag_wins_over_the_providers_and_the_config_over_both():
    dev = gpu_node_group(tags={names.ENVIRONMENT_TAG: "dev"})
    assert run_resource("node-group-protected", NODE_GROUP, dev, environment="prod") == []
    assert run_resource("node-group-protected", NODE_GROUP, dev, environment="dev", config={"environment": "prod"})


def test_an_untagged_pool_without_a_provider_tag_is_still_held_to_prod():
    found = run_resource("node-group-protected", NODE_GROUP, gpu_node_group(tags={"team": "a"}), provider=None)
    assert len(found) == 1 and "`environment` on the pool's component" in found[0]


def test_delete_before_replace_is_refused():
    found = run_resource("node-group-no-delete-before-replace", NODE_GROUP, gpu_node_group(),
                         opts=options(delete_before_replace=True))
    assert len(found) == 1 and "deleteBeforeReplace" in found[0]


def test_default_replacement_order_passes():
    assert run_resource("node-group-no-delete-before-replace", NODE_GROUP, gpu_node_group(), opts=SAFE) == []


def test_ignored_desired_size_passes():
    assert run_resource("node-group-ignores-desired-size", NODE_GROUP, gpu_node_group(), opts=SAFE) == []


def test_managed_desired_size_is_refused():
    found = run_resource("node-group-ignores-desired-size", NODE_GROUP, gpu_node_group(), opts=options(protect=True))
    assert len(found) == 1 and "scalingConfig.desiredSize" in found[0]


def test_snake_case_ignore_path_does_not_count():
    opts = options(ignore_changes=("scaling_config.desired_size",))
    assert run_resource("node-group-ignores-desired-size", NODE_GROUP, gpu_node_group(), opts=opts)


def test_critical_on_demand_pool_passes():
    props = gpu_node_group(labels={names.CRITICAL_LABEL: "true"})
    assert run_resource("critical-pool-on-demand", NODE_GROUP, props) == []


def test_critical_spot_pool_is_refused():
    props = gpu_node_group(capacity="SPOT", labels={names.CRITICAL_LABEL: "true"})
    found = run_resource("critical-pool-on-demand", NODE_GROUP, props)
    assert len(found) == 1 and "SPOT" in found[0] and "on-demand" in found[0]


def test_non_critical_spot_pool_passes():
    assert run_resource("critical-pool-on-demand", NODE_GROUP, gpu_node_group(capacity="SPOT")) == []


def test_catalog_instance_types_pass_by_default():
    assert run_resource("instance-types-allowed", NODE_GROUP, gpu_node_group(instance_types=("g5.xlarge", "g5.2xlarge"))) == []
    assert run_resource("instance-types-allowed", NODE_GROUP, system_node_group()) == []


def test_instance_type_outside_the_configured_list_is_refused():
    found = run_resource("instance-types-allowed", NODE_GROUP, gpu_node_group(instance_types=("p5.48xlarge",)),
                         config={"allowedInstanceTypes": ["g5.xlarge", "g6.xlarge"]})
    assert len(found) == 1 and "p5.48xlarge" in found[0] and "g6.xlarge" in found[0]


def test_imdsv2_required_passes():
    assert run_resource("launch-template-imdsv2", LAUNCH_TEMPLATE, launch_template()) == []


def test_imdsv1_allowed_is_refused():
    found = run_resource("launch-template-imdsv2", LAUNCH_TEMPLATE, launch_template(http_tokens="optional"))
    assert len(found) == 1 and "httpTokens" in found[0]


def test_missing_metadata_options_is_refused():
    assert run_resource("launch-template-imdsv2", LAUNCH_TEMPLATE, launch_template(http_tokens=None))


def test_encrypted_volume_passes_as_string_or_bool():
    assert run_resource("launch-template-volumes-encrypted", LAUNCH_TEMPLATE, launch_template(encrypted="true")) == []
    assert run_resource("launch-template-volumes-encrypted", LAUNCH_TEMPLATE, launch_template(encrypted=True)) == []


def test_unencrypted_volume_is_refused():
    found = run_resource("launch-template-volumes-encrypted", LAUNCH_TEMPLATE, launch_template(encrypted="false"))
    assert len(found) == 1 and "/dev/xvda" in found[0]


def test_template_without_volumes_is_refused():
    assert run_resource("launch-template-volumes-encrypted", LAUNCH_TEMPLATE, launch_template(encrypted=None))
