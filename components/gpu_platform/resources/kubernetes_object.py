"""KubernetesObject: a Kubernetes object registered exactly as rendered, under the provider's type token for its
kind. The typed SDK classes and CustomResource's arguments carry metadata and spec only; objects such as a
Kueue WorkloadPriorityClass (`value`, `description`) or a NodeReadinessRule keep other fields at the top level,
so the whole object is sent as the resource's inputs (the provider takes a custom object's fields as they are)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Optional

import pulumi
from pulumi_kubernetes.apiextensions import CustomResource


class KubernetesObject(CustomResource):
    def __init__(self, resource_name: str, obj: Mapping[str, Any], opts: Optional[pulumi.ResourceOptions] = None):
        from pulumi_kubernetes import _utilities

        version = _utilities.get_version()  # type: ignore[no-untyped-call]  # untyped in pulumi_kubernetes
        opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(version=version))
        api = obj["apiVersion"] if "/" in obj["apiVersion"] else f"core/{obj['apiVersion']}"  # the core group's token
        pulumi.CustomResource.__init__(self, f"kubernetes:{api}:{obj['kind']}", resource_name, dict(obj), opts)
