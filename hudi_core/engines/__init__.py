"""Engines: executors for bulk work. The same pure batch functions run on local threads, worker processes
(Avro and JSON decoding) or Spark executors (`mapInArrow`); :mod:`~hudi_core.engines.engine` picks one from the
command's options, :mod:`~hudi_core.engines.progress` reports finished batches.

Stands just above the bytes layer: imports only :mod:`hudi_core.io` and the shared modules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hudi_core.lazy import lazy_getattr

if TYPE_CHECKING:
    from hudi_core.engines.executor import Executor, LocalExecutor, run_batches

#: The executors import pyarrow; the CLI's option parsing does not (start-up time).
__getattr__ = lazy_getattr(__name__, dict.fromkeys(("Executor", "LocalExecutor", "run_batches"),
                                                   "hudi_core.engines.executor"))

__all__ = ["Executor", "LocalExecutor", "run_batches"]
