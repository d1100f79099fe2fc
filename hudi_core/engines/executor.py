"""The executor interface for bulk work.

Bulk stages (listing many partitions, decoding many instant files, scanning log headers) are
*pure batch functions*: ``fn(spec: StorageSpec, items: list[str]) -> pyarrow.Table``. They open
their own read-only storage from the picklable :class:`~hudi_core.io.storage.StorageSpec`, so the
same function runs on a local thread pool or inside a Spark task. An executor only decides where
the batches run; it never changes what they compute.
"""

from __future__ import annotations

import contextlib
import functools
import glob
import os
import tempfile
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import CancelledError, Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

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
    return _concat(list(cpu_batch_results(fn, spec, items, batch_size)), schema)


def cpu_batch_results(fn: BatchFn, spec: StorageSpec, items: Sequence[str], batch_size: int) -> Iterator[pa.Table]:
    """Each batch's table of a CPU-bound batch function over local files, in item order, as it arrives from worker
    processes (one per core), so a caller can take one batch's rows and let it go before the next (a million
    listed files need not be one table at once). A pool that cannot start or breaks runs the batches it did not
    return in this process; an error the function raises is raised."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    batches = _batches(items, batch_size)
    done = 0
    try:
        # `spawn`: a fresh interpreter per worker, safe beside the threads of a dashboard server.
        with ProcessPoolExecutor(max_workers=cpu_workers(len(batches)),
                                 mp_context=multiprocessing.get_context("spawn")) as pool:
            for result in pool.map(_call_batch, [(fn, spec, b) for b in batches]):
                yield taken_over(result)
                done += 1
    except (BrokenProcessPool, OSError):
        for batch in batches[done:]:
            yield fn(spec, batch)
    finally:
        remove_unclaimed()


#: Where a worker process leaves a large result for its caller: shared memory (tmpfs), written once and mapped by
#: the caller, instead of pickled through the pool's pipe (a copy into the pickle, the pipe's copies, and one more
#: in the caller, the caller's being on the critical path: about 1.3 s of `doctor`'s first run on a million files).
SHARED_MEMORY_DIR = "/dev/shm"
#: Results smaller than this travel through the pipe.
MAPPED_RESULT_MIN_BYTES = 1 << 20
_MAPPED_PREFIX = "hudi-inspector-result-"


def results_in_shared_memory(fn: Callable[..., pa.Table]) -> Callable[..., pa.Table]:
    """Mark a batch function whose large results a worker hands over in shared memory (:func:`hand_over`). Only
    the stages where it was measured to pay: the active index's rows and the layout-1 archive's rows (`doctor` and
    `timeline --all` on a million instants 1-3 s sooner). A storage listing's batches are not marked: handed over
    so, `duplicates` on a million files took 1 s longer."""
    fn.__dict__["results_in_shared_memory"] = True
    return fn


def _hands_over(fn: Any) -> bool:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return bool(getattr(fn, "results_in_shared_memory", False))


@dataclass(frozen=True)
class MappedResult:
    """A worker's result table left as an Arrow IPC file in shared memory, for the caller to map and delete."""

    path: str


def _call_batch(job: tuple[BatchFn, StorageSpec, list[str]]) -> pa.Table | MappedResult:
    """A batch run in a worker process; a large result of a marked function is handed over in shared memory."""
    fn, spec, batch = job
    table = fn(spec, batch)
    return hand_over(table) if _hands_over(fn) else table


def hand_over(table: pa.Table) -> pa.Table | MappedResult:
    """`table`, or where it is large and shared memory has room for it, the file it was written to (named after
    the caller's process, so that the caller can remove what it never took: :func:`remove_unclaimed`)."""
    if table.nbytes < MAPPED_RESULT_MIN_BYTES or not os.path.isdir(SHARED_MEMORY_DIR):
        return table
    import pyarrow as pa

    path = None
    try:
        stat = os.statvfs(SHARED_MEMORY_DIR)
        if stat.f_bavail * stat.f_frsize < 2 * table.nbytes:  # a small /dev/shm (containers: 64 MB)
            return table
        fd, path = tempfile.mkstemp(prefix=f"{_MAPPED_PREFIX}{os.getppid()}-", suffix=".arrow",
                                    dir=SHARED_MEMORY_DIR)
        with os.fdopen(fd, "wb") as sink, pa.ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
    except OSError:
        if path is not None:
            with contextlib.suppress(OSError):
                os.unlink(path)
        return table
    return MappedResult(path)


def taken_over(result: pa.Table | MappedResult) -> pa.Table:
    """The table a worker returned: a mapped result is read without a copy (its pages stay mapped while the table
    lives) and its file deleted."""
    if not isinstance(result, MappedResult):
        return result
    import pyarrow as pa

    try:
        source = pa.memory_map(result.path)
        try:
            return pa.ipc.open_file(source).read_all()
        finally:
            source.close()
    finally:
        with contextlib.suppress(OSError):
            os.unlink(result.path)


def remove_unclaimed() -> None:
    """Delete the results this process's workers left in shared memory and it never took (a stage given up), and
    those of callers that are gone (a process killed while its workers ran)."""
    for path in glob.glob(os.path.join(SHARED_MEMORY_DIR, f"{_MAPPED_PREFIX}*-*.arrow")):
        owner = os.path.basename(path)[len(_MAPPED_PREFIX):].split("-", 1)[0]
        if not owner.isdigit() or (int(owner) != os.getpid() and _alive(int(owner))):
            continue
        with contextlib.suppress(OSError):
            os.unlink(path)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True


#: How much lower a :class:`WorkerPool` worker's priority is than its caller's (`nice`): measured on the M table
#: (2 cores), `duplicates` took 1.45 s with it, 1.62 s at the caller's priority.
WORKER_NICENESS = 5


def _start_worker(modules: tuple[str, ...], niceness: int) -> None:
    """A pool worker's start: a lower priority than the caller's by `niceness`, pyarrow without its pandas probe
    (0.3 s of a worker's start-up otherwise), then the modules its batch functions live in, imported while the
    caller is still busy with its own work."""
    import contextlib
    import importlib

    from hudi_core.lazy import pyarrow_without_pandas

    if niceness:
        with contextlib.suppress(OSError):
            os.nice(niceness)
    pyarrow_without_pandas()
    for name in modules:
        importlib.import_module(name)


def _started() -> None:
    """A warm-up task: each one submitted while no worker is idle starts one more worker."""


class WorkerPool:
    """Worker processes, one per core, shared by the CPU-bound stages of one operation over local files (header
    scans, body decoding): started at once, so that their start-up and imports overlap the caller's own work
    (building the file-system view), and given each stage's batches as soon as its items are known, the caller
    working on meanwhile. The same batch functions over the same batches as :func:`run_cpu_batches`, results in
    item order; a pool that cannot start or breaks runs its stages inline instead; an error the function raises
    is raised. Use it as a context manager (the workers stop at its end).

    The workers run at a lower priority than the caller (:data:`WORKER_NICENESS`): while the caller works on the
    stage's critical path (the view the scans need), they take the cores it leaves, not its own; the caller, once
    it waits, runs the batches no worker has started (:meth:`PoolStage.result`)."""

    def __init__(self, workers: int, modules: Sequence[str] = (), niceness: int = 0) -> None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        try:
            # `spawn`: a fresh interpreter per worker, safe beside the threads of a dashboard server.
            self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                             initializer=_start_worker, initargs=(tuple(modules), niceness))
            for _ in range(workers):  # a worker starts per task submitted while none is idle: all of them now
                self._pool.submit(_started)
        except OSError:
            self.close()

    @classmethod
    def start(cls, modules: Sequence[str] = ()) -> WorkerPool | None:
        """A pool of one worker per core (:func:`cpu_workers`), or ``None`` where there is one core or
        ``$HUDI_INSPECTOR_PROCESSES`` keeps the work in this process."""
        workers = cpu_workers(1 << 30)
        return cls(workers, modules, WORKER_NICENESS) if workers >= 2 else None

    def submit(self, fn: BatchFn, spec: StorageSpec, items: Sequence[str], batch_size: int,
               schema: pa.Schema) -> PoolStage:
        """Start `fn` over consecutive batches of `items`; :meth:`PoolStage.result` waits for its rows."""
        batches = _batches(items, batch_size)
        futures: list[Future[pa.Table | MappedResult]] | None = None
        if self._pool is not None and batches:
            from concurrent.futures.process import BrokenProcessPool

            try:
                futures = [self._pool.submit(_call_batch, (fn, spec, b)) for b in batches]
            except (BrokenProcessPool, RuntimeError, OSError):
                futures = None
        return PoolStage(fn, spec, batches, schema, futures)

    def close(self) -> None:
        """Stop the workers (a stage not collected yet is dropped)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True, cancel_futures=True)
            remove_unclaimed()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class PoolStage:
    """One stage submitted to a :class:`WorkerPool`."""

    def __init__(self, fn: BatchFn, spec: StorageSpec, batches: list[list[str]], schema: pa.Schema,
                 futures: list[Future[pa.Table | MappedResult]] | None) -> None:
        self.fn, self.spec, self.batches, self.schema, self.futures = fn, spec, batches, schema, futures

    def result(self) -> pa.Table:
        """The stage's rows in item order. The caller, waiting, takes a share: from the last batch back, each one
        no worker has started yet is run here (the workers take them from the first on). Every batch runs inline
        when the pool could not take them."""
        from concurrent.futures.process import BrokenProcessPool

        if self.futures is None:
            return _concat([self.fn(self.spec, b) for b in self.batches], self.schema)
        here: dict[int, pa.Table] = {}
        for k in range(len(self.futures) - 1, -1, -1):
            if not self.futures[k].cancel():
                break  # a worker has it (and, mostly, every batch before it)
            here[k] = self.fn(self.spec, self.batches[k])
        tables = []
        for k, future in enumerate(self.futures):
            if k in here:
                tables.append(here[k])
                continue
            try:
                tables.append(taken_over(future.result()))
            except (BrokenProcessPool, OSError, CancelledError):
                tables.append(self.fn(self.spec, self.batches[k]))
        return _concat(tables, self.schema)
