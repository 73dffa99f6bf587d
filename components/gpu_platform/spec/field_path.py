"""Where a field is, in the stack file or a component's Args: a small value type, so a rule builds a path
(`ctx.at / "sharing.layout"`, `.index(0)`, `.key("1g.10gb")`) instead of gluing strings and dots.

`str()` renders it as users write it: names joined by dots, list positions and mapping keys in brackets,
`nodePools[0].sharing.layout["1g.10gb"]`; the root (a component's own arguments) renders empty, so a
component's problem starts at its argument (`sharing.layout`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union


class _Key(str):
    """A mapping key, rendered quoted in brackets."""


Part = Union[str, int, _Key]


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

    def __bool__(self) -> bool:
        return bool(self.parts)

    def __str__(self) -> str:
        out = ""
        for part in self.parts:
            if isinstance(part, _Key):
                out += f"[{quoted(part)}]"
            elif isinstance(part, int):
                out += f"[{part}]"
            else:
                out += f".{part}" if out else part
        return out


def quoted(key: str) -> str:
    """A mapping key as a path shows it: in double quotes, with what would break the line or the quotes escaped."""
    return '"' + "".join(_ESCAPES.get(c) or (c if c.isprintable() else repr(c)[1:-1]) for c in key) + '"'


_ESCAPES = {'"': '\\"', "\\": "\\\\"}

Problem = tuple[FieldPath, str]  # what every rule yields: (where, what would be valid there)

ROOT = FieldPath()  # a component's own arguments
# The stack file's parts the rules start from, and the stack's region (config beside the platform object).
CLUSTER, CLUSTER_VERSION = FieldPath.of("cluster"), FieldPath.of("cluster.kubernetesVersion")
GPU_OPERATOR, NODE_POOLS, TEAMS = FieldPath.of("gpuOperator"), FieldPath.of("nodePools"), FieldPath.of("teams")
REGION = FieldPath.of("aws:region")
