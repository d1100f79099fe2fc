"""The file-system view: partitions, file groups and file slices of a table (spec `01` §6).

Emulates the reader of Hudi 1.1.x (`AbstractTableFileSystemView`), strictly read-only. The view is
built from a :class:`~hudi_core.table.listing.Listing` (storage's or the metadata table's: see
:mod:`hudi_core.table.listing`) and the active timeline; file groups and slices follow
:mod:`hudi_core.table.file_group`.

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

from hudi_core.engines.executor import Executor
from hudi_core.errors import Finding, Severity, StorageError
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.active import ActiveTimeline
from hudi_core.formats.timeline.bulk import paused_gc
from hudi_core.formats.timeline.instant import Instant, State
from hudi_core.formats.timeline.records import CompactionPlan, RequestedReplaceMetadata, SavepointMetadata
from hudi_core.io.filenames import parse_base_file_name, parse_log_file_name
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.lazy import LazyModule, lazy_constants
from hudi_core.table.file_columns import PartitionFileColumns
from hudi_core.table.file_group import (
    BaseFile,
    FileGroup,
    FileGroupId,
    FileSlice,
    LogFile,
    ReplacedFileGroup,
    SavepointPin,
    TimelineFacts,
    build_file_groups,
)
from hudi_core.table.listing import ListedFile, ListedFiles, Listing, ListingKind, ListingSource
from hudi_core.table.listing.storage import LISTING_BATCH_SIZE, StorageListing
from hudi_core.table.slice_columns import latest_base_files as columnar_latest_base_files
from hudi_core.table.slice_columns import latest_slice_rows

pa: Any = LazyModule("pyarrow")

__all__ = [
    "BaseFile", "FileGroup", "FileGroupId", "FileSlice", "FileSystemView", "LogFile",
    "ReplacedFileGroup", "SavepointPin",
]


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
    #: Every partition's classified files; file groups are built from them per partition, when asked.
    files: PartitionFileColumns = field(repr=False)
    facts: TimelineFacts = field(repr=False)
    pending_compaction: dict[FileGroupId, str] = field(default_factory=dict)
    pending_clustering: dict[FileGroupId, str] = field(default_factory=dict)
    pending_clustering_instants: frozenset[str] = frozenset()
    replaced: dict[FileGroupId, ReplacedFileGroup] = field(default_factory=dict)
    savepoints: list[SavepointPin] = field(default_factory=list)
    cdc_log_files: list[str] = field(default_factory=list)
    partition_files: dict[str, Sequence[ListedFile]] = field(default_factory=dict, repr=False)
    findings: list[Finding] = field(default_factory=list)
    #: File groups a completed replacecommit with an unreadable body may have replaced (group → that
    #: instant): neither live nor known replaced, so never shown as latest slices.
    unknown_replaced: dict[FileGroupId, str] = field(default_factory=dict)
    #: Which listing the view was built from, why that one, and whether it may miss files.
    listing: ListingKind = ListingKind.STORAGE
    listing_reason: str = ""
    listing_incomplete: bool = False
    #: A metadata-table listing compared with storage (`hudi_core.table.listing.compare`), tolerated ones
    #: included; None when not compared.
    listing_differences: list[Any] | None = None
    #: Replaced file groups by partition (group → replacing instant), for building groups.
    replaced_in: dict[str, dict[FileGroupId, str]] = field(default_factory=dict, repr=False)
    #: The file groups built so far, by partition (each sorted by file id).
    _built: dict[str, list[FileGroup]] = field(default_factory=dict, repr=False)

    @property
    def groups(self) -> dict[FileGroupId, FileGroup]:
        """Every file group, by (partition, file id) in that order (built on first use)."""
        whole = self.__dict__.get("_groups")
        if whole is None:
            whole = {g.file_group_id: g for p in sorted(self.files.partitions) for g in self._partition_groups(p)}
            self.__dict__["_groups"] = whole
        return whole

    def group(self, fg_id: FileGroupId) -> FileGroup | None:
        """One file group (building its partition's groups only)."""
        whole = self.__dict__.get("_groups")
        if whole is not None:
            return whole.get(fg_id)
        if fg_id[0] not in self.files:
            return None
        return next((g for g in self._partition_groups(fg_id[0]) if g.file_id == fg_id[1]), None)

    def _partition_groups(self, partition: str) -> list[FileGroup]:
        """`buildFileGroups` of one partition, sorted by file id (kept once built)."""
        built = self._built.get(partition)
        if built is None:
            bases, logs = self.files.files_of(partition)
            built = build_file_groups(partition, bases, logs, self.facts, self.pending_compaction,
                                      self.replaced_in.get(partition, {}))
            self._built[partition] = built
        return built

    @property
    def storage_checked(self) -> bool:
        """Whether the view's listing was checked against storage (a storage listing is storage)."""
        return self.listing is ListingKind.STORAGE or self.listing_differences is not None

    # -- building ---------------------------------------------------------------------------------

    @classmethod
    def build(cls, storage: ReadOnlyStorage, timeline: ActiveTimeline, table_version: int, base_file_format: str,
              executor: Executor, archived_completion_times: Mapping[str, str] | None = None,
              batch_size: int = LISTING_BATCH_SIZE, metadata_partitions: Sequence[str] | None = None,
              metadata_partitions_inflight: Sequence[str] = (), replaced_only: bool = False,
              source: ListingSource | None = None, partitions: frozenset[str] | None = None) -> FileSystemView:
        """List the table's partitions (from `source`, storage by default) and build every file group.

        `archived_completion_times` (requested → completion time) may come from the archived
        timeline; without it archived delta commits count as completed at their requested time.
        For a metadata table, `metadata_partitions` (and `metadata_partitions_inflight`) are its data
        table's `hoodie.table.metadata.partitions` (`.inflight`): the partitions Hudi's metadata reader
        takes (`metadata_partitions_from_config`); ``None`` lists partitions from storage only.

        `replaced_only`: a view whose replaced file groups (:meth:`replaced_file_groups`) are the whole
        view's, listing only the partitions replacecommits name (none when there is no replacecommit):
        for the markers, which need nothing else. It lists everything where that cannot be exact (an
        unreadable replacecommit, whose groups are judged against every group; a metadata table).
        `partitions`: a view of these partitions only (the same answer for them as the whole view's).
        """
        with paused_gc():
            if source is None:
                source = StorageListing(storage, executor, batch_size, metadata_partitions,
                                        metadata_partitions_inflight)
            wanted = (_replaced_partitions(timeline, table_version, archived_completion_times)
                      if replaced_only and metadata_partitions is None else None)
            if partitions is not None and metadata_partitions is None:
                wanted = partitions if wanted is None else wanted & partitions
            return cls.from_listing(source.list(wanted), timeline, table_version, base_file_format, storage=storage,
                                    archived_completion_times=archived_completion_times, scope=partitions)

    @classmethod
    def from_listing(
        cls,
        listing: Listing | Mapping[str, Iterable[ListedFile]],
        timeline: ActiveTimeline,
        table_version: int,
        base_file_format: str,
        storage: ReadOnlyStorage | None = None,
        archived_completion_times: Mapping[str, str] | None = None,
        scope: frozenset[str] | None = None,
    ) -> FileSystemView:
        """Build from a :class:`Listing` (or a plain ``{partition: files}``, taken as storage's) and the
        active timeline. `scope`: the listing covers these partitions only; replaced groups elsewhere are
        left out."""
        if not isinstance(listing, Listing):
            listing = Listing(ListingKind.STORAGE, {p: list(fs) for p, fs in listing.items()})
        findings: list[Finding] = list(listing.findings)
        storage = storage or timeline.storage
        facts = TimelineFacts(timeline, table_version, archived_completion_times)
        pending_compaction = _pending_compaction_ops(timeline, storage, findings)
        clustering_instants, pending_clustering = _pending_clustering(timeline)
        replace_map = _replaced_file_group_instants(timeline, facts)
        if scope is not None:
            replace_map = {k: v for k, v in replace_map.items() if k[0] in scope}
        ext = "." + base_file_format.lower()

        cdc: list[str] = []
        files_by_partition = dict(listing.partitions)
        replaced_by_partition: dict[str, dict[FileGroupId, str]] = {}
        for k, v in replace_map.items():
            replaced_by_partition.setdefault(k[0], {})[k] = v[0]
        files = PartitionFileColumns.classify(files_by_partition, ext, storage.uri_of, findings, cdc)
        view = cls(
            table_version=table_version,
            base_file_format=base_file_format,
            partitions=sorted(files_by_partition),
            files=files,
            facts=facts,
            pending_compaction=pending_compaction,
            pending_clustering=pending_clustering,
            pending_clustering_instants=frozenset(clustering_instants),
            cdc_log_files=cdc,
            partition_files=files_by_partition,
            findings=findings,
            listing=listing.kind,
            listing_reason=listing.reason,
            listing_incomplete=listing.incomplete,
            replaced_in=replaced_by_partition,
        )
        view.replaced = {
            fg_id: _replaced_entry(fg_id, inst, op, view.group(fg_id), files_by_partition, storage, ext)
            for fg_id, (_, inst, op) in sorted(replace_map.items())
        }
        view.unknown_replaced = _unknown_replaced_groups(timeline, facts, view, replace_map, storage, findings)
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
        if partition not in self.files:
            return []
        return list(self._partition_groups(partition))

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

    def latest_file_keys(self, partitions: Iterable[str] | None = None) -> set[tuple[str, str]]:
        """(partition, file name) of every file of a latest slice (of `partitions` only, when given): what a snapshot
        read opens."""
        wanted = None if partitions is None else set(partitions)
        rows = latest_slice_rows(self)
        if rows is not None:  # the same files, from the columns
            return {(r["partition"], n) for r in rows if r["replaced_by"] is None
                    and (wanted is None or r["partition"] in wanted)
                    for n in ([r["base_file"]] if r["base_file"] is not None else []) + r["log_files"]}
        return {(s.partition, n) for s in self.latest_slices() for n in s.file_names
                if wanted is None or s.partition in wanted}

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
        if partition is None and as_of is None:
            columnar = columnar_latest_base_files(self)
            if columnar is not None:
                return columnar
        return self.latest_base_files_of(self._groups_in(partition), as_of)

    def latest_base_files_of(self, groups: Iterable[FileGroup], as_of: str | None = None) -> list[BaseFile]:
        """:meth:`latest_base_files` of these groups."""
        out = []
        for group in groups:
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

    # -- replaced groups ---------------------------------------------------------------------------

    def replaced_file_groups(self, partition: str | None = None) -> list[ReplacedFileGroup]:
        """`getAllReplacedFileGroups`, with the replacing instant and whether files remain."""
        return [r for r in self.replaced.values() if partition is None or r.partition == partition]

    def replaced_after_or_on(self, instant: str, partition: str | None = None) -> list[ReplacedFileGroup]:
        """`getReplacedFileGroupsAfterOrOn`: replace instant ≥ `instant`."""
        return [r for r in self.replaced_file_groups(partition) if r.replace_instant >= instant]

    # -- pending table services and savepoints -------------------------------------------------

    def savepoint_pins(self, savepoint_time: str | None = None) -> list[SavepointPin]:
        """Files named by completed savepoints (all of them, or one savepoint's)."""
        return [p for p in self.savepoints if savepoint_time is None or p.savepoint_time == savepoint_time]

    # -- rows for the inspect API ---------------------------------------------------------------------

    def slice_rows(self, as_of: str | None = None, latest_only: bool = False) -> list[dict[str, Any]]:
        """Rows of `inspect.file_slices`: every committed slice (≤ `as_of`) of every group.

        The group's latest slice is the one :meth:`latest_slices` returns (files filtered as a
        reader sees them) and is flagged `is_latest`; older committed slices follow, newest first.
        Groups replaced by an instant ≤ `as_of` (any, without `as_of`) carry `replaced_by`, and
        their newest slice is still flagged latest so a postmortem sees what the group held.
        `latest_only`: just the rows flagged `is_latest` (what `fsview` prints by default), without
        filtering every older slice first.
        """
        if as_of is None and latest_only:
            columnar = latest_slice_rows(self)
            if columnar is not None:
                return columnar
        return [row for p in self.partitions for group in self._groups_in(p)
                for row in self.group_rows(group, as_of, latest_only)]

    def group_rows(self, group: FileGroup, as_of: str | None = None, latest_only: bool = False) -> list[dict[str, Any]]:
        """:meth:`slice_rows` of one file group."""
        replaced = self._replaced_on_or_before(group.file_group_id, as_of)
        latest = self._latest_of_group(group, as_of)
        older = () if latest_only else (
            group.committed_slices if as_of is None else group.slices_before_or_on(as_of))
        ordered = ([latest] if latest is not None else []) + [
            self._visible_files(s) for s in older
            if latest is None or s.base_instant != latest.base_instant
        ]
        return [{
            **_slice_files_row(s),
            "is_latest": latest is not None and s is latest,
            "is_pending_compaction": self.pending_compaction.get(group.file_group_id) == s.base_instant,
            "replaced_by": self._replaced_by(group.file_group_id) if replaced else None,
        } for s in ordered]

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
        rows = [{**_slice_files_row(s), "num_log_files": len(s.log_files), "total_size": s.total_size}
                for s in slices]
        return pa.Table.from_pylist(rows, schema=slice_schema())


def _slice_files_row(s: FileSlice) -> dict[str, Any]:
    """A slice's place and files, the columns every slice row starts with."""
    return {
        "partition": s.partition,
        "file_id": s.file_id,
        "base_instant": s.base_instant,
        "base_file": s.base_file_name,
        "base_file_size": s.base_file.size if s.base_file else None,
        "log_files": s.log_file_names,
        "log_files_size": sum(lf.size for lf in s.log_files),
    }


@functools.cache
def slice_schema() -> pa.Schema:
    """Schema of :meth:`FileSystemView.slices_to_arrow` (also `SLICE_SCHEMA`)."""
    return pa.schema([("partition", pa.string()), ("file_id", pa.string()), ("base_instant", pa.string()),
                      ("base_file", pa.string()), ("base_file_size", pa.int64()),
                      ("log_files", pa.list_(pa.string())), ("num_log_files", pa.int32()),
                      ("log_files_size", pa.int64()), ("total_size", pa.int64())])


#: `SLICE_SCHEMA`, built when first read (pyarrow loads only when Arrow is used).
__getattr__ = lazy_constants(globals(), {"SLICE_SCHEMA": slice_schema})


# -- building blocks ---------------------------------------------------------------------------


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


def _unknown_replaced_groups(timeline: ActiveTimeline, facts: TimelineFacts, view: FileSystemView,
                             known: Mapping[FileGroupId, tuple[str, Instant, str | None]],
                             storage: ReadOnlyStorage, findings: list[Finding]) -> dict[FileGroupId, str]:
    """Groups a completed replacecommit whose body cannot be read may have replaced.

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
        groups = view.groups
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
    facts = TimelineFacts(timeline, table_version, archived_completion_times)
    for inst in timeline:
        if (inst.is_completed and inst.completed_action == ia.REPLACE_COMMIT
                and inst.requested_time in facts.visible_times and timeline.commit_metadata(inst) is None):
            return None
    return frozenset(partition for partition, _ in _replaced_file_group_instants(timeline, facts))


def _replaced_file_group_instants(timeline: ActiveTimeline,
                                  facts: TimelineFacts) -> dict[FileGroupId, tuple[str, Instant, str | None]]:
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


def _replaced_entry(fg_id: FileGroupId, inst: Instant, operation_type: str | None, group: FileGroup | None,
                    listing: Mapping[str, Sequence[ListedFile]], storage: ReadOnlyStorage, ext: str
                    ) -> ReplacedFileGroup:
    partition, file_id = fg_id
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


def _savepoint_pins(timeline: ActiveTimeline, listing: Mapping[str, Sequence[ListedFile]]) -> list[SavepointPin]:
    pins: list[SavepointPin] = []
    names_by_partition: dict[str, set[str]] = {}  # of the partitions a savepoint names only
    for inst in timeline.savepoints():
        rec = timeline.record(inst, State.COMPLETED)
        if not isinstance(rec, SavepointMetadata):
            continue
        for partition, names in sorted(rec.partition_files.items()):
            if partition not in names_by_partition:
                files = listing.get(partition, ())
                names_by_partition[partition] = set(ListedFiles.of(files).name_list()) if files else set()
            present = names_by_partition[partition]
            for name in sorted(names):
                base_name = posixpath.basename(name)
                pins.append(SavepointPin(inst.requested_time, partition, base_name, base_name in present))
    return pins
