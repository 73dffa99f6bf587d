"""Reading the files users hand the tools: every limit of facts/input_files.py, each an InputError naming the
file and what is wrong, fast and within a bounded amount of memory."""
from __future__ import annotations

import codecs
import os
import subprocess
import sys
import textwrap
import time

import pytest

from gpu_platform.facts import input_files
from gpu_platform.facts.input_files import (
    MAX_DEPTH, MAX_FILE_BYTES, InputError, absolute, parse_json, parse_yaml, read_bytes, read_json, read_text,
    read_yaml,
)

# Every read here is held to a wall-clock bound: run alone, not beside other tests (`make test`).
pytestmark = pytest.mark.serial

BOUND_SECONDS = 2.0
BOUND_MEMORY = 512 * 2**20  # the address space a fresh interpreter refusing any bomb below may use


def refused(read, *args) -> str:
    """The message `read(*args)` raises, checked to come within the time bound."""
    started = time.perf_counter()
    with pytest.raises(InputError) as err:
        read(*args)
    assert time.perf_counter() - started < BOUND_SECONDS, f"took {time.perf_counter() - started:.1f}s"
    return str(err.value)


# --- paths and size ---

def test_a_missing_file_a_directory_and_a_symlink_loop_are_named(tmp_path):
    os.symlink(tmp_path / "b", tmp_path / "a")
    os.symlink(tmp_path / "a", tmp_path / "b")
    assert refused(read_text, tmp_path / "none.yaml", "x.yaml") == "x.yaml: no such file"
    assert refused(read_text, tmp_path, "d") == "d: is a directory, not a file"
    assert refused(read_text, tmp_path / "a", "loop").startswith("loop: cannot read: Too many levels of symbolic links")
    assert absolute(tmp_path / "a") == tmp_path / "a"  # no RuntimeError on the loop


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_an_unreadable_file_is_named(tmp_path):
    path = tmp_path / "secret.yaml"
    path.write_text("a: 1\n")
    path.chmod(0)
    assert refused(read_text, path, "s") == "s: cannot read: Permission denied"


def test_a_file_over_the_limit_is_refused_after_reading_one_byte_past_it(tmp_path):
    path = tmp_path / "big.yaml"
    path.write_bytes(b"#" * MAX_FILE_BYTES)
    assert read_bytes(path) == b"#" * MAX_FILE_BYTES
    path.write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    assert refused(read_text, path, "big") == "big: larger than 3 MiB, the limit for this file"


def test_an_endless_file_costs_no_more_than_the_limit():
    assert refused(read_text, "/dev/zero", "zero") == "zero: larger than 3 MiB, the limit for this file"


def test_plans_and_previews_have_the_larger_document_limit(tmp_path):
    path = tmp_path / "plan.json"
    path.write_text("[" + " " * MAX_FILE_BYTES + "]")
    assert read_json(path, "plan", input_files.MAX_DOCUMENT_BYTES) == []
    assert "larger than 3 MiB" in refused(read_json, path, "plan")


# --- encoding ---

@pytest.mark.parametrize("data, message", [
    (b"a: 1\n# caf\xe9\n", "f:2:6: not UTF-8 text (byte 0xe9): save it as UTF-8"),
    (os.urandom(64).replace(b"\n", b"") + b"\xff", "not UTF-8 text"),
    ("a: 1\n".encode("utf-16"), "f: is UTF-16 text (it starts with a UTF-16 byte-order mark): save it as UTF-8"),
    ("a: 1\n".encode("utf-32"), "f: is UTF-32 text (it starts with a UTF-32 byte-order mark): save it as UTF-8"),
])
def test_text_that_is_not_utf8_is_refused_with_where(tmp_path, data, message):
    path = tmp_path / "f.yaml"
    path.write_bytes(data)
    assert message in refused(read_text, path, "f")


def test_a_utf8_byte_order_mark_is_skipped(tmp_path):
    path = tmp_path / "f.yaml"
    path.write_bytes(codecs.BOM_UTF8 + "a: é\n".encode())
    assert read_yaml(path) == {"a": "é"}


def test_a_lone_surrogate_is_not_text():
    assert refused(parse_json, '{"a": "\\ud800"}', "j") == "j: a string holds the lone surrogate \\ud800, which is not text"
    assert "a string holds the lone surrogate \\udfff" in refused(parse_yaml, 'a: "\\udfff"\n', "y")


# --- nesting ---

def test_nesting_is_bounded_in_yaml_and_json():
    ok, deep = MAX_DEPTH, MAX_DEPTH + 1
    assert parse_yaml("[" * ok + "]" * ok, "y") is not None and parse_json("[" * ok + "]" * ok, "j") is not None
    assert refused(parse_yaml, "[" * deep + "]" * deep, "y") == f"y:1:{deep}: nested deeper than {MAX_DEPTH} levels"
    assert refused(parse_json, "[" * deep + "]" * deep, "j") == f"j: nested deeper than {MAX_DEPTH} levels"


def test_nesting_far_past_the_recursion_limit_is_refused_without_recursing():
    assert "nested deeper than" in refused(parse_yaml, "a: " + "[" * 100_000, "y")
    assert "nested deeper than" in refused(parse_yaml, "a: " + "{a: " * 100_000, "y")
    assert "nested deeper than" in refused(parse_json, "[" * 100_000 + "]" * 100_000, "j")
    block = "".join(f"{'  ' * i}k{i}:\n" for i in range(5000))
    assert "nested deeper than" in refused(parse_yaml, block, "y")


# --- aliases ---

def test_anchors_are_free_to_reuse():
    text = "base: &b {instanceTypes: [g5.xlarge], maxSize: 4}\npools: [*b, *b, *b]\nmerged: {<<: *b, maxSize: 8}\n"
    doc = parse_yaml(text, "y")
    assert doc["pools"] == [doc["base"]] * 3 and doc["merged"] == {"instanceTypes": ["g5.xlarge"], "maxSize": 8}


def billion_laughs(levels: int = 9) -> str:
    lines = ["l0: &l0 lol"] + [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, levels + 1)]
    return "\n".join(lines) + "\n"


def test_a_billion_laughs_stops_as_soon_as_its_expansion_passes_the_limit():
    assert refused(parse_yaml, billion_laughs(), "y") == "y:8:10: with its aliases expanded the document exceeds 3 MiB"


def test_a_large_string_aliased_many_times_is_refused():
    text = f"s: &s {'x' * 512 * 1024}\nt: [{', '.join(['*s'] * 20_000)}]\n"
    assert "with its aliases expanded the document exceeds 3 MiB" in refused(parse_yaml, text, "y")


def test_an_alias_to_the_node_that_holds_it_is_refused():
    assert refused(parse_yaml, "tags: &t {self: *t}\n", "y") == ("y:1:17: alias *t refers to the node that contains it "
                                                                   "(the document would never end)")
    assert "found undefined alias" in refused(parse_yaml, "a: *nowhere\n", "y")


# --- numbers, keys, tags ---

@pytest.mark.parametrize("text, value", [("9223372036854775807", 2**63 - 1), ("-9223372036854775808", -2**63),
                                         ("0x7fffffffffffffff", 2**63 - 1), ("1.5e300", 1.5e300)])
def test_numbers_within_64_bits_and_finite_are_read(text, value):
    assert parse_yaml(f"n: {text}\n", "y") == {"n": value} and parse_json(f'{{"n": {text}}}', "j") == {"n": value} \
        if not text.startswith("0x") else parse_yaml(f"n: {text}\n", "y") == {"n": value}


@pytest.mark.parametrize("text, message", [
    ("9223372036854775808", "the integer 9223372036854775808 does not fit 64 bits"),
    ("9" * 5000, "the integer 999999999999... (5000 digits) does not fit 64 bits"),
    ("1e400", "1e400 is not a finite number"),
    (".inf", ".inf is not a finite number"),
    (".nan", ".nan is not a finite number"),
])
def test_numbers_past_64_bits_or_infinite_are_refused_in_yaml(text, message):
    assert message in refused(parse_yaml, f"n: {text}\n", "y")


@pytest.mark.parametrize("text, message", [
    ("9" * 5000, "the integer 999999999999...(5000 digits) does not fit 64 bits"),
    ("-9223372036854775809", "does not fit 64 bits"),
    ("1e400", "1e400 is not a finite number"),
    ("NaN", "NaN is not a finite number (JSON has no infinity or NaN)"),
    ("-Infinity", "-Infinity is not a finite number"),
])
def test_numbers_past_64_bits_or_infinite_are_refused_in_json(text, message):
    assert message in refused(parse_json, f'{{"n": {text}}}', "j")


def test_yaml_is_read_as_yaml_1_2():
    assert parse_yaml("a: on\nb: yes\nc: 2025-01-01\nd: 010\ne: 0o10\n", "y") == {
        "a": "on", "b": "yes", "c": "2025-01-01", "d": 10, "e": 8}


def test_a_key_twice_in_one_mapping_is_refused():
    assert refused(parse_yaml, "maxSize: 4\nminSize: 0\nmaxSize: 40\n", "y") == (
        "y:3:1: YAML syntax error: key 'maxSize' appears twice in this mapping (first on line 1)")


@pytest.mark.parametrize("tag", ["!!binary aGk=", "!!timestamp 2025-01-01", "!!set {a: null}", "!!omap [a: 1]",
                                 "!!python/object:os.system {}"])
def test_only_plain_data_tags(tag):
    assert "could not determine a constructor for the tag" in refused(parse_yaml, f"a: {tag}\n", "y")


def test_syntax_errors_name_the_line_and_column():
    assert refused(parse_yaml, "a: [1, 2\nb: }\n", "y").startswith("y:2:2: YAML syntax error:")
    assert refused(parse_json, '{"a": [1,]}', "j") == "j:1:10: not JSON: Expecting value"


# --- the bound on memory: each bomb refused by a fresh interpreter limited to BOUND_MEMORY ---

BOMBS = {
    "billion laughs": "parse_yaml(LAUGHS, 'y')",
    "a large string aliased 20,000 times": "parse_yaml(f\"s: &s {'x' * 512 * 1024}\\nt: [{', '.join(['*s'] * 20_000)}]\\n\", 'y')",
    "flow nesting of a million levels": "parse_yaml('a: ' + '[' * 1_000_000, 'y')",
    "JSON nesting of a million levels": "parse_json('[' * 1_000_000 + ']' * 1_000_000, 'j')",
    "an endless file": "read_text('/dev/zero', 'zero')",
}


@pytest.mark.parametrize("bomb", BOMBS)
def test_a_bomb_is_refused_within_bounded_memory_and_time(bomb):
    program = textwrap.dedent(f"""
        import resource
        resource.setrlimit(resource.RLIMIT_AS, ({BOUND_MEMORY}, {BOUND_MEMORY}))
        from gpu_platform.facts.input_files import InputError, parse_json, parse_yaml, read_text
        LAUGHS = {billion_laughs()!r}
        try:
            {BOMBS[bomb]}
        except InputError as err:
            print(err)
    """)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert any(words in done.stdout for words in ("exceeds 3 MiB", "nested deeper than", "larger than 3 MiB")), done.stdout
    assert time.perf_counter() - started < 5 * BOUND_SECONDS  # an interpreter's start included


# --- libyaml: the same reader on libyaml's events ---

SAME_EITHER_WAY = [
    "a: on\nb: 0o17\nc: 0x1f\nd: [1, 2.5, true, null, ~]\ne: 2024-01-01\n", "x: &a {k: v}\ny: *a\n",
    "<<: {a: 1}\nb: 2\n", "a: !!str 12\n", "a: 'it''s'\nb: \"\\u263a\\x41\\n\"\n", "a: |\n  x\n   y\nb: >-\n  p\n  q\n",
    "%YAML 1.1\n--- a\n", "", "# only a comment\n", "? complex\n: key\n", "[[[[1]]]]", "- {a: [b, {c: d}]}\n",
]
REFUSED_EITHER_WAY = ["a: b: c\n", "a:\n\t- b\n", "key: [a, b\n", "- a\n-b: c\n", "a: &x [1, *x]\n", "? [a]\n: b\n",
                      "a: !!binary aGk=\n", "\x07", "a: .inf\n", "k: 1\nk: 2\n", "--- a\n--- b\n", "a: *nowhere\n"]


def _read_with(loader, text: str):
    try:
        return "read", input_files._load(loader, text)
    except input_files.yaml.YAMLError:
        return "refused", None


libyaml = pytest.mark.skipif(input_files._Yaml12CLoader is None, reason="PyYAML built without libyaml")


@libyaml
@pytest.mark.parametrize("text", [*SAME_EITHER_WAY, *REFUSED_EITHER_WAY])
def test_libyaml_and_pyyaml_events_read_alike(text):
    assert _read_with(input_files._Yaml12CLoader, text) == _read_with(input_files._Yaml12Loader, text)


@libyaml
def test_every_shipped_stack_file_reads_alike_either_way():
    from tests.support.stacks import STACKS

    for path in sorted(STACKS.glob("Pulumi.*.yaml")):
        text = path.read_text()
        assert input_files._load(input_files._Yaml12CLoader, text) == input_files._load(input_files._Yaml12Loader, text)


def test_what_libyaml_refuses_is_read_again_by_pyyaml_and_judged_as_it_judges():
    # libyaml knows YAML 1.1 and 1.2 only; PyYAML takes any 1.x directive: the file is read as PyYAML reads it
    assert parse_yaml("%YAML 1.3\n--- {a: 1}\n", "f.yaml") == {"a": 1}
    # and a refusal is worded as PyYAML words it (its message and its line and column)
    message = refused(parse_yaml, "a: b: c\n", "f.yaml")
    assert message.startswith("f.yaml:1:5: YAML syntax error: mapping values are not allowed here"), message
