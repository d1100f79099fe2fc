"""The block inventory of a table's log files: which files (from the file-system view) and the
batched header scan (:func:`hudi_core.formats.logfile.inventory.scan_log_files`, the format layer's pure batch
function) run on the table's executor. Table-level, so it lives with the analyses that use it
(so that the log-block format package does not depend on the table).

On local files a big scan runs in worker processes, one per core (:class:`~hudi_core.engines.executor.WorkerPool`),
each returning its files' rows as Arrow: started before the file-system view is built when the timeline promises
many log files (:func:`scan_pool`), so that their start-up overlaps building the view."""

from __future__ import annotations

from contextlib import nullcontext
from functools import partial
from typing import TYPE_CHECKING

import pyarrow as pa

from hudi_core.engines.executor import WorkerPool, run_batches, run_cpu_batches
from hudi_core.formats.logfile.inventory import INVENTORY_SCHEMA, scan_log_files
from hudi_core.formats.timeline.bulk import paused_gc
from hudi_core.io.storage import inline_if_local
from hudi_core.table import slice_columns

if TYPE_CHECKING:
    from hudi_core.table import HudiTable

LOG_SCAN_BATCH_SIZE = 64
#: Batches given to a worker process: big enough that shipping their rows back costs little beside the scan.
POOL_SCAN_BATCH_SIZE = 512
#: Log files from which a scan over local files is spread over one process per core (a process costs
#: ~0.3 s to start; 10,000 header scans take ~0.2 s in one).
PARALLEL_SCAN_MIN_FILES = 4_000
#: Completed delta commits on the active timeline from which a pool of worker processes is started before the
#: file-system view is built (each writes at least one log file: a timeline this long promises a scan that pays
#: for the workers); below it the scan decides once the files are known.
EARLY_POOL_MIN_DELTA_COMMITS = 400
#: The modules a worker imports while the caller builds the view.
WORKER_MODULES = ("hudi_core.formats.logfile.inventory", "hudi_core.services.duplicates")


def log_file_paths(table: HudiTable, partition: str | None = None, file_id: str | None = None) -> list[str]:
    """Root-relative paths of every log file on storage (all slices, replaced groups and log files of
    pending or failed writes included), in file-group and reader order, from `table.fs_view()`."""
    view = table.fs_view()
    columnar = slice_columns.log_file_paths(view, partition, file_id)
    if columnar is not None:
        return columnar
    paths: list[str] = []
    for group in view.file_groups(partition, include_replaced=True):
        if file_id is not None and group.file_id != file_id:
            continue
        logs = {lf.path: lf for s in group.slices for lf in s.log_files}
        paths.extend(sorted(logs, key=lambda p: logs[p].sort_key()))
    return paths


def scan_pool(table: HudiTable) -> WorkerPool | None:
    """Worker processes started now for the table's bulk stages when they will run inline on local files and the
    active timeline promises many log files (:data:`EARLY_POOL_MIN_DELTA_COMMITS` completed delta commits);
    ``None`` otherwise (also on one core). The caller closes it."""
    if not table.storage.is_local or not table.properties.is_mor:
        return None
    if inline_if_local(table.executor, table.storage, 0) is not None:
        return None
    delta_commits = sum(1 for i in table.timeline.completed() if i.action == "deltacommit")
    if delta_commits < EARLY_POOL_MIN_DELTA_COMMITS:
        return None
    return WorkerPool.start(WORKER_MODULES)


def log_block_inventory(
    table: HudiTable,
    partition: str | None = None,
    file_id: str | None = None,
    decode_counts: bool = False,
    batch_size: int = LOG_SCAN_BATCH_SIZE,
    pool: WorkerPool | None = None,
) -> pa.Table:
    """The block inventory of a table's log files (optionally one partition / one file group).

    Lists the files through the file-system view and runs :func:`scan_log_files` in batches on the
    table's executor (local threads or Spark), or on `pool`'s worker processes (started by :func:`scan_pool`
    here when none is given); rows keep the listing order.
    """
    if pool is not None:
        return scan_paths(table, log_file_paths(table, partition, file_id), decode_counts, batch_size, pool)
    # One partition or file group: a scan too small for workers started in advance.
    early = scan_pool(table) if partition is None and file_id is None else None
    with early or nullcontext() as own:
        return scan_paths(table, log_file_paths(table, partition, file_id), decode_counts, batch_size, own)


def scan_paths(table: HudiTable, paths: list[str], decode_counts: bool = False,
               batch_size: int = LOG_SCAN_BATCH_SIZE, pool: WorkerPool | None = None) -> pa.Table:
    """The inventory rows of `paths` (root-relative log files), in their order: on `pool` when the scan runs
    inline on local files and is big enough, else as :func:`log_block_inventory` runs it."""
    fn = partial(scan_log_files, decode_counts=True) if decode_counts else scan_log_files
    executor = inline_if_local(table.executor, table.storage, len(paths))
    if executor is None and pool is not None and len(paths) >= pool.workers * LOG_SCAN_BATCH_SIZE:
        # Every worker gets a few batches: the last one's rows are not waited for long.
        size = max(LOG_SCAN_BATCH_SIZE, min(POOL_SCAN_BATCH_SIZE, -(-len(paths) // (4 * pool.workers))))
        return pool.submit(fn, table.storage.spec, paths, size, INVENTORY_SCHEMA).result()
    # Header parsing is CPU-bound Python: many local files are scanned in one process per core.
    run = run_cpu_batches if len(paths) >= PARALLEL_SCAN_MIN_FILES else run_batches
    with paused_gc():  # a row per block: no cycles, and GC passes cost ~10% at scale
        return run(executor, fn, table.storage.spec, paths, batch_size, INVENTORY_SCHEMA)

