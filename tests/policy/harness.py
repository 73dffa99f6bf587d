"""Run pack policies on resources built the way the engine builds them.

The engine hands a pack camelCase inputs behind `unknown_checking_proxy`, the resource options it may
see, the resource's provider (whose `defaultTags` input travels JSON-encoded) and the policy's config
with the schema defaults the CLI filled in. The builders below make resources of that shape; their
values follow what the platform's program registers (see the plans under `gpu-platform plan --json`).
"""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Optional

from pulumi_policy import (
    PolicyCustomTimeouts,
    PolicyProviderResource,
    PolicyResource,
    PolicyResourceOptions,
    ResourceValidationArgs,
    StackValidationArgs,
)
from pulumi_policy.proxy import UNKNOWN_STRING_VALUE, unknown_checking_proxy


from gpu_platform.facts import names
from gpu_platform.policy import BY_NAME
from gpu_platform.policy.common import with_defaults

ROOT = Path(__file__).resolve().parents[2]

UNKNOWN = UNKNOWN_STRING_VALUE
PROJECT = "gpu-platform"
NODE_GROUP = "aws:eks/nodeGroup:NodeGroup"
LAUNCH_TEMPLATE = "aws:ec2/launchTemplate:LaunchTemplate"
HELM_RELEASE = "kubernetes:helm.sh/v3:Release"


def urn(type_: str, name: str, stack: str = "prod") -> str:
    return f"urn:pulumi:{stack}::{PROJECT}::{type_}::{name}"


def aws_provider(environment: Optional[str] = "prod", stack: str = "prod") -> PolicyProviderResource:
    tags = {"managed-by": "gpu-platform", "gpu-platform/cluster": "gpu-test"}
    if environment:
        tags[names.ENVIRONMENT_TAG] = environment
    props = {"defaultTags": json.dumps({"tags": tags}), "region": "us-east-1"}
    return PolicyProviderResource("pulumi:providers:aws", unknown_checking_proxy(props),
                                  urn("pulumi:providers:aws", "aws", stack), "aws")


def options(protect: bool = False, ignore_changes: tuple[str, ...] = (), delete_before_replace: Optional[bool] = None,
            aliases: tuple[str, ...] = ()) -> PolicyResourceOptions:
    return PolicyResourceOptions(protect, list(ignore_changes), delete_before_replace, list(aliases),
                                 PolicyCustomTimeouts(0, 0, 0), [], None)


# --- running ---

def run_resource(policy: str, type_: str, props: dict, *, name: str = "res", opts: Optional[PolicyResourceOptions] = None,
                 provider: Any = "aws", config: Optional[dict] = None, stack: str = "prod",
                 environment: Optional[str] = "prod") -> list[str]:
    """Messages `policy` reports for one resource (config defaults applied as the CLI does)."""
    p = BY_NAME[policy]
    if provider == "aws":
        provider = aws_provider(environment, stack)
    args = ResourceValidationArgs(type_, unknown_checking_proxy(copy.deepcopy(props)), urn(type_, name, stack), name,
                                  opts or options(), provider, with_defaults(p, config))
    found: list[str] = []
    p.validate(args, lambda message, u=None: found.append(message))
    return found


def stack_resource(type_: str, props: dict, name: str, *, opts: Optional[PolicyResourceOptions] = None,
                   provider: Any = None, stack: str = "prod") -> PolicyResource:
    return PolicyResource(type_, unknown_checking_proxy(copy.deepcopy(props)), urn(type_, name, stack), name,
                          opts or options(), provider, None, [], {})


def run_stack(policy: str, resources: list[PolicyResource], config: Optional[dict] = None) -> list[tuple[str, Optional[str]]]:
    p = BY_NAME[policy]
    found: list[tuple[str, Optional[str]]] = []
    p.validate(StackValidationArgs(resources, with_defaults(p, config)),
               lambda message, u=None: found.append((message, u)))
    return found


def with_provider(resources: list[PolicyResource], environment: str = "prod", stack: str = "prod") -> list[PolicyResource]:
    """The stack's resources plus its aws provider (the program tags it with the environment)."""
    prov = aws_provider(environment, stack)
    return [PolicyResource(prov.resource_type, prov.props, prov.urn, prov.name, options(), None, None, [], {}),
            *resources]


# --- builders (camelCase, as the program sends them) ---

def gpu_node_group(pool: str = "a10g", *, instance_types: tuple[str, ...] = ("g5.xlarge",), capacity: str = "ON_DEMAND",
                   labels: Optional[dict] = None, taints: Optional[list] = None, ami_type: Optional[str] = "AL2023_x86_64_NVIDIA",
                   release: Optional[str] = "1.33.5-20251120", min_size: int = 0, max_size: int = 4, **extra: Any) -> dict:
    props: dict[str, Any] = {
        "capacityType": capacity,
        "clusterName": "gpu-test",
        "instanceTypes": list(instance_types),
        "labels": {names.POOL_LABEL: pool, names.GPU_PRODUCT_LABEL: "NVIDIA-A10G",
                   names.ACCELERATOR_LABEL: "nvidia-a10g", **(labels or {})},
        "launchTemplate": {"name": f"gpu-test-{pool}", "version": "1"},
        "nodeGroupName": f"gpu-test-{pool}",
        "nodeRoleArn": "arn:aws:iam::123456789012:role/gpu-test-gpu-nodes",
        "scalingConfig": {"desiredSize": min_size, "maxSize": max_size, "minSize": min_size},
        "subnetIds": ["subnet-0a1b2c3d4e5f60718", "subnet-1a1b2c3d4e5f60718"],
        "taints": taints if taints is not None else [
            {"effect": "NO_SCHEDULE", "key": names.GPU_TAINT_KEY, "value": names.GPU_TAINT_VALUE}],
        "updateConfig": {"maxUnavailable": 1},
    }
    if ami_type:
        props["amiType"] = ami_type
        props["version"] = "1.33"
    if release:
        props["releaseVersion"] = release
    props.update(extra)
    return props


def system_node_group(**extra: Any) -> dict:
    props = {
        "amiType": "AL2023_x86_64_STANDARD", "capacityType": "ON_DEMAND", "clusterName": "gpu-test",
        "instanceTypes": ["m6i.large"], "labels": {names.ROLE_LABEL: names.SYSTEM_ROLE},
        "launchTemplate": {"name": "gpu-test-system", "version": "1"}, "nodeGroupName": "gpu-test-system",
        "nodeRoleArn": "arn:aws:iam::123456789012:role/gpu-test-nodes", "releaseVersion": "1.33.5-20251120",
        "scalingConfig": {"desiredSize": 2, "maxSize": 3, "minSize": 2},
        "subnetIds": ["subnet-0a1b2c3d4e5f60718"], "version": "1.33",
    }
    props.update(extra)
    return props


def launch_template(name: str = "gpu-test-a10g", *, http_tokens: Optional[str] = "required",
                    encrypted: Any = "true", size: int = 200, **extra: Any) -> dict:
    props: dict[str, Any] = {"name": name, "updateDefaultVersion": True}
    if http_tokens is not None:
        props["metadataOptions"] = {"httpEndpoint": "enabled", "httpPutResponseHopLimit": 2, "httpTokens": http_tokens}
    if encrypted is not None:
        props["blockDeviceMappings"] = [{"deviceName": "/dev/xvda", "ebs": {
            "deleteOnTermination": "true", "encrypted": encrypted, "volumeSize": size, "volumeType": "gp3"}}]
    props.update(extra)
    return props


def mig_parted(layouts: dict[str, dict[str, int]]) -> str:
    import yaml

    configs: dict[str, Any] = {names.MIG_ALL_DISABLED: [{"devices": "all", "mig-enabled": False}]}
    for name, layout in layouts.items():
        configs[name] = [{"devices": "all", "mig-enabled": True, "mig-devices": layout}]
    return yaml.safe_dump({"version": "v1", "mig-configs": configs}, sort_keys=False)


def device_plugin(replicas: int = 0) -> str:
    import yaml

    doc: dict[str, Any] = {"version": "v1", "flags": {"migStrategy": "none"}}
    if replicas:
        doc["sharing"] = {"timeSlicing": {"renameByDefault": False, "failRequestsGreaterThanOne": True,
                                          "resources": [{"name": names.GPU_RESOURCE, "replicas": replicas}]}}
    return yaml.safe_dump(doc, sort_keys=False)


def operator_release(*, driver: Optional[dict] = None, version: str = "v26.7.0", mig: Optional[dict] = None,
                     strategy: str = "none", time_slicing: Optional[dict[str, int]] = None,
                     tolerations: Optional[list] = None, nfd_tolerations: Optional[list] = None) -> dict:
    gpu_toleration = [{"effect": "NoSchedule", "key": names.GPU_TAINT_KEY, "operator": "Exists"}]
    data = {names.DEVICE_PLUGIN_DEFAULT_CONFIG: device_plugin()}
    data.update({key: device_plugin(n) for key, n in (time_slicing or {}).items()})
    return {
        "chart": "gpu-operator", "version": version, "namespace": "gpu-operator", "name": "gpu-operator",
        "repositoryOpts": {"repo": "https://helm.ngc.nvidia.com/nvidia"},
        "values": {
            "driver": driver if driver is not None else {"enabled": False},
            "mig": {"strategy": strategy},
            "devicePlugin": {"enabled": True, "config": {"create": True, "name": names.DEVICE_PLUGIN_CONFIGMAP,
                                                         "default": names.DEVICE_PLUGIN_DEFAULT_CONFIG, "data": data}},
            "migManager": {"enabled": True, "config": {"create": True, "name": names.MIG_PARTED_CONFIGMAP,
                                                       "default": names.MIG_ALL_DISABLED,
                                                       "data": {names.MIG_PARTED_CONFIG_KEY: mig_parted(mig or {})}}},
            "daemonsets": {"tolerations": tolerations if tolerations is not None else gpu_toleration},
            "node-feature-discovery": {"worker": {"tolerations": nfd_tolerations if nfd_tolerations is not None
                                                  else gpu_toleration}},
        },
    }


def namespace(team: str) -> dict:
    return {"metadata": {"name": team, "labels": {names.TEAM_LABEL: team}}}


def quota(team: str, hard: dict) -> dict:
    return {"metadata": {"name": f"{team}-quota", "namespace": team}, "spec": {"hard": hard}}
