"""Stack-file rules for Karpenter pools: what can be decided before anything reaches AWS.

Each rule yields (field path, message), as spec/rules.py does; it calls `rules` once and `ami_rules` for
the image of each Karpenter pool.
"""
from __future__ import annotations

import re
from collections.abc import Iterator

from gpu_platform.facts import catalog
from gpu_platform.facts.karpenter import KARPENTER, POD_EVICTING_REASONS
from gpu_platform.facts.karpenter_window import window_problem
from gpu_platform.spec.field_path import CLUSTER_VERSION, FieldPath, Problem
from gpu_platform.spec.models import NodePoolSpec, PlatformSpec
from gpu_platform.spec.pool_context import PoolContext

PROD_CONSOLIDATION = "WhenEmpty"
PROD_EXPIRY = "Never"
KARPENTER_AT = FieldPath.of("karpenter")


def rules(spec: PlatformSpec) -> Iterator[Problem]:
    for pool in spec.node_pools:
        yield from pool_rules(PoolContext.of(spec, pool), pool)
    if any(pool.provisioner == KARPENTER for pool in spec.node_pools):
        yield from _platform_rules(spec)


def pool_rules(ctx: PoolContext, pool: NodePoolSpec) -> Iterator[Problem]:
    """A pool's Karpenter settings: only on Karpenter pools, and what Karpenter can provision."""
    at = ctx.at
    if pool.provisioner != KARPENTER:
        if pool.karpenter is not None:
            yield at / "karpenter", "applies to pools with provisioner: karpenter"
        if pool.ami.alias is not None:
            yield at / "ami.alias", "applies to Karpenter pools; a managed node group pins ami.releaseVersion"
        return
    yield from _pool_rules(ctx, at, pool)


def _platform_rules(spec: PlatformSpec) -> Iterator[Problem]:
    k = spec.karpenter
    release = catalog.KARPENTER_RELEASES.get(k.chart_version)
    if release is None:
        yield KARPENTER_AT / "chartVersion", f"must be one of {', '.join(catalog.KARPENTER_RELEASES)} (CRDs checked)"
    elif spec.cluster.kubernetes_version not in release.kubernetes_versions:
        yield (CLUSTER_VERSION, f"Karpenter {release.version} supports Kubernetes "
               f"{', '.join(release.kubernetes_versions)}; keep these pools on managed node groups, or pick another version")
    for key in spec.tags:
        if key in catalog.KARPENTER_RESTRICTED_TAGS or key.startswith(catalog.KARPENTER_RESTRICTED_TAG_PREFIX):
            yield (FieldPath.of("tags").key(key),
                   "is a tag Karpenter sets itself on the nodes it launches; EC2NodeClasses may not set it")
    window = k.disruption_window
    if window is None:
        if spec.prod:
            yield (KARPENTER_AT / "disruptionWindow", "prod Karpenter pools need a window for drift and consolidation, "
                   "e.g. {schedule: \"0 2 * * sun\", duration: 4h} (UTC); outside it no node running pods is disrupted")
        return
    problem = window_problem(window.schedule, window.duration)
    if problem:
        yield KARPENTER_AT / "disruptionWindow", f"{problem} (schedule {window.schedule!r}, duration {window.duration})"


def _pool_rules(ctx: PoolContext, at: FieldPath, pool: NodePoolSpec) -> Iterator[Problem]:
    if pool.min_size > 0:
        yield (at / "minSize", "must be 0 for a Karpenter pool: a NodePool has no minimum size (Karpenter launches "
               "nodes only for pending pods); use provisioner: managed-node-group for a warm floor of nodes")
    if pool.efa:
        yield (at / "efa", "EFA pools use managed node groups (one placement group and zone, every EFA interface); "
               "set provisioner: managed-node-group")
    if pool.update_strategy != "default":
        yield (at / "updateStrategy", "applies to managed node groups; Karpenter always launches a drifted node's "
               "replacement before draining it")
    if pool.sharing.mode == "mig" and ctx.mig_strategy == "mixed":
        yield (at / "sharing.strategy", "Karpenter knows GPUs only as nvidia.com/gpu, so pods asking for "
               "nvidia.com/mig-<profile> would never get a node from it: use strategy single on every MIG pool, or "
               "provisioner: managed-node-group (the Cluster Autoscaler learns the slices from node-template tags)")
    settings = pool.karpenter
    if ctx.prod and settings is not None:
        if settings.consolidation_policy != PROD_CONSOLIDATION:
            yield (at / "karpenter.consolidationPolicy", f"must be {PROD_CONSOLIDATION} in prod: consolidating "
                   "underutilized nodes evicts running GPU pods")
        if settings.expire_after != PROD_EXPIRY:
            yield (at / "karpenter.expireAfter", f"must be {PROD_EXPIRY} in prod: expiry is not held by disruption "
                   f"budgets, so nodes would be drained outside the window ({', '.join(POD_EVICTING_REASONS)} are)")


def ami_rules(at: FieldPath, pool: NodePoolSpec) -> Iterator[Problem]:
    """The image of a Karpenter pool: an exact alias or an id, never `latest`, never a node-group release."""
    ami = pool.ami
    image = catalog.KARPENTER_IMAGES.get(ami.type)
    if image is None:
        yield at / "ami.type", f"Karpenter pools use one of {', '.join(catalog.KARPENTER_IMAGES)}"
        return
    if ami.release_version is not None:
        hint = f" ({image.alias_family}@v{ami.release_version.rsplit('-', 1)[1]} for this release)" \
            if image.alias_family == "al2023" else ""
        yield (at / "ami.releaseVersion", "is a managed node group setting; pin a Karpenter pool's image by ami.alias"
               f"{hint} or ami.imageId")
    if not image.alias_family:
        if ami.alias is not None:
            yield at / "ami.alias", f"{ami.type} has no EKS alias; pin the image by ami.imageId"
        if ami.image_id is None:
            yield at / "ami.imageId", f"pin the {ami.type} EKS image id (ami-...); look it up at {pool.ami.image.ssm_parameter}"
        return
    if (ami.alias is None) == (ami.image_id is None):
        yield (at / "ami", f"pin the image by exactly one of alias (e.g. {image.alias_example}) or imageId: without a "
               "pin Karpenter follows every new AMI and drifts every node")
        return
    if ami.alias is not None:
        family, _, version = ami.alias.partition("@")
        if family != image.alias_family:
            yield at / "ami.alias", f"{ami.type} takes a {image.alias_family}@... alias, e.g. {image.alias_example}"
        elif not re.fullmatch(image.alias_version, version):
            yield (at / "ami.alias", f"{ami.alias!r} is not an exact release (e.g. {image.alias_example}); `latest` "
                   "drifts every node whenever AWS publishes an AMI")
