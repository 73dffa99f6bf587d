"""Where a field is, in the stack file or a component's Args: a small value type, so a rule builds a path
(`ctx.at / "sharing.layout"`, `.index(0)`, `.key("1g.10gb")`) instead of gluing strings and dots.

`str()` renders it as users write it: names joined by dots, list positions and mapping keys in brackets,
`nodePools[0].sharing.layout["1g.10gb"]`; the root (a component's own arguments) renders empty, so a
component's problem starts at its argument (`sharing.layout`). `.each()` stands for every item of a list
(`nodePools[].reservation`), where a finding is about all pools rather than one.

Kept with the facts, below the stack file's schema, so that what reads no stack-file model (the policy pack,
the cost estimate it shares) names fields the same way.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Union


class _Key(str):
    """A mapping key, rendered quoted in brackets."""


class _Each:
    """Every item of a list, rendered as empty brackets."""

    def __repr__(self) -> str:
        return "EACH"


_EACH = _Each()
Part = Union[str, int, _Key, _Each]


@dataclass(frozen=True)
class FieldPath:
    parts: tuple[Part, ...] = ()

    @classmethod
    def of(cls, dotted: str = "") -> FieldPath:
        """A path of field names, e.g. FieldPath.of("datasets.fsxLustre")."""
        return cls().field(dotted) if dotted else cls()

    def field(self, name: str) -> FieldPath:
        """The field `name` below this one; a dotted name is several fields."""
        return FieldPath(self.parts + tuple(name.split(".")))

    __truediv__ = field

    def index(self, position: int) -> FieldPath:
        return FieldPath(self.parts + (position,))

    def key(self, key: str) -> FieldPath:
        return FieldPath(self.parts + (_Key(key),))

    def each(self) -> FieldPath:
        """Every item of the list at this path (`nodePools[]`)."""
        return FieldPath(self.parts + (_EACH,))

    def renamed(self, name: Callable[[str], str]) -> FieldPath:
        """The same path with each field name passed through `name` (positions and keys stay as they are):
        how a component's problem found under the schema's camelCase names is shown with Python keywords."""
        return FieldPath(tuple(name(p) if type(p) is str else p for p in self.parts))

    def moved(self, old: FieldPath, new: FieldPath) -> FieldPath:
        """This path with its start `old` replaced by `new` (`create.vpc` from `create` to the root: `vpc`);
        unchanged when it does not start with `old`, or when it is `old` itself and `new` the root, which has no
        name to show."""
        n = len(old.parts)
        if self.parts[:n] != old.parts or (not new and len(self.parts) == n):
            return self
        return FieldPath(new.parts + self.parts[n:])

    @classmethod
    def parse(cls, text: str) -> FieldPath:
        """The path `text` renders (the inverse of str()); ValueError when `text` is not one."""
        parts: list[Part] = []
        at = 0
        while at < len(text) and (m := _TOKEN.match(text, at)):
            name, index, key = m.group("name"), m.group("index"), m.group("key")
            parts.append(name if name is not None else int(index) if index is not None
                         else _EACH if key is None else _Key(ast.literal_eval(f'"{key}"')))
            at = m.end()
        path = cls(tuple(parts))
        if str(path) != text:
            raise ValueError(f"not a field path: {text!r}")
        return path

    def __bool__(self) -> bool:
        return bool(self.parts)

    def __str__(self) -> str:
        out = ""
        for part in self.parts:
            if isinstance(part, _Key):
                out += f"[{quoted(part)}]"
            elif isinstance(part, int):
                out += f"[{part}]"
            elif isinstance(part, _Each):
                out += "[]"
            else:
                out += f".{part}" if out else part
        return out


def quoted(key: str) -> str:
    """A mapping key as a path shows it: in double quotes, with what would break the line or the quotes escaped."""
    return '"' + "".join(_ESCAPES.get(c) or (c if c.isprintable() else repr(c)[1:-1]) for c in key) + '"'


_ESCAPES = {'"': '\\"', "\\": "\\\\"}
# One part as str() writes it: a name (after a dot unless first), a position, a quoted key, or `[]`.
_TOKEN = re.compile(r'\.?(?P<name>[^.\[\]]+)|\[(?P<index>\d+)\]|\["(?P<key>(?:[^"\\]|\\.)*)"\]|\[\]')

Problem = tuple[FieldPath, str]  # what every rule yields: (where, what would be valid there)

ROOT = FieldPath()  # a component's own arguments
# The stack file's parts the rules start from, and the stack's region (config beside the platform object).
CLUSTER, CLUSTER_VERSION = FieldPath.of("cluster"), FieldPath.of("cluster.kubernetesVersion")
GPU_OPERATOR, NODE_POOLS, TEAMS = FieldPath.of("gpuOperator"), FieldPath.of("nodePools"), FieldPath.of("teams")
QUEUEING = FieldPath.of("queueing")
REGION = FieldPath.of("aws:region")
