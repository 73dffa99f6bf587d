"""Each argument's documentation in its Args class's `__doc__`, so `help(GpuNodePoolArgs)` lists them.

An Args key is documented by the string under it (what IDEs and the component package's schema read);
Python keeps no such string at run time, so it is read from the class's source once, when the public name
is first used (gpu_platform.__getattr__), never on the planner's path.
"""
import ast
import inspect
import sys
import typing
from functools import cache
from itertools import pairwise
from typing import Any

MARK = "\n\nArguments:\n"


def with_argument_docs(value: Any) -> Any:
    """`value` itself; a TypedDict class gets an "Arguments:" section listing every key it takes (its bases'
    too), whether each is required, and the key's documentation."""
    if not (isinstance(value, type) and typing.is_typeddict(value)) or MARK in (value.__doc__ or ""):
        return value
    docs = _key_docs(value)
    required = value.__required_keys__  # type: ignore[attr-defined]
    lines = [f"    {key}{' (required)' if key in required else ''}: {docs.get(key, '')}".rstrip()
             for key in value.__annotations__]
    value.__doc__ = f"{(value.__doc__ or value.__name__).rstrip()}{MARK}" + "\n".join(lines)
    return value


def _key_docs(kind: type) -> dict[str, str]:
    """key -> the string under it in `kind`'s class body or its TypedDict bases' (a TypedDict keeps no bases
    at run time: they are found by name in its module); empty without source."""
    try:
        tree = _module_tree(inspect.getsourcefile(kind) or "")
    except (OSError, TypeError, SyntaxError):
        return {}
    node = next((n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name == kind.__name__), None)
    if node is None:
        return {}
    found: dict[str, str] = {}
    module = sys.modules.get(kind.__module__)
    for base in node.bases:
        inherited = getattr(module, base.id, None) if isinstance(base, ast.Name) else None
        if isinstance(inherited, type) and inherited is not kind and typing.is_typeddict(inherited):
            found.update(_key_docs(inherited))
    for key, after in pairwise(node.body):
        if (isinstance(key, ast.AnnAssign) and isinstance(key.target, ast.Name) and isinstance(after, ast.Expr)
                and isinstance(after.value, ast.Constant) and isinstance(after.value.value, str)):
            found[key.target.id] = " ".join(after.value.value.split())
    return found


@cache
def _module_tree(path: str) -> ast.Module:
    with open(path, encoding="utf-8") as source:
        return ast.parse(source.read(), path)
