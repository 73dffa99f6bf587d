"""renovate.json: Renovate's own config validator (from npm, pinned) accepts it; its regex managers find
every pin of the stack files and the catalog's image pins; pins that roll nodes are never opened or merged
without a person (dependency-dashboard approval, a label, no automerge)."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "renovate.json"
# The last Renovate line that runs on Node 20 and 22 (40 and later want 22.13+ or 24).
RENOVATE_VERSION = "39.264.1"
ROLLS_NODES = {"eks-ami-release", "eks-ami-alias", "nvidia-driver", "gpu-operator"}
NPM_OFFLINE = ("ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ETIMEDOUT", "network")


@pytest.fixture(scope="module")
def config() -> dict:
    return json.loads(CONFIG.read_text())


def _cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "gpu-platform" / f"renovate-{RENOVATE_VERSION}"


def _unavailable(why: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"Renovate's config validator is required under CI: {why}")
    pytest.skip(f"{why}; under CI=true this fails instead")


@pytest.fixture(scope="module")
def validator() -> Path:
    """renovate-config-validator from the `renovate` package at RENOVATE_VERSION, installed once into a cache
    folder outside the checkout: into a folder of this process's own, then moved into place whole, so runs
    side by side never see half an install."""
    prefix = _cache_dir()
    validator = Path("node_modules") / ".bin" / "renovate-config-validator"
    if (prefix / validator).exists():
        return prefix / validator
    npm = shutil.which("npm")
    if npm is None or shutil.which("node") is None:
        _unavailable("Node.js and npm are not installed")
    partial = prefix.with_name(f".{prefix.name}.{os.getpid()}")
    partial.mkdir(parents=True, exist_ok=True)
    done = subprocess.run([npm, "install", "--prefix", str(partial), "--no-audit", "--no-fund", "--ignore-scripts",
                           "--loglevel=error", f"renovate@{RENOVATE_VERSION}"],
                          capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        shutil.rmtree(partial, ignore_errors=True)
        if any(word in done.stderr for word in NPM_OFFLINE):
            _unavailable(f"npm cannot reach its registry: {done.stderr[-300:]}")
        pytest.fail(f"npm install renovate@{RENOVATE_VERSION} failed:\n{done.stderr[-3000:]}")
    try:
        partial.rename(prefix)
    except OSError:  # another run moved its install into place first
        shutil.rmtree(partial, ignore_errors=True)
    return prefix / validator


def validate(validator: Path, text: str, where: Path) -> subprocess.CompletedProcess:
    """The validator on `text` as a repository's renovate.json (it reads the file from its working folder)."""
    where.mkdir(parents=True, exist_ok=True)
    (where / "renovate.json").write_text(text)
    env = {**os.environ, "RENOVATE_CONFIG_FILE": "", "LOG_LEVEL": "info"}
    return subprocess.run([str(validator), "--strict"], cwd=where, capture_output=True, text=True, timeout=600,
                          env=env)


def test_renovate_s_validator_accepts_the_configuration(validator, tmp_path):
    done = validate(validator, CONFIG.read_text(), tmp_path / "repo")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "Config validated successfully" in done.stdout + done.stderr


def test_renovate_s_validator_refuses_a_broken_configuration(validator, tmp_path):
    """The same validator, on the configuration with a manager missing its datasource: it must say no."""
    broken = json.loads(CONFIG.read_text())
    del broken["customManagers"][0]["datasourceTemplate"]
    done = validate(validator, json.dumps(broken), tmp_path / "repo")
    assert done.returncode != 0, done.stdout[-2000:]
    assert "must contain datasourceTemplate" in done.stdout + done.stderr


def _matches(config: dict, path: Path) -> list[tuple[str, str]]:
    """(depName, currentValue) of every regex manager match in `path` (Renovate's regexes are JavaScript's;
    these use no syntax Python reads differently but the named-group spelling)."""
    name = path.relative_to(ROOT).as_posix()
    text = path.read_text()
    found = []
    for manager in config["customManagers"]:
        if not any(re.search(p, name) for p in manager["fileMatch"]):
            continue
        for pattern in manager["matchStrings"]:
            for m in re.finditer(pattern.replace("(?<", "(?P<"), text):
                found.append((m.groupdict().get("depName") or manager["depNameTemplate"], m["currentValue"]))
    return found


def _stack_pins(value, key: str = "") -> list[str]:
    """Every pinned version in a stack file's platform: chart versions, add-on versions, AMI releases and
    aliases, the operator's driver."""
    if isinstance(value, dict):
        if key == "driver" and value.get("source") == "operator":
            return [str(value["version"])]
        if key == "addons":
            return [str(v) for v in value.values()]
        return [pin for k, v in value.items() for pin in _stack_pins(v, k)]
    if isinstance(value, list):
        return [pin for item in value for pin in _stack_pins(item, key)]
    if key in ("chartVersion", "addonVersion", "ebsCsiAddonVersion", "releaseVersion", "alias"):
        return [str(value)]
    return []


@pytest.mark.parametrize("stack", sorted(p.name for p in (ROOT / "stacks").glob("Pulumi.*.yaml")
                                         if not p.name.endswith(".lock.json")))
def test_the_managers_find_every_pin_of_each_stack_file(config, stack):
    path = ROOT / "stacks" / stack
    platform = yaml.safe_load(path.read_text())["config"]["gpu-platform:platform"]
    pins = sorted(_stack_pins(platform))
    assert pins, "every example stack pins something"
    found = [value for _, value in _matches(config, path)]
    # An AMI release pins <kubernetes patch>-<date>; the managers track the date (or the alias's v<date>).
    expected = sorted(p.split("-")[-1] if re.fullmatch(r"\d+\.\d+\.\d+-\d{8}", p) else p.split("@")[-1]
                      for p in pins)
    assert sorted(found) == expected


def test_the_managers_find_the_catalog_s_image_pins(config):
    from gpu_platform.facts import catalog

    found = _matches(config, ROOT / "components" / "gpu_platform" / "facts" / "catalog.py")
    assert sorted(v for d, v in found if d == "cluster-autoscaler-image") == sorted(
        catalog.CLUSTER_AUTOSCALER_IMAGE_TAGS.values())
    image, tag = catalog.DATASETS_SETUP_IMAGE.rsplit(":", 1)
    assert (image, tag) in found


def test_pins_that_roll_nodes_wait_for_a_person(config):
    assert config["automerge"] is False
    rules = [r for r in config["packageRules"] if ROLLS_NODES <= set(r.get("matchDepNames", ()))]
    assert len(rules) == 1
    (rule,) = rules
    assert rule["dependencyDashboardApproval"] is True and rule["automerge"] is False
    assert "rolls-nodes" in rule["labels"] and "gpu-platform lock --stack" in " ".join(rule["prBodyNotes"])
    assert not any(r.get("automerge") for r in config["packageRules"])


def test_every_node_rolling_dependency_has_a_manager(config):
    names = {m.get("depNameTemplate") for m in config["customManagers"]}
    assert ROLLS_NODES <= names
