"""Executors for bulk work: the same pure batch functions run on threads or on Spark."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hudi_core.pipeline.executor import Executor, LocalExecutor, run_batches


def __getattr__(name: str) -> Any:
    """The executor names on first use (they import pyarrow; the CLI's option parsing does not)."""
    if name in ("Executor", "LocalExecutor", "run_batches"):
        value = getattr(importlib.import_module("hudi_core.pipeline.executor"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'hudi_core.pipeline' has no attribute {name!r}")


__all__ = ["Executor", "LocalExecutor", "run_batches"]
