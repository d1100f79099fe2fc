"""The executor interface for bulk work.

Bulk stages (listing many partitions, decoding many instant files, scanning log headers) are
*pure batch functions*: ``fn(spec: StorageSpec, items: list[str]) -> pyarrow.Table``. They open
their own read-only storage from the picklable :class:`~hudi_core.storage.StorageSpec`, so the
same function runs on a local thread pool or inside a Spark task. An executor only decides where
the batches run; it never changes what they compute.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Protocol

from hudi_core.storage import StorageSpec

if TYPE_CHECKING:  # pyarrow is imported by the batch functions that build tables, not by start-up
    import pyarrow as pa

BatchFn = Callable[[StorageSpec, list[str]], "pa.Table"]


class Executor(Protocol):
    """Runs a batch function over batches of items and concatenates the Arrow results."""

    name: str

    def map_batches(self, fn: BatchFn, spec: StorageSpec, items: Sequence[str], batch_size: int,
                    schema: pa.Schema) -> pa.Table:
        """Apply `fn` to consecutive batches of `items`; the result has `schema`, in item order."""
        ...


def _batches(items: Sequence[str], batch_size: int) -> list[list[str]]:
    size = max(1, batch_size)
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


def _concat(tables: list[pa.Table], schema: pa.Schema) -> pa.Table:
    import pyarrow as pa

    if not tables:
        return schema.empty_table()
    return pa.concat_tables([t.cast(schema) if t.schema != schema else t for t in tables])


class LocalExecutor:
    """Runs batches on a thread pool in this process (I/O bound work: listing, ranged reads)."""

    name = "local"

    def __init__(self, max_workers: int | None = None) -> None:
        self.max_workers = max_workers or min(16, (os.cpu_count() or 2) * 4)

    def map_batches(self, fn: BatchFn, spec: StorageSpec, items: Sequence[str], batch_size: int,
                    schema: pa.Schema) -> pa.Table:
        batches = _batches(items, batch_size)
        if len(batches) <= 1:
            return _concat([fn(spec, b) for b in batches], schema)
        with ThreadPoolExecutor(max_workers=self.max_workers) as pool:
            results = list(pool.map(lambda b: fn(spec, b), batches))
        return _concat(results, schema)


def run_batches(executor: Executor | None, fn: BatchFn, spec: StorageSpec, items: Sequence[str],
                batch_size: int, schema: pa.Schema) -> pa.Table:
    """Run on `executor`, or inline when there is none."""
    if executor is None:
        return _concat([fn(spec, b) for b in _batches(items, batch_size)], schema)
    return executor.map_batches(fn, spec, items, batch_size, schema)
