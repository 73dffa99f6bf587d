"""The pack installs light: its requirements pull gpu-platform without extras, which is what the rules import
(gpu_platform.policy, the facts, pulumi and the policy SDK), and neither provider SDK nor the stack-file
model. Its virtualenv is built here from this checkout, measured, and the pack loaded in it; then built again
from a git URL at a release tag, with the requirement line docs/policies.md gives for publishing.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from gpu_platform import policy as gpu_policies
from tests.support.installed import ROOT, fresh_venv, run

pytestmark = pytest.mark.installs

MAX_MB = 120
PROGRAM_ONLY = ("pulumi_aws", "pulumi_kubernetes", "pydantic", "jsonschema")
DOCS_GIT_LINE = re.compile(r"^# (gpu-platform @ git\+https://github\.com/<org>/gpu-platform@v(\S+))$", re.M)

# Loads policies/__main__.py as the Pulumi CLI's policy host would, with the PolicyPack constructor (which
# starts a gRPC server and never returns) replaced by a recorder, and says what the pack holds and which of
# the program's dependencies (its arguments) loading it pulled in.
LOAD_PACK = """
import json, runpy, sys
PROGRAM_ONLY = sys.argv[1:]
import pulumi_policy
calls = []
pulumi_policy.PolicyPack = lambda **kw: calls.append(kw)
runpy.run_path("__main__.py", run_name="__main__")
(pack,) = calls
print(json.dumps({"name": pack["name"], "policies": len(pack["policies"]),
                  "loaded": sorted(m for m in sys.modules if m.split(".")[0] in PROGRAM_ONLY)}))
"""


def pack_folder(where: Path, library_line: str) -> Path:
    """policies/ alone in `where`, its `-e ..` replaced by `library_line`."""
    folder = where / "gpu-platform-pack"
    shutil.copytree(ROOT / "policies", folder, ignore=shutil.ignore_patterns("venv", "__pycache__"))
    requirements = folder / "requirements.txt"
    lines = requirements.read_text().splitlines()
    assert "-e .." in lines, "the pack's requirements install the checkout (without extras) for local runs"
    requirements.write_text("\n".join(library_line if line == "-e .." else line for line in lines) + "\n")
    return folder


def install(folder: Path) -> tuple[Path, float]:
    """The pack's requirements installed into `venv` beside it, as the Pulumi CLI does; bin folder, seconds."""
    start = time.monotonic()
    bin_dir = fresh_venv(folder / "venv", "-r", str(folder / "requirements.txt"))
    return bin_dir, time.monotonic() - start


def size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink()) / 2**20


def load(folder: Path, bin_dir: Path) -> str:
    done = run(bin_dir, "python", "-c", LOAD_PACK, *PROGRAM_ONLY, cwd=folder)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


@pytest.fixture(scope="module")
def from_wheel(wheel, tmp_path_factory):
    folder = pack_folder(tmp_path_factory.mktemp("light-pack"), str(wheel))
    bin_dir, seconds = install(folder)
    return folder, bin_dir, seconds


def test_the_pack_s_virtualenv_is_small(from_wheel, record_property):
    folder, _, seconds = from_wheel
    megabytes = size_mb(folder / "venv")
    record_property("pack_venv_mb", round(megabytes, 1))
    record_property("pack_install_seconds", round(seconds, 1))
    print(f"\nthe pack's virtualenv: {megabytes:.0f} MB, installed in {seconds:.0f} s")
    assert megabytes < MAX_MB, f"the pack's virtualenv is {megabytes:.0f} MB (at most {MAX_MB})"


def test_the_pack_s_virtualenv_holds_no_program_dependency(from_wheel):
    _, bin_dir, _ = from_wheel
    done = run(bin_dir, "python", "-m", "pip", "list", "--format=freeze", cwd=bin_dir)
    installed = {line.split("==")[0].lower().replace("_", "-") for line in done.stdout.splitlines()}
    assert {"gpu-platform", "pulumi", "pulumi-policy"} <= installed
    assert installed.isdisjoint({"pulumi-aws", "pulumi-kubernetes", "pydantic", "jsonschema"}), sorted(installed)


def test_the_pack_loads_in_its_light_virtualenv(from_wheel):
    folder, bin_dir, _ = from_wheel
    expected = f'{{"name": "{gpu_policies.PACK_NAME}", "policies": {len(gpu_policies.POLICIES)}, "loaded": []}}'
    assert load(folder, bin_dir) == expected


@pytest.fixture(scope="module")
def release_repository(tmp_path_factory) -> tuple[Path, str]:
    """A git repository of this checkout's files (committed or not) with the release tag the docs name."""
    import gpu_platform

    repo = tmp_path_factory.mktemp("origin") / "gpu-platform"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                            capture_output=True, check=True, timeout=60).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = ROOT / name
        if source.is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, repo / name)
    env = {**os.environ, "GIT_AUTHOR_NAME": "release", "GIT_AUTHOR_EMAIL": "release@example.com",
           "GIT_COMMITTER_NAME": "release", "GIT_COMMITTER_EMAIL": "release@example.com"}
    tag = f"v{gpu_platform.__version__}"
    for command in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "release"], ["tag", tag]):
        subprocess.run(["git", *command], cwd=repo, env=env, check=True, capture_output=True, timeout=120)
    return repo, tag


def test_the_documented_git_line_installs_the_pack(release_repository, tmp_path):
    repo, tag = release_repository
    docs = (ROOT / "docs" / "policies.md").read_text()
    match = DOCS_GIT_LINE.search(docs)
    assert match, "docs/policies.md gives the pack's requirement line for a git tag"
    line, version = match.groups()
    assert f"v{version}" == tag, "the documented tag is the package's version"
    # file://localhost/...: pip's requirement parser wants a host in a `name @ git+` URL.
    local = line.replace("https://github.com/<org>/gpu-platform", f"file://localhost{repo.as_posix()}")
    folder = pack_folder(tmp_path, local)
    bin_dir, _ = install(folder)
    assert '"loaded": []' in load(folder, bin_dir)
    assert size_mb(folder / "venv") < MAX_MB
