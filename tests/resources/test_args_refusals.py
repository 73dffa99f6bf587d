"""What the stack file refuses, each component alone refuses too, naming the argument: a namespace shared by
two teams, MIG profiles given as one string, DRA with MIG, node selectors Kubernetes refuses, a required
argument None or empty, a version given as a number, an Output where the component reads the value, a list
where a map is read, an EFA pool without its VPC, a Kueue pool of two GPU models. Each before any resource
registers."""
from __future__ import annotations

import pytest

from gpu_platform.spec.errors import SpecError
from tests.support.programs import run

AMI = '{"type": "AL2023_x86_64_NVIDIA", "release_version": "1.35.7-20260911"}'
ADDONS = ('{"vpc-cni": "v1.22.4-eksbuild.3", "coredns": "v1.13.2-eksbuild.31", "kube-proxy": "v1.35.3-eksbuild.29", '
          '"eks-pod-identity-agent": "v1.3.10-eksbuild.3"}')


def refused(tmp_path, program: str) -> list[str]:
    with pytest.raises(SpecError) as err:
        recording = run(tmp_path, "import pulumi\nimport gpu_platform as g\n" + program)
        assert not recording.resources  # never reached: refused first
    return err.value.problems


def test_two_teams_in_one_namespace_are_refused(tmp_path):
    problems = refused(tmp_path, """g.Datasets("d", g.DatasetsArgs(
    cluster_name="c", vpc_id="vpc-0123456789abcdef0", subnet_id="subnet-0aaa1111bbbb2222c",
    node_security_group_id="sg-0123456789abcdef0", fsx_lustre={"addon_version": "v1.7.0-eksbuild.1"},
    team_namespaces={"research": "ml", "batch": "ml"}))""")
    assert problems == ["Datasets 'd': team_namespaces[\"batch\"]: namespace 'ml' is team 'research''s already; "
                        "map each team to its own namespace"]


@pytest.mark.parametrize("argument, given", [("mig_profiles", '"1g.10gb"'),
                                             ("quota", '{"cpu": "1", "memory": "1Gi", "mig_slices": "1g.10gb"}')])
def test_mig_profiles_as_one_string_are_refused_naming_the_argument(tmp_path, argument, given):
    quota = '{"cpu": "1", "memory": "1Gi"}'
    args = {"mig_profiles": '["1g.10gb"]', "quota": quota, argument: given}
    problems = refused(tmp_path, f"""g.TeamNamespace("t", g.TeamNamespaceArgs(team="t", kubernetes_version="1.35",
    quota={args["quota"]}, mig_profiles={args["mig_profiles"]}))""")
    path = "mig_profiles" if argument == "mig_profiles" else "quota.mig_slices"
    expected = "a list" if argument == "mig_profiles" else "an object"
    assert problems == [f"TeamNamespace 't': {path}: must be {expected}, not a str"]


def test_the_gpu_operator_refuses_dra_with_mig_and_node_selectors_kubernetes_refuses(tmp_path):
    problems = refused(tmp_path, f"""g.GpuOperator("op", g.GpuOperatorArgs(
    chart_version="v26.7.0", driver={{"source": "ami"}}, kubernetes_version="1.35",
    system_node_selector={{"bad key!": "x"}}, service_monitor_labels={{"release": "-no-"}},
    pools=[{{"name": "h100", "instance_types": ["p5.48xlarge"], "ami": {AMI}, "gpu_allocation": "dra",
             "sharing": {{"mode": "mig", "layout": {{"3g.40gb": 2}}}}}}]))""")
    assert {p.split(": ")[1] for p in problems} == {
        'system_node_selector["bad key!"]', 'service_monitor_labels["release"]', "pools[0].gpu_allocation"}
    assert any("MIG slices on DRA pools" in p for p in problems)


@pytest.mark.parametrize("component, program, argument", [
    ("Cluster", f'g.Cluster("x", g.ClusterArgs(cluster_name="x", kubernetes_version="1.35", region=None, '
                f'vpc={{"availability_zones": 2}}, addons={ADDONS}, system_nodes={{"release_version": "1.35.7-20260911"}}))',
     "region"),
    ("ModelCache", 'g.ModelCache("x", g.ModelCacheArgs(cluster_name="c", vpc_id=None, subnet_ids=["subnet-0aaa1111bbbb2222c"], '
                   'node_security_group_id="sg-0123456789abcdef0", addon_version="v2.1.13-eksbuild.1"))', "vpc_id"),
    ("ModelCache", 'g.ModelCache("x", g.ModelCacheArgs(cluster_name="c", vpc_id="vpc-0123456789abcdef0", subnet_ids=[], '
                   'node_security_group_id="sg-0123456789abcdef0", addon_version="v2.1.13-eksbuild.1"))', "subnet_ids"),
    ("AdoptedCluster", 'g.AdoptedCluster("x", g.AdoptedClusterArgs(cluster_name="", subnet_ids=["subnet-0aaa1111bbbb2222c"]))',
     "cluster_name"),
    ("GpuNodePool", f'g.GpuNodePool("x", g.GpuNodePoolArgs(cluster_name="c", node_role_arn=None, subnet_ids=["subnet-0aaa1111bbbb2222c"], '
                    f'instance_types=["g5.xlarge"], capacity_type="spot", max_size=1, ami={AMI}))', "node_role_arn"),
])
def test_a_required_argument_none_or_empty_is_refused_naming_it(tmp_path, component, program, argument):
    problems = refused(tmp_path, program)
    assert [p for p in problems if p.startswith(f"{component} 'x': {argument}: required; must not be ")], problems


def test_a_version_given_as_a_number_is_refused_naming_it(tmp_path):
    problems = refused(tmp_path, 'g.GpuOperator("op", g.GpuOperatorArgs(chart_version=26.7, driver={"source": "ami"}))')
    assert problems == ["GpuOperator 'op': chart_version: must be a string (quoted, e.g. \"26.7\"), not a number"]


def test_an_output_where_the_component_reads_the_value_is_refused(tmp_path):
    problems = refused(tmp_path, f"""g.GpuNodePool("x", g.GpuNodePoolArgs(cluster_name="c",
    node_role_arn="arn:aws:iam::123456789012:role/n", subnet_ids=["subnet-0aaa1111bbbb2222c"],
    instance_types=pulumi.Output.from_input(["g5.xlarge"]), capacity_type="spot", max_size=1, ami={AMI}))""")
    assert problems == ["GpuNodePool 'x': instance_types: must be a plain value known when the program runs, not an "
                        "Output (the component reads it to decide what to build)"]


def test_an_output_where_the_component_passes_it_on_is_accepted(tmp_path):
    recording = run(tmp_path, f"""import pulumi
import gpu_platform as g
g.GpuNodePool("x", g.GpuNodePoolArgs(cluster_name=pulumi.Output.from_input("c"),
    node_role_arn="arn:aws:iam::123456789012:role/n", subnet_ids=[pulumi.Output.from_input("subnet-0aaa1111bbbb2222c")],
    instance_types=["g5.xlarge"], capacity_type="spot", max_size=1, ami={AMI}))""")
    assert [r for r in recording.resources if r.type == "aws:eks/nodeGroup:NodeGroup"]


def test_a_list_where_a_map_is_read_is_refused_naming_it(tmp_path):
    problems = refused(tmp_path, """g.GpuMonitoring("m", g.GpuMonitoringArgs(gpu_prices=[["NVIDIA A10G", 1.2]]))""")
    assert problems == ["GpuMonitoring 'm': gpu_prices: must be an object, not a list"]


@pytest.mark.parametrize("args, expected", [
    ("None", "GpuPlatform 'p': args: must be an object of GpuPlatformArgs (keyword arguments by name), not null"),
    ('{"platform": {"environment": "dev"}}', "GpuPlatform 'p': region: required"),
    ('{"platform": {}, "region": "us-east-1"}', "GpuPlatform 'p': platform: required; must not be empty"),
])
def test_the_whole_platform_refuses_arguments_naming_them(tmp_path, args, expected):
    assert refused(tmp_path, f'g.GpuPlatform("p", {args})') == [expected]


def test_a_components_refusal_speaks_of_its_arguments_not_the_stack_file():
    from gpu_platform.resources.typed_args import ArgumentsError

    err = ArgumentsError("GpuNodePool 'p': ", ["maxSize: must be a number"])
    assert str(err).splitlines() == ["invalid component arguments:", "  - GpuNodePool 'p': max_size: must be a number"]
    assert "gpu-platform:platform" not in str(err)


def test_kueue_refuses_a_pool_of_two_gpu_models_naming_it():
    from gpu_platform.resources.kueue import queueing_settings
    from gpu_platform.resources.typed_args import ArgumentsError

    pool = {"name": "mixed", "instance_types": ["g5.xlarge", "g6.xlarge"], "capacity_type": "spot", "max_size": 2}
    with pytest.raises(ArgumentsError) as err:
        queueing_settings("kueue", {"chart_version": "0.19.2", "node_pools": [pool], "teams": [
            {"name": "research", "quota": {"gpus": 1, "cpu": "8", "memory": "32Gi"}}]})
    assert [p.split(": every instance type")[0] for p in err.value.problems] == [
        "KueueQueueing 'kueue': node_pools[0].instance_types"]


def test_an_efa_pool_needs_the_clusters_vpc_for_its_security_group():
    from gpu_platform.resources.node_pool import GpuNodePoolArgs
    from gpu_platform.resources.pool_args import pool_from_args
    from gpu_platform.resources.typed_args import ArgumentsError

    args = {"cluster_name": "gpu-dev", "node_role_arn": "arn:aws:iam::123456789012:role/nodes",
            "subnet_ids": ["subnet-0aaa1111bbbb2222c"], "instance_types": ["p5.48xlarge"], "capacity_type": "on-demand",
            "max_size": 2, "ami": {"type": "AL2023_x86_64_NVIDIA", "release_version": "1.35.7-20260911"},
            "kubernetes_version": "1.35", "efa": True}
    with pytest.raises(ArgumentsError) as err:
        pool_from_args(GpuNodePoolArgs, "p5", args, "managed-node-group")
    assert err.value.problems == ["GpuNodePool 'p5': vpc_id: required for an EFA pool: its security group is made in "
                                  "the cluster's VPC"]
    pool, _ = pool_from_args(GpuNodePoolArgs, "p5", {**args, "vpc_id": "vpc-0123456789abcdef0"}, "managed-node-group")
    assert pool.efa
