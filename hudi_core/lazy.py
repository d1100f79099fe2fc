"""Names a package exports but imports on first use (PEP 562): `import hudi_core` and the CLI's
start-up must not pay for pyarrow and fsspec."""

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


class LazyModule:
    """A module imported on its first attribute access: `pa = LazyModule("pyarrow")` at the top of a
    module whose commands mostly never touch Arrow (pyarrow's import is 0.1 s of `markers`'
    0.35 s). Attribute reads after the first go straight to the module's namespace."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str) -> Any:
        module = importlib.import_module(self._name)
        self.__dict__.update(vars(module))  # later reads skip this method
        return getattr(module, attr)


def lazy_constants(module_globals: dict[str, Any], builders: Mapping[str, Callable[[], Any]]) -> Callable[[str], Any]:
    """A module `__getattr__` for constants built on first read (Arrow schemas) and then cached in the
    module's namespace. Code inside the module calls the builder itself: a global name lookup in a
    function does not reach a module `__getattr__`."""

    def __getattr__(name: str) -> Any:
        if name not in builders:
            raise AttributeError(f"module {module_globals['__name__']!r} has no attribute {name!r}")
        value = module_globals[name] = builders[name]()
        return value

    return __getattr__


class _PyarrowPandasProbe:
    """A meta-path finder for `pyarrow` only: once pyarrow is loaded, it makes pyarrow's first
    "is this a pandas object?" check with pandas hidden (see :func:`pyarrow_without_pandas`)."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "pyarrow":
            return None
        import importlib.util
        import sys

        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None or "pandas" in sys.modules:
            return spec
        load = spec.loader.exec_module

        def exec_module(module: Any) -> None:
            load(module)
            hide = _HidePandas()
            sys.meta_path.insert(0, hide)
            try:
                module.array([0])  # pyarrow's pandas shim asks here, finds no pandas, and remembers it
            except Exception:  # the probe is an optimisation only
                pass
            finally:
                sys.meta_path.remove(hide)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


class _HidePandas:
    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name == "pandas" or name.startswith("pandas."):
            raise ImportError("pandas is hidden from pyarrow's first check")
        return None


def pyarrow_without_pandas() -> None:
    """Spare the CLI the import of pandas (0.2 s) that pyarrow makes the first time it converts a Python
    list, only to ask whether the list is a pandas object. The CLI never hands pyarrow pandas objects,
    so that first question is answered "no pandas" and pyarrow stops asking; an explicit
    `Table.to_pandas()` still imports pandas (pyarrow retries the import when asked for it). Nothing
    happens when pyarrow or pandas is already loaded (the dashboard, tests)."""
    import sys

    if "pyarrow" in sys.modules or "pandas" in sys.modules:
        return
    if not any(isinstance(f, _PyarrowPandasProbe) for f in sys.meta_path):
        sys.meta_path.insert(0, _PyarrowPandasProbe())
