"""gpu-platform diff: replaced or deleted guarded resources, quota and cost changes between two plans."""
from __future__ import annotations

import copy
import json

import pytest

from gpu_platform.planner.cli import main
from gpu_platform.planner.diff import compare, markdown
from tests.support.stacks import AS_OF, resource

NODE_GROUP, FILE_SYSTEM = "aws:eks/nodeGroup:NodeGroup", "aws:efs/fileSystem:FileSystem"


@pytest.fixture(scope="module")
def base_plan(tmp_path_factory):
    path = tmp_path_factory.mktemp("plans") / "prod.json"
    assert main(["plan", "--stack", "prod", "--json", str(path), "--as-of", AS_OF]) == 0
    return json.loads(path.read_text())


@pytest.fixture
def base(base_plan):
    return copy.deepcopy(base_plan)


@pytest.fixture
def head(base_plan):
    return copy.deepcopy(base_plan)


def run(tmp_path, base, head, *extra):
    paths = []
    for name, plan in (("base", base), ("head", head)):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(plan))
    return main(["diff", *map(str, paths), *extra])


def test_same_plan_has_no_changes(base, head, tmp_path, capsys):
    assert run(tmp_path, base, head) == 0
    out = capsys.readouterr().out
    assert "passed: no guarded resource is replaced or deleted" in out and out.count("(no change)") == 3


def test_replace_forcing_change_is_a_replacement(base, head, tmp_path, capsys):
    resource(head, NODE_GROUP, "a100-train")["inputs"]["instanceTypes"] = ["p4de.24xlarge"]
    assert run(tmp_path, base, head) == 1
    assert 'REPLACE aws:eks/nodeGroup:NodeGroup a100-train: instanceTypes ["p4d.24xlarge"] -> ["p4de.24xlarge"]' \
        in capsys.readouterr().out


def test_in_place_change_is_not_a_replacement(base, head):
    resource(head, NODE_GROUP, "a100-train")["inputs"]["scalingConfig"]["maxSize"] = 5
    assert compare(base, head)["replaced"] == []


def test_removed_file_system_is_a_delete(base, head):
    head["resources"] = [r for r in head["resources"] if r["type"] != FILE_SYSTEM]
    result = compare(base, head)
    assert [(d["type"], d["name"]) for d in result["deleted"]] == [(FILE_SYSTEM, "model-cache")]


def test_a_new_deployment_type_replaces_the_datasets_file_system(base, head):
    lustre = "aws:fsx/lustreFileSystem:LustreFileSystem"
    resource(head, lustre, "datasets")["inputs"]["deploymentType"] = "PERSISTENT_1"
    (replaced,) = compare(base, head)["replaced"]
    assert (replaced["type"], replaced["name"]) == (lustre, "datasets")
    assert replaced["changes"] == [{"input": "deploymentType", "from": "PERSISTENT_2", "to": "PERSISTENT_1"}]


def test_alias_carries_a_moved_resource_over(base, head):
    moved = resource(head, NODE_GROUP, "h100-mig")
    old_urn = moved["urn"]
    moved["urn"] = old_urn.replace("gpu-platform:index:GpuNodePool$", "gpu-platform:node_pool:GpuPool$")
    assert compare(base, head)["deleted"] != []
    moved["options"]["aliases"] = [{"urn": old_urn}]
    assert compare(base, head)["deleted"] == []


def _retype(plan, new, old):
    """The plan as if component type `new` had been `old`: every URN with `new` in its type chain."""
    for r in plan["resources"]:
        for key in ("urn", "parent"):
            if r.get(key):
                r[key] = r[key].replace(f"::{new}", f"::{old}").replace(f"${new}", f"${old}").replace(f"{new}$", f"{old}$")
        r["options"]["aliases"] = []


def test_a_type_alias_carries_a_component_and_its_children_over(base, head):
    """Components renamed to the package's `index` types keep every child through their type aliases."""
    for now, before in (("gpu-platform:index:GpuNodePool", "gpu-platform:node_pool:GpuNodePool"),
                        ("gpu-platform:index:GpuPlatform", "gpu-platform:platform:GpuPlatform")):
        _retype(base, now, before)
    assert compare(base, head)["deleted"] == []  # the head plan's components carry their former types
    for r in head["resources"]:
        r["options"]["aliases"] = []
    deleted = {(d["type"], d["name"]) for d in compare(base, head)["deleted"]}
    assert (NODE_GROUP, "h100-mig") in deleted and (FILE_SYSTEM, "model-cache") in deleted


def test_dropped_protect_is_listed(base, head):
    resource(head, NODE_GROUP, "l4-inference")["options"]["protect"] = False
    assert [u["name"] for u in compare(base, head)["unprotected"]] == ["l4-inference"]


def test_quota_changes_per_team_and_resource(base, head):
    quota = next(r for r in head["resources"] if r["type"] == "kubernetes:core/v1:ResourceQuota"
                 and r["inputs"]["metadata"]["namespace"] == "research")
    quota["inputs"]["spec"]["hard"]["requests.nvidia.com/gpu"] = "10"
    changes = compare(base, head)["quotas"]
    assert len(changes) == 1 and changes[0]["namespace"] == "research"
    assert changes[0]["resource"] == "requests.nvidia.com/gpu" and changes[0]["to"] == "10"


def test_cost_changes_from_the_cost_sections(base, head, tmp_path, capsys):
    head["cost"]["totals"]["monthlyUsdAtMax"] += 1000
    head["cost"]["pools"][0]["monthlyUsdAtMax"] += 1000
    assert run(tmp_path, base, head) == 0
    out = capsys.readouterr().out
    assert "(+1,000.00)" in out and f"pool {head['cost']['pools'][0]['name']}" in out


def test_plans_of_two_stack_names_line_up(base, head):
    for r in head["resources"]:
        r["urn"] = r["urn"].replace("urn:pulumi:prod::", "urn:pulumi:pr-42::")
    head["stack"] = "pr-42"
    result = compare(base, head)
    assert result["deleted"] == [] and result["replaced"] == []


def test_markdown_summary(base, head):
    resource(head, NODE_GROUP, "a100-train")["inputs"]["capacityType"] = "SPOT"
    text = markdown(compare(base, head))
    assert text.startswith("### gpu-platform diff") and "❌" in text and "- REPLACE aws:eks/nodeGroup:NodeGroup a100-train" in text


def test_unreadable_plan_is_an_input_error(tmp_path, capsys):
    (tmp_path / "a.json").write_text("{}")
    assert main(["diff", str(tmp_path / "a.json"), str(tmp_path / "a.json")]) == 2
