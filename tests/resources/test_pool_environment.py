"""A pool component carries the environment its program gave it to the policy pack as a tag of the node group,
and nothing when the program gave none (the pack then holds the pool to prod)."""
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
