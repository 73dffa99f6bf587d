"""A GPU pool component alone gates new nodes only when its `acceptance` argument asks (the checker comes with
GpuPlatform): then its node group registers nodes with the startup taint; a check its hardware cannot run is
refused naming the argument."""
import pytest

from gpu_platform.facts import names
from gpu_platform.spec.errors import SpecError
from tests.support.programs import one, run

COMMON = """
    from gpu_platform import GpuNodePool, GpuNodePoolArgs

    common = dict(cluster_name="gpu-prod", node_role_arn="arn:aws:iam::123456789012:role/nodes",
                  subnet_ids=["subnet-0aaa1111bbbb2222c"], instance_types=["p5.48xlarge"], capacity_type="on-demand",
                  max_size=2, kubernetes_version="1.35", environment="prod",
                  ami={"type": "AL2023_x86_64_NVIDIA", "release_version": "1.35.7-20260911"})
"""


def _taints(recording) -> set[str]:
    return {t["key"] for t in one(recording, "aws:eks/nodeGroup:NodeGroup", "h100").inputs["taints"]}


def test_alone_in_prod_without_the_argument_nodes_register_untainted_by_the_gate(tmp_path):
    recording = run(tmp_path, COMMON + """
    GpuNodePool("h100", GpuNodePoolArgs(**common))
    """)
    assert names.ACCEPTANCE_TAINT_KEY not in _taints(recording)


def test_the_acceptance_argument_adds_the_startup_taint(tmp_path):
    recording = run(tmp_path, COMMON + """
    GpuNodePool("h100", GpuNodePoolArgs(**common, acceptance={"level": 3}))
    """)
    assert _taints(recording) == {names.GPU_TAINT_KEY, names.ACCEPTANCE_TAINT_KEY}


def test_a_check_the_pool_cannot_run_is_refused_naming_the_argument(tmp_path):
    with pytest.raises(SpecError) as err:
        run(tmp_path, COMMON + """
    GpuNodePool("h100", GpuNodePoolArgs(**common, acceptance={"checks": ["dcgm", "efa"]}))
        """)
    assert any(p.startswith("GpuNodePool 'h100': acceptance.checks[1]: 'efa' cannot run on this pool")
               for p in err.value.problems), err.value.problems
