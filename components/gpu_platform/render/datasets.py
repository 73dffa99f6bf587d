"""The datasets file system's Kubernetes objects and IAM document: per team a PersistentVolume bound to a
`datasets` claim in the team's namespace (mounted by the workload helper at /datasets), and the FSx CSI
controller's describe-only policy (the volumes are static: the stack owns the file system)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from gpu_platform.decisions.datasets import capacity, claim_size
from gpu_platform.facts import catalog, names

if TYPE_CHECKING:
    from gpu_platform.spec.models import FsxLustreSpec


def controller_policy() -> dict:
    """The CSI controller may look at file systems, never create or delete one (static volumes only)."""
    return {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Action": ["fsx:DescribeFileSystems", "fsx:DescribeDataRepositoryAssociations"],
        "Resource": "*"}]}


# --- Kubernetes objects (values may be Outputs when registered) ---

def _labels(team: str) -> dict[str, str]:
    return {names.MANAGED_BY_LABEL: names.MANAGED_BY, names.TEAM_LABEL: team}


def volume_handle(file_system_id: str, team: str) -> str:
    """The CSI volume handle of a team's volume: unique per volume (kubelet keys mounts by it)."""
    return f"{file_system_id}::{team}"


def persistent_volume(fsx: "FsxLustreSpec", team: str, namespace: Any, handle: Any, dns_name: Any,
                      mount_name: Any) -> dict:
    """The team's view of the file system, reserved for its `datasets` claim in `namespace` (`handle`:
    `volume_handle`); the driver mounts by `dnsname` and `mountname`."""
    return {"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": names.datasets_volume(team), "labels": _labels(team)},
            "spec": {"capacity": {"storage": capacity(fsx)}, "volumeMode": "Filesystem",
                     "accessModes": ["ReadWriteMany"], "persistentVolumeReclaimPolicy": "Retain",
                     "storageClassName": "", "mountOptions": ["flock"],
                     "claimRef": {"namespace": namespace, "name": names.DATASETS_PVC},
                     "csi": {"driver": catalog.FSX_CSI_DRIVER, "volumeHandle": handle,
                             "volumeAttributes": {"dnsname": dns_name, "mountname": mount_name}}}}


def claim(fsx: "FsxLustreSpec", team: str, namespace: Any) -> dict:
    """The team's claim, bound to its own volume (no dynamic provisioning: empty storage class)."""
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": names.DATASETS_PVC, "namespace": namespace, "labels": _labels(team)},
            "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "",
                     "volumeName": names.datasets_volume(team),
                     "resources": {"requests": {"storage": claim_size(fsx)}}}}
