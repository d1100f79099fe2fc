"""The storage listing: partitions and files found by listing folders (spec `01` §6.1).

How Hudi lists a table without its metadata table (`FileSystemBackedTableMetadata`): a partition is
a folder (not `.hoodie`) holding a `.hoodie_partition_metadata*` file, found breadth first; folders
inside a partition are not searched further. Listing runs one tree level per executor round, as a
pure batch function (:func:`list_folders_batch`) that runs on threads or inside a Spark task.
"""

from __future__ import annotations

import dataclasses
import functools
import posixpath
from collections.abc import Iterator, Sequence
from typing import Any

from hudi_core.engines.executor import Executor, cpu_batch_results, cpu_workers, run_batches
from hudi_core.errors import Finding, Severity
from hudi_core.io.filenames import PARTITION_METAFILE_PREFIX
from hudi_core.io.memory import release_arrow_memory
from hudi_core.io.storage import (
    BAD_MTIME,
    ReadOnlyStorage,
    StorageSpec,
    bad_mtime_finding,
    inline_if_local,
    local_root,
)
from hudi_core.lazy import LazyModule, lazy_constants
from hudi_core.table.listing import ListedFiles, Listing, ListingKind

pa: Any = LazyModule("pyarrow")
pc: Any = LazyModule("pyarrow.compute")

#: The folder Hudi never looks for partitions in (`HoodieTableMetaClient.METAFOLDER_NAME`).
METAFOLDER_NAME = ".hoodie"


@functools.cache
def listing_schema() -> pa.Schema:
    """Rows returned by :func:`list_folders_batch`: one per directory entry (also `LISTING_SCHEMA`)."""
    return pa.schema([("folder", pa.string()), ("name", pa.string()), ("size", pa.int64()),
                      ("mtime_ms", pa.int64()), ("is_dir", pa.bool_())])


#: Folders listed per executor batch.
LISTING_BATCH_SIZE = 32
#: Local folders of one tree level from which they are listed in worker processes, one per core (the stat of
#: every entry and its Python objects are CPU work the GIL serialises: threads do not help, processes do).
PROCESS_LISTING_MIN_FOLDERS = 256

#: `LISTING_SCHEMA`, built when first read (pyarrow loads only when Arrow is used).
__getattr__ = lazy_constants(globals(), {"LISTING_SCHEMA": listing_schema})


# -- bulk listing (a pure batch function: runs on threads or inside a Spark task) ---------------


def list_folders_batch(spec: StorageSpec, folders: list[str]) -> pa.Table:
    """List a batch of folders (root-relative) and return one Arrow row per entry.

    A folder that does not exist lists as empty. Pure: it opens its own read-only storage.
    """
    storage = spec.open()
    cols: dict[str, list[object]] = {name: [] for name in listing_schema().names}
    folder_col, name_col, size_col, mtime_col, dir_col = cols.values()
    for folder, entries in zip(folders, storage.list_entries_many(folders), strict=True):
        if not entries:
            continue
        folder_col.extend([folder] * len(entries))
        names, sizes, mtimes, dirs = zip(*entries, strict=True)  # columns of the (name, size, mtime, dir) rows
        name_col.extend(names)
        size_col.extend(sizes)
        mtime_col.extend(mtimes)
        dir_col.extend(dirs)
    # Names that are not UTF-8 were skipped by the storage; they travel as rows with a null
    # `is_dir` and the printable name, so the driver can report them wherever the batch ran. A file whose
    # modification time is no date (beyond year 9999) is listed (time unknown) and travels as such a row too,
    # with the time storage gave it (clamped to int64) in `mtime_ms`.
    for finding in storage.findings:  # (code, path) in (folder, name) of a row with a null `is_dir`
        raw = storage.bad_mtimes.get(finding.path) if finding.code == BAD_MTIME else None
        folder_col.append(finding.code)
        name_col.append(finding.path)
        size_col.append(0)
        mtime_col.append(None if raw is None else max(-(1 << 63), min(raw, (1 << 63) - 1)))
        dir_col.append(None)
    return pa.table(cols, schema=listing_schema())


def discover_partitions(
    spec: StorageSpec, executor: Executor | None = None, batch_size: int = LISTING_BATCH_SIZE,
    findings: list[Finding] | None = None, wanted: frozenset[str] | None = None,
) -> dict[str, ListedFiles]:
    """Find every partition and list its files, one tree level per executor round.

    A partition is a folder (not `.hoodie`) holding a `.hoodie_partition_metadata*` file; the base
    path itself is the partition ``""`` of a non-partitioned table. Like
    `FileSystemBackedTableMetadata.getAllPartitionPaths`, folders inside a partition are not
    searched further. Returns ``{partition: files}`` (files only, sorted by name), in partition order.

    `wanted`: only these partition paths. The walk then descends only through their ancestors, and
    a wanted path is a partition exactly when the whole walk would find it (it decides at each
    ancestor from that ancestor's listing alone): the same answer for them, without listing the rest.

    Every level stays Arrow columns (performance: a million files are never a million objects here).
    """
    found: list[Any] = []  # each batch's rows of partition files
    frontier = [""]
    on_disk = local_root(spec.uri, dict(spec.options)) is not None
    local = executor is None or on_disk
    while frontier:
        # A level of local folders below the executor's Spark threshold is listed in this thread, without
        # the Arrow round trip a batch makes (`inline_if_local`: 0.3 s of 1.3 s on 100k files).
        inline = executor is None or (local and getattr(executor, "name", None) == "spark"
                                      and len(frontier) < getattr(executor, "min_items", 0))
        if (inline or executor is None) and on_disk and len(frontier) >= PROCESS_LISTING_MIN_FOLDERS \
                and cpu_workers(len(frontier)) >= 2:
            batches = _list_level_in_processes(spec, frontier, findings)
        elif inline or executor is None:
            batches = iter([_list_level_inline(spec, frontier, findings)])
        else:
            batches = iter([_list_level(spec, frontier, executor, batch_size, findings)])
        next_frontier: list[str] = []
        for batch in batches:  # each batch's partition files kept, the rest let go as the next one comes
            rows = _split_level(batch, wanted, next_frontier)
            if rows is not None:
                found.append(rows)
        if wanted is not None:
            next_frontier = [f for f in next_frontier if _leads_to(f, wanted)]
        frontier = sorted(next_frontier)
    return _partitions_of(found)


def _split_level(level: pa.Table, wanted: frozenset[str] | None, next_frontier: list[str]) -> pa.Table | None:
    """The rows (folder dictionary-encoded, name, size, mtime_ms) of the files of partitions in listing rows of
    whole folders; the folders to walk next appended to `next_frontier`."""
    is_dir = level.column("is_dir")
    is_file = pc.invert(is_dir)
    names, folders = level.column("name"), level.column("folder")
    marked = pc.and_(is_file, pc.starts_with(names, PARTITION_METAFILE_PREFIX))
    with_metafile = set(pc.unique(folders.filter(marked)).to_pylist())
    dirs = level.filter(pc.and_(is_dir, pc.not_equal(names, METAFOLDER_NAME)))
    next_frontier.extend(posixpath.join(folder, name) if folder else name
                         for folder, name in zip(dirs.column("folder").to_pylist(), dirs.column("name").to_pylist(),
                                                 strict=True) if folder not in with_metafile)
    here = with_metafile if wanted is None else with_metafile & wanted  # unwanted: neither listed nor walked
    if not here:
        return None
    rows = level.filter(pc.and_(is_file, pc.is_in(folders, value_set=pa.array(sorted(here), pa.string()))))
    # Sorted here, a batch at a time: batches come in folder order, so the whole listing is then usually in order
    # without a sorted copy of a million rows.
    rows = rows.sort_by([("folder", "ascending"), ("name", "ascending")])
    return pa.table({"folder": pc.dictionary_encode(rows.column("folder")), "name": rows.column("name"),
                     "size": rows.column("size"), "mtime_ms": rows.column("mtime_ms")})


def _partitions_of(found: list[pa.Table]) -> dict[str, ListedFiles]:
    """``{partition: files}`` of listing rows (folder, name, size, mtime_ms), partitions and names in order
    (Arrow's byte order of UTF-8 is Python's code-point order), each partition a slice of one sorted table.
    Each table of `found` is sorted by (folder, name), and holds a folder's rows whole."""
    import numpy as np

    found = [t for t in found if t.num_rows]
    if not found:
        return {}
    chunks = []
    for table in found:
        folder = table.column("folder")
        if not pa.types.is_dictionary(folder.type):
            folder = pc.dictionary_encode(folder)
        chunks.extend(folder.chunks)
    order = sorted({f for chunk in chunks for f in chunk.dictionary.to_pylist()})
    rank_of = {f: k for k, f in enumerate(order)}
    # Sorted by (folder rank, name): one sort of a million names, not of a million folder strings beside them.
    ranks = np.concatenate([np.array([rank_of[f] for f in chunk.dictionary.to_pylist()], dtype=np.int32)[
        chunk.indices.to_numpy(zero_copy_only=False)] for chunk in chunks])
    files = pa.concat_tables([t.select(["name", "size", "mtime_ms"]) for t in found])
    del found, chunks
    # Each batch is sorted by (folder, name) and a folder is never split across batches: in folder order (one
    # tree level, the usual case) the whole is sorted; partitions found on several levels are sorted here.
    if len(ranks) > 1 and not bool(np.all(ranks[1:] >= ranks[:-1])):
        index = pc.sort_indices(pa.table({"rank": ranks, "name": files.column("name")}),
                                [("rank", "ascending"), ("name", "ascending")])
        files = files.take(index)
        ranks = ranks[index.to_numpy()]
    if files.column("size").null_count:  # a store that gave no size: 0, as Hudi's FileStatus has it
        files = files.set_column(1, "size", pc.fill_null(files.column("size"), 0))
    bounds = np.searchsorted(ranks, np.arange(len(order) + 1, dtype=np.int32))
    release_arrow_memory()
    return {folder: ListedFiles(files.slice(int(bounds[k]), int(bounds[k + 1] - bounds[k])))
            for k, folder in enumerate(order)}


def metadata_partitions_from_config(
    listing: dict[str, ListedFiles], configured: Sequence[str], inflight: Sequence[str],
    storage: ReadOnlyStorage, executor: Executor | None, batch_size: int, findings: list[Finding],
) -> dict[str, ListedFiles]:
    """A metadata table's partitions as its data table's config names them (spec `06` §2).

    Hudi's metadata reader takes the partitions from `hoodie.table.metadata.partitions` (and
    `.inflight` while an index is built), not from `.hoodie_partition_metadata` files, which a real
    1.1 `column_stats` folder lacks. Such a folder is listed here too; every place where the config
    and storage disagree becomes a finding. Partitions found on storage but not named by the config
    stay listed (they are on storage), with a warning that Hudi's reader ignores them.
    """
    named = list(dict.fromkeys([*configured, *inflight]))
    unlisted = [p for p in named if p not in listing]
    out = dict(listing)
    if unlisted:
        rows = run_batches(executor, list_folders_batch, storage.spec, unlisted, batch_size, listing_schema())
        files = _partitions_of([rows.filter(pc.equal(rows.column("is_dir"), False))
                                .select(["folder", "name", "size", "mtime_ms"])
                                .sort_by([("folder", "ascending"), ("name", "ascending")])])
        for partition in unlisted:
            key = "hoodie.table.metadata.partitions" + (".inflight" if partition not in configured else "")
            if partition in files:
                out[partition] = files[partition]
                findings.append(Finding(
                    Severity.INFO, "metadata_partition_without_partition_metadata", storage.uri_of(partition),
                    f"metadata-table partition {partition} has no {PARTITION_METAFILE_PREFIX} file; listed because "
                    f"the data table's {key} names it, as Hudi's metadata reader does"))
            else:
                findings.append(Finding(
                    Severity.WARNING, "metadata_partition_missing", storage.uri_of(partition),
                    f"the data table's {key} names metadata-table partition {partition}, but storage has no file "
                    "there"))
    if not named and listing:
        findings.append(Finding(
            Severity.WARNING, "metadata_partitions_not_in_table_config", storage.uri,
            "the data table's hoodie.table.metadata.partitions is empty (metadata table disabled or being "
            f"deleted), yet storage holds metadata-table partitions {', '.join(sorted(listing))}: Hudi's metadata "
            "reader ignores them"))
    elif named:
        for partition in sorted(p for p in listing if p not in named):
            findings.append(Finding(
                Severity.WARNING, "metadata_partition_not_in_table_config", storage.uri_of(partition),
                f"storage holds metadata-table partition {partition}, but the data table's "
                "hoodie.table.metadata.partitions (and .inflight) does not name it: Hudi's metadata reader ignores it"))
    for partition in inflight:
        if partition in out and partition not in configured:
            findings.append(Finding(
                Severity.INFO, "metadata_partition_inflight", storage.uri_of(partition),
                f"metadata-table partition {partition} is being built (hoodie.table.metadata.partitions.inflight)"))
    return dict(sorted(out.items()))


def _leads_to(folder: str, wanted: frozenset[str]) -> bool:
    """Whether `folder` is one of `wanted` or an ancestor of one."""
    prefix = folder + "/"
    return folder in wanted or any(w.startswith(prefix) for w in wanted)


def _list_level_inline(spec: StorageSpec, folders: list[str], findings: list[Finding] | None) -> pa.Table:
    """One tree level listed in this thread, by the batch function itself: the same rows and findings as a batch
    listed on an executor or in a worker process."""
    return _level_rows(list_folders_batch(spec, folders), findings)


def _listing_finding(code: str, shown: str, mtime_ms: int | None = None) -> Finding:
    """The finding for a listed entry the view skips (a name that is not UTF-8, a FIFO/device/socket), or
    for a file listed with its modification time unknown (`mtime_ms`: the time storage gave)."""
    if code == BAD_MTIME:
        return bad_mtime_finding(shown, mtime_ms)
    if code == "undecodable_file_name":
        return Finding(Severity.WARNING, code, shown, f"file name {shown} is not valid UTF-8; "
                       "skipped (no Hudi file has such a name, so it is in no file slice)")
    return Finding(Severity.ERROR, code, shown, f"{shown} is not a regular file (FIFO, device or socket): skipped")


def _list_level(spec: StorageSpec, folders: list[str], executor: Executor, batch_size: int,
                findings: list[Finding] | None) -> pa.Table:
    """One tree level listed through the executor (threads or Spark tasks), as listing rows."""
    return _level_rows(run_batches(executor, list_folders_batch, spec, folders, batch_size, listing_schema()),
                       findings)


def _list_level_in_processes(spec: StorageSpec, folders: list[str], findings: list[Finding] | None
                             ) -> Iterator[pa.Table]:
    """One tree level of local folders listed in worker processes, a share of the folders each, as listing rows a
    batch at a time (the same entries and findings as in this thread)."""
    workers = cpu_workers(len(folders))
    batch = max(1, -(-len(folders) // (workers * 8)))  # several batches a worker: an even share if folders differ
    for table in cpu_batch_results(list_folders_batch, spec, folders, batch):
        yield _level_rows(table, findings)


def _level_rows(table: pa.Table, findings: list[Finding] | None) -> pa.Table:
    """:func:`list_folders_batch` rows without the rows that carry a finding (a null `is_dir`), reported."""
    bad = pc.is_null(table.column("is_dir"))
    if pc.any(bad).as_py():
        skipped = table.filter(bad)
        if findings is not None:
            for code, shown, mtime_ms in zip(skipped.column("folder").to_pylist(), skipped.column("name").to_pylist(),
                                             skipped.column("mtime_ms").to_pylist(), strict=True):
                findings.append(_listing_finding(code, shown, mtime_ms))
        table = table.filter(pc.invert(bad))
    return table


class StorageListing:
    """The table's files as storage holds them (`FileSystemBackedTableMetadata`).

    For a metadata table opened as a table, `metadata_partitions` (and `metadata_partitions_inflight`)
    are its data table's `hoodie.table.metadata.partitions` (`.inflight`): the partitions Hudi's
    metadata reader takes (:func:`metadata_partitions_from_config`); ``None`` lists storage only.
    """

    kind = ListingKind.STORAGE

    def __init__(self, storage: ReadOnlyStorage, executor: Executor | None, batch_size: int = LISTING_BATCH_SIZE,
                 metadata_partitions: Sequence[str] | None = None, metadata_partitions_inflight: Sequence[str] = (),
                 reason: str = "") -> None:
        self.storage = storage
        self.executor = executor
        self.batch_size = batch_size
        self.metadata_partitions = metadata_partitions
        self.metadata_partitions_inflight = metadata_partitions_inflight
        self.reason = reason
        self._whole: Listing | None = None
        self._prefetch: Any = None

    def prefetch(self) -> None:
        """Start the whole listing in a background thread (its folders listed in worker processes where that
        pays, see :data:`PROCESS_LISTING_MIN_FOLDERS`), so this thread can read something else meanwhile (the
        metadata table it is compared with); :meth:`list` takes it. Local storage only."""
        if self._whole is not None or self._prefetch is not None or not self.storage.is_local:
            return
        from concurrent.futures import ThreadPoolExecutor

        pool = ThreadPoolExecutor(1, thread_name_prefix="storage-listing")
        self._prefetch = pool.submit(self._list, None)
        pool.shutdown(wait=False)

    def forget(self) -> None:
        """Let the whole listing go (a million files are 100 MB of columns), its pages handed back to the system
        for what comes next; a later :meth:`list` lists again."""
        if self._whole is not None:
            self._whole = None
            release_arrow_memory()

    def list(self, wanted: frozenset[str] | None = None) -> Listing:
        """The listing (the whole one is made once per source and kept: views and checks share it)."""
        if self.metadata_partitions is not None:
            wanted = None  # the config decides a metadata table's partitions: list them all
        if self._prefetch is not None and (wanted is None or self.metadata_partitions is None):
            pending, self._prefetch = self._prefetch, None
            self._whole = pending.result()  # its error, if it failed, is this call's
        if wanted is None and self._whole is not None:
            # The same files; the reason is this source's now (a view asked for with --listing storage).
            return dataclasses.replace(self._whole, reason=self.reason)
        listing = self._list(wanted)
        if wanted is None:
            self._whole = listing
        return listing

    def _list(self, wanted: frozenset[str] | None) -> Listing:
        findings: list[Finding] = []
        executor = inline_if_local(self.executor, self.storage)
        partitions = discover_partitions(self.storage.spec, executor, self.batch_size, findings, wanted)
        if self.metadata_partitions is not None:
            partitions = metadata_partitions_from_config(
                partitions, self.metadata_partitions, self.metadata_partitions_inflight, self.storage, executor,
                self.batch_size, findings)
        return Listing(self.kind, partitions, findings, reason=self.reason)
