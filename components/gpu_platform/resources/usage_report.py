"""The monthly GPU usage report: an encrypted S3 bucket with a lifecycle, a role that may only put objects under
the report's prefix (through EKS Pod Identity), and the CronJob with its script (render/usage_report_job.py).

The bucket keeps finance's record, so it is protected and retained like the other stateful resources; its
objects expire after `usageReport.retentionDays`.
"""
from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Optional

import pulumi

from gpu_platform.decisions.usage import ReportPlan
from gpu_platform.facts import component_types, names
from gpu_platform.render import usage_report_job as job


class UsageReport(pulumi.ComponentResource):
    """Bucket, IAM role, Pod Identity association, ServiceAccount, ConfigMap and CronJob of the usage report."""

    def __init__(self, name: str, plan: ReportPlan, cluster: str, cluster_name: pulumi.Input[str],
                 k8s_provider: Optional[pulumi.ProviderResource], node_selector: Mapping[str, str],
                 depends_on: Sequence[pulumi.Resource] = (), opts: Optional[pulumi.ResourceOptions] = None):
        super().__init__(component_types.INTERNAL["UsageReport"], name, None, opts)
        child = pulumi.ResourceOptions(parent=self)
        self.bucket_name = self._bucket(name, plan, child)
        self.association = self._identity(name, plan, cluster, cluster_name, child, depends_on)
        self._cluster_objects(name, plan, k8s_provider, dict(node_selector), depends_on)
        self.register_outputs({"bucket": self.bucket_name, "prefix": plan.prefix, "schedule": plan.schedule})

    def _bucket(self, name: str, plan: ReportPlan, child: pulumi.ResourceOptions) -> pulumi.Output[str]:
        if plan.bucket_name is not None:
            return pulumi.Output.from_input(plan.bucket_name)
        from pulumi_aws import s3

        kept = pulumi.ResourceOptions.merge(child, pulumi.ResourceOptions(protect=True, retain_on_delete=True))
        bucket = s3.Bucket(name, bucket_prefix=plan.bucket_prefix, force_destroy=False, opts=kept)
        s3.BucketPublicAccessBlock(name, bucket=bucket.id, block_public_acls=True, block_public_policy=True,
                                   ignore_public_acls=True, restrict_public_buckets=True, opts=child)
        s3.BucketServerSideEncryptionConfiguration(name, bucket=bucket.id, rules=[{
            "apply_server_side_encryption_by_default": {"sse_algorithm": "AES256"}, "bucket_key_enabled": True}],
            opts=child)
        s3.BucketLifecycleConfiguration(name, bucket=bucket.id, rules=[{
            "id": "expire-usage-reports", "status": "Enabled", "filter": {"prefix": f"{plan.prefix}/"},
            "expiration": {"days": plan.retention_days},
            "abort_incomplete_multipart_upload": {"days_after_initiation": 1}}], opts=child)
        s3.BucketPolicy(name, bucket=bucket.id, policy=bucket.bucket.apply(lambda b: json.dumps(job.tls_only_policy(b))),
                        opts=child)
        return bucket.bucket

    def _identity(self, name: str, plan: ReportPlan, cluster: str, cluster_name: pulumi.Input[str],
                  child: pulumi.ResourceOptions, depends_on: Sequence[pulumi.Resource]) -> pulumi.Resource:
        from pulumi_aws import eks, iam

        from gpu_platform.render.iam import pod_identity_trust_policy

        role = iam.Role(name, name=names.role_name(cluster, "gpu-usage-report"),
                        assume_role_policy=pod_identity_trust_policy(),
                        description="GPU usage report: write the monthly CSV under its S3 prefix", opts=child)
        policy = iam.RolePolicy(name, role=role.name, opts=child,
                                policy=self.bucket_name.apply(lambda b: json.dumps(job.writer_policy(b, plan))))
        return eks.PodIdentityAssociation(
            name, cluster_name=cluster_name, namespace=plan.namespace,
            service_account=names.USAGE_REPORT_SERVICE_ACCOUNT, role_arn=role.arn,
            opts=pulumi.ResourceOptions(parent=self, depends_on=[policy, *depends_on]))

    def _cluster_objects(self, name: str, plan: ReportPlan, k8s_provider: Optional[pulumi.ProviderResource],
                         node_selector: dict[str, str], depends_on: Sequence[pulumi.Resource]) -> None:
        from pulumi_kubernetes.batch.v1 import CronJob
        from pulumi_kubernetes.core.v1 import ConfigMap, ServiceAccount

        k8s = pulumi.ResourceOptions(parent=self, provider=k8s_provider, depends_on=list(depends_on))
        labels = {names.MANAGED_BY_LABEL: names.MANAGED_BY}
        account = ServiceAccount(f"{name}-account", metadata={
            "name": names.USAGE_REPORT_SERVICE_ACCOUNT, "namespace": plan.namespace, "labels": labels}, opts=k8s)
        script = ConfigMap(f"{name}-script", metadata={
            "name": names.USAGE_REPORT_CONFIGMAP, "namespace": plan.namespace, "labels": labels}, data=job.configmap_data(),
            opts=k8s)
        manifest = self.bucket_name.apply(lambda b: job.cron_job(plan, b, node_selector))
        after = pulumi.ResourceOptions(parent=self, provider=k8s_provider,
                                       depends_on=[*depends_on, account, script, self.association])
        self.cron_job = CronJob(name, metadata=manifest["metadata"], spec=manifest["spec"], opts=after)
