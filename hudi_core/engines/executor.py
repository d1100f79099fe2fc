"""The executor interface for bulk work.

Bulk stages (listing many partitions, decoding many instant files, scanning log headers) are
*pure batch functions*: ``fn(spec: StorageSpec, items: list[str]) -> pyarrow.Table``. They open
their own read-only storage from the picklable :class:`~hudi_core.io.storage.StorageSpec`, so the
same function runs on a local thread pool or inside a Spark task. An executor only decides where
the batches run; it never changes what they compute.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Protocol

from hudi_core.io.storage import StorageSpec

#: Stages with fewer items than this run on the driver instead of Spark (`SparkExecutor.min_items`).
DEFAULT_MIN_ITEMS = 1000
#: Environment variable overriding :data:`DEFAULT_MIN_ITEMS`.
MIN_ITEMS_ENV = "HUDI_INSPECTOR_SPARK_MIN_ITEMS"

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


#: Set to ``0`` to keep CPU-bound stages over local files in one process (:func:`run_cpu_batches`).
PROCESSES_ENV = "HUDI_INSPECTOR_PROCESSES"


def cpu_workers(batches: int) -> int:
    """Processes a CPU-bound local stage of `batches` batches may use: the cores, at most one per batch;
    1 where ``$HUDI_INSPECTOR_PROCESSES`` says ``0`` (or a smaller number caps it)."""
    env = os.environ.get(PROCESSES_ENV, "").strip()
    cores = os.cpu_count() or 1
    limit = int(env) if env.isdigit() else cores
    return max(1, min(limit, cores, batches))


def run_cpu_batches(executor: Executor | None, fn: BatchFn, spec: StorageSpec, items: Sequence[str],
                    batch_size: int, schema: pa.Schema) -> pa.Table:
    """:func:`run_batches` for a CPU-bound batch function (Avro record decoding holds the GIL): where it
    would run inline (local files, see `inline_if_local`), its batches are spread over processes, one
    per core, instead. Same function, same batches, results in item order; an executor (threads,
    Spark) runs it as :func:`run_batches` would. A pool that cannot start or breaks (no `spawn`
    here, a killed worker) falls back to running inline; an error the function raises is raised."""
    batches = _batches(items, batch_size)
    workers = cpu_workers(len(batches)) if executor is None else 1
    if workers < 2:
        return run_batches(executor, fn, spec, items, batch_size, schema)
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        # `spawn`: a fresh interpreter per worker, safe beside the threads of a dashboard server.
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            results = list(pool.map(_call_batch, [(fn, spec, b) for b in batches]))
    except (BrokenProcessPool, OSError):
        return run_batches(None, fn, spec, items, batch_size, schema)
    return _concat(results, schema)


def _call_batch(job: tuple[BatchFn, StorageSpec, list[str]]) -> pa.Table:
    fn, spec, batch = job
    return fn(spec, batch)
