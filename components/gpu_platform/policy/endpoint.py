"""The EKS API endpoint: in the configured environments (default prod) it is private, or public only to
listed networks, never to the whole internet.

Reads the registered cluster's `vpcConfig` as EKS reads it: `endpointPublicAccess` absent means public, and
`publicAccessCidrs` absent means 0.0.0.0/0. The stack file refuses the same (cluster.create.publicAccessCidrs);
this rule holds any program to it.
"""
from __future__ import annotations

import ipaddress
from typing import Any
from collections.abc import Iterator, Mapping

from pulumi_policy import PolicyConfigSchema, ResourceValidationArgs, Severity

from gpu_platform.policy.common import (
    CLUSTER, applies_in, environment_phrase, environment_properties, get, resource_environment, resource_policy,
    truthy,
)

EKS_DEFAULT_CIDRS = ("0.0.0.0/0",)  # what EKS allows when publicAccessCidrs is not sent


def _whole_internet(cidr: Any) -> bool:
    try:
        return ipaddress.ip_network(str(cidr), strict=False).prefixlen == 0
    except ValueError:
        return False  # not a network at all: EKS refuses it itself


def endpoint_restricted(args: ResourceValidationArgs, config: Mapping[str, Any]) -> Iterator[str]:
    env = resource_environment(args, config)
    if not applies_in(env, config.get("environments", ["prod"])):
        return
    public = get(args.props, "vpcConfig.endpointPublicAccess")
    if public is not None and not truthy(public):
        return
    cidrs = get(args.props, "vpcConfig.publicAccessCidrs") or list(EKS_DEFAULT_CIDRS)
    open_to = [c for c in cidrs if _whole_internet(c)]
    if open_to:
        yield (f"EKS cluster {args.name!r} serves its public API endpoint to the whole internet ({', '.join(open_to)}) "
               f"{environment_phrase(env)}: list the networks that may reach it in vpcConfig.publicAccessCidrs, or set "
               "vpcConfig.endpointPublicAccess false (stack file: cluster.create.publicAccessCidrs, e.g. "
               "[203.0.113.0/24], or cluster.create.endpointPublicAccess: false)")


ENDPOINT_SCHEMA = PolicyConfigSchema({
    **environment_properties("Environments whose API endpoint must not be open to the whole internet."),
})

POLICIES = [
    resource_policy(
        "cluster-endpoint-restricted",
        "The EKS API endpoint is private or public only to listed networks (mandatory in the configured environments).",
        [CLUSTER], endpoint_restricted, severity=Severity.CRITICAL, schema=ENDPOINT_SCHEMA,
        remediation="Set vpcConfig.publicAccessCidrs to your networks or endpointPublicAccess false (stack file: "
                    "cluster.create.publicAccessCidrs or cluster.create.endpointPublicAccess)."),
]
