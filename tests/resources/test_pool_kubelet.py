"""A GPU pool component alone takes the stack file's `kubelet` as its `kubelet` argument: its launch
template's NodeConfig carries the CPU and topology managers, and a CPU the instance does not have is
refused naming the argument."""
import base64

import pytest
import yaml

from gpu_platform.spec.errors import SpecError
from tests.support.programs import one, run

COMMON = """
    from gpu_platform import GpuNodePool, GpuNodePoolArgs

    common = dict(cluster_name="gpu-dev", node_role_arn="arn:aws:iam::123456789012:role/nodes",
                  subnet_ids=["subnet-0aaa1111bbbb2222c"], instance_types=["p5.48xlarge"], capacity_type="on-demand",
                  max_size=2, kubernetes_version="1.35", environment="dev")
"""


def test_the_kubelet_argument_reaches_the_node_config(tmp_path):
    recording = run(tmp_path, COMMON + """
    GpuNodePool("h100", GpuNodePoolArgs(**common, ami={"type": "AL2023_x86_64_NVIDIA", "release_version": "1.35.7-20260911"},
                kubelet={"topology_manager_policy": "single-numa-node", "reserved_system_cpus": "0-1,96-97"}))
    """)
    template = one(recording, "aws:ec2/launchTemplate:LaunchTemplate", "h100")
    text = base64.b64decode(template.inputs["userData"]).decode()
    body = text.split("application/node.eks.aws\n\n", 1)[1].split("\n--", 1)[0]
    assert yaml.safe_load(body)["spec"]["kubelet"]["config"] == {
        "cpuManagerPolicy": "static", "topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod",
        "reservedSystemCPUs": "0-1,96-97"}


def test_a_cpu_the_instance_lacks_is_refused_naming_the_argument(tmp_path):
    with pytest.raises(SpecError) as err:
        run(tmp_path, COMMON + """
    GpuNodePool("h100", GpuNodePoolArgs(**common, ami={"type": "BOTTLEROCKET_x86_64_NVIDIA", "release_version": "1.50.0-4a1c53b7"},
                kubelet={"reserved_system_cpus": "0-3,192"}))
        """)
    assert "GpuNodePool 'h100': kubelet.reserved_system_cpus: CPU 192 does not exist on a 192-vCPU node (CPUs 0-191)" \
        in err.value.problems, err.value.problems
