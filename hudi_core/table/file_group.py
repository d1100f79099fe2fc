"""File groups and file slices: Hudi's file model, built from a listing (spec `01` §6.2-6.4).

Emulates Hudi 1.1.x (`HoodieFileGroup`, `FileSlice`, `AbstractTableFileSystemView.buildFileGroups`):
every file of a partition is classified (base file of the table's format, log file, partition
metafile, or *unexpected*), and file groups are built with the rules of the table version:

* **v6/v7** place a log file in the slice named by its embedded base instant;
* **v8+** place it by completion time (`HoodieFileGroup.getBaseInstantTime`).

Ordering conventions (used by every type below):

* :attr:`FileGroup.slices` is **newest first**, like Hudi's reverse-ordered `TreeMap` of slices;
* :attr:`FileSlice.log_files` is **oldest first** (`HoodieLogFile.getLogFileComparator`: delta
  commit time, version, write token), the order a reader applies them in. Hudi's own `FileSlice`
  keeps them newest first; hudi-rs, like this module, oldest first.

Where the listing came from (storage or the metadata table) does not matter here: see
:mod:`hudi_core.table.listing`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from hudi_core.errors import Finding, Severity
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.active import Timeline
from hudi_core.io.filenames import PARTITION_METAFILE_PREFIX, LogFileName, base_file_parts, parse_log_file_name
from hudi_core.lazy import LazyModule
from hudi_core.table.listing import ListedFile

pc: Any = LazyModule("pyarrow.compute")

#: `(partition path, file id)`: Hudi's `HoodieFileGroupId`.
FileGroupId = tuple[str, str]

# `HoodieTimeline.DEFAULT_MILLIS_EXT`: 17-digit times ending in it also match their 14-digit form.
_DEFAULT_MILLIS_EXT = "999"


def data_file_path(partition: str, name: str) -> str:
    """A data file's root-relative path: `posixpath.join(partition, name) if partition else name`, without its
    overhead (hot at scale)."""
    if not partition or name.startswith("/"):
        return name
    return partition + name if partition.endswith("/") else f"{partition}/{name}"


def data_file_paths(partitions: Any, names: Any) -> Any:
    """:func:`data_file_path` over Arrow: `names` a string array, `partitions` a string array of the same length or
    one string scalar (every name in one partition)."""
    separator = pc.if_else(pc.ends_with(partitions, "/"), "", "/")
    joined = pc.binary_join_element_wise(partitions, separator, names, "")
    return pc.if_else(pc.or_(pc.equal(partitions, ""), pc.starts_with(names, "/")), names, joined)


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
        return data_file_path(self.partition, self.name)


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
        return data_file_path(self.partition, self.name)

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


class TimelineFacts:
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
    facts: TimelineFacts,
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
    no_bases: list[BaseFile] = []
    no_logs: list[LogFile] = []
    for file_id in sorted(set(bases) | set(logs)):
        slice_base: dict[str, BaseFile | None] = {}
        slice_logs: dict[str, list[LogFile]] = {}
        group_bases = bases.get(file_id, no_bases)
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
        group_logs = logs.get(file_id, no_logs)
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


def _log_slice_key(log: LogFile, keys_newest_first: list[str], facts: TimelineFacts) -> str:
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


def classify_files(
    partition: str,
    files: Iterable[ListedFile],
    ext: str,
    uri_of: Callable[[str], str],
    findings: list[Finding],
    cdc: list[str],
    shared: dict[str, str] | None = None,
) -> tuple[list[BaseFile], list[LogFile]]:
    """Split a partition's files into base and log files; report the ones Hudi would not read.

    `uri_of` turns a root-relative path into the URI a finding names.
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
            Severity.WARNING, "unexpected_file_in_partition", uri_of(path),
            f"{name} in partition {partition or '(root)'!r} is {reason}; Hudi ignores it",
        ))
    return bases, logs

