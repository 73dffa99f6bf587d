"""A component's invalid arguments are Pulumi's per-property error (pulumi.errors.InputPropertiesError), each
naming the argument's path, so a component host and `pulumi up` show the property; and a SpecError, so a
program or the planner handles it as every other refusal."""
from __future__ import annotations

import pytest
from pulumi.errors import InputPropertiesError

from gpu_platform.resources.gpu_operator import operator_settings
from gpu_platform.resources.node_pool import GpuNodePoolArgs
from gpu_platform.resources.pool_args import pool_from_args
from gpu_platform.resources.team import team_settings
from gpu_platform.spec.errors import SpecError

AMI = {"type": "AL2023_x86_64_NVIDIA", "release_version": "1.35.7-20260911"}


def refusal(check, *args) -> InputPropertiesError:
    with pytest.raises(InputPropertiesError) as err:
        check(*args)
    assert isinstance(err.value, SpecError)
    return err.value


def test_a_pool_whose_mig_layout_does_not_fit_names_the_property():
    args = GpuNodePoolArgs(instance_types=["p5.48xlarge"], capacity_type="on-demand", max_size=1, ami=AMI,
                           sharing={"mode": "mig", "layout": {"1g.10gb": 99}})
    err = refusal(pool_from_args, GpuNodePoolArgs, "h100", args, "managed-node-group")
    assert [e["property_path"] for e in err.errors] == ["sharing.layout"]
    assert err.problems[0].startswith("GpuNodePool 'h100': sharing.layout: ")
    assert err.errors[0]["reason"] and err.errors[0]["reason"] in err.problems[0]


def test_a_team_with_a_negative_quota_names_the_property():
    err = refusal(team_settings, "t", {"team": "t", "quota": {"gpus": -1, "cpu": "1", "memory": "1Gi"},
                                       "kubernetes_version": "1.35"})
    assert [e["property_path"] for e in err.errors] == ["quota.gpus"]


def test_an_operator_with_an_unknown_chart_names_the_property():
    err = refusal(operator_settings, "op", {"chart_version": "v0.0.1", "driver": {"source": "ami"}})
    assert "chartVersion" in [e["property_path"] for e in err.errors]


def test_kueue_given_a_pool_of_an_unknown_instance_type_names_the_pool():
    from gpu_platform.resources.kueue import queueing_settings

    pool = {"name": "a", "instance_types": ["zz9.big"], "capacity_type": "on-demand", "max_size": 2}
    team = {"name": "ml", "quota": {"gpus": 1, "cpu": "8", "memory": "64Gi"}}
    err = refusal(queueing_settings, "q", {"chart_version": "0.14.4", "node_pools": [pool], "teams": [team]})
    refused = "KueueQueueing 'q': node_pools[0].instance_types[0]: unknown GPU instance type 'zz9.big'"
    assert err.problems[0].startswith(refused)


def _checks():
    from gpu_platform.resources import adopted_cluster, cluster, datasets, kueue, model_cache, monitoring, team
    from gpu_platform.resources.karpenter_pool import KarpenterNodePoolArgs

    return {
        "GpuNodePool": lambda a: pool_from_args(GpuNodePoolArgs, "x", a, "managed-node-group"),
        "KarpenterNodePool": lambda a: pool_from_args(KarpenterNodePoolArgs, "x", a, "karpenter"),
        "GpuOperator": lambda a: operator_settings("x", a),
        "TeamNamespace": lambda a: team_settings("x", a),
        "TeamAccess": lambda a: team.access_settings("x", a),
        "KueueQueueing": lambda a: kueue.queueing_settings("x", a),
        "GpuMonitoring": lambda a: monitoring.monitoring_settings("x", a),
        "Cluster": lambda a: cluster.cluster_settings("x", a),
        "Datasets": lambda a: datasets._file_system("x", a),
        "ModelCache": lambda a: model_cache._checked("x", a),
        "AdoptedCluster": lambda a: adopted_cluster._check("x", a),
    }


@pytest.mark.parametrize("args", [None, [("instance_types", ["g5.xlarge"])], "g5.xlarge"])
@pytest.mark.parametrize("component", sorted(_checks()))
def test_arguments_that_are_not_a_mapping_are_refused_naming_them(component, args):
    err = refusal(_checks()[component], args)
    assert err.problems == [f"{component} 'x': args: must be an object of {component}Args (keyword arguments by "
                            f"name), not {err.problems[0].rsplit('not ', 1)[1]}"]
    assert [e["property_path"] for e in err.errors] == ["args"]


def test_the_message_names_the_python_keyword_and_the_error_the_schemas_property():
    args = GpuNodePoolArgs(instance_types=["g5.xlarge"], capacity_type="spot", max_size=2, ami=AMI,
                           max_unavailable=1, max_unavailable_percent=10, disk_size_gib="big")
    err = refusal(pool_from_args, GpuNodePoolArgs, "p", args, "managed-node-group")
    assert {p.split(": ")[1] for p in err.problems} == {"max_unavailable_percent", "disk_size_gib"}
    assert {e["property_path"] for e in err.errors} == {"maxUnavailablePercent", "diskSizeGib"}  # as the schema names them


def test_a_misspelt_argument_is_named_as_written_with_the_one_meant():
    args = {**GpuNodePoolArgs(instance_types=["p5.48xlarge"], capacity_type="on-demand", ami=AMI), "max_szie": 2}
    err = refusal(pool_from_args, GpuNodePoolArgs, "h100", args, "managed-node-group")
    assert "GpuNodePool 'h100': max_szie: unknown argument; did you mean `max_size`?" in err.problems
    assert {"property_path": "maxSzie", "reason": "unknown argument; did you mean `maxSize`?"} in err.errors


def test_a_misspelt_nested_key_lists_the_python_names():
    args = GpuNodePoolArgs(instance_types=["p5.48xlarge"], capacity_type="on-demand", max_size=1,
                           ami={"type": "AL2023_x86_64_NVIDIA", "relase_version": "1.35.7-20260911"})
    err = refusal(pool_from_args, GpuNodePoolArgs, "h100", args, "managed-node-group")
    assert err.problems == ["GpuNodePool 'h100': ami.relase_version: unknown field; allowed: type, release_version, "
                            "image_id, alias; did you mean `release_version`?"]
    assert err.errors[0]["property_path"] == "ami.relaseVersion" and "`releaseVersion`" in err.errors[0]["reason"]


def test_a_misspelt_value_is_named_with_the_one_meant():
    args = GpuNodePoolArgs(instance_types=["p5.48xlarge"], capacity_type="ondemand", max_size=1, ami=AMI)
    err = refusal(pool_from_args, GpuNodePoolArgs, "h100", args, "managed-node-group")
    assert err.problems == ["GpuNodePool 'h100': capacity_type: Input should be 'spot', 'on-demand' or "
                            "'capacity-block'; did you mean 'on-demand'?"]


def test_nothing_close_suggests_nothing():
    args = {**GpuNodePoolArgs(instance_types=["p5.48xlarge"], capacity_type="on-demand", max_size=1, ami=AMI),
            "colour": "blue"}
    err = refusal(pool_from_args, GpuNodePoolArgs, "h100", args, "managed-node-group")
    assert err.problems == ["GpuNodePool 'h100': colour: unknown argument"]


def test_the_refusal_names_the_programs_arguments_not_a_stack_file():
    args = {**GpuNodePoolArgs(instance_types=["p5.48xlarge"], capacity_type="on-demand", ami=AMI), "max_szie": 2}
    err = refusal(pool_from_args, GpuNodePoolArgs, "h100", args, "managed-node-group")
    assert str(err).startswith("invalid component arguments:") and "gpu-platform:platform" not in str(err)
