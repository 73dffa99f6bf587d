"""What `pip install` puts on a user's machine: one top-level import package, `gpu_platform`, with its data,
its license, its type information (PEP 561) and one version; and the API reference built from its docstrings."""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from email.message import Message
from email.parser import HeaderParser
from pathlib import Path

import pytest
import yaml

from tests.support.installed import build_wheel

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "components" / "gpu_platform"


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> zipfile.ZipFile:
    return zipfile.ZipFile(build_wheel(tmp_path_factory.mktemp("wheel")))


@pytest.fixture(scope="module")
def metadata(wheel) -> Message:
    (name,) = [n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")]
    return HeaderParser().parsestr(wheel.read(name).decode())


def test_the_wheel_installs_one_import_package(wheel):
    tops = {name.split("/")[0] for name in wheel.namelist()}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"gpu_platform"}


def test_the_wheel_carries_the_command(wheel):
    (entry_points,) = [n for n in wheel.namelist() if n.endswith(".dist-info/entry_points.txt")]
    assert "gpu-platform = gpu_platform.planner.cli:main" in wheel.read(entry_points).decode()


def test_the_wheel_carries_the_upstream_files_and_the_plan_schema(wheel):
    names = set(wheel.namelist())
    source = ROOT / "components"
    data = [p for p in (source / "gpu_platform" / "facts" / "upstream").rglob("*") if p.is_file()]
    data.append(source / "gpu_platform" / "planner" / "plan.schema.json")
    assert {p.relative_to(source).as_posix() for p in data} <= names


def test_the_wheel_carries_every_module(wheel):
    source = ROOT / "components"
    modules = {p.relative_to(source).as_posix() for p in (source / "gpu_platform").rglob("*.py")}
    assert modules <= set(wheel.namelist())


def test_the_wheel_carries_the_license_file(wheel):
    (license_file,) = [n for n in wheel.namelist() if n.endswith(".dist-info/licenses/LICENSE")]
    assert wheel.read(license_file) == (ROOT / "LICENSE").read_bytes()


def test_the_license_is_apache_2_in_the_metadata_and_the_file(metadata):
    assert metadata["License-Expression"] == "Apache-2.0"
    assert metadata.get_all("License-File") == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert text.split()[:4] == ["Apache", "License", "Version", "2.0,"]
    assert "END OF TERMS AND CONDITIONS" in text


def test_the_wheel_says_the_package_is_typed(wheel):
    """PEP 561: type checkers read gpu_platform's annotations only when the marker is installed beside it."""
    assert "gpu_platform/py.typed" in wheel.namelist()


def test_one_version_for_the_package_the_wheel_and_the_policy_pack(metadata):
    import gpu_platform

    pack = yaml.safe_load((ROOT / "policies" / "PulumiPolicy.yaml").read_text())
    assert gpu_platform.__version__ == metadata["Version"] == str(pack["version"]), (
        "the version lives in pyproject.toml: reinstall (make) after changing it, and set the same "
        "`version` in policies/PulumiPolicy.yaml")


def test_the_version_says_unknown_when_the_package_is_not_installed(tmp_path):
    """Imported from a bare source tree, with no site-packages and so no installed metadata, it still imports."""
    (tmp_path / "gpu_platform").mkdir()
    shutil.copy(PACKAGE / "__init__.py", tmp_path / "gpu_platform")
    code = f"import sys; sys.path.insert(0, {str(tmp_path)!r}); import gpu_platform; print(gpu_platform.__version__)"
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout.strip()) == (0, "0+unknown"), done.stderr


# pdoc cannot resolve the forward reference inside pulumi's own `Input` alias (`Output[T]`) from our
# modules, so it prints those annotations as written (`pulumi.Input[str]`, or expanded, as in a TypedDict:
# `Union[str, Awaitable[str], ForwardRef('Output[T]')]`) and says so. Any other warning (an annotation naming
# something undefined, a module it could not import, a docstring it could not render) fails the test.
PULUMI_INPUT_ALIAS = re.compile(r"Warn: Error parsing type annotation .*(\bInput\[|ForwardRef\('Output\[T\]'\)).*"
                                r" Import of (Output|Input|T) failed")


def test_the_api_reference_covers_the_package_and_each_layer(tmp_path):
    """What `make api-docs` runs (without source listings and search index, which only take time)."""
    layers = sorted([p.parent.name for p in PACKAGE.glob("*/__init__.py")]
                    + [p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"])
    assert {"facts", "spec", "decisions", "render", "resources", "platform", "policy", "planner"} <= set(layers)
    modules = ["gpu_platform", r"!gpu_platform\.", *(f"gpu_platform.{layer}" for layer in layers)]
    out = tmp_path / "api"
    done = subprocess.run([sys.executable, "-m", "pdoc", "--no-show-source", "--no-search", "-o", str(out), *modules],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    warnings = [line for line in done.stderr.splitlines()
                if line.startswith("Warn") and not PULUMI_INPUT_ALIAS.match(line)]
    assert not warnings, "\n".join(warnings)

    pages = {p.relative_to(out).as_posix() for p in out.rglob("*.html")}
    assert {"index.html", "gpu_platform.html"} | {f"gpu_platform/{layer}.html" for layer in layers} <= pages
    expected = {page for page in map(_page, PACKAGE.rglob("*.py")) if page}
    assert expected <= pages, f"no page for {sorted(expected - pages)} (__all__ hides the submodules it leaves out)"


def _page(source: Path) -> str | None:
    """The page pdoc writes for a module file; None for a private module (and __main__), which it leaves out."""
    parts = source.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return None if any(part.startswith("_") for part in parts) else "/".join(parts) + ".html"
