"""`hudi-inspect scan`: run every bulk stage of a table on the chosen engine and report it.

``hudi-inspect scan TABLE [--engine spark|local] [--spark-master URL] [--spark-conf K=V]…`` lists
the partitions, decodes every active instant body, builds the file-system view, scans the headers
of every log file and lists the archived timeline (when the table has one), all through one
executor. Per stage it prints the row count, the wall time and a SHA-256 of the stage's Arrow
table in canonical order, so two runs (local threads, a laptop Spark, a cluster) can be compared by
digest. JSON keys: ``table``, ``engine``, ``spark`` (master, parallelism, version when Spark ran),
``stages`` (each ``stage``, ``rows``, ``seconds``, ``sha256``) and ``spark_jobs`` (per bulk call:
``stage``, ``items``, ``batches``, ``ran_on``, ``partitions``, ``seconds``).

:func:`full_scan` is the same as a library call returning the Arrow tables; :func:`canonical` and
:func:`table_digest` give the order-independent form the parity tests and the bench compare.
"""

from __future__ import annotations

import functools
import hashlib
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.ipc as ipc

from hudi_core.engines.executor import Executor, run_batches
from hudi_core.formats.timeline.bulk import DECODED_SCHEMA, decode_instant_files

if TYPE_CHECKING:
    from hudi_core.table import HudiTable


#: Instant files decoded per executor batch.
DECODE_BATCH_SIZE = 256
#: Archive files listed per executor batch.
ARCHIVE_BATCH_SIZE = 8

#: Columns of the `partitions` stage table: one row per file in a partition.
PARTITION_FILES_SCHEMA = pa.schema(
    [("partition", pa.string()), ("name", pa.string()), ("size", pa.int64()), ("mtime_ms", pa.int64())]
)

#: Stages of a full scan, in the order they run.
SCAN_STAGES = ("partitions", "instant_bodies", "file_slices", "log_blocks", "archived")


def _sortable(dtype: pa.DataType) -> bool:
    t = pa.types
    return not (t.is_list(dtype) or t.is_large_list(dtype) or t.is_struct(dtype) or t.is_map(dtype))


def canonical(table: pa.Table) -> pa.Table:
    """`table` with dictionary columns decoded and rows sorted by every scalar column (nulls last)."""
    columns = []
    for col in table.columns:
        columns.append(col.cast(col.type.value_type) if pa.types.is_dictionary(col.type) else col)
    plain = pa.table(columns, names=table.column_names).combine_chunks()
    keys = [(f.name, "ascending", "at_end") for f in plain.schema if _sortable(f.type)]
    return plain.sort_by(keys) if keys and plain.num_rows else plain


def table_digest(table: pa.Table) -> str:
    """SHA-256 of the canonical form, as an Arrow IPC stream (schema, field metadata excluded)."""
    data = canonical(table)
    data = data.replace_schema_metadata(None)
    data = pa.table(data.columns, schema=pa.schema([pa.field(f.name, f.type) for f in data.schema]))
    sink = pa.BufferOutputStream()
    with ipc.new_stream(sink, data.schema) as writer:
        writer.write_table(data)
    return hashlib.sha256(sink.getvalue().to_pybytes()).hexdigest()


def decode_all_bodies(table: HudiTable, executor: Executor | None = None) -> pa.Table:
    """Decode every active instant file through `executor`; prime the timeline and return the raw rows."""
    tl = table.timeline
    paths = [f.path for inst in tl.instants for f in inst.files]
    fn = functools.partial(decode_instant_files, layout_version=table.properties.timeline_layout_version)
    raw = run_batches(executor or table.executor, fn, table.storage.spec, paths, DECODE_BATCH_SIZE, DECODED_SCHEMA)
    tl.prime_from_rows(raw)
    return raw


def archived_listing(table: HudiTable, executor: Executor | None = None) -> pa.Table | None:
    """Raw listing of every archive file through `executor` (``None`` when there is no archive or
    the archived-timeline reader is not part of this build)."""
    try:
        from hudi_core.formats.timeline.archived_v1 import ARCHIVE_LISTING_SCHEMA, archive_file_version
        from hudi_core.formats.timeline.unified import list_archive_files
    except ImportError:
        return None

    archive_dir = table.properties.archive_dir
    names = [i.name for i in table.storage.list(archive_dir) if not i.is_dir]
    if table.properties.timeline_layout_version >= 2:
        paths = [f"{archive_dir}/{n}" for n in names if n.endswith(".parquet")]
    else:
        paths = [f"{archive_dir}/{n}" for n in names if archive_file_version(n) is not None]
    if not paths:
        return None
    return run_batches(executor or table.executor, list_archive_files, table.storage.spec, sorted(paths),
                       ARCHIVE_BATCH_SIZE, ARCHIVE_LISTING_SCHEMA)


def full_scan(table: HudiTable, timings: dict[str, float] | None = None) -> dict[str, pa.Table]:
    """Every bulk stage of `table` on its executor: ``{stage: Arrow table}`` (see :data:`SCAN_STAGES`).

    `timings`, when given, receives each stage's wall time in seconds.
    """
    from hudi_core.inspect import FILE_SLICES_SCHEMA
    from hudi_core.services.log_inventory import log_block_inventory

    out: dict[str, pa.Table] = {}
    times = timings if timings is not None else {}

    def timed(stage: str, run: Callable[[], pa.Table | None]) -> None:
        started = time.perf_counter()
        result = run()
        times[stage] = round(time.perf_counter() - started, 4)
        if result is not None:
            out[stage] = result

    def partitions() -> pa.Table:
        # The bulk listing stage lists storage, whichever listing the view then uses.
        listing = table.storage_listing()
        rows = [
            {"partition": p, "name": f.name, "size": f.size, "mtime_ms": f.mtime_ms}
            for p, files in listing.partitions.items() for f in files
        ]
        return pa.Table.from_pylist(rows, schema=PARTITION_FILES_SCHEMA)

    timed("partitions", partitions)
    timed("instant_bodies", lambda: decode_all_bodies(table))
    timed("file_slices", lambda: pa.Table.from_pylist(table.fs_view().slice_rows(), schema=FILE_SLICES_SCHEMA))
    timed("log_blocks", lambda: log_block_inventory(table))
    timed("archived", lambda: archived_listing(table))
    return out
