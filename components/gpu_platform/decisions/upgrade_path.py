"""Upgrade paths: what going from one set of pins to another skips or breaks, and what to do first.

Pure: two `Pinned` (decisions/pinned.py: what a base and a head plan register) give findings. Rules:
- Kubernetes: EKS upgrades a control plane one minor version at a time and never downgrades it.
- GPU Operator: NVIDIA supports upgrades within a release line or to the next line only, and no downgrades.
- NVIDIA driver branch (the operator's driver, or the branch a pool's AMI release carries): a change reloads
  the kernel module on every GPU node; named with the new branch's end of life.
- EKS add-ons on the head's Kubernetes version: kube-proxy is built per minor and must match it; other
  add-on lines must be offered for that version (catalog.ADDON_KUBERNETES); the Cluster Autoscaler
  image's minor must match the cluster's.
Severity `error` marks an unsupported step, `warning` a supported change to prepare for.
"""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterator

from gpu_platform.decisions.lifecycle import DRIVER_FIELD, KUBERNETES_FIELD, OPERATOR_FIELD, next_minor, pool_driver
from gpu_platform.decisions.pinned import Pinned
from gpu_platform.facts import catalog
from gpu_platform.facts.lifecycle_calendar import addon_line, operator_line

ERROR, WARNING = "error", "warning"
SEVERITIES = (ERROR, WARNING)
KUBERNETES, OPERATOR, DRIVER, ADDON, AUTOSCALER = "kubernetes", "gpu-operator", "driver", "addon", "autoscaler"


@dataclass(frozen=True)
class Finding:
    severity: str  # error | warning
    kind: str  # kubernetes | gpu-operator | driver | addon | autoscaler
    subject: str  # e.g. "Kubernetes 1.33 -> 1.35"
    message: str  # what is wrong or needs care
    do_first: str  # what to do before (or instead of) this change


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.lstrip("v").split(".")[:2]
    return int(major), int(minor)


def _kubernetes(base: Pinned, head: Pinned) -> Iterator[Finding]:
    old, new = base.kubernetes, head.kubernetes
    if not old or not new or old == new:
        return
    subject = f"Kubernetes {old} -> {new}"
    if _minor(new) < _minor(old):
        yield Finding(ERROR, KUBERNETES, subject, f"a downgrade: EKS cannot downgrade a control plane from {old}",
                      f"keep {KUBERNETES_FIELD} at {old}, or build a new cluster on {new} and move the workloads")
        return
    steps = []
    step = old
    while _minor(step) < _minor(new):
        step = next_minor(step)
        steps.append(step)
    if len(steps) > 1:
        skipped = ", ".join(steps[:-1])
        yield Finding(ERROR, KUBERNETES, subject,
                      f"skips {skipped}: EKS upgrades a control plane one minor version at a time",
                      f"upgrade to {steps[0]} ({KUBERNETES_FIELD}, the kube-proxy, coredns and vpc-cni add-ons "
                      f"and the node groups' AMI releases for {steps[0]}), apply, then take the next step: "
                      f"{old} -> {' -> '.join(steps)}")


def _operator(base: Pinned, head: Pinned) -> Iterator[Finding]:
    old, new = base.operator_chart, head.operator_chart
    if not old or not new or operator_line(old) == operator_line(new):
        return
    lines = list(catalog.OPERATOR_LINES)
    subject = f"GPU Operator {old} -> {new}"
    unknown = [v for v in (old, new) if operator_line(v) not in catalog.OPERATOR_LINES]
    if unknown:
        yield Finding(WARNING, OPERATOR, subject,
                      f"{', '.join(unknown)} is not a release line in the calendar ({', '.join(lines)}): the upgrade "
                      "path cannot be checked", "read NVIDIA's release notes for every line in between")
        return
    i, j = lines.index(operator_line(old)), lines.index(operator_line(new))
    if j < i:
        yield Finding(ERROR, OPERATOR, subject, "a downgrade: NVIDIA supports upgrades only",
                      f"keep {OPERATOR_FIELD} at {old}")
    elif j - i > 1:
        skipped = ", ".join(lines[i + 1:j])
        yield Finding(ERROR, OPERATOR, subject,
                      f"skips {skipped}: NVIDIA supports GPU Operator upgrades within a release line or to the next "
                      "line only", f"upgrade {OPERATOR_FIELD} to {lines[i + 1]}.x, apply and wait for the operator's "
                                   f"pods to be ready, then take the next line: {' -> '.join(lines[i:j + 1])}")


def _branch_end(branch: str) -> str:
    info = catalog.DRIVER_BRANCHES.get(branch)
    return f"R{branch} ({info.kind}, end of life {info.eol})" if info else f"R{branch} (not in the calendar)"


def _branches(pins: Pinned) -> dict[str, tuple[str, ...]]:
    """Where each driver comes from -> the branches it runs (the AMI's candidates when it picks per type)."""
    found: dict[str, tuple[str, ...]] = {}
    if pins.operator_driver:
        found["the GPU Operator's driver"] = (catalog.driver_branch(pins.operator_driver),)
    for pool in pins.pools:
        pd = pool_driver(pool)
        branches = tuple(dict.fromkeys((*pd.certain, *pd.possible)))
        if branches:
            found[f"pool {pool.name}"] = branches
    return found


def _drivers(base: Pinned, head: Pinned) -> Iterator[Finding]:
    old, new = _branches(base), _branches(head)
    for where in sorted(set(old) & set(new)):
        if old[where] == new[where]:
            continue
        before = "/".join(f"R{b}" for b in old[where])
        after = " or ".join(_branch_end(b) for b in new[where])
        field = DRIVER_FIELD if where.startswith("the GPU Operator") else "the pool's ami.releaseVersion"
        how = ("the GPU Operator reloads the driver node by node under gpuOperator.upgradePolicy, restarting GPU pods"
               if field == DRIVER_FIELD else "the node group rolls every node onto the new AMI release")
        yield Finding(WARNING, DRIVER, f"NVIDIA driver {before} -> {'/'.join(f'R{b}' for b in new[where])} ({where})",
                      f"{where} changes driver branch ({field}) to {after}: {how}",
                      "check every workload's CUDA version against the new branch, and roll it out on a non-critical "
                      "pool or in a quiet window first")


def _addons(base: Pinned, head: Pinned) -> Iterator[Finding]:
    k8s = head.kubernetes
    if not k8s:
        return
    moved = base.kubernetes != k8s
    for name, version in head.addons.items():
        if not moved and base.addons.get(name) == version:
            continue
        line, field = addon_line(version), f"cluster.create.addons.{name}"
        if name == "aws-efs-csi-driver":
            field = "modelCache.addonVersion"
        subject = f"{name} {version} on Kubernetes {k8s}"
        lookup = f"aws eks describe-addon-versions --addon-name {name} --kubernetes-version {k8s}"
        if name in catalog.ADDONS_MATCHING_CLUSTER_MINOR:
            if line != f"v{k8s}":
                yield Finding(ERROR, ADDON, subject, f"{name} is built per Kubernetes minor: {version} is for "
                              f"{line.lstrip('v')}, not {k8s}", f"set {field} to a v{k8s} build ({lookup})")
            continue
        lines = catalog.ADDON_KUBERNETES.get(name)
        if lines is None or line not in lines:
            if moved:
                yield Finding(WARNING, ADDON, subject, f"the catalog has no compatibility data for {name} {line}",
                              f"confirm {version} is offered for {k8s} ({lookup})")
            continue
        if k8s not in lines[line]:
            fits = [ln for ln, versions in lines.items() if k8s in versions]
            yield Finding(WARNING, ADDON, subject,
                          f"{name} {line} is offered for Kubernetes {', '.join(lines[line])}, not {k8s}",
                          f"move {field} to a line offered for {k8s}"
                          + (f" ({' or '.join(fits)}; {lookup})" if fits else f" ({lookup})"))


def _autoscaler(head: Pinned) -> Iterator[Finding]:
    tag, k8s = head.autoscaler_tag, head.kubernetes
    if tag and k8s and ".".join(tag.lstrip("v").split(".")[:2]) != k8s:
        yield Finding(WARNING, AUTOSCALER, f"Cluster Autoscaler {tag} on Kubernetes {k8s}",
                      "the autoscaler's minor must match the cluster's",
                      f"remove clusterAutoscaler.imageTag (the platform picks "
                      f"{catalog.CLUSTER_AUTOSCALER_IMAGE_TAGS.get(k8s, 'the matching release')}) or pin a v{k8s} tag")


def compare(base: Pinned, head: Pinned) -> list[Finding]:
    """Every finding for going from `base` to `head`, errors first."""
    found = [*_kubernetes(base, head), *_operator(base, head), *_drivers(base, head), *_addons(base, head)]
    if base.autoscaler_tag != head.autoscaler_tag or base.kubernetes != head.kubernetes:
        found += list(_autoscaler(head))
    return sorted(found, key=lambda f: SEVERITIES.index(f.severity))
