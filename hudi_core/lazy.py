"""Names a package exports but imports on first use (PEP 562): `import hudi_core` and the CLI's
start-up must not pay for pyarrow and fsspec (issue 11)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """A module `__getattr__` that imports `names[name]` (a module path) when `name` is first read and
    caches the value in the package's namespace."""

    def __getattr__(name: str) -> Any:
        if name not in names:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(names[name]), name)
        setattr(importlib.import_module(package), name, value)
        return value

    return __getattr__
