"""A derived index of the active timeline's decoded bodies, kept in the user's cache folder (never in the table).

Every command that reasons about a table (cleaner and archiver dry runs, markers, doctor, the dashboard's pages)
reads the same instant bodies: on a table of 1,000 commits of 100 write stats each that is ~200k stats decoded
from JSON or Avro in every process, seconds of work. Instant files do not change once written (Hudi writes a new
state file; a rewritten one gets a new size or modification time), so what their bodies say can be kept:

* one Arrow IPC file per timeline folder (``<hash of the folder's URI>.arrow``), one row per instant file
  (requested, inflight and completed), keyed by the file's name, size, modification time and version (the
  store's ETag; locally the modification and change times in nanoseconds and the inode); a file with no version
  that changed within :data:`SETTLE_MS` gets no row. The folder's hash is of its resolved absolute location
  (:meth:`~hudi_core.io.storage.ReadOnlyStorage.location_of`), so the same relative path used from two folders
  is two indexes; the file carries a SHA-256 of its bytes (:mod:`~hudi_core.formats.timeline.index_files`);
* per row the typed record's fields (:mod:`hudi_core.formats.timeline.records`: what a commit wrote and replaced, what a
  clean cleaned and its earliest commit to retain and policy, rollback and restore targets, savepoint files,
  compaction and clustering plans' file groups, ...) as JSON, and the commit's write stats as Arrow columns
  (:data:`~hudi_core.formats.timeline.records.STAT_ROW_FIELDS`: partition, file id, path, sizes, record counts, log
  files, ...). A body that does not decode gets no row: it is read again next time (it may have been caught
  half-written, and a rewrite of the same size within the same millisecond would look unchanged).

A record rebuilt from a row (:meth:`ActiveIndex.body`) has every typed attribute the engine reads; only its
decoded field dict (`raw`, what `show` and the Instant page print) is read from the body file when asked
(:class:`~hudi_core.formats.timeline.records.LazyRaw`). A file whose key changed, or that is new, has no row and is
decoded as before; its row is written when the process saves (:func:`flush_all`, the CLI's end, the end of a
bulk decode). An index file that cannot be read back, or has another schema, is rebuilt and reported as a
finding naming it: the index only ever saves time, never changes an answer.

Location: ``active-index/`` in the inspector's cache folder (``$HUDI_INSPECTOR_CACHE``, else
``~/.cache/hudi-inspector``). ``HUDI_INSPECTOR_ACTIVE_INDEX`` set to ``0`` turns it off; set to a folder path, it
puts the index there. Written atomically (temporary file, then rename); two processes saving at once keep the
last one's rows, and the other's files are decoded again next time.
"""

from __future__ import annotations

import atexit
import bisect
import contextlib
import dataclasses
import functools
import hashlib
import json
import os
import sys
import types
import typing
import weakref
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from hudi_core.engines.executor import results_in_shared_memory
from hudi_core.errors import Finding, Severity
from hudi_core.formats.timeline import records as rec
from hudi_core.formats.timeline.bodies import BodyFormat, DecodedBody
from hudi_core.formats.timeline.index_files import read_checked, write_checked
from hudi_core.formats.timeline.index_paths import ACTIVE_SWITCH_ENV, cache_folder
from hudi_core.formats.timeline.instant import InstantFile, State
from hudi_core.formats.timeline.write_stats import STAT_ROW_TYPES, json_stat_columns
from hudi_core.io.memory import release_arrow_memory

#: Bumped whenever a row would change for the same bytes (reader fixes, new typed fields).
INDEX_FORMAT = 2
#: A file with no version key beyond its size and modification time (a store whose listing gives no ETag) that
#: changed less than this long before the index is saved gets no row: a rewrite within the store's time
#: resolution would look unchanged.
SETTLE_MS = 2_000
#: Index rows (instant files) whose write stats :meth:`ActiveIndex._stat_rows` converts to tuples at a time.
STAT_BLOCK_ROWS = 256
#: Typed record classes by name (the `class` key of a row's fields).
_RECORD_CLASSES: dict[str, type] = {cls.__name__: cls for cls in typing.get_args(rec.TimelineRecord)}

#: One write stat: its partition key in the body, then :data:`~hudi_core.formats.timeline.records.STAT_ROW_FIELDS`.
STAT_TYPE = pa.struct([pa.field("key", pa.string()), *(pa.field(n, STAT_ROW_TYPES[n]) for n in rec.STAT_ROW_FIELDS)])
#: One row per instant file.
INDEX_SCHEMA = pa.schema([
    pa.field("name", pa.string(), nullable=False), pa.field("size", pa.int64(), nullable=False),
    pa.field("mtime_ms", pa.int64()), pa.field("etag", pa.string()),
    pa.field("format", pa.string()), pa.field("record_type", pa.string()),
    pa.field("fields", pa.large_string()),  # the typed record's fields (JSON), write stats excepted
    pa.field("write_stats", pa.list_(STAT_TYPE)),
])


def index_dir() -> Path:
    """Where index files live (see the module doc)."""
    return cache_folder(ACTIVE_SWITCH_ENV, "active-index")


def _stats_of_rows(column: pa.ListArray, rows: list[tuple[int, int]], names: list[str]) -> pa.Table:
    """`body`, `seq` and the `names` fields of the write stats of `rows` ((position in the caller's files, row of
    `column`)) of one `write_stats` chunk: a zero-copy slice when their stats are consecutive (the usual case)."""
    offsets = column.offsets.to_numpy()
    values = column.values
    starts = np.asarray([int(offsets[r]) for _, r in rows], dtype=np.int64)
    lens = np.asarray([int(offsets[r + 1] - offsets[r]) for _, r in rows], dtype=np.int64)
    total = int(lens.sum())
    before = np.concatenate(([0], np.cumsum(lens)[:-1])).astype(np.int64)
    # The stats of the rows asked for, one after the other in the column's values (rows between them without stats,
    # a body's requested and inflight files, hold none): a zero-copy slice.
    contiguous = bool(np.all(starts[1:] == starts[:-1] + lens[:-1]))
    taken = None if contiguous else pa.array(np.repeat(starts - before, lens) + np.arange(total, dtype=np.int64))
    if values.null_count:  # never written so (a stat is a struct, not null); `flatten` applies struct nulls
        chosen = values.slice(int(starts[0]), total) if taken is None else values.take(taken)
        flat = chosen.flatten()
        picked = [flat[STAT_TYPE.get_field_index(name)] for name in names]
    else:
        # Field by field: taking rows of the struct would copy (and page in) every field of every stat taken.
        fields = [values.field(name) for name in names]
        picked = [f.slice(int(starts[0]), total) if taken is None else f.take(taken) for f in fields]
    body = np.repeat(np.asarray([k for k, _ in rows], dtype=np.int64), lens)
    seq = np.arange(total, dtype=np.int64) - np.repeat(before, lens)
    return pa.Table.from_arrays([pa.array(body), pa.array(seq), *picked], names=["body", "seq", *names])


def _settled(file: InstantFile, now_ms: int | None = None) -> bool:
    """Whether a row may be kept for `file`: it has a version key (an ETag, or a local file's times at full
    resolution and inode), or it changed at least :data:`SETTLE_MS` ago."""
    if file.etag is not None:
        return True
    if file.mtime_ms is None:
        return False
    import time

    return (now_ms if now_ms is not None else time.time_ns() // 1_000_000) - file.mtime_ms >= SETTLE_MS


def _key(file: InstantFile) -> tuple[int, int | None, str | None]:
    return (file.size, file.mtime_ms, file.etag)


# -- typed records <-> plain values ------------------------------------------------------------------


def _to_plain(value: Any) -> Any:
    """JSON-able form of a typed record's fields (nested records as dicts; `raw` left out)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _to_plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.name != "raw"}
    if isinstance(value, (list, tuple)):
        return [_to_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _to_plain(v) for k, v in value.items()}
    return value


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _from_plain(tp: Any, value: Any) -> Any:
    """:func:`_to_plain`'s inverse, led by the record classes' type hints."""
    if value is None:
        return None
    origin = typing.get_origin(tp)
    if origin in (types.UnionType, typing.Union):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        return _from_plain(args[0], value) if len(args) == 1 else value
    if origin is list:
        return [_from_plain(typing.get_args(tp)[0], v) for v in value]
    if origin is tuple:
        return tuple(_from_plain(typing.get_args(tp)[0], v) for v in value)
    if origin is dict:
        inner = typing.get_args(tp)[1]
        return {k: _from_plain(inner, v) for k, v in value.items()}
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        obj = object.__new__(tp)
        obj.__dict__.update({k: _from_plain(hints[k], v) for k, v in value.items()})
        return obj
    return value


def _fields_doc(body: DecodedBody) -> dict[str, Any] | None:
    """A row's `fields`: the record's class and typed fields, or ``None`` for an empty body. A commit keeps its
    top level and its stats' partition keys (`write_partitions`); the stats themselves go to columns."""
    record = body.record
    if record is None:
        return None
    if isinstance(record, rec.CommitMetadata):
        return {"class": type(record).__name__, "fields": _to_plain(record.summary_top_level())}
    return {"class": type(record).__name__, "fields": _to_plain(record)}


# -- the index ---------------------------------------------------------------------------------------


class ActiveIndex:
    """The index rows of one timeline folder: looked up per instant file, extended with what this process
    decoded, saved back atomically. `files`: every instant file of the listing (rows of other files are
    dropped when saving); `superseded`: names of requested and inflight files of completed instants, whose
    commit bodies (a workload profile: as many stats as the commit) are kept without their write stats (read
    from the file if ever asked: the engine reads a completed instant's own body)."""

    def __init__(self, timeline_uri: str, files: Iterable[InstantFile], superseded: Iterable[str] = (),
                 directory: Path | None = None) -> None:
        self.timeline_uri = timeline_uri
        self.directory = directory or index_dir()
        stem = hashlib.sha256(timeline_uri.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        self.path = self.directory / f"{stem}.v{INDEX_FORMAT}.arrow"
        self.files = {f.name: f for f in files}
        self.superseded = frozenset(superseded)
        self.findings: list[Finding] = []
        self.hits = 0
        self._table: pa.Table | None = None
        self._rows: dict[str, int] = {}  # file name -> row of `_table` whose key matches the listing
        self._scalars: dict[str, list[Any]] = {}
        self._stat_column: tuple[list[int], list[pa.ListArray], list[list[int]]] | None = None
        # (block, offset of its first stat, its (key, stat_row) pairs): the block converted last.
        self._stat_held: tuple[tuple[int, int], int, list[tuple[str, tuple[Any, ...]]]] | None = None
        self._new: dict[str, tuple[InstantFile, DecodedBody]] = {}
        self._added = False  # rows taken from worker processes (`add_rows`), not yet written
        self._load()

    def _load(self) -> None:
        if not self.path.is_file():
            return
        try:
            table = read_checked(self.path)
            meta = table.schema.metadata or {}
            if not table.schema.equals(INDEX_SCHEMA):
                raise ValueError("its columns are not the index's")
            if meta.get(b"format") != str(INDEX_FORMAT).encode() or meta.get(b"uri") != self.timeline_uri.encode(
                    "utf-8", "surrogateescape"):
                raise ValueError("it was written for another index format or timeline")
            scalars = {name: table.column(name).to_pylist()
                       for name in ("name", "size", "mtime_ms", "etag", "format", "record_type")}
            scalars["stats"] = table.column("write_stats").is_valid().to_pylist()
        except (OSError, ValueError, pa.ArrowException) as exc:
            self.findings.append(Finding(
                Severity.INFO, "active_index_rebuilt", str(self.path),
                f"the cached index of this table's active timeline ({self.path}) could not be read ({exc}); the "
                "instant files are decoded again and the index rebuilt"))
            with contextlib.suppress(OSError):
                self.path.unlink()
            return
        self._table = table
        self._scalars = scalars
        for row, name in enumerate(scalars["name"]):
            file = self.files.get(name)
            if file is not None and _key(file) == (scalars["size"][row], scalars["mtime_ms"][row],
                                                   scalars["etag"][row]):
                self._rows[name] = row

    def lookup(self, file: InstantFile) -> int | None:
        """The row recorded for this version of `file`, or ``None``."""
        row = self._rows.get(file.name)
        if row is None or _key(file) != _key(self.files.get(file.name, file)):
            return None
        return row

    def body(self, row: int, raw_loader: Callable[[], dict[str, Any]]) -> DecodedBody:
        """The body of a row: its record rebuilt from the row (`raw_loader` decodes the file when `raw` is read)."""
        self.hits += 1
        s = self._scalars
        fmt, record_type, size = BodyFormat(s["format"][row]), s["record_type"][row], s["size"][row]
        text = self._table.column("fields")[row].as_py()  # type: ignore[union-attr]
        if text is None:
            return DecodedBody(fmt, record_type, None, size)
        doc = json.loads(text)
        cls = _RECORD_CLASSES[doc["class"]]
        if cls is rec.CommitMetadata:
            top = _from_plain_fields(cls, doc["fields"])
            keys = top.pop("write_partitions", None)
            # Every commit names the same partitions and mostly the same schema: one string each, not one per
            # commit (10k commits of 100 partitions on L: a million strings, 66 MiB).
            extra = top.get("extra_metadata")
            if extra and "schema" in extra:
                extra["schema"] = sys.intern(extra["schema"])
            stats = ([sys.intern(k) for k in keys], functools.partial(self._stat_rows, row)) if s["stats"][row] \
                else None
            record: Any = rec.CommitMetadata.from_summary(top, stats, raw_loader)
        else:
            record = _from_plain(cls, doc["fields"])
            record.__dict__["_raw_loader"] = raw_loader
            if isinstance(record, rec.RestoreMetadata):  # the one record nesting records with a `raw`
                for key, metas in record.rollbacks.items():
                    for position, meta in enumerate(metas):
                        meta.__dict__["_raw_loader"] = functools.partial(rec.restore_rollback_raw, record, key,
                                                                         position)
        return DecodedBody(fmt, record_type, record, size)

    def _stat_chunks(self) -> tuple[list[int], list[pa.ListArray], list[list[int]]]:
        """The `write_stats` column chunk by chunk (an index extended by a run is saved as two batches; combining
        them copied every write stat, 270 MB on L): each chunk's first row, the chunk, its offsets."""
        if self._stat_column is None:
            column = self._table.column("write_stats")  # type: ignore[union-attr]
            firsts = [0]
            for chunk in column.chunks:
                firsts.append(firsts[-1] + len(chunk))
            self._stat_column = (firsts, list(column.chunks), [[] for _ in column.chunks])
        return self._stat_column

    def _stat_rows(self, row: int) -> list[tuple[str, tuple[Any, ...]]]:
        """``(key, stat_row)`` of one row's write stats, converted with those of the rows around it: a block of
        :data:`STAT_BLOCK_ROWS` rows (of one chunk) at a time, the last block kept (callers walk the timeline in
        order), so a million write stats never exist at once as tuples (0.75 GB on L)."""
        firsts, chunks, chunk_offsets = self._stat_chunks()
        c = bisect.bisect_right(firsts, row) - 1
        local = row - firsts[c]
        if not chunk_offsets[c]:  # (offsets has one more entry than the rows: never empty once read)
            chunk_offsets[c] = chunks[c].offsets.to_pylist()
        offsets = chunk_offsets[c]
        block = (c, local // STAT_BLOCK_ROWS)
        held = self._stat_held  # read once: another thread may swap in another block (never a half-built one)
        if held is None or held[0] != block:
            lo, hi = block[1] * STAT_BLOCK_ROWS, min((block[1] + 1) * STAT_BLOCK_ROWS, len(offsets) - 1)
            # The offsets index the values (null lists are empty, see `_rows_table`).
            values = chunks[c].values.slice(offsets[lo], offsets[hi] - offsets[lo])
            cols = [values.field(name).to_pylist() for name in ["key", *rec.STAT_ROW_FIELDS]]
            log_files = rec.STAT_ROW_FIELDS.index("log_files") + 1
            cols[log_files] = [tuple(v) if v is not None else () for v in cols[log_files]]
            held = (block, offsets[lo], list(zip(cols[0], zip(*cols[1:], strict=True), strict=True)))
            self._stat_held = held
        _, base, stats = held
        return stats[offsets[local] - base:offsets[local + 1] - base]

    def stats_table(self, files: list[InstantFile], fields: Sequence[str] | None = None
                    ) -> tuple[pa.Table, list[int]] | None:
        """The write stats the index has for `files` as columns, without a Python object per stat: ``(table,
        covered)`` where `covered` are the positions in `files` whose rows are here (with their stats), and the
        table's columns are the row's position in `files` (`body`), the stat's position in its body (`seq`),
        its partition key (`key`) and :data:`~hudi_core.formats.timeline.records.STAT_ROW_FIELDS` (only `fields` of
        them when given: the others are not read, nor their pages of the mapped file touched); ``None`` when no
        file is covered."""
        rows = [(k, self.lookup(f)) for k, f in enumerate(files)]
        covered = [(k, r) for k, r in rows if r is not None and self._scalars["stats"][r]]
        if not covered:
            return None
        names = [f.name for f in STAT_TYPE] if fields is None else ["key", *fields]
        column = self._table.column("write_stats")  # type: ignore[union-attr]
        # Chunk by chunk (an index extended by a run is saved as two batches): combining them would copy every
        # write stat (270 MB on L) each time a command reads some.
        parts, first_row = [], 0
        for chunk in column.chunks:
            last_row = first_row + len(chunk)
            mine = [(k, r - first_row) for k, r in covered if first_row <= r < last_row]
            if mine:
                parts.append(_stats_of_rows(chunk, mine, names))
            first_row = last_row
        return pa.concat_tables(parts), [k for k, _ in covered]

    def record(self, file: InstantFile, body: DecodedBody) -> None:
        """Note the body decoding `file` gave, to be written by :meth:`save`."""
        if file.name not in self.files or _key(self.files[file.name]) != _key(file):
            return
        self._new[file.name] = (file, body)
        _PENDING.add(self)

    def add_rows(self, rows: pa.Table) -> dict[str, str]:
        """Take the rows :func:`index_rows_of_files` made in other processes (their key columns set from this
        listing's files); returns file name -> error message for the files that did not decode (no row)."""
        errors = {n: e for n, e in zip(rows.column("name").to_pylist(), rows.column("error").to_pylist(),
                                       strict=True) if e is not None}
        names = rows.column("name").to_pylist()
        keep = [k for k, n in enumerate(names) if n not in errors and n in self.files and _settled(self.files[n])]
        if not keep:
            return errors
        # Every row kept (the usual case): no copy of the write stats (a million on L).
        fresh = (rows if len(keep) == rows.num_rows else rows.take(pa.array(keep, pa.int64()))).drop_columns(["error"])
        files = [self.files[names[k]] for k in keep]
        for column, values, type_ in (("size", [f.size for f in files], pa.int64()),
                                      ("mtime_ms", [f.mtime_ms for f in files], pa.int64()),
                                      ("etag", [f.etag for f in files], pa.string())):
            fresh = fresh.set_column(fresh.schema.get_field_index(column), INDEX_SCHEMA.field(column),
                                     pa.array(values, type_))
        fresh = fresh.cast(INDEX_SCHEMA)
        taken = {names[k] for k in keep}
        kept = [row for name, row in sorted(self._rows.items(), key=lambda kv: kv[1]) if name not in taken]
        parts = [fresh] if self._table is None or not kept else [_rows_of(self._table, kept), fresh]
        table = pa.concat_tables(parts)
        self._table = table
        self._scalars = {name: table.column(name).to_pylist()
                         for name in ("name", "size", "mtime_ms", "etag", "format", "record_type")}
        self._scalars["stats"] = table.column("write_stats").is_valid().to_pylist()
        self._rows = {name: row for row, name in enumerate(self._scalars["name"])}
        self._stat_column, self._stat_held = None, None
        self._added = True
        _PENDING.add(self)
        return errors

    @property
    def dirty(self) -> bool:
        return bool(self._new) or self._added

    def save(self) -> None:
        """Write the rows that still match the listing and the new ones (best effort: a cache that cannot be
        written is skipped)."""
        if not self._new and not self._added:
            return
        new, self._new = self._new, {}
        new = {name: entry for name, entry in new.items() if _settled(entry[0])}
        self._added = False
        _PENDING.discard(self)
        try:
            parts = [_rows_table(new.values(), self.superseded)] if new else []
            kept = [row for name, row in sorted(self._rows.items(), key=lambda kv: kv[1]) if name not in new]
            if kept and self._table is not None:
                parts.insert(0, _rows_of(self._table, kept))
            if not parts:
                return
            table = pa.concat_tables(parts).replace_schema_metadata(
                {"format": str(INDEX_FORMAT), "uri": self.timeline_uri})
            written = write_checked(self.directory, self.path, table)
        except (OSError, pa.ArrowException, TypeError, ValueError):
            return
        if not new and kept and self._table is not None and len(kept) == self._table.num_rows \
                and kept[-1] == len(kept) - 1:
            # The file holds this table's rows in their order (a first run's rows from worker processes): read
            # them from the file's pages from now on, and let the decoded copy (~300 MiB on L) go.
            self._table = written
            self._stat_column, self._stat_held = None, None
        del table, parts
        # The decoded batches are garbage now: hand the pages Arrow's allocator keeps to the system.
        release_arrow_memory()


def _rows_of(table: pa.Table, rows: list[int]) -> pa.Table:
    """`table`'s `rows` (ascending row numbers): the table itself or a slice when they run on without a gap (the
    usual case: every row kept, no copy of a million write stats), else a copy of them."""
    if rows[-1] - rows[0] + 1 == len(rows):
        return table.slice(rows[0], len(rows))
    return table.take(pa.array(rows, pa.int64()))


def _from_plain_fields(cls: type, fields: dict[str, Any]) -> dict[str, Any]:
    """A commit's top-level fields rebuilt with their types (plus `write_partitions`, the stats' keys)."""
    hints = _hints(cls)
    return {k: (_from_plain(hints[k], v) if k in hints else v) for k, v in fields.items()}


def _rows_table(entries: Iterable[tuple[InstantFile, DecodedBody]],
                superseded: frozenset[str] = frozenset()) -> pa.Table:
    """:data:`INDEX_SCHEMA` rows of newly decoded files (write stats built column-wise, no object per stat;
    none for `superseded` files: a null list)."""
    cols: dict[str, list[Any]] = {n: [] for n in INDEX_SCHEMA.names if n != "write_stats"}
    keys_of_stats: list[str] = []
    # Per stat its field dict (a JSON body's, converted by Arrow at the end) or its `stat_row` values.
    stat_sources: list[Any] = []
    only_dicts = True
    offsets = [0]
    valid: list[bool] = []
    for file, body in entries:
        fields = None
        doc = _fields_doc(body)
        with_stats = file.name not in superseded
        if doc is not None:
            record = body.record
            if isinstance(record, rec.CommitMetadata) and with_stats:
                if body.format is BodyFormat.JSON and record.reads_stats_from_fields():
                    keys, dicts = record.stat_dicts()
                    keys_of_stats.extend(key for key, _ in dicts)
                    stat_sources.extend(d for _, d in dicts)
                else:
                    keys, rows = record.summary_rows()
                    keys_of_stats.extend(key for key, _ in rows)
                    stat_sources.extend(row for _, row in rows)
                    only_dicts = only_dicts and not rows
                doc["fields"]["write_partitions"] = keys
            fields = json.dumps(doc, separators=(",", ":"))
        offsets.append(len(stat_sources))
        valid.append(with_stats)
        for name, value in (("name", file.name), ("size", file.size), ("mtime_ms", file.mtime_ms),
                            ("etag", file.etag), ("format", body.format.value),
                            ("record_type", body.record_type), ("fields", fields)):
            cols[name].append(value)
    by_arrow = json_stat_columns(stat_sources) if only_dicts and stat_sources else None
    children = list(by_arrow.values()) if by_arrow is not None else None
    if children is None:
        stat_rows = [s if type(s) is tuple else rec.stat_row(s) for s in stat_sources]
        # Transposed in one step (C loops), then one Arrow array per column.
        stat_columns = list(zip(*stat_rows, strict=True)) if stat_rows else [()] * len(rec.STAT_ROW_FIELDS)
        children = [pa.array(list(values), STAT_ROW_TYPES[name])
                    for name, values in zip(rec.STAT_ROW_FIELDS, stat_columns, strict=True)]
    stats = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), pa.StructArray.from_arrays(
        [pa.array(keys_of_stats, pa.string()), *children], fields=list(STAT_TYPE)),
        mask=pa.array([not v for v in valid], pa.bool_()))
    arrays = [pa.array(cols[f.name], f.type) if f.name != "write_stats" else stats for f in INDEX_SCHEMA]
    return pa.Table.from_arrays(arrays, schema=INDEX_SCHEMA)


#: The Avro fields of a `HoodieWriteStat` the index keeps (every one of its stat columns) -> (column, kind).
_AVRO_STAT_FIELDS: dict[str, tuple[str, str]] = {
    "fileId": ("file_id", "string"), "path": ("path", "string"), "partitionPath": ("partition_path", "string"),
    "prevCommit": ("prev_commit", "string"), "numWrites": ("num_writes", "long"),
    "numInserts": ("num_inserts", "long"), "numUpdateWrites": ("num_update_writes", "long"),
    "numDeletes": ("num_deletes", "long"), "totalWriteBytes": ("total_write_bytes", "long"),
    "fileSizeInBytes": ("file_size_in_bytes", "long"), "baseFile": ("base_file", "string"),
    "logFiles": ("log_files", "string_list"), "logVersion": ("log_version", "long"),
    "totalLogBlocks": ("total_log_blocks", "long"), "totalCorruptLogBlock": ("total_corrupt_log_block", "long"),
    "totalRollbackBlocks": ("total_rollback_blocks", "long"), "logOffset": ("log_offset", "long"),
}
#: The top-level fields a commit's typed record reads besides its stats and extra metadata.
_AVRO_TOP_FIELDS: dict[str, tuple[str, str]] = {"operationType": ("operation_type", "string"),
                                                 "compacted": ("compacted", "boolean")}
_EXTRA_VALUE = ("extra_value", "string")
_SINKS = {sink: kind for sink, kind in (*_AVRO_STAT_FIELDS.values(), *_AVRO_TOP_FIELDS.values(), _EXTRA_VALUE)}
#: Completed actions whose Avro bodies the column-wise way reads (a replacecommit's replaced groups take the other).
_COLUMNWISE_ACTIONS = frozenset({"commit", "deltacommit"})


def _named_type(schema: Any, name: str) -> dict[str, Any] | None:
    """The record schema called `name` anywhere in a parsed schema."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, dict):
            if node.get("type") == "record" and str(node.get("name", "")).rsplit(".", 1)[-1] == name:
                return node
            stack.extend(v for k, v in node.items() if k in ("type", "fields", "items", "values"))
    return None


@functools.lru_cache(maxsize=32)
def _index_tree(schema_json: bytes) -> tuple[Any, str]:
    """The column-wise decoder of a plain commit's writer schema (no replaced file groups, log files a list of
    plain strings: what `stat_row` reads alike); raises VectorDecodeError for any other."""
    from hudi_core.formats.avro import vector as av
    from hudi_core.formats.timeline.write_stats import commit_writer_schema

    parsed, record_type = commit_writer_schema(schema_json)
    fields = {f.get("name") for f in parsed.get("fields") or [] if isinstance(f, dict)}
    if record_type != "HoodieCommitMetadata" or "partitionToReplaceFileIds" in fields:
        raise av.VectorDecodeError("not a plain commit")
    stat = _named_type(parsed, "HoodieWriteStat")
    log_files = next((f.get("type") for f in (stat or {}).get("fields") or [] if f.get("name") == "logFiles"), None)
    arrays = [t for t in (log_files if isinstance(log_files, list) else [log_files])
              if isinstance(t, dict) and t.get("type") == "array"]
    if any(a.get("items") != "string" and not (isinstance(a.get("items"), dict) and a["items"].get("type") == "string")
           for a in arrays):
        raise av.VectorDecodeError("log files that are not plain strings")
    tree = av.compile_schema(parsed, (("partitionToWriteStats",), ("extraMetadata",)), _AVRO_STAT_FIELDS,
                             top=_AVRO_TOP_FIELDS, map_values={1: _EXTRA_VALUE})
    return tree, record_type


def _commit_rows_columnwise(read: Sequence[tuple[InstantFile, bytes]], superseded: frozenset[str]
                            ) -> tuple[pa.Table | None, set[int]]:
    """:data:`INDEX_SCHEMA` rows of the completed commits and delta commits among `read` whose Avro bodies
    decode column-wise (:mod:`hudi_core.formats.avro.vector`), with the same values as one by one (their
    typed record is built from the same top-level fields, their stats go to the columns without a dict each),
    and the positions in `read` they cover. A group of bodies that does not decode whole and exactly this way
    (damage, another schema, a map key twice) is left to the one-by-one way, which words its error."""
    from hudi_core.formats.avro import vector as av
    from hudi_core.formats.avro.container import AVRO_MAGIC, container_datums
    from hudi_core.formats.timeline.bodies import allowed_record_types
    from hudi_core.formats.timeline.write_stats import containers_columnwise

    # Inflight files hold the same record as completed ones (the group's check is the completed file's).
    wanted = [k for k, (f, data) in enumerate(read) if f.action in _COLUMNWISE_ACTIONS and data[:4] == AVRO_MAGIC
              and allowed_record_types(f.action, f.state) == allowed_record_types(f.action, State.COMPLETED)]
    if not wanted:
        return None, set()
    bodies = pa.array([read[k][1] for k in wanted], pa.binary())
    with_stats = np.array([read[k][0].name not in superseded for k in wanted], dtype=bool)

    def decode_group(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, members: np.ndarray, header: int,
                     tree: Any) -> tuple[pa.Table, np.ndarray]:
        members, datum_starts, sizes = container_datums(buf, starts, ends, members, header)
        cap = av.decode(tree, buf, datum_starts, datum_starts + sizes, _SINKS, n_paths=2)
        return _group_rows(buf, cap, members, with_stats[members]), members

    tables, _ = containers_columnwise(bodies, np.arange(len(wanted)), [read[k][0].action for k in wanted],
                                         _index_tree, decode_group)
    if not tables:
        return None, set()
    table = pa.concat_tables(tables)
    positions = [wanted[b] for b in table["body"].to_pylist()]
    files = [read[k][0] for k in positions]
    rows = pa.table({
        "name": [f.name for f in files], "size": [f.size for f in files], "mtime_ms": [f.mtime_ms for f in files],
        "etag": [f.etag for f in files], "format": [BodyFormat.AVRO.value] * len(files),
        "record_type": ["HoodieCommitMetadata"] * len(files), "fields": table["fields"],
        "write_stats": table["write_stats"]}, schema=INDEX_SCHEMA)
    return rows, set(positions)


def _group_rows(buf: np.ndarray, cap: Any, members: np.ndarray, with_stats: np.ndarray) -> pa.Table:
    """(body, fields, write_stats) of one column-wise decoded group: each body's typed top level (and its
    stats' partition keys) as the index words it, and its stats in the body's order; a body not `with_stats`
    (a superseded requested or inflight file) keeps its top level only and a null list, as :func:`_rows_table`."""
    from hudi_core.formats.avro import vector as av

    n_datums = members.size
    entry_datum, entry_tag = cap.entry_datum, cap.entry_tag
    keys = av.gather_strings(buf, cap.entry_key[0], cap.entry_key[1], None)
    # A map key twice in one body: a dict keeps one of them, and the one-by-one way says which.
    if len(keys) and pa.table({"d": entry_datum, "t": entry_tag, "k": keys}).group_by(
            ["d", "t", "k"]).aggregate([]).num_rows != len(keys):
        raise av.VectorDecodeError("a map key twice in one body")
    # The partitions of each body in reading order (entries were numbered as read).
    partition = np.flatnonzero(entry_tag == 0)
    partition = partition[np.argsort(entry_datum[partition], kind="stable")]
    key_offsets = np.zeros(n_datums + 1, dtype=np.int32)
    np.cumsum(np.bincount(entry_datum[partition], minlength=n_datums), out=key_offsets[1:])
    partition_keys = pa.ListArray.from_arrays(pa.array(key_offsets, pa.int32()),
                                              keys.take(pa.array(partition, pa.int64()))).to_pylist()
    extra: list[dict[str, str | None] | None] = [None] * n_datums
    for reached in np.flatnonzero(cap.reached[1]).tolist():
        extra[reached] = {}
    extra_entries = np.flatnonzero(entry_tag == 1)
    if extra_entries.size:
        extra_values = av.strings_of_ids(buf, len(keys), *cap.columns["extra_value"]).to_pylist()
        ordered = extra_entries[np.argsort(entry_datum[extra_entries], kind="stable")]
        extra_keys = keys.take(pa.array(ordered, pa.int64())).to_pylist()
        for e, key in zip(ordered.tolist(), extra_keys, strict=True):
            values = extra[int(entry_datum[e])]
            assert values is not None
            values[key] = extra_values[e]
    operation = av.strings_of_ids(buf, n_datums, *cap.columns["operation_type"]).to_pylist()
    compacted = av.longs_of_ids(n_datums, *cap.columns["compacted"]).to_pylist()
    builder = rec.RECORD_BUILDERS["HoodieCommitMetadata"]
    fields: list[str] = []
    for d in range(n_datums):
        top: dict[str, Any] = {"operationType": operation[d], "extraMetadata": extra[d],
                               "compacted": None if compacted[d] is None else bool(compacted[d])}
        try:
            record = builder(top)
        except (TypeError, ValueError, AttributeError, RecursionError) as exc:
            raise av.VectorDecodeError(str(exc)) from exc
        doc = _fields_doc(DecodedBody(BodyFormat.AVRO, "HoodieCommitMetadata", record, 0))
        assert doc is not None
        if with_stats[d]:
            doc["fields"]["write_partitions"] = partition_keys[d]
        fields.append(json.dumps(doc, separators=(",", ":")))
    # The stats: rows were numbered as read, so a stable sort by datum keeps each body's order. Each row's new
    # place is given to the gathers (no reordering copy after them); rows of bodies without stats have none.
    row_datum = entry_datum[cap.row_entry]
    order = np.argsort(row_datum, kind="stable")
    order = order[with_stats[row_datum[order]]]
    row_datum = row_datum[order]
    n_kept = order.size
    place = np.full(cap.row_entry.size, -1, dtype=np.int64)
    place[order] = np.arange(n_kept, dtype=np.int64)
    entry_of_row = cap.row_entry[order]
    children = [av.gather_strings(buf, cap.entry_key[0][entry_of_row], cap.entry_key[1][entry_of_row], None)]
    for name in rec.STAT_ROW_FIELDS:
        sink, kind = next(v for v in _AVRO_STAT_FIELDS.values() if v[0] == name)
        ids, *rest = cap.columns[sink]
        at = place[ids]
        kept = at >= 0
        parts = (at[kept], *(r[kept] for r in rest))
        if kind == av.LONG:
            children.append(av.longs_of_ids(n_kept, *parts))
        elif kind == av.STRING:
            children.append(av.strings_of_ids(buf, n_kept, *parts))
        else:
            children.append(av.string_lists_of_ids(buf, n_kept, *parts))
    stats = pa.StructArray.from_arrays(children, fields=list(STAT_TYPE))
    offsets = np.zeros(n_datums + 1, dtype=np.int32)
    np.cumsum(np.bincount(row_datum, minlength=n_datums) if row_datum.size else np.zeros(n_datums, np.int64),
              out=offsets[1:])
    lists = pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), stats,
                                     mask=None if with_stats.all() else pa.array(~with_stats))
    return pa.table({"body": pa.array(members, pa.int64()), "fields": pa.array(fields, pa.large_string()),
                     "write_stats": lists})


#: :data:`INDEX_SCHEMA` and an `error` per file: what :func:`index_rows_of_files` returns.
INDEX_ROWS_SCHEMA = INDEX_SCHEMA.append(pa.field("error", pa.string()))


@results_in_shared_memory
def index_rows_of_files(spec: Any, paths: list[str], layout_version: int = 2,
                        superseded: frozenset[str] = frozenset(), columnwise: bool = True) -> pa.Table:
    """Pure batch function: the index rows of instant files, decoded in a worker process, so
    that the process that asked gets Arrow columns (a few MB) instead of every body's field dict (on L 1.7 GB of
    JSON). A file that does not decode has no row but its `error`, worded as the one-by-one decode words it;
    `size`, `mtime_ms` and `etag` are the caller's to set (from its listing). Plain Avro commit bodies are decoded
    column-wise (:func:`_commit_rows_columnwise`: the same rows, about a tenth of the time), the rest one by one
    (all of them with `columnwise` false)."""
    from hudi_core.errors import DecodeError, StorageError
    from hudi_core.formats.timeline.bodies import decode_body
    from hudi_core.formats.timeline.instant import parse_instant_file_name

    storage = spec.open()
    read: list[tuple[InstantFile, bytes]] = []
    failed: list[tuple[str, str]] = []
    for path in paths:
        name = os.path.basename(path)
        file = parse_instant_file_name(name, layout_version)
        if file is None:
            failed.append((name, f"cannot decode {name}: not an instant file name"))
            continue
        try:
            data = storage.read(path)
        except StorageError as exc:
            failed.append((name, f"cannot decode {name} ({file.action} {file.state.name}): {exc}"))
            continue
        read.append((dataclasses.replace(file, size=len(data)), data))
    columnar, done = _commit_rows_columnwise(read, superseded) if columnwise else (None, set())
    decoded: list[tuple[InstantFile, DecodedBody]] = []
    for k, (file, data) in enumerate(read):
        if k in done:
            continue
        try:
            decoded.append((file, decode_body(data, file.action, file.state)))
        except DecodeError as exc:
            failed.append((file.name, f"cannot decode {file.name} ({file.action} {file.state.name}): {exc}"))
    rows = _rows_table(decoded, superseded)
    if columnar is not None:
        # In the order the files were read, as one by one.
        order = {f.name: k for k, (f, _) in enumerate(read)}
        rows = pa.concat_tables([rows, columnar])
        rows = rows.take(pa.array(np.argsort([order[n] for n in rows["name"].to_pylist()], kind="stable")))
    rows = rows.append_column(INDEX_ROWS_SCHEMA.field("error"), pa.nulls(len(rows), pa.string()))
    if failed:
        errors = pa.table({"name": [n for n, _ in failed], "error": [e for _, e in failed]})
        empty = {f.name: pa.nulls(len(failed), f.type) for f in INDEX_ROWS_SCHEMA if f.name not in errors.column_names}
        empty["size"] = pa.array([0] * len(failed), pa.int64())
        rows = pa.concat_tables([rows, pa.table({f.name: (errors[f.name] if f.name in errors.column_names
                                                           else empty[f.name]) for f in INDEX_ROWS_SCHEMA},
                                                 schema=INDEX_ROWS_SCHEMA)])
    return rows


#: Indexes with rows not yet written (saved by :func:`flush_all`, at the latest when the interpreter exits).
_PENDING: weakref.WeakSet[ActiveIndex] = weakref.WeakSet()


def flush_all() -> None:
    """Save every index with rows not yet written (the CLI calls it before it exits with `os._exit`)."""
    for index in list(_PENDING):
        index.save()


atexit.register(flush_all)
