"""docs/architecture.md names code that exists: every file and folder it writes in backticks, every module a
layer's row says the layer holds, every function, class or constant it names (`pool_rules`,
`GpuNodePool.of(...)`, `typed_args.as_arguments`), and each name it places in a file (`spec/models.py`
`SharingSpec`) defined in that file. A rename the page does not follow fails here with the stale name."""
from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "components" / "gpu_platform"
DOC = REPO / "docs" / "architecture.md"
SPAN = re.compile(r"`([^`\n]+)`")
PYTHON_NAME = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")
# Names the page uses that are not the package's: Python's, Pulumi's, ruff's rule codes, the tests' own, and
# `Component`, which stands for any component.
OUTSIDE = {"Any", "Optional", "Union", "dict", "list", "zip", "pulumi", "pulumi.Output", "pulumi_aws",
           "pulumi_kubernetes", "pulumi_policy", "pulumi.provider.experimental", "InputPropertiesError",
           "B", "F", "UP", "UP007", "UP037", "UP045", "CHECKED_MODULES", "UPDATE_SNAPSHOTS", "gpu_platform",
           "Component", "Component.of"}


def spans() -> list[str]:
    return SPAN.findall(DOC.read_text())


@cache
def sources() -> dict[Path, str]:
    return {p: p.read_text() for p in PACKAGE.rglob("*.py")}


def modules() -> set[str]:
    """Every module's and folder's name in the package (`pool_args`, `decisions`, `upstream`)."""
    found = {p.stem for p in PACKAGE.rglob("*.py")} | {p.name for p in PACKAGE.rglob("*") if p.is_dir()}
    return found - {"__init__", "__pycache__"}


def defines(source: str, name: str) -> bool:
    """`name` is a function, class, attribute, key or assigned name in `source` (imports do not count)."""
    n = re.escape(name)
    return re.search(rf"^\s*(?:async\s+)?(?:def|class)\s+{n}\b|^\s*(?:\w+,\s*)*{n}(?:,\s*\w+)*\s*(?::[^=\n]*)?=|"
                     rf"^\s*{n}\s*:|self\.{n}\s*(?::[^=\n]*)?=|\(\s*{n}\s*,", source, re.M) is not None


def defined(name: str) -> bool:
    """Each part of a dotted name is a module of the package or defined in it."""
    return name in OUTSIDE or all(part in modules() or any(defines(s, part) for s in sources().values())
                                  for part in name.split("."))


def located(path: str) -> bool:
    """A path as the page writes it, from the package, the repository or any folder (a bare file name)."""
    if "<" in path:  # a placeholder (`spec/rules_<capability>.py`): its folder exists
        return located(path[:path.index("<")].rpartition("/")[0] + "/")
    for root in (PACKAGE, PACKAGE.parent, REPO, REPO / "tests"):
        if list(root.glob(path.rstrip("/"))):
            return True
    bare = path.rstrip("/")
    return "/" not in bare and any(root.rglob(bare) for root in (PACKAGE, REPO / "tests"))


def paths() -> list[str]:
    return sorted({s for s in spans() if re.fullmatch(r"[\w.<>*/-]+", s) and (s.endswith((".py", "/", ".toml"))
                                                                           and not s.startswith("."))})


def code_names() -> list[str]:
    """The heads of the spans that are Python: a call's callee, a dotted name, a name with an underscore or
    in CamelCase, a constant (plain lowercase words are as often stack-file fields: checked by layer)."""
    found = set()
    for span in spans():
        head = re.match(r"([A-Za-z_][\w.]*)(\(.*\))?(\.[a-z_]\w*)?$", span)
        if head is None or "/" in span or span.endswith((".py", ".toml")):
            continue
        name = head[1] + (head[3] or "")
        if head[2] or "_" in name or name[0].isupper() or "." in name:
            found.add(name)
    # a camelCase part is the stack file's or a chart's key (`devicePlugin.config`), not Python
    return sorted(n for n in found if not any(re.match(r"[a-z]+[A-Z]", part) for part in n.split(".")))


@pytest.mark.parametrize("path", paths())
def test_each_path_the_page_names_exists(path):
    assert located(path), f"docs/architecture.md names `{path}`, which does not exist"


@pytest.mark.parametrize("name", code_names())
def test_each_name_the_page_writes_as_code_is_the_packages(name):
    assert defined(name), f"docs/architecture.md names `{name}`, which the package does not define"


def placed() -> list[tuple[str, str]]:
    """Pairs the page writes as a file followed by a name in it: "`spec/models.py` `SharingSpec` types it"."""
    pairs = re.findall(r"`((?:[a-z_]+/)+[a-z_]+\.py)` `([A-Za-z_]\w*)", DOC.read_text())
    return sorted(set(pairs))


@pytest.mark.parametrize("path, name", placed())
def test_each_name_placed_in_a_file_is_defined_there(path, name):
    assert defines((PACKAGE / path).read_text(), name), f"`{name}` is not defined in {path}"


def layer_rows() -> list[tuple[str, str]]:
    """The layer table: each layer's folder and what the page says it holds."""
    rows = re.findall(r"^\| \w+ \| `(\w+)/` \| (.*?) \| [^|]* \|$", DOC.read_text(), re.M)
    assert {folder for folder, _ in rows} == {"facts", "spec", "decisions", "render", "resources", "platform",
                                              "policy", "planner"}
    return rows


def modules_in(folder: str) -> set[str]:
    """The modules of a layer's folder (`rules_dra`, `__init__`) and its folders (`upstream`)."""
    here = {p.stem for p in (PACKAGE / folder).glob("*.py")}
    return here | {p.name for p in (PACKAGE / folder).iterdir() if p.is_dir() and p.name != "__pycache__"}


def held(holds: str) -> list[str]:
    """The module names a row writes: plain lowercase names (`pool_args`, `rules*`, `upstream/`, `__init__.py`)."""
    names = [re.sub(r"\.py$", "", s).rstrip("/") for s in SPAN.findall(holds)]
    return [n for n in names if re.fullmatch(r"_*[a-z][a-z0-9_]*_*\*?", n)]


@pytest.mark.parametrize("folder, holds", layer_rows(), ids=[f for f, _ in layer_rows()])
def test_each_module_a_layer_is_said_to_hold_is_there(folder, holds):
    """A plain name in a layer's row is one of its modules (a `*` any of them) or a name one of them defines."""
    here = modules_in(folder)
    stale = [n for n in held(holds) if not (
        any(m == n or (n.endswith("*") and m.startswith(n[:-1])) for m in here)
        or any(defines(s, n) for p, s in sources().items() if PACKAGE / folder in p.parents))]
    assert not stale, f"docs/architecture.md says {folder}/ holds {stale}, which it does not"


# The layers whose every module the page names (the pack's rules and the planner's sections are listed in
# their own registries: policy/__init__.py, planner/sections.py).
LISTED = ("facts", "spec", "decisions", "render", "resources", "platform")


@pytest.mark.parametrize("folder", LISTED)
def test_the_page_names_every_module_of_a_layer(folder):
    holds = dict(layer_rows())[folder]
    named = held(holds)
    unnamed = sorted(m for m in modules_in(folder) - {"__init__"} if not any(
        n == m or (n.endswith("*") and m.startswith(n[:-1])) for n in named))
    assert not unnamed, f"docs/architecture.md's {folder}/ row does not name {unnamed}"
