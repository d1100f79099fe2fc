"""The Spark executor: the same pure batch functions, run as one Spark job per bulk stage.

:class:`SparkExecutor` implements :class:`~hudi_core.engines.executor.Executor`. For one call of
``map_batches(fn, spec, items, batch_size, schema)``:

1. the items are cut into batches exactly as the local executor cuts them; the driver turns them
   into a small Arrow table ``(batch id, items)`` and hands it to Spark (``createDataFrame``), one
   Arrow record batch per Spark partition, so the partition count is chosen here;
2. ``mapInArrow`` runs ``fn(spec, items)`` for every batch inside the Python workers. The
   :class:`~hudi_core.io.storage.StorageSpec` (URI plus fsspec options: credentials, endpoints) travels
   with the pickled function, so every executor opens the same read-only storage;
3. the rows come back to the driver as Arrow (``DataFrame.toArrow``), are put back in batch order
   and cast to `schema`: the result equals the local executor's, row for row.

Transport: when every column has a Spark type that round-trips exactly (strings, integers,
floats, booleans, binary and lists/structs/maps of them; top-level dictionary columns travel
decoded and are encoded again on the driver) the rows travel as native Spark columns. Otherwise
(timestamps, decimals, unsigned types) each slice of a batch result travels as an Arrow IPC stream
in a binary column, so no value is ever changed by Spark's type system.

Memory: workers send Arrow batches of at most :data:`OUTPUT_BATCH_ROWS` rows, and a stage whose
results are large runs as several jobs ("waves") of about :data:`TARGET_JOB_BYTES` each (sized
from the bytes per item of the previous wave), so the driver JVM never holds a whole huge stage.

The session is created lazily, on the first bulk stage: commands that never run one never start a
JVM. Progress (see :mod:`hudi_core.engines.progress`) is read from Spark's status tracker while
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

from hudi_core.engines.executor import DEFAULT_MIN_ITEMS, MIN_ITEMS_ENV, BatchFn, _batches, _concat
from hudi_core.engines.local import ReportingLocalExecutor
from hudi_core.engines.progress import (
    ProgressCallback,
    StageProgress,
    report_progress,
    resolve_callback,
    stage_label,
)
from hudi_core.errors import HudiInspectError
from hudi_core.io.storage import StorageSpec, local_root

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

#: Stage runs kept in :attr:`SparkExecutor.history`.
MAX_HISTORY = 1000

#: Rows per Arrow batch a worker sends back (bounds every single JVM allocation).
OUTPUT_BATCH_ROWS = 4096
#: Arrow bytes one Spark job should bring back to the driver; larger stages run as several jobs
#: ("waves") sized from the bytes per item the previous wave produced. 64 MB keeps `doctor`'s driver JVM under
#: 1 GiB on a million files (256 MB: 1.2-1.4 GiB), at the same speed.
TARGET_JOB_BYTES = 64 * 2**20
#: Items in the first wave of a stage (before the bytes per item are known).
FIRST_WAVE_ITEMS = 2_000

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


def wire_schema(schema: pa.Schema) -> pa.Schema:
    """`schema` as it travels natively: top-level dictionary columns decoded to their value type
    (the driver encodes them again; values are unchanged, only the dictionary layout is rebuilt)."""
    return pa.schema([
        pa.field(f.name, f.type.value_type, f.nullable, f.metadata) if pa.types.is_dictionary(f.type) else f
        for f in schema
    ])


def transport_for(schema: pa.Schema) -> str:
    """``"native"`` when all columns round-trip through Spark types exactly, else ``"ipc"``."""
    names = [f.name for f in schema]
    if len(set(names)) != len(names) or BATCH_COLUMN in names:
        return "ipc"
    return "native" if all(_exact_in_spark(f.type) for f in wire_schema(schema)) else "ipc"


def _spark_schema(schema: pa.Schema, transport: str) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    if transport == "native":
        with_batch = pa.schema([pa.field(BATCH_COLUMN, pa.int64(), nullable=False), *wire_schema(schema)])
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
    wire = wire_schema(schema)
    for record_batch in batches:
        ids = record_batch.column(0).to_pylist()
        item_lists = record_batch.column(1).to_pylist()
        for batch_id, items in zip(ids, item_lists, strict=True):
            result = fn(spec, list(items or []))
            if result.schema != schema:
                result = result.cast(schema)
            if result.num_rows == 0:
                continue
            # Bounded slices: the JVM allocates one buffer per Arrow batch it receives.
            if transport == "native":
                tag = pa.array([batch_id] * result.num_rows, pa.int64())
                for rb in result.cast(wire).combine_chunks().to_batches(max_chunksize=OUTPUT_BATCH_ROWS):
                    yield pa.RecordBatch.from_arrays([tag.slice(0, rb.num_rows), *rb.columns],
                                                     names=[BATCH_COLUMN, *schema.names])
                    tag = tag.slice(rb.num_rows)
            else:
                for start in range(0, result.num_rows, OUTPUT_BATCH_ROWS):
                    blob = _ipc_bytes(result.slice(start, OUTPUT_BATCH_ROWS))
                    yield pa.RecordBatch.from_arrays(
                        [pa.array([batch_id], pa.int64()), pa.array([blob], pa.binary())],
                        names=[BATCH_COLUMN, IPC_COLUMN],
                    )


#: Modules the bulk stages import inside Spark's Python workers.
WARM_MODULES = ("hudi_core.table.listing.storage", "hudi_core.formats.timeline.bulk",
                "hudi_core.formats.logfile.inventory", "hudi_core.formats.timeline.unified")
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
        # Small stages over local files run on one thread, as the local engine runs them
        # (`inline_if_local`): CPU-bound batch functions convoy on the GIL in a pool, 2x slower.
        self._one_thread = ReportingLocalExecutor(max_workers=1)
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
            local = self._one_thread if local_root(spec.uri, dict(spec.options)) is not None else self._local
            with report_progress(callback):
                result = local.map_batches(fn, spec, items, batch_size, schema)
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
        """Run a stage as one or more Spark jobs ("waves"), each bringing back about
        :data:`TARGET_JOB_BYTES` of Arrow, so driver memory stays bounded on huge stages."""
        batches = _batches(items, batch_size)
        tracker = StageProgress(callback, stage_label(fn), len(items), self.name)
        if not batches:
            tracker.finish()
            return schema.empty_table()
        spark = self.session
        transport = transport_for(schema)
        results: list[pa.Table] = []
        done_items = jobs = partitions = 0
        wave_items, first = FIRST_WAVE_ITEMS, 0
        while first < len(batches):
            last, count = first, 0
            while last < len(batches) and (count == 0 or count + len(batches[last]) <= wave_items):
                count += len(batches[last])
                last += 1
            raw, parts = self._run_job(spark, fn, spec, schema, transport, batches, first, last, tracker,
                                       done_items, count)
            results.append(self._to_result(raw, schema, transport))
            jobs, partitions, done_items, first = jobs + 1, partitions + parts, done_items + count, last
            bytes_per_item = max(1, raw.nbytes) / count
            wave_items = max(batch_size, int(TARGET_JOB_BYTES / bytes_per_item))
        tracker.finish()
        result = _concat(results, schema)
        self._record(fn, len(items), len(batches), "spark", partitions, started, jobs)
        return result

    def _run_job(self, spark: SparkSession, fn: BatchFn, spec: StorageSpec, schema: pa.Schema, transport: str,
                 batches: list[list[str]], first: int, last: int, tracker: StageProgress, done_before: int,
                 count: int) -> tuple[pa.Table, int]:
        """One Spark job over ``batches[first:last]``: (raw rows tagged with batch ids, partitions)."""
        n_parts = min(last - first, self._parallelism() * self.tasks_per_core)
        # One Arrow record batch per Spark partition (createDataFrame keeps the chunks as partitions).
        bounds = [first + round(i * (last - first) / n_parts) for i in range(n_parts + 1)]
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
        description = f"{stage_label(fn)}: {count} items in {last - first} batches ({spec.uri})"

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
                        sc.setLocalProperty(key, None)

        try:
            raw = self._run_with_progress(spark, collect, job_group, tracker, done_before, count)
        except HudiInspectError:
            raise
        except Exception as exc:
            raise SparkExecutionError(
                f"Spark job {_fn_name(fn)} failed on {spec.uri}: {_one_line(exc)}"
            ) from exc
        tracker.update(done_before + count)
        return raw, len(chunks)

    def _record(self, fn: BatchFn, items: int, batches: int, ran_on: str, partitions: int, started: float,
                jobs: int = 0) -> None:
        self.history.append({
            "stage": _fn_name(fn), "items": items, "batches": batches, "ran_on": ran_on, "jobs": jobs,
            "partitions": partitions, "seconds": round(time.perf_counter() - started, 4),
        })
        del self.history[:-MAX_HISTORY]

    def _run_with_progress(self, spark: SparkSession, collect: Callable[[], pa.Table], job_group: str,
                           tracker: StageProgress, done_before: int, count: int) -> pa.Table:
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
                    tracker.update(done_before + count * done_tasks // all_tasks)
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
