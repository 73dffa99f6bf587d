"""Code cites only documents this repository has: every `*.md` a source file names is a page under docs/ (or
the README or CHANGELOG), and docs/stack-file.md covers the stack file's every top-level field with links
that resolve."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpu_platform.spec.models import PlatformSpec

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CODE = [p for folder in ("components", "policies", "provider") for p in sorted((ROOT / folder).rglob("*.py"))]
CITED = re.compile(r"(?<![\w/.-])(?:docs/)?([A-Za-z0-9_-]+\.md)\b")
ROOT_PAGES = {"README.md", "CHANGELOG.md"}
LINK = re.compile(r"\]\(([a-z0-9-]+\.md)(?:#([a-z0-9-]+))?\)")


def citations(path: Path) -> set[str]:
    return set(CITED.findall(path.read_text()))


def test_the_scan_reads_code_and_finds_citations():
    assert len(CODE) > 100 and citations(ROOT / "components" / "gpu_platform" / "decisions" / "dra.py") == {"dra.md"}


@pytest.mark.parametrize("path", CODE, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_document_code_cites_is_in_the_repository(path):
    missing = {name for name in citations(path) if name not in ROOT_PAGES and not (DOCS / name).is_file()}
    assert not missing, f"{path.relative_to(ROOT)} cites {sorted(missing)}: cite the upstream source or a page under docs/"


def anchors(page: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#+ (.+)$", page.read_text(), re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def test_the_stack_file_page_lists_every_top_level_field():
    text = (DOCS / "stack-file.md").read_text()
    rows = set(re.findall(r"^\| `(\w+)` \|", text, re.M))
    assert rows == {f.alias or name for name, f in PlatformSpec.model_fields.items()}


def test_the_stack_file_pages_links_resolve():
    links = LINK.findall((DOCS / "stack-file.md").read_text())
    assert links
    for page, anchor in links:
        assert (DOCS / page).is_file(), page
        assert not anchor or anchor in anchors(DOCS / page), f"{page}#{anchor}"
