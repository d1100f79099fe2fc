"""Typed views of Hudi's timeline metadata records (spec `01` §2).

Each record keeps the decoded dict in `raw`, so nothing is lost, and exposes the fields the engine
reasons about with Python names. `from_dict` accepts both the Avro form (layout 2) and the Jackson
JSON form of layout 1, which use the same field names.
"""

from __future__ import annotations

import functools
import json
import operator
import posixpath
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _int(value: Any) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _is_map(value: Any) -> TypeGuard[Mapping[str, Any]]:
    """`isinstance(value, Mapping)`, with the common case (a dict) answered without the ABC check."""
    return type(value) is dict or isinstance(value, Mapping)


def _map(value: Any) -> dict[str, Any]:
    return dict(value) if _is_map(value) else {}


def _list(value: Any) -> list[Any]:
    return list(value) if isinstance(value, (list, tuple)) else []


@dataclass(frozen=True)
class InstantInfo:
    """`HoodieInstantInfo` / `HoodieActionInstant`: a (time, action[, state]) reference."""

    timestamp: str
    action: str | None
    state: str | None = None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any] | None) -> InstantInfo | None:
        if not d:
            return None
        ts = d.get("commitTime", d.get("timestamp"))
        if ts is None:
            return None
        return cls(str(ts), _str(d.get("action")), _str(d.get("state")))


def updates_existing_group(prev_commit: Any) -> bool:
    """Whether a write stat with this `prevCommit` rewrote an existing file group (leaving an older slice
    behind): set and not ``"null"`` in any case, as `HoodieCommitMetadata` reads it (a new group's writer
    records the string ``"null"``)."""
    return prev_commit is not None and str(prev_commit).lower() != "null"


class LazyRaw:
    """Mixin of the typed records: a record rebuilt from the active-timeline index
    (:mod:`hudi_core.formats.timeline.active_index`) has every typed field but not the decoded field dict; `raw`
    is read from the body file on first access (`_raw_loader`), so only a reader of the whole record pays a
    decode. Pickling resolves it first (a loader is bound to an open timeline)."""

    def __getattr__(self, name: str) -> Any:
        if name == "raw":
            loader = self.__dict__.get("_raw_loader")
            if loader is not None:
                raw = loader()
                object.__setattr__(self, "raw", raw)
                self.__dict__.pop("_raw_loader", None)
                return raw
        raise AttributeError(name)

    def __getstate__(self) -> dict[str, Any]:
        if "_raw_loader" in self.__dict__:
            self.raw  # noqa: B018 - resolves the lazy field before the loader is dropped
        return {k: v for k, v in self.__dict__.items() if k != "_raw_loader"}


#: `WriteStat`'s typed fields in order: what :func:`stat_row` reads from a stat's field dict.
STAT_ROW_FIELDS = (
    "file_id", "path", "partition_path", "prev_commit", "num_writes", "num_inserts", "num_update_writes",
    "num_deletes", "total_write_bytes", "file_size_in_bytes", "base_file", "log_files", "log_version",
    "total_log_blocks", "total_corrupt_log_block", "total_rollback_blocks", "log_offset",
)


#: The field-dict key of each of :data:`STAT_ROW_FIELDS`.
STAT_ROW_KEYS = (
    "fileId", "path", "partitionPath", "prevCommit", "numWrites", "numInserts", "numUpdateWrites", "numDeletes",
    "totalWriteBytes", "fileSizeInBytes", "baseFile", "logFiles", "logVersion", "totalLogBlocks",
    "totalCorruptLogBlock", "totalRollbackBlocks", "logOffset",
)
_STAT_STRINGS = ("fileId", "path", "partitionPath", "prevCommit")
_STAT_COUNTS = ("numWrites", "numInserts", "numUpdateWrites", "numDeletes", "totalWriteBytes", "fileSizeInBytes")
_STAT_LOG_COUNTS = ("logVersion", "totalLogBlocks", "totalCorruptLogBlock", "totalRollbackBlocks", "logOffset")


def stat_row(d: Mapping[str, Any]) -> tuple[Any, ...]:
    """The typed values of one `HoodieWriteStat` field dict, in :data:`STAT_ROW_FIELDS` order (the one place
    they are read: :meth:`WriteStat.from_dict` and the active-timeline index): strings as :func:`_str`, counts
    as :func:`_int` reads them, with the common types (a string, an int) passed through without a call
    (performance: 100k stats per 1,000 commits)."""
    get = d.get
    out: list[Any] = []
    for key in _STAT_STRINGS:
        v = get(key)
        out.append(v if v is None or v.__class__ is str else str(v))
    for key in _STAT_COUNTS:
        v = get(key)
        out.append(v if v.__class__ is int else _int(v))
    v = get("baseFile")
    out.append(v if v is None or v.__class__ is str else str(v))
    v = get("logFiles")
    out.append(tuple(str(x) for x in v) if isinstance(v, (list, tuple)) else ())
    for key in _STAT_LOG_COUNTS:
        v = get(key)
        out.append(v if v.__class__ is int else _int(v))
    return tuple(out)


@dataclass(frozen=True)
class WriteStat(LazyRaw):
    """`HoodieWriteStat`: one file written by a commit. `path` is relative to the base path.
    `log_offset` is `HoodieDeltaWriteStat.logOffset` (where an append started in its log file)."""

    file_id: str | None
    path: str | None
    partition_path: str | None
    prev_commit: str | None
    num_writes: int | None
    num_inserts: int | None
    num_update_writes: int | None
    num_deletes: int | None
    total_write_bytes: int | None
    file_size_in_bytes: int | None
    base_file: str | None
    log_files: tuple[str, ...]
    log_version: int | None
    total_log_blocks: int | None
    total_corrupt_log_block: int | None
    total_rollback_blocks: int | None
    log_offset: int | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def file_name(self) -> str | None:
        return posixpath.basename(self.path) if self.path else None

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> WriteStat:
        return cls.from_row(stat_row(d), dict(d))

    @classmethod
    def from_row(cls, row: tuple[Any, ...], raw: dict[str, Any] | None = None) -> WriteStat:
        """A stat from its :func:`stat_row` values (without `raw`: an index row, whose dict is not kept)."""
        obj = object.__new__(cls)
        values = dict(zip(STAT_ROW_FIELDS, row, strict=True))
        if raw is not None:
            values["raw"] = raw
        obj.__dict__.update(values)
        return obj


#: `CommitMetadata` attributes set from the top level of the record (everything but the write stats).
_COMMIT_TOP_LEVEL = frozenset(
    {"operation_type", "compacted", "extra_metadata", "partition_to_replace_file_ids", "is_replace", "raw"}
)


def _write_stats_of(value: Any) -> dict[str, list[WriteStat]]:
    return {
        str(p): [WriteStat.from_dict(s) for s in _list(items) if _is_map(s)]
        for p, items in _map(value).items()
    }


#: The write stats of a record rebuilt from the active-timeline index: the partition keys in the body's order,
#: and a function giving every stat as ``(key, stat_row)`` in the body's order (read when first needed).
SummaryStats = tuple[list[str], Callable[[], list[tuple[str, tuple[Any, ...]]]]]


@dataclass(frozen=True)
class CommitMetadata(LazyRaw):
    """`HoodieCommitMetadata` and `HoodieReplaceCommitMetadata` (replace adds replaced file ids).

    Built lazily (performance: a large table holds millions of write stats, most never looked at):
    :meth:`from_dict` sets the top-level fields and builds `partition_to_write_stats` on first
    access; :meth:`from_json` keeps the record's JSON text and parses it on first access of any
    field; :meth:`from_summary` (the active-timeline index) has the typed top-level fields and the stats'
    rows, and decodes the body only when `raw` is read. Every attribute reads exactly as an eagerly built
    record would.
    """

    operation_type: str | None
    compacted: bool | None
    extra_metadata: dict[str, str]
    partition_to_write_stats: dict[str, list[WriteStat]]
    partition_to_replace_file_ids: dict[str, list[str]]
    is_replace: bool
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], is_replace: bool = False) -> CommitMetadata:
        obj = object.__new__(cls)
        obj._set_top_level(dict(d), is_replace)
        return obj

    @classmethod
    def from_json(cls, text: str | bytes, is_replace: bool = False) -> CommitMetadata:
        """A record over the JSON text of its field dict (as :meth:`from_dict` of ``json.loads(text)``),
        parsed on first access; `bytes` are that text zlib-compressed (as bulk decoding ships it).
        The text must hold a JSON object (bulk decoding has checked it)."""
        obj = object.__new__(cls)
        object.__setattr__(obj, "_pending_json", (text, is_replace))
        return obj

    @classmethod
    def from_summary(cls, top: Mapping[str, Any], stats: SummaryStats | None,
                     raw_loader: Callable[[], dict[str, Any]]) -> CommitMetadata:
        """A record from its typed top-level fields (`top`: every attribute of :data:`_COMMIT_TOP_LEVEL` but
        `raw`), its stats' rows (``None``: not kept, read from `raw` when asked), and a function decoding the
        body for `raw` (see :class:`LazyRaw`)."""
        obj = object.__new__(cls)
        obj.__dict__.update(top)
        if stats is not None:
            obj.__dict__["_summary_stats"] = stats
        obj.__dict__["_raw_loader"] = raw_loader
        return obj

    def summary_top_level(self) -> dict[str, Any]:
        """The typed top-level fields :meth:`from_summary` takes (the index records them)."""
        return {name: getattr(self, name) for name in sorted(_COMMIT_TOP_LEVEL - {"raw"})}

    def summary_rows(self) -> tuple[list[str], list[tuple[str, tuple[Any, ...]]]]:
        """The partition keys and ``(key, stat_row)`` of every stat, in the body's order, from whatever this
        record holds (built stats, the field dict or index rows), building no :class:`WriteStat`."""
        state = self.__dict__
        if "partition_to_write_stats" in state:
            stats = state["partition_to_write_stats"]
            values = operator.attrgetter(*STAT_ROW_FIELDS)
            return list(stats), [(p, values(s)) for p, items in stats.items() for s in items]
        if "_summary_stats" in state:
            keys, rows = state["_summary_stats"]
            return list(keys), rows()
        keys, dicts = self.stat_dicts()
        return keys, [(p, stat_row(d)) for p, d in dicts]

    def stat_dicts(self) -> tuple[list[str], list[tuple[str, Mapping[str, Any]]]]:
        """The partition keys and ``(key, field dict)`` of every stat of the body's field dict, in the body's
        order: the stats :meth:`summary_rows` reads with :func:`stat_row` when the record holds neither built
        stats nor index rows."""
        value = _map(self.raw.get("partitionToWriteStats"))
        return [str(p) for p in value], [(str(p), d) for p, items in value.items() for d in _list(items)
                                         if _is_map(d)]

    def reads_stats_from_fields(self) -> bool:
        """Whether :meth:`summary_rows` reads the stats from the body's field dict (neither built stats nor
        index rows are held)."""
        return "partition_to_write_stats" not in self.__dict__ and "_summary_stats" not in self.__dict__

    def stat_raw(self, key: str, position: int) -> dict[str, Any]:
        """The field dict of the `position`-th write stat of partition `key` (as :func:`_write_stats_of` counts)."""
        items = next((v for p, v in _map(self.raw.get("partitionToWriteStats")).items() if str(p) == key), None)
        return dict([d for d in _list(items) if _is_map(d)][position])

    def __getstate__(self) -> dict[str, Any]:
        if "_summary_stats" in self.__dict__:
            self.partition_to_write_stats  # noqa: B018 - built before the row source is dropped
        state = LazyRaw.__getstate__(self)
        state.pop("_summary_stats", None)
        return state

    def _set_top_level(self, d: dict[str, Any], is_replace: bool) -> None:
        replaced = {
            str(p): [str(x) for x in _list(ids)]
            for p, ids in _map(d.get("partitionToReplaceFileIds")).items()
        }
        values = {
            "operation_type": _str(d.get("operationType")),
            "compacted": d.get("compacted"),
            "extra_metadata": {str(k): str(v) for k, v in _map(d.get("extraMetadata")).items() if v is not None},
            "partition_to_replace_file_ids": replaced,
            "is_replace": is_replace or "partitionToReplaceFileIds" in d,
            "raw": d,
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes not set yet: the lazily parsed/built parts.
        state = self.__dict__
        if name in _COMMIT_TOP_LEVEL and "_pending_json" in state:
            text, is_replace = state["_pending_json"]
            if isinstance(text, bytes):
                text = zlib.decompress(text).decode("utf-8")
            self._set_top_level(json.loads(text), is_replace)
            state.pop("_pending_json", None)
            return state[name]
        if name == "partition_to_write_stats" and "_summary_stats" in state:
            keys, rows = state["_summary_stats"]
            built: dict[str, list[WriteStat]] = {k: [] for k in keys}
            for key, row in rows():
                stat = WriteStat.from_row(row)
                # Its field dict, if ever read, is the body's (decoded then, see LazyRaw).
                stat.__dict__["_raw_loader"] = functools.partial(self.stat_raw, key, len(built[key]))
                built[key].append(stat)
            object.__setattr__(self, name, built)
            return built
        if name == "partition_to_write_stats" and ("raw" in state or "_pending_json" in state
                                                   or "_raw_loader" in state):
            stats = _write_stats_of(self.raw.get("partitionToWriteStats"))
            object.__setattr__(self, name, stats)
            return stats
        return LazyRaw.__getattr__(self, name)

    def write_partitions(self) -> list[str]:
        """The keys of `partition_to_write_stats` (written partitions), without building the stats."""
        if "partition_to_write_stats" in self.__dict__:
            return list(self.partition_to_write_stats)
        if "_summary_stats" in self.__dict__:
            return list(self.__dict__["_summary_stats"][0])
        return [str(p) for p in _map(self.raw.get("partitionToWriteStats"))]

    def write_stats(self) -> list[WriteStat]:
        return [s for stats in self.partition_to_write_stats.values() for s in stats]

    def partitions_with_updated_groups(self) -> list[str]:
        """Written partitions where a write stat rewrote an existing file group
        (`getWritePartitionPathsWithUpdatedFileGroups`, 1.2), without building a :class:`WriteStat` each."""
        if "partition_to_write_stats" in self.__dict__:
            return [p for p, stats in self.partition_to_write_stats.items()
                    if any(updates_existing_group(s.prev_commit) for s in stats)]
        if "_summary_stats" in self.__dict__:
            keys, rows = self.__dict__["_summary_stats"]
            updated = {key for key, row in rows() if updates_existing_group(row[3])}
            return [p for p in keys if p in updated]
        return [str(p) for p, items in _map(self.raw.get("partitionToWriteStats")).items()
                if any(_is_map(d) and updates_existing_group(d.get("prevCommit")) for d in _list(items))]

    def log_write_refs(self) -> list[tuple[str | None, str | None, int | None, tuple[str, ...]]]:
        """``(file_id, path, log_offset, log_files)`` of every write stat, as :meth:`write_stats` reads
        them (`fileId`, `path`, `logOffset`, `logFiles` of `HoodieDeltaWriteStat`), without building a
        :class:`WriteStat` each: the duplicate analysis reads these four of 100k stats."""
        if "partition_to_write_stats" in self.__dict__:
            return [(s.file_id, s.path, s.log_offset, s.log_files) for s in self.write_stats()]
        if "_summary_stats" in self.__dict__:
            return [(row[0], row[1], row[16], row[11]) for _, row in self.__dict__["_summary_stats"][1]()]
        return [
            (_str(d.get("fileId")), _str(d.get("path")), _int(d.get("logOffset")),
             tuple(str(x) for x in _list(d.get("logFiles"))))
            for items in _map(self.raw.get("partitionToWriteStats")).values()
            for d in _list(items) if _is_map(d)
        ]

    def write_refs(self) -> list[tuple[str, str | None, str | None, tuple[str, ...]]]:
        """``(partition, file_id, path, log_files)`` of every write stat in :attr:`partition_to_write_stats` order,
        without building (and keeping) a :class:`WriteStat` each: the doctor reads these of a million stats on L."""
        if "partition_to_write_stats" in self.__dict__:
            return [(p, s.file_id, s.path, s.log_files) for p, stats in self.partition_to_write_stats.items()
                    for s in stats]
        if "_summary_stats" in self.__dict__:
            return [(key, row[0], row[1], row[11]) for key, row in self.__dict__["_summary_stats"][1]()]
        out = []
        for p, items in _map(self.raw.get("partitionToWriteStats")).items():
            for d in _list(items):
                if _is_map(d):
                    row = stat_row(d)
                    out.append((str(p), row[0], row[1], row[11]))
        return out

    def replaced_file_ids(self) -> list[tuple[str, str]]:
        return [(p, fid) for p, ids in self.partition_to_replace_file_ids.items() for fid in ids]


@dataclass(frozen=True)
class CleanFileInfo:
    """`HoodieCleanFileInfo`: a file the clean plan deletes (a full path in plan v2)."""

    file_path: str
    is_bootstrap_base_file: bool


@dataclass(frozen=True)
class CleanerPlan(LazyRaw):
    """`HoodieCleanerPlan`. Plan v1 file names are read into the v2 shape (names, not paths)."""

    earliest_instant_to_retain: InstantInfo | None
    last_completed_commit_timestamp: str
    policy: str | None
    version: int | None
    file_paths_to_delete: dict[str, list[CleanFileInfo]]
    partitions_to_be_deleted: list[str]
    extra_metadata: dict[str, str]
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def savepointed_timestamps(self) -> list[str]:
        """`savepointed_timestamps` the planner recorded (HUDI-7779 as shipped, spec `02` §3)."""
        return split_timestamps(self.extra_metadata.get("savepointed_timestamps"))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CleanerPlan:
        files: dict[str, list[CleanFileInfo]] = {}
        for partition, infos in _map(d.get("filePathsToBeDeletedPerPartition")).items():
            files[str(partition)] = [
                CleanFileInfo(str(i.get("filePath")), bool(i.get("isBootstrapBaseFile")))
                for i in _list(infos)
                if _is_map(i)
            ]
        for partition, names in _map(d.get("filesToBeDeletedPerPartition")).items():
            files.setdefault(str(partition), [CleanFileInfo(str(n), False) for n in _list(names)])
        return cls(
            earliest_instant_to_retain=InstantInfo.from_dict(d.get("earliestInstantToRetain")),
            last_completed_commit_timestamp=str(d.get("lastCompletedCommitTimestamp") or ""),
            policy=_str(d.get("policy")),
            version=_int(d.get("version")),
            file_paths_to_delete=files,
            partitions_to_be_deleted=[str(p) for p in _list(d.get("partitionsToBeDeleted"))],
            extra_metadata={str(k): str(v) for k, v in _map(d.get("extraMetadata")).items() if v is not None},
            raw=dict(d),
        )


def split_timestamps(value: str | None) -> list[str]:
    """A comma-separated list of instant times (as `savepointed_timestamps` is stored)."""
    if not value:
        return []
    return [v.strip() for v in value.split(",") if v.strip()]


@dataclass(frozen=True)
class CleanPartitionMetadata:
    """`HoodieCleanPartitionMetadata`: what one partition's clean deleted."""

    partition_path: str
    policy: str | None
    delete_path_patterns: list[str]
    success_delete_files: list[str]
    failed_delete_files: list[str]
    is_partition_deleted: bool


@dataclass(frozen=True)
class CleanMetadata(LazyRaw):
    """`HoodieCleanMetadata`: a completed clean, with the ECTR it used."""

    start_clean_time: str | None
    time_taken_ms: int | None
    total_files_deleted: int | None
    earliest_commit_to_retain: str | None
    last_completed_commit_timestamp: str
    partition_metadata: dict[str, CleanPartitionMetadata]
    version: int | None
    extra_metadata: dict[str, str]
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def savepointed_timestamps(self) -> list[str]:
        return split_timestamps(self.extra_metadata.get("savepointed_timestamps"))

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CleanMetadata:
        parts = {}
        for partition, pm in _map(d.get("partitionMetadata")).items():
            pm = _map(pm)
            parts[str(partition)] = CleanPartitionMetadata(
                partition_path=str(pm.get("partitionPath", partition)),
                policy=_str(pm.get("policy")),
                delete_path_patterns=[str(x) for x in _list(pm.get("deletePathPatterns"))],
                success_delete_files=[str(x) for x in _list(pm.get("successDeleteFiles"))],
                failed_delete_files=[str(x) for x in _list(pm.get("failedDeleteFiles"))],
                is_partition_deleted=bool(pm.get("isPartitionDeleted")),
            )
        ectr = _str(d.get("earliestCommitToRetain"))
        return cls(
            start_clean_time=_str(d.get("startCleanTime")),
            time_taken_ms=_int(d.get("timeTakenInMillis")),
            total_files_deleted=_int(d.get("totalFilesDeleted")),
            earliest_commit_to_retain=ectr or None,
            last_completed_commit_timestamp=str(d.get("lastCompletedCommitTimestamp") or ""),
            partition_metadata=parts,
            version=_int(d.get("version")),
            extra_metadata={str(k): str(v) for k, v in _map(d.get("extraMetadata")).items() if v is not None},
            raw=dict(d),
        )


@dataclass(frozen=True)
class CompactionOperation:
    """`HoodieCompactionOperation`: one file slice a compaction plan merges."""

    partition_path: str
    file_id: str
    base_instant_time: str | None
    data_file_path: str | None
    delta_file_paths: list[str]


@dataclass(frozen=True)
class CompactionPlan(LazyRaw):
    """`HoodieCompactionPlan` (compaction and logcompaction)."""

    operations: list[CompactionOperation]
    extra_metadata: dict[str, str]
    version: int | None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> CompactionPlan:
        ops = [
            CompactionOperation(
                partition_path=str(op.get("partitionPath") or ""),
                file_id=str(op.get("fileId") or ""),
                base_instant_time=_str(op.get("baseInstantTime")),
                data_file_path=_str(op.get("dataFilePath")),
                delta_file_paths=[str(x) for x in _list(op.get("deltaFilePaths"))],
            )
            for op in _list(d.get("operations"))
            if _is_map(op)
        ]
        return cls(
            operations=ops,
            extra_metadata={str(k): str(v) for k, v in _map(d.get("extraMetadata")).items() if v is not None},
            version=_int(d.get("version")),
            raw=dict(d),
        )


@dataclass(frozen=True)
class ClusteringSlice:
    """`HoodieSliceInfo`: one input slice of a clustering group."""

    partition_path: str
    file_id: str
    data_file_path: str | None
    delta_file_paths: list[str]


@dataclass(frozen=True)
class RequestedReplaceMetadata(LazyRaw):
    """`HoodieRequestedReplaceMetadata`; `clustering_slices` flattens the clustering plan."""

    operation_type: str | None
    clustering_slices: list[ClusteringSlice]
    clustering_groups: int
    extra_metadata: dict[str, str]
    version: int | None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RequestedReplaceMetadata:
        plan = _map(d.get("clusteringPlan"))
        groups = _list(plan.get("inputGroups"))
        slices = [
            ClusteringSlice(
                partition_path=str(s.get("partitionPath") or ""),
                file_id=str(s.get("fileId") or ""),
                data_file_path=_str(s.get("dataFilePath")),
                delta_file_paths=[str(x) for x in _list(s.get("deltaFilePaths"))],
            )
            for g in groups
            if _is_map(g)
            for s in _list(g.get("slices"))
            if _is_map(s)
        ]
        return cls(
            operation_type=_str(d.get("operationType")),
            clustering_slices=slices,
            clustering_groups=len(groups),
            extra_metadata={str(k): str(v) for k, v in _map(d.get("extraMetadata")).items() if v is not None},
            version=_int(d.get("version")),
            raw=dict(d),
        )


@dataclass(frozen=True)
class RollbackRequest:
    """`HoodieRollbackRequest`: files (and log blocks) one rollback removes in a file group."""

    partition_path: str
    file_id: str | None
    latest_base_instant: str | None
    files_to_be_deleted: list[str]
    log_blocks_to_be_deleted: dict[str, int]


@dataclass(frozen=True)
class RollbackPlan(LazyRaw):
    """`HoodieRollbackPlan`: the instant to roll back and the per-file requests."""

    instant_to_rollback: InstantInfo | None
    rollback_requests: list[RollbackRequest]
    version: int | None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RollbackPlan:
        reqs = [
            RollbackRequest(
                partition_path=str(r.get("partitionPath") or ""),
                file_id=_str(r.get("fileId")),
                latest_base_instant=_str(r.get("latestBaseInstant")),
                files_to_be_deleted=[str(x) for x in _list(r.get("filesToBeDeleted"))],
                log_blocks_to_be_deleted={str(k): int(v) for k, v in _map(r.get("logBlocksToBeDeleted")).items()},
            )
            for r in _list(d.get("RollbackRequests"))
            if _is_map(r)
        ]
        return cls(InstantInfo.from_dict(d.get("instantToRollback")), reqs, _int(d.get("version")), dict(d))


@dataclass(frozen=True)
class RollbackPartitionMetadata:
    """`HoodieRollbackPartitionMetadata`."""

    partition_path: str
    success_delete_files: list[str]
    failed_delete_files: list[str]
    rollback_log_files: dict[str, int]
    log_files_from_failed_commit: dict[str, int]


@dataclass(frozen=True)
class RollbackMetadata(LazyRaw):
    """`HoodieRollbackMetadata`: what a completed rollback removed."""

    start_rollback_time: str | None
    time_taken_ms: int | None
    total_files_deleted: int | None
    commits_rollback: list[str]
    instants_rollback: list[InstantInfo]
    partition_metadata: dict[str, RollbackPartitionMetadata]
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RollbackMetadata:
        parts = {}
        for partition, pm in _map(d.get("partitionMetadata")).items():
            pm = _map(pm)
            parts[str(partition)] = RollbackPartitionMetadata(
                partition_path=str(pm.get("partitionPath", partition)),
                success_delete_files=[str(x) for x in _list(pm.get("successDeleteFiles"))],
                failed_delete_files=[str(x) for x in _list(pm.get("failedDeleteFiles"))],
                rollback_log_files={str(k): int(v) for k, v in _map(pm.get("rollbackLogFiles")).items()},
                log_files_from_failed_commit={
                    str(k): int(v) for k, v in _map(pm.get("logFilesFromFailedCommit")).items()
                },
            )
        infos = [i for i in (InstantInfo.from_dict(x) for x in _list(d.get("instantsRollback"))) if i]
        return cls(
            start_rollback_time=_str(d.get("startRollbackTime")),
            time_taken_ms=_int(d.get("timeTakenInMillis")),
            total_files_deleted=_int(d.get("totalFilesDeleted")),
            commits_rollback=[str(x) for x in _list(d.get("commitsRollback"))],
            instants_rollback=infos,
            partition_metadata=parts,
            raw=dict(d),
        )


@dataclass(frozen=True)
class RestorePlan(LazyRaw):
    """`HoodieRestorePlan`: the instants a restore rolls back, newest first."""

    instants_to_rollback: list[InstantInfo]
    version: int | None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RestorePlan:
        infos = [i for i in (InstantInfo.from_dict(x) for x in _list(d.get("instantsToRollback"))) if i]
        return cls(infos, _int(d.get("version")), dict(d))


@dataclass(frozen=True)
class RestoreMetadata(LazyRaw):
    """`HoodieRestoreMetadata`: the rollbacks a completed restore performed."""

    start_restore_time: str | None
    time_taken_ms: int | None
    instants_to_rollback: list[str]
    rollbacks: dict[str, list[RollbackMetadata]]
    restore_instant_info: list[InstantInfo]
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RestoreMetadata:
        rollbacks = {
            str(k): [RollbackMetadata.from_dict(m) for m in _list(v) if _is_map(m)]
            for k, v in _map(d.get("hoodieRestoreMetadata")).items()
        }
        infos = [i for i in (InstantInfo.from_dict(x) for x in _list(d.get("restoreInstantInfo"))) if i]
        return cls(
            start_restore_time=_str(d.get("startRestoreTime")),
            time_taken_ms=_int(d.get("timeTakenInMillis")),
            instants_to_rollback=[str(x) for x in _list(d.get("instantsToRollback"))],
            rollbacks=rollbacks,
            restore_instant_info=infos,
            raw=dict(d),
        )


def restore_rollback_raw(restore: RestoreMetadata, key: str, position: int) -> dict[str, Any]:
    """The field dict of ``restore.rollbacks[key][position]`` (as :meth:`RestoreMetadata.from_dict` counts them),
    read from the restore's own `raw`."""
    items = next((v for k, v in _map(restore.raw.get("hoodieRestoreMetadata")).items() if str(k) == key), None)
    return dict([m for m in _list(items) if _is_map(m)][position])


@dataclass(frozen=True)
class SavepointMetadata(LazyRaw):
    """`HoodieSavepointMetadata`: the data files (names) a savepoint pins, per partition."""

    savepointed_by: str | None
    savepointed_at: int | None
    comments: str | None
    partition_files: dict[str, list[str]]
    version: int | None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> SavepointMetadata:
        files = {
            str(p): [str(x) for x in _list(_map(pm).get("savepointDataFile"))]
            for p, pm in _map(d.get("partitionMetadata")).items()
        }
        return cls(
            savepointed_by=_str(d.get("savepointedBy")),
            savepointed_at=_int(d.get("savepointedAt")),
            comments=_str(d.get("comments")),
            partition_files=files,
            version=_int(d.get("version")),
            raw=dict(d),
        )


@dataclass(frozen=True)
class IndexPartitionInfo:
    """`HoodieIndexPartitionInfo`: one metadata-table partition an indexing action builds."""

    metadata_partition_path: str | None
    index_upto_instant: str | None


@dataclass(frozen=True)
class IndexPlan(LazyRaw):
    """`HoodieIndexPlan` (requested indexing) and `HoodieIndexCommitMetadata` (completed)."""

    operation_type: str | None
    partitions: list[IndexPartitionInfo]
    is_commit: bool
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any], is_commit: bool = False) -> IndexPlan:
        parts = [
            IndexPartitionInfo(_str(p.get("metadataPartitionPath")), _str(p.get("indexUptoInstant")))
            for p in _list(d.get("indexPartitionInfos"))
            if _is_map(p)
        ]
        return cls(_str(d.get("operationType")), parts, is_commit, dict(d))


TimelineRecord = (
    CommitMetadata | CleanerPlan | CleanMetadata | CompactionPlan | RequestedReplaceMetadata
    | RollbackPlan | RollbackMetadata | RestorePlan | RestoreMetadata | SavepointMetadata | IndexPlan
)

#: Avro record name → how to build the typed record.
RECORD_BUILDERS: dict[str, Any] = {
    "HoodieCommitMetadata": lambda d: CommitMetadata.from_dict(d),
    "HoodieReplaceCommitMetadata": lambda d: CommitMetadata.from_dict(d, is_replace=True),
    "HoodieCleanerPlan": CleanerPlan.from_dict,
    "HoodieCleanMetadata": CleanMetadata.from_dict,
    "HoodieCompactionPlan": CompactionPlan.from_dict,
    "HoodieRequestedReplaceMetadata": RequestedReplaceMetadata.from_dict,
    "HoodieRollbackPlan": RollbackPlan.from_dict,
    "HoodieRollbackMetadata": RollbackMetadata.from_dict,
    "HoodieRestorePlan": RestorePlan.from_dict,
    "HoodieRestoreMetadata": RestoreMetadata.from_dict,
    "HoodieSavepointMetadata": SavepointMetadata.from_dict,
    "HoodieIndexPlan": lambda d: IndexPlan.from_dict(d, is_commit=False),
    "HoodieIndexCommitMetadata": lambda d: IndexPlan.from_dict(d, is_commit=True),
}
