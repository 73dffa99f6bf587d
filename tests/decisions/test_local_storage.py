"""Instance-store NVMe as node storage: the catalog's disks against AWS's figures, the decision per pool,
nodeadm's RAID0 NodeConfig in the AL2023 user data, and the Ubuntu boot script's array (run with stubbed
disks and commands)."""
from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from gpu_platform.decisions import local_storage as ls
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog
from tests.support.plans import plan
from tests.support.stacks import spec_with_pools
from tests.support.training import al2023_training, boot_script, launch_template, run_bash, ubuntu_training, user_data_parts

# AWS EC2 instance types guide, accelerated computing instance store specifications: disks x GB (decimal).
AWS_INSTANCE_STORE = {
    "p4d.24xlarge": (8, 1000), "p4de.24xlarge": (8, 1000), "p5.48xlarge": (8, 3840), "p5e.48xlarge": (8, 3840),
    "p5en.48xlarge": (8, 3840), "g5.xlarge": (1, 250), "g5.48xlarge": (2, 3800), "g6.2xlarge": (1, 450),
    "g6.4xlarge": (1, 600), "g6.12xlarge": (4, 940), "g6.48xlarge": (8, 940), "g6e.48xlarge": (4, 1900),
}
needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="bash not installed")


def _pool(platform: dict, name: str):
    return next(p for p in parse_platform(platform).node_pools if p.name == name)


@pytest.mark.parametrize("instance_type, store", sorted(AWS_INSTANCE_STORE.items()))
def test_catalog_instance_store_is_awss(instance_type, store):
    found = catalog.INSTANCE_STORE[instance_type]
    assert (found.disks, found.gb_each) == store


def test_every_catalog_gpu_instance_has_its_instance_store_listed():
    assert set(catalog.INSTANCE_TYPES) <= set(catalog.INSTANCE_STORE)


# --- the decision per pool ---

STACKS = {"al2023": al2023_training, "ubuntu": ubuntu_training}


@pytest.mark.parametrize("stack, pool, expected", [
    ("al2023", "a100-efa", ls.LocalStorage("raid0", 8, 8000, "nodeadm")),
    ("al2023", "h100-efa", ls.LocalStorage("raid0", 8, 30720, "nodeadm")),
    ("ubuntu", "a100-train", ls.LocalStorage("raid0", 8, 8000, "script")),
    ("ubuntu", "h100-train", ls.LocalStorage("raid0", 8, 30720, "script")),
    ("ubuntu", "l4-inference", ls.LocalStorage("raid0", 1, 450, "script")),  # g6.2xlarge, the smaller type
])
def test_p4d_and_p5_pools_stripe_all_their_disks(stack, pool, expected):
    storage = ls.pool_local_storage(_pool(STACKS[stack](), pool))
    assert storage == expected and storage.mount == catalog.LOCAL_STORAGE_MOUNT == "/mnt/k8s-disks/0"


def test_local_storage_none_and_bottlerocket_leave_the_disks_alone():
    platform = al2023_training()
    platform["nodePools"][1]["localStorage"] = "none"
    assert ls.pool_local_storage(_pool(platform, "a100-efa")) == ls.LocalStorage("none", 8, 8000, "", "localStorage: none")
    spec = spec_with_pools({"name": "br", "instanceTypes": ["g6.2xlarge"], "capacityType": "on-demand", "minSize": 0,
                            "maxSize": 1, "ami": {"type": "BOTTLEROCKET_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"},
                            "sharing": {"mode": "none"}})
    storage = ls.pool_local_storage(spec.node_pools[0])
    assert (storage.strategy, storage.how, storage.mount) == ("none", "", None)
    assert storage.reason == "not offered on BOTTLEROCKET_x86_64_NVIDIA"


# --- AL2023: nodeadm's NodeConfig in the user data EKS merges ---

# p4d and p5 pools also set the kubelet's CPU and topology managers by default (decisions/numa.py)
NUMA = {"cpuManagerPolicy": "static", "topologyManagerPolicy": "restricted", "topologyManagerScope": "pod",
        "reservedSystemCPUs": "0-3"}


@pytest.mark.parametrize("pool, kubelet", [("a100-efa", NUMA), ("h100-efa", NUMA), ("a10g-spot", None)])
def test_al2023_templates_carry_nodeadms_raid0_node_config(pool, kubelet):
    parts = user_data_parts(launch_template(plan(al2023_training()), pool))
    configs = [yaml.safe_load(body) for kind, body in parts if kind == catalog.NODEADM_CONTENT_TYPE]
    # amazon-eks-ami nodeadm API: NodeConfig spec.instance.localStorage.strategy, enum RAID0 | RAID10 | Mount
    spec: dict = {"instance": {"localStorage": {"strategy": "RAID0"}}}
    if kubelet:
        spec["kubelet"] = {"config": kubelet}
    assert configs == [{"apiVersion": "node.eks.aws/v1alpha1", "kind": "NodeConfig", "spec": spec}]
    assert not [body for _, body in parts if "mdadm" in body]  # nodeadm builds the array itself


def test_an_al2023_pool_without_local_storage_sends_no_local_storage():
    platform = al2023_training()
    platform["nodePools"][2]["localStorage"] = "none"
    parts = user_data_parts(launch_template(plan(platform), "h100-efa"))
    assert [yaml.safe_load(body)["spec"] for _, body in parts] == [{"kubelet": {"config": NUMA}}]
    platform["nodePools"][2]["kubelet"] = {"cpuManagerPolicy": "none", "topologyManagerPolicy": "none"}
    assert "userData" not in launch_template(plan(platform), "h100-efa")


# --- Ubuntu: the boot script ---

STORAGE_BLOCK = "\n".join(ls.ubuntu_boot_lines())


@pytest.mark.parametrize("pool", ["a100-train", "h100-train", "h100-mig", "l4-inference"])
def test_ubuntu_templates_assemble_the_array_after_the_efa_check_and_before_bootstrap(pool):
    script = boot_script(ubuntu_training(), pool)
    assert STORAGE_BLOCK in script
    assert script.index(STORAGE_BLOCK) < script.index(catalog.UBUNTU_EKS_BOOTSTRAP)
    if "modprobe efa" in script:  # EFA restarts containerd with unlimited memlock before its state moves
        assert script.index("modprobe efa") < script.index(STORAGE_BLOCK)


def test_an_ubuntu_pool_without_local_storage_leaves_the_disks_alone():
    platform = ubuntu_training()
    platform["nodePools"][3]["localStorage"] = "none"
    assert "mdadm" not in boot_script(platform, "h100-train") and "mdadm" in boot_script(platform, "a100-train")


@needs_bash
@pytest.mark.parametrize("pool", ["a100-train", "h100-train"])
def test_the_ubuntu_boot_script_is_valid_bash(pool):
    result = subprocess.run(["bash", "-n"], input=boot_script(ubuntu_training(), pool), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def _run_storage(tmp_path, disks: int):
    """The storage lines with `disks` instance-store disks, each with two by-id links (AWS gives a disk a
    serial link and a namespace link) and a partition link that must be skipped."""
    dev, by_id = tmp_path / "dev", tmp_path / "by-id"
    dev.mkdir()
    by_id.mkdir()
    prefix = catalog.INSTANCE_STORE_DISK_GLOB.rstrip("*").rsplit("/", 1)[1]
    for i in range(1, disks + 1):
        (dev / f"nvme{i}n1").touch()
        (dev / f"nvme{i}n1p1").touch()
        (by_id / f"{prefix}AWS{i:04}").symlink_to(dev / f"nvme{i}n1")
        (by_id / f"{prefix}AWS{i:04}_1").symlink_to(dev / f"nvme{i}n1")
        (by_id / f"{prefix}AWS{i:04}-part1").symlink_to(dev / f"nvme{i}n1p1")
    fstab = tmp_path / "fstab"
    result, calls = run_bash(ls.ubuntu_boot_lines(), tmp_path,
                             moved={catalog.INSTANCE_STORE_DISK_GLOB.rsplit("/", 1)[0]: str(by_id), "/etc/fstab": str(fstab)},
                             stubs=("mdadm", "apt-get", "mkfs.ext4", "mkdir", "mount", "systemctl", "cp"))
    assert result.returncode == 0, result.stderr
    return calls, fstab.read_text().splitlines() if fstab.exists() else [], [str(dev / f"nvme{i}n1") for i in range(1, disks + 1)]


@needs_bash
@pytest.mark.parametrize("disks", [8, 2])
def test_the_ubuntu_script_stripes_every_disk_into_one_raid0_array(tmp_path, disks):
    calls, fstab, devices = _run_storage(tmp_path, disks)
    assert f"mdadm --create {ls.MD_DEVICE} --level=0 --raid-devices={disks} --run {' '.join(devices)}" in calls
    assert f"mkfs.ext4 -q -F -L {ls.FS_LABEL} -E nodiscard {ls.MD_DEVICE}" in calls
    _assert_mounted_under_kubelet_and_containerd(calls, fstab)


@needs_bash
def test_the_ubuntu_script_uses_a_single_disk_as_is(tmp_path):
    calls, fstab, devices = _run_storage(tmp_path, 1)
    assert not [c for c in calls if c.startswith("mdadm")]
    assert f"mkfs.ext4 -q -F -L {ls.FS_LABEL} -E nodiscard {devices[0]}" in calls
    _assert_mounted_under_kubelet_and_containerd(calls, fstab)


@needs_bash
def test_the_ubuntu_script_does_nothing_without_instance_store(tmp_path):
    assert _run_storage(tmp_path, 0)[:2] == ([], [])


def _assert_mounted_under_kubelet_and_containerd(calls: list[str], fstab: list[str]):
    mount = catalog.LOCAL_STORAGE_MOUNT
    binds = catalog.LOCAL_STORAGE_BIND_DIRS
    assert binds == ("/var/lib/kubelet", "/var/lib/containerd", "/var/log/pods")
    assert fstab == [f"LABEL={ls.FS_LABEL} {mount} ext4 defaults,noatime,nofail 0 2",
                     *(f"{mount}{d} {d} none bind,x-systemd.requires-mounts-for={mount} 0 0" for d in binds)]
    # containerd stops before its state is copied onto the array and starts again once every bind is mounted
    stop, start = calls.index("systemctl stop containerd"), calls.index("systemctl start containerd")
    copies = [calls.index(f"cp -a {d}/. {mount}{d}/") for d in binds]
    mounts = [calls.index(f"mount {d}") for d in binds]
    assert calls.index(f"mount {mount}") < stop < min(copies) and max(mounts) < start
