"""What GpuPlatform is given is a stack file: a valid one plans, and every refusal names the stack-file field
(`teams[0].quota.gpus`), never the argument of a component the platform builds from it."""
from __future__ import annotations

import pytest

from gpu_platform.planner.cli import main
from tests.support.stacks import AS_OF, cached_plan, resource, stack_platform, write_stack


def mig_only(edit=None) -> dict:
    """The prod stack with its MIG pool only and one team whose quota is MIG slices alone."""
    platform = stack_platform("prod")
    platform["nodePools"] = [p for p in platform["nodePools"] if p["name"] == "h100-mig"]
    platform["teams"] = [{"name": "research", "quota": {"gpus": 0, "migSlices": {"1g.10gb": 4, "3g.40gb": 1},
                                                         "cpu": "64", "memory": "256Gi"}}]
    platform["monitoring"]["alerting"]["receivers"] = [
        r for r in platform["monitoring"]["alerting"]["receivers"] if r["name"] != "inference-oncall"]
    del platform["queueing"]
    if edit:
        edit(platform)
    return platform


def test_a_team_of_mig_slices_alone_plans():
    plan = cached_plan(mig_only())
    assert plan["policy"]["violations"] == []
    limits = resource(plan, "kubernetes:core/v1:LimitRange", "team-research-limits")
    pod = [lim for lim in limits["inputs"]["spec"]["limits"] if lim["type"] == "Pod"]
    assert pod == [{"type": "Pod", "max": {"nvidia.com/gpu": "0"}}]


def _set(path: str, value):
    def edit(platform: dict) -> None:
        *head, last = path.split(".")
        node = platform
        for part in head:
            node = node[int(part)] if part.isdigit() else node[part]
        node[int(last) if last.isdigit() else last] = value
    return edit


@pytest.mark.parametrize("path, value, field", [
    ("teams.0.quota.gpus", -1, "teams[0].quota.gpus"),
    ("teams.0.maxGpusPerPod", 0, "teams[0].maxGpusPerPod"),
    ("teams.0.quota.migSlices", {"9g.99gb": 1}, "teams[0].quota.migSlices"),
    ("nodePools.0.sharing.layout", {"1g.10gb": 99}, "nodePools[0].sharing.layout"),
    ("nodePools.0.maxSize", 0, "nodePools[0].maxSize"),
])
def test_a_refusal_names_the_stack_file_field_not_a_component_argument(tmp_path, capsys, path, value, field):
    stack = write_stack(tmp_path / "Pulumi.test.yaml", mig_only(_set(path, value)))
    code = main(["plan", "--config", str(stack), "--as-of", AS_OF])
    err = capsys.readouterr().err
    assert code == 2, err
    assert f"{field}" in err, err
    components = ("TeamNamespace", "GpuNodePool", "GpuOperator", "KarpenterNodePool", "Cluster '")
    assert not any(c in err for c in components), err


def _build_platform(tmp_path, platform: dict):
    """GpuPlatform built directly from `platform` in a program of its own, under the mock engine."""
    import json

    from tests.support.programs import run

    data = tmp_path / "platform.json"
    data.write_text(json.dumps(platform))
    return run(tmp_path / "program", f"""
        import json, pathlib

        from gpu_platform import GpuPlatform, GpuPlatformArgs

        platform = json.loads(pathlib.Path({str(data)!r}).read_text())
        GpuPlatform("gpus", GpuPlatformArgs(platform=platform, region="us-east-1"))
    """)


def _library(platform: dict) -> dict:
    """A staging platform a program builds itself: its receivers' secrets are not in the file, so no receivers
    (which prod requires)."""
    platform["environment"] = "staging"
    platform["monitoring"].pop("alerting", None)
    return platform


def test_gpu_platform_builds_a_team_of_mig_slices_alone(tmp_path):
    from tests.support.programs import registered

    recording = _build_platform(tmp_path, _library(mig_only()))
    assert [r.name for r in registered(recording, "kubernetes:core/v1:LimitRange")] == ["team-research-limits"]


@pytest.mark.parametrize("path, value, field", [
    ("teams.0.quota.gpus", -1, "teams[0].quota.gpus"),
    ("teams.0.maxGpusPerPod", 0, "teams[0].maxGpusPerPod"),
    ("nodePools.0.sharing.layout", {"1g.10gb": 99}, "nodePools[0].sharing.layout"),
])
def test_gpu_platform_names_the_stack_file_field_it_refuses(tmp_path, path, value, field):
    """In the program's spelling: the field of the dict it gave as `platform`, which has the stack file's shape."""
    from gpu_platform.spec.errors import COMPONENT_ARGUMENTS, SpecError

    with pytest.raises(SpecError) as err:
        _build_platform(tmp_path, _library(mig_only(_set(path, value))))
    assert err.value.subject == COMPONENT_ARGUMENTS, err.value
    prefixes = ("GpuPlatform 'gpus': platform.teams", "GpuPlatform 'gpus': platform.nodePools")
    assert err.value.problems and all(p.startswith(prefixes) for p in err.value.problems), err.value
    assert any(p.startswith(f"GpuPlatform 'gpus': platform.{field}: ") for p in err.value.problems), err.value
    assert [e["property_path"] for e in err.value.errors] == [p.split(": ")[1] for p in err.value.problems]


PLATFORM_PROGRAM = """\
import json, pathlib

import pulumi
from gpu_platform import GpuPlatform, GpuPlatformArgs

platform = json.loads((pathlib.Path(__file__).parent / "platform.json").read_text())
gpus = GpuPlatform("gpus", GpuPlatformArgs(platform=platform, region="us-east-1"))
pulumi.export("cluster", gpus.cluster_name)
"""


def test_under_the_planner_a_program_s_platform_is_refused_naming_the_program(tmp_path, capsys):
    """Not the stack file: the program built the platform from a dict of its own, and the stack file it planned
    has no platform object to blame."""
    import json

    from tests.planner.test_user_programs import project

    platform = _library(mig_only(_set("teams.0.quota.gpus", -1)))
    platform["teams"][0]["maxGpusPerPood"] = 1
    project(tmp_path, PLATFORM_PROGRAM)
    (tmp_path / "platform.json").write_text(json.dumps(platform))
    code = main(["plan", "--stack", "dev", "--project-dir", str(tmp_path), "--as-of", AS_OF])
    err = capsys.readouterr().err
    assert code == 2, err
    where = "error: the program at __main__.py:7: GpuPlatform 'gpus': platform.teams[0]."
    assert f"{where}quota.gpus: Input should be greater than or equal to 0" in err.splitlines(), err
    assert any(line.startswith(f"{where}maxGpusPerPood: unknown field") and line.endswith("did you mean `maxGpusPerPod`?")
               for line in err.splitlines()), err
    assert "Pulumi.dev.yaml" not in err and "max_gpus_per_pod" not in err


def test_what_the_platform_object_asks_of_the_options_is_refused_at_its_field(tmp_path):
    """A cluster the platform creates takes no Kubernetes provider from the program's options."""
    import json

    from gpu_platform.spec.errors import COMPONENT_ARGUMENTS, SpecError
    from tests.support.programs import run

    platform = _library(mig_only())
    assert "create" in platform["cluster"]
    data = tmp_path / "platform.json"
    data.write_text(json.dumps(platform))
    with pytest.raises(SpecError) as err:
        run(tmp_path / "program", f"""
            import json, pathlib

            import pulumi
            import pulumi_kubernetes
            from gpu_platform import GpuPlatform, GpuPlatformArgs

            platform = json.loads(pathlib.Path({str(data)!r}).read_text())
            k8s = pulumi_kubernetes.Provider("k8s", kubeconfig="{{}}")
            GpuPlatform("gpus", GpuPlatformArgs(platform=platform, region="us-east-1"),
                        opts=pulumi.ResourceOptions(providers={{"kubernetes": k8s}}))
        """)
    assert err.value.subject == COMPONENT_ARGUMENTS
    (problem,) = err.value.problems
    assert problem.startswith("GpuPlatform 'gpus': platform.cluster.create: a Kubernetes provider cannot be given")
