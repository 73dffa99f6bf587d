"""Running a real Pulumi program (the fixture) under the mock engine and recording what it registers."""
from __future__ import annotations

import asyncio

import pytest

from gpu_platform.planner.mocks import UnansweredInvoke
from gpu_platform.planner.wire import Secret
from tests.planner.planner_fixtures import by_name, run_fixture

BOX = "fixture:index:Box"
ROOT = "urn:pulumi:test::fixture-box::pulumi:pulumi:Stack::fixture-box-test"


def test_every_registration_is_recorded(recording):
    assert sorted((r.type, r.name) for r in recording.resources) == sorted([
        (BOX, "box"), ("aws:ec2/vpc:Vpc", "box-vpc"), ("aws:iam/role:Role", "box-cluster"),
        ("aws:eks/cluster:Cluster", "box"), ("aws:eks/nodeGroup:NodeGroup", "box-gpu"),
        ("aws:efs/fileSystem:FileSystem", "box-cache"), ("pulumi:providers:kubernetes", "box-k8s"),
        ("kubernetes:core/v1:Namespace", "box"), ("kubernetes:core/v1:ConfigMap", "box-settings"),
        ("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", "box-reader"),
        ("kubernetes:helm.sh/v3:Release", "operator")])


def test_root_stack_urn_is_recorded(recording):
    assert recording.root_urn == ROOT


def test_component_is_parented_to_the_root_stack(recording):
    assert by_name(recording, BOX, "box").parent == ROOT


def test_children_are_parented_to_the_component(recording):
    box = by_name(recording, BOX, "box")
    assert {r.parent for r in recording.resources if r.type != BOX} == {box.urn}


def test_urns_carry_the_parent_type_chain_like_the_engine(recording):
    vpc = by_name(recording, "aws:ec2/vpc:Vpc", "box-vpc")
    assert vpc.urn == "urn:pulumi:test::fixture-box::fixture:index:Box$aws:ec2/vpc:Vpc::box-vpc"


def test_components_are_not_custom(recording):
    assert not by_name(recording, BOX, "box").custom and by_name(recording, "aws:ec2/vpc:Vpc", "box-vpc").custom


def test_explicit_provider_reference_is_recorded(recording):
    provider = by_name(recording, "pulumi:providers:kubernetes", "box-k8s")
    namespace = by_name(recording, "kubernetes:core/v1:Namespace", "box")
    assert namespace.provider == f"{provider.urn}::{provider.id}"


def test_default_provider_is_recorded_as_none(recording):
    assert by_name(recording, "aws:ec2/vpc:Vpc", "box-vpc").provider is None


def test_inputs_use_camel_case_wire_names_and_whole_numbers(recording):
    group = by_name(recording, "aws:eks/nodeGroup:NodeGroup", "box-gpu")
    assert group.inputs["scalingConfig"] == {"desiredSize": 1, "maxSize": 2, "minSize": 0}
    assert isinstance(group.inputs["scalingConfig"]["desiredSize"], int)


def test_inputs_carry_values_resolved_from_other_resources(recording):
    role = by_name(recording, "aws:iam/role:Role", "box-cluster")
    cluster = by_name(recording, "aws:eks/cluster:Cluster", "box")
    assert cluster.inputs["roleArn"] == role.outputs["arn"]


def test_protect_is_recorded(recording):
    assert by_name(recording, "aws:eks/cluster:Cluster", "box").options["protect"] is True


def test_unprotected_resource_records_false(recording):
    assert by_name(recording, "aws:ec2/vpc:Vpc", "box-vpc").options["protect"] is False


def test_retain_on_delete_is_recorded(recording):
    assert by_name(recording, "aws:efs/fileSystem:FileSystem", "box-cache").options["retainOnDelete"] is True


def test_ignore_changes_paths_are_recorded_verbatim(recording):
    group = by_name(recording, "aws:eks/nodeGroup:NodeGroup", "box-gpu")
    assert group.options["ignoreChanges"] == ["scalingConfig.desiredSize"]


def test_delete_before_replace_set_to_false_is_recorded(recording):
    assert by_name(recording, "aws:eks/nodeGroup:NodeGroup", "box-gpu").options["deleteBeforeReplace"] is False


def test_delete_before_replace_unset_is_none(recording):
    assert by_name(recording, "aws:eks/cluster:Cluster", "box").options["deleteBeforeReplace"] is None


def test_explicit_depends_on_is_recorded(recording):
    vpc = by_name(recording, "aws:ec2/vpc:Vpc", "box-vpc")
    assert vpc.urn in by_name(recording, "aws:eks/cluster:Cluster", "box").options["dependsOn"]


def test_input_dependencies_are_recorded(recording):
    namespace = by_name(recording, "kubernetes:core/v1:Namespace", "box")
    assert by_name(recording, "kubernetes:core/v1:ConfigMap", "box-settings").options["dependsOn"] == [namespace.urn]


def test_aliases_are_recorded(recording):
    assert by_name(recording, "aws:iam/role:Role", "box-cluster").options["aliases"] == [{"name": "old-role"}]


def test_custom_timeouts_are_recorded(recording):
    release = by_name(recording, "kubernetes:helm.sh/v3:Release", "operator")
    assert release.options["customTimeouts"] == {"create": "20m"}


def test_secret_input_keeps_its_value_behind_a_marker(recording):
    config_map = by_name(recording, "kubernetes:core/v1:ConfigMap", "box-settings")
    assert config_map.inputs["data"]["token"] == Secret("s3cr3t")


def test_stack_outputs_are_recorded(recording):
    cluster = by_name(recording, "aws:eks/cluster:Cluster", "box")
    assert recording.outputs["clusterName"] == cluster.outputs["name"]


def test_secret_stack_output_is_marked(recording):
    assert isinstance(recording.outputs["kubeconfig"], Secret)


def test_component_outputs_are_recorded(recording):
    box = by_name(recording, BOX, "box")
    assert recording.component_outputs[box.urn] == {"clusterName": recording.outputs["clusterName"]}


def test_program_error_propagates():
    with pytest.raises(RuntimeError, match="failed on purpose"):
        run_fixture(fail="program")


def test_error_inside_an_apply_propagates():
    with pytest.raises(RuntimeError, match="apply failed on purpose"):
        run_fixture(fail="apply")


def test_spec_error_propagates_with_its_problems():
    with pytest.raises(ValueError) as err:
        run_fixture(invalid=["nodePools[0].maxSize: must be at least minSize"])
    assert err.value.problems == ["nodePools[0].maxSize: must be at least minSize"]


def test_unanswered_invoke_is_refused_by_token():
    with pytest.raises(UnansweredInvoke, match="does not answer invoke aws:ec2/getVpc:getVpc"):
        run_fixture(invoke="aws:ec2/getVpc:getVpc")


def test_run_after_a_failed_run_is_clean(recording):
    with pytest.raises(RuntimeError):
        run_fixture(fail="apply")
    again = run_fixture()
    assert sorted(r.urn for r in again.resources) == sorted(r.urn for r in recording.resources)


def test_existing_cluster_is_read_through_get_cluster():
    existing = run_fixture(existingCluster="prod-gpu")
    assert existing.outputs["clusterName"] == "prod-gpu"
    assert not [r for r in existing.resources if r.type == "aws:eks/cluster:Cluster"]


def test_engine_warnings_are_kept_for_the_user():
    assert run_fixture(warn="pool a10g has no spot fallback").warnings == ["warning: pool a10g has no spot fallback"]


def test_callers_event_loop_is_left_in_place():
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        run_fixture()
        assert asyncio.get_event_loop_policy().get_event_loop() is loop
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def test_missing_program_is_an_input_error(tmp_path):
    from gpu_platform.planner.engine import run_program
    from gpu_platform.planner.errors import PlannerError

    with pytest.raises(PlannerError, match="no Pulumi program"):
        run_program(tmp_path, stack="test", config={})


# --- the SDK's type unwrapping, remembered for a run ---

def test_an_unwrapping_is_worked_out_once_per_annotation_and_each_annotation_keeps_its_own_answer():
    from typing import Optional, Union

    from gpu_platform.planner.engine import _by_identity

    seen: list = []
    remembered = _by_identity(lambda t: seen.append(t) or repr(t))
    a, b = Union[int, str], Union[str, int]  # equal to typing, yet each unwraps to its own first member
    assert [remembered(a), remembered(b), remembered(a), remembered(Optional[int])] == [repr(a), repr(b), repr(a),
                                                                                        repr(Optional[int])]
    assert seen == [a, b, Optional[int]]


def test_an_unwrapping_that_fails_is_not_remembered():
    from gpu_platform.planner.engine import _by_identity

    calls: list = []

    def refuse(t):
        calls.append(t)
        raise AssertionError("unexpected type")

    remembered = _by_identity(refuse)
    for _ in range(2):
        with pytest.raises(AssertionError):
            remembered(str)
    assert calls == [str, str]


def test_the_sdk_gets_its_own_unwrapping_back_after_a_run(recording):
    from pulumi import _types
    from pulumi.runtime import rpc

    from gpu_platform.planner.engine import _TYPE_UNWRAPPING

    assert recording.resources  # the fixture ran a program under the engine
    for module, name in _TYPE_UNWRAPPING:
        assert getattr(module, name).__module__ == module.__name__, name
    assert {m for m, _ in _TYPE_UNWRAPPING} == {_types, rpc}
