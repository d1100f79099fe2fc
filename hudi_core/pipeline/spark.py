"""The Spark executor: the same pure batch functions, run as one Spark job per bulk stage.

:class:`SparkExecutor` implements :class:`~hudi_core.pipeline.executor.Executor`. For one call of
``map_batches(fn, spec, items, batch_size, schema)``:

1. the items are cut into batches exactly as the local executor cuts them; the driver turns them
   into a small Arrow table ``(batch id, items)`` and hands it to Spark (``createDataFrame``), one
   Arrow record batch per Spark partition, so the partition count is chosen here;
2. ``mapInArrow`` runs ``fn(spec, items)`` for every batch inside the Python workers. The
   :class:`~hudi_core.storage.StorageSpec` (URI plus fsspec options: credentials, endpoints) travels
   with the pickled function, so every executor opens the same read-only storage;
3. the rows come back to the driver as Arrow (``DataFrame.toArrow``), are put back in batch order
   and cast to `schema`: the result equals the local executor's, row for row.

Transport: when every column has a Spark type that round-trips exactly (strings, integers,
floats, booleans, binary and lists/structs/maps of them) the rows travel as native Spark columns.
Otherwise (timestamps, decimals, unsigned or dictionary types) each batch result travels as one
Arrow IPC stream in a binary column, so no value is ever changed by Spark's type system.

The session is created lazily, on the first bulk stage: commands that never run one never start a
JVM. Progress (see :mod:`hudi_core.pipeline.progress`) is read from Spark's status tracker while
the job runs: one step per finished task.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import itertools
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.ipc as ipc

from hudi_core.errors import HudiInspectError
from hudi_core.pipeline.engine import ReportingLocalExecutor
from hudi_core.pipeline.executor import BatchFn, _batches, _concat
from hudi_core.pipeline.progress import (
    ProgressCallback,
    StageProgress,
    report_progress,
    resolve_callback,
    stage_label,
)
from hudi_core.storage import StorageSpec

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Environment variable overriding :data:`DEFAULT_MIN_ITEMS`.
MIN_ITEMS_ENV = "HUDI_INSPECTOR_SPARK_MIN_ITEMS"
#: Stages with fewer items than this run on the driver (see :class:`SparkExecutor`).
DEFAULT_MIN_ITEMS = 1000
#: Stage runs kept in :attr:`SparkExecutor.history`.
MAX_HISTORY = 1000

#: Name of the batch-id column added to every result row while it travels through Spark.
BATCH_COLUMN = "__hudi_batch"
#: Name of the payload column in IPC transport.
IPC_COLUMN = "__hudi_arrow_ipc"

#: Input schema handed to Spark: one row per batch.
INPUT_SCHEMA = pa.schema([pa.field(BATCH_COLUMN, pa.int64(), nullable=False), pa.field("items", pa.list_(pa.string()))])


class SparkExecutionError(HudiInspectError):
    """A Spark job of a bulk stage failed (worker Python, imports, storage access, cluster)."""


# -- schema handling -------------------------------------------------------------------------------


def _exact_in_spark(dtype: pa.DataType) -> bool:
    """True when Spark stores values of `dtype` without changing them (round trip is lossless)."""
    t = pa.types
    if t.is_string(dtype) or t.is_large_string(dtype) or t.is_binary(dtype) or t.is_large_binary(dtype):
        return True
    if t.is_boolean(dtype) or (t.is_floating(dtype) and not t.is_float16(dtype)):
        return True
    if t.is_signed_integer(dtype):
        return True
    if t.is_list(dtype) or t.is_large_list(dtype):
        return _exact_in_spark(dtype.value_type)
    if t.is_struct(dtype):
        return all(_exact_in_spark(dtype.field(i).type) for i in range(dtype.num_fields))
    if t.is_map(dtype):
        return _exact_in_spark(dtype.key_type) and _exact_in_spark(dtype.item_type)
    return False


def transport_for(schema: pa.Schema) -> str:
    """``"native"`` when all columns round-trip through Spark types exactly, else ``"ipc"``."""
    names = [f.name for f in schema]
    if len(set(names)) != len(names) or BATCH_COLUMN in names:
        return "ipc"
    return "native" if all(_exact_in_spark(f.type) for f in schema) else "ipc"


def _spark_schema(schema: pa.Schema, transport: str) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    if transport == "native":
        with_batch = pa.schema([pa.field(BATCH_COLUMN, pa.int64(), nullable=False), *schema])
        return from_arrow_schema(with_batch)
    return from_arrow_schema(pa.schema([pa.field(BATCH_COLUMN, pa.int64(), nullable=False),
                                        pa.field(IPC_COLUMN, pa.binary())]))


def _ipc_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    with ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue().to_pybytes()


# -- the function that runs inside Spark's Python workers -----------------------------------------


def run_partition(fn: BatchFn, spec: StorageSpec, schema: pa.Schema, transport: str,
                  batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """`mapInArrow` body: apply `fn` to each input row's items; tag every output row with its batch id.

    Runs on Spark executors (it is pickled with `fn` and `spec`); public so it can be unit-tested
    without Spark.
    """
    for record_batch in batches:
        ids = record_batch.column(0).to_pylist()
        item_lists = record_batch.column(1).to_pylist()
        for batch_id, items in zip(ids, item_lists, strict=True):
            result = fn(spec, list(items or []))
            if result.schema != schema:
                result = result.cast(schema)
            if transport == "native":
                if result.num_rows == 0:
                    continue
                tag = pa.array([batch_id] * result.num_rows, pa.int64())
                for rb in result.combine_chunks().to_batches():
                    yield pa.RecordBatch.from_arrays([tag.slice(0, rb.num_rows), *rb.columns],
                                                     names=[BATCH_COLUMN, *schema.names])
                    tag = tag.slice(rb.num_rows)
            else:
                yield pa.RecordBatch.from_arrays(
                    [pa.array([batch_id], pa.int64()), pa.array([_ipc_bytes(result)], pa.binary())],
                    names=[BATCH_COLUMN, IPC_COLUMN],
                )


#: Modules the bulk stages import inside Spark's Python workers.
WARM_MODULES = ("hudi_core.fsview", "hudi_core.timeline.bulk", "hudi_core.logfile.inventory",
                "hudi_core.timeline.unified")
#: Result of :func:`warm_batch`.
WARM_SCHEMA = pa.schema([("item", pa.string()), ("pid", pa.int64())])


def warm_batch(spec: StorageSpec, items: list[str]) -> pa.Table:
    """Import every module a bulk stage uses (in a Spark Python worker); one row per item."""
    for module in WARM_MODULES:
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
    return pa.table({"item": items, "pid": [os.getpid()] * len(items)}, schema=WARM_SCHEMA)


def _spark_context(spark: Any) -> Any:
    """The SparkContext of a classic session; ``None`` on Spark Connect (no context there)."""
    try:
        return spark.sparkContext
    except Exception:
        return None


def _fn_name(fn: Callable[..., Any]) -> str:
    while isinstance(fn, functools.partial):
        fn = fn.func
    return getattr(fn, "__name__", type(fn).__name__)


def _one_line(exc: BaseException) -> str:
    """The most useful line of a (possibly huge) Spark/Python worker error."""
    text = str(exc)
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for line in reversed(lines):
        if "Error" in line or "Exception" in line:
            return line[:400]
    return (lines[-1] if lines else type(exc).__name__)[:400]


class SparkExecutor:
    """Runs batch functions as Spark jobs (``mapInArrow``) and returns Arrow to the driver.

    `session` is a ``SparkSession`` or a zero-argument factory returning one (called on the first
    bulk stage that goes to Spark, so no JVM starts for commands that need none).

    `min_items`: a stage with fewer items runs on the driver's thread pool instead (same function,
    same result; a Spark job costs more than listing a handful of folders). ``None`` takes
    ``$HUDI_INSPECTOR_SPARK_MIN_ITEMS``, else :data:`DEFAULT_MIN_ITEMS`; ``0`` sends every stage to
    Spark. `tasks_per_core` bounds the Spark partitions of a stage to that many per
    default-parallelism slot (more tasks balance uneven batches and give finer progress).
    `progress` is an optional default progress callback. :attr:`history` records every stage run
    (function, items, batches, where it ran, partitions, seconds).
    """

    name = "spark"

    def __init__(self, session: SparkSession | Callable[[], SparkSession], tasks_per_core: int = 4,
                 progress: ProgressCallback | None = None, poll_interval: float = 0.2,
                 min_items: int | None = None) -> None:
        self._session: SparkSession | None = None
        self._factory: Callable[[], SparkSession] | None = None
        if hasattr(type(session), "createDataFrame"):  # a session (classic or Connect), not a factory
            self._session = session  # type: ignore[assignment]
        else:
            self._factory = session  # type: ignore[assignment]
        self.tasks_per_core = max(1, tasks_per_core)
        self.progress = progress
        self.poll_interval = poll_interval
        if min_items is None:
            env = os.environ.get(MIN_ITEMS_ENV, "").strip()
            min_items = int(env) if env.isdigit() else DEFAULT_MIN_ITEMS
        self.min_items = max(0, min_items)
        self.history: list[dict[str, Any]] = []
        self._local = ReportingLocalExecutor()
        self._lock = threading.Lock()

    @property
    def session(self) -> SparkSession:
        """The Spark session (created on first use)."""
        with self._lock:
            if self._session is None:
                assert self._factory is not None
                self._session = self._factory()
            return self._session

    @property
    def started(self) -> bool:
        """Whether the session exists yet (no JVM is started before the first bulk stage)."""
        return self._session is not None

    def _parallelism(self) -> int:
        sc = _spark_context(self.session)
        return max(1, int(sc.defaultParallelism)) if sc is not None else 2

    def map_batches(self, fn: BatchFn, spec: StorageSpec, items: Sequence[str], batch_size: int,
                    schema: pa.Schema) -> pa.Table:
        """Apply `fn` to consecutive batches of `items` on Spark; the result has `schema`, in item order."""
        started = time.perf_counter()
        callback = resolve_callback(self)
        if len(items) < self.min_items:
            with report_progress(callback):
                result = self._local.map_batches(fn, spec, items, batch_size, schema)
            self._record(fn, len(items), len(_batches(items, batch_size)), "driver", 0, started)
            return result
        return self._spark_map(fn, spec, items, batch_size, schema, callback, started)

    def warm_up(self) -> float:
        """Start the session and run one tiny job that imports the engine in every Python worker.

        The first Spark job of a process pays for forking the Python workers and importing
        pyarrow and ``hudi_core`` there; a dashboard can pay it in the background, a benchmark
        outside its timings. Returns the seconds it took.
        """
        started = time.perf_counter()
        slots = self._parallelism()
        self._spark_map(warm_batch, StorageSpec.of("memory://"), [str(i) for i in range(slots)], 1,
                        WARM_SCHEMA, None, started)
        return round(time.perf_counter() - started, 3)

    def _spark_map(self, fn: BatchFn, spec: StorageSpec, items: Sequence[str], batch_size: int,
                   schema: pa.Schema, callback: ProgressCallback | None, started: float) -> pa.Table:
        batches = _batches(items, batch_size)
        tracker = StageProgress(callback, stage_label(fn), len(items), self.name)
        if not batches:
            tracker.finish()
            return schema.empty_table()
        spark = self.session
        transport = transport_for(schema)
        n_parts = min(len(batches), self._parallelism() * self.tasks_per_core)
        # One Arrow record batch per Spark partition (createDataFrame keeps the chunks as partitions).
        bounds = [round(i * len(batches) / n_parts) for i in range(n_parts + 1)]
        chunks = [
            pa.record_batch(
                [pa.array(range(lo, hi), pa.int64()), pa.array(batches[lo:hi], pa.list_(pa.string()))],
                schema=INPUT_SCHEMA,
            )
            for lo, hi in itertools.pairwise(bounds)
            if hi > lo
        ]
        body = functools.partial(run_partition, fn, spec, schema, transport)
        job_group = f"hudi-inspector-{uuid.uuid4().hex[:12]}"
        description = f"{stage_label(fn)}: {len(items)} items in {len(batches)} batches ({spec.uri})"

        def collect() -> pa.Table:
            sc = _spark_context(spark)
            if sc is not None:
                sc.setJobGroup(job_group, description, interruptOnCancel=True)
            try:
                frame = spark.createDataFrame(pa.Table.from_batches(chunks, INPUT_SCHEMA))
                return frame.mapInArrow(body, _spark_schema(schema, transport)).toArrow()
            finally:
                if sc is not None:
                    for key in ("spark.jobGroup.id", "spark.job.description", "spark.job.interruptOnCancel"):
                        sc.setLocalProperty(key, None)  # type: ignore[arg-type]

        try:
            raw = self._run_with_progress(spark, collect, job_group, tracker, len(items))
        except HudiInspectError:
            raise
        except Exception as exc:
            raise SparkExecutionError(
                f"Spark job {_fn_name(fn)} failed on {spec.uri}: {_one_line(exc)}"
            ) from exc
        tracker.finish()
        result = self._to_result(raw, schema, transport)
        self._record(fn, len(items), len(batches), "spark", len(chunks), started)
        return result

    def _record(self, fn: BatchFn, items: int, batches: int, ran_on: str, partitions: int, started: float) -> None:
        self.history.append({
            "stage": _fn_name(fn), "items": items, "batches": batches, "ran_on": ran_on,
            "partitions": partitions, "seconds": round(time.perf_counter() - started, 4),
        })
        del self.history[:-MAX_HISTORY]

    def _run_with_progress(self, spark: SparkSession, collect: Callable[[], pa.Table], job_group: str,
                           tracker: StageProgress, total: int) -> pa.Table:
        sc = _spark_context(spark)
        if tracker.callback is None or sc is None:
            return collect()
        outcome: dict[str, Any] = {}

        def target() -> None:
            try:
                outcome["table"] = collect()
            except BaseException as exc:  # re-raised on the calling thread
                outcome["error"] = exc

        worker = threading.Thread(target=target, name=job_group, daemon=True)
        worker.start()
        status = sc.statusTracker()
        try:
            while worker.is_alive():
                worker.join(self.poll_interval)
                done_tasks, all_tasks = 0, 0
                for job_id in status.getJobIdsForGroup(job_group):
                    job = status.getJobInfo(job_id)
                    for stage_id in job.stageIds if job else []:
                        stage = status.getStageInfo(stage_id)
                        if stage is not None:
                            done_tasks += stage.numCompletedTasks
                            all_tasks += stage.numTasks
                if all_tasks:
                    tracker.update(total * done_tasks // all_tasks)
        except KeyboardInterrupt:
            sc.cancelJobGroup(job_group)
            worker.join(10)
            raise
        if "error" in outcome:
            raise outcome["error"]
        return outcome["table"]

    @staticmethod
    def _to_result(raw: pa.Table, schema: pa.Schema, transport: str) -> pa.Table:
        if raw.num_rows == 0:
            return schema.empty_table()
        # A stable sort by batch id restores item order (rows of one batch stay in fn's order).
        ordered = raw.sort_by([(BATCH_COLUMN, "ascending")])
        if transport == "native":
            return _concat([ordered.drop_columns([BATCH_COLUMN]).select(schema.names)], schema)
        tables = [ipc.open_stream(pa.py_buffer(blob)).read_all() for blob in ordered.column(IPC_COLUMN).to_pylist()]
        return _concat(tables, schema)
