"""The datasets file system's Kubernetes objects and IAM document: per team a PersistentVolume of the team's
own directory bound to a `datasets` claim in its namespace (mounted by the workload helper at /datasets), with
the shared area a read-only volume and `datasets-shared` claim per team, the Job that makes the directories,
and the FSx CSI controller's describe-only policy (the volumes are static: the stack owns the file system)."""
from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from gpu_platform.decisions.datasets import SHARED_CLAIM_SIZE, SHARED_DIR_MODE, TEAM_DIR_MODE, capacity, claim_size, shared_path, team_path
from gpu_platform.facts import catalog, names

if TYPE_CHECKING:
    from gpu_platform.spec.models import FsxLustreSpec


def controller_policy() -> dict[str, Any]:
    """The CSI controller may look at file systems, never create or delete one (static volumes only)."""
    return {"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Action": ["fsx:DescribeFileSystems", "fsx:DescribeDataRepositoryAssociations"],
        "Resource": "*"}]}


# --- Kubernetes objects (values may be Outputs when registered) ---

def _labels(team: str) -> dict[str, str]:
    return {names.MANAGED_BY_LABEL: names.MANAGED_BY, names.TEAM_LABEL: team}


def volume_handle(file_system_id: str, key: str) -> str:
    """The CSI volume handle of one volume (`key`: the team, `shared-<team>` or the setup's): unique per
    volume, since kubelet keys mounts by it."""
    return f"{file_system_id}::{key}"


def mount_source(mount_name: str, path: str) -> str:
    """The `mountname` attribute mounting one directory: Lustre's `<mountname>/<directory>` (a subdirectory
    mount: the volume reaches nothing above it)."""
    return mount_name + ("" if path == "/" else path)


def _volume(fsx: "FsxLustreSpec", name: str, labels: dict[str, Any], claim_ref: dict[str, Any], handle: Any, dns_name: Any,
            mount_name: Any, read_only: bool) -> dict[str, Any]:
    csi: dict[str, Any] = {"driver": catalog.FSX_CSI_DRIVER, "volumeHandle": handle,
                 "volumeAttributes": {"dnsname": dns_name, "mountname": mount_name}}
    if read_only:
        csi["readOnly"] = True
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": labels},
            "spec": {"capacity": {"storage": capacity(fsx)}, "volumeMode": "Filesystem",
                     "accessModes": ["ReadOnlyMany" if read_only else "ReadWriteMany"],
                     "persistentVolumeReclaimPolicy": "Retain", "storageClassName": "",
                     "mountOptions": ["flock"], "claimRef": claim_ref, "csi": csi}}


def _claim(name: str, namespace: Any, labels: dict[str, Any], volume: str, size: str, read_only: bool) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"accessModes": ["ReadOnlyMany" if read_only else "ReadWriteMany"], "storageClassName": "",
                     "volumeName": volume, "resources": {"requests": {"storage": size}}}}


def persistent_volume(fsx: "FsxLustreSpec", team: str, namespace: Any, handle: Any, dns_name: Any,
                      mount_name: Any) -> dict[str, Any]:
    """The team's own directory, reserved for its `datasets` claim in `namespace` (`handle`: `volume_handle`;
    `mount_name`: `mount_source` of `team_path`); the driver mounts by `dnsname` and `mountname`."""
    return _volume(fsx, names.datasets_volume(team), _labels(team),
                   {"namespace": namespace, "name": names.DATASETS_PVC}, handle, dns_name, mount_name, False)


def claim(fsx: "FsxLustreSpec", team: str, namespace: Any) -> dict[str, Any]:
    """The team's claim, bound to its own volume (no dynamic provisioning: empty storage class)."""
    return _claim(names.DATASETS_PVC, namespace, _labels(team), names.datasets_volume(team), claim_size(fsx), False)


def shared_volume(fsx: "FsxLustreSpec", team: str, namespace: Any, handle: Any, dns_name: Any,
                  mount_name: Any) -> dict[str, Any]:
    """The shared area for one team, read-only (the CSI `readOnly` flag: the driver mounts it `ro`)."""
    return _volume(fsx, names.datasets_shared_volume(team), _labels(team),
                   {"namespace": namespace, "name": names.DATASETS_SHARED_PVC}, handle, dns_name, mount_name, True)


def shared_claim(team: str, namespace: Any) -> dict[str, Any]:
    return _claim(names.DATASETS_SHARED_PVC, namespace, _labels(team), names.datasets_shared_volume(team),
                  SHARED_CLAIM_SIZE, True)


# --- making the directories: a Job on the file system's root, outside every team namespace ---

def setup_script(fsx: "FsxLustreSpec", teams: list[str]) -> str:
    """Make each team's directory and the shared area, owned by `owner` (never root), group-writable team
    directories and a shared area only its owner writes. Idempotent: it runs again when the teams change."""
    owner = f"{fsx.owner.uid}:{fsx.owner.gid}"
    lines = ["set -o errexit -o nounset"]
    dirs = [(team_path(fsx, t), TEAM_DIR_MODE) for t in teams]
    shared = shared_path(fsx)
    if shared:
        dirs.append((shared, SHARED_DIR_MODE))
    for path, mode in dirs:
        target = shlex.quote(ROOT_MOUNT + path)
        lines += [f"mkdir -p {target}", f"chown {owner} {target}", f"chmod {mode} {target}"]
    return "\n".join(lines) + "\n"


ROOT_MOUNT = "/fsx"


def setup_volume(fsx: "FsxLustreSpec", namespace: str, handle: Any, dns_name: Any, mount_name: Any) -> dict[str, Any]:
    """The whole file system, bound only to the setup claim in `namespace` (a platform namespace)."""
    labels = {names.MANAGED_BY_LABEL: names.MANAGED_BY}
    return _volume(fsx, names.DATASETS_SETUP, labels, {"namespace": namespace, "name": names.DATASETS_SETUP},
                   handle, dns_name, mount_name, False)


def setup_claim(namespace: str) -> dict[str, Any]:
    return _claim(names.DATASETS_SETUP, namespace, {names.MANAGED_BY_LABEL: names.MANAGED_BY}, names.DATASETS_SETUP,
                  SHARED_CLAIM_SIZE, False)


def setup_job(fsx: "FsxLustreSpec", teams: list[str], namespace: str) -> dict[str, Any]:
    """Runs the setup script once on a node that mounts Lustre (a GPU pool's: they install the client), as root
    with only the capabilities chown and chmod need. Named by Pulumi: a change of teams is a new Job."""
    container = {"name": "setup", "image": catalog.DATASETS_SETUP_IMAGE,
                 "command": ["sh", "-c", setup_script(fsx, teams)],
                 "volumeMounts": [{"name": "fsx", "mountPath": ROOT_MOUNT}],
                 "securityContext": {"runAsUser": 0, "allowPrivilegeEscalation": False,
                                     "capabilities": {"drop": ["ALL"], "add": ["CHOWN", "FOWNER", "FSETID"]}},
                 "resources": {"requests": {"cpu": "10m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}}}
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchExpressions": [{"key": names.POOL_LABEL, "operator": "Exists"}]}]}}}
    return {"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"namespace": namespace, "labels": {names.MANAGED_BY_LABEL: names.MANAGED_BY}},
            "spec": {"backoffLimit": 4, "template": {
                "metadata": {"labels": {names.MANAGED_BY_LABEL: names.MANAGED_BY}},
                "spec": {"restartPolicy": "OnFailure", "affinity": affinity,
                         "tolerations": [{"operator": "Exists"}],  # every GPU pool's taints
                         "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}},
                         "containers": [container],
                         "volumes": [{"name": "fsx", "persistentVolumeClaim": {"claimName": names.DATASETS_SETUP}}]}}}}
