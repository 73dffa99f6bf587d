"""`--out DIR`: Kubernetes manifests, Helm values, files from sections, and the directory's upkeep."""
from __future__ import annotations

import kubernetes_validate
import pytest
import yaml

from gpu_platform.planner import outputs
from gpu_platform.planner.errors import PlannerError
from gpu_platform.planner.plan import build_plan
from gpu_platform.planner.sections import PlanContext, Section

FILES_SECTION = Section("files", "Files", lambda ctx: None, str, str,
                        files=lambda data: {"extra/notes.txt": data["text"]})


@pytest.fixture
def ctx(recording):
    return PlanContext(plan=build_plan(recording), recording=recording, stack=None, platform=None, spec=None)


@pytest.fixture
def written(ctx, tmp_path):
    out = tmp_path / "out"
    outputs.write(out, ctx)
    return out


def _load(path):
    return yaml.safe_load(path.read_text())


def test_one_manifest_per_kubernetes_object(written, ctx):
    objects = [r for r in ctx.plan["resources"] if outputs.is_kubernetes_object(r)]
    assert len(list((written / "manifests").rglob("*.yaml"))) == len(objects) == 3


def test_manifest_is_the_objects_inputs(written, ctx):
    namespace = next(r for r in ctx.plan["resources"] if r["type"] == "kubernetes:core/v1:Namespace")
    assert _load(written / "manifests" / "_cluster" / "Namespace-box.yaml") == namespace["inputs"]


def test_manifest_starts_with_api_version_kind_metadata(written):
    text = (written / "manifests" / "_cluster" / "ClusterRole-box-reader.yaml").read_text()
    assert [line.split(":")[0] for line in text.splitlines() if not line.startswith(" ")][:3] == \
           ["apiVersion", "kind", "metadata"]


def test_namespaced_object_goes_under_its_namespace_with_its_generated_name(written, recording):
    config_map = next(r for r in recording.resources if r.name == "box-settings")
    name = config_map.outputs["metadata"]["name"]
    assert _load(written / "manifests" / "box" / f"ConfigMap-{name}.yaml")["kind"] == "ConfigMap"


def test_secret_values_are_not_written(written):
    assert "s3cr3t" not in "".join(p.read_text() for p in written.rglob("*.yaml"))


def test_manifests_validate_against_the_kubernetes_schema(written):
    paths = sorted((written / "manifests").rglob("*.yaml"))
    assert paths, "the fixture program's Kubernetes objects were not written"
    for path in paths:
        kubernetes_validate.validate(_load(path), "1.33", strict=True)


def test_helm_release_values_are_written_with_chart_header(written, recording):
    release = next(r for r in recording.resources if r.type == "kubernetes:helm.sh/v3:Release")
    path = written / "helm" / f"{release.outputs['name']}.values.yaml"
    text = path.read_text()
    assert _load(path) == release.inputs["values"]
    assert "# chart: gpu-operator  version: v26.7.0" in text and "# repo: https://helm.ngc.nvidia.com/nvidia" in text


def test_helm_releases_and_providers_are_not_manifests(written):
    kinds = {_load(p)["kind"] for p in (written / "manifests").rglob("*.yaml")}
    assert kinds == {"Namespace", "ConfigMap", "ClusterRole"}


def test_sections_contribute_files(ctx, tmp_path):
    ctx.plan["files"] = {"text": "hello"}
    outputs.write(tmp_path / "out", ctx, [FILES_SECTION])
    assert (tmp_path / "out" / "extra" / "notes.txt").read_text() == "hello"


def test_file_writers_contribute_files(ctx, tmp_path, monkeypatch):
    monkeypatch.setattr(outputs, "FILE_WRITERS", [lambda c: {"more/count.txt": str(len(c.plan["resources"]))}])
    outputs.write(tmp_path / "out", ctx)
    assert (tmp_path / "out" / "more" / "count.txt").read_text() == str(len(ctx.plan["resources"]))


def test_rewrite_removes_files_of_the_previous_run(ctx, tmp_path):
    ctx.plan["files"] = {"text": "hello"}
    outputs.write(tmp_path / "out", ctx, [FILES_SECTION])
    outputs.write(tmp_path / "out", ctx)
    assert not (tmp_path / "out" / "extra").exists()


def test_rewrite_keeps_unrelated_files_of_the_user(written, ctx):
    (written / "README.txt").write_text("mine")
    outputs.write(written, ctx)
    assert (written / "README.txt").read_text() == "mine"


def test_non_empty_directory_not_written_by_the_planner_is_refused(ctx, tmp_path):
    (tmp_path / "precious.txt").write_text("keep")
    with pytest.raises(PlannerError, match="not empty and was not written by gpu-platform"):
        outputs.write(tmp_path, ctx)


def test_file_outside_the_directory_is_refused(ctx, tmp_path):
    ctx.plan["files"] = {"text": "x"}
    escaping = Section("files", "Files", lambda c: None, str, str, files=lambda d: {"../escape.txt": "x"})
    with pytest.raises(ValueError, match="would leave the --out directory"):
        outputs.write(tmp_path / "out", ctx, [escaping])
