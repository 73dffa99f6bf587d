"""A team's model servers: per service the prefetch Job (and, for an S3 model, its Pod Identity role reading
one prefix), then the Deployment, Service, NetworkPolicy and PodDisruptionBudget.

What goes in is rendered in render/serving.py; this component registers it in order: the weights are in the
cache before the rollout starts (the Deployment waits for the prefetch Job of its revision).
"""
from __future__ import annotations

import json
from typing import Any, Mapping, Optional, Sequence

import pulumi

from gpu_platform.facts import component_types, names
from gpu_platform.render.iam import pod_identity_trust_policy
from gpu_platform.render.serving import TOKEN_KEY, RenderedService, token_secret_name


class ModelServing(pulumi.ComponentResource):
    """The services of one team, in its namespace (made by its TeamNamespace, which `depends_on` holds)."""

    def __init__(self, name: str, cluster: str, team: str, services: Sequence[RenderedService],
                 cluster_name: pulumi.Input[str], k8s_provider: Any, tokens: Mapping[str, pulumi.Input[str]],
                 depends_on: Sequence[pulumi.Resource] = (), opts: Optional[pulumi.ResourceOptions] = None):
        """`tokens`: Hugging Face tokens by Pulumi config key, as secrets; `depends_on`: the team's namespace."""
        super().__init__(component_types.INTERNAL["ModelServing"], name, None, opts)
        self._name, self._cluster, self._team = name, cluster, team
        self._cluster_name, self._provider, self._after = cluster_name, k8s_provider, list(depends_on)
        self.deployments = {s.name: self._service(s, tokens) for s in services}
        self.register_outputs({"services": sorted(self.deployments)})

    def _k8s(self, *after: Any, **more: Any) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, provider=self._provider, depends_on=[*self._after, *after], **more)

    def _service(self, s: RenderedService, tokens: Mapping[str, pulumi.Input[str]]) -> Any:
        from pulumi_kubernetes.apps.v1 import Deployment
        from pulumi_kubernetes.batch.v1 import Job
        from pulumi_kubernetes.core.v1 import Secret, Service, ServiceAccount
        from pulumi_kubernetes.networking.v1 import NetworkPolicy
        from pulumi_kubernetes.policy.v1 import PodDisruptionBudget

        m, base = s.manifests, f"{self._name}-{s.name}"
        account = ServiceAccount(f"{base}-prefetch", metadata=m["prefetch-account"]["metadata"], opts=self._k8s())
        waits: list[Any] = [account]
        if s.s3_policy is not None:
            waits.append(self._s3_reader(base, s))
        if s.token_secret is not None:
            meta = {**m["prefetch-account"]["metadata"], "name": token_secret_name(s.name)}
            waits.append(Secret(f"{base}-hf-token", metadata=meta, type="Opaque",
                                string_data={TOKEN_KEY: pulumi.Output.secret(tokens[s.token_secret])},
                                opts=self._k8s()))
        job = m["prefetch"]
        prefetch = Job(f"{base}-prefetch", metadata=job["metadata"], spec=job["spec"], opts=self._k8s(
            *waits, custom_timeouts=pulumi.CustomTimeouts(create=f"{s.prefetch_deadline}s")))
        d = m["deployment"]
        server = Deployment(base, metadata=d["metadata"], spec=d["spec"], opts=self._k8s(
            prefetch, ignore_changes=["spec.replicas"] if s.autoscaled else None,
            custom_timeouts=pulumi.CustomTimeouts(create=f"{s.ready_seconds}s", update=f"{s.ready_seconds}s")))
        Service(base, metadata=m["service"]["metadata"], spec=m["service"]["spec"], opts=self._k8s())
        NetworkPolicy(f"{base}-callers", metadata=m["callers"]["metadata"], spec=m["callers"]["spec"], opts=self._k8s())
        if "disruption-budget" in m:
            pdb = m["disruption-budget"]
            PodDisruptionBudget(base, metadata=pdb["metadata"], spec=pdb["spec"], opts=self._k8s())
        return server

    def _s3_reader(self, base: str, s: RenderedService) -> Any:
        """A role only the prefetch's service account assumes (Pod Identity), reading the model's prefix only."""
        from pulumi_aws import eks, iam

        child = pulumi.ResourceOptions(parent=self)
        role = iam.Role(f"{base}-prefetch", name=names.role_name(self._cluster, f"{self._team}-{s.name}-prefetch"),
                        assume_role_policy=pod_identity_trust_policy(),
                        description=f"Prefetch of the {self._team} team's {s.name} model: read its S3 prefix",
                        opts=child)
        policy = iam.RolePolicy(f"{base}-prefetch", role=role.name, policy=json.dumps(s.s3_policy), opts=child)
        return eks.PodIdentityAssociation(
            f"{base}-prefetch", cluster_name=self._cluster_name, namespace=names.team_namespace(self._team),
            service_account=s.prefetch_account, role_arn=role.arn,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy]))

