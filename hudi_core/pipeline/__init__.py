"""Executors for bulk work: the same pure batch functions run on threads or on Spark."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hudi_core.lazy import lazy_getattr

if TYPE_CHECKING:
    from hudi_core.pipeline.executor import Executor, LocalExecutor, run_batches

#: The executors import pyarrow; the CLI's option parsing does not (issue 11).
__getattr__ = lazy_getattr(__name__, dict.fromkeys(("Executor", "LocalExecutor", "run_batches"),
                                                   "hudi_core.pipeline.executor"))

__all__ = ["Executor", "LocalExecutor", "run_batches"]
