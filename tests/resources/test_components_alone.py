"""Each public component alone, from its own Args, in a user's program that has no stack file, under the
mock engine: what it registers, which rules refuse bad arguments, and which resource options reach its
children (protect, provider, depends_on)."""
import pytest

import gpu_platform
from gpu_platform.facts import names
from gpu_platform.spec.errors import SpecError
from tests.support.programs import one, registered, run, under

NODE_GROUP, ROLE = "aws:eks/nodeGroup:NodeGroup", "aws:iam/role:Role"
AMI = '{"type": "AL2023_x86_64_NVIDIA", "release_version": "1.35.7-20260911"}'
TRUST = '\'{"Version": "2012-10-17", "Statement": []}\''
KUBECONFIG = '"apiVersion: v1\\nkind: Config\\nclusters: []\\n"'


def component(recording, name):
    """The registration of the public component class `name`: its type is the schema's token."""
    return one(recording, f"gpu-platform:index:{name}")


# --- GPU node pools ---

CLUSTER_OF_ITS_OWN = f"""
    import pulumi
    from pulumi_aws import Provider, eks, iam

    from gpu_platform import GpuNodePool, GpuNodePoolArgs

    control_plane = iam.Role("control-plane", assume_role_policy={TRUST})
    cluster = eks.Cluster("mine", role_arn=control_plane.arn,  # no name given: pulumi_aws names it, an Output
                          vpc_config=eks.ClusterVpcConfigArgs(subnet_ids=["subnet-0aaa1111bbbb2222c", "subnet-0ddd3333eeee4444f"]))
    nodes = iam.Role("nodes", assume_role_policy={TRUST})
    other_account = Provider("other-account", region="us-west-2")
    common = dict(cluster_name=cluster.name, node_role_arn=nodes.arn, subnet_ids=["subnet-0aaa1111bbbb2222c", "subnet-0ddd3333eeee4444f"],
                  instance_types=["g5.xlarge", "g5.2xlarge"], capacity_type="spot", max_size=4, ami={AMI},
                  kubernetes_version="1.35", environment="dev")
    GpuNodePool("a10g", GpuNodePoolArgs(**common, sharing={{"mode": "time-slicing", "replicas": 4}}))
    GpuNodePool("a10g-kept", GpuNodePoolArgs(**common),
                opts=pulumi.ResourceOptions(protect=True, provider=other_account, depends_on=[nodes]))
"""


@pytest.fixture(scope="module")
def own_cluster(tmp_path_factory):
    return run(tmp_path_factory.mktemp("own-cluster"), CLUSTER_OF_ITS_OWN)


def test_a_node_pool_joins_a_cluster_whose_name_is_an_output(own_cluster):
    cluster_name = one(own_cluster, "aws:eks/cluster:Cluster").outputs["name"]
    assert cluster_name.startswith("mine-")  # auto-named: known only once the cluster exists
    group = one(own_cluster, NODE_GROUP, "a10g")
    assert group.parent == one(own_cluster, "gpu-platform:index:GpuNodePool", "a10g").urn
    assert group.inputs["clusterName"] == cluster_name
    assert group.inputs["nodeGroupName"] == f"{cluster_name}-a10g"  # physical names follow the cluster's
    template = one(own_cluster, "aws:ec2/launchTemplate:LaunchTemplate", "a10g")
    assert template.inputs["name"] == f"{cluster_name}-a10g"
    assert group.inputs["labels"]["gpu-platform.io/pool"] == "a10g"


def test_protect_and_the_callers_provider_reach_the_node_group(own_cluster):
    kept, plain = one(own_cluster, NODE_GROUP, "a10g-kept"), one(own_cluster, NODE_GROUP, "a10g")
    assert (kept.options["protect"], plain.options["protect"]) == (True, False)  # dev: unprotected by default
    provider = one(own_cluster, "pulumi:providers:aws", "other-account")
    assert kept.provider.startswith(provider.urn + "::")
    assert not plain.provider or not plain.provider.startswith(provider.urn)
    nodes = one(own_cluster, ROLE, "nodes")
    assert nodes.urn in kept.options["dependsOn"]  # the caller's depends_on holds every child back


def test_a_callers_depends_on_given_as_an_output_holds_every_child_back(tmp_path):
    recording = run(tmp_path, f"""
        import pulumi
        from pulumi_aws import iam

        from gpu_platform import GpuNodePool, GpuNodePoolArgs

        nodes = iam.Role("nodes", assume_role_policy={TRUST})
        GpuNodePool("a10g", GpuNodePoolArgs(
            cluster_name="gpu-dev", node_role_arn=nodes.arn, subnet_ids=["subnet-0aaa1111bbbb2222c"],
            instance_types=["g5.xlarge"], capacity_type="spot", max_size=2, ami={AMI}, kubernetes_version="1.35"),
            opts=pulumi.ResourceOptions(depends_on=pulumi.Output.from_input([nodes])))
    """)
    nodes = one(recording, ROLE, "nodes")
    assert nodes.urn in one(recording, NODE_GROUP, "a10g").options["dependsOn"]
    assert nodes.urn in one(recording, "aws:ec2/launchTemplate:LaunchTemplate", "a10g").options["dependsOn"]


def test_a_mig_layout_that_does_not_fit_is_refused_naming_the_argument(tmp_path):
    program = f"""
        from gpu_platform import GpuNodePool, GpuNodePoolArgs

        GpuNodePool("a100", GpuNodePoolArgs(
            cluster_name="gpu-dev", node_role_arn="arn:aws:iam::123456789012:role/nodes", subnet_ids=["subnet-0aaa1111bbbb2222c"],
            instance_types=["p4d.24xlarge"], capacity_type="on-demand", max_size=2, ami={AMI},
            sharing={{"mode": "mig", "layout": {{"3g.20gb": 3}}}}, kubernetes_version="1.35"))
    """
    with pytest.raises(SpecError) as err:
        run(tmp_path, program)
    assert any(p.startswith("GpuNodePool 'a100': sharing.layout: does not fit one") for p in err.value.problems)


def test_a_karpenter_pool_alone_renders_its_node_class_and_node_pool(tmp_path):
    recording = run(tmp_path, f"""
        import pulumi
        import pulumi_kubernetes as k8s

        from gpu_platform import KarpenterNodePool, KarpenterNodePoolArgs

        cluster = k8s.Provider("mine", kubeconfig={KUBECONFIG})
        KarpenterNodePool("l4", KarpenterNodePoolArgs(
            cluster_name="shared-gpu", node_role="shared-gpu-karpenter-nodes", instance_types=["g6.xlarge"],
            capacity_type="spot", max_size=8, ami={{"type": "AL2023_x86_64_NVIDIA", "alias": "al2023@v20260911"}},
            kubernetes_version="1.35"), opts=pulumi.ResourceOptions(provider=cluster))
    """)
    pool = component(recording, "KarpenterNodePool")
    kinds = {r.inputs.get("kind") for r in under(recording, pool)}
    assert kinds == {"EC2NodeClass", "NodePool"}
    node_class = next(r for r in under(recording, pool) if r.inputs.get("kind") == "EC2NodeClass")
    assert node_class.inputs["spec"]["role"] == "shared-gpu-karpenter-nodes"
    assert node_class.provider.startswith(one(recording, "pulumi:providers:kubernetes").urn)


# --- the GPU stack ---

def test_the_gpu_operator_alone_renders_its_pools_mig_configs(tmp_path):
    recording = run(tmp_path, """
        from gpu_platform import GpuOperator, GpuOperatorArgs

        GpuOperator("gpu-operator", GpuOperatorArgs(
            chart_version="v26.7.0", driver={"source": "ami"}, kubernetes_version="1.35",
            pools=[{"name": "h100", "instance_types": ["p5.48xlarge"],
                    "ami": {"type": "AL2023_x86_64_NVIDIA", "release_version": "1.35.7-20260911"},
                    "sharing": {"mode": "mig", "layout": {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}}}]))
    """)
    release = one(recording, "kubernetes:helm.sh/v3:Release")
    assert release.parent == component(recording, "GpuOperator").urn
    assert release.inputs["chart"] == "gpu-operator" and release.inputs["version"] == "v26.7.0"
    assert release.inputs["values"]["mig"]["strategy"] == "mixed"


def test_the_gpu_operator_refuses_an_unknown_chart_version(tmp_path):
    with pytest.raises(SpecError) as err:
        run(tmp_path, """
            from gpu_platform import GpuOperator, GpuOperatorArgs

            GpuOperator("gpu-operator", GpuOperatorArgs(chart_version="v1.0.0", driver={"source": "ami"}))
        """)
    assert any(p.startswith("GpuOperator 'gpu-operator': chart_version: ") for p in err.value.problems)


def test_monitoring_alone_on_an_existing_prometheus(tmp_path):
    recording = run(tmp_path, """
        from gpu_platform import GpuMonitoring, GpuMonitoringArgs

        GpuMonitoring("gpu-monitoring", GpuMonitoringArgs(
            prometheus={"mode": "existing", "namespace": "observability", "selector_labels": {"release": "prom"}},
            gpu_prices={"NVIDIA A10G": 1.2}, cluster_name="shared-gpu"))
    """)
    monitoring = component(recording, "GpuMonitoring")
    rules = [r for r in under(recording, monitoring) if r.inputs.get("kind") == "PrometheusRule"]
    assert rules and all(r.inputs["metadata"]["labels"]["release"] == "prom" for r in rules)
    assert not registered(recording, "kubernetes:helm.sh/v3:Release")  # nothing installed: it exists


# --- storage ---

def test_a_model_cache_with_subnets_from_another_resource(tmp_path):
    recording = run(tmp_path, """
        from pulumi_aws import ec2

        from gpu_platform import ModelCache, ModelCacheArgs

        vpc = ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
        subnets = [ec2.Subnet(f"private-{i}", vpc_id=vpc.id, cidr_block=f"10.0.{i}.0/24") for i in range(3)]
        ModelCache("models", ModelCacheArgs(
            cluster_name="shared-gpu", vpc_id=vpc.id, subnet_ids=[s.id for s in subnets], subnet_count=3,
            node_security_group_id="sg-0123456789abcdef0", addon_version="v2.1.13-eksbuild.1"))
    """)
    cache = component(recording, "ModelCache")
    targets = [r for r in registered(recording, "aws:efs/mountTarget:MountTarget")]
    assert len(targets) == 3 and all(t.parent == cache.urn for t in targets)
    file_system = one(recording, "aws:efs/fileSystem:FileSystem")
    assert file_system.options["protect"] and file_system.options["retainOnDelete"]  # losing it re-downloads


def test_a_model_cache_needs_a_subnet_count_for_output_subnets(tmp_path):
    with pytest.raises(SpecError) as err:
        run(tmp_path, """
            from pulumi_aws import ec2

            from gpu_platform import ModelCache, ModelCacheArgs

            vpc = ec2.Vpc("vpc", cidr_block="10.0.0.0/16")
            ModelCache("models", ModelCacheArgs(
                cluster_name="shared-gpu", vpc_id=vpc.id, subnet_ids=vpc.id.apply(lambda _: ["subnet-0aaa1111bbbb2222c"]),
                node_security_group_id="sg-0123456789abcdef0", addon_version="v2.1.13-eksbuild.1"))
        """)
    assert any(p.startswith("ModelCache 'models': subnet_count: required") for p in err.value.problems)


def test_datasets_alone_claimed_in_a_team_namespace(tmp_path):
    recording = run(tmp_path, """
        from gpu_platform import Datasets, DatasetsArgs

        Datasets("datasets", DatasetsArgs(
            cluster_name="shared-gpu", vpc_id="vpc-0123456789abcdef0", subnet_id="subnet-0aaa1111bbbb2222c",
            node_security_group_id="sg-0123456789abcdef0", environment="prod",
            fsx_lustre={"addon_version": "v1.7.0-eksbuild.1", "claim_size": "1Ti", "shared": "common",
                        "owner": {"uid": 2000, "gid": 2000}},
            team_namespaces={"research": "research"}))
    """)
    lustre = one(recording, "aws:fsx/lustreFileSystem:LustreFileSystem")
    assert lustre.parent == component(recording, "Datasets").urn and lustre.options["protect"]  # prod
    claims = {c.inputs["metadata"]["name"]: c.inputs["metadata"]["namespace"]
              for c in registered(recording, "kubernetes:core/v1:PersistentVolumeClaim")}
    assert claims == {"datasets": "research", "datasets-shared": "research", "gpu-platform-datasets-setup": "kube-system"}
    (job,) = registered(recording, "kubernetes:batch/v1:Job")
    assert "chown 2000:2000 /fsx/teams/research" in job.inputs["spec"]["template"]["spec"]["containers"][0]["command"][2]


# --- tenancy ---

TEAMS = f"""
    import pulumi
    import pulumi_kubernetes as k8s

    from gpu_platform import (PriorityTiers, PriorityTiersArgs, TeamAccess, TeamAccessArgs, TeamAdmission,
                              TeamAdmissionArgs, TeamNamespace, TeamNamespaceArgs)

    cluster = k8s.Provider("mine", kubeconfig={KUBECONFIG})
    tiers = PriorityTiers("tiers", PriorityTiersArgs(), opts=pulumi.ResourceOptions(provider=cluster))
    TeamAdmission("guards", TeamAdmissionArgs(k8s_provider=cluster))
    TeamNamespace("research", TeamNamespaceArgs(
        team="research", quota={{"gpus": 8, "mig_slices": {{"1g.10gb": 4}}, "cpu": "32", "memory": "128Gi"}},
        kubernetes_version="1.35", mig_profiles=["1g.10gb", "3g.40gb"], prometheus_namespace="monitoring",
        model_cache={{"storage_class": "efs-models", "size": "500Gi"}}),
        opts=pulumi.ResourceOptions(provider=cluster, depends_on=[tiers]))
    TeamAccess("access", TeamAccessArgs(cluster_name="shared-gpu", teams=[
        {{"name": "research", "developer_role_arns": ["arn:aws:iam::123456789012:role/ml"]}},
        {{"name": "inference", "admin_role_arns": ["arn:aws:iam::123456789012:role/ml"]}}]))
"""


@pytest.fixture(scope="module")
def teams(tmp_path_factory):
    return run(tmp_path_factory.mktemp("teams"), TEAMS)


def test_a_team_namespace_on_a_cluster_you_have(teams):
    namespace = component(teams, "TeamNamespace")
    children = under(teams, namespace)
    quota = next(r for r in children if r.inputs.get("kind") == "ResourceQuota")
    assert quota.inputs["spec"]["hard"]["requests.nvidia.com/gpu"] == "8"
    assert quota.inputs["spec"]["hard"]["requests.nvidia.com/mig-1g.10gb"] == "4"
    assert quota.inputs["spec"]["hard"]["requests.nvidia.com/mig-3g.40gb"] == "0"  # offered, not given: bounded
    limits = next(r for r in children if r.inputs.get("kind") == "LimitRange")
    assert limits.inputs["spec"]["limits"][1]["max"] == {"nvidia.com/gpu": "8"}  # default: the team's GPU quota
    claim = next(r for r in children if r.inputs.get("kind") == "PersistentVolumeClaim")
    assert claim.inputs["spec"]["storageClassName"] == "efs-models"
    provider = one(teams, "pulumi:providers:kubernetes", "mine")
    classes = {r.urn for r in under(teams, component(teams, "PriorityTiers"))}  # a component's wait: its children
    assert len(classes) == 3
    assert all(r.provider.startswith(provider.urn) and classes <= set(r.options["dependsOn"]) for r in children)


def test_the_team_admission_policies_on_a_cluster_you_have(teams):
    from gpu_platform.render.admission import POLICIES

    admission = component(teams, "TeamAdmission")
    children = under(teams, admission)
    provider = one(teams, "pulumi:providers:kubernetes", "mine")
    kinds = sorted(r.inputs["kind"] for r in children)
    assert kinds == sorted(["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"] * len(POLICIES))
    assert all(r.provider.startswith(provider.urn) for r in children)


def test_team_admission_names_what_is_wrong_with_its_arguments(tmp_path):
    with pytest.raises(SpecError) as err:
        run(tmp_path, """
            from gpu_platform import TeamAdmission

            TeamAdmission("guards", {"k8s_providr": None})
        """)
    assert err.value.problems == ["TeamAdmission 'guards': k8s_providr: unknown argument; did you mean `k8s_provider`?"]


def test_access_entries_hold_every_team_group_of_a_role(teams):
    (entry,) = registered(teams, "aws:eks/accessEntry:AccessEntry")
    assert entry.parent == component(teams, "TeamAccess").urn
    assert entry.inputs["kubernetesGroups"] == ["inference:admins", "research:developers"]


def test_a_team_names_what_is_wrong_with_its_arguments(tmp_path):
    with pytest.raises(SpecError) as err:
        run(tmp_path, """
            from gpu_platform import TeamNamespace, TeamNamespaceArgs

            TeamNamespace("ops", TeamNamespaceArgs(
                team="kube-system", quota={"cpu": "8", "memory": "32Gi", "storage": "100Gi",
                                           "mig_slices": {"2g.20gb": 1}},
                kubernetes_version="1.35", mig_profiles=["1g.10gb"], model_cache={"storage_class": "efs"}))
        """)
    problems = err.value.problems
    assert any(p.startswith("TeamNamespace 'ops': team: 'kube-system' is a system namespace") for p in problems)
    assert any(p.startswith("TeamNamespace 'ops': quota.mig_slices: no pool provides nvidia.com/mig-2g.20gb")
               for p in problems)
    assert any(p.startswith("TeamNamespace 'ops': quota.storage: must be >= modelCache.size (1Ti)") for p in problems)


QUEUE = """
    from gpu_platform import KueueQueueing, KueueQueueingArgs

    KueueQueueing("kueue", KueueQueueingArgs(
        chart_version="0.19.2", environment="prod",
        node_pools=[{"name": "l4", "instance_types": ["g6.12xlarge"], "capacity_type": "on-demand", "max_size": 2}],
        teams=[{"name": "research", "quota": {"gpus": GPUS, "cpu": "32", "memory": "128Gi"}},
               {"name": "batch", "quota": {"gpus": 2, "cpu": "8", "memory": "32Gi"},
                "priority_tier": "preemptible-batch"}]))
"""


def test_kueue_alone_queues_each_team_on_the_pools(tmp_path):
    recording = run(tmp_path, QUEUE.replace("GPUS", "4"))
    queues = [r for r in registered(recording, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")]
    assert sorted(q.inputs["metadata"]["name"] for q in queues) == [names.cluster_queue("batch"), names.cluster_queue("research")]
    release = one(recording, "kubernetes:helm.sh/v3:Release")
    assert release.inputs["values"]["controllerManager"]["replicas"] == 2  # prod


def test_kueue_refuses_nominal_quotas_the_pools_cannot_hold(tmp_path):
    with pytest.raises(SpecError) as err:  # 2 x g6.12xlarge = 8 L4s; 7 + 2 do not fit
        run(tmp_path, QUEUE.replace("GPUS", "7"))
    assert any(p.startswith("KueueQueueing 'kueue': teams[1].quota.gpus:") for p in err.value.problems)


SPLIT = QUEUE.replace('"priority_tier": "preemptible-batch"}]', '"priority_tier": "preemptible-batch"}],\n'
                      '        fair_sharing={}') \
    .replace('"memory": "128Gi"}}', '"memory": "128Gi"}, "queue": {"sub_teams": [\n'
             '            {"name": "vision", "share": "SHARE"}, {"name": "language", "share": "REST"}]}}')


def test_kueue_alone_nests_a_team_with_sub_teams(tmp_path):
    recording = run(tmp_path, SPLIT.replace("GPUS", "4").replace("SHARE", "50%").replace("REST", "50%"))
    cohorts = {r.inputs["metadata"]["name"]: r.inputs["spec"]
               for r in registered(recording, "kubernetes:kueue.x-k8s.io/v1beta2:Cohort")}
    assert cohorts["team-research"]["parentName"] == names.KUEUE_COHORT
    queues = {q.inputs["metadata"]["name"]: q.inputs["spec"]["cohortName"]
              for q in registered(recording, "kubernetes:kueue.x-k8s.io/v1beta2:ClusterQueue")}
    assert queues == {"team-research": "team-research", "team-research-vision": "team-research",
                      "team-research-language": "team-research", "team-batch": names.KUEUE_COHORT}


def test_kueue_alone_refuses_a_share_too_small_for_one_gpu(tmp_path):
    with pytest.raises(SpecError) as err:  # 10% of 4 L4s is 0.4 of one
        run(tmp_path, SPLIT.replace("GPUS", "4").replace("SHARE", "90%").replace("REST", "10%"))
    assert any(p.startswith("KueueQueueing 'kueue': teams[0].queue.sub_teams[1].share:") for p in err.value.problems)


# --- clusters ---

def test_an_adopted_cluster_by_an_output_name(tmp_path):
    recording = run(tmp_path, f"""
        import pulumi
        from pulumi_aws import eks, iam

        from gpu_platform import AdoptedCluster, AdoptedClusterArgs, GpuNodePool, GpuNodePoolArgs

        role = iam.Role("control-plane", assume_role_policy={TRUST})
        made = eks.Cluster("made-elsewhere", role_arn=role.arn, vpc_config=eks.ClusterVpcConfigArgs(subnet_ids=["s-1"]))
        adopted = AdoptedCluster("adopted", AdoptedClusterArgs(cluster_name=made.name, subnet_ids=["subnet-0aaa1111bbbb2222c"],
                                                               region="us-east-1"))
        GpuNodePool("a10g", GpuNodePoolArgs(
            **adopted.pool_args(), instance_types=["g5.xlarge"], capacity_type="spot", max_size=2, ami={AMI},
            kubernetes_version="1.35"))
        pulumi.export("kubeconfig", adopted.kubeconfig)
    """)
    adopted = component(recording, "AdoptedCluster")
    assert {"type": "gpu-platform:cluster:Cluster"} in [
        {k: v for k, v in a.items() if k == "type"} for a in adopted.options["aliases"]]  # state made before
    roles = [r for r in registered(recording, ROLE) if r.parent == adopted.urn]
    cluster_name = one(recording, "aws:eks/cluster:Cluster").outputs["name"]
    assert [r.inputs["name"] for r in roles] == [f"{cluster_name}-nodes"]
    assert one(recording, NODE_GROUP).inputs["nodeRoleArn"] == roles[0].outputs["arn"]


def test_an_adopted_cluster_needs_a_region_or_a_provider(tmp_path):
    with pytest.raises(SpecError, match="region: required unless k8sProvider is given"):
        run(tmp_path, """
            from gpu_platform import AdoptedCluster, AdoptedClusterArgs

            AdoptedCluster("adopted", AdoptedClusterArgs(cluster_name="shared-gpu", subnet_ids=["subnet-0aaa1111bbbb2222c"]))
        """)


def test_a_cluster_alone_with_its_vpc_and_system_nodes(tmp_path):
    recording = run(tmp_path, """
        import pulumi

        from gpu_platform import Cluster, ClusterArgs

        Cluster("gpus", ClusterArgs(
            cluster_name="gpus", kubernetes_version="1.35", region="eu-west-1", vpc={"availability_zones": 2},
            addons={"vpc-cni": "v1.22.4-eksbuild.3", "coredns": "v1.13.2-eksbuild.31",
                    "kube-proxy": "v1.35.3-eksbuild.29", "eks-pod-identity-agent": "v1.3.10-eksbuild.3"},
            system_nodes={"release_version": "1.35.7-20260911"}, environment="prod",
            public_access_cidrs=["203.0.113.0/24"]),
            opts=pulumi.ResourceOptions(protect=False))
    """, region="eu-west-1")
    cluster = component(recording, "Cluster")
    eks = one(recording, "aws:eks/cluster:Cluster")
    assert eks.inputs["name"] == "gpus" and eks.options["protect"] is False  # the caller's, not prod's default
    assert eks.inputs["deletionProtection"] is False
    assert eks.inputs["vpcConfig"]["publicAccessCidrs"] == ["203.0.113.0/24"]
    subnets = [r.inputs["availabilityZone"] for r in registered(recording, "aws:ec2/subnet:Subnet")]
    assert sorted(set(subnets)) == ["eu-west-1a", "eu-west-1b"]
    assert one(recording, NODE_GROUP).parent == cluster.urn


def test_a_cluster_names_the_argument_that_is_wrong(tmp_path):
    with pytest.raises(SpecError) as err:
        run(tmp_path, """
            from gpu_platform import Cluster, ClusterArgs

            Cluster("gpus", ClusterArgs(
                cluster_name="gpus", kubernetes_version="1.35", region="eu-west-1", vpc={},
                addons={"vpc-cni": "v1.22.4-eksbuild.3"}, system_nodes={"release_version": "1.34.2-20250101"}))
        """)
    problems = err.value.problems
    assert any(p.startswith("Cluster 'gpus': addons: pin every core add-on; missing: ") for p in problems)
    assert any(p.startswith("Cluster 'gpus': system_nodes.release_version: must be an AMI release for Kubernetes 1.35")
               for p in problems)


# --- the whole platform ---

def test_the_platform_uses_the_callers_aws_provider(tmp_path):
    recording = run(tmp_path, """
        import pathlib

        import pulumi
        import yaml
        from pulumi_aws import Provider

        from gpu_platform import GpuPlatform, GpuPlatformArgs

        platform = yaml.safe_load(pathlib.Path(STACK).read_text())["config"]["gpu-platform:platform"]
        platform["monitoring"].pop("alerting")
        for team in platform["teams"]:
            team.pop("alerting", None)
        account = Provider("platform-account", region="us-east-1")
        GpuPlatform("gpus", GpuPlatformArgs(platform=platform, region="us-east-1"),
                    opts=pulumi.ResourceOptions(providers={"aws": account}))
    """.replace("STACK", repr(str(_stack_file("dev")))))
    (provider,) = registered(recording, "pulumi:providers:aws")  # the platform made none of its own
    groups = registered(recording, NODE_GROUP)
    assert groups and all(g.provider.startswith(provider.urn + "::") for g in groups)


def _stack_file(stack: str):
    from pathlib import Path

    return Path(__file__).resolve().parents[2] / "stacks" / f"Pulumi.{stack}.yaml"


def test_every_public_component_was_built_alone_here():
    """The tests above build each component of the package on its own."""
    import inspect
    import sys

    source = inspect.getsource(sys.modules[__name__])
    assert [name for name in gpu_platform.COMPONENTS if f"{name}Args(" not in source] == []


# --- Local Zones: a Capacity Block sold there, for library users ---

def test_a_cluster_alone_reaches_a_local_zone_for_node_groups_only(tmp_path):
    recording = run(tmp_path, """
        from gpu_platform import Cluster, ClusterArgs

        Cluster("gpus", ClusterArgs(
            cluster_name="gpus", kubernetes_version="1.35", region="us-east-1",
            vpc={"availability_zones": 2, "local_zones": ["us-east-1-dfw-2a"]},
            addons={"vpc-cni": "v1.22.4-eksbuild.3", "coredns": "v1.13.2-eksbuild.31",
                    "kube-proxy": "v1.35.3-eksbuild.29", "eks-pod-identity-agent": "v1.3.10-eksbuild.3"},
            system_nodes={"release_version": "1.35.7-20260911"}))
    """, region="us-east-1")
    subnets = {r.inputs["availabilityZone"]: r for r in registered(recording, "aws:ec2/subnet:Subnet")
               if "private" in r.name}
    assert sorted(subnets) == ["us-east-1-dfw-2a", "us-east-1a", "us-east-1b"]
    eks = one(recording, "aws:eks/cluster:Cluster")
    assert len(eks.inputs["vpcConfig"]["subnetIds"]) == 2  # EKS places no cluster interface in a Local Zone


def test_a_cluster_refuses_a_local_zone_of_another_region(tmp_path):
    with pytest.raises(SpecError) as err:
        run(tmp_path, """
            from gpu_platform import Cluster, ClusterArgs

            Cluster("gpus", ClusterArgs(
                cluster_name="gpus", kubernetes_version="1.35", region="eu-west-1",
                vpc={"local_zones": ["us-east-1-dfw-2a"]},
                addons={"vpc-cni": "v1.22.4-eksbuild.3", "coredns": "v1.13.2-eksbuild.31",
                        "kube-proxy": "v1.35.3-eksbuild.29", "eks-pod-identity-agent": "v1.3.10-eksbuild.3"},
                system_nodes={"release_version": "1.35.7-20260911"}))
        """)
    assert any("vpc.local_zones[0]" in p and "not of the stack's region eu-west-1" in p for p in err.value.problems)


def test_a_block_pool_on_subnets_without_its_local_zone_is_refused_naming_zones(tmp_path):
    with pytest.raises(SpecError) as err:
        run(tmp_path, """
            from gpu_platform import GpuNodePool, GpuNodePoolArgs

            GpuNodePool("gb200", GpuNodePoolArgs(
                cluster_name="gpus", node_role_arn="arn:aws:iam::123456789012:role/nodes",
                subnet_ids=["subnet-0aaa1111bbbb2222c", "subnet-0ddd3333eeee4444f"],
                subnet_zones=["us-east-1a", "us-east-1b"], zones=["us-east-1a"],
                instance_types=["p6e-gb200.36xlarge"], capacity_type="capacity-block",
                reservation={"id": "cr-0d4f6a8c0e2b4d6f8", "start": "2026-11-23T11:30:00Z",
                             "end": "2026-12-07T11:30:00Z", "instance_count": 18},
                min_size=18, max_size=18, gpu_allocation="dra", efa=True,
                ami={"type": "AL2023_ARM_64_NVIDIA", "release_version": "1.35.7-20260917"},
                kubernetes_version="1.35"))
        """)
    found = [p for p in err.value.problems if "zones: p6e-gb200.36xlarge Capacity Blocks live in the Local Zone" in p]
    assert found, err.value.problems
