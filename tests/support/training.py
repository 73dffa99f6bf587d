"""Stacks with training pools, and what their launch templates boot with, for the EFA, local-storage,
pod-sizing and workload tests.

- `al2023_training()`: dev with a p4d and a p5 EFA pool on the EKS-optimized AL2023 image (nodeadm).
- `ubuntu_training()`: prod (a100-train: p4d with EFA on Ubuntu) with a p5 EFA pool beside it.
- `run_bash()`: a boot-script fragment run for real, with absolute paths moved under a temporary folder
  and the commands that would touch the machine (mdadm, mount, systemctl...) replaced by stubs that log
  their arguments.
"""
from __future__ import annotations

import base64
import email
import subprocess
from pathlib import Path
from typing import Optional
from collections.abc import Iterable, Mapping

from tests.support.plans import children, component, plan
from tests.support.stacks import stack_platform

POOL = "gpu-platform:index:GpuNodePool"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
AL2023 = {"type": "AL2023_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"}
TRAINING_TAINT = {"key": "workload", "value": "training", "effect": "NoSchedule"}


def training_pool(name: str, instance_types: list[str], ami: dict, **extra) -> dict:
    return {"name": name, "instanceTypes": instance_types, "capacityType": "on-demand", "minSize": 0, "maxSize": 2,
            "ami": dict(ami), "efa": True, **extra}


def al2023_training() -> dict:
    platform = stack_platform("dev")
    platform["nodePools"] += [training_pool("a100-efa", ["p4d.24xlarge"], AL2023),
                              training_pool("h100-efa", ["p5.48xlarge"], AL2023, taints=[TRAINING_TAINT])]
    return platform


def ubuntu_training() -> dict:
    platform = stack_platform("prod")
    ubuntu = platform["nodePools"][1]["ami"]
    platform["nodePools"].append(training_pool("h100-train", ["p5.48xlarge"], ubuntu, taints=[TRAINING_TAINT],
                                               labels={"workload": "training"}))
    return platform


def launch_template(plan_: dict, pool: str) -> dict:
    """The inputs of a pool's launch template in a plan."""
    (template,) = children(plan_, component(plan_, POOL, pool), LAUNCH_TEMPLATE)
    return template["inputs"]


def user_data_parts(template: dict) -> list[tuple[str, str]]:
    """(content type, body) of each part of a template's MIME multi-part user data."""
    message = email.message_from_string(base64.b64decode(template["userData"]).decode())
    assert message.is_multipart()
    return [(part.get_content_type(), part.get_payload()) for part in message.get_payload()]


def boot_script(platform: dict, pool: str) -> str:
    """The Ubuntu boot script of a pool, as the plan's launch template carries it."""
    (script,) = [body for kind, body in user_data_parts(launch_template(plan(platform), pool))
                 if kind == "text/x-shellscript"]
    return script


def run_bash(lines: Iterable[str], tmp_path: Path, moved: Optional[Mapping[str, str]] = None, stubs: Iterable[str] = ()):
    """Run `lines` under errexit/nounset/pipefail. Each key of `moved` (an absolute path) is rewritten to
    its value; each stub logs `name args...` to the returned log instead of running."""
    log = tmp_path / "calls.log"
    log.touch()
    script = "\n".join(lines)
    for path, replacement in (moved or {}).items():
        script = script.replace(path, replacement)
    defs = "".join(f'{name}() {{ echo "{name} $*" >> "{log}"; }}\n' for name in stubs)
    result = subprocess.run(["bash", "-c", f"set -o errexit -o nounset -o pipefail\n{defs}{script}"],
                            capture_output=True, text=True, timeout=60)
    return result, log.read_text().splitlines()
