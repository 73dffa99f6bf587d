"""The prod stack with its training pool on DRA, planned end to end: clean on its own, the DRA driver serving
that pool only, Kueue counting its claims, the capacity table showing it; and, held to the committed lock,
the switch from the device plugin refused until the lock approves it, with `diff` naming the eviction."""
from __future__ import annotations

import json

import pytest
import yaml

from gpu_platform.planner.cli import main
from tests.support.dra import DRA_POOL, bottlerocket_dra, prod_with_dra
from tests.support.stacks import AS_OF, ROOT, resource, resources, stack_platform, write_stack

COMMITTED_LOCK = ROOT / "stacks" / "Pulumi.prod.lock.json"
SWITCH = "GPU allocation (device plugin <-> DRA): every GPU pod on the pool is evicted"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    out = {}
    for name, platform in (("base", stack_platform("prod")), ("dra", prod_with_dra())):
        folder = tmp_path_factory.mktemp(name)
        stack = write_stack(folder / "Pulumi.prod.yaml", platform)
        plan = folder / "plan.json"
        code = main(["plan", "--config", str(stack), "--json", str(plan), "--lock", str(COMMITTED_LOCK), "--as-of", AS_OF])
        out[name] = {"stack": stack, "plan": plan, "code": code, "doc": json.loads(plan.read_text())}
    return out


def _violations(run, policy=None):
    return [v for v in run["doc"]["policy"]["violations"] if policy is None or v["policy"] == policy]


def test_the_dra_variant_is_refused_against_the_old_lock_naming_the_eviction(runs):
    run = runs["dra"]
    assert run["code"] == 1
    found = _violations(run, "disruption-approved")
    assert [v["message"].split(":", 1)[0] for v in found] == [f"pool {DRA_POOL}"]
    # The prod pool runs Ubuntu, whose boot script registers the node's labels: the new labels are a new launch
    # template version, so the switch rolls the pool (which evicts every GPU pod too).
    assert ": node-roll of " in found[0]["message"] and "gpu-platform.io/gpu-allocation (none) -> dra" in found[0]["message"]
    assert SWITCH in found[0]["message"]
    assert [v for v in _violations(run) if v["policy"] != "disruption-approved"] == []


def test_the_lock_approves_the_switch(runs, tmp_path, capsys):
    run, lock = runs["dra"], tmp_path / "Pulumi.prod.lock.json"
    lock.write_text(COMMITTED_LOCK.read_text())
    assert main(["lock", "--plan", str(run["plan"]), "--out", str(lock)]) == 0
    assert f"~ pool {DRA_POOL}: approves node-roll" in capsys.readouterr().out
    assert main(["plan", "--config", str(run["stack"]), "--lock", str(lock), "--as-of", AS_OF]) == 0


def test_diff_names_the_eviction(runs, capsys):
    assert main(["diff", str(runs["base"]["plan"]), str(runs["dra"]["plan"]), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # The DRA pool rolls; dcgm-exporter learns to attribute DRA GPUs to pods (KUBERNETES_ENABLE_DRA), so the
    # exporter restarts on every other GPU pool, evicting nothing.
    others = {p["name"] for p in stack_platform("prod")["nodePools"]} - {DRA_POOL}
    assert {(d["pool"], d["effect"]) for d in doc["disruptions"]} == {(DRA_POOL, "node-roll")} | {
        (pool, "operand-restart") for pool in others}
    assert main(["diff", str(runs["base"]["plan"]), str(runs["dra"]["plan"])]) == 0
    text = capsys.readouterr().out
    assert "gpu-platform.io/gpu-allocation (none) -> dra" in text and SWITCH in text


def test_the_model_classifies_the_switch_as_an_eviction_the_lock_records():
    from gpu_platform.decisions.disruption import classify, rule_for
    from gpu_platform.decisions.disruption_model import Effect, Pool

    rule = rule_for("gpuAllocation")
    assert rule.effect == Effect.GPU_POD_EVICTION and rule.locked and SWITCH in rule.what
    base = Pool(DRA_POOL, "ng", 2, 8, {"nodeGroup.releaseVersion": "1.35.7-20260911"})
    head = Pool(DRA_POOL, "ng", 2, 8, {"nodeGroup.releaseVersion": "1.35.7-20260911", "gpuAllocation": "dra"})
    found = classify(base, head, locked_only=True)
    assert found.effect == Effect.GPU_POD_EVICTION and SWITCH in found.causes[0].text


def test_the_dra_driver_leaves_the_compute_domain_crds_to_the_operator(runs):
    """Without ComputeDomains too: the chart's crds/ would install its own ComputeDomain CRD on any cluster."""
    doc = runs["dra"]["doc"]
    release = resource(doc, "kubernetes:helm.sh/v3:Release", "dra-driver")
    operator = resource(doc, "kubernetes:helm.sh/v3:Release", "gpu-operator")
    assert release["inputs"]["values"]["resources"]["computeDomains"] == {"enabled": False}
    assert release["inputs"].get("skipCrds") is True and operator["urn"] in release["options"]["dependsOn"]


def test_the_dra_driver_serves_exactly_the_dra_pool(runs):
    doc = runs["dra"]["doc"]
    release = resource(doc, "kubernetes:helm.sh/v3:Release", "dra-driver")["inputs"]
    selector = release["values"]["kubeletPlugin"]["nodeSelector"]
    groups = resources(doc, "aws:eks/nodeGroup:NodeGroup")
    served = {g["inputs"]["labels"].get("gpu-platform.io/pool") for g in groups
              if all(g["inputs"]["labels"].get(k) == v for k, v in selector.items())}
    assert served == {DRA_POOL}
    plugin_off = {g["inputs"]["labels"].get("gpu-platform.io/pool") for g in groups
                  if g["inputs"]["labels"].get("nvidia.com/gpu.deploy.device-plugin") == "false"}
    assert plugin_off == {DRA_POOL}
    assert not resources(runs["base"]["doc"], "gpu-platform:dra:DraDriver")


def test_kueue_counts_the_claims_and_teams_get_claims_and_quotas(runs):
    doc = runs["dra"]["doc"]
    kueue = resource(doc, "kubernetes:helm.sh/v3:Release", "kueue")["inputs"]["values"]
    config = yaml.safe_load(kueue["managerConfig"]["controllerManagerConfigYaml"])
    assert config["resources"]["deviceClassMappings"] == [{"name": "nvidia.com/gpu", "deviceClassNames": ["gpu.nvidia.com"]}]
    templates = {r["name"] for r in resources(doc, "kubernetes:resource.k8s.io/v1:ResourceClaimTemplate")}
    assert {t.split("-a100")[0] for t in templates} == {"team-research", "team-batch"}
    for quota in resources(doc, "kubernetes:core/v1:ResourceQuota"):
        assert "gpu.nvidia.com.deviceclass.resource.k8s.io/devices" in quota["inputs"]["spec"]["hard"]


def test_the_capacity_table_shows_the_dra_pool(runs):
    pools = {p["name"]: p for p in runs["dra"]["doc"]["capacity"]["pools"]}
    assert pools[DRA_POOL]["gpuAllocation"] == "dra" and pools[DRA_POOL]["atMax"] == {"nvidia.com/gpu": 16}


def test_a_bottlerocket_dra_pool_plans_with_its_device_plugin_off(tmp_path):
    """Bottlerocket 1.63.0+: the node group pins Bottlerocket's own release and its launch template's TOML
    settings turn the image's device plugin off; no rule refuses either."""
    import base64

    stack = write_stack(tmp_path / "Pulumi.dev.yaml", bottlerocket_dra("1.63.0-18d04e52"))
    out = tmp_path / "plan.json"
    main(["plan", "--config", str(stack), "--json", str(out), "--as-of", AS_OF])
    doc = json.loads(out.read_text())
    assert [v for v in doc["policy"]["violations"] if v["policy"] == "ami-release-pinned"] == []
    group = resource(doc, "aws:eks/nodeGroup:NodeGroup", "a10g-spot")["inputs"]
    assert (group["amiType"], group["releaseVersion"]) == ("BOTTLEROCKET_x86_64_NVIDIA", "1.63.0-18d04e52")
    template = next(r for r in resources(doc, "aws:ec2/launchTemplate:LaunchTemplate") if "a10g-spot" in r["name"])
    settings = base64.b64decode(template["inputs"]["userData"]).decode()
    assert settings == "[settings.kubelet-device-plugins.nvidia]\nenabled = false\n"
