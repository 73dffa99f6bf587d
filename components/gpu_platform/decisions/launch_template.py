"""What goes into a node group's launch template, decided from the spec alone (no resources here).

- IMDSv2 only, hop limit 2 (pods that still read instance metadata sit one network hop away).
- The volume container images live on: encrypted gp3, sized for multi-gigabyte GPU images.
- EFA: one `efa` interface per network card that takes one, the first being the primary (behind a plain ENA
  primary on card 0 where that card takes none).
- Reserved capacity: the Capacity Block or On-Demand Capacity Reservation the nodes launch into
  (decisions/reservations.py).
- Ubuntu (operator-owned driver) pools pin Canonical's EKS image in the template and must bring their own
  bootstrap: with a custom image EKS merges no user data (AWS EKS user guide, "Customize managed nodes
  with launch templates", Specifying an AMI). Canonical documents `/etc/eks/bootstrap.sh <cluster>` as that
  user data ("Deploy managed Ubuntu nodes on EKS", documentation.ubuntu.com/aws). Taints set through the
  EKS API reach custom-image nodes only after they join, so labels and taints also go to kubelet
  (`--node-labels`, `--register-with-taints`): no pod lands on a GPU node before its taint exists.
"""
from __future__ import annotations

import base64
import ipaddress
import re
import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Union
from collections.abc import Mapping, Sequence

from gpu_platform.facts import catalog, kubelet, syntax

if TYPE_CHECKING:
    from gpu_platform.spec.models import NodePoolSpec

MIME_BOUNDARY = "==GPUPLATFORM=="
HOP_LIMIT = 2


def metadata_options() -> dict[str, Any]:
    return {"http_endpoint": "enabled", "http_tokens": "required", "http_put_response_hop_limit": HOP_LIMIT}


def image_volume(os: str, size_gib: int) -> dict[str, Any]:
    """The block device for container images on this OS: encrypted gp3 of `size_gib`."""
    return {
        "device_name": catalog.IMAGE_VOLUME_DEVICE[os],
        "ebs": {"volume_size": size_gib, "volume_type": "gp3", "encrypted": "true", "delete_on_termination": "true"},
    }


def efa_interface_count(pool: "NodePoolSpec") -> int:
    """EFA interfaces to request: every EFA-capable network card of the smallest-EFA instance type in the pool."""
    return min(it.efa_interfaces for it in pool.instances) if pool.efa else 0


def efa_interfaces(pool: "NodePoolSpec") -> list[dict[str, Any]]:
    """The pool's network interfaces (AWS EC2 user guide, "Maximize network bandwidth on instances with multiple
    network cards"): the primary on card 0 at device index 0, then one EFA interface per card at device index
    1. The primary is an EFA interface too, except where card 0 takes none (p6-b300: 17 cards, 16 EFA), when it
    is a plain ENA `interface` and the EFA interfaces start on card 1."""
    count = efa_interface_count(pool)
    if not count:
        return []
    first = min(pool.instances, key=lambda it: it.efa_interfaces).first_efa_card
    primary = [] if first == 0 else [{"device_index": 0, "network_card_index": 0, "interface_type": "interface",
                                      "delete_on_termination": "true"}]
    return primary + [{"device_index": 0 if card == 0 else 1, "network_card_index": card, "interface_type": "efa",
                       "delete_on_termination": "true"} for card in range(first, first + count)]


def dns_cluster_ip(service_cidr: str) -> str:
    """kube-dns listens on the 10th address of the service range (EKS convention)."""
    return str(ipaddress.ip_network(service_cidr)[10])


def service_cidr_for(vpc_cidr: str) -> str:
    """The service range EKS would pick itself: the first candidate that does not overlap the VPC."""
    vpc = ipaddress.ip_network(vpc_cidr)
    return next(c for c in catalog.SERVICE_CIDRS if not ipaddress.ip_network(c).overlaps(vpc))


def kubelet_args(labels: Mapping[str, str], taints: Sequence[tuple[str, str, str]], flags: Sequence[str] = ()) -> str:
    """`--node-labels=k=v,... --register-with-taints=k=v:Effect,...` (Kubernetes effect spelling), then
    `flags` (the pool's CPU and topology managers: decisions/numa.py).

    The bootstrap splits these into kubelet's command line, so a label or taint that is not Kubernetes
    syntax (a space, a comma, a newline) would become arguments of its own: refused here as well as where
    the stack file is read (spec/syntax.py)."""
    problems = [p for p in (*(syntax.label(k, v) for k, v in labels.items()),
                            *(syntax.taint(k, v, e) for k, v, e in taints)) if p]
    if problems:
        raise ValueError(f"refusing to put into kubelet's arguments: {'; '.join(problems)}")
    args = []
    if labels:
        args.append("--node-labels=" + ",".join(f"{k}={v}" for k, v in sorted(labels.items())))
    if taints:
        args.append("--register-with-taints=" + ",".join(f"{k}={v}:{e}" for k, v, e in taints))
    return " ".join([*args, *flags])


def ubuntu_bootstrap_script(cluster: str, endpoint: str, ca_data: str, service_cidr: str,
                            labels: Mapping[str, str], taints: Sequence[tuple[str, str, str]],
                            prelude: Sequence[str] = (), flags: Sequence[str] = ()) -> str:
    """Shell script joining a Canonical Ubuntu EKS node to `cluster` without a DescribeCluster call.

    `prelude` lines run first (node preparation: local NVMe, EFA, the Lustre client); errexit makes any
    failure there stop the node from joining. `flags` are further kubelet flags."""
    lines = [
        "#!/bin/bash",
        "set -o errexit -o nounset -o pipefail",
        *prelude,
        f"{catalog.UBUNTU_EKS_BOOTSTRAP} {shlex.quote(cluster)} \\",
        f"  --apiserver-endpoint {shlex.quote(endpoint)} \\",
        f"  --b64-cluster-ca {shlex.quote(ca_data)} \\",
        f"  --dns-cluster-ip {shlex.quote(dns_cluster_ip(service_cidr))} \\",
        f"  --kubelet-extra-args {shlex.quote(kubelet_args(labels, taints, flags))}",
    ]
    return "\n".join(lines) + "\n"


SHELL_SCRIPT = 'text/x-shellscript; charset="us-ascii"'


def mime_multipart(*parts: Union[str, tuple[str, str]]) -> str:
    """The MIME multi-part archive cloud-init reads and EKS expects (and merges, for EKS-optimized AMIs)
    for Linux node user data. A part is a shell script or (content type, body)."""
    out = ["MIME-Version: 1.0\n", f'Content-Type: multipart/mixed; boundary="{MIME_BOUNDARY}"\n\n']
    for part in parts:
        content_type, body = (SHELL_SCRIPT, part) if isinstance(part, str) else part
        out.append(f"--{MIME_BOUNDARY}\nContent-Type: {content_type}\n\n{body}\n")
    out.append(f"--{MIME_BOUNDARY}--\n")
    return "".join(out)


def encode(user_data: str) -> str:
    """EC2 takes launch-template user data base64-encoded."""
    return base64.b64encode(user_data.encode()).decode()


def ubuntu_user_data(cluster: str, endpoint: str, ca_data: str, service_cidr: str,
                     labels: Mapping[str, str], taints: Sequence[tuple[str, str, str]],
                     prelude: Sequence[str] = (), flags: Sequence[str] = ()) -> str:
    """Base64 user data for the launch template: the bootstrap script, after any `prelude` lines."""
    return encode(mime_multipart(ubuntu_bootstrap_script(cluster, endpoint, ca_data, service_cidr, labels, taints,
                                                         prelude, flags)))


# --- reading user data back (the disruption model fingerprints what a node boots with) ---

# Bootstrap arguments that identify the cluster, not the node: they change only with the cluster.
CLUSTER_IDENTITY_FLAGS = ("--apiserver-endpoint", "--b64-cluster-ca", "--dns-cluster-ip")
_IDENTITY = re.compile(r"(" + "|".join(CLUSTER_IDENTITY_FLAGS) + r")\s+('[^']*'|\S+)")
_KUBELET_LIST = re.compile(r"--(node-labels|register-with-taints)=([^\s'\"]+)")
# The CPU and topology manager settings as each node format writes them (facts/kubelet.py): NodeConfig YAML
# `field: value`, kubelet flags `--flag=value`, Bottlerocket TOML `setting = "value"`.
_SPELLED = {**{k: k for k in kubelet.KUBELET_FLAGS}, **{f.removeprefix("--"): k for k, f in kubelet.KUBELET_FLAGS.items()},
            **{s: k for k, s in kubelet.BOTTLEROCKET_SETTINGS.items()}}
_KUBELET_SETTING = re.compile(r"(?<![\w-])(?:--)?(" + "|".join(map(re.escape, _SPELLED)) + r")(?:\s*[:=]\s*)\"?([\w,.-]+)\"?")


@dataclass(frozen=True)
class UserDataFacts:
    """What a node registers with, read from launch template user data."""

    labels: dict[str, str]  # kubelet --node-labels
    taints: list[str]  # kubelet --register-with-taints, `key=value:Effect`
    bootstrap: str  # the decoded text, its cluster identity and the lists above masked
    kubelet: dict[str, str] = field(default_factory=dict)  # CPU and topology managers, KubeletConfiguration names


def read_user_data(value: str) -> UserDataFacts:
    """Labels, taints and the masked text of base64 (or plain) user data."""
    try:
        text = base64.b64decode(value, validate=True).decode()
    except (ValueError, UnicodeDecodeError):
        text = value
    labels: dict[str, str] = {}
    taints: list[str] = []
    for flag, items in _KUBELET_LIST.findall(text):
        for item in filter(None, items.split(",")):
            if flag == "node-labels":
                key, _, val = item.partition("=")
                labels[key] = val
            else:
                taints.append(item)
    settings = {_SPELLED[name]: value for name, value in _KUBELET_SETTING.findall(text)}
    masked = _KUBELET_LIST.sub(r"--\1=<listed>", _IDENTITY.sub(r"\1 <cluster>", text))
    masked = _KUBELET_SETTING.sub(r"\1=<kubelet>", masked)
    return UserDataFacts(labels, sorted(taints), masked, dict(sorted(settings.items())))
