"""The component package's schema (provider/): descriptions from where each key is declared.

Pulumi's component provider host infers the schema from the components' annotations, walking each Args
class's bases for keys, and takes each key's description from the docstring under it, but reads only the
source of the class it was handed. Keys a class inherits (the pool keys GpuNodePool and KarpenterNodePool
share, the outputs both clusters share) would have none, or need writing twice. `read_inherited_docstrings`
makes the look-up go on to the base that declares the key, so a docstring is written once, beside the key.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any, Optional

from pulumi.provider import main
from pulumi.provider.experimental import analyzer
from pulumi.provider.experimental.component import ComponentProvider

from gpu_platform.resources.platform_schema import object_types, platform_property

_MARK = "_gpu_platform_reads_bases"


def read_inherited_docstrings() -> None:
    """Have the schema analyzer read an inherited key's docstring from the base class that declares it."""
    original: Callable[[Any, type, str], Optional[str]] = analyzer.Analyzer.get_docstring
    if getattr(original, _MARK, False):
        return

    def get_docstring(self: Any, typ: type, name: str) -> Optional[str]:
        for cls in (typ, *_bases(typ)):
            found = original(self, cls, name)
            if found is not None:
                return found
        return None

    setattr(get_docstring, _MARK, True)
    analyzer.Analyzer.get_docstring = get_docstring  # type: ignore[method-assign]


def _bases(typ: type) -> list[type]:
    """`typ`'s bases, nearest first. A TypedDict's __mro__ is only (itself, dict, object): the classes it was
    declared with are in __orig_bases__."""
    found: list[type] = []
    for base in (*getattr(typ, "__orig_bases__", ()), *typ.__mro__[1:]):
        if isinstance(base, type) and base not in (dict, object) and base not in found:
            found += [base, *(b for b in _bases(base) if b not in found)]
    return found


class PackageProvider(ComponentProvider):
    """The components' provider, its schema inferred from their annotations, with GpuPlatform's `platform`
    argument typed as the stack file's object (resources/platform_schema.py) rather than a map of anything."""

    def __init__(self, components: list[type], name: str, version: str) -> None:
        super().__init__(components, name, version=version)
        schema = json.loads(self.schema or "{}")
        inputs = schema["resources"].get(f"{name}:index:GpuPlatform", {}).get("inputProperties", {})
        if "platform" in inputs:
            inputs["platform"] = platform_property(name, inputs["platform"].get("description", ""))
            schema["types"].update(object_types(name))
        self.schema = json.dumps(schema)


def host(components: list[type], name: str, version: str) -> None:
    """Serve the package (the plugin's entry): what component_provider_host does, with this provider."""
    read_inherited_docstrings()
    main(PackageProvider(components, name, version), sys.argv[1:])
