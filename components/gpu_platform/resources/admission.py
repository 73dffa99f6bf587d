"""TeamAdmission: the admission policies every team namespace is held to, enforced by the API server.

The policies are rendered by render/admission.py (GPU nodes for GPU pods, GPUs only through the device
plugin, priorities within the team's tier for pods and for Kueue's priority label, team monitors kept to
their namespace); this component registers each ValidatingAdmissionPolicy and its binding unchanged. They
bind by the `gpu-platform.io/team` namespace label, so they hold any TeamNamespace, made by the stack file or
alone, on any cluster from Kubernetes 1.30 (admissionregistration.k8s.io/v1).
"""
from typing import Optional

import pulumi
import pulumi_kubernetes

from gpu_platform.facts import component_types
from gpu_platform.render.admission import admission_manifests
from gpu_platform.resources import options
from gpu_platform.resources.typed_args import ArgumentsError, TypedDict, argument_problems, as_arguments


class TeamAdmissionArgs(TypedDict, total=False):
    """The cluster the policies are made in."""

    k8s_provider: pulumi_kubernetes.Provider
    """The cluster's Kubernetes provider (default: the provider the resource options give)."""


class TeamAdmission(pulumi.ComponentResource):
    """ValidatingAdmissionPolicies and their bindings for every team namespace: a pod tolerating the GPU taint
    must request a GPU; no device-selection variables, privileged containers, NVIDIA RuntimeClasses or CDI
    annotations; PriorityClass and Kueue priority at or below the team's tier; monitors kept to the team's
    namespace."""

    policy_names: list[str]
    """The ValidatingAdmissionPolicies (each binding has its policy's name)."""

    def __init__(self, name: str, args: TeamAdmissionArgs, opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(component_types.public("TeamAdmission"), name, None, opts)
        from pulumi_kubernetes.admissionregistration.v1 import ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding

        given = as_arguments("TeamAdmission", name, args if args is not None else {}, TeamAdmissionArgs)
        problems = argument_problems(given, TeamAdmissionArgs)
        if problems:
            raise ArgumentsError(f"TeamAdmission {name!r}: ", problems)
        provider = options.kubernetes(given)
        m = admission_manifests()
        self.policies, self.bindings = {}, {}
        for key, obj in m.items():
            if key.endswith("-binding"):
                continue
            policy = ValidatingAdmissionPolicy(f"{name}-{key}", metadata=obj["metadata"], spec=obj["spec"],
                                               opts=options.child(self, opts, **provider))
            binding = m[f"{key}-binding"]
            self.policies[key] = policy
            self.bindings[key] = ValidatingAdmissionPolicyBinding(
                f"{name}-{key}", metadata=binding["metadata"], spec=binding["spec"],
                opts=options.child(self, opts, depends_on=[policy], **provider))
        self.policy_names = [m[k]["metadata"]["name"] for k in self.policies]
        self.register_outputs({"policies": self.policy_names})
