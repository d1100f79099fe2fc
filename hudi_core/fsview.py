"""The file-system view: partitions, file groups and file slices of a table (spec `01` §6).

Emulates the reader of Hudi 1.1.x (`AbstractTableFileSystemView`, `HoodieFileGroup`), strictly
read-only: partitions are listed once through the executor, every file in a partition is classified
(base file of the table's format, log file, partition metafile, or *unexpected*), and file groups
are built with the rules of the table version:

* **v6/v7** place a log file in the slice named by its embedded base instant;
* **v8+** place it by completion time (`HoodieFileGroup.getBaseInstantTime`).

Ordering conventions (used by every type below):

* :attr:`FileGroup.slices` is **newest first**, like Hudi's reverse-ordered `TreeMap` of slices;
* :attr:`FileSlice.log_files` is **oldest first** (`HoodieLogFile.getLogFileComparator`: delta
  commit time, version, write token), the order a reader applies them in. Hudi's own `FileSlice`
  keeps them newest first; hudi-rs, like this module, oldest first.

Views offered (each takes an optional partition filter):

* :meth:`FileSystemView.latest_slices` — `getLatestFileSlices`, or `getLatestFileSlicesBeforeOrOn`
  with ``as_of`` (time travel);
* :meth:`FileSystemView.latest_merged_slices` — `getLatestMergedFileSlicesBeforeOrOn` (snapshot read
  across a pending compaction);
* :meth:`FileSystemView.latest_base_files` — `getLatestBaseFiles[BeforeOrOn]` (hides base files of
  pending compaction and pending clustering);
* :meth:`FileSystemView.all_slices` / :meth:`FileSystemView.file_groups` — committed slices;
* :meth:`FileSystemView.replaced_file_groups` and friends — `resetFileGroupsReplaced`;
* :meth:`FileSystemView.savepoint_pins` — files named by completed savepoints.
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hudi_core.errors import Finding, Severity, StorageError
from hudi_core.filenames import (
    PARTITION_METAFILE_PREFIX,
    LogFileName,
    base_file_parts,
    parse_base_file_name,
    parse_log_file_name,
)
from hudi_core.lazy import LazyModule, lazy_constants
from hudi_core.pipeline.executor import Executor, run_batches
from hudi_core.storage import ReadOnlyStorage, StorageSpec, inline_if_local
from hudi_core.timeline import instant as ia
from hudi_core.timeline.active import ActiveTimeline, Timeline
from hudi_core.timeline.bulk import paused_gc
from hudi_core.timeline.instant import Instant, State
from hudi_core.timeline.records import CompactionPlan, RequestedReplaceMetadata, SavepointMetadata

pa: Any = LazyModule("pyarrow")
pc: Any = LazyModule("pyarrow.compute")

#: `(partition path, file id)`: Hudi's `HoodieFileGroupId`.
FileGroupId = tuple[str, str]

#: The folder Hudi never looks for partitions in (`HoodieTableMetaClient.METAFOLDER_NAME`).
METAFOLDER_NAME = ".hoodie"

@functools.cache
def listing_schema() -> pa.Schema:
    """Rows returned by :func:`list_folders_batch`: one per directory entry (also `LISTING_SCHEMA`)."""
    return pa.schema([("folder", pa.string()), ("name", pa.string()), ("size", pa.int64()),
                      ("mtime_ms", pa.int64()), ("is_dir", pa.bool_())])


#: Folders listed per executor batch.
LISTING_BATCH_SIZE = 32

# `HoodieTimeline.DEFAULT_MILLIS_EXT`: 17-digit times ending in it also match their 14-digit form.
_DEFAULT_MILLIS_EXT = "999"


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
    # Names that are not UTF-8 were skipped by the storage (issue 16); they travel as rows with a null
    # `is_dir` and the printable name, so the driver can report them wherever the batch ran.
    for finding in storage.findings:  # (code, path) in (folder, name) of a row with a null `is_dir`
        folder_col.append(finding.code), name_col.append(finding.path), size_col.append(0)
        mtime_col.append(None), dir_col.append(None)
    return pa.table(cols, schema=listing_schema())


@dataclass(frozen=True, slots=True)  # slots: one per file, a million at scale
class ListedFile:
    """One file found in a partition folder (name, size in bytes, modification time)."""

    name: str
    size: int
    mtime_ms: int | None = None


def discover_partitions(
    spec: StorageSpec, executor: Executor | None = None, batch_size: int = LISTING_BATCH_SIZE,
    findings: list[Finding] | None = None, wanted: frozenset[str] | None = None,
) -> dict[str, list[ListedFile]]:
    """Find every partition and list its files, one tree level per executor round.

    A partition is a folder (not `.hoodie`) holding a `.hoodie_partition_metadata*` file; the base
    path itself is the partition ``""`` of a non-partitioned table. Like
    `FileSystemBackedTableMetadata.getAllPartitionPaths`, folders inside a partition are not
    searched further. Returns ``{partition: files}`` (files only, sorted by name).

    `wanted`: only these partition paths. The walk then descends only through their ancestors, and
    a wanted path is a partition exactly when the whole walk would find it (it decides at each
    ancestor from that ancestor's listing alone): the same answer for them, without listing the rest.
    """
    partitions: dict[str, list[ListedFile]] = {}
    frontier = [""]
    while frontier:
        if executor is None:
            listed = _list_level_inline(spec, frontier, findings)
        else:
            listed = _list_level(spec, frontier, executor, batch_size, findings)
        next_frontier: list[str] = []
        for folder in frontier:
            f_names, f_sizes, f_mtimes, f_dirs = listed.get(folder, ((), (), (), ()))
            if any(not is_dir and str(name).startswith(PARTITION_METAFILE_PREFIX)
                   for name, is_dir in zip(f_names, f_dirs, strict=True)):
                if wanted is not None and folder not in wanted:
                    continue  # a partition on the way to none of the wanted ones
                partitions[folder] = sorted(
                    [ListedFile(str(name), int(size or 0), mtime_ms)
                     for name, size, mtime_ms, is_dir in zip(f_names, f_sizes, f_mtimes, f_dirs, strict=True)
                     if not is_dir],
                    key=_listed_name,
                )
                continue
            for name, is_dir in zip(f_names, f_dirs, strict=True):
                if is_dir and name != METAFOLDER_NAME:
                    next_frontier.append(posixpath.join(folder, str(name)) if folder else str(name))
        if wanted is not None:
            next_frontier = [f for f in next_frontier if _leads_to(f, wanted)]
        frontier = sorted(next_frontier)
    return dict(sorted(partitions.items()))


def metadata_partitions_from_config(
    listing: dict[str, list[ListedFile]], configured: Sequence[str], inflight: Sequence[str],
    storage: ReadOnlyStorage, executor: Executor | None, batch_size: int, findings: list[Finding],
) -> dict[str, list[ListedFile]]:
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
        files: dict[str, list[ListedFile]] = {}
        for folder, name, size, mtime_ms, is_dir in zip(*(rows.column(c).to_pylist() for c in listing_schema().names),
                                                      strict=True):
            if is_dir is False:
                files.setdefault(folder, []).append(ListedFile(str(name), int(size or 0), mtime_ms))
        for partition in unlisted:
            key = "hoodie.table.metadata.partitions" + (".inflight" if partition not in configured else "")
            if files.get(partition):
                out[partition] = sorted(files[partition], key=_listed_name)
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


_Columns = tuple[Sequence[Any], Sequence[Any], Sequence[Any], Sequence[Any]]


def _leads_to(folder: str, wanted: frozenset[str]) -> bool:
    """Whether `folder` is one of `wanted` or an ancestor of one."""
    prefix = folder + "/"
    return folder in wanted or any(w.startswith(prefix) for w in wanted)


def _list_level_inline(spec: StorageSpec, folders: list[str],
                       findings: list[Finding] | None) -> dict[str, _Columns]:
    """One tree level listed in this thread: each folder's (names, sizes, mtimes, is_dir) columns
    straight from the storage, without the Arrow round trip a batch makes to travel between
    processes (a fifth of the listing on 100k files, issue 11)."""
    storage = spec.open()
    out: dict[str, _Columns] = {}
    for folder in folders:
        entries = storage.list_entries(folder)
        if entries:
            out[folder] = tuple(zip(*entries, strict=True))  # type: ignore[assignment]
    if findings is not None:
        for finding in storage.findings:
            findings.append(_listing_finding(finding.code, finding.path))
    return out


def _listing_finding(code: str, shown: str) -> Finding:
    """The finding for a listed entry the view skips (a name that is not UTF-8, a FIFO/device/socket)."""
    if code == "undecodable_file_name":
        return Finding(Severity.WARNING, code, shown, f"file name {shown} is not valid UTF-8; "
                       "skipped (no Hudi file has such a name, so it is in no file slice)")
    return Finding(Severity.ERROR, code, shown, f"{shown} is not a regular file (FIFO, device or socket): skipped")


def _list_level(spec: StorageSpec, folders: list[str], executor: Executor, batch_size: int,
                findings: list[Finding] | None) -> dict[str, _Columns]:
    """One tree level listed through the executor (threads or Spark tasks), as per-folder columns."""
    table = run_batches(executor, list_folders_batch, spec, folders, batch_size, listing_schema())
    bad = pc.is_null(table.column("is_dir"))
    if pc.any(bad).as_py():
        skipped = table.filter(bad)
        if findings is not None:
            for code, shown in zip(skipped.column("folder").to_pylist(), skipped.column("name").to_pylist(),
                                   strict=True):
                findings.append(_listing_finding(code, shown))
        table = table.filter(pc.invert(bad))
    # Column-wise (performance: a million entries): each folder's rows are found as runs of equal
    # `folder` values (one run per folder, as every batch lists folder after folder).
    cols = table.to_pydict()
    names, sizes, mtimes, dirs = cols["name"], cols["size"], cols["mtime_ms"], cols["is_dir"]
    out: dict[str, _Columns] = {}
    for folder, spans in _folder_runs(table.column("folder"), cols["folder"]).items():
        if len(spans) == 1:
            (start, end), = spans
            out[folder] = (names[start:end], sizes[start:end], mtimes[start:end], dirs[start:end])
        else:
            out[folder] = tuple([v for a, b in spans for v in col[a:b]]  # type: ignore[assignment]
                                for col in (names, sizes, mtimes, dirs))
    return out


def _folder_runs(column: pa.ChunkedArray, values: list[str]) -> dict[str, list[tuple[int, int]]]:
    """`folder -> [(start, end), ...]`: the runs of equal values of the listing's `folder` column."""
    n = len(values)
    if n == 0:
        return {}
    arr = column.combine_chunks()
    change = pc.not_equal(arr.slice(1), arr.slice(0, n - 1))
    starts = [0, *(pc.indices_nonzero(change).to_numpy() + 1).tolist()]
    runs: dict[str, list[tuple[int, int]]] = {}
    for start, end in zip(starts, [*starts[1:], n], strict=True):
        runs.setdefault(values[start], []).append((start, end))
    return runs


def _join(partition: str, name: str) -> str:
    """`posixpath.join(partition, name) if partition else name`, without its overhead (hot at scale)."""
    if not partition or name.startswith("/"):
        return name
    return partition + name if partition.endswith("/") else f"{partition}/{name}"


def _listed_name(f: ListedFile) -> str:
    return f.name


# -- value types -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)  # slots: one per file, a million at scale
class BaseFile:
    """A base (columnar) file: `<fileId>_<writeToken>_<instant>.<ext>`; `instant_time` is a requested time."""

    name: str
    file_id: str
    instant_time: str
    size: int
    partition: str = ""

    @property
    def path(self) -> str:
        """Root-relative path."""
        return _join(self.partition, self.name)


@dataclass(frozen=True, slots=True)  # slots: one per file, a million at scale
class LogFile:
    """A log file: `.<fileId>_<instant>.log.<version>_<writeToken>`.

    `instant_time` is the embedded instant: the slice's base instant on v6, the writing delta
    commit's requested time on v8+ (Hudi calls it `getDeltaCommitTime` in both cases).
    """

    name: str
    file_id: str
    instant_time: str
    version: int
    write_token: str | None
    size: int
    partition: str = ""

    @property
    def path(self) -> str:
        """Root-relative path."""
        return _join(self.partition, self.name)

    def sort_key(self) -> tuple[str, int, str]:
        """`HoodieLogFile.LogFileComparator`: delta commit time, version, write token."""
        return (self.instant_time, self.version, self.write_token or "")

    @classmethod
    def of(cls, parsed: LogFileName, size: int, partition: str) -> LogFile:
        return cls(parsed.name, parsed.file_id, parsed.instant_time, parsed.version, parsed.write_token,
                   size, partition)


@dataclass(frozen=True, slots=True)  # slots: one per file, a million at scale
class FileSlice:
    """A base instant's slice of a file group: an optional base file and its log files (oldest first)."""

    partition: str
    file_id: str
    base_instant: str
    base_file: BaseFile | None = None
    log_files: tuple[LogFile, ...] = ()

    @property
    def file_group_id(self) -> FileGroupId:
        return (self.partition, self.file_id)

    @property
    def is_empty(self) -> bool:
        """No base file and no log file (a slice opened by a pending compaction, for instance)."""
        return self.base_file is None and not self.log_files

    @property
    def base_file_name(self) -> str | None:
        return self.base_file.name if self.base_file else None

    @property
    def log_file_names(self) -> list[str]:
        return [lf.name for lf in self.log_files]

    @property
    def file_names(self) -> list[str]:
        """Base file name (if any) then the log file names."""
        return ([self.base_file.name] if self.base_file else []) + self.log_file_names

    @property
    def total_size(self) -> int:
        return (self.base_file.size if self.base_file else 0) + sum(lf.size for lf in self.log_files)

    def with_files(self, base_file: BaseFile | None, log_files: Iterable[LogFile]) -> FileSlice:
        """A copy with other files (Hudi's `new FileSlice(...)` + `setBaseFile`/`addLogFile`)."""
        return FileSlice(self.partition, self.file_id, self.base_instant, base_file,
                         tuple(sorted(log_files, key=LogFile.sort_key)))


@dataclass(frozen=True, slots=True)  # slots: one per file, a million at scale
class FileGroup:
    """All slices of one file id in one partition.

    `slices` holds every slice found on storage, **newest first** (including slices of inflight or
    rolled-back writes); `committed_slices` the ones `HoodieFileGroup.isFileSliceCommitted` keeps,
    also newest first. `replaced_by` is the requested time of the completed replacecommit that
    replaced the group, if any.
    """

    partition: str
    file_id: str
    slices: tuple[FileSlice, ...]
    committed_slices: tuple[FileSlice, ...]
    replaced_by: str | None = None

    @property
    def file_group_id(self) -> FileGroupId:
        return (self.partition, self.file_id)

    @property
    def is_replaced(self) -> bool:
        return self.replaced_by is not None

    def latest_slice(self) -> FileSlice | None:
        """`HoodieFileGroup.getLatestFileSlice`: the newest committed slice."""
        return self.committed_slices[0] if self.committed_slices else None

    def slices_before_or_on(self, instant: str) -> list[FileSlice]:
        """`getAllFileSlicesBeforeOn`: committed slices with base instant ≤ `instant`, newest first."""
        return [s for s in self.committed_slices if s.base_instant <= instant]

    def latest_slice_before(self, instant: str) -> FileSlice | None:
        """`getLatestFileSliceBefore`: the newest committed slice with base instant < `instant`."""
        return next((s for s in self.committed_slices if s.base_instant < instant), None)

    def all_files(self) -> list[str]:
        """Names of every base and log file of the group on storage."""
        return [name for s in self.slices for name in s.file_names]


@dataclass(frozen=True)
class ReplacedFileGroup:
    """A file group named in `partitionToReplaceFileIds` of a completed replacecommit.

    `replace_instant` is the requested time of the replacing instant (the later one when several
    name the group, as `resetFileGroupsReplaced` keeps); `operation_type` its metadata's
    `operationType` (``CLUSTER``, ``INSERT_OVERWRITE``, …). `files_exist` says whether any base or
    log file of the group is still on storage (the cleaner removes them eventually); `file_names`
    lists them.
    """

    partition: str
    file_id: str
    replace_instant: str
    replace_completion_time: str | None
    operation_type: str | None
    pending_action: str
    files_exist: bool
    file_names: tuple[str, ...] = ()

    @property
    def file_group_id(self) -> FileGroupId:
        return (self.partition, self.file_id)


@dataclass(frozen=True)
class PendingFileGroupOperation:
    """A file group named by a pending compaction or clustering plan."""

    partition: str
    file_id: str
    instant_time: str
    action: str


@dataclass(frozen=True)
class SavepointPin:
    """A data file a completed savepoint names (`HoodieSavepointMetadata.partitionMetadata`)."""

    savepoint_time: str
    partition: str
    file_name: str
    exists: bool

    @property
    def path(self) -> str:
        return posixpath.join(self.partition, self.file_name) if self.partition else self.file_name


# -- the timeline facts the view needs ---------------------------------------------------------


class _TimelineFacts:
    """What `AbstractTableFileSystemView` and `CompletionTimeQueryView` read from the timeline."""

    def __init__(self, timeline: Timeline, table_version: int,
                 archived_completion_times: Mapping[str, str] | None = None) -> None:
        self.v8_plus = table_version >= 8
        # Visible timeline: `filterCompletedAndCompactionInstants().getWriteTimeline()`.
        visible = timeline.completed_and_pending_compaction().write_timeline()
        self.visible_times = {i.requested_time for i in visible}
        self.visible_first = _first_non_savepoint_time(visible)
        last = visible.last()
        self.visible_last = last.requested_time if last else None
        # CompletionTimeQueryViewV1/V2: completed instants of the active timeline (any action);
        # anything before the first write instant counts as archived, hence completed.
        self.completion: dict[str, str] = dict(archived_completion_times or {})
        for inst in timeline:
            if inst.is_completed and inst.completion_time:
                self.completion.setdefault(inst.requested_time, inst.completion_time)
        self.archived_before = _first_non_savepoint_time(timeline.write_timeline())
        self.archived_completion_times = dict(archived_completion_times or {})

    def contains_or_before_start(self, ts: str) -> bool:
        """`HoodieTimeline.containsOrBeforeTimelineStarts` on the visible timeline."""
        if ts in self.visible_times:
            return True
        # `containsInstant`: a 17-digit time ending in the default millis also matches 14 digits.
        if len(ts) == 17 and ts.endswith(_DEFAULT_MILLIS_EXT) and ts[:14] in self.visible_times:
            return True
        return self.visible_first is not None and ts < self.visible_first

    def is_slice_committed(self, base_instant: str) -> bool:
        """`HoodieFileGroup.isFileSliceCommitted`."""
        if self.visible_last is None or base_instant > self.visible_last:
            return False
        return self.contains_or_before_start(base_instant)

    def is_archived(self, instant: str) -> bool:
        """`CompletionTimeQueryView.isArchived`: before the first write instant of the active timeline."""
        return self.archived_before is not None and instant < self.archived_before

    def is_completed(self, instant: str) -> bool:
        """`CompletionTimeQueryView.isCompleted`."""
        return instant in self.completion or self.is_archived(instant)

    def completion_time(self, base_instant: str, instant: str) -> str | None:
        """`CompletionTimeQueryView.getCompletionTime(baseInstant, instantTime)`; ``None`` = pending.

        Archived instants are read from `archived_completion_times` when given, else taken as
        completed at their requested time (the archived timeline is not read here).
        """
        ct = self.completion.get(instant)
        if ct is None and self.is_archived(instant):
            ct = instant
        if ct is not None and len(ct) != len(base_instant):
            # Legacy fix in `getCompletionTime`: instant times of another length than the base
            # instant (tests, old tables) use the instant time itself.
            return instant
        return ct


def _first_non_savepoint_time(timeline: Timeline) -> str | None:
    """`findFirstNonSavepointCommit`: the first instant whose time is not a savepoint's time."""
    savepoint_times = {i.requested_time for i in timeline if i.action == ia.SAVEPOINT}
    for inst in timeline:
        if inst.requested_time not in savepoint_times:
            return inst.requested_time
    return None


# -- building file groups ------------------------------------------------------------------------


def build_file_groups(
    partition: str,
    base_files: Iterable[BaseFile],
    log_files: Iterable[LogFile],
    facts: _TimelineFacts,
    pending_compaction: Mapping[FileGroupId, str],
    replaced: Mapping[FileGroupId, str] | None = None,
) -> list[FileGroup]:
    """`AbstractTableFileSystemView.buildFileGroups` for one partition, sorted by file id."""
    bases: dict[str, list[BaseFile]] = {}
    for bf in base_files:
        bases.setdefault(bf.file_id, []).append(bf)
    logs: dict[str, list[LogFile]] = {}
    for lf in log_files:
        logs.setdefault(lf.file_id, []).append(lf)
    groups = []
    replaced = replaced or {}
    no_files: list[LogFile] = []
    for file_id in sorted(set(bases) | set(logs)):
        slice_base: dict[str, BaseFile | None] = {}
        slice_logs: dict[str, list[LogFile]] = {}
        group_bases = bases.get(file_id, no_files)
        if len(group_bases) > 1:
            group_bases = sorted(group_bases, key=_base_order)
        for bf in group_bases:
            # `addBaseFile`: one slice per base instant (a second base file at one instant wins).
            slice_base[bf.instant_time] = bf
            slice_logs.setdefault(bf.instant_time, [])
        pending = pending_compaction.get((partition, file_id))
        if pending is not None and pending not in slice_base:
            # `addNewFileSliceAtInstant`, before the logs (1.x) so logs completed after the
            # compaction was requested land in the compaction's slice.
            slice_base[pending] = None
            slice_logs.setdefault(pending, [])
        group_logs = logs.get(file_id, no_files)
        if len(group_logs) > 1:
            group_logs = sorted(group_logs, key=LogFile.sort_key)
        keys_newest_first: list[str] = []
        for lf in group_logs:
            if facts.v8_plus and len(keys_newest_first) != len(slice_base):
                # The slice keys, newest first (re-sorted only when a log opened a new slice).
                keys_newest_first = sorted(slice_base, reverse=True)
            key = _log_slice_key(lf, keys_newest_first, facts)
            slice_base.setdefault(key, None)
            slice_logs.setdefault(key, []).append(lf)
        keys = sorted(slice_base, reverse=True) if len(slice_base) > 1 else list(slice_base)
        slices = tuple(
            FileSlice(partition, file_id, key, slice_base[key], tuple(slice_logs.get(key, ())))
            for key in keys
        )
        committed = tuple(s for s in slices if facts.is_slice_committed(s.base_instant))
        groups.append(FileGroup(partition, file_id, slices, committed, replaced.get((partition, file_id))))
    return groups


def _base_order(b: BaseFile) -> tuple[str, str]:
    return (b.instant_time, b.name)


def _log_slice_key(log: LogFile, keys_newest_first: list[str], facts: _TimelineFacts) -> str:
    """Which slice a log file joins.

    v6: the embedded instant is the base instant. v8+: `HoodieFileGroup.getBaseInstantTime`.
    """
    if not facts.v8_plus:
        return log.instant_time
    if not keys_newest_first:
        return log.instant_time
    completion = facts.completion_time(keys_newest_first[0], log.instant_time)
    if completion is None:
        # The delta commit is still pending: it always belongs to the latest slice.
        return keys_newest_first[0]
    for key in keys_newest_first:
        if completion >= key:
            return key
    return log.instant_time


# -- the view --------------------------------------------------------------------------------------


@dataclass
class FileSystemView:
    """The file-system view of one table over its active timeline.

    Build it with :meth:`build` (or `HudiTable.fs_view()`). All query methods return new lists; the
    view itself does not change after building. `findings` lists unexpected files in partitions
    and plan/metadata problems the view ran into.
    """

    table_version: int
    base_file_format: str
    partitions: list[str]
    groups: dict[FileGroupId, FileGroup]
    facts: _TimelineFacts = field(repr=False)
    pending_compaction: dict[FileGroupId, str] = field(default_factory=dict)
    pending_clustering: dict[FileGroupId, str] = field(default_factory=dict)
    pending_clustering_instants: frozenset[str] = frozenset()
    replaced: dict[FileGroupId, ReplacedFileGroup] = field(default_factory=dict)
    savepoints: list[SavepointPin] = field(default_factory=list)
    cdc_log_files: list[str] = field(default_factory=list)
    partition_files: dict[str, list[ListedFile]] = field(default_factory=dict, repr=False)
    findings: list[Finding] = field(default_factory=list)
    #: File groups a completed replacecommit with an unreadable body may have replaced (group → that
    #: instant): neither live nor known replaced (issue 16), so never shown as latest slices.
    unknown_replaced: dict[FileGroupId, str] = field(default_factory=dict)

    # -- building ---------------------------------------------------------------------------------

    @classmethod
    def build(cls, storage: ReadOnlyStorage, timeline: ActiveTimeline, table_version: int, base_file_format: str,
              executor: Executor, archived_completion_times: Mapping[str, str] | None = None,
              batch_size: int = LISTING_BATCH_SIZE, metadata_partitions: Sequence[str] | None = None,
              metadata_partitions_inflight: Sequence[str] = (), replaced_only: bool = False) -> FileSystemView:
        """List the table's partitions (through `executor`) and build every file group.

        `archived_completion_times` (requested → completion time) may come from the archived
        timeline; without it archived delta commits count as completed at their requested time.
        For a metadata table, `metadata_partitions` (and `metadata_partitions_inflight`) are its data
        table's `hoodie.table.metadata.partitions` (`.inflight`): the partitions Hudi's metadata reader
        takes (`metadata_partitions_from_config`); ``None`` lists partitions from storage only.

        `replaced_only`: a view whose replaced file groups (:meth:`replaced_file_groups`) are the whole
        view's, listing only the partitions replacecommits name (none when there is no replacecommit):
        for the markers, which need nothing else. It lists everything where that cannot be exact (an
        unreadable replacecommit, whose groups are judged against every group; a metadata table).
        """
        with paused_gc():
            listing_findings: list[Finding] = []
            executor = inline_if_local(executor, storage)
            wanted = (_replaced_partitions(timeline, table_version, archived_completion_times)
                      if replaced_only and metadata_partitions is None else None)
            listing = discover_partitions(storage.spec, executor, batch_size, listing_findings, wanted)
            if metadata_partitions is not None:
                listing = metadata_partitions_from_config(listing, metadata_partitions, metadata_partitions_inflight,
                                                          storage, executor, batch_size, listing_findings)
            view = cls.from_listing(listing, timeline, table_version, base_file_format, storage=storage,
                                    archived_completion_times=archived_completion_times)
            view.findings[:0] = listing_findings
            return view

    @classmethod
    def from_listing(
        cls,
        listing: Mapping[str, Iterable[ListedFile]],
        timeline: ActiveTimeline,
        table_version: int,
        base_file_format: str,
        storage: ReadOnlyStorage | None = None,
        archived_completion_times: Mapping[str, str] | None = None,
    ) -> FileSystemView:
        """Build from an already made listing ``{partition: files}`` and the active timeline."""
        findings: list[Finding] = []
        storage = storage or timeline.storage
        facts = _TimelineFacts(timeline, table_version, archived_completion_times)
        pending_compaction = _pending_compaction_ops(timeline, storage, findings)
        clustering_instants, pending_clustering = _pending_clustering(timeline)
        replace_map = _replaced_file_group_instants(timeline, facts)
        ext = "." + base_file_format.lower()

        groups: dict[FileGroupId, FileGroup] = {}
        cdc: list[str] = []
        files_by_partition = {p: list(fs) for p, fs in listing.items()}
        replaced_by_partition: dict[str, dict[FileGroupId, str]] = {}
        for k, v in replace_map.items():
            replaced_by_partition.setdefault(k[0], {})[k] = v[0]
        shared: dict[str, str] = {}
        for partition, files in files_by_partition.items():
            bases, logs = _classify_files(partition, files, ext, storage, findings, cdc, shared)
            replaced_here = replaced_by_partition.get(partition, {})
            for group in build_file_groups(partition, bases, logs, facts, pending_compaction, replaced_here):
                groups[group.file_group_id] = group

        replaced = {
            fg_id: _replaced_entry(fg_id, inst, op, groups, files_by_partition, storage, ext)
            for fg_id, (_, inst, op) in sorted(replace_map.items())
        }
        unknown = _unknown_replaced_groups(timeline, facts, groups, replace_map, storage, findings)
        view = cls(
            table_version=table_version,
            base_file_format=base_file_format,
            partitions=sorted(files_by_partition),
            groups=dict(sorted(groups.items())),
            facts=facts,
            pending_compaction=pending_compaction,
            pending_clustering=pending_clustering,
            pending_clustering_instants=frozenset(clustering_instants),
            replaced=replaced,
            cdc_log_files=cdc,
            partition_files=files_by_partition,
            findings=findings,
            unknown_replaced=unknown,
        )
        view.savepoints = _savepoint_pins(timeline, files_by_partition)
        return view

    # -- helpers ------------------------------------------------------------------------------------

    @property
    def is_v8_plus(self) -> bool:
        """Table version 8 or later: completion-time slicing and `filterUncommittedFiles`."""
        return self.table_version >= 8

    def _groups_in(self, partition: str | None) -> list[FileGroup]:
        if partition is None:
            return list(self.groups.values())
        # Performance: the cleaner asks once per partition; an index keeps that linear, not
        # partitions x groups. Rebuilt if `groups` is replaced or changes size.
        index = self.__dict__.get("_partition_index")
        if index is None or index[0] is not self.groups or index[1] != len(self.groups):
            by_partition: dict[str, list[FileGroup]] = {}
            for g in self.groups.values():
                by_partition.setdefault(g.partition, []).append(g)
            index = (self.groups, len(self.groups), by_partition)
            self.__dict__["_partition_index"] = index
        return list(index[2].get(partition, ()))

    def _replaced_on_or_before(self, fg_id: FileGroupId, instant: str | None) -> bool:
        """`isFileGroupReplaced` (instant ``None``) or `isFileGroupReplacedBeforeOrOn`."""
        entry = self.replaced.get(fg_id)
        if entry is None:
            unknown = self.unknown_replaced.get(fg_id)
            return unknown is not None and (instant is None or unknown <= instant)
        return instant is None or entry.replace_instant <= instant

    def _replaced_by(self, fg_id: FileGroupId) -> str | None:
        entry = self.replaced.get(fg_id)
        return entry.replace_instant if entry is not None else self.unknown_replaced.get(fg_id)

    def _filter_uncommitted(self, s: FileSlice, include_empty: bool) -> FileSlice | None:
        """`filterUncommittedFiles` (v8+): keep the files whose writing instant has completed."""
        def visible(t: str) -> bool:
            # Completed *now* (`CompletionTimeQueryView.isCompleted`), not "completed by `as_of`": Hudi
            # keeps later delta commits' log files in a time-travel slice and its log reader skips
            # their blocks by instant time. hudi-rs does the same.
            return self.facts.is_completed(t)

        base = s.base_file if s.base_file is not None and visible(s.base_instant) else None
        logs = [lf for lf in s.log_files if visible(lf.instant_time)]
        out = s if base is s.base_file and len(logs) == len(s.log_files) else s.with_files(base, logs)
        return None if out.is_empty and not include_empty else out

    def _filter_base_after_pending_compaction(self, s: FileSlice, include_empty: bool) -> FileSlice | None:
        """`filterBaseFileAfterPendingCompaction` (v6): hide the partial base file of a pending compaction."""
        if self.pending_compaction.get(s.file_group_id) == s.base_instant:
            out = s.with_files(None, s.log_files)
            return None if out.is_empty and not include_empty else out
        return s

    def _filter_uncommitted_logs(self, s: FileSlice) -> FileSlice:
        """`filterUncommittedLogs` (v8+ merged reads): drop logs of delta commits still pending."""
        logs = [lf for lf in s.log_files if self.facts.is_completed(lf.instant_time)]
        return s if len(logs) == len(s.log_files) else s.with_files(s.base_file, logs)

    def _merged(self, group: FileGroup, s: FileSlice) -> FileSlice:
        """`fetchMergedFileSlice`: a slice opened by a pending compaction is merged with the one before."""
        pending = self.pending_compaction.get(group.file_group_id)
        if pending is not None and s.base_instant == pending:
            prev = group.latest_slice_before(pending)
            if prev is not None:
                if self.is_v8_plus:
                    prev = self._filter_uncommitted_logs(prev)
                merged = FileSlice(prev.partition, prev.file_id, prev.base_instant, prev.base_file,
                                   prev.log_files + s.log_files)
                return merged.with_files(merged.base_file, merged.log_files)
        return s

    # -- slice views -----------------------------------------------------------------------------

    def file_groups(self, partition: str | None = None, include_replaced: bool = False) -> list[FileGroup]:
        """`getAllFileGroups` (replaced groups dropped unless `include_replaced`)."""
        return [g for g in self._groups_in(partition) if include_replaced or not g.is_replaced]

    def all_slices(self, partition: str | None = None, include_replaced: bool = False) -> list[FileSlice]:
        """`getAllFileSlices`: every committed slice of every (non-replaced) group, newest first per group."""
        return [s for g in self.file_groups(partition, include_replaced) for s in g.committed_slices]

    def latest_slices(self, partition: str | None = None, as_of: str | None = None) -> list[FileSlice]:
        """The latest committed slice of each file group, as a reader sees it.

        Without `as_of`: `getLatestFileSlices` — replaced groups dropped; then v8+
        `filterUncommittedFiles`, v6 `filterBaseFileAfterPendingCompaction` (an emptied slice is
        kept, as Hudi keeps it).

        With `as_of` = T: `getLatestFileSlicesBeforeOrOn(T, includePendingCompaction=true)` — groups
        replaced by an instant ≤ T dropped, slices with base instant ≤ T, the newest one that is
        not empty after filtering. On v8+ the slice keeps log files of delta commits completed after
        T, as Hudi's `filterUncommittedFiles` does (its log reader skips their blocks by instant
        time); :meth:`FileSlice.log_files` can be filtered by `instant_time <= T` for display.
        """
        out: list[FileSlice] = []
        for group in self._groups_in(partition):
            if self._replaced_on_or_before(group.file_group_id, as_of):
                continue
            if as_of is None:
                latest = group.latest_slice()
                if latest is None:
                    continue
                filtered = (self._filter_uncommitted(latest, True) if self.is_v8_plus
                            else self._filter_base_after_pending_compaction(latest, True))
                if filtered is not None:
                    out.append(filtered)
                continue
            for candidate in group.slices_before_or_on(as_of):
                filtered = (self._filter_uncommitted(candidate, False) if self.is_v8_plus
                            else self._filter_base_after_pending_compaction(candidate, False))
                if filtered is not None:
                    out.append(filtered)
                    break
        return out

    def latest_merged_slices(self, partition: str | None = None, as_of: str | None = None) -> list[FileSlice]:
        """`getLatestMergedFileSlicesBeforeOrOn`: what a snapshot (or time-travel) read scans.

        T defaults to the last instant of the visible timeline (which may be a pending compaction,
        as the Spark file index uses). A slice opened by a pending compaction is merged with the
        previous one: its base file plus the logs of both.
        """
        limit = as_of if as_of is not None else self.facts.visible_last
        if limit is None:
            return []
        out = []
        for group in self._groups_in(partition):
            if self._replaced_on_or_before(group.file_group_id, limit):
                continue
            candidates = group.slices_before_or_on(limit)
            if not candidates:
                continue
            s = candidates[0]
            if self.is_v8_plus:
                s = self._filter_uncommitted_logs(s)
            out.append(self._merged(group, s))
        return out

    def latest_base_files(self, partition: str | None = None, as_of: str | None = None) -> list[BaseFile]:
        """`getLatestBaseFiles` / `getLatestBaseFilesBeforeOrOn`: read-optimized view.

        Skips base files written by a pending compaction (`isBaseFileDueToPendingCompaction`) or a
        pending clustering (`isBaseFileDueToPendingClustering`).
        """
        out = []
        for group in self._groups_in(partition):
            if self._replaced_on_or_before(group.file_group_id, as_of):
                continue
            for s in group.committed_slices:
                bf = s.base_file
                if bf is None or (as_of is not None and bf.instant_time > as_of):
                    continue
                if self.pending_compaction.get(group.file_group_id) == bf.instant_time:
                    continue
                if bf.instant_time in self.pending_clustering_instants:
                    continue
                out.append(bf)
                break
        return out

    def latest_slices_including_inflight(self, partition: str | None = None) -> list[FileSlice]:
        """`getLatestFileSlicesIncludingInflight`: the newest slice on storage, committed or not."""
        return [g.slices[0] for g in self._groups_in(partition) if g.slices]

    # -- replaced groups ---------------------------------------------------------------------------

    def replaced_file_groups(self, partition: str | None = None) -> list[ReplacedFileGroup]:
        """`getAllReplacedFileGroups`, with the replacing instant and whether files remain."""
        return [r for r in self.replaced.values() if partition is None or r.partition == partition]

    def replaced_before(self, instant: str, partition: str | None = None) -> list[ReplacedFileGroup]:
        """`getReplacedFileGroupsBefore`: replace instant < `instant` (the cleaner's view)."""
        return [r for r in self.replaced_file_groups(partition) if r.replace_instant < instant]

    def replaced_before_or_on(self, instant: str, partition: str | None = None) -> list[ReplacedFileGroup]:
        """`getReplacedFileGroupsBeforeOrOn`: replace instant ≤ `instant`."""
        return [r for r in self.replaced_file_groups(partition) if r.replace_instant <= instant]

    def replaced_after_or_on(self, instant: str, partition: str | None = None) -> list[ReplacedFileGroup]:
        """`getReplacedFileGroupsAfterOrOn`: replace instant ≥ `instant`."""
        return [r for r in self.replaced_file_groups(partition) if r.replace_instant >= instant]

    # -- pending table services and savepoints -------------------------------------------------

    def pending_compaction_operations(self) -> list[PendingFileGroupOperation]:
        """File groups in pending compaction plans, with the compaction instant."""
        return [PendingFileGroupOperation(p, f, t, ia.COMPACTION)
                for (p, f), t in sorted(self.pending_compaction.items())]

    def file_groups_in_pending_clustering(self) -> list[PendingFileGroupOperation]:
        """`getFileGroupsInPendingClustering`: file groups in pending clustering plans."""
        return [PendingFileGroupOperation(p, f, t, ia.CLUSTERING)
                for (p, f), t in sorted(self.pending_clustering.items())]

    def savepoint_pins(self, savepoint_time: str | None = None) -> list[SavepointPin]:
        """Files named by completed savepoints (all of them, or one savepoint's)."""
        return [p for p in self.savepoints if savepoint_time is None or p.savepoint_time == savepoint_time]

    # -- rows for the inspect API ---------------------------------------------------------------------

    def slice_rows(self, as_of: str | None = None, latest_only: bool = False) -> list[dict[str, object]]:
        """Rows of `inspect.file_slices`: every committed slice (≤ `as_of`) of every group.

        The group's latest slice is the one :meth:`latest_slices` returns (files filtered as a
        reader sees them) and is flagged `is_latest`; older committed slices follow, newest first.
        Groups replaced by an instant ≤ `as_of` (any, without `as_of`) carry `replaced_by`, and
        their newest slice is still flagged latest so a postmortem sees what the group held.
        `latest_only`: just the rows flagged `is_latest` (what `fsview` prints by default), without
        filtering every older slice first.
        """
        rows: list[dict[str, object]] = []
        for group in self.groups.values():
            replaced = self._replaced_on_or_before(group.file_group_id, as_of)
            latest = self._latest_of_group(group, as_of)
            older = () if latest_only else (
                group.committed_slices if as_of is None else group.slices_before_or_on(as_of))
            ordered = ([latest] if latest is not None else []) + [
                self._visible_files(s) for s in older
                if latest is None or s.base_instant != latest.base_instant
            ]
            for s in ordered:
                rows.append({
                    "partition": s.partition,
                    "file_id": s.file_id,
                    "base_instant": s.base_instant,
                    "base_file": s.base_file_name,
                    "base_file_size": s.base_file.size if s.base_file else None,
                    "log_files": s.log_file_names,
                    "log_files_size": sum(lf.size for lf in s.log_files),
                    "is_latest": latest is not None and s is latest,
                    "is_pending_compaction": self.pending_compaction.get(group.file_group_id) == s.base_instant,
                    "replaced_by": self._replaced_by(group.file_group_id) if replaced else None,
                })
        return rows

    def _latest_of_group(self, group: FileGroup, as_of: str | None) -> FileSlice | None:
        """The slice :meth:`latest_slices` gives for one group, ignoring replacement."""
        if as_of is None:
            latest = group.latest_slice()
            if latest is None:
                return None
            return (self._filter_uncommitted(latest, True) if self.is_v8_plus
                    else self._filter_base_after_pending_compaction(latest, True))
        for candidate in group.slices_before_or_on(as_of):
            filtered = (self._filter_uncommitted(candidate, False) if self.is_v8_plus
                        else self._filter_base_after_pending_compaction(candidate, False))
            if filtered is not None:
                return filtered
        return None

    def _visible_files(self, s: FileSlice) -> FileSlice:
        """An older committed slice with the files a reader keeps (v8+: of completed instants)."""
        if not self.is_v8_plus:
            return s
        filtered = self._filter_uncommitted(s, True)
        return filtered if filtered is not None else s

    def replaced_rows(self) -> list[dict[str, object]]:
        """Rows of `inspect.replaced_file_groups`."""
        return [
            {
                "partition": r.partition,
                "file_id": r.file_id,
                "replaced_by": r.replace_instant,
                "replace_completion_time": r.replace_completion_time,
                "operation_type": r.operation_type,
                "files_on_storage": len(r.file_names),
            }
            for r in self.replaced.values()
        ]

    # -- export --------------------------------------------------------------------------------------

    @staticmethod
    def slices_to_arrow(slices: Iterable[FileSlice]) -> pa.Table:
        """One Arrow row per slice: partition, file id, base instant, base file, log files, sizes."""
        rows = [
            {
                "partition": s.partition,
                "file_id": s.file_id,
                "base_instant": s.base_instant,
                "base_file": s.base_file_name,
                "base_file_size": s.base_file.size if s.base_file else None,
                "log_files": s.log_file_names,
                "num_log_files": len(s.log_files),
                "log_files_size": sum(lf.size for lf in s.log_files),
                "total_size": s.total_size,
            }
            for s in slices
        ]
        return pa.Table.from_pylist(rows, schema=slice_schema())


@functools.cache
def slice_schema() -> pa.Schema:
    """Schema of :meth:`FileSystemView.slices_to_arrow` (also `SLICE_SCHEMA`)."""
    return pa.schema([("partition", pa.string()), ("file_id", pa.string()), ("base_instant", pa.string()),
                      ("base_file", pa.string()), ("base_file_size", pa.int64()),
                      ("log_files", pa.list_(pa.string())), ("num_log_files", pa.int32()),
                      ("log_files_size", pa.int64()), ("total_size", pa.int64())])


#: `LISTING_SCHEMA` and `SLICE_SCHEMA`, built when first read (pyarrow loads only when Arrow is used).
__getattr__ = lazy_constants(globals(), {"LISTING_SCHEMA": listing_schema, "SLICE_SCHEMA": slice_schema})


# -- building blocks ---------------------------------------------------------------------------


def _classify_files(
    partition: str,
    files: Iterable[ListedFile],
    ext: str,
    storage: ReadOnlyStorage,
    findings: list[Finding],
    cdc: list[str],
    shared: dict[str, str] | None = None,
) -> tuple[list[BaseFile], list[LogFile]]:
    """Split a partition's files into base and log files; report the ones Hudi would not read.

    `shared` pools equal file id / instant strings across files (memory: a million base files name
    only ~100k file ids and ~10k instants).
    """
    bases: list[BaseFile] = []
    logs: list[LogFile] = []
    same = (shared if shared is not None else {}).setdefault
    for f in files:
        name = f.name
        if name.startswith(PARTITION_METAFILE_PREFIX):
            continue
        if name.startswith(".") and name.endswith(".crc"):
            continue  # Hadoop local-file-system checksum side files
        base = base_file_parts(name)  # (file_id, write_token, instant_time, extension)
        if base is not None and base[3].lower() == ext:
            bases.append(BaseFile(name, same(base[0], base[0]), same(base[2], base[2]), f.size, partition))
            continue
        path = posixpath.join(partition, name) if partition else name
        log = parse_log_file_name(name)
        if log is not None and log.extension == "log":
            if log.is_cdc:
                cdc.append(path)  # change-data-capture side logs are not part of a slice's data
            else:
                logs.append(LogFile.of(log, f.size, partition))
            continue
        if base is not None:
            reason = f"a {base[3].lstrip('.')} base file, but the table's base file format is {ext[1:]}"
        elif log is not None:
            reason = f"a log-style name with extension .{log.extension}, not .log"
        else:
            reason = "neither a base file, a log file nor a partition metafile"
        findings.append(Finding(
            Severity.WARNING, "unexpected_file_in_partition", storage.uri_of(path),
            f"{name} in partition {partition or '(root)'!r} is {reason}; Hudi ignores it",
        ))
    return bases, logs


def _pending_compaction_ops(timeline: ActiveTimeline, storage: ReadOnlyStorage,
                            findings: list[Finding]) -> dict[FileGroupId, str]:
    """`CompactionUtils.getAllPendingCompactionOperations`: file group → pending compaction instant."""
    ops: dict[FileGroupId, str] = {}
    for inst in timeline.pending_compactions():
        plan = timeline.plan(inst)
        if not isinstance(plan, CompactionPlan):
            continue
        for op in plan.operations:
            key = (op.partition_path, op.file_id)
            if key in ops and ops[key] != inst.requested_time:
                # Hudi refuses such a timeline ("Hudi File Id has more than one pending compactions").
                findings.append(Finding(
                    Severity.ERROR, "file_group_in_two_pending_compactions",
                    storage.uri_of(f"{timeline.timeline_dir}/{inst.requested_time}.compaction.requested"),
                    f"file group {op.file_id} in {op.partition_path!r} is in pending compactions "
                    f"{ops[key]} and {inst.requested_time}; Hudi fails to build its file-system view",
                ))
            ops[key] = max(ops.get(key, ""), inst.requested_time)
    return ops


def is_clustering_instant(timeline: ActiveTimeline, inst: Instant) -> bool:
    """`ClusteringUtils.isClusteringInstant`: a `clustering` action, or a replacecommit planned as CLUSTER."""
    if inst.pending_action == ia.CLUSTERING:
        return True
    if inst.pending_action != ia.REPLACE_COMMIT:
        return False
    plan = timeline.plan(inst)
    return isinstance(plan, RequestedReplaceMetadata) and plan.operation_type == "CLUSTER"


def _pending_clustering(timeline: ActiveTimeline) -> tuple[set[str], dict[FileGroupId, str]]:
    """Pending clustering instants and the file groups their plans name."""
    instants: set[str] = set()
    groups: dict[FileGroupId, str] = {}
    for inst in timeline.pending_clustering():
        if not is_clustering_instant(timeline, inst):
            continue
        instants.add(inst.requested_time)
        plan = timeline.plan(inst)
        if isinstance(plan, RequestedReplaceMetadata):
            for sl in plan.clustering_slices:
                groups[(sl.partition_path, sl.file_id)] = inst.requested_time
    return instants, groups


def _unknown_replaced_groups(timeline: ActiveTimeline, facts: _TimelineFacts, groups: Mapping[FileGroupId, FileGroup],
                             known: Mapping[FileGroupId, tuple[str, Instant, str | None]],
                             storage: ReadOnlyStorage, findings: list[Finding]) -> dict[FileGroupId, str]:
    """Groups a completed replacecommit whose body cannot be read may have replaced (issue 16).

    Hudi fails on such a table (`resetFileGroupsReplaced` reads every replace metadata). Rather than
    bring the groups back as live slices, the view marks as *unknown*: the clustering plan's input
    groups when the requested plan is readable, else every group that existed before the instant
    and was not written by it. A finding names the file and the groups.
    """
    out: dict[FileGroupId, str] = {}
    for inst in timeline:
        if not (inst.is_completed and inst.completed_action == ia.REPLACE_COMMIT):
            continue
        if inst.requested_time not in facts.visible_times or timeline.commit_metadata(inst) is not None:
            continue
        completed = inst.file(State.COMPLETED)
        if completed is None or not timeline.body_error(inst) or not any(
                e.path.endswith(completed.name) for e in timeline.body_error(inst)):
            continue  # readable (an empty body is Hudi's "no files"), only a side file failed
        plan = timeline.record(inst, State.REQUESTED)
        candidates: set[FileGroupId] = set()
        if isinstance(plan, RequestedReplaceMetadata) and plan.clustering_slices:
            candidates = {(s.partition_path, s.file_id) for s in plan.clustering_slices}
            basis = "the input groups of its clustering plan"
        else:
            candidates = {
                fg for fg, g in groups.items()
                if any(sl.base_instant < inst.requested_time for sl in g.committed_slices)
                and not any(sl.base_instant == inst.requested_time for sl in g.slices)
            }
            basis = "every file group written before it (its plan does not say which)"
        for fg in candidates:
            if fg not in known and fg in groups:
                out[fg] = min(out.get(fg, inst.requested_time), inst.requested_time)
        shown = sorted(f"{p}/{f}" if p else f for p, f in candidates if (p, f) in out)
        findings.append(Finding(
            Severity.ERROR, "replaced_groups_unknown", storage.uri_of(completed.path),
            f"completed replacecommit {inst.requested_time} cannot be read, so the file groups it replaced are "
            f"unknown ({basis}: {len(shown)}: {', '.join(shown[:20])}{' …' if len(shown) > 20 else ''}); they are "
            "not shown as live slices and no plan deletes them (Hudi fails reading this table)",
        ))
    return out


def _replaced_partitions(timeline: ActiveTimeline, table_version: int,
                         archived_completion_times: Mapping[str, str] | None) -> frozenset[str] | None:
    """The partitions of every group the visible replacecommits replaced; None when a visible completed
    replacecommit cannot be read (its groups are unknown: every partition counts)."""
    facts = _TimelineFacts(timeline, table_version, archived_completion_times)
    for inst in timeline:
        if (inst.is_completed and inst.completed_action == ia.REPLACE_COMMIT
                and inst.requested_time in facts.visible_times and timeline.commit_metadata(inst) is None):
            return None
    return frozenset(partition for partition, _ in _replaced_file_group_instants(timeline, facts))


def _replaced_file_group_instants(timeline: ActiveTimeline,
                                  facts: _TimelineFacts) -> dict[FileGroupId, tuple[str, Instant, str | None]]:
    """`resetFileGroupsReplaced`: file group → (requested time, instant, operation type); later wins."""
    out: dict[FileGroupId, tuple[str, Instant, str | None]] = {}
    for inst in timeline:
        if not (inst.is_completed and inst.completed_action == ia.REPLACE_COMMIT):
            continue
        if inst.requested_time not in facts.visible_times:
            continue
        meta = timeline.commit_metadata(inst)
        if meta is None:
            continue  # unreadable or missing: the timeline has recorded a finding
        for partition, file_id in meta.replaced_file_ids():
            key = (partition, file_id)
            if key not in out or out[key][0] < inst.requested_time:
                out[key] = (inst.requested_time, inst, meta.operation_type)
    return out


def _replaced_entry(fg_id: FileGroupId, inst: Instant, operation_type: str | None,
                    groups: Mapping[FileGroupId, FileGroup], listing: Mapping[str, list[ListedFile]],
                    storage: ReadOnlyStorage, ext: str) -> ReplacedFileGroup:
    partition, file_id = fg_id
    group = groups.get(fg_id)
    if group is not None:
        names = tuple(group.all_files())
    elif partition in listing:
        names = ()
    else:
        # The partition is no longer a partition (no metafile, or deleted): look in the folder.
        try:
            infos = storage.list(partition)
        except StorageError:
            infos = []
        names = tuple(
            i.name for i in infos
            if not i.is_dir and _file_id_of(i.name, ext) == file_id
        )
    return ReplacedFileGroup(
        partition=partition,
        file_id=file_id,
        replace_instant=inst.requested_time,
        replace_completion_time=inst.completion_time,
        operation_type=operation_type,
        pending_action=inst.pending_action,
        files_exist=bool(names),
        file_names=names,
    )


def _file_id_of(name: str, ext: str) -> str | None:
    base = parse_base_file_name(name)
    if base is not None and base.extension.lower() == ext:
        return base.file_id
    log = parse_log_file_name(name)
    if log is not None and log.extension == "log":
        return log.file_id
    return None


def _savepoint_pins(timeline: ActiveTimeline, listing: Mapping[str, list[ListedFile]]) -> list[SavepointPin]:
    pins: list[SavepointPin] = []
    names_by_partition = {p: {f.name for f in files} for p, files in listing.items()}
    for inst in timeline.savepoints():
        rec = timeline.record(inst, State.COMPLETED)
        if not isinstance(rec, SavepointMetadata):
            continue
        for partition, names in sorted(rec.partition_files.items()):
            present = names_by_partition.get(partition, set())
            for name in sorted(names):
                base_name = posixpath.basename(name)
                pins.append(SavepointPin(inst.requested_time, partition, base_name, base_name in present))
    return pins
