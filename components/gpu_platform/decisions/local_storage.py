"""Instance-store NVMe as node storage: one RAID0 array under kubelet, containerd and pod logs (pure).

GPU instances come with fast local NVMe (8 x 3.84 TB on p5.48xlarge) that EC2 hands over unformatted.
Striped into one array and put under kubelet, containerd and pod logs, it holds container images,
emptyDir volumes (the scratch space training jobs write shards and checkpoints to) and logs at NVMe speed,
instead of the EBS root volume. Instance store is erased when an instance stops or is replaced: scratch,
never the only copy of anything.

- AL2023: nodeadm does it. A NodeConfig user-data part with `spec.instance.localStorage.strategy: RAID0`
  (amazon-eks-ami nodeadm API) that EKS merges with its own NodeConfig; nodeadm builds the array, mounts
  it at /mnt/k8s-disks/0 and bind-mounts the three directories onto it.
- Ubuntu: Canonical's EKS bootstrap has no local-disk option (its flags are the cluster identity, kubelet
  arguments, DNS, pause image, container runtime and IP family), so the boot script does the same before
  bootstrap: mdadm RAID0 over every instance-store disk (one disk is used as is), ext4, the same mount
  point and bind mounts, written to fstab so a reboot (a MIG change reboots the node) mounts them again
  before containerd and kubelet start.
"""
from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Optional

import yaml

from gpu_platform.facts import catalog

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec

MD_DEVICE = "/dev/md/k8s-scratch"
FS_LABEL = "k8s-scratch"


@dataclass(frozen=True)
class LocalStorage:
    strategy: str  # raid0 | none
    disks: int  # instance-store disks per node (the pool's smallest instance type)
    gb_per_node: int  # decimal GB, as AWS lists instance store
    how: str  # nodeadm | script | "" (none)
    reason: str = ""  # why none

    @property
    def mount(self) -> Optional[str]:
        return catalog.LOCAL_STORAGE_MOUNT if self.strategy == "raid0" and self.disks else None


def pool_local_storage(pool: "NodePoolSpec") -> LocalStorage:
    """What a pool's nodes do with their instance store (the smallest instance type sets the figures)."""
    stores = [catalog.INSTANCE_STORE.get(t) for t in pool.instance_types]
    disks = min((s.disks if s else 0) for s in stores)
    gb = min((s.total_gb if s else 0) for s in stores)
    how = pool.ami.image.local_storage
    if pool.local_storage == "none":
        return LocalStorage("none", disks, gb, "", "localStorage: none")
    if not how:
        return LocalStorage("none", disks, gb, "", f"not offered on {pool.ami.type}")
    if not disks:
        return LocalStorage("none", 0, 0, "", "no instance store")
    return LocalStorage("raid0", disks, gb, how)


def node_config(raid0: bool = True, kubelet: Optional[Mapping[str, str]] = None) -> str:
    """The nodeadm NodeConfig user-data part (AL2023): RAID0 over the instance store, and `kubelet`
    KubeletConfiguration fields under spec.kubelet.config (nodeadm merges them into the kubelet's)."""
    spec: dict[str, Any] = {}
    if raid0:
        spec["instance"] = {"localStorage": {"strategy": "RAID0"}}
    if kubelet:
        spec["kubelet"] = {"config": dict(kubelet)}
    doc = {"apiVersion": catalog.NODEADM_API_VERSION, "kind": "NodeConfig", "spec": spec}
    return yaml.safe_dump(doc, sort_keys=False)


def ubuntu_boot_lines() -> list[str]:
    """Bash for the Ubuntu boot script: the instance-store array under kubelet, containerd and pod logs."""
    mount = catalog.LOCAL_STORAGE_MOUNT
    binds = " ".join(catalog.LOCAL_STORAGE_BIND_DIRS)
    return [
        "# Instance-store NVMe: one RAID0 array under kubelet, containerd and pod logs (scratch, emptyDir).",
        "disks=()",
        f"for link in {catalog.INSTANCE_STORE_DISK_GLOB}; do",
        '  [[ -e "$link" && "$link" != *-part* ]] && disks+=("$(realpath "$link")")',
        "done",
        'mapfile -t disks < <(printf "%s\\n" "${disks[@]}" | sort -u | sed "/^$/d")',
        'if (( ${#disks[@]} > 0 )); then',
        "  scratch=${disks[0]}",
        "  if (( ${#disks[@]} > 1 )); then",
        "    command -v mdadm >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mdadm; }",
        f'    mdadm --create {MD_DEVICE} --level=0 --raid-devices="${{#disks[@]}}" --run "${{disks[@]}}"',
        f"    scratch={MD_DEVICE}",
        "  fi",
        f'  mkfs.ext4 -q -F -L {FS_LABEL} -E nodiscard "$scratch"',
        f"  mkdir -p {mount}",
        f'  echo "LABEL={FS_LABEL} {mount} ext4 defaults,noatime,nofail 0 2" >> /etc/fstab',
        f"  mount {mount}",
        "  systemctl stop containerd",
        f"  for dir in {binds}; do",
        f'    mkdir -p "$dir" "{mount}$dir"',
        f'    cp -a "$dir/." "{mount}$dir/"',
        f'    echo "{mount}$dir $dir none bind,x-systemd.requires-mounts-for={mount} 0 0" >> /etc/fstab',
        '    mount "$dir"',
        "  done",
        "  systemctl daemon-reload",
        "  systemctl start containerd",
        "fi",
    ]
