"""Model serving: `ServingControl`, once per cluster (KEDA when a service autoscales, and the serving alerts),
and `ModelServing` per team: per service the prefetch Job (and, for an S3 model, its Pod Identity role reading
one prefix), then the Deployment, Service, NetworkPolicy, PodDisruptionBudget, ScaledObject and PodMonitor.

What goes in is rendered in render/serving.py and render/serving_scaling.py; these components register it in
order: the weights are in the cache before the rollout starts (the Deployment waits for the prefetch Job of
its revision), and custom objects after the CRDs they need.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Optional

import pulumi

from gpu_platform.facts import component_types, names, serving
from gpu_platform.render.iam import pod_identity_trust_policy
from gpu_platform.render import serving_dashboard
from gpu_platform.render.monitoring import DASHBOARD_LABEL_VALUE, PROMETHEUS_RULE_API
from gpu_platform.render.serving import TOKEN_KEY, token_secret_name
from gpu_platform.render.serving_scaling import (
    SERVING_RULES_NAME, RenderedService, keda_values, lb_controller_policy, lb_controller_values,
)


class ServingControl(pulumi.ComponentResource):
    """KEDA (its pinned chart, on the system nodes) when a service autoscales, and the serving alerts beside the
    GPU alerts when a Prometheus runs."""

    def __init__(self, name: str, keda: bool, rules: Optional[dict[str, Any]], system_node_selector: Mapping[str, str],
                 rule_namespace: str, rule_labels: Mapping[str, str], dashboard_label: str, k8s_provider: Any,
                 depends_on: Sequence[pulumi.Resource] = (), opts: Optional[pulumi.ResourceOptions] = None):
        """`rules`: the serving alert group (None without a Prometheus, and then no dashboard either);
        `dashboard_label`: the label the Grafana sidecar finds dashboards by; `depends_on`: system nodes, Prometheus CRDs."""
        super().__init__(component_types.INTERNAL["ServingControl"], name, None, opts)
        from pulumi_kubernetes.apiextensions import CustomResource
        from pulumi_kubernetes.core.v1 import Namespace
        from pulumi_kubernetes.helm.v3 import Release, RepositoryOptsArgs

        k8s = pulumi.ResourceOptions(parent=self, provider=k8s_provider, depends_on=list(depends_on))
        self.keda: Optional[pulumi.Resource] = None
        if keda:
            namespace = Namespace(f"{name}-keda", metadata={
                "name": serving.KEDA_NAMESPACE, "labels": names.pod_security_labels("restricted")}, opts=k8s)
            repo, chart = serving.KEDA_CHART
            self.keda = Release(f"{name}-keda", name="keda", chart=chart, version=serving.KEDA_CHART_VERSION,
                                repository_opts=RepositoryOptsArgs(repo=repo), namespace=serving.KEDA_NAMESPACE,
                                create_namespace=False, values=keda_values(system_node_selector),
                                opts=pulumi.ResourceOptions.merge(k8s, pulumi.ResourceOptions(depends_on=[namespace])))
        self.rules = self.dashboard = None
        if rules is not None:
            from pulumi_kubernetes.core.v1 import ConfigMap

            self.dashboard = ConfigMap(f"{name}-dashboard", metadata={
                "name": serving_dashboard.CONFIGMAP, "namespace": rule_namespace,
                "labels": {dashboard_label: DASHBOARD_LABEL_VALUE, names.MANAGED_BY_LABEL: names.MANAGED_BY}},
                data={serving_dashboard.FILE_NAME: json.dumps(serving_dashboard.dashboard(), separators=(",", ":"))},
                opts=k8s)
            api_version, kind = PROMETHEUS_RULE_API
            self.rules = CustomResource(
                f"{name}-rules", api_version=api_version, kind=kind,
                metadata={"name": SERVING_RULES_NAME, "namespace": rule_namespace, "labels": dict(rule_labels)},
                spec={"groups": [rules]}, opts=k8s)
        self.lb_controller: Optional[pulumi.Resource] = None
        self.register_outputs({"keda": serving.KEDA_CHART_VERSION if keda else None})

    def load_balancer_controller(self, cluster: str, region: str, cluster_name: pulumi.Input[str],
                                 vpc_id: pulumi.Input[str], system_node_selector: Mapping[str, str], k8s_provider: Any,
                                 depends_on: Sequence[pulumi.Resource] = ()) -> Any:
        """The AWS Load Balancer Controller (pinned chart) with its published IAM policy, through Pod Identity."""
        from pulumi_aws import eks, iam
        from pulumi_kubernetes.helm.v3 import Release, RepositoryOptsArgs

        child = pulumi.ResourceOptions(parent=self)
        role = iam.Role("serving-lb-controller", name=names.role_name(cluster, "lb-controller"),
                        assume_role_policy=pod_identity_trust_policy(),
                        description="AWS Load Balancer Controller: internal load balancers of model servers", opts=child)
        policy = iam.RolePolicy("serving-lb-controller", role=role.name, policy=json.dumps(lb_controller_policy()),
                                opts=child)
        association = eks.PodIdentityAssociation(
            "serving-lb-controller", cluster_name=cluster_name, namespace=serving.LB_CONTROLLER_NAMESPACE,
            service_account=serving.LB_CONTROLLER_SERVICE_ACCOUNT, role_arn=role.arn,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy]))
        repo, chart = serving.LB_CONTROLLER_CHART
        self.lb_controller = Release(
            "serving-lb-controller", name=serving.LB_CONTROLLER_SERVICE_ACCOUNT, chart=chart,
            version=serving.LB_CONTROLLER_CHART_VERSION, repository_opts=RepositoryOptsArgs(repo=repo),
            namespace=serving.LB_CONTROLLER_NAMESPACE, create_namespace=False,
            values=lb_controller_values(cluster, region, vpc_id, system_node_selector),
            opts=pulumi.ResourceOptions(parent=self, provider=k8s_provider, depends_on=[association, *depends_on]))
        return self.lb_controller


class ModelServing(pulumi.ComponentResource):
    """The services of one team, in its namespace (made by its TeamNamespace, which `depends_on` holds)."""

    def __init__(self, name: str, cluster: str, team: str, services: Sequence[RenderedService],
                 cluster_name: pulumi.Input[str], k8s_provider: Any, tokens: Mapping[str, pulumi.Input[str]],
                 depends_on: Sequence[pulumi.Resource] = (), crds_ready: Sequence[pulumi.Resource] = (),
                 opts: Optional[pulumi.ResourceOptions] = None):
        """`tokens`: Hugging Face tokens by Pulumi config key, as secrets; `depends_on`: the team's namespace;
        `crds_ready`: what installs the CRDs of KEDA and the Prometheus operator."""
        super().__init__(component_types.INTERNAL["ModelServing"], name, None, opts)
        self._name, self._cluster, self._team = name, cluster, team
        self._cluster_name, self._provider, self._after = cluster_name, k8s_provider, list(depends_on)
        self._crds = list(crds_ready)
        self.deployments = {s.name: self._service(s, tokens) for s in services}
        self.register_outputs({"services": sorted(self.deployments)})

    def _k8s(self, *after: Any, **more: Any) -> pulumi.ResourceOptions:
        return pulumi.ResourceOptions(parent=self, provider=self._provider, depends_on=[*self._after, *after], **more)

    def _service(self, s: RenderedService, tokens: Mapping[str, pulumi.Input[str]]) -> Any:
        from pulumi_kubernetes.apps.v1 import Deployment
        from pulumi_kubernetes.batch.v1 import Job
        from pulumi_kubernetes.core.v1 import Secret, Service, ServiceAccount
        from pulumi_kubernetes.networking.v1 import NetworkPolicy
        m, base = s.manifests, f"{self._name}-{s.name}"
        account = ServiceAccount(f"{base}-prefetch", metadata=m["prefetch-account"]["metadata"], opts=self._k8s())
        waits: list[Any] = [account]
        if s.s3_policy is not None:
            waits.append(self._s3_reader(base, s))
        if s.token_secret is not None:
            meta: Any = {**m["prefetch-account"]["metadata"], "name": token_secret_name(s.name)}  # rendered metadata
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
            from pulumi_kubernetes.policy.v1 import PodDisruptionBudget  # its SDK module loads only when one is made

            pdb = m["disruption-budget"]
            PodDisruptionBudget(base, metadata=pdb["metadata"], spec=pdb["spec"], opts=self._k8s())
        for key, obj in (("scaler", s.scaled_object), ("monitor", s.pod_monitor)):
            if obj is not None:
                self._custom(f"{base}-{key}", obj, server)
        return server

    def _custom(self, name: str, obj: dict[str, Any], after: Any) -> Any:
        from pulumi_kubernetes.apiextensions import CustomResource

        return CustomResource(name, api_version=obj["apiVersion"], kind=obj["kind"], metadata=obj["metadata"],
                              spec=obj["spec"], opts=self._k8s(after, *self._crds))

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

