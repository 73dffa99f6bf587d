"""The input contract under random mutation of the example stacks (hypothesis, a fixed seed, a bounded number
of examples): every mutated stack file is planned (exit 0, or 1 for a mandatory policy violation) or refused
with exit 2, one line per problem naming the file and the field (or the line and column of the text); never
exit 3, never a traceback; reading and validating it stays within a time and a memory bound, and so does
the whole command.

The mutations are what people and tools get wrong: a value replaced by one of another type or an absurd one
(huge, negative, empty, multi-line, shell syntax, deep), a field deleted, misspelt or added, a list item
repeated (written as a YAML alias), the region changed; and, on the text, bytes inserted, lines dropped,
repeated or re-indented.
"""
from __future__ import annotations

import contextlib
import datetime
import io
import re
import time
import tracemalloc
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from gpu_platform.facts.input_files import InputError, parse_yaml
from gpu_platform.planner import project as projects
from gpu_platform.planner import stackfile
from gpu_platform.planner.cli import main
from gpu_platform.planner.errors import PlannerError
from tests.support.stacks import AS_OF, ROOT, STACKS

EXAMPLES = tuple(sorted(p.name.split(".")[1] for p in STACKS.glob("Pulumi.*.yaml")))  # every example stack
TEXTS = {name: (STACKS / f"Pulumi.{name}.yaml").read_text() for name in EXAMPLES}
READ_SECONDS, READ_BYTES = 2.0, 64 * 2**20  # reading and validating one stack file
RUN_SECONDS = 30.0  # the whole command, the program's run included
_KEY = r'\["(?:\\.|[^"\\])*"\]'  # a mapping key as a path shows it: ["..."], escapes inside
FIELD = rf"(`[^`]+`|[a-z][\w-]*:[A-Za-z][\w-]*|({_KEY}|[A-Za-z]\w*)(\[\d+\]|\.[\w-]+|{_KEY})*)"
CONTRACT = settings(max_examples=30, deadline=None, database=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

ODD = st.sampled_from([
    True, False, None, 0, -1, 2**31, 2**63, -(2**63) - 1, 10**40, 0.5, 1e308, float("inf"), float("nan"), "", " ", "-",
    "x" * 300, "a\nb", "training\n--register-with-taints=evil:NoSchedule", "us-east-1; rm -rf /", "$(reboot)", "`id`",
    "kube-system", "default", "Ünïcødé", "\u202eevil", "a/b/c", "1e3", "128e9", "-5", "100%", "0%", "25%", "1Ti", "NaN",
    [], {}, [[[[[]]]]], {"a": {"b": {"c": {}}}}, ["x"] * 50, {"secure": "v1:abc"},
])
VALUES = st.one_of(ODD, st.integers(), st.floats(), st.text(max_size=70), st.lists(st.text(max_size=8), max_size=4),
                   st.dictionaries(st.text(max_size=12), st.one_of(st.text(max_size=12), st.integers()), max_size=3))
REGIONS = st.one_of(st.sampled_from(["us-east-1", "eu-west-1", "ap-southeast-4", "us-gov-west-1", "", "us-east-1a",
                                     "US-EAST-1", ["us-east-1"], 1, None]), st.text(max_size=20))


def _paths(node: Any, at: tuple = ()) -> list[tuple]:
    found = [at] if at else []
    items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in items:
        found += _paths(child, (*at, key))
    return found


def _parent(root: Any, path: tuple) -> Any:
    for key in path[:-1]:
        root = root[key]
    return root


@st.composite
def mutated_stack(draw) -> tuple[str, dict]:
    """An example stack's config with one to three mutations of its platform object, maybe of its region."""
    name = draw(st.sampled_from(EXAMPLES))
    doc = yaml.safe_load(TEXTS[name])
    platform = doc["config"]["gpu-platform:platform"]
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(_paths(platform)))
        parent, key = _parent(platform, path), path[-1]
        how = draw(st.sampled_from(["replace", "replace", "delete", "misspell", "add", "repeat"]))
        if how == "replace":
            parent[key] = draw(VALUES)
        elif how == "delete":
            del parent[key]
        elif how == "misspell" and isinstance(key, str):
            parent[draw(st.sampled_from([key[:-1], key + "s", key.lower(), key.upper(), f"{key} "]))] = parent.pop(key)
        elif how == "add" and isinstance(parent, dict):
            parent[draw(st.text(min_size=1, max_size=12))] = draw(VALUES)
        elif how == "repeat" and isinstance(parent, list):
            parent.append(parent[key])  # the same object twice: written as an anchor and an alias
    if draw(st.booleans()):
        doc["config"]["aws:region"] = draw(REGIONS)
    return name, doc


@st.composite
def mutated_text(draw) -> bytes:
    """An example stack's bytes with one to three edits of the text."""
    data = TEXTS[draw(st.sampled_from(EXAMPLES))].encode()
    for _ in range(draw(st.integers(1, 3))):
        lines = data.split(b"\n")
        i = draw(st.integers(0, len(lines) - 1))
        how = draw(st.sampled_from(["insert", "drop", "repeat", "indent", "splice"]))
        if how == "insert":
            at = draw(st.integers(0, len(data)))
            data = data[:at] + draw(st.one_of(st.binary(min_size=1, max_size=6), st.sampled_from(
                [b"&a ", b"*a", b"{", b"[", b": ", b"\t", b"#", b"\xe9", b"\xff\xfe", b"!!binary ", b"---\n"]))) + data[at:]
        elif how == "drop":
            del lines[i]
        elif how == "repeat":
            lines.insert(i, lines[i])
        elif how == "indent":
            lines[i] = b" " * draw(st.integers(0, 9)) + lines[i].lstrip(b" ")
        elif how == "splice":
            lines[i] = lines[i][:draw(st.integers(0, len(lines[i])))] + draw(st.sampled_from(
                [b"", b'"', b"'", b"\\", b" # x", b": [1, 2", b" 99999999999999999999999", b" 1e999", b" .nan"]))
        if how != "insert":
            data = b"\n".join(lines)
    return data


def _read_and_validate(path: Path) -> None:
    """What the planner does with a stack file before the program runs, raising only for bad input."""
    project = projects.find(ROOT, path)
    with contextlib.suppress(PlannerError, InputError):
        projects.prevalidate(project, stackfile.load_stack(project, path=path), datetime.date.fromisoformat(AS_OF))


def assert_contract(path: Path, *, text_intact: bool) -> None:
    tracemalloc.start()
    started = time.perf_counter()
    try:
        _read_and_validate(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert time.perf_counter() - started < READ_SECONDS * 5 and peak < READ_BYTES  # tracemalloc slows the reading
    started = time.perf_counter()
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["plan", "--config", str(path), "--project-dir", str(ROOT), "--as-of", AS_OF])
    assert time.perf_counter() - started < RUN_SECONDS
    lines = err.getvalue().splitlines()
    assert code in (0, 1, 2), f"exit {code}: {err.getvalue()}"
    assert "Traceback" not in err.getvalue() + out.getvalue()
    if code != 2:
        return
    problems = [line for line in lines if line.startswith("error: ")]
    assert problems and all(re.match(rf"error: {re.escape(str(path))}(:\d+:\d+)?: \S", line) for line in problems), lines
    if text_intact:  # the YAML is well formed: at least one line names the field to edit
        assert any(re.match(rf"error: {re.escape(str(path))}: {FIELD}: ", line) for line in problems), lines


@seed(22)
@CONTRACT
@given(mutated_stack())
def test_a_mutated_stack_is_planned_or_refused_naming_the_field(tmp_path_factory, example):
    name, doc = example
    path = tmp_path_factory.mktemp("mutated") / f"Pulumi.{name}-mutated.yaml"
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    path.write_text(text)
    assert_contract(path, text_intact=_readable(text))


@seed(22)
@CONTRACT
@given(mutated_text())
def test_a_mutated_stack_text_is_planned_or_refused_naming_where(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("mutated") / "Pulumi.text-mutated.yaml"
    path.write_bytes(data)
    assert_contract(path, text_intact=False)


def _readable(text: str) -> bool:
    """Whether the reader takes the dumped text: if not (a number past 64 bits, NaN), it names the line and
    column rather than a field."""
    try:
        parse_yaml(text, "mutated")
    except InputError:
        return False
    return True

