"""The section registry: later features add plan sections without touching the CLI."""
from __future__ import annotations

import json

import pytest

from gpu_platform.planner import sections
from gpu_platform.planner.cli import main
from gpu_platform.planner.sections import Section
from tests.planner.planner_fixtures import FIXTURE_PROGRAM


def _count_section(name="resource_count"):
    return Section(name, "Resource count", lambda ctx: {"n": len(ctx.plan["resources"]), "stack": ctx.stack.stack},
                   lambda d: f"{d['n']} in {d['stack']}", lambda d: f"**{d['n']}**",
                   files=lambda d: {"count.txt": str(d["n"])})


@pytest.fixture
def registered(monkeypatch):
    monkeypatch.setattr("gpu_platform.planner.verdict.evaluate", lambda plan, config_path, **_: [])
    section = sections.register(_count_section())
    yield section
    sections.unregister(section.name)


def _plan(tmp_path, *extra):
    code = main(["plan", "--project-dir", str(FIXTURE_PROGRAM), "--stack", "test",
                 "--json", str(tmp_path / "plan.json"), *extra])
    assert code == 0
    return json.loads((tmp_path / "plan.json").read_text())


def test_section_data_lands_in_the_plan_under_its_name(registered, tmp_path):
    plan = _plan(tmp_path)
    assert plan["resource_count"] == {"n": len(plan["resources"]), "stack": "test"}


def test_section_is_rendered_in_the_text_preview(registered, tmp_path, capsys):
    plan = _plan(tmp_path)
    assert f"Resource count\n{len(plan['resources'])} in test\n" in capsys.readouterr().out


def test_section_is_rendered_in_markdown(registered, tmp_path, capsys):
    plan = _plan(tmp_path, "--format", "markdown")
    assert f"#### Resource count\n\n**{len(plan['resources'])}**" in capsys.readouterr().out


def test_section_files_are_written_with_out(registered, tmp_path):
    plan = _plan(tmp_path, "--out", str(tmp_path / "out"))
    assert (tmp_path / "out" / "count.txt").read_text() == str(len(plan["resources"]))


def test_section_returning_none_is_left_out(monkeypatch, tmp_path):
    monkeypatch.setattr("gpu_platform.planner.verdict.evaluate", lambda plan, config_path, **_: [])
    quiet = sections.register(Section("quiet", "Quiet", lambda ctx: None, str, str))
    try:
        assert "quiet" not in _plan(tmp_path)
    finally:
        sections.unregister(quiet.name)


def test_plan_keys_cannot_be_section_names():
    with pytest.raises(ValueError, match="is a plan key already"):
        sections.register(_count_section("resources"))


def test_two_sections_cannot_share_a_name(registered):
    with pytest.raises(ValueError, match="registered twice"):
        sections.register(_count_section())


def test_sections_keep_their_listed_order_whichever_module_was_imported_first():
    from gpu_platform.planner import capacity_section

    sections.sections()  # every listed module imported
    sections.unregister(capacity_section.NAME)  # re-registered last, as when another module is imported first
    sections.register(capacity_section.SECTION)
    listed = [s.build.__module__ for s in sections.sections() if s.build.__module__ in sections.SECTION_MODULES]
    assert listed == sections.SECTION_MODULES
