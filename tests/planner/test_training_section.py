"""The plan's `training` section (EFA, local NVMe scratch and the datasets mount per pool, the EFA device
plugin, the datasets file system with its cost, teams whose quota refuses their largest GPU pod) and the
capacity table's Scratch/node column, through the real planner on the shipped stacks."""
from __future__ import annotations

import json

import pytest

from gpu_platform.decisions.cost import OVERRIDE_SOURCE
from gpu_platform.facts import catalog, names
from gpu_platform.planner import capacity_section, training_section
from gpu_platform.planner.plan import schema_problems
from tests.support.stacks import cached_plan, stack_platform

SCRATCH = catalog.LOCAL_STORAGE_MOUNT


def planned(platform: dict) -> dict:
    return cached_plan(platform)


def pools(section: dict) -> dict[str, dict]:
    return {p["name"]: p for p in section["pools"]}


@pytest.fixture(scope="module")
def prod_plan() -> dict:
    return planned(stack_platform("prod"))


@pytest.fixture(scope="module")
def prod(prod_plan) -> dict:
    return prod_plan["training"]


def test_every_shipped_stack_has_a_training_section_that_meets_the_schema():
    for stack in ("dev", "prod", "karpenter"):
        plan = planned(stack_platform(stack))
        assert schema_problems(plan) == []
        assert [p["name"] for p in plan["training"]["pools"]] == [p["name"] for p in stack_platform(stack)["nodePools"]]


# --- EFA ---

def test_the_efa_pool_shows_its_interfaces_rdma_driver_check_placement_group_and_security_group(prod):
    efa = pools(prod)["a100-train"]["efa"]
    assert efa == {"enabled": True, "interfacesPerNode": 4, "rdma": True, "driver": "boot-check",
                   "placementGroup": names.placement_group_name("gpu-prod", "a100-train"),
                   "securityGroup": names.efa_security_group_name("gpu-prod", "a100-train")}
    assert pools(prod)["a100-train"]["zones"] == ["us-east-1a"]  # one placement group, one zone


def test_pools_without_efa_say_so_and_span_every_zone(prod):
    for name in ("h100-mig", "l4-inference"):
        pool = pools(prod)[name]
        assert pool["efa"] == {"enabled": False, "interfacesPerNode": 0, "rdma": False, "driver": None,
                               "placementGroup": None, "securityGroup": None}
        assert pool["zones"] is None


def test_the_efa_device_plugin_runs_only_on_efa_pools(prod):
    assert prod["efaDevicePlugin"] == {"chart": "aws-efa-k8s-device-plugin", "version": "v0.5.30",
                                       "namespace": catalog.EFA_DEVICE_PLUGIN_NAMESPACE, "pools": ["a100-train"]}
    assert planned(stack_platform("dev"))["training"]["efaDevicePlugin"] is None


def test_the_efa_collector_runs_on_efa_pools_and_is_scraped_where_prometheus_reads_monitors(prod):
    assert prod["efaMetrics"] == {
        "daemonSet": f"kube-system/{names.EFA_METRICS_NAME}", "image": catalog.PYTHON_IMAGE, "port": 9810,
        "pools": ["a100-train"], "podMonitor": f"monitoring/{names.EFA_METRICS_NAME}",
        "series": sorted([*(f"gpu_platform_efa_{c}_total" for c in catalog.EFA_PORT_COUNTERS), "gpu_platform_efa_devices"])}
    assert "EFA metrics: DaemonSet kube-system/gpu-platform-efa-metrics on a100-train" in training_section.text(prod)
    assert "efaMetrics" not in planned(stack_platform("dev"))["training"]  # no EFA pool


def test_an_al2023_efa_pool_relies_on_the_image_s_driver():
    section = planned(stack_platform("karpenter"))["training"]
    assert pools(section)["a100-train"]["efa"]["driver"] == "image"
    assert "4 interfaces, GPUDirect RDMA, driver in the AMI" in training_section.text(section)


# --- local NVMe scratch ---

@pytest.mark.parametrize("pool, disks, gb, nodes", [
    ("h100-mig", 8, 8 * 3840, 2),     # p5.48xlarge: 8 x 3.84 TB
    ("a100-train", 8, 8 * 1000, 2),   # p4d.24xlarge: 8 x 1 TB
    ("l4-inference", 1, 450, 6),      # g6.2xlarge (the smaller of the pool's types): 1 x 450 GB
])
def test_prod_pools_stripe_their_instance_store_into_one_array(prod, pool, disks, gb, nodes):
    scratch = pools(prod)[pool]["localScratch"]
    assert scratch == {"strategy": "raid0", "setup": "script", "disksPerNode": disks, "gbPerNode": gb,
                       "gbAtMax": gb * nodes, "mount": SCRATCH, "note": ""}  # Ubuntu: the boot script


def test_al2023_pools_leave_the_array_to_nodeadm_sized_by_their_smallest_type():
    scratch = pools(planned(stack_platform("dev"))["training"])["a10g-spot"]["localScratch"]
    assert (scratch["setup"], scratch["disksPerNode"], scratch["gbPerNode"], scratch["gbAtMax"]) == (
        "nodeadm", 1, 250, 250 * 4)  # g5.xlarge 250 GB before g5.2xlarge 450 GB


def test_a_pool_that_opts_out_shows_no_scratch_and_why():
    platform = stack_platform("prod")
    platform["nodePools"][2]["localStorage"] = "none"
    section = planned(platform)["training"]
    scratch = pools(section)["l4-inference"]["localScratch"]
    assert (scratch["strategy"], scratch["gbPerNode"], scratch["gbAtMax"], scratch["mount"], scratch["note"]) == (
        "none", 0, 0, None, "localStorage: none")
    assert "none (localStorage: none)" in training_section.text(section)


def test_bottlerocket_pools_show_why_they_have_no_scratch():
    platform = stack_platform("dev")
    platform["nodePools"][0].update(ami={"type": "BOTTLEROCKET_x86_64_NVIDIA", "releaseVersion": "1.35.7-20260911"},
                                    sharing={"mode": "none"}, maxSize=12)
    scratch = pools(planned(platform)["training"])["a10g-spot"]["localScratch"]
    assert (scratch["strategy"], scratch["note"]) == ("none", "not offered on BOTTLEROCKET_x86_64_NVIDIA")


# --- the datasets file system ---

def test_every_prod_pool_mounts_the_datasets_at_their_path(prod):
    for pool in prod["pools"]:
        assert pool["datasets"] == {"mounted": True, "path": "/datasets"}
    assert all(p["datasets"] == {"mounted": False, "path": None}
               for p in planned(stack_platform("dev"))["training"]["pools"])


def test_the_prod_datasets_line_names_type_size_throughput_zone_protection_link_claims_and_cost(prod):
    d = prod["datasets"]
    assert {k: d[k] for k in ("type", "deploymentType", "storageGiB", "throughputPerTiB", "throughputMBps", "zone",
                              "encryption", "protected", "teams", "mountPath", "csiAddonVersion")} == {
        "type": "fsx-lustre", "deploymentType": "PERSISTENT_2", "storageGiB": 4800, "throughputPerTiB": 250,
        "throughputMBps": 1171, "zone": "us-east-1a", "encryption": "AWS-managed FSx key", "protected": True,
        "teams": ["research", "inference", "batch"], "mountPath": "/datasets", "csiAddonVersion": "v1.7.0-eksbuild.1"}
    assert d["dataRepository"] == {"s3Path": "s3://gpu-prod-datasets/training", "fileSystemPath": "/",
                                   "autoImport": True, "autoExport": True}
    assert (d["usdPerGbMonth"], d["monthlyUsd"]) == (0.21, pytest.approx(4800 * 0.21))


def test_the_datasets_cost_is_the_cost_section_s_fsx_line(prod_plan):
    (fsx,) = [f for f in prod_plan["cost"]["fixed"] if f["key"] == "fsxDatasets"]
    d = prod_plan["training"]["datasets"]
    assert (fsx["monthlyUsdAtMax"], fsx["usdPerUnit"], fsx["source"], fsx["asOf"]) == (
        d["monthlyUsd"], d["usdPerGbMonth"], d["source"], d["asOf"])
    assert d["source"].startswith("AWS FSx for Lustre pricing page")


def test_a_stack_price_for_fsx_reaches_the_section_and_names_the_stack_file():
    platform = stack_platform("prod")
    platform["pricing"] = {"fsxLustreUsdPerGbMonth": 0.18}
    d = planned(platform)["training"]["datasets"]
    assert (d["usdPerGbMonth"], d["monthlyUsd"], d["source"]) == (0.18, pytest.approx(4800 * 0.18), OVERRIDE_SOURCE)


def test_a_kms_key_and_an_unprotected_dev_file_system_are_shown_as_such():
    platform = stack_platform("dev")
    key = "arn:aws:kms:us-east-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    platform["datasets"] = {"fsxLustre": {"deploymentType": "PERSISTENT_1", "storageCapacityGiB": 2400,
                                          "kmsKeyArn": key, "addonVersion": "v1.7.0-eksbuild.1"}}
    section = planned(platform)["training"]
    d = section["datasets"]
    assert (d["encryption"], d["protected"], d["throughputPerTiB"], d["zone"], d["dataRepository"]) == (
        key, False, 50, "us-east-1a", None)
    line = training_section.text(section)
    assert (f"encrypted ({key}); each team mounts only its directory at /datasets (applied-ml /teams/applied-ml, "
            "research /teams/research; owner 1000:1000)") in line and "protected" not in line
    assert (d["directories"], d["shared"], d["owner"], d["links"]) == (
        {"research": "/teams/research", "applied-ml": "/teams/applied-ml"}, None, "1000:1000", [])


def test_a_scratch_file_system_has_no_throughput_tier():
    platform = stack_platform("dev")
    platform["datasets"] = {"fsxLustre": {"deploymentType": "SCRATCH_2", "addonVersion": "v1.7.0-eksbuild.1",
                                          "teams": ["research"]}}
    section = planned(platform)["training"]
    d = section["datasets"]
    assert (d["throughputPerTiB"], d["throughputMBps"], d["usdPerGbMonth"], d["teams"]) == (None, None, 0.14,
                                                                                           ["research"])
    assert "Datasets: FSx for Lustre SCRATCH_2, 1,200 GiB, us-east-1a, encrypted" in training_section.text(section)


# --- teams and their largest pods ---

def test_prod_teams_fit_their_largest_gpu_pod(prod):
    assert {t["name"]: (t["largestPodGpus"], t["fits"]) for t in prod["teams"]} == {
        "research": (8, True), "inference": (1, True), "batch": (4, True)}
    assert "WARNING" not in training_section.text(prod)


def test_a_quota_too_small_for_the_default_pod_size_is_a_warning():
    platform = stack_platform("prod")
    platform["teams"][1]["quota"]["cpu"] = "4"  # inference: one L4 pod asks for its share of a g6.2xlarge
    section = planned(platform)["training"]
    inference = next(t for t in section["teams"] if t["name"] == "inference")
    assert not inference["fits"] and inference["problems"] == [f"quota.cpu 4 < {inference['cpu']}"]
    assert f"WARNING Team inference: its largest pod (1 GPUs) asks {inference['cpu']} CPU" in training_section.text(
        section)
    assert "⚠️ Team inference" in training_section.markdown(section)


# --- rendering ---

def test_text_and_markdown_show_each_pool_s_efa_scratch_mount_and_extra_cost(prod):
    for rendered in (training_section.text(prod), training_section.markdown(prod)):
        assert "4 interfaces, GPUDirect RDMA, driver checked at boot" in rendered
        assert "30,720 GB RAID0 of 8 disk(s)" in rendered and "8,000 GB RAID0 of 8 disk(s)" in rendered
        assert "+0.00/month (in the instance price)" in rendered
        assert "EFA device plugin: aws-efa-k8s-device-plugin v0.5.30 in kube-system, on a100-train." in rendered
        assert ("Datasets: FSx for Lustre PERSISTENT_2, 4,800 GiB, 250 MB/s/TiB (1,171 MB/s), us-east-1a, encrypted "
                "(AWS-managed FSx key), protected; each directory linked to the same path under "
                "s3://gpu-prod-datasets/training (import, export); each team mounts only its directory at /datasets "
                "(batch /teams/batch, inference /teams/inference, research /teams/research; owner 1000:1000); "
                "$1,008.00/month.") in rendered


def test_a_pool_without_efa_or_scratch_adds_nothing():
    pool = {"efa": {"enabled": False}, "localScratch": {"mount": None}}
    assert training_section._cost(pool) == "-"


def test_the_section_is_in_the_printed_plan(capsys):
    from gpu_platform.planner.cli import main

    assert main(["plan", "--stack", "prod", "--as-of", "2026-11-23"]) == 0
    assert f"\n{training_section.TITLE}\n" in capsys.readouterr().out


# --- the capacity table's Scratch/node column ---

def test_capacity_lists_scratch_and_efa_interfaces_per_node(prod_plan):
    found = {p["name"]: (p["localScratchGBPerNode"], p["efaInterfacesPerNode"]) for p in prod_plan["capacity"]["pools"]}
    assert found == {"h100-mig": (30720, 0), "a100-train": (8000, 4), "l4-inference": (450, 0)}


def test_the_scratch_column_reads_gb_per_node_or_a_dash():
    platform = stack_platform("prod")
    platform["nodePools"][2]["localStorage"] = "none"
    section = planned(platform)["capacity"]
    text, markdown = capacity_section.text(section), capacity_section.markdown(section)
    assert "Scratch/node" in text and "| Scratch/node |" in markdown
    assert {p["name"]: capacity_section.scratch(p) for p in section["pools"]} == {
        "h100-mig": "30,720 GB", "a100-train": "8,000 GB", "l4-inference": "-"}
    assert "| a100-train | 0-2 | 16 x A100-SXM4-40GB | whole GPUs | 8,000 GB |" in markdown
    a100 = next(line for line in text.splitlines() if line.strip().startswith("a100-train"))
    assert "8,000 GB" in a100


# --- docs/training.md shows what the planner prints ---

def documented(kind: str) -> list[str]:
    """The fenced blocks of docs/training.md opened with ```<kind>."""
    from tests.support.stacks import ROOT

    blocks, lines, inside, keep = [], [], False, False
    for line in (ROOT / "docs" / "training.md").read_text().splitlines():
        if line.startswith("```"):
            if inside and keep:
                blocks.append("\n".join(lines))
            inside, keep, lines = not inside, not inside and line == f"```{kind}", []
        elif inside:
            lines.append(line)
    return blocks


def test_the_documented_section_text_is_the_prod_plan_s(prod):
    (block,) = [b for b in documented("") if b.startswith(training_section.TITLE)]
    shown = [training_section.TITLE, *training_section.text(prod).splitlines()]
    assert block == "\n".join(line.rstrip() for line in shown)


def test_the_documented_json_is_the_prod_plan_s(prod):
    (block,) = documented("json")
    doc = json.loads(block)
    assert doc["pools"] == [pools(prod)["a100-train"]]
    assert {k: doc[k] for k in ("version", "efaDevicePlugin", "efaMetrics", "datasets")} == {
        k: prod[k] for k in ("version", "efaDevicePlugin", "efaMetrics", "datasets")}
    assert doc["teams"] == prod["teams"][:1]


# --- network proximity of multi-node Jobs ---

LAYERS = ["topology.k8s.aws/network-node-layer-3", "topology.k8s.aws/network-node-layer-2",
          "topology.k8s.aws/network-node-layer-1"]


def test_pools_of_described_types_list_the_network_layers_their_nodes_carry(prod):
    assert pools(prod)["a100-train"]["networkLayers"] == LAYERS  # p4d
    assert pools(prod)["h100-mig"]["networkLayers"] == LAYERS  # p5
    assert pools(prod)["l4-inference"]["networkLayers"] == []  # g6: EC2 does not describe its topology


def test_text_and_markdown_name_the_pools_whose_multi_node_jobs_prefer_proximity(prod):
    line = ("Network proximity: multi-node Jobs (gpu_job nodes > 1) on h100-mig, a100-train prefer nodes sharing "
            "network-node-layer-3, then network-node-layer-2, then network-node-layer-1 with the Job's other pods.")
    assert line in training_section.text(prod) and line in training_section.markdown(prod)


def test_no_proximity_line_without_a_described_pool():
    plan = planned(stack_platform("dev"))
    assert all(p["networkLayers"] == [] for p in plan["training"]["pools"])
    assert "Network proximity" not in training_section.text(plan["training"])


def test_the_schema_refuses_a_network_layer_that_is_not_one():
    plan = planned(stack_platform("prod"))
    plan["training"]["pools"][0]["networkLayers"] = ["rack"]
    assert schema_problems(plan)
