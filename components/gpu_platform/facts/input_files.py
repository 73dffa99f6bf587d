"""Reading the files users hand the tools (stack files, Pulumi.yaml, locks, policy config, mocks, plan and
preview JSON): every read is bounded, and every way a file can be wrong is one `InputError` naming the file
and what is wrong, never a crash, a hang or unbounded memory.

The limits, and where each comes from:
- size: `MAX_FILE_BYTES` (3 MiB) for the files people write. It is the Kubernetes API server's cap on a
  request body (k8s.io/apiserver, server/config.go `MaxRequestBodyBytes`) and SnakeYAML's default
  `codePointLimit`; the shipped stack files are under 6 KiB. Plan and preview JSON are written by tools
  and grow with the stack: `MAX_DOCUMENT_BYTES` (64 MiB), over 100 times the shipped prod plan. A file is
  read at most one byte past its limit, so `/dev/zero` or a huge file costs no more than that.
- nesting: `MAX_DEPTH` (64) levels of mappings and lists. SnakeYAML stops at 50 by default; the deepest
  shipped document (a plan) has 14. Past it, a parser would recurse until Python gives up.
- aliases: a YAML document with every alias expanded may not exceed `MAX_EXPANDED_BYTES` (the size
  limit): what the file means can be no larger than the largest file accepted. PyYAML has no alias limit
  of its own (SnakeYAML limits aliases to 50, the JavaScript `yaml` package to 100, go-yaml v3 uses an
  expansion ratio); counting the expanded size lets a file reuse an anchor freely and stops a "billion
  laughs" bomb or a large string aliased many times while it is read. An alias to the node that holds
  it (an endless document) is refused.
- numbers: integers must fit 64 bits (what Go, and so the Pulumi CLI, Kubernetes and AWS APIs, read);
  floats must be finite (JSON, how Pulumi hands config to a program, has no infinity or NaN).
- encoding: UTF-8 (a UTF-8 byte-order mark is skipped); UTF-16 and UTF-32 files are named as such.
- YAML: read as YAML 1.2 core like the Pulumi CLI (`on`/`yes` stay strings, dates stay text); a key given
  twice in one mapping is refused, as the CLI's YAML library refuses it; only plain data tags.
- paths: a missing file, a directory, a symlink loop or an unreadable file is named as such.
"""
from __future__ import annotations

import codecs
import json
import math
import re
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Optional, Union
from collections.abc import Callable

import yaml

MiB = 1024 * 1024
MAX_FILE_BYTES = 3 * MiB
MAX_DOCUMENT_BYTES = 64 * MiB
MAX_DEPTH = 64
MAX_EXPANDED_BYTES = MAX_FILE_BYTES
INT64 = (-2**63, 2**63 - 1)
_BOMS = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"), (codecs.BOM_UTF16_LE, "UTF-16"),
         (codecs.BOM_UTF16_BE, "UTF-16"))

PathLike = Union[str, Path]


class InputError(ValueError):
    """A file the tools cannot use; the message names the file (and line) and what is wrong."""


def absolute(path: PathLike) -> Path:
    """`path` with symlinks resolved, or just made absolute when they loop (reading it then says so)."""
    try:
        return Path(path).resolve()
    except (OSError, RuntimeError):  # Python < 3.13 raises RuntimeError on a symlink loop
        return Path(path).absolute()


# --- bytes and text ---

def read_bytes(path: PathLike, label: Optional[str] = None, limit: int = MAX_FILE_BYTES) -> bytes:
    """At most `limit` bytes of `path`; InputError when it is missing, unreadable or larger."""
    label = label or str(path)
    try:
        with open(path, "rb") as stream:
            return _bounded(stream, label, limit)
    except FileNotFoundError:
        raise InputError(f"{label}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{label}: is a directory, not a file") from None
    except OSError as exc:
        raise InputError(f"{label}: cannot read: {exc.strerror or exc}") from None


def read_stream(stream: IO[bytes], label: str, limit: int = MAX_FILE_BYTES) -> str:
    """Text from an open binary stream (standard input), bounded and decoded like a file."""
    return decode(_bounded(stream, label, limit), label)


def _bounded(stream: IO[bytes], label: str, limit: int) -> bytes:
    data = stream.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"{label}: larger than {_size(limit)}, the limit for this file")
    return data


def read_text(path: PathLike, label: Optional[str] = None, limit: int = MAX_FILE_BYTES) -> str:
    label = label or str(path)
    return decode(read_bytes(path, label, limit), label)


def decode(data: bytes, label: str) -> str:
    """UTF-8 text; InputError naming the line and column of the first byte that is not UTF-8."""
    if data.startswith(codecs.BOM_UTF8):
        data = data[len(codecs.BOM_UTF8):]
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            raise InputError(f"{label}: is {encoding} text (it starts with a {encoding} byte-order mark): save it as UTF-8")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(f"{label}:{line}:{column}: not UTF-8 text (byte 0x{data[exc.start]:02x}): save it as UTF-8") from None


def _size(limit: int) -> str:
    return f"{limit // MiB} MiB" if limit % MiB == 0 else f"{limit} bytes"


# --- JSON ---

def read_json(path: PathLike, label: Optional[str] = None, limit: int = MAX_FILE_BYTES) -> Any:
    label = label or str(path)
    return parse_json(read_text(path, label, limit), label)


def parse_json(text: str, label: str) -> Any:
    """JSON `text` within the nesting and number limits; InputError with the line and column otherwise."""
    try:
        value = json.loads(text, parse_int=lambda t: _integer(t, label), parse_float=lambda t: _float(t, label),
                           parse_constant=lambda t: _not_finite(t, label))
    except InputError:
        raise
    except RecursionError:
        raise InputError(f"{label}: nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{label}:{exc.lineno}:{exc.colno}: not JSON: {exc.msg}") from None
    check_depth(value, label)
    return value


def check_depth(value: Any, label: str, limit: int = MAX_DEPTH) -> None:
    """InputError when `value` nests mappings and lists deeper than `limit` or holds a string that is not
    text (checked without recursion)."""
    todo = [(value, 1)]
    while todo:
        item, depth = todo.pop()
        if isinstance(item, str):
            _check_text(item, label)
        elif isinstance(item, (dict, list)):
            if depth > limit:
                raise InputError(f"{label}: nested deeper than {limit} levels")
            if isinstance(item, dict):
                todo.extend((key, depth) for key in item)
            todo.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))


_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _check_text(text: str, label: str, mark: Any = None) -> None:
    """A lone UTF-16 surrogate (a `\\ud800` escape) is not text: it cannot be written out or sent anywhere."""
    found = _SURROGATE.search(text)
    if found:
        problem = f"a string holds the lone surrogate \\u{ord(found.group()):04x}, which is not text"
        if mark is not None:
            raise _LimitError(None, None, problem, mark)
        raise InputError(f"{label}: {problem}")


def _integer(text: str, label: str) -> int:
    digits = text.lstrip("+-")
    if len(digits) > 19 or not INT64[0] <= int(text) <= INT64[1]:
        shown = text if len(text) <= 24 else f"{text[:12]}...({len(digits)} digits)"
        raise InputError(f"{label}: the integer {shown} does not fit 64 bits")
    return int(text)


def _float(text: str, label: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        _not_finite(text if len(text) <= 24 else f"{text[:12]}...", label)
    return value


def _not_finite(text: str, label: str) -> float:
    raise InputError(f"{label}: {text} is not a finite number (JSON has no infinity or NaN)")


# --- YAML ---

class _LimitError(yaml.MarkedYAMLError):
    """A limit of this reader, not a YAML syntax error: reported without "YAML syntax error"."""


class _Yaml12(yaml.composer.Composer, yaml.constructor.SafeConstructor, yaml.resolver.Resolver):
    """SafeLoader's composing and constructing with YAML 1.2 core scalars, as the Pulumi CLI reads stack files:
    only true/false are booleans, no timestamps, no sexagesimal or leading-zero-octal numbers; integers within
    64 bits and finite floats; a key once per mapping; aliases and nesting bounded (see the module's limits).
    The events come from PyYAML's scanner and parser (_Yaml12Loader) or libyaml's (_Yaml12CLoader)."""

    def _start(self) -> None:
        yaml.composer.Composer.__init__(self)
        yaml.constructor.SafeConstructor.__init__(self)
        yaml.resolver.Resolver.__init__(self)
        self._depth = 0
        self._expanded = 0
        self._sizes: dict[int, int] = {}  # id(node) -> its size with every alias expanded

    if TYPE_CHECKING:  # the events come from the parser the loader is built on
        def check_event(self, *choices: type[yaml.Event]) -> bool: ...
        def peek_event(self) -> Any: ...
        def get_event(self) -> Any: ...
        def dispose(self) -> None: ...

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.get_event()
            node = self.anchors.get(event.anchor)
            if node is None:
                raise yaml.composer.ComposerError(None, None, f"found undefined alias {event.anchor!r}", event.start_mark)
            if id(node) not in self._sizes:
                raise _LimitError(None, None, f"alias *{event.anchor} refers to the node that contains it (the document "
                                  "would never end)", event.start_mark)
            self._grow(self._sizes[id(node)], event.start_mark)
            return node
        mark = self.peek_event().start_mark
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise _LimitError(None, None, f"nested deeper than {MAX_DEPTH} levels", mark)
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        self._sizes[id(node)] = self._size_of(node, mark)
        return node

    def _size_of(self, node: Any, mark: Any) -> int:
        if isinstance(node, yaml.ScalarNode):
            _check_text(node.value, "", mark)
            size = len(node.value) + 1
            self._grow(size, mark)
            return size
        self._grow(1, mark)  # children were counted as they were composed (aliases by their expanded size)
        children = [n for pair in node.value for n in pair] if isinstance(node, yaml.MappingNode) else node.value
        return 1 + sum(self._sizes[id(child)] for child in children)

    def _grow(self, size: int, mark: Any) -> None:
        self._expanded += size
        if self._expanded > MAX_EXPANDED_BYTES:
            raise _LimitError(None, None, f"with its aliases expanded the document exceeds {_size(MAX_EXPANDED_BYTES)}",
                              mark)

    def construct_mapping(self, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, Any] = {}
        for key_node, _ in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.tag != "tag:yaml.org,2002:merge":
                key = self.construct_object(key_node)
                if isinstance(key, (str, int, float, bool, type(None))) and key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} appears twice in this mapping (first on line {seen[key].line + 1})",
                        key_node.start_mark)
                seen.setdefault(key, key_node.start_mark)
        return super().construct_mapping(node, deep)

    def construct_yaml_int(self, node: Any) -> int:
        text = self.construct_scalar(node)
        digits = text.lstrip("+-")
        if len(digits) > 21:  # 0x/0o forms of 64-bit values are at most 21 characters after the sign
            raise _LimitError(None, None, f"the integer {text[:12]}... ({len(digits)} digits) does not fit 64 bits",
                              node.start_mark)
        value = int(text, 0) if digits[:2] in ("0o", "0x") else int(text, 10)
        if not INT64[0] <= value <= INT64[1]:
            raise _LimitError(None, None, f"the integer {text} does not fit 64 bits", node.start_mark)
        return value

    def construct_yaml_float(self, node: Any) -> float:
        value = super().construct_yaml_float(node)
        if not math.isfinite(value):
            text = self.construct_scalar(node)
            raise _LimitError(
                None, None, f"{text[:24]} is not a finite number (JSON, how Pulumi passes config to a program, has no "
                "infinity or NaN)", node.start_mark)
        return value


_YAML11_ONLY = ("bool", "int", "float", "timestamp")
_Yaml12.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag.rsplit(":", 1)[-1] not in _YAML11_ONLY]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
for _tag, _pattern, _first in (
    ("bool", r"true|True|TRUE|false|False|FALSE", "tTfF"),
    ("int", r"[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+", "-+0123456789"),
    ("float", r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
     "-+.0123456789"),
):
    _Yaml12.add_implicit_resolver(f"tag:yaml.org,2002:{_tag}", re.compile(f"^(?:{_pattern})$"), list(_first))
# Plain data only: binary, sets, timestamps and ordered maps have no JSON form for the program's config.
_Yaml12.yaml_constructors = {
    tag: constructor for tag, constructor in yaml.SafeLoader.yaml_constructors.items()
    if tag is None or tag.rsplit(":", 1)[-1] in ("null", "bool", "int", "float", "str", "seq", "map")
}
_Yaml12.yaml_constructors["tag:yaml.org,2002:int"] = _Yaml12.construct_yaml_int
_Yaml12.yaml_constructors["tag:yaml.org,2002:float"] = _Yaml12.construct_yaml_float


class _Yaml12Loader(yaml.reader.Reader, yaml.scanner.Scanner, yaml.parser.Parser, _Yaml12):
    """The reader on PyYAML's own (pure Python) scanner and parser."""

    def __init__(self, stream: str):
        yaml.reader.Reader.__init__(self, stream)
        yaml.scanner.Scanner.__init__(self)
        yaml.parser.Parser.__init__(self)
        self._start()


# libyaml's scanner and parser (PyYAML's C extension, when built) give the same events several times faster;
# composing and constructing stay the Python code above, so the limits and the scalars are the same.
_CParser: Any = yaml._yaml.CParser if yaml.__with_libyaml__ else None
_Yaml12CLoader: Optional[type[_Yaml12]] = None
if _CParser is not None:
    class _Yaml12OnLibyaml(_Yaml12, _CParser):  # type: ignore[misc]  # CParser is untyped C
        """The reader on libyaml's events: _Yaml12 first in the MRO, so Composer's Python methods compose."""

        def __init__(self, stream: str):
            _CParser.__init__(self, stream)
            self._start()

    _Yaml12CLoader = _Yaml12OnLibyaml


def read_yaml(path: PathLike, label: Optional[str] = None, limit: int = MAX_FILE_BYTES) -> Any:
    label = label or str(path)
    return parse_yaml(read_text(path, label, limit), label)


def parse_yaml(text: str, label: str) -> Any:
    """One YAML document, read as the module describes; InputError with the line and column otherwise."""
    if _Yaml12CLoader is not None:
        try:
            return _load(_Yaml12CLoader, text)
        except yaml.YAMLError:
            pass  # read again below, so a problem is reported (or the text taken) exactly as PyYAML's reader does
    try:
        return _load(_Yaml12Loader, text)
    except _LimitError as exc:
        raise InputError(f"{_where(label, exc)}: {exc.problem}") from None
    except yaml.MarkedYAMLError as exc:
        what = " ".join(str(part) for part in (exc.context, exc.problem) if part)
        raise InputError(f"{_where(label, exc)}: YAML syntax error: {what}") from None
    except yaml.YAMLError as exc:
        raise InputError(f"{label}: YAML error: {exc}") from None


def _load(loader: Callable[[str], _Yaml12], text: str) -> Any:
    """What `yaml.load` does with a Loader class."""
    reading = loader(text)
    try:
        return reading.get_single_data()
    finally:
        reading.dispose()


def _where(label: str, exc: yaml.MarkedYAMLError) -> str:
    mark = exc.problem_mark or exc.context_mark
    return f"{label}:{mark.line + 1}:{mark.column + 1}" if mark else label
