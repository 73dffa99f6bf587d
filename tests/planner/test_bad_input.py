"""Bad input never crashes, hangs or slips through: every class of bad stack file, lock, policy config, plan
and preview ends in exit 2 with one line per problem naming the file and the field, and the look-alikes that
are valid plan with exit 0 (docs/planner.md, "Input limits and validation rules")."""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from gpu_platform.facts.syntax import quantity_fraction
from gpu_platform.planner.cli import main
from tests.support.stacks import AS_OF, ROOT, STACKS, stack_platform, without_services, write_stack


def run(capsys, *argv: str) -> tuple[int, list[str]]:
    """Exit code and stderr lines of `gpu-platform ARGV`, checked to hold no traceback."""
    code = main(list(argv))
    err = capsys.readouterr().err
    assert "Traceback" not in err and "internal error" not in err, err
    return code, err.splitlines()


def plan(capsys, path: Path, *extra: str) -> tuple[int, list[str]]:
    return run(capsys, "plan", "--config", str(path), "--project-dir", str(ROOT), "--as-of", AS_OF, *extra)


def stack_text(tmp_path: Path, text: str, name: str = "Pulumi.bad.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


DEV = (STACKS / "Pulumi.dev.yaml").read_text()


# --- what crashed with exit 3 ---

@pytest.mark.parametrize("data, words", [
    (DEV.replace("# dev:", "# d\xe9v:").encode("latin-1"), ":1:4: not UTF-8 text (byte 0xe9): save it as UTF-8"),
    (b"\x8f\xff\x00random bytes\xfe", ":1:1: not UTF-8 text (byte 0x8f)"),
    (DEV.encode("utf-16"), ": is UTF-16 text (it starts with a UTF-16 byte-order mark): save it as UTF-8"),
])
def test_a_stack_file_that_is_not_utf8(tmp_path, capsys, data, words):
    path = tmp_path / "Pulumi.bad.yaml"
    path.write_bytes(data)
    code, err = plan(capsys, path)
    assert code == 2 and len(err) == 1 and err[0].startswith(f"error: {path}") and words in err[0]


@pytest.mark.parametrize("edit, words", [
    (lambda t: t + "  gpu-platform:deep: " + "[" * 5000 + "]" * 5000 + "\n", "nested deeper than 64 levels"),
    (lambda t: t.replace("    budget: {monthlyUsd: 4000}", "    budget: {monthlyUsd: 4000}\n    tags: &t {self: *t}"),
     "alias *t refers to the node that contains it"),
    (lambda t: t.replace("monthlyUsd: 4000", "monthlyUsd: " + "9" * 5000), "the integer 999999999999... (5000 digits) "
                                                                           "does not fit 64 bits"),
    (lambda t: t.replace("monthlyUsd: 4000", "monthlyUsd: 1e400"), "1e400 is not a finite number"),
    (lambda t: t.replace("    budget:", "    teams: []\n    budget:"), "key 'teams' appears twice"),
])
def test_a_stack_file_past_a_limit(tmp_path, capsys, edit, words):
    path = stack_text(tmp_path, edit(DEV))
    code, err = plan(capsys, path)
    assert code == 2 and len(err) == 1 and err[0].startswith(f"error: {path}:") and words in err[0], err


def test_a_config_path_that_loops(tmp_path, capsys):
    os.symlink(tmp_path / "b.yaml", tmp_path / "a.yaml")
    os.symlink(tmp_path / "a.yaml", tmp_path / "b.yaml")
    code, err = plan(capsys, tmp_path / "a.yaml")
    assert code == 2 and err == [f"error: {tmp_path / 'a.yaml'}: cannot read: Too many levels of symbolic links"]


@pytest.mark.parametrize("entry", [5, "a10g-spot", ["amiType"], None])
def test_a_lock_whose_node_group_entry_is_not_an_object(tmp_path, capsys, entry):
    lock = json.loads((STACKS / "Pulumi.dev.lock.json").read_text())
    lock["nodeGroups"]["a10g-spot"] = entry
    path = tmp_path / "lock.json"
    path.write_text(json.dumps(lock))
    code, err = run(capsys, "plan", "--stack", "dev", "--project-dir", str(ROOT), "--as-of", AS_OF, "--lock", str(path))
    assert code == 2 and err == [f"error: --lock {path}: `nodeGroups.a10g-spot` must be an object (the node group's locked "
                                 f"inputs), not {type(entry).__name__}; regenerate it with `gpu-platform lock`"]


# --- what hung, or ran out of memory: the real command, in an interpreter with bounded memory ---

LAUGHS = "".join(f"  gpu-platform:l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n" for i in range(1, 10))
BOMBS = {
    "billion laughs in an unrelated key": DEV.replace("config:\n", "config:\n  gpu-platform:l0: &l0 lol\n" + LAUGHS, 1),
    "billion laughs in the platform's tags": DEV.replace("config:\n", "config:\n  gpu-platform:l0: &l0 lol\n" + LAUGHS, 1)
    .replace("    budget: {monthlyUsd: 4000}", "    budget: {monthlyUsd: 4000}\n    tags: {t: *l9}"),
    "a 512 KiB string aliased 20,000 times": DEV.replace(
        "config:\n", f"config:\n  gpu-platform:s: &s {'x' * 512 * 1024}\n  gpu-platform:t: [{', '.join(['*s'] * 20_000)}]\n", 1),
}
MEMORY = 1024 * 2**20


def _limited() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


@pytest.mark.serial  # a wall-clock bound: run alone (`make test`)
@pytest.mark.parametrize("bomb", BOMBS)
def test_an_alias_bomb_ends_in_exit_2_fast_and_within_bounded_memory(tmp_path, bomb):
    path = stack_text(tmp_path, BOMBS[bomb])
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "gpu_platform.planner", "plan", "--config", str(path), "--project-dir",
                           str(ROOT), "--as-of", AS_OF], capture_output=True, text=True, timeout=60, preexec_fn=_limited)
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.startswith(f"error: {path}:") and "with its aliases expanded the document exceeds 3 MiB" in done.stderr
    assert time.perf_counter() - started < 15  # the interpreter's start included; the issue measured 40 s and more


# --- what slipped through: each refused, naming the field ---

def _set(*path, value):
    def edit(platform):
        node = platform
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return edit


def _adopted(platform):
    platform["cluster"].pop("create")
    platform["cluster"]["existing"] = {"subnetIds": ["subnet-xyz; drop"]}


SLIPS = [
    ("dev", _set("teams", 0, "name", value="kube-research"), "teams[0].name: 'kube-research' is a system namespace"),
    ("dev", _set("nodePools", 0, "labels", value={"bad key!": "x"}), 'nodePools[0].labels["bad key!"]: label key'),
    ("dev", _set("nodePools", 0, "labels", value={"example.com/": "x"}), 'nodePools[0].labels["example.com/"]: label key '
                                                                        "'example.com/' has no name after its prefix"),
    ("dev", _set("nodePools", 0, "labels", value={"a": "v" * 64}), "nodePools[0].labels.a: label value"),
    ("dev", _set("nodePools", 0, "labels", value={"a": "x\ny"}), "nodePools[0].labels.a: label value 'x\\ny'"),
    ("prod", _set("nodePools", 1, "taints", value=[{"key": "workload", "value": "training\n--register-with-taints=evil:"
                                                    "NoSchedule", "effect": "NoSchedule"}]),
     "nodePools[1].taints[0].value: taint value 'training\\n--register-with-taints=evil:NoSchedule'"),
    ("dev", _set("monitoring", "prometheus", "selectorLabels", value={"release": "a\nb"}),
     "monitoring.prometheus.selectorLabels.release: label value"),
    ("dev", _set("monitoring", "prometheus", "grafanaDashboardLabel", value="grafana dashboard"),
     "monitoring.prometheus.grafanaDashboardLabel: label key 'grafana dashboard'"),
    ("dev", _set("tags", value={"aws:owner": "x"}), "tags[\"aws:owner\"]: tag key 'aws:owner': the 'aws:' prefix is reserved"),
    ("dev", _set("tags", value={"owner": "x" * 257}), "tags.owner: tag value"),
    ("prod", _set("cluster", "create", "publicAccessCidrs", value=["not-a-cidr"]),
     "cluster.create.publicAccessCidrs[0]: 'not-a-cidr' is not an IPv4 CIDR block"),
    ("dev", _adopted, "cluster.existing.subnetIds[0]: 'subnet-xyz; drop' is not a subnet id"),
    ("dev", _set("cluster", "create", "vpc", "zones", value=["us-east-1a", "us-east-1b", "eu-west-1c"]),
     "cluster.create.vpc.zones[2]: 'eu-west-1c' is a zone of eu-west-1, not of the stack's region us-east-1"),
    ("dev", _set("nodePools", 0, "minSize", value=False), "nodePools[0].minSize: must be a number, not false"),
    ("dev", _set("nodePools", 0, "efa", value="yes"), "nodePools[0].efa: must be true or false, not 'yes'"),
    ("dev", _set("gpuOperator", "upgradePolicy", value={"maxUnavailable": "all"}),
     "gpuOperator.upgradePolicy.maxUnavailable: must be a node count"),
    ("dev", _set("gpuOperator", "upgradePolicy", value={"drain": {"podSelector": "app=a b"}}),
     "gpuOperator.upgradePolicy.drain.podSelector:"),
    ("dev", _set("cluster", "create", "systemNodes", "instanceTypes", value=["m6i.large; reboot"]),
     "cluster.create.systemNodes.instanceTypes[0]: 'm6i.large; reboot' is not an EC2 instance type"),
    # storage AWS and Kubernetes refuse
    ("prod", _set("datasets", "fsxLustre", "dataRepository", "s3Path", value="s3://gpu..x/training"),
     "datasets.fsxLustre.dataRepository.s3Path: S3 bucket name 'gpu..x' holds two adjacent periods"),
    ("prod", _set("datasets", "fsxLustre", "dataRepository", "s3Path", value="s3://10.0.0.1/training"),
     "datasets.fsxLustre.dataRepository.s3Path: S3 bucket name '10.0.0.1' is formatted as an IP address"),
    ("prod", _set("datasets", "fsxLustre", "dataRepository", "s3Path", value="s3://data--x-s3/training"),
     "datasets.fsxLustre.dataRepository.s3Path: S3 bucket name 'data--x-s3' uses the suffix '--x-s3'"),
    ("prod", _set("datasets", "fsxLustre", "dataRepository", "fileSystemPath", value="/" + "d" * 4090),
     "datasets.fsxLustre.dataRepository.fileSystemPath: the link of team 'research': file system path"),
    ("prod", _set("datasets", "fsxLustre", "dataRepository", "s3Path", value="s3://gpu-prod-datasets/" + "k" * 4325),
     "datasets.fsxLustre.dataRepository.s3Path: the link of team 'research': data repository path"),
    ("prod", _set("datasets", "fsxLustre", "claimSize", value="0"),
     "datasets.fsxLustre.claimSize: '0': a claim's storage request must be above zero"),
    ("prod", _set("datasets", "fsxLustre", "claimSize", value=0),
     "datasets.fsxLustre.claimSize: '0': a claim's storage request must be above zero"),
    ("dev", _set("modelCache", "pvcSize", value="0Gi"), "modelCache.pvcSize: '0Gi': a claim's storage request"),
    # a number written as text
    ("dev", _set("nodePools", 0, "maxSize", value="4"), "nodePools[0].maxSize: must be a number, not the text '4'"),
    ("dev", _set("nodePools", 0, "sharing", "replicas", value="4"), "nodePools[0].sharing.replicas: must be a number"),
    ("dev", _set("teams", 0, "quota", "gpus", value="8"), "teams[0].quota.gpus: must be a number, not the text '8'"),
    ("dev", _set("budget", "monthlyUsd", value="4000"), "budget.monthlyUsd: must be a number, not the text '4000'"),
    ("prod", _set("nodePools", 0, "sharing", "layout", value={"3g.40gb": "1", "2g.20gb": 1, "1g.10gb": 2}),
     "nodePools[0].sharing.layout: ['3g.40gb'] must be a number, not the text '1'"),
]


@pytest.mark.parametrize("stack, edit, words", SLIPS, ids=[s[2].split(":")[0] for s in SLIPS])
def test_an_invalid_value_is_refused_naming_the_field(tmp_path, capsys, stack, edit, words):
    platform = stack_platform(stack)
    edit(platform)
    path = write_stack(tmp_path / "Pulumi.bad.yaml", platform)
    code, err = plan(capsys, path)
    assert code == 2 and any(line.startswith(f"error: {path}: ") and words in line for line in err), err


@pytest.mark.parametrize("region, words", [
    (["us-east-1"], "`aws:region`: must be a region name such as us-east-1, not a list"),
    ("", "`aws:region`: '' is not an AWS region name"),
    ("us-east-1; rm -rf /", "`aws:region`: 'us-east-1; rm -rf /' is not an AWS region name"),
])
def test_a_region_that_is_not_one_is_refused(tmp_path, capsys, region, words):
    path = write_stack(tmp_path / "Pulumi.bad.yaml", stack_platform("dev"), region=region)
    code, err = plan(capsys, path)
    assert code == 2 and err == [f"error: {path}: {words}" + (" such as us-east-1 or eu-central-1" if region != ["us-east-1"]
                                                               else "")]


# --- valid look-alikes: planned ---

@pytest.mark.parametrize("edit", [
    _set("teams", 0, "name", value="r" * 50),  # a namespace takes 63
    _set("nodePools", 0, "name", value="p" * 45),  # gpu-dev-<pool> is a 53-character node group name; EKS takes 63
    _set("teams", 0, "quota", "memory", value=128e9),  # `memory: 128e9`, a Kubernetes quantity in exponent form
    _set("teams", 0, "name", value="r" * 63),  # the longest namespace
    lambda p: p["nodePools"][0].update(name="p" * (62 - len(p["cluster"]["name"]))),  # <cluster>-<pool>: EKS's 63
], ids=["team-of-50", "pool-of-45", "memory-128e9", "team-of-63", "pool-at-the-node-group-limit"])
def test_a_valid_look_alike_is_planned(tmp_path, capsys, edit):
    platform = without_services(stack_platform("dev"))  # a renamed pool would leave its service pointing nowhere
    edit(platform)
    path = write_stack(tmp_path / "Pulumi.look-alike.yaml", platform)  # no lock: the dev lock would refuse a renamed pool
    code, err = plan(capsys, path)
    assert code == 0, err


@pytest.mark.parametrize("edit, words", [
    (_set("teams", 0, "name", value="r" * 64), "teams[0].name: 'rrrrrrrrrrrrrrrrrrrr'... has 64 characters; a DNS-1123 label"),
    (lambda p: p["nodePools"][0].update(name="p" * (63 - len(p["cluster"]["name"]))),
     "nodePools[0].name: cluster name + '-' + pool name must fit 63 characters"),
], ids=["team-of-64", "pool-past-the-node-group-limit"])
def test_a_name_past_its_real_limit_is_refused(tmp_path, capsys, edit, words):
    platform = stack_platform("dev")
    edit(platform)
    path = write_stack(tmp_path / "Pulumi.long.yaml", platform)
    code, err = plan(capsys, path)
    assert code == 2 and any(line.startswith(f"error: {path}: ") and words in line for line in err), err


def test_a_quantity_in_exponent_form_reaches_the_quota_as_its_value(tmp_path, capsys):
    platform = stack_platform("dev")
    platform["teams"][0]["quota"]["memory"] = "128e9"
    path = write_stack(tmp_path / "Pulumi.look-alike.yaml", platform)
    assert plan(capsys, path, "--json", str(tmp_path / "plan.json"))[0] == 0
    quotas = [r for r in json.loads((tmp_path / "plan.json").read_text())["resources"]
              if r["type"] == "kubernetes:core/v1:ResourceQuota" and r["inputs"]["metadata"]["namespace"] == "research"]
    assert quantity_fraction(quotas[0]["inputs"]["spec"]["hard"]["requests.memory"]) == 128 * 10**9


# --- the other files the commands read ---

@pytest.mark.parametrize("text, words", [
    (b'{"all": "mandatory", "x": 1e999}', "1e999 is not a finite number"),
    (b'{"all": "mandat\xe9ory"}', ":1:16: not UTF-8 text (byte 0xe9)"),
    (b"[" * 100 + b"]" * 100, "nested deeper than 64 levels"),
    (b'{"node-group-replacement-guard": {"lockFile": ["a"]}}', "lockFile"),  # the schema, or the pack without jsonschema
])
def test_a_bad_policy_config(tmp_path, capsys, text, words):
    path = tmp_path / "policy.json"
    path.write_bytes(text)
    code, err = run(capsys, "plan", "--stack", "dev", "--project-dir", str(ROOT), "--as-of", AS_OF, "--policy-config", str(path))
    assert code == 2 and len(err) == 1 and words in err[0], err


def _plan_file(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / name).write_text(text)
    return str(tmp_path / name)


@pytest.mark.parametrize("command", ["diff", "upgrade-check"])
@pytest.mark.parametrize("text, words", [
    ('{"resources": [], "stack": "dev", "n": ' + "9" * 5000 + "}", "does not fit 64 bits (cannot read a plan)"),
    ("[" * 70 + "]" * 70, "nested deeper than 64 levels (cannot read a plan)"),
    ('{"resources": [5], "stack": "dev"}', "not a plan written by `gpu-platform plan --json`: resources[0] must be an object"),
    ('{"resources": [{"urn": "u", "type": "t", "name": "n", "inputs": []}], "stack": "dev"}',
     "resources[0].inputs must be an object"),
])
def test_a_bad_plan_for_diff_and_upgrade_check(tmp_path, capsys, command, text, words):
    head = tmp_path / "head.json"
    head.write_text(json.dumps({"resources": [], "stack": "dev"}))
    code, err = run(capsys, command, _plan_file(tmp_path, "base.json", text), str(head))
    assert code == 2 and len(err) == 1 and err[0].startswith(f"error: {tmp_path / 'base.json'}") and words in err[0], err


def _node_group_launch_template_named(doc: dict, name) -> dict:
    """`doc` (a plan or a preview) with its node groups' launch template name replaced."""
    for r in doc.get("resources") or doc["steps"]:
        if (r.get("type") or (r.get("newState") or {}).get("type")) == "aws:eks/nodeGroup:NodeGroup":
            (r.get("inputs") or r["newState"]["inputs"])["launchTemplate"]["name"] = name
    return doc


@pytest.mark.parametrize("command", ["diff", "upgrade-check", "lock"])
@pytest.mark.parametrize("edit, words", [
    (lambda p: p["resources"][0].update(urn="no-urn"), "resources[0].urn 'no-urn' is not a Pulumi URN"),
    (lambda p: p["resources"][0].update(options={"aliases": 5}), "resources[0].options.aliases must be a list"),
    (lambda p: p["cost"]["totals"].update(monthlyUsdAtMax="a lot"), "`cost` must hold `totals`"),
    (lambda p: _node_group_launch_template_named(p, {"a": 1}), "its node groups, launch templates, NodePools or GPU "
                                                               "Operator values hold a value of the wrong type"),
], ids=["urn", "aliases", "cost", "node-group-inputs"])
def test_a_plan_whose_content_is_not_what_a_plan_holds(tmp_path, capsys, command, edit, words):
    plan = json.loads((ROOT / "tests" / "planner" / "fixtures" / "plans" / "dev.json").read_text())
    edit(plan)
    path = _plan_file(tmp_path, "plan.json", json.dumps(plan))
    argv = ["lock", "--plan", path, "--out", str(tmp_path / "lock.json")] if command == "lock" else [command, path, path]
    code, err = run(capsys, *argv)
    assert code == 2 and len(err) == 1 and "not a plan written by `gpu-platform plan --json`" in err[0] and words in err[0], err


def test_a_bad_plan_for_lock(tmp_path, capsys):
    code, err = run(capsys, "lock", "--plan", _plan_file(tmp_path, "p.json", '{"resources": [{"urn": 1}], "stack": "dev"}'),
                    "--out", str(tmp_path / "lock.json"))
    assert code == 2 and err == [f"error: --plan {tmp_path / 'p.json'}: not a plan written by `gpu-platform plan --json`: "
                                 "resources[0].urn must be a string"]


@pytest.mark.parametrize("digest, words", [
    ({"steps": [5]}, "steps[0] must be an object with a string `urn` and `op`"),
    ({"steps": [{"urn": "u", "op": "update", "newState": {"inputs": "x"}}]}, "steps[0].newState.inputs must be an object"),
    ({"steps": [], "diagnostics": [{"message": 3}]}, "`diagnostics` must be a list of objects with a string `message`"),
])
def test_a_bad_preview_digest(tmp_path, capsys, digest, words):
    path = _plan_file(tmp_path, "preview.json", json.dumps(digest))
    code, err = run(capsys, "check-preview", path)
    assert code == 2 and err == [f"error: {path}: not a `pulumi preview --json` digest: {words}"]


def test_a_preview_whose_node_group_inputs_are_of_the_wrong_type(tmp_path, capsys):
    digest = json.loads((ROOT / "tests" / "planner" / "fixtures" / "preview" / "prod-replace-node-group.json").read_text())
    path = _plan_file(tmp_path, "preview.json", json.dumps(_node_group_launch_template_named(digest, ["a"])))
    code, err = run(capsys, "check-preview", path)
    assert code == 2 and err == [f"error: {path}: not a `pulumi preview --json` digest: its node groups, launch templates, "
                                 "NodePools or GPU Operator values hold a value of the wrong type (unhashable type: 'list')"]


def test_a_preview_on_standard_input_is_read_within_the_limit(tmp_path):
    done = subprocess.run([sys.executable, "-m", "gpu_platform.planner", "check-preview", "-"], input=b"\xff" * 10,
                          capture_output=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.decode().startswith("error: standard input:1:1: not UTF-8 text")


def test_a_bad_mocks_file(tmp_path, capsys):
    path = tmp_path / "mocks.yaml"
    levels = ["b0: &b0 [x, x, x, x, x, x, x, x, x, x]"]
    levels += [f"b{i}: &b{i} [{', '.join([f'*b{i - 1}'] * 10)}]" for i in range(1, 8)]
    path.write_text("\n".join(levels) + "\n")
    code, err = plan(capsys, STACKS / "Pulumi.dev.yaml", "--mocks", str(path))
    assert code == 2 and err[0].startswith(f"error: --mocks {path}:") and "aliases expanded" in err[0]


def test_pulumi_yaml_whose_config_is_not_a_mapping(tmp_path, capsys):
    (tmp_path / "Pulumi.yaml").write_text("name: p\nconfig: [a, b]\n")
    path = write_stack(tmp_path / "Pulumi.dev.yaml", {"x": 1})
    code, err = run(capsys, "plan", "--config", str(path), "--project-dir", str(tmp_path))
    assert code == 2 and err == [f"error: {tmp_path / 'Pulumi.yaml'}: `config:` must be a mapping of config keys to values "
                                 "or declarations"]


def test_the_shipped_stacks_read_unchanged():
    for path in STACKS.glob("Pulumi.*.yaml"):
        from gpu_platform.facts.input_files import read_yaml

        assert read_yaml(path) == yaml.safe_load(path.read_text())
