"""`gpu-platform plan` on a user's own Pulumi project (not a gpu-platform stack file): a component the
program builds with wrong arguments is refused naming the program, never a stack file it did not read."""
from __future__ import annotations

import textwrap
from pathlib import Path

import yaml

from gpu_platform.planner.cli import main
from tests.support.stacks import AS_OF, ROOT, STACKS

POOL = """\
import pulumi
from gpu_platform import GpuNodePool

pool = GpuNodePool("h100-mig", {{
    "cluster_name": "gpu-dev", "node_role_arn": "arn:aws:iam::123456789012:role/gpu-nodes",
    "subnet_ids": ["subnet-0123456789abcdef0"], "instance_types": ["p5.48xlarge"], "capacity_type": "on-demand",
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
    code = main(["plan", "--stack", stack, "--project-dir", str(folder), "--as-of", AS_OF, *extra])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_misspelt_argument_names_the_program_and_the_python_keyword(tmp_path, capsys):
    project(tmp_path, POOL.format(environment="dev", extra='"max_szie": 2,'))
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
