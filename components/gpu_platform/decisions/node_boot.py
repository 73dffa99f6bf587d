"""What a GPU node does at boot before it joins: the user data of a pool's launch template (pure).

Steps, each only where it applies: the instance-store RAID0 (local_storage), the EFA driver check
(efa, Ubuntu), the FSx for Lustre client when the stack has a datasets file system (datasets).

- AL2023 (EKS-optimized AMI): EKS merges the template's MIME parts with its own NodeConfig (AWS EKS user
  guide, "Customize managed nodes with launch templates"). A NodeConfig part sets nodeadm's local
  storage and the kubelet's CPU and topology managers (decisions/numa.py); a shell part installs the
  Lustre client. Nothing to add: no user data. Ubuntu passes those managers as kubelet flags.
- Ubuntu (custom image): the template's user data is the node's whole boot. One script, errexit: the
  steps, then Canonical's bootstrap. A step that fails stops the node from joining, so EKS reports a
  node creation failure instead of a node that silently lacks what its pool promises.
- Bottlerocket: none of these steps (its user data is TOML settings, which EKS merges with its own); the
  spec refuses what needs them. A DRA pool's settings turn the image's own device plugin off; the CPU and
  topology managers are settings.kubernetes keys.

Any change here is a new launch template version: EKS rolls the pool (docs/policies.md).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Optional, Union
from collections.abc import Mapping, Sequence

from gpu_platform.decisions import launch_template as lt
from gpu_platform.decisions import numa
from gpu_platform.decisions.datasets import lustre_boot_lines, mounts_datasets
from gpu_platform.decisions.dra import DRA
from gpu_platform.decisions.efa import ubuntu_boot_lines as efa_lines
from gpu_platform.decisions.local_storage import node_config, pool_local_storage
from gpu_platform.decisions.local_storage import ubuntu_boot_lines as storage_lines
from gpu_platform.facts import catalog
from gpu_platform.facts import kubelet as kubelet_facts

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec
    from gpu_platform.spec.pool_context import PoolContext


def ubuntu_prelude(ctx: "PoolContext", pool: "NodePoolSpec") -> list[str]:
    """The Ubuntu boot steps before bootstrap. Lustre first (apt), then EFA (restarts containerd with
    unlimited memlock), then the array (moves containerd's and kubelet's state onto it)."""
    lines: list[str] = []
    if mounts_datasets(ctx, pool):
        lines += lustre_boot_lines(pool.ami.image)
    if pool.efa and pool.ami.image.efa_driver == "boot-check":
        lines += efa_lines(pool)
    if pool_local_storage(pool).how == "script":
        lines += storage_lines()
    return lines


def al2023_parts(ctx: "PoolContext", pool: "NodePoolSpec") -> list[Union[str, tuple[str, str]]]:
    """MIME parts EKS merges into an AL2023 node's user data."""
    parts: list[Union[str, tuple[str, str]]] = []
    raid0, kubelet = pool_local_storage(pool).how == "nodeadm", numa.pool_kubelet(pool).config()
    if raid0 or kubelet:
        parts.append((catalog.NODEADM_CONTENT_TYPE, node_config(raid0, kubelet)))
    lustre = lustre_part(ctx, pool)
    if lustre:
        parts.append(lustre)
    return parts


def lustre_part(ctx: "PoolContext", pool: "NodePoolSpec") -> Optional[str]:
    """The shell part installing the Lustre client on an AL2023 node (None when the stack has no datasets)."""
    if not mounts_datasets(ctx, pool):
        return None
    return "\n".join(["#!/bin/bash", "set -o errexit -o nounset -o pipefail", *lustre_boot_lines(pool.ami.image)]) + "\n"


def bottlerocket_settings(pool: "NodePoolSpec") -> Optional[str]:
    """The TOML settings of a Bottlerocket node (None when there is nothing to set): on a DRA pool its own
    device plugin is off, since the DRA driver publishes the GPUs (never both on one node); the pool's CPU
    and topology managers (decisions/numa.py)."""
    kubelet = bottlerocket_kubelet(pool)
    tables: list[str] = [kubelet] if kubelet else []
    if pool.gpu_allocation == DRA:
        table, key, value = catalog.BOTTLEROCKET_DEVICE_PLUGIN_OFF
        tables.append(f"[{table}]\n{key} = {value}\n")
    return "\n".join(tables) or None


def bottlerocket_kubelet(pool: "NodePoolSpec") -> Optional[str]:
    """The settings.kubernetes TOML table of the pool's CPU and topology managers (None: kubelet defaults)."""
    kubernetes = numa.bottlerocket_settings(pool)
    if not kubernetes:
        return None
    lines = "".join(f'{key} = "{value}"\n' for key, value in kubernetes.items())
    return f"[{kubelet_facts.BOTTLEROCKET_KUBERNETES_TABLE}]\n{lines}"


def eks_image_user_data(ctx: "PoolContext", pool: "NodePoolSpec") -> Optional[str]:
    """Base64 user data for a pool on an EKS-optimized AMI; None when there is nothing to add."""
    if pool.ami.image.os == "bottlerocket":
        settings = bottlerocket_settings(pool)
        return lt.encode(settings) if settings else None
    if pool.ami.image.os != "al2023":
        return None
    parts = al2023_parts(ctx, pool)
    return lt.encode(lt.mime_multipart(*parts)) if parts else None


def ubuntu_user_data(ctx: "PoolContext", pool: "NodePoolSpec", cluster: str, endpoint: str, ca_data: str,
                     service_cidr: str, labels: Mapping[str, str], taints: Sequence[tuple[str, str, str]]) -> str:
    """Base64 user data for an Ubuntu pool: the boot steps, then Canonical's bootstrap into `cluster`."""
    return lt.ubuntu_user_data(cluster, endpoint, ca_data, service_cidr, labels, taints,
                               ubuntu_prelude(ctx, pool), numa.kubelet_flags(pool))
