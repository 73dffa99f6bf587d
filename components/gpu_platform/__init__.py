import importlib.metadata as _metadata

try:  # the version lives in pyproject.toml; an installed package reads it from its metadata
    __version__: str = _metadata.version("gpu-platform")
except _metadata.PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"
