"""Metrics that remember: Prometheus and Alertmanager on gp3 volumes from the EBS CSI add-on, a retention per
stack, the volume sized from it, and its price in the plan."""
import re

import kubernetes_validate
import pytest

from gpu_platform.decisions.cost import METRICS_VOLUMES, estimate_spec
from gpu_platform.decisions.metrics_storage import (efa_devices_at_max, estimate_gib, retention_seconds, scale,
                                                    stack_metrics_storage)
from gpu_platform.facts import catalog, names
from gpu_platform.planner.health_section import text as health_text
from gpu_platform.render.monitoring import metrics_storage_class
from gpu_platform.spec.errors import SpecError
from tests.support.stacks import cached_plan, resource, resources, spec_of, stack_platform

RELEASE, ADDON, SC = "kubernetes:helm.sh/v3:Release", "aws:eks/addon:Addon", "kubernetes:storage.k8s.io/v1:StorageClass"
ATTACHMENT = "aws:iam/rolePolicyAttachment:RolePolicyAttachment"
EXAMPLE_ADDON = "v1.0.0-eksbuild.1"  # any exact add-on version: the plan runs offline


def persistent(p):
    p["monitoring"]["prometheus"].update(ebsCsiAddonVersion=EXAMPLE_ADDON, retention="90d")


def planned(edit=None):
    p = stack_platform("prod")
    if edit:
        edit(p)
    return cached_plan(p)


def prom_spec(plan):
    return resource(plan, RELEASE, "monitoring-stack")["inputs"]["values"]["prometheus"]["prometheusSpec"]


def test_the_retention_is_per_stack():
    assert prom_spec(planned())["retention"] == "35d"  # prod: a month, and the usage report's month
    assert spec_of("dev").monitoring.prometheus.retention == "7d"


def without_the_add_on(p):
    del p["monitoring"]["prometheus"]["ebsCsiAddonVersion"]


def test_without_the_add_on_nothing_claims_a_volume_and_the_plan_says_so():
    plan = planned(without_the_add_on)
    assert "storageSpec" not in prom_spec(plan)
    assert not [r for r in resources(plan, ADDON) if r["inputs"].get("addonName") == catalog.EBS_CSI_ADDON]
    assert not resources(plan, SC) or all(r["inputs"]["provisioner"] != catalog.EBS_CSI_PROVISIONER
                                          for r in resources(plan, SC))
    assert all(f.key != METRICS_VOLUMES for f in estimate_spec(spec_of("prod", without_the_add_on)).fixed)


def test_with_the_add_on_both_keep_their_data_on_gp3_claims():
    plan = planned(persistent)
    spec = spec_of("prod", persistent)
    storage = stack_metrics_storage(spec)
    prom = prom_spec(plan)
    claim = prom["storageSpec"]["volumeClaimTemplate"]["spec"]
    assert claim == {"storageClassName": names.METRICS_STORAGE_CLASS, "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": f"{storage.prometheus_gib}Gi"}}}
    assert (prom["retention"], prom["retentionSize"]) == ("90d", f"{int(storage.prometheus_gib * 0.9)}GiB")
    alertmanager = resource(plan, RELEASE, "monitoring-stack")["inputs"]["values"]["alertmanager"]["alertmanagerSpec"]
    assert alertmanager["storage"]["volumeClaimTemplate"]["spec"]["resources"]["requests"]["storage"] == "2Gi"


def test_the_add_on_runs_with_its_own_role_and_the_managed_policy():
    plan = planned(persistent)
    addon = next(r for r in resources(plan, ADDON) if r["inputs"].get("addonName") == catalog.EBS_CSI_ADDON)
    assert addon["inputs"]["addonVersion"] == EXAMPLE_ADDON
    assert addon["inputs"]["podIdentityAssociations"][0]["serviceAccount"] == "ebs-csi-controller-sa"
    policies = {r["inputs"]["policyArn"] for r in resources(plan, ATTACHMENT)}
    assert "arn:aws:iam::aws:policy/service-role/AmazonEBSCSIDriverPolicy" in policies
    sc = next(r for r in resources(plan, SC) if r["inputs"]["metadata"]["name"] == names.METRICS_STORAGE_CLASS)
    assert sc["inputs"]["parameters"] == {"type": "gp3", "encrypted": "true"}


def test_the_storage_class_matches_the_kubernetes_schema():
    kubernetes_validate.validate(metrics_storage_class(), "1.35", strict=True)


def test_the_volume_is_sized_from_retention_and_ingestion():
    # 20000 + 16 nodes x 1500 + 38 GPUs x 60 = 46280 series; every 30 s; 2 bytes a sample; 90 days; 25% headroom.
    assert scale(spec_of("prod")) == (16, 38)
    series, gib = estimate_gib("90d", 16, 38)
    assert series == 46_280
    assert gib == -(-46_280 / 30 * 90 * 86_400 * 2 * 1.25 // 2**30) == 28
    assert estimate_gib("1h", 1, 0)[1] == 10  # never below the floor
    assert estimate_gib("90d", 16, 38, efa_devices=8)[0] == 46_280 + 8 * len(catalog.EFA_PORT_COUNTERS)
    assert stack_metrics_storage(spec_of("prod", persistent)).prometheus_gib == 28


def test_storage_gi_overrides_the_estimate():
    def sized(p):
        persistent(p)
        p["monitoring"]["prometheus"]["storageGi"] = 200
    assert prom_spec(planned(sized))["storageSpec"]["volumeClaimTemplate"]["spec"]["resources"]["requests"] == {
        "storage": "200Gi"}


def test_the_volumes_are_priced_at_gp3():
    item = next(f for f in estimate_spec(spec_of("prod", persistent)).fixed if f.key == METRICS_VOLUMES)
    assert (item.quantity_at_min, item.quantity_at_max, item.unit) == (30, 30, "GB-month")
    assert item.price.usd == catalog.EBS_GP3_GB_MONTH.usd_per_hour
    assert "Prometheus 28 GiB for 90d" in item.note


@pytest.mark.parametrize("retention", ["10", "0d", "1.5d", "30m"])
def test_a_retention_prometheus_cannot_take_is_refused_at_its_path(retention):
    def edit(p):
        p["monitoring"]["prometheus"]["retention"] = retention
    with pytest.raises(SpecError, match=re.escape("monitoring.prometheus.retention")):
        spec_of("prod", edit)


def test_retention_units():
    assert [retention_seconds(r) for r in ("1h", "2d", "1w", "1y")] == [3600, 172_800, 604_800, 31_536_000]


def test_the_plan_states_retention_and_volumes():
    from gpu_platform.planner.health_section import metrics
    assert metrics(planned(persistent)["resources"]) == {
        "retention": "90d", "retentionSize": "25GiB", "prometheusVolumeGi": 28, "alertmanagerVolumeGi": 2}
    section = {"pools": [], "nodeMonitoringAgent": None, "alerting": None,
               "metrics": metrics(planned(without_the_add_on)["resources"])}
    assert "Prometheus keeps 35d in its pod" in health_text(section)


@pytest.mark.parametrize("mode", ["existing", "none"])
def test_retention_and_volumes_apply_only_to_an_installed_stack(mode):
    def edit(p):
        p["monitoring"]["prometheus"].update(mode=mode, storageGi=50, ebsCsiAddonVersion=EXAMPLE_ADDON)
    with pytest.raises(SpecError) as err:
        spec_of("prod", edit)
    assert [p for p in err.value.problems if "applies only" in p] == [
        f"monitoring.prometheus.{f}: applies only when monitoring.prometheus.mode is install"
        for f in ("ebsCsiAddonVersion", "storageGi")]


def test_the_component_alone_needs_the_cluster_for_the_add_on():
    from gpu_platform.resources.monitoring import monitoring_settings
    with pytest.raises(SpecError, match=re.escape(
            "GpuMonitoring 'm': prometheus.ebs_csi_addon_version: also give cluster_name, the cluster the add-on goes to")):
        monitoring_settings("m", {"prometheus": {"ebs_csi_addon_version": EXAMPLE_ADDON}})
    settings = monitoring_settings("m", {"prometheus": {"ebs_csi_addon_version": EXAMPLE_ADDON, "retention": "15d"},
                                         "cluster_name": "c", "nodes_at_max": 16, "gpus_at_max": 38})
    assert (settings.storage.persistent, settings.storage.prometheus_gib) == (True, estimate_gib("15d", 16, 38)[1])


def test_an_installed_prometheus_counts_the_efa_collector_s_series():
    # prod's a100-train: 2 p4d.24xlarge at max size, 4 EFA devices each, 11 counters per device's port.
    spec = spec_of("prod")
    assert efa_devices_at_max(spec) == 8
    assert stack_metrics_storage(spec).series == estimate_gib("35d", 16, 38)[0] + 8 * 11
    assert efa_devices_at_max(spec_of("dev")) == 0
