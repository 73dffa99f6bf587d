"""`TypedDict` and `Required` for component Args, as Pulumi's schema inference reads them.

The component provider host (`pulumi.provider.experimental`) finds a TypedDict's optional keys only when
`typing.is_typeddict` accepts the class, which it does not for typing_extensions' own TypedDict before
Python 3.13: every key would be published as required to other languages. Python 3.11 has `Required` in
`typing`, so typing's TypedDict is used there; 3.10 falls back to typing_extensions (Python programs work,
the published schema needs 3.11+).
"""
import sys

if sys.version_info >= (3, 11):
    from typing import NotRequired, Required, TypedDict
else:  # pragma: no cover - the published schema needs 3.11; Python programs run on 3.10 as well
    from typing_extensions import NotRequired, Required, TypedDict

__all__ = ["NotRequired", "Required", "TypedDict"]
