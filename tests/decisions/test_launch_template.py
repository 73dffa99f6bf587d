"""Launch template contents: IMDS, image volume, EFA interfaces and the Ubuntu bootstrap user data."""
import base64
import email
import re
import shlex
import shutil
import subprocess

import pytest

from gpu_platform.decisions import launch_template as lt
from gpu_platform.decisions.node_pool import node_labels, node_taints
from gpu_platform.decisions.validation import parse_platform
from gpu_platform.facts import catalog, names
from gpu_platform.spec.errors import SpecError
from gpu_platform.spec.pool_context import PoolContext
from tests.support.stacks import spec_with_pools, stack_platform
from tests.support.training import AL2023, training_pool

PROD = parse_platform(stack_platform("prod"))
POOLS = {p.name: p for p in PROD.node_pools}


def test_imds_v2_is_required_with_one_hop_for_pods():
    opts = lt.metadata_options()
    assert opts["http_tokens"] == "required"
    assert opts["http_endpoint"] == "enabled"
    assert opts["http_put_response_hop_limit"] == 2


@pytest.mark.parametrize("os_, device", [("al2023", "/dev/xvda"), ("ubuntu", "/dev/sda1"), ("bottlerocket", "/dev/xvdb")])
def test_image_volume_is_the_device_images_live_on(os_, device):
    assert lt.image_volume(os_, 300)["device_name"] == device


def test_image_volume_is_encrypted_gp3_of_the_given_size():
    ebs = lt.image_volume("al2023", 321)["ebs"]
    assert (ebs["volume_type"], ebs["encrypted"], ebs["volume_size"]) == ("gp3", "true", 321)


def test_every_node_image_has_an_image_volume_device():
    assert {i.os for i in catalog.NODE_IMAGES.values()} <= set(catalog.IMAGE_VOLUME_DEVICE)


def test_efa_pool_asks_one_interface_per_network_card_of_its_instance():
    assert lt.efa_interface_count(POOLS["a100-train"]) == catalog.INSTANCE_TYPES["p4d.24xlarge"].efa_interfaces


def test_pool_without_efa_asks_none():
    assert lt.efa_interface_count(POOLS["h100-mig"]) == 0


def _efa_pool(instance_type: str):
    return spec_with_pools(training_pool("efa", [instance_type], AL2023)).node_pools[0]


def test_efa_interfaces_first_is_primary_rest_on_their_own_cards():
    interfaces = lt.efa_interfaces(_efa_pool("p5.48xlarge"))
    assert (interfaces[0]["device_index"], interfaces[0]["network_card_index"]) == (0, 0)
    assert {i["device_index"] for i in interfaces[1:]} == {1}
    assert sorted(i["network_card_index"] for i in interfaces) == list(range(32))
    assert {i["interface_type"] for i in interfaces} == {"efa"}


def test_a_p6_b200_takes_eight_efa_interfaces_on_its_eight_network_cards():
    interfaces = lt.efa_interfaces(_efa_pool("p6-b200.48xlarge"))
    assert [(i["network_card_index"], i["device_index"], i["interface_type"]) for i in interfaces] == [
        (0, 0, "efa"), *((card, 1, "efa") for card in range(1, 8))]


def test_a_p6_b300_keeps_card_zero_for_its_ena_primary_and_puts_sixteen_efa_on_the_rest():
    interfaces = lt.efa_interfaces(_efa_pool("p6-b300.48xlarge"))
    assert interfaces[0] == {"device_index": 0, "network_card_index": 0, "interface_type": "interface",
                             "delete_on_termination": "true"}
    assert [(i["network_card_index"], i["device_index"]) for i in interfaces[1:]] == [(c, 1) for c in range(1, 17)]
    assert {i["interface_type"] for i in interfaces[1:]} == {"efa"}
    assert lt.efa_interface_count(_efa_pool("p6-b300.48xlarge")) == 16


def test_a_pool_without_efa_has_no_interfaces():
    assert lt.efa_interfaces(POOLS["h100-mig"]) == []


@pytest.mark.parametrize("vpc, service", [("10.40.0.0/16", "10.100.0.0/16"), ("10.100.0.0/16", "172.20.0.0/16"),
                                          ("10.100.16.0/20", "172.20.0.0/16"), ("172.20.0.0/16", "10.100.0.0/16")])
def test_service_cidr_never_overlaps_the_vpc(vpc, service):
    assert lt.service_cidr_for(vpc) == service


def test_cluster_dns_is_the_tenth_service_address():
    assert lt.dns_cluster_ip("172.20.0.0/16") == "172.20.0.10"


# --- Ubuntu bootstrap user data ---

def _user_data(pool_name="a100-train"):
    pool = POOLS[pool_name]
    return lt.ubuntu_user_data("gpu-prod", "https://EXAMPLE.gr7.us-east-1.eks.amazonaws.com", "Q0E=",
                               "10.100.0.0/16", node_labels(pool), node_taints(pool))


def _script(user_data: str) -> str:
    message = email.message_from_string(base64.b64decode(user_data).decode())
    assert message.is_multipart()
    parts = message.get_payload()
    assert [p.get_content_type() for p in parts] == ["text/x-shellscript"]
    return parts[0].get_payload()


def test_user_data_is_a_mime_multipart_archive_with_one_shell_script():
    assert _script(_user_data()).startswith("#!/bin/bash\n")


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash not installed")
def test_bootstrap_script_is_valid_bash():
    result = subprocess.run(["bash", "-n"], input=_script(_user_data()), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def _bootstrap_argv(pool_name="a100-train") -> list[str]:
    script = _script(_user_data(pool_name)).replace("\\\n", " ")
    line = next(ln for ln in script.splitlines() if ln.startswith(catalog.UBUNTU_EKS_BOOTSTRAP))
    return shlex.split(line)


def test_bootstrap_joins_the_named_cluster_without_describe_cluster():
    argv = _bootstrap_argv()
    assert argv[:2] == [catalog.UBUNTU_EKS_BOOTSTRAP, "gpu-prod"]
    for flag in ("--apiserver-endpoint", "--b64-cluster-ca", "--dns-cluster-ip"):
        assert flag in argv
    assert argv[argv.index("--dns-cluster-ip") + 1] == "10.100.0.10"


def _kubelet_flags(pool_name="a100-train") -> dict[str, str]:
    argv = _bootstrap_argv(pool_name)
    extra = argv[argv.index("--kubelet-extra-args") + 1]  # one shell word
    return dict(flag.split("=", 1) for flag in extra.split())


def test_kubelet_registers_with_every_taint_of_the_pool():
    taints = _kubelet_flags()["--register-with-taints"].split(",")
    assert taints == [f"{k}={v}:{e}" for k, v, e in node_taints(POOLS["a100-train"])]
    assert f"{names.GPU_TAINT_KEY}={names.GPU_TAINT_VALUE}:NoSchedule" in taints


def test_kubelet_registers_with_every_label_of_the_pool():
    labels = dict(item.split("=", 1) for item in _kubelet_flags("h100-mig")["--node-labels"].split(","))
    assert labels == node_labels(POOLS["h100-mig"])


INJECTION = "training\n--register-with-taints=evil:NoSchedule"


def test_a_taint_that_would_add_a_kubelet_argument_never_reaches_the_boot_script():
    """Defence in depth: the stack file refuses the value (tests/planner/test_bad_input.py); a pool model built
    around the checks still cannot put it into user data, where the bootstrap splits kubelet's arguments."""
    taints = [*node_taints(POOLS["a100-train"]), ("workload", INJECTION, "NoSchedule")]
    with pytest.raises(ValueError, match=re.escape(f"refusing to put into kubelet's arguments: taint value {INJECTION!r}")):
        lt.ubuntu_user_data("gpu-prod", "https://e", "Q0E=", "10.100.0.0/16", {}, taints)
    with pytest.raises(ValueError, match="label key 'a b'"):
        lt.kubelet_args({"a b": "x"}, [])


def test_the_injection_is_refused_where_the_stack_file_is_read():
    platform = stack_platform("prod")
    platform["nodePools"][1]["taints"] = [{"key": "workload", "value": INJECTION, "effect": "NoSchedule"}]
    with pytest.raises(SpecError) as err:
        parse_platform(platform)
    assert [p for p in err.value.problems if p.startswith("nodePools[1].taints[0].value: taint value")] != []


# --- reading user data back ---

def test_read_user_data_returns_what_the_node_registers_with():
    data = lt.ubuntu_user_data("c", "https://a.eks", "Q0E=", "10.100.0.0/16", {"b": "2", "a": "1"},
                               [("nvidia.com/gpu", "present", "NoSchedule"), ("w", "t", "NoExecute")])
    facts = lt.read_user_data(data)
    assert facts.labels == {"a": "1", "b": "2"}
    assert facts.taints == ["nvidia.com/gpu=present:NoSchedule", "w=t:NoExecute"]


def test_read_user_data_masks_the_cluster_identity_and_the_lists():
    facts = lt.read_user_data(lt.ubuntu_user_data("c", "https://a.eks", "Q0E=", "10.100.0.0/16", {"a": "1"}, []))
    for flag in lt.CLUSTER_IDENTITY_FLAGS:
        assert f"{flag} <cluster>" in facts.bootstrap
    assert "https://a.eks" not in facts.bootstrap and "--node-labels=<listed>" in facts.bootstrap


def test_read_user_data_takes_plain_text_too():
    facts = lt.read_user_data("#!/bin/bash\n/etc/eks/bootstrap.sh c --kubelet-extra-args '--node-labels=x=y'\n")
    assert facts.labels == {"x": "y"} and facts.taints == []


# --- boot steps per image (node_boot) ---

def test_boot_steps_go_only_where_the_image_runs_them():
    """Bottlerocket's user data is TOML settings: no MIME parts. An AL2023 pool with nothing to add sends
    none; Ubuntu pools run the EFA check, then the array, before bootstrap."""
    from gpu_platform.decisions import node_boot
    from tests.support.stacks import spec_with_pools

    spec = spec_with_pools(
        {"name": "br", "instanceTypes": ["g6.2xlarge"], "capacityType": "on-demand", "minSize": 0, "maxSize": 1,
         "ami": {"type": "BOTTLEROCKET_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"}, "sharing": {"mode": "none"}},
        {"name": "bare", "instanceTypes": ["g6.2xlarge"], "capacityType": "on-demand", "minSize": 0, "maxSize": 1,
         "ami": {"type": "AL2023_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"}, "localStorage": "none"})
    assert [node_boot.eks_image_user_data(PoolContext.of(spec, p), p) for p in spec.node_pools] == [None, None]
    prelude = node_boot.ubuntu_prelude(PoolContext.of(PROD, POOLS["a100-train"]), POOLS["a100-train"])
    efa, raid = prelude.index("modprobe efa"), prelude.index("disks=()")
    assert efa < raid and node_boot.ubuntu_prelude(PoolContext.of(PROD, POOLS["h100-mig"]), POOLS["h100-mig"]).count("modprobe efa") == 0
