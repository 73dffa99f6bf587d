"""`gpu-platform plan` on a user's own Pulumi project (not a gpu-platform stack file): a component the
program builds with wrong arguments is refused naming the program, never a stack file it did not read."""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import yaml

from gpu_platform.planner.cli import main
from gpu_platform.planner.plan import schema_problems
from tests.support.stacks import AS_OF, ROOT, STACKS

POOL = """\
import pulumi
from gpu_platform import GpuNodePool

pool = GpuNodePool("h100-mig", {{
    "cluster_name": "gpu-dev", "node_role_arn": "arn:aws:iam::123456789012:role/gpu-nodes",
    "subnet_ids": ["subnet-0123456789abcdef0"], "instance_types": ["{instance_type}"], "capacity_type": "on-demand",
    "kubernetes_version": "1.33", "environment": "{environment}", {extra}
    "ami": {{"type": "AL2023_x86_64_NVIDIA", "release_version": "1.33.5-20251120"}},
}})
pulumi.export("group", pool.node_group_name)
"""


def project(folder: Path, program: str, stack: str = "dev") -> Path:
    (folder / "Pulumi.yaml").write_text(yaml.safe_dump({"name": "my-gpus", "runtime": "python"}))
    (folder / f"Pulumi.{stack}.yaml").write_text(yaml.safe_dump({"config": {"aws:region": "us-east-1"}}))
    (folder / "__main__.py").write_text(textwrap.dedent(program))
    return folder


def plan(capsys, folder: Path, stack: str = "dev", *extra: str) -> tuple[int, str, str]:
    as_of = () if "--as-of" in extra else ("--as-of", AS_OF)
    code = main(["plan", "--stack", stack, "--project-dir", str(folder), *as_of, *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_misspelt_argument_names_the_program_and_the_python_keyword(tmp_path, capsys):
    project(tmp_path, POOL.format(environment="dev", extra='"max_szie": 2,', instance_type="g5.xlarge"))
    code, _, err = plan(capsys, tmp_path)
    assert code == 2
    assert ("error: the program at __main__.py:4: GpuNodePool 'h100-mig': max_szie: unknown argument; "
            "did you mean `max_size`?") in err.splitlines()
    assert "Pulumi.dev.yaml" not in err and "maxSzie" not in err


def test_a_stack_file_error_still_names_the_stack_file_and_its_spelling(tmp_path, capsys):
    bad = tmp_path / "Pulumi.dev.yaml"
    bad.write_text((STACKS / "Pulumi.dev.yaml").read_text().replace("maxSize:", "maxSzie:", 1))
    code = main(["plan", "--config", str(bad), "--project-dir", str(ROOT), "--as-of", AS_OF])
    err = capsys.readouterr().err
    assert code == 2 and "Pulumi.dev.yaml: cluster.create.systemNodes.maxSzie: unknown field" in err
    assert err.rstrip().endswith("did you mean `maxSize`?")


MIG = '"max_size": 2, "sharing": {"mode": "mig", "strategy": "mixed", "layout": {"3g.40gb": 1, "2g.20gb": 1, "1g.10gb": 2}},'


def test_a_library_pool_is_judged_by_the_environment_its_program_gave_it(tmp_path, capsys):
    project(tmp_path, POOL.format(environment="dev", extra='"max_size": 2,', instance_type="g5.xlarge"))
    code, out, _ = plan(capsys, tmp_path)
    assert code == 0 and "Policy: passed" in out and "node-group-protected" not in out


def test_a_library_pool_in_prod_is_held_to_prod(tmp_path, capsys):
    project(tmp_path, POOL.format(environment="prod", extra='"max_size": 2,', instance_type="g5.xlarge"))
    code, out, _ = plan(capsys, tmp_path)
    assert "node-group-protected" not in out  # prod protects the pool by default
    # and holds its new nodes to an acceptance gate, which this program does not install
    mandatory = [line.split()[1] for line in out.splitlines() if line.strip().startswith("mandatory ")]
    assert code == 1 and mandatory == ["gpu-pool-acceptance-gated"]
    (tmp_path / "__main__.py").write_text((tmp_path / "__main__.py").read_text().replace(
        "pool = GpuNodePool(", "pool = GpuNodePool(opts=pulumi.ResourceOptions(protect=False), name=").replace(
        '"h100-mig", {', '"h100-mig", args={'))
    code, out, _ = plan(capsys, tmp_path)
    assert code == 1 and "is not protected in prod" in out


def test_support_windows_name_the_python_argument_that_pins_the_version(tmp_path, capsys):
    """Judged on the plan's day (`--as-of`), not the stack file's fields: this program has none."""
    project(tmp_path, POOL.format(environment="prod", extra='"max_size": 2,', instance_type="g5.xlarge"))
    code, out, _ = plan(capsys, tmp_path, "dev", "--as-of", "2027-08-01")
    assert code == 1
    assert ("lifecycle-end-of-life  (stack): kubernetes_version of GpuNodePool 'h100-mig': Kubernetes 1.33 reached "
            "the end of EKS extended support on 2027-07-29") in out
    assert "upgrade kubernetes_version of GpuNodePool 'h100-mig' one minor at a time, next 1.34" in out
    assert "kubernetesVersion" not in out


KARPENTER_POOL = """\
import pulumi
from gpu_platform import KarpenterNodePool

pool = KarpenterNodePool("l4", {{
    "cluster_name": "gpu-dev", "instance_types": ["g6.xlarge"], "capacity_type": "on-demand", "max_size": 2,
    "kubernetes_version": "1.33", {environment}
    "ami": {{"type": "AL2023_x86_64_NVIDIA", "alias": "al2023@v20251120"}},
}})
pulumi.export("pool", pool.node_pool_name)
"""


def test_a_library_karpenter_pool_is_judged_by_the_environment_its_program_gave_it(tmp_path, capsys):
    project(tmp_path, KARPENTER_POOL.format(environment='"environment": "dev",'))
    code, out, _ = plan(capsys, tmp_path)
    assert code == 0 and "Policy: passed" in out


def test_a_library_karpenter_pool_given_no_environment_is_held_to_prod(tmp_path, capsys):
    project(tmp_path, KARPENTER_POOL.format(environment=""))
    code, out, _ = plan(capsys, tmp_path)
    assert code == 1
    assert "NodePool 'l4' is not protected when the environment is unknown" in out
    assert "`environment` on the pool's component" in out and "karpenter-disruption-window" in out


def test_a_mig_pool_on_a_cluster_that_runs_the_operator_plans_clean(tmp_path, capsys):
    project(tmp_path, POOL.format(environment="dev", extra=MIG, instance_type="p5.48xlarge"))
    code, out, _ = plan(capsys, tmp_path)
    assert code == 1 and "existingGpuOperator: true" in out
    (tmp_path / "policy.json").write_text('{"mig-layout-valid": {"existingGpuOperator": true}}')
    code, out, _ = plan(capsys, tmp_path, "dev", "--policy-config", str(tmp_path / "policy.json"))
    assert code == 0 and "Policy: passed" in out


REMOTE = """\
import pulumi


class ManagedNodeGroup(pulumi.ComponentResource):
    \"\"\"Declared as pulumi-eks's generated SDK declares it: a multi-language (remote) component.\"\"\"

    def __init__(self, name, args, opts=None):
        super().__init__("eks:index:ManagedNodeGroup", name, {**args, "node_group": None}, opts, remote=True)

    @property
    @pulumi.getter(name="nodeGroup")
    def node_group(self):
        return pulumi.get(self, "node_group")


group = ManagedNodeGroup("gpu", {"cluster": "gpu-dev", "instance_types": ["p5.48xlarge"]})
pulumi.export("name", group.node_group.node_group_name)
"""


def test_a_component_the_plan_cannot_look_inside_is_named_not_checked(tmp_path, capsys):
    project(tmp_path, REMOTE)
    code = main(["plan", "--stack", "dev", "--project-dir", str(tmp_path), "--as-of", AS_OF,
                 "--json", str(tmp_path / "plan.json")])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert "Not checked (1)" in captured.out and "eks:index:ManagedNodeGroup::gpu: a multi-language component" in captured.out
    assert "warning: not checked (the plan could not look inside): eks:index:ManagedNodeGroup::gpu" in captured.err
    plan_doc = json.loads((tmp_path / "plan.json").read_text())
    assert [(e["type"], e["name"]) for e in plan_doc["notChecked"]] == [("eks:index:ManagedNodeGroup", "gpu")]
    assert plan_doc["outputs"] == {"name": "[unknown]"}  # read through the component: unknown, not a crash
    assert schema_problems(plan_doc) == []


def test_fail_on_unchecked_makes_it_an_error(tmp_path, capsys):
    project(tmp_path, REMOTE)
    code, _, err = plan(capsys, tmp_path, "dev", "--fail-on-unchecked")
    assert code == 1 and "error: --fail-on-unchecked: the plan could not look inside eks:index:ManagedNodeGroup::gpu" in err


def test_a_plan_that_saw_everything_has_no_not_checked_list(tmp_path, capsys):
    project(tmp_path, POOL.format(environment="dev", extra='"max_size": 2,', instance_type="g5.xlarge"))
    code, out, _ = plan(capsys, tmp_path, "dev", "--fail-on-unchecked")
    assert code == 0 and "Not checked" not in out

