"""`--out DIR`: the plan's Kubernetes objects and Helm values as files a reviewer or a tool can check.

Layout:
  manifests/<namespace or _cluster>/<Kind>-<name>.yaml   every Kubernetes object, inputs as sent
  helm/<release>.values.yaml                              every Helm release's values (chart in header)
  <whatever sections and FILE_WRITERS add>                e.g. a Prometheus rules file

The directory is the planner's: a marker file lists what the last run wrote, and the next run removes
exactly those files first, so nothing stale is left behind. A non-empty directory without the marker
is refused rather than mixed into.
"""
from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import Any
from collections.abc import Callable, Iterable

import yaml

from gpu_platform.planner.alertmanager_file import alertmanager_files
from gpu_platform.planner.errors import PlannerError
from gpu_platform.planner.mocks import HELM_RELEASE, is_cluster_scoped, kubernetes_kind
from gpu_platform.planner.rules_file import rules_files
from gpu_platform.planner.sections import PlanContext, Section
from gpu_platform.planner.wire import to_json_ready

MARKER = ".gpu-platform-out"
HEAD_KEYS = ("apiVersion", "kind", "metadata")

# Extra writers for features without a section: context -> {relative path: text}.
FILE_WRITERS: list[Callable[[PlanContext], dict[str, str]]] = [
    rules_files,  # prometheus/gpu-rules.yaml
    alertmanager_files,  # alertmanager/alertmanager.yaml
]


def is_kubernetes_object(resource: dict[str, Any]) -> bool:
    type_ = resource["type"]
    return resource["custom"] and type_.startswith("kubernetes:") and not type_.startswith("kubernetes:helm.sh/")


def manifest_files(ctx: PlanContext) -> dict[str, str]:
    outputs = {r.urn: r.outputs for r in ctx.recording.resources}
    recorded = {r.urn: r.inputs for r in ctx.recording.resources}
    files: dict[str, str] = {}
    for resource in ctx.plan["resources"]:
        if not is_kubernetes_object(resource):
            continue
        # As in the plan, but a secret map keeps its keys (values masked): the object stays well-formed.
        obj = to_json_ready(recorded[resource["urn"]], keep_secret_keys=True) if resource["urn"] in recorded \
            else resource["inputs"]
        meta = obj.get("metadata") or {}
        given = outputs.get(resource["urn"], {}).get("metadata") or {}
        name = meta.get("name") or given.get("name") or resource["name"]
        namespace = "_cluster" if is_cluster_scoped(resource["type"]) else meta.get("namespace") or "default"
        kind = obj.get("kind") or kubernetes_kind(resource["type"])
        files[_unique(files, f"manifests/{namespace}/{kind}-{name}.yaml")] = _yaml(_k8s_order(obj))
    return files


def helm_files(ctx: PlanContext) -> dict[str, str]:
    outputs = {r.urn: r.outputs for r in ctx.recording.resources}
    files: dict[str, str] = {}
    for resource in ctx.plan["resources"]:
        if resource["type"] != HELM_RELEASE:
            continue
        inputs = resource["inputs"]
        name = inputs.get("name") or outputs.get(resource["urn"], {}).get("name") or resource["name"]
        header = [f"# Helm release {name} in namespace {inputs.get('namespace') or 'default'}",
                  f"# chart: {inputs.get('chart', '')}  version: {inputs.get('version', '')}",
                  f"# repo: {(inputs.get('repositoryOpts') or {}).get('repo', '')}"]
        if inputs.get("valueYamlFiles"):
            header.append("# note: valueYamlFiles are merged under these values by Helm and are not shown")
        path = _unique(files, f"helm/{name}.values.yaml")
        files[path] = "\n".join(header) + "\n" + _yaml(inputs.get("values") or {})
    return files


def write(out_dir: Path, ctx: PlanContext, sections: Iterable[Section] = ()) -> list[str]:
    """Write every file under `out_dir`; returns the relative paths written."""
    files = {**manifest_files(ctx), **helm_files(ctx)}
    for section in sections:
        if section.name in ctx.plan:
            files.update(section.files(ctx.plan[section.name]))
    for writer in FILE_WRITERS:
        files.update(writer(ctx))
    targets = {rel: out_dir / _safe(rel) for rel in sorted(files)}  # check every path before touching disk
    _prepare(out_dir)
    for rel, target in targets.items():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(files[rel])
    (out_dir / MARKER).write_text("".join(f"{rel}\n" for rel in sorted(files)))
    return sorted(files)


def _prepare(out_dir: Path) -> None:
    """Remove what the previous run wrote; refuse a directory the planner did not write."""
    if out_dir.exists() and not out_dir.is_dir():
        raise PlannerError(f"--out {out_dir}: exists and is not a directory")
    marker = out_dir / MARKER
    if not marker.is_file():
        if out_dir.is_dir() and any(out_dir.iterdir()):
            raise PlannerError(f"--out {out_dir}: directory is not empty and was not written by gpu-platform; "
                               "choose a new or empty directory")
        out_dir.mkdir(parents=True, exist_ok=True)
        return
    for rel in marker.read_text().split():
        old = out_dir / _safe(rel)
        old.unlink(missing_ok=True)
        for parent in old.parents:  # drop directories the removal left empty
            if parent == out_dir or any(parent.iterdir()):
                break
            parent.rmdir()


def _safe(rel: str) -> Path:
    path = PurePosixPath(rel)
    if path.is_absolute() or ".." in path.parts:
        raise ValueError(f"output file {rel!r} would leave the --out directory")
    return Path(*path.parts)


def _unique(files: dict[str, str], path: str) -> str:
    stem, suffix = path.rsplit(".yaml", 1)[0], ".yaml"
    candidate, n = path, 2
    while candidate in files:
        candidate, n = f"{stem}-{n}{suffix}", n + 1
    return candidate


def _k8s_order(obj: dict[str, Any]) -> dict[str, Any]:
    """apiVersion, kind, metadata first (as people write manifests), the rest sorted."""
    head = {k: obj[k] for k in HEAD_KEYS if k in obj}
    return {**head, **{k: obj[k] for k in sorted(obj) if k not in head}}


def _yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=False, allow_unicode=True, width=1000)
