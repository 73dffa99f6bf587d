"""A pool component carries the environment its program gave it to the policy pack as a tag of the node group (a
Karpenter pool's EC2NodeClass), and nothing when the program gave none (the pack then holds the pool to prod)."""
from gpu_platform.facts import names
from gpu_platform.resources.pool_args import environment_tag
from tests.support.programs import one, run

PROGRAM = """
from gpu_platform import GpuNodePool

GpuNodePool("a10g", {{
    "cluster_name": "gpu-dev", "node_role_arn": "arn:aws:iam::123456789012:role/gpu-nodes",
    "subnet_ids": ["subnet-0123456789abcdef0"], "instance_types": ["g5.xlarge"], "capacity_type": "spot",
    "max_size": 2, "kubernetes_version": "1.33", {environment}
    "ami": {{"type": "AL2023_x86_64_NVIDIA", "release_version": "1.33.5-20251120"}},
}})
"""


def test_the_environment_given_is_a_tag_of_the_node_group(tmp_path):
    recording = run(tmp_path, PROGRAM.format(environment='"environment": "staging",'))
    tags = one(recording, "aws:eks/nodeGroup:NodeGroup").inputs["tags"]
    assert tags[names.ENVIRONMENT_TAG] == "staging"


def test_no_environment_given_is_no_tag(tmp_path):
    recording = run(tmp_path, PROGRAM.format(environment=""))
    assert names.ENVIRONMENT_TAG not in one(recording, "aws:eks/nodeGroup:NodeGroup").inputs["tags"]
    assert environment_tag({"environment": None}) == {}


KARPENTER = """
from gpu_platform import KarpenterNodePool

KarpenterNodePool("l4", {{
    "cluster_name": "gpu-dev", "instance_types": ["g6.xlarge"], "capacity_type": "on-demand", "max_size": 2,
    "kubernetes_version": "1.33", {environment}
    "ami": {{"type": "AL2023_x86_64_NVIDIA", "alias": "al2023@v20251120"}},
}})
"""
NODE_CLASS = "kubernetes:karpenter.k8s.aws/v1:EC2NodeClass"


def test_a_karpenter_pool_tags_its_node_class_with_the_environment_given(tmp_path):
    recording = run(tmp_path, KARPENTER.format(environment='"environment": "dev",'))
    assert one(recording, NODE_CLASS).inputs["spec"]["tags"][names.ENVIRONMENT_TAG] == "dev"


def test_a_karpenter_pool_given_no_environment_claims_none(tmp_path):
    """Not even the `dev` its defaults are decided by: the pack could not tell it from one the program stated."""
    recording = run(tmp_path, KARPENTER.format(environment=""))
    tags = one(recording, NODE_CLASS).inputs["spec"]["tags"]
    assert names.ENVIRONMENT_TAG not in tags and tags[names.POOL_LABEL] == "l4"
