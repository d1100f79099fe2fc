"""The metadata-table listing: the data table's partitions and files as Hudi 1.x readers list them.

Emulates Hudi 1.1.x `HoodieBackedTableMetadata` over the `files` partition of `.hoodie/metadata`:

1. **The file slice.** The `files` partition has one file group (`files-0000-0`). Its slice is the
   latest *merged* one (`HoodieTableMetadataUtil.getPartitionLatestMergedFileSlices`): the metadata
   table's view over its own active timeline, across a pending compaction (the previous base plus every
   log); on table version 8+ log files join slices by completion time and uncommitted ones are dropped.
2. **Which log blocks count** (`BaseHoodieLogRecordReader` with the instant range of
   `HoodieTableMetadataUtil.getValidInstantTimestamps`): a data or delete block counts when its
   `INSTANT_TIME` is no later than the metadata table's latest completed instant and is a *valid* instant
   (:func:`valid_instant_times`); on versions below 8 a block of an instant the metadata table has not
   completed is skipped too. A rollback command block removes the blocks of its target instant read
   before it. Base-file records are never filtered.
3. **Merging** (:mod:`hudi_core.formats.mdt.payload`): the log records among themselves, oldest first (log file
   order, then block order), then the merged log record onto the base file's record.
4. **Listing**: the partitions are the live entries of ``__all_partitions__`` (a lone ``"."`` is the
   non-partitioned table's ``""``), each partition's files the live entries of its record, sizes as the
   metadata table has them (`getAllFilesInPartition`). Nothing checks that a listed file exists: a Hudi
   reader fails only when it opens one. :func:`compare_with_storage` does that check.

Where the metadata table is missing although `hoodie.properties` names its `files` partition, Hudi's
`NativeTableMetadataFactory` falls back to listing storage with a warning; so does :class:`MetadataTableListing`.
Once the metadata table is read, Hudi has no fallback: an unreadable file fails its reads. Here it is a
finding naming the file, and the listing is marked incomplete.
"""

from __future__ import annotations

import builtins
import posixpath
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NoReturn

from hudi_core.errors import DecodeError, Finding, Severity, StorageError
from hudi_core.formats.hfile import HFileError, HFileReader
from hudi_core.formats.logfile.content import decode_avro_content, decode_delete_content
from hudi_core.formats.logfile.errors import LogFileError
from hudi_core.formats.logfile.format import BlockType
from hudi_core.formats.logfile.reader import LogBlock, LogFileReader
from hudi_core.formats.mdt.payload import combine
from hudi_core.formats.mdt.records import (
    ALL_PARTITIONS_KEY,
    FILES_PARTITION,
    NON_PARTITIONED_NAME,
    FileEntry,
    FilesRecord,
    MetadataRecordError,
    decode_files_record,
    files_record_of,
    partition_key,
    partition_of_key,
)
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.active import ActiveTimeline
from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.records import RollbackPlan
from hudi_core.io.filenames import parse_log_file_name
from hudi_core.io.properties import TableProperties
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.lazy import LazyModule
from hudi_core.table.facts import rollback_metadatas
from hudi_core.table.file_group import FileSlice
from hudi_core.table.listing import ListedFile, ListedFiles, Listing, ListingKind
from hudi_core.table.listing.metadata_index import ListingIndex

pa: Any = LazyModule("pyarrow")

#: `HoodieTableMetadataUtil` / `HoodieTimeline.SOLO_COMMIT_TIMESTAMP`: the metadata table's
#: initialisation and bootstrap delta commits start with it (`00000000000000000`, ... on 1.x).
SOLO_COMMIT_TIMESTAMP = "00000000000000"

#: Data-table actions the metadata table applies at the same requested time (a delta commit, or in 1.x
#: a rollback of its own delta commit for a data-table rollback).
MDT_SYNCED_ACTIONS = frozenset({ia.COMMIT, ia.DELTA_COMMIT, ia.REPLACE_COMMIT, ia.CLEAN, ia.ROLLBACK,
                                ia.RESTORE, ia.CLUSTERING})

class BlockDecision(StrEnum):
    """Why a log block of the `files` partition counts or not (`BaseHoodieLogRecordReader`)."""

    APPLIED = "applied"
    NOT_VALID_INSTANT = "not_valid_instant"          # not in getValidInstantTimestamps
    AFTER_LATEST_INSTANT = "after_latest_instant"    # later than the metadata table's last completed instant
    UNCOMMITTED = "uncommitted"                      # v6: its metadata-table instant is not completed
    ROLLED_BACK = "rolled_back"                      # removed by a later rollback command block
    COMMAND = "command"                              # a command block itself
    CORRUPT = "corrupt"                              # a corrupt block (skipped by Hudi's scanner)
    UNREADABLE = "unreadable"                        # content this reader could not decode (a finding)


@dataclass(frozen=True)
class BlockUse:
    """One log block of the `files` slice and what the reader did with it."""

    log_file: str
    offset: int
    block_type: str
    instant_time: str | None
    decision: BlockDecision
    records: int = 0


@dataclass
class FilesPartitionRead:
    """Everything learned reading the `files` partition: the slice, the blocks, the merged records.

    `records` maps every key read to its merged record (whole-record deletes dropped); `partitions`
    lists the data table's partitions (``""`` for a non-partitioned table) as Hudi lists them.
    """

    mdt_uri: str
    base_file: str | None
    log_files: list[str]
    latest_instant: str | None
    valid_instants: frozenset[str]
    blocks: list[BlockUse] = field(default_factory=list)
    records: RecordColumns = field(default_factory=lambda: RecordColumns({}))
    partitions: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    incomplete: bool = False

    def files_of(self, partition: str) -> list[ListedFile]:
        """The live files of one data-table partition, sorted by name, with the metadata table's sizes."""
        return list(self.listed_files_of(partition))

    def listed_files_of(self, partition: str) -> ListedFiles:
        """:meth:`files_of` as columns (what a listing keeps: a million files are no million objects)."""
        return self.records.live(partition_key(partition))

    def tombstones_of(self, partition: str) -> list[str]:
        """Tombstones left in a partition's merged record (deletes of files never added: 'spurious')."""
        return self.records.tombstones(partition_key(partition))


@dataclass(frozen=True)
class ColumnarRecord:
    """A files record as the read keeps it: its live files' names (sorted) and sizes as Arrow arrays and its few
    tombstones as entries. Each record read is made into one as it is decoded, so a million file entries never
    stand as a million objects at once (their churn left the process's heap fragmented by hundreds of MiB)."""

    record_type: int
    names: pa.Array
    sizes: pa.Array
    tombstones: dict[str, FileEntry]

    @classmethod
    def of(cls, record: FilesRecord) -> ColumnarRecord:
        live = record.live_names()
        entries = record.entries
        return cls(record.record_type, pa.array(live, pa.string()), pa.array([entries[n].size for n in live],
                                                                             pa.int64()),
                   {n: e for n, e in entries.items() if e.is_deleted})

    def live_names(self) -> list[str]:
        return self.names.to_pylist()

    def files_record(self, key: str) -> FilesRecord:
        """The record as entries again (live files first, by name, then the tombstones)."""
        entries = {n: FileEntry(s) for n, s in zip(self.names.to_pylist(), self.sizes.to_pylist(), strict=True)}
        entries.update(self.tombstones)
        return FilesRecord(key, self.record_type, entries)


@dataclass(frozen=True)
class RecordSpan:
    """Where a record's live files are in the table of every record, with its type and its tombstones."""

    key: str
    start: int
    length: int
    record_type: int
    tombstones: dict[str, FileEntry]


class RecordColumns(Mapping[str, FilesRecord]):
    """The merged records of the files partition by key, each record's live files kept as Arrow columns (name,
    size; sorted by name) and its few tombstones as entries: read whole, a million file entries are no million
    objects kept. A :class:`FilesRecord` is made again when one is asked for by key."""

    def __init__(self, merged: dict[str, ColumnarRecord]) -> None:
        # One table for every record (a table a record cost 0.2 s for the 556 records of 100k files); each record
        # kept as slices of it, its own arrays let go as they join it.
        names, sizes, spans, start = [], [], [], 0
        for key in list(merged):
            record = merged.pop(key)
            names.append(record.names)
            sizes.append(record.sizes)
            spans.append(RecordSpan(key, start, len(record.names), record.record_type, record.tombstones))
            start += len(record.names)
        table = pa.table({"name": pa.concat_arrays(names) if names else pa.array([], pa.string()),
                          "size": pa.concat_arrays(sizes) if sizes else pa.array([], pa.int64())})
        del names, sizes
        self._take(table, spans)

    @classmethod
    def of_table(cls, table: pa.Table, spans: Sequence[RecordSpan]) -> RecordColumns:
        """The records of :meth:`columns` again (a table of ``name`` and ``size`` and each record's span)."""
        out = cls.__new__(cls)
        out._take(table, spans)
        return out

    def _take(self, table: pa.Table, spans: Sequence[RecordSpan]) -> None:
        table = table.combine_chunks() if table.column("name").num_chunks != 1 else table
        self._table = table
        self._spans = list(spans)
        live = pa.table({"name": table.column("name"), "size": table.column("size"),
                         "mtime_ms": pa.nulls(table.num_rows, pa.int64())})
        self._live = {s.key: ListedFiles(live.slice(s.start, s.length)) for s in spans}
        name, size = table.column("name").chunk(0), table.column("size").chunk(0)
        self._records = {s.key: ColumnarRecord(s.record_type, name.slice(s.start, s.length),
                                               size.slice(s.start, s.length), s.tombstones) for s in spans}

    def columns(self) -> tuple[pa.Table, list[RecordSpan]]:
        """Every record's live files as one table (``name``, ``size``) and where each record's rows are."""
        return self._table, list(self._spans)

    def live_names(self, key: str) -> list[str] | None:
        """The live entries' names of the record of `key` (None when there is no record)."""
        found = self._records.get(key)
        return found.live_names() if found is not None else None

    def live(self, key: str) -> ListedFiles:
        """The live entries of the record of `key` (none when there is no record)."""
        found = self._live.get(key)
        return found if found is not None else ListedFiles.of([])

    def tombstones(self, key: str) -> list[str]:
        found = self._records.get(key)
        return sorted(found.tombstones) if found is not None else []

    def __getitem__(self, key: str) -> FilesRecord:
        return self._records[key].files_record(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)


# -- valid instants ------------------------------------------------------------------------------


def valid_instant_times(data_timeline: ActiveTimeline, mdt_timeline: ActiveTimeline,
                        data_table_version: int) -> frozenset[str]:
    """`HoodieTableMetadataUtil.getValidInstantTimestamps` (1.1): the instants whose log blocks count.

    1. every completed instant of the data table's active timeline;
    2. every completed metadata-table delta commit whose time is not pending in the data table (on
       version 6: whose time carries one of the operation suffixes, `isValidInstant` of 0.14);
    3. the instants rolled back by completed data-table rollbacks and restores later than the earliest
       instant of 1. and 2. (a rollback's plan when its metadata is empty);
    4. the times of completed metadata-table rollbacks and restores;
    5. completed metadata-table delta commits of the initialisation (`SOLO_COMMIT_TIMESTAMP` prefix).
    """
    valid = {i.requested_time for i in data_timeline.completed()}
    pending = {i.requested_time for i in data_timeline.pending()}
    mdt_done = list(mdt_timeline.completed())
    for inst in mdt_done:
        if inst.action != ia.DELTA_COMMIT:
            continue
        t = inst.requested_time
        if data_table_version >= 8:
            if t not in pending:
                valid.add(t)
        elif _v6_suffixed(t):
            valid.add(t)
    floor = min(valid) if valid else None
    for inst in data_timeline.completed().filter([ia.ROLLBACK, ia.RESTORE]):
        if floor is not None and inst.requested_time <= floor:
            continue
        metas = rollback_metadatas(data_timeline.record(inst, State.COMPLETED))
        rolled = [t for m in metas for t in m.commits_rollback]
        if not rolled and inst.action == ia.ROLLBACK:
            plan = data_timeline.record(inst, State.REQUESTED)
            if isinstance(plan, RollbackPlan) and plan.instant_to_rollback:
                rolled = [plan.instant_to_rollback.timestamp]
        valid.update(rolled)
    valid.update(i.requested_time for i in mdt_done if i.action in (ia.ROLLBACK, ia.RESTORE))
    valid.update(i.requested_time for i in mdt_done
                 if i.action == ia.DELTA_COMMIT and i.requested_time.startswith(SOLO_COMMIT_TIMESTAMP))
    return frozenset(valid)


def _v6_suffixed(t: str) -> bool:
    """0.14's `isValidInstant` for a metadata-table delta commit: 17 + 3 digits with an operation suffix
    (001..006) or an initialisation suffix (010 and up)."""
    if len(t) != 20 or not t[-3:].isdigit():
        return False
    suffix = int(t[-3:])
    return 1 <= suffix <= 6 or suffix >= 10


def unapplied_data_instants(data_timeline: ActiveTimeline, mdt_timeline: ActiveTimeline) -> list[str]:
    """Completed data-table instants the metadata table has not applied (it is *behind*).

    A write, clean, rollback or restore is applied at the same requested time (a delta commit, or in
    1.x a rollback of the metadata table's own delta commit). Instants before the metadata table's
    first delta commit after its initialisation were listed when it was initialised.
    """
    mdt_done = {i.requested_time for i in mdt_timeline.completed()}
    deltas = sorted(i.requested_time for i in mdt_timeline.completed()
                    if i.action == ia.DELTA_COMMIT and not i.requested_time.startswith(SOLO_COMMIT_TIMESTAMP))
    if not deltas:
        return []
    start = deltas[0]
    return [i.requested_time for i in data_timeline.completed() if i.requested_time >= start
            and (i.action in MDT_SYNCED_ACTIONS or i.completed_action in MDT_SYNCED_ACTIONS)
            and i.requested_time not in mdt_done]


# -- the reader ---------------------------------------------------------------------------------


class MetadataTableListing:
    """Lists the data table through its metadata table's `files` partition (a :class:`ListingSource`).

    `data_storage`, `data_timeline` and `data_version` describe the data table; `mdt_storage`,
    `mdt_properties` and `mdt_timeline` its metadata table (opened by the caller).
    """

    kind = ListingKind.METADATA

    def __init__(self, data_storage: ReadOnlyStorage, data_timeline: ActiveTimeline, data_version: int,
                 mdt_storage: ReadOnlyStorage, mdt_properties: TableProperties, mdt_timeline: ActiveTimeline,
                 reason: str = "") -> None:
        self.data_storage = data_storage
        self.data_timeline = data_timeline
        self.data_version = data_version
        self.mdt_storage = mdt_storage
        self.mdt_properties = mdt_properties
        self.mdt_timeline = mdt_timeline
        self.reason = reason
        self._reads: dict[frozenset[str] | None, FilesPartitionRead] = {}

    # -- ListingSource --------------------------------------------------------------------------

    def list(self, wanted: frozenset[str] | None = None) -> Listing:
        read = self.read(wanted)
        names = read.partitions if wanted is None else [p for p in read.partitions if p in wanted]
        partitions: dict[str, Sequence[ListedFile]] = {p: read.listed_files_of(p) for p in names}
        return Listing(self.kind, partitions, list(read.findings), read.incomplete, self.reason)

    # -- reading --------------------------------------------------------------------------------

    def read(self, wanted: frozenset[str] | None = None) -> FilesPartitionRead:
        """Read (once per `wanted`) the `files` partition: every record, or the partition list and the
        records of the `wanted` partitions only (key lookups: the base file is not read whole)."""
        if wanted not in self._reads:
            self._reads[wanted] = self._read(wanted)
        return self._reads[wanted]

    def _read(self, wanted: frozenset[str] | None) -> FilesPartitionRead:
        keys = None if wanted is None else frozenset({ALL_PARTITIONS_KEY, *map(partition_key, wanted)})
        latest = self.mdt_timeline.completed().last()
        valid = valid_instant_times(self.data_timeline, self.mdt_timeline, self.data_version)
        out = FilesPartitionRead(self.mdt_storage.uri, None, [], latest.requested_time if latest else None, valid)
        found = self._files_slice(out)
        if found is None:
            return out
        file_slice, listed = found
        out.base_file = file_slice.base_file.name if file_slice.base_file else None
        out.log_files = [lf.name for lf in file_slice.log_files]
        index = self._index(file_slice, listed, out) if keys is None else None
        kept = index.load(out.findings) if index is not None else None
        if kept is not None and index is not None:
            try:
                out.records, out.blocks = _read_of_index(*kept)
            except (ValueError, TypeError, KeyError) as exc:
                index.reject(out.findings, str(exc))
                kept = None
        if kept is None:
            findings_before = len(out.findings)
            out.records = self._merged(file_slice, keys, out)
            if index is not None and len(out.findings) == findings_before and not out.incomplete:
                table, spans = out.records.columns()
                written = index.save(table, _index_payload(spans, out.blocks))
                if written is not None:  # the file's pages from now on, not the decoded copy
                    out.records = RecordColumns.of_table(written, spans)
        names = out.records.live_names(ALL_PARTITIONS_KEY)
        # `getAllPartitionPaths`: a lone "." is the non-partitioned table's one partition.
        out.partitions = [""] if names == [NON_PARTITIONED_NAME] else sorted(partition_of_key(n)
                                                                             for n in names or [])
        if names is None:
            self._finding(out, Severity.WARNING, "metadata_partition_list_missing", FILES_PARTITION,
                          f"the files partition has no {ALL_PARTITIONS_KEY} record: Hudi lists no partition")
        return out

    def _merged(self, file_slice: FileSlice, keys: frozenset[str] | None,
                out: FilesPartitionRead) -> RecordColumns:
        """The slice's records: the log records merged among themselves, then onto the base file's."""
        log_records = self._merge_logs(file_slice, keys, out)
        base_records = self._base_records(file_slice, keys, out)
        merged: dict[str, ColumnarRecord] = {}
        for key in sorted(set(base_records) | set(log_records)):
            newer = log_records.get(key)
            older = base_records.pop(key, None)
            if newer is None:
                if older is not None:
                    merged[key] = older
                continue
            try:
                record = combine(older.files_record(key) if older is not None else None, newer)
            except MetadataRecordError as exc:
                self._finding(out, Severity.ERROR, "metadata_record_unmergeable", FILES_PARTITION, str(exc))
                continue
            if not record.deleted:
                merged[key] = ColumnarRecord.of(record)
        return RecordColumns(merged)

    def _index(self, file_slice: FileSlice, listed: dict[str, ListedFile],
               out: FilesPartitionRead) -> ListingIndex | None:
        """The listing index's entry for a whole read of `file_slice` (see :mod:`.metadata_index` for the key)."""
        files = [f for f in (file_slice.base_file, *file_slice.log_files) if f is not None]
        described = []
        for f in files:
            entry = listed.get(f.name)
            if entry is None:
                return None
            described.append((f.path, entry.size, entry.mtime_ms))
        pre_v8 = self.mdt_properties.version < 8
        first = self.mdt_timeline.first()
        depends_on = {
            "latest": out.latest_instant, "valid": sorted(out.valid_instants),
            "versions": [self.data_version, self.mdt_properties.version],
            "mdt_completed": sorted(i.requested_time for i in self.mdt_timeline.completed()) if pre_v8 else None,
            "mdt_first": first.requested_time if pre_v8 and first is not None else None,
        }
        return ListingIndex.of(self.mdt_storage, FILES_PARTITION, described, depends_on)

    def _finding(self, out: FilesPartitionRead, severity: Severity, code: str, path: str, message: str,
                 incomplete: bool = False) -> None:
        out.findings.append(Finding(severity, code, self.mdt_storage.uri_of(path), message))
        out.incomplete = out.incomplete or incomplete

    def _files_slice(self, out: FilesPartitionRead) -> tuple[FileSlice, dict[str, ListedFile]] | None:
        """`getPartitionLatestMergedFileSlices(files)`: the metadata table's view of its own `files` folder, and
        the folder's files by name."""
        from hudi_core.table.fsview import FileSystemView  # the view is built from a listing: a sibling module

        try:
            entries = self.mdt_storage.list_entries(FILES_PARTITION)
        except StorageError as exc:
            self._finding(out, Severity.ERROR, "metadata_files_unlistable", FILES_PARTITION,
                          f"cannot list the metadata table's files partition: {exc}", incomplete=True)
            return None
        files = sorted((ListedFile(n, int(s or 0), m) for n, s, m, d in entries if not d), key=lambda f: f.name)
        view = FileSystemView.from_listing({FILES_PARTITION: files}, self.mdt_timeline, self.mdt_properties.version,
                                           self.mdt_properties.base_file_format or "HFILE", storage=self.mdt_storage)
        out.findings.extend(view.findings)
        if out.latest_instant is None:
            self._finding(out, Severity.ERROR, "metadata_table_no_completed_instant", ".hoodie",
                          "the metadata table has no completed instant: Hudi's reader finds no file slice and fails",
                          incomplete=True)
            return None
        # A log file of a pending delta commit is a write in progress, whose blocks Hudi's reader skips: no finding.
        pending = {i.requested_time for i in self.mdt_timeline if i.is_pending}
        for f in files:
            parsed = parse_log_file_name(f.name)
            if parsed is not None and parsed.instant_time > out.latest_instant \
                    and parsed.instant_time not in pending:
                self._finding(out, Severity.WARNING, "metadata_log_after_latest", f"{FILES_PARTITION}/{f.name}",
                              f"metadata-table log file {f.name} names instant {parsed.instant_time}, after the "
                              f"metadata table's latest completed instant {out.latest_instant} and of no pending "
                              "one: not read (a file that does not belong here)")
        slices = view.latest_merged_slices(FILES_PARTITION)
        if not slices:
            self._finding(out, Severity.ERROR, "metadata_files_no_slice", FILES_PARTITION,
                          "the metadata table's files partition has no committed file slice: Hudi's reader fails",
                          incomplete=True)
            return None
        if len(slices) > 1:
            ids = ", ".join(s.file_id for s in slices)
            self._finding(out, Severity.WARNING, "metadata_files_many_groups", FILES_PARTITION,
                          f"the files partition has {len(slices)} file groups ({ids}); Hudi writes one: all are read")
        self._missing_logs(out, files, min(s.base_instant for s in slices))
        by_name = {f.name: f for f in files}
        if len(slices) == 1:
            return slices[0], by_name
        return FileSlice(FILES_PARTITION, slices[0].file_id, slices[0].base_instant, slices[0].base_file,
                         tuple(lf for s in slices for lf in s.log_files)), by_name

    def _missing_logs(self, out: FilesPartitionRead, files: builtins.list[ListedFile], base_instant: str) -> None:
        """Log files of the files partition that a completed delta commit after the slice's base instant wrote (its
        commit metadata names them) but storage no longer has: their records are lost to every reader, which lists
        the folder and never notices. Only the commits of the latest slice are read (a few since its compaction)."""
        listed = {f.name for f in files}
        for inst in self.mdt_timeline.completed():
            # Table version 8+ slices log files by completion time: a delta commit that completed after the
            # compaction that made the base file was requested writes into the new slice.
            if inst.completed_action != ia.DELTA_COMMIT or max(inst.requested_time,
                                                                inst.completion_time or "") <= base_instant:
                continue
            meta = self.mdt_timeline.commit_metadata(inst)
            for partition, _file_id, path, _logs in meta.write_refs() if meta is not None else ():
                name = posixpath.basename(path or "")
                if partition == FILES_PARTITION and name.startswith(".") and name not in listed:
                    self._finding(out, Severity.ERROR, "metadata_log_missing", f"{FILES_PARTITION}/{name}",
                                  f"metadata-table log file {name}, written by delta commit {inst.requested_time}, "
                                  "is missing on storage: the records it held are lost to every reader",
                                  incomplete=True)

    # -- log blocks -----------------------------------------------------------------------------

    def _merge_logs(self, file_slice: FileSlice, keys: frozenset[str] | None,
                    out: FilesPartitionRead) -> dict[str, FilesRecord]:
        """The log records merged among themselves, oldest first, counting only the blocks Hudi counts."""
        latest = out.latest_instant or SOLO_COMMIT_TIMESTAMP
        mdt_done = {i.requested_time for i in self.mdt_timeline.completed()}
        mdt_first = self.mdt_timeline.first()
        pre_v8 = self.mdt_properties.version < 8
        paths = [lf.path for lf in file_slice.log_files]
        contents = self.mdt_storage.read_many(paths) if paths else {}
        # Blocks queued in read order; a rollback command block drops earlier blocks of its target.
        queued: list[tuple[int, LogBlock, LogFileReader]] = []
        for path in paths:
            data = contents.get(path)
            if isinstance(data, StorageError) or data is None:
                self._finding(out, Severity.ERROR, "metadata_log_unreadable", path,
                              f"cannot read metadata-table log file {path} (deleted, or not readable): {data}",
                              incomplete=True)
                continue
            if not data:
                self._finding(out, Severity.WARNING, "metadata_log_empty", path,
                              f"metadata-table log file {path} is empty (0 bytes): it holds no block; a writer "
                              "that failed before its first block leaves one")
                continue
            reader = LogFileReader(_Bytes(path, data), path, len(data), head=data)
            scan = reader.scan()
            if scan.error is not None:
                self._finding(out, Severity.ERROR, "metadata_log_damaged", path,
                              f"metadata-table log file stops early: {scan.error}", incomplete=True)
            for block in scan.blocks:
                use_index = len(out.blocks)
                instant = block.instant_time
                kind = block.type_name
                if block.corrupt:
                    out.blocks.append(BlockUse(path, block.offset, kind, instant, BlockDecision.CORRUPT))
                    queued.append((use_index, block, reader))
                    self._finding(out, Severity.WARNING, "metadata_log_corrupt_block", path,
                                  f"corrupt block at offset {block.offset} ({block.corrupt_reason}); Hudi skips it")
                    continue
                if block.block_type is BlockType.COMMAND_BLOCK:
                    out.blocks.append(BlockUse(path, block.offset, kind, instant, BlockDecision.COMMAND))
                    if block.is_rollback and block.target_instant_time:
                        target = block.target_instant_time
                        kept = []
                        for idx, b, r in queued:
                            if b.instant_time == target:
                                out.blocks[idx] = _with(out.blocks[idx], BlockDecision.ROLLED_BACK)
                            else:
                                kept.append((idx, b, r))
                        queued = kept
                    continue
                decision = BlockDecision.APPLIED
                if pre_v8 and instant is not None and instant not in mdt_done and not (
                        mdt_first is not None and instant < mdt_first.requested_time):
                    decision = BlockDecision.UNCOMMITTED
                elif instant is None or instant > latest:
                    decision = BlockDecision.AFTER_LATEST_INSTANT
                elif instant not in out.valid_instants:
                    decision = BlockDecision.NOT_VALID_INSTANT
                out.blocks.append(BlockUse(path, block.offset, kind, instant, decision))
                if decision is BlockDecision.APPLIED:
                    queued.append((use_index, block, reader))
        merged: dict[str, FilesRecord] = {}
        for idx, block, reader in queued:
            if block.corrupt:
                continue
            records = self._block_records(block, reader, keys, out, idx)
            if records is None:
                continue
            out.blocks[idx] = _with(out.blocks[idx], out.blocks[idx].decision, len(records))
            for record in records:
                try:
                    merged[record.key] = combine(merged.get(record.key), record)
                except MetadataRecordError as exc:
                    self._finding(out, Severity.ERROR, "metadata_record_unmergeable", block.path, str(exc))
        return merged

    def _block_records(self, block: LogBlock, reader: LogFileReader, keys: frozenset[str] | None,
                       out: FilesPartitionRead, idx: int) -> builtins.list[FilesRecord] | None:
        """The `files` records of one counted data or delete block (None, with a finding, when unreadable)."""
        try:
            content = reader.content(block)
            if block.block_type is BlockType.DELETE_BLOCK:
                deletes = decode_delete_content(content)
                return [FilesRecord.delete(d.record_key) for d in deletes
                        if d.record_key is not None and (keys is None or d.record_key in keys)]
            if block.block_type is BlockType.HFILE_DATA_BLOCK:
                hfile = HFileReader.from_bytes(content, f"{block.path} @ {block.offset}")
                schema = block.schema or _text(hfile.file_info.get("schema"))
                if not schema:
                    raise MetadataRecordError("the HFile block has no writer schema (no SCHEMA header)")
                cells: Iterable[tuple[str, bytes | None]] = (
                    hfile.scan() if keys is None else hfile.get_many(keys).items())
                first: dict[str, bytes] = {}
                repeated = sorted(hfile.repeated_keys)
                for k, v in cells:
                    if v is not None and k in first:
                        repeated.append(k)
                    elif v is not None:
                        first[k] = v  # the first copy, as a key lookup answers
                if repeated:
                    self._finding(out, Severity.ERROR, "metadata_key_repeated", block.path,
                                  f"{block.type_name} block at offset {block.offset} holds key(s) more than once "
                                  f"({', '.join(repr(k) for k in repeated[:5])}): the first copy was used",
                                  incomplete=True)
                return [decode_files_record(k, v, schema) for k, v in first.items()]
            if block.block_type in (BlockType.AVRO_DATA_BLOCK,):
                rows = decode_avro_content(content, block.schema or "")
                return [files_record_of(r) for r in rows if keys is None or r.get("key") in keys]
            self._finding(out, Severity.WARNING, "metadata_log_unexpected_block", block.path,
                          f"{block.type_name} block at offset {block.offset} in the files partition: not read")
        except (DecodeError, LogFileError, StorageError, HFileError) as exc:
            self._finding(out, Severity.ERROR, "metadata_block_unreadable", block.path,
                          f"{block.type_name} block at offset {block.offset} (instant {block.instant_time}) does "
                          f"not decode: {exc}", incomplete=True)
        out.blocks[idx] = _with(out.blocks[idx], BlockDecision.UNREADABLE)
        return None

    # -- base file ------------------------------------------------------------------------------

    def _base_records(self, file_slice: FileSlice, keys: frozenset[str] | None,
                      out: FilesPartitionRead) -> dict[str, ColumnarRecord]:
        base = file_slice.base_file
        if base is None:
            return {}
        path = base.path
        try:
            if keys is None:
                # The whole file is needed: one read, not a read per block.
                hfile = HFileReader.from_bytes(self.mdt_storage.read(path), self.mdt_storage.uri_of(path))
                cells: Iterable[tuple[str, bytes | None]] = hfile.scan()
            else:
                hfile = HFileReader.open(self.mdt_storage, path)
                cells = hfile.get_many(keys).items()
            schema = _text(hfile.file_info.get("schema"))
            if not schema:
                raise MetadataRecordError("the base HFile has no writer schema (file info 'schema')")
            records: dict[str, ColumnarRecord] = {}
            repeated: list[str] = []
            for key, value in cells:
                if value is None:
                    continue
                if key in records:  # a whole-file read keeps the first copy, as a key lookup answers
                    repeated.append(key)
                    continue
                records[key] = ColumnarRecord.of(decode_files_record(key, value, schema))
            repeated += sorted(k for k in hfile.repeated_keys if k not in repeated)
            if hfile.unverified_absent:
                self._finding(out, Severity.WARNING, "metadata_absent_unproved", path,
                              f"the files partition's base file {base.name} is {hfile.size:,} bytes: a partition "
                              "it does not hold was not proved absent by reading every key's order (a key "
                              "misplaced into another block would be missed, as Hudi's seek misses it)")
            if repeated:
                shown = ", ".join(repr(k) for k in repeated[:5]) + (" ..." if len(repeated) > 5 else "")
                self._finding(out, Severity.ERROR, "metadata_key_repeated", path,
                              f"the files partition's base file {base.name} holds {len(repeated)} key(s) more than "
                              f"once ({shown}): a files-partition key is unique, so the file is damaged; the first "
                              "copy was used", incomplete=True)
            return records
        except (DecodeError, StorageError, HFileError) as exc:
            self._finding(out, Severity.ERROR, "metadata_base_unreadable", path,
                          f"the files partition's base file {base.name} cannot be read: {exc}", incomplete=True)
            return {}


# -- the read as the listing index keeps it ------------------------------------------------------------------


def _index_payload(spans: Sequence[RecordSpan], blocks: Sequence[BlockUse]) -> dict[str, Any]:
    """What the listing index keeps of a read beside its table of live files, as JSON rows (read back by
    :func:`_read_of_index`)."""
    return {"spans": [[s.key, s.start, s.length, s.record_type,
                       [[n, e.size, e.is_deleted] for n, e in s.tombstones.items()]] for s in spans],
            "blocks": [[b.log_file, b.offset, b.block_type, b.instant_time, b.decision.value, b.records]
                       for b in blocks]}


def _read_of_index(table: pa.Table, payload: dict[str, Any]) -> tuple[RecordColumns, list[BlockUse]]:
    """The records and blocks of a kept read (:func:`_index_payload`); ValueError, TypeError or KeyError for
    content no read keeps (records outside the table, a decision the reader does not make)."""
    spans = [RecordSpan(str(key), int(start), int(length), int(kind),
                        {str(n): FileEntry(int(size), bool(dead)) for n, size, dead in tombstones})
             for key, start, length, kind, tombstones in payload["spans"]]
    if any(s.start < 0 or s.length < 0 or s.start + s.length > table.num_rows for s in spans):
        raise ValueError("a record's rows lie outside its table")
    blocks = [BlockUse(str(log), int(offset), str(kind), None if instant is None else str(instant),
                       BlockDecision(decision), int(records))
              for log, offset, kind, instant, decision, records in payload["blocks"]]
    return RecordColumns.of_table(table, spans), blocks


class _Bytes:
    """A file already in memory, offered as the log reader's storage (one read per log file)."""

    def __init__(self, path: str, data: bytes) -> None:
        self.path = path
        self.data = data

    def read_range(self, path: str, start: int, length: int) -> bytes:
        return self.data[start:start + length]

    def stat(self, path: str) -> NoReturn:
        raise StorageError(f"{path}: size given by the caller")


def _with(use: BlockUse, decision: BlockDecision, records: int | None = None) -> BlockUse:
    return BlockUse(use.log_file, use.offset, use.block_type, use.instant_time, decision,
                    use.records if records is None else records)


def _text(raw: bytes | None) -> str:
    return raw.decode("utf-8", "replace") if raw else ""
