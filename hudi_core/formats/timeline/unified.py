"""Archived and unified (active + archived) timelines, for both layouts (spec `04`, `01` §1.7-1.9).

:class:`ArchivedTimeline` reads layout 1 (`.hoodie/archived` log files) or layout 2 (the LSM history)
into an Arrow listing, one row per logical instant, and builds :class:`~hudi_core.formats.timeline.instant.Instant`
objects (``source="archived"``, ``completion_time_source="archive"``) only when asked. Bodies are
decoded on demand, one instant at a time.

:class:`UnifiedTimeline` puts the active and archived instants in one timeline in Hudi's order
(`RequestedTimeBasedComparator`: requested time, comparable action, state). An instant present in
both is kept once (the active copy, the one Hudi's active-timeline readers see) and reported.

The listing is a pure batch function over archive file paths (:func:`list_archive_files`), so any
:class:`~hudi_core.engines.executor.Executor` (local threads, Spark) can run it.

Layout 1 keeps each archive file's rows in the archive index and reads them back memory-mapped, a first read
included; the grouping into instants copies what it keeps and hands the mapped pages back, so a million archived
instants cost their instant listing and their state records' positions, not the rows read.
"""

from __future__ import annotations

import functools
import gc
import posixpath
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.engines.executor import Executor, cpu_batch_results, cpu_workers, run_batches
from hudi_core.errors import DecodeError, Finding, Severity, StorageError
from hudi_core.formats.timeline import archived_v1 as v1
from hudi_core.formats.timeline import archived_v2 as v2
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.active import ActiveTimeline, BodyRecords, Timeline
from hudi_core.formats.timeline.archive_index import ArchiveIndex, IndexKey, index_enabled
from hudi_core.formats.timeline.archived_v1 import ARCHIVE_LISTING_SCHEMA, TimeRange
from hudi_core.formats.timeline.bodies import BodyFormat, DecodedBody, decode_body
from hudi_core.formats.timeline.bulk import paused_gc
from hudi_core.formats.timeline.instant import Instant, InstantFile, State
from hudi_core.io.memory import as_array, as_one_chunk, release_arrow_memory, release_mapped_pages
from hudi_core.io.properties import TableProperties
from hudi_core.io.storage import FileInfo, ReadOnlyStorage, StorageSpec, inline_if_local

ARCHIVED = "archived"
ARCHIVE_SOURCE = "archive"
#: `completion_time_source` of a layout-1 archived instant whose record has no `stateTransitionTime`.
REQUESTED_TIME_SOURCE = "requested_time"

#: One row per logical instant, in Hudi's timeline order.
INSTANT_LISTING_SCHEMA = pa.schema(
    [
        pa.field("requested_time", pa.string()),
        pa.field("action", pa.string()),
        pa.field("state", pa.string()),
        pa.field("pending_action", pa.string()),
        pa.field("completed_action", pa.string()),
        pa.field("completion_time", pa.string()),
        pa.field("completion_time_source", pa.string()),
        pa.field("source", pa.string()),
        pa.field("archive_file", pa.dictionary(pa.int32(), pa.string())),
        pa.field("inflight_time", pa.string()),
        pa.field("inflight_time_source", pa.string()),
    ]
)

#: The archived listing adds where each instant's row is (layout 2: row number in its file).
ARCHIVED_LISTING_SCHEMA = INSTANT_LISTING_SCHEMA.append(pa.field("record_index", pa.int64()))

#: :meth:`ArchivedTimeline.completed_locations`: one row per completed archived instant.
COMPLETED_LOCATION_SCHEMA = pa.schema([
    pa.field("requested_time", pa.string()), pa.field("action", pa.string()), pa.field("completed_action", pa.string()),
    pa.field("completion_time", pa.string()), pa.field("archive_file", pa.string()),
    pa.field("block_offset", pa.int64()), pa.field("record_index", pa.int64()),
])

#: How many decoded archive blocks (layout 1) an archived timeline keeps for body lookups.
_BLOCK_CACHE_SIZE = 16

#: Layout-1 archive bytes to decode from which the work is spread over processes (see `_ArchiveRows._decoded`).
PARALLEL_DECODE_MIN_BYTES = 16 << 20
#: State records from which a layout-1 grouping hands back the mapped index pages it read and, once done, the memory
#: it freed (a few MiB are not worth re-reading pages or walking the heap for).
RELEASE_AFTER_RECORDS = 100_000


def list_archive_files(spec: StorageSpec, paths: list[str], since: str | None = None,
                       until: str | None = None) -> pa.Table:
    """Pure batch function: :data:`~hudi_core.formats.timeline.archived_v1.ARCHIVE_LISTING_SCHEMA` rows of
    archive files of either layout (`.commits_.archive.*` log files or LSM `*.parquet` files).

    Never decodes metadata: layout 1 projects the key fields of each record, layout 2 reads the
    `instantTime`, `completionTime` and `action` columns only.
    """
    logs = [p for p in paths if v1.archive_file_version(posixpath.basename(p)) is not None]
    others = [p for p in paths if v1.archive_file_version(posixpath.basename(p)) is None]
    tables = []
    if logs:
        tables.append(v1.list_archive_log_files(spec, logs, since, until))
    if others:
        tables.append(v2.list_lsm_files(spec, others, since, until))
    if not tables:
        return ARCHIVE_LISTING_SCHEMA.empty_table()
    return pa.concat_tables(tables)


class ArchivedTimeline(BodyRecords, Timeline):
    """The archived timeline of one table: an Arrow listing, instants on demand, bodies on demand.

    `listing` has :data:`INSTANT_LISTING_SCHEMA` rows in Hudi's order; `instants` materialises
    :class:`Instant` objects from it on first use. `findings` names every damaged or odd file.
    """

    def __init__(self, storage: ReadOnlyStorage, properties: TableProperties, listing: pa.Table,
                 findings: list[Finding], time_range: TimeRange, archive_files: list[str],
                 state_refs: dict[tuple[str, str], dict[State, tuple[str, str, int | None, int]]] | None = None,
                 instants: list[Instant] | None = None, snapshot_version: int | None = None,
                 v1_states: _V1States | None = None) -> None:
        self.storage = storage
        self.properties = properties
        self.listing = listing
        self.findings = findings
        self.time_range = time_range
        self.archive_files = archive_files
        self.snapshot_version = snapshot_version
        self._state_refs = state_refs  # layout 1: key → state → (action, path, block_offset, index)
        self._partial_refs: dict[tuple[str, str], dict[State, tuple[str, str, int | None, int]]] = {}
        self._v1_states = v1_states  # layout 1: grouped state records (instants and refs built on demand)
        self._instants = instants
        self._bodies: dict[tuple[str, str, State], DecodedBody | None] = {}
        self._errors: dict[tuple[str, str, State], Finding] = {}
        self._blocks: OrderedDict[tuple[str, int], tuple[str, list[bytes]]] = OrderedDict()

    # -- instants -------------------------------------------------------------------------------
    @property
    def layout_version(self) -> int:
        return self.properties.timeline_layout_version

    @property
    def archive_dir(self) -> str:
        return self.properties.archive_dir

    @property
    def instants(self) -> list[Instant]:  # type: ignore[override]
        """Every archived instant as an :class:`Instant` (built from the listing on first use)."""
        if self._instants is None:
            if self._v1_states is not None:
                self._instants = self._v1_states.instants()
            else:
                self._instants = _instants_from_listing(self.listing, self.layout_version)
        return self._instants

    def instants_at(self, rows: Sequence[int]) -> list[Instant]:
        """The :class:`Instant` objects of some listing rows only (a few rollbacks among a million archived
        instants), without building the others; their bodies read as :meth:`body` reads any."""
        rows = list(rows)
        if self._instants is not None:
            return [self._instants[r] for r in rows]
        if self._v1_states is not None:
            picked = self._v1_states.instants(rows)
            if self._state_refs is None:
                self._partial_refs.update(self._v1_states.refs({i.key() for i in picked}))
            return picked
        return _instants_from_listing(self.listing.take(pa.array(rows, pa.int64())), self.layout_version)

    def state_file_names(self) -> pa.ListArray | None:
        """Layout 1: the state-file names of each listing row (what the active timeline held)."""
        return self._v1_states.files if self._v1_states is not None else None

    def __len__(self) -> int:
        count: int = self.listing.num_rows
        return count

    def __iter__(self) -> Iterator[Instant]:
        return iter(self.instants)

    # -- bodies ---------------------------------------------------------------------------------
    def body(self, instant: Instant, state: State | None = None) -> DecodedBody | None:
        """The decoded body of one archived state (the instant's current state by default).

        Layout 1: the payload field of that state's `HoodieArchivedMetaEntry`. Layout 2: COMPLETED
        is the `metadata` bytes, REQUESTED/INFLIGHT the `plan` bytes. ``None`` when absent or on a
        decode failure (then recorded as a finding, see :meth:`body_error`).
        """
        st = state if state is not None else instant.state
        key = (instant.requested_time, instant.completed_action, st)
        if key in self._bodies:
            return self._bodies[key]
        body: DecodedBody | None = None
        try:
            body = self._body_v2(instant, st) if self.layout_version >= 2 else self._body_v1(instant, st)
        except (DecodeError, StorageError) as exc:
            where = instant.files[0].path if instant.files else self.archive_dir
            finding = Finding(Severity.ERROR, "archived_body_decode_failed", self.storage.uri_of(where),
                              f"cannot decode archived {instant.requested_time} {instant.action} {st.name}: {exc}")
            self._errors[key] = finding
            self.findings.append(finding)
        self._bodies[key] = body
        return body

    def _body_v1(self, instant: Instant, state: State) -> DecodedBody | None:
        if self._state_refs is None and instant.key() in self._partial_refs:
            refs = self._partial_refs[instant.key()]
        else:
            if self._state_refs is None and self._v1_states is not None:
                self._state_refs = self._v1_states.refs()
            refs = (self._state_refs or {}).get(instant.key(), {})
        ref = refs.get(state)
        if ref is None:
            return None
        action, path, offset, index = ref
        if offset is None:
            return None
        cache_key = (path, offset)
        if cache_key in self._blocks:
            self._blocks.move_to_end(cache_key)
            schema_json, datums = self._blocks[cache_key]
        else:
            schema_json, datums = v1.read_block_datums(self.storage, path, offset)
            self._blocks[cache_key] = (schema_json, datums)
            if len(self._blocks) > _BLOCK_CACHE_SIZE:
                self._blocks.popitem(last=False)
        if not 0 <= index < len(datums):
            raise DecodeError(f"{self.storage.uri_of(path)}: no record {index} in the block at byte {offset}")
        record = v1.decode_full_datum(schema_json, datums[index])
        return v1.payload_to_body(record, action, state)

    def _locate_v2(self, instant: Instant) -> tuple[str, int] | None:
        """(LSM file, row number) of an archived instant: a vectorised search of the listing."""
        listing = self.listing
        where = pc.indices_nonzero(pc.fill_null(pc.equal(listing["requested_time"], instant.requested_time), False))
        hits = listing.select(["completed_action", "archive_file", "record_index"]).take(where)
        for row in hits.to_pylist():
            if row["completed_action"] == instant.completed_action:
                return row["archive_file"], row["record_index"]
        return None

    def _body_v2(self, instant: Instant, state: State) -> DecodedBody | None:
        where = self._locate_v2(instant)
        if where is None:
            return None
        path, index = where
        metadata, plan = v2.read_lsm_row_bytes(self.storage, path, index, instant.requested_time)
        if state is State.COMPLETED:
            if metadata is None:
                return DecodedBody(BodyFormat.EMPTY, None, None, 0)
            return decode_body(metadata, instant.action, State.COMPLETED)
        if plan is None:
            return None
        action = instant.pending_action
        plan_state = State.REQUESTED
        if instant.completed_action == ia.REPLACE_COMMIT:
            # The inflight commit metadata (JSON or Avro) may have overwritten the requested plan
            # (`createLSMTimelineInstant`); an inflight replace file accepts both record types.
            plan_state = State.INFLIGHT
        return decode_body(plan, action, plan_state)

    def completed_locations(self) -> pa.Table:
        """Where the completed state of every completed archived instant is: :data:`COMPLETED_LOCATION_SCHEMA`
        rows (layout 1: archive file, block offset and record index of its COMPLETED record; layout 2: LSM
        file and row), for bulk readers of archived bodies (the `write_stats` view)."""
        if self._v1_states is not None:
            states = self._v1_states
            rows = np.flatnonzero(pc.equal(states.kept["rank"], int(State.COMPLETED)).to_numpy(zero_copy_only=False))
            done = states.kept.take(pa.array(rows, pa.int64()))
            # A completed record is its instant's last: the listing row's completion time is its own (or, without
            # one, the requested time).
            instant = pa.array(states.group_of_rows()[rows], pa.int64())
            table = pa.table({"requested_time": pc.take(self.listing["requested_time"], instant),
                              "action": done["action"],
                              "completed_action": pc.take(states.cmp_names, done["cmp"]),
                              "completion_time": pc.take(self.listing["completion_time"], instant),
                              "archive_file": done["path"], "block_offset": done["offset"],
                              "record_index": done["index"]})
        else:
            done = self.listing.filter(pc.fill_null(pc.equal(self.listing["state"], State.COMPLETED.name), False))
            path = done["archive_file"]
            table = pa.table({"requested_time": done["requested_time"], "action": done["action"],
                              "completed_action": done["completed_action"], "completion_time": done["completion_time"],
                              "archive_file": path.cast(pa.string()) if pa.types.is_dictionary(path.type) else path,
                              "block_offset": pa.nulls(done.num_rows, pa.int64()),
                              "record_index": done["record_index"]})
        return pa.Table.from_arrays([table[f.name].cast(f.type) for f in COMPLETED_LOCATION_SCHEMA],
                                    schema=COMPLETED_LOCATION_SCHEMA)

    def body_error(self, instant: Instant) -> list[Finding]:
        """Decode failures of the instant's archived states (decoding them if not done yet)."""
        out = []
        for f in instant.files:
            self.body(instant, f.state)
            key = (instant.requested_time, instant.completed_action, f.state)
            if key in self._errors:
                out.append(self._errors[key])
        return out

# -- loading -----------------------------------------------------------------------------------

#: Error codes that describe a tolerated condition rather than damage.
_INFO_CODES = frozenset({"archive_merge_incomplete"})


def _error_findings(storage: ReadOnlyStorage, rows: pa.Table) -> list[Finding]:
    errors = rows.filter(pc.is_valid(rows["error"])).select(["archive_file", "error_code", "error"]).to_pylist()
    return [
        Finding(Severity.INFO if e["error_code"] in _INFO_CODES else Severity.ERROR, e["error_code"] or "archive_error",
                storage.uri_of(e["archive_file"] or ""), e["error"])
        for e in errors
    ]


def _good_rows(rows: pa.Table) -> pa.Table:
    if rows["error"].null_count == rows.num_rows:
        return rows  # no error row: skip a filter that would copy every column
    return rows.filter(pc.is_null(rows["error"]))


def load_archived_timeline(storage: ReadOnlyStorage, props: TableProperties, since: str | None = None,
                           until: str | None = None, executor: Executor | None = None,
                           file_rows: dict[str, pa.Table] | None = None) -> ArchivedTimeline:
    """Read the archived timeline of a table (layout from its properties); metadata is not decoded.

    `since`/`until` bound requested times (inclusive). Layout 2 prunes files by the range in their
    names; layout 1 reads files newest first and stops at the first file with nothing in range
    after one that had some, as `ArchivedTimelineLoaderV1` does.

    `file_rows` (layout 2, whole range): listing rows per LSM file path that a caller keeps between loads (a
    follower). An LSM file is never rewritten under its name (compaction writes new files), so the
    files read before are not read again; files that left the snapshot are dropped from it, files whose rows
    name damage are not kept. (Layout 1 keeps its rows per file version in the archive index.)
    """
    time_range = TimeRange(since, until)
    if props.timeline_layout_version >= 2:
        return _load_v2(storage, props, time_range, executor, file_rows if time_range.is_open else None)
    return _load_v1(storage, props, time_range, executor)


def _load_v1(storage: ReadOnlyStorage, props: TableProperties, time_range: TimeRange,
             executor: Executor | None) -> ArchivedTimeline:
    archive_dir = props.archive_dir
    findings: list[Finding] = []
    infos = {i.path: i for i in storage.list(archive_dir) if not i.is_dir}
    ordered = v1.order_archive_files(infos)
    merged_target, plan_error = v1.merge_plan_target(storage, archive_dir)
    if plan_error:
        findings.append(Finding(Severity.WARNING, "archive_merge_plan_unreadable",
                                storage.uri_of(f"{archive_dir}/{v1.MERGE_ARCHIVE_PLAN_NAME}"), plan_error))
    tolerated = (merged_target,) if merged_target else ()
    rows_of = _ArchiveRows(storage, infos, tolerated, executor)
    read: list[str] = []
    if time_range.is_open:
        rows = rows_of.all(ordered)
        read = list(ordered)
    else:
        tables: list[pa.Table] = []
        seen: set[str] = set()  # distinct instant times in range so far, as the Java loader counts them
        for path in ordered:
            table = _in_range(rows_of.all([path]), time_range)
            tables.append(table)
            read.append(path)
            before = len(seen)
            seen.update(t for t in table["requested_time"].to_pylist() if t is not None)
            if before > 0 and len(seen) == before:
                break  # crossed the lower bound of the range (newest files are read first)
        rows = pa.concat_tables(tables) if tables else ARCHIVE_LISTING_SCHEMA.empty_table()
    findings.extend(rows_of.findings)
    findings.extend(_error_findings(storage, rows))
    with paused_gc():  # millions of small acyclic objects (see paused_gc)
        return _v1_timeline(storage, props, rows, findings, time_range, read)


def _in_range(rows: pa.Table, time_range: TimeRange) -> pa.Table:
    """Rows of instants in `time_range`, plus every damage row (it names the file, whatever the range)."""
    times = rows["requested_time"]
    keep = pc.is_null(times)
    in_range = pc.is_valid(times)
    if time_range.since is not None:
        in_range = pc.and_(in_range, pc.greater_equal(times, time_range.since))
    if time_range.until is not None:
        in_range = pc.and_(in_range, pc.less_equal(times, time_range.until))
    return rows.filter(pc.or_(keep, pc.fill_null(in_range, False)))


class _ArchiveRows:
    """Listing rows of layout-1 archive files: from the archive index when a file is unchanged,
    else decoded from the file (through the executor) and recorded in the index."""

    def __init__(self, storage: ReadOnlyStorage, infos: dict[str, FileInfo], tolerated: tuple[str, ...],
                 executor: Executor | None) -> None:
        self.storage = storage
        self.infos = infos
        self.tolerated = tolerated
        self.executor = executor
        self.index = ArchiveIndex(ARCHIVE_LISTING_SCHEMA) if index_enabled() else None
        self.findings: list[Finding] = []

    def _key(self, path: str) -> IndexKey:
        info = self.infos[path]
        return IndexKey(self.storage.location_of(path), info.size, info.mtime_ms,
                        posixpath.basename(path) in self.tolerated, info.etag)

    def all(self, paths: list[str]) -> pa.Table:
        """Unfiltered rows of `paths`, in that order."""
        found: dict[str, pa.Table] = {}
        if self.index is not None:
            for path in paths:
                cached = self.index.get(self._key(path))
                if cached is not None:
                    found[path] = cached
            self.findings.extend(self.index.findings)
            self.index.findings.clear()
        missing = [p for p in paths if p not in found]
        if missing:
            fn = functools.partial(v1.list_archive_log_files, tolerated_damage=self.tolerated)
            # Record decoding (fastavro) holds the GIL: local files are listed inline (see inline_if_local),
            # spread over one process per core when there is enough to decode (a process costs ~0.5 s to
            # start; the M table's 110 MB of archive took 11 s in one).
            executor = inline_if_local(self.executor, self.storage, len(missing))
            heavy = sum(self.infos[p].size for p in missing) >= PARALLEL_DECODE_MIN_BYTES
            for path, table in self._decoded(fn, executor, heavy, missing):
                written = self.index.put(self._key(path), table) if self.index is not None else None
                # The rows as the index maps them, when it wrote them: the decoded copy is let go, and mapped
                # pages can be handed back once grouped (a million archived instants: ~300 MiB).
                found[path] = written if written is not None else table
            if heavy:
                release_arrow_memory()
        tables = [found[p] for p in paths]
        return pa.concat_tables(tables) if tables else ARCHIVE_LISTING_SCHEMA.empty_table()

    def _decoded(self, fn: Callable[[StorageSpec, list[str]], pa.Table], executor: Executor | None, heavy: bool,
                 missing: list[str]) -> Iterator[tuple[str, pa.Table]]:
        """The rows of each file of `missing`, in order. Heavy local decoding runs on one process per core and
        gives each file's rows as its worker returns them, so the caller records them and lets them go before
        the next (a whole decoded archive of a million instants at once: ~300 MiB more at peak)."""
        spec = self.storage.spec
        if heavy and executor is None and cpu_workers(len(missing)) >= 2:
            for path, rows in zip(missing, cpu_batch_results(fn, spec, missing, 1), strict=True):
                rows = rows.cast(ARCHIVE_LISTING_SCHEMA) if rows.schema != ARCHIVE_LISTING_SCHEMA else rows
                yield path, _split_by_file(rows, [path]).get(path, ARCHIVE_LISTING_SCHEMA.empty_table())
            return
        decoded = run_batches(executor, fn, spec, missing, 1, ARCHIVE_LISTING_SCHEMA)
        by_file = _split_by_file(decoded, missing)
        del decoded
        for path in missing:
            yield path, by_file.pop(path, ARCHIVE_LISTING_SCHEMA.empty_table())


def _split_by_file(rows: pa.Table, paths: list[str]) -> dict[str, pa.Table]:
    """Rows of a multi-file listing, per archive file (the `archive_file` column)."""
    if rows.num_rows == 0:
        return {}
    files = pc.cast(rows["archive_file"], pa.string()) if pa.types.is_dictionary(rows["archive_file"].type) \
        else rows["archive_file"]
    out = {}
    for path in paths:
        where = pc.indices_nonzero(pc.fill_null(pc.equal(files, path), False))
        if not len(where):
            continue
        first, last = where[0].as_py(), where[-1].as_py()
        # A file's rows come in one run (one batch per file): a slice shares the decoded buffers, a filter
        # would copy them (a million archived instants' rows twice at once).
        out[path] = rows.slice(first, last - first + 1) if last - first + 1 == len(where) else rows.take(where)
    return out


def _v1_timeline(storage: ReadOnlyStorage, props: TableProperties, rows: pa.Table, findings: list[Finding],
                 time_range: TimeRange, read: list[str]) -> ArchivedTimeline:
    """Group the state records of a layout-1 listing into instants (newest file's copy wins).

    Column-wise (millions of records): the instant listing and each instant's state-file
    names come from Arrow compute; :class:`Instant` objects and the per-state references used for
    body lookups are built only when something asks for them (:class:`_V1States`).
    """
    archive_dir = props.archive_dir
    good = _good_rows(rows).select(
        ["requested_time", "action", "state", "completion_time", "archive_file", "block_offset", "record_index"])
    records = good.num_rows
    states = _V1States.group(good)
    del good
    if records >= RELEASE_AFTER_RECORDS:
        release_arrow_memory()  # the grouping's intermediates, freed: hundreds of MiB on a million archived instants
    if states.duplicates:
        dup = states.duplicates
        findings.append(Finding(
            Severity.WARNING, "duplicate_archived_state", storage.uri_of(archive_dir),
            f"{len(dup)} archived state record(s) appear more than once (the newest file's copy is "
            f"used): {', '.join(dup[:5])}" + (" …" if len(dup) > 5 else ""),
        ))
    return ArchivedTimeline(storage, props, states.listing, findings, time_range, read, v1_states=states)


class _V1States:
    """Layout-1 state records grouped per instant: kept rows sorted by (requested time, comparable
    action, state), group boundaries, and the derived instant listing.

    `kept` is small per row (three million state records on L): `action` and `path` stay
    dictionary-encoded, `cmp` is the comparable action's position in the sorted `cmp_names` (an int32
    that sorts as the name does), `rank` the state's number; :meth:`strings` gives them back as text.
    What is the same for every record of an instant (its requested time, its completion and inflight
    times) is in the listing alone, a row per instant: as columns of `kept` they were 120 MiB on L."""

    def __init__(self, kept: pa.Table, starts: np.ndarray, listing: pa.Table, files: pa.ListArray | None,
                 duplicates: list[str], cmp_names: pa.Array | None = None) -> None:
        self.kept = kept
        # Start row of each instant's group in `kept`, plus len(kept): int64s (a million Python ints took 36 MiB).
        self.starts = starts
        self.listing = listing
        self._files = files
        self.duplicates = duplicates
        self.cmp_names = cmp_names if cmp_names is not None else pa.array([], pa.string())

    @property
    def files(self) -> pa.ListArray:
        """The state-file names per listing row, made on first use: three million names on L (~100 MiB) that a
        reader of a few instants' bodies never needs."""
        if self._files is None:
            names = _v1_state_file_names(self.kept, self.requested_times(self.group_of_rows()))
            self._files = pa.ListArray.from_arrays(pa.array(self.starts, pa.int32()), names)
        return self._files

    def group_of_rows(self) -> np.ndarray:
        """The listing row (the instant) of each row of `kept`."""
        return _group_of_rows(self.starts)

    def requested_times(self, groups: np.ndarray) -> pa.Array:
        """The requested time of each listing row in `groups` (for rows of `kept`: their instants')."""
        return as_array(pc.take(self.listing["requested_time"], pa.array(groups, pa.int64())))

    def strings(self, kept: pa.Table, columns: Sequence[str]) -> dict[str, list[Any]]:
        """Columns of `kept` (or a selection of its rows) as Python lists, `cmp` as comparable action names."""
        cols: dict[str, list[Any]] = kept.select(list(columns)).to_pydict()
        if "cmp" in cols:
            names = self.cmp_names.to_pylist()
            cols["cmp"] = [names[c] for c in cols["cmp"]]
        return cols

    @classmethod
    def group(cls, good: pa.Table) -> _V1States:
        n = good.num_rows
        actions = as_array(good["action"]).dictionary_encode()
        uniq = actions.dictionary.to_pylist()
        comparable = [ia.comparable_action(a, 2) for a in uniq]
        cmp_sorted = sorted(set(comparable))
        # The comparable action as its rank among the sorted names: sorts as the names do, 4 bytes a row.
        cmp_code = pc.take(pa.array([cmp_sorted.index(c) for c in comparable], pa.int32()), actions.indices)
        values = pc.unique(good["state"])
        rank = pc.take(pa.array([int(State[x]) for x in values.to_pylist()], pa.int8()),
                       pc.index_in(good["state"], value_set=values))
        path = as_array(good["archive_file"])  # one dictionary for every archive file
        table = pa.table({
            "rt": good["requested_time"], "cmp": cmp_code, "rank": rank, "ord": pa.array(np.arange(n), pa.int64()),
            "action": actions, "completion": good["completion_time"],
            "path": path if pa.types.is_dictionary(path.type) else path.dictionary_encode(),
            "offset": good["block_offset"], "index": good["record_index"],
        })
        del good, actions, cmp_code, rank, path
        # The records come from the archive index's mapped pages: on a big archive each step below reads some of
        # its columns and hands their pages back (a million archived instants: ~300 MiB resident otherwise,
        # beside the copies). A small one is not worth re-reading the other mappings' pages for.
        release = release_mapped_pages if n >= RELEASE_AFTER_RECORDS else _keep_pages
        release()
        # Newest archive file first: the first copy of a (time, action, state) wins. Sorted with the row's position
        # last, a copy is the row after an equal key (no hash table of three million keys on L).
        keys = table.select(["rt", "cmp", "rank", "ord"])
        as_number = _digits_as_int64(table["rt"])
        if as_number is not None:
            keys = keys.set_column(0, "rt", as_number)
        order = pc.sort_indices(keys, sort_keys=[
            ("rt", "ascending"), ("cmp", "ascending"), ("rank", "ascending"), ("ord", "ascending")])
        del keys, as_number
        release()
        taken = {}
        for name in table.column_names:  # a column at a time, its source pages handed back once copied
            column = table[name].take(order)
            taken[name] = column.combine_chunks() if column.num_chunks > 1 else column
            release()
        ordered = pa.table(taken)
        del table, order, taken
        duplicates: list[str] = []
        if n > 1:
            rt, cmp, rank_of = (ordered[c].chunk(0) for c in ("rt", "cmp", "rank"))
            again = pc.and_(pc.and_(pc.equal(rt[1:], rt[:-1]), pc.equal(cmp[1:], cmp[:-1])),
                            pc.equal(rank_of[1:], rank_of[:-1]))
            copies = np.flatnonzero(pc.fill_null(again, False).to_numpy(zero_copy_only=False)) + 1
            del rt, cmp, rank_of, again
            if len(copies):
                dropped = ordered.take(pa.array(copies, pa.int64()))
                dropped = dropped.take(pc.sort_indices(dropped["ord"]))  # named in the order the files were read
                duplicates = [f"{r['rt']} {r['action']} {State(r['rank']).name}"
                              for r in dropped.select(["rt", "action", "rank"]).to_pylist()]
                keep = np.ones(n, dtype=bool)
                keep[copies] = False
                ordered = ordered.filter(pa.array(keep))
        kept = ordered.drop_columns(["ord"])
        del ordered
        cmp_names = pa.array(cmp_sorted, pa.string())
        m = kept.num_rows
        if m == 0:
            return cls(kept.drop_columns(["rt", "completion"]), np.zeros(1, np.int64), _v1_listing_empty(),
                       pa.array([], pa.list_(pa.string())), duplicates, cmp_names)
        kept = as_one_chunk(kept)
        rt, cmp = kept["rt"].chunk(0), kept["cmp"].chunk(0)
        new_group = pc.or_(pc.not_equal(rt[1:], rt[:-1]), pc.not_equal(cmp[1:], cmp[:-1]))
        starts_arr = np.concatenate([[0], np.flatnonzero(new_group.to_numpy(zero_copy_only=False)) + 1, [m]])
        del new_group, rt, cmp
        first_idx = pa.array(starts_arr[:-1], pa.int64())
        last_idx = pa.array(starts_arr[1:] - 1, pa.int64())
        last = kept.select(["rt", "cmp", "rank", "action", "completion", "path"]).take(last_idx)
        first = kept.select(["rank", "action"]).take(first_idx)
        inflight = _v1_inflight_times(kept, starts_arr)
        # Each instant's times are in the listing from here on (see the class doc): let the records' copies go
        # before the listing is built.
        kept = kept.drop_columns(["rt", "completion"])
        completed = pc.equal(last["rank"], int(State.COMPLETED))
        # No stateTransitionTime (older archives): completion = requested time (CompletionTimeQueryViewV1).
        completion = pc.if_else(completed, pc.coalesce(last["completion"], last["rt"]), pa.scalar(None, pa.string()))
        source = pc.if_else(pc.is_valid(last["completion"]), ARCHIVE_SOURCE, REQUESTED_TIME_SOURCE)
        last_action = last["action"].cast(pa.string())
        pending = pc.if_else(pc.not_equal(first["rank"], int(State.COMPLETED)), first["action"].cast(pa.string()),
                             last_action)
        state_names = pa.array([s.name for s in sorted(State, key=int)], pa.string())
        g = len(first_idx)
        listing = pa.table({
            "requested_time": last["rt"], "action": last_action, "state": pc.take(state_names, last["rank"]),
            "pending_action": pending, "completed_action": pc.take(cmp_names, last["cmp"]),
            "completion_time": completion,
            "completion_time_source": pc.if_else(completed, source, pa.scalar(None, pa.string())),
            "source": pa.repeat(ARCHIVED, g).cast(pa.string()) if g else pa.array([], pa.string()),
            "archive_file": last["path"].unify_dictionaries() if isinstance(last["path"], pa.ChunkedArray)
            else last["path"],
            "inflight_time": inflight,
            "inflight_time_source": pc.if_else(pc.is_valid(inflight), ARCHIVE_SOURCE, pa.scalar(None, pa.string())),
            "record_index": pa.nulls(g, pa.int64()),
        })
        del last, first
        listing = pa.Table.from_arrays([listing[f.name].cast(f.type) for f in ARCHIVED_LISTING_SCHEMA],
                                       schema=ARCHIVED_LISTING_SCHEMA)
        return cls(kept, starts_arr.astype(np.int64), listing, None, duplicates, cmp_names)

    def instants(self, groups: Sequence[int] | None = None) -> list[Instant]:
        """The :class:`Instant` objects (same as the listing, with every state file); `groups`: only those
        listing rows (each row is one group of state records)."""
        kept, listing = self.kept, self.listing
        if groups is not None:
            # Only the records of the chosen groups, renumbered (their names made for them alone).
            bounds = [(int(self.starts[g]), int(self.starts[g + 1])) for g in groups]
            take = pa.array([k for lo, hi in bounds for k in range(lo, hi)], pa.int64())
            kept = kept.take(take)
            listing = listing.take(pa.array(list(groups), pa.int64()))
            if self._files is not None:
                names_array = self._files.values.take(take)
            else:
                sizes = [hi - lo for lo, hi in bounds]
                rows_of = np.repeat(np.asarray(list(groups), dtype=np.int64), sizes)
                names_array = _v1_state_file_names(kept, self.requested_times(rows_of))
            starts = [0]
            for lo, hi in bounds:
                starts.append(starts[-1] + hi - lo)
        else:
            starts = self.starts.tolist()
            names_array = self.files.values
        actions, ranks, paths = self.strings(kept, ["action", "rank", "path"]).values()
        rts, cmps, completions, sources, inflights = listing.select(
            ["requested_time", "completed_action", "completion_time", "completion_time_source", "inflight_time"]
        ).to_pydict().values()
        names = names_array.to_pylist()
        out: list[Instant] = []
        with paused_gc():
            for g in range(len(starts) - 1):
                lo, hi = starts[g], starts[g + 1]
                rt = rts[g]
                # The completed record's own completion time: the listing's, unless it fell back to the requested
                # time (no stateTransitionTime).
                done = completions[g] if sources[g] == ARCHIVE_SOURCE else None
                files = [InstantFile(names[k], rt, actions[k], State(ranks[k]),
                                     done if ranks[k] == State.COMPLETED else None, 0, None, paths[k])
                         for k in range(lo, hi)]
                top = files[-1]
                pending = next((f.action for f in files if f.state is not State.COMPLETED), top.action)
                completion = (done or rt) if top.state is State.COMPLETED else None
                source = (ARCHIVE_SOURCE if done else REQUESTED_TIME_SOURCE) if completion else None
                inflight = inflights[g]
                out.append(Instant(rt, top.action, top.state, pending, cmps[g], completion, source, ARCHIVED, files,
                                   inflight, ARCHIVE_SOURCE if inflight else None))
        return out

    def refs(self, keys: set[tuple[str, str]] | None = None
             ) -> dict[tuple[str, str], dict[State, tuple[str, str, int | None, int]]]:
        """(requested time, comparable action) → state → (action, archive file, block offset, record index);
        `keys`: only those instants."""
        kept = self.kept
        if keys is None:
            group = self.group_of_rows()
        else:
            # The records of the wanted instants only (a few among a million), from their groups' bounds.
            times = pa.array(sorted({k[0] for k in keys}), pa.string())
            wanted = pc.fill_null(pc.is_in(self.listing["requested_time"], value_set=times), False)
            groups = np.flatnonzero(wanted.to_numpy(zero_copy_only=False))
            lo, hi = self.starts[groups], self.starts[groups + 1]
            group = np.repeat(groups, hi - lo)
            rows = np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in zip(lo, hi, strict=True)]) \
                if len(groups) else np.empty(0, np.int64)
            kept = kept.take(pa.array(rows, pa.int64()))
        at = pa.array(group, pa.int64())
        rts = pc.take(self.listing["requested_time"], at).to_pylist()
        cmps = pc.take(self.listing["completed_action"], at).to_pylist()
        cols = self.strings(kept, ["rank", "action", "path", "offset", "index"])
        out: dict[tuple[str, str], dict[State, tuple[str, str, int | None, int]]] = {}
        for rt, cmp, rank, action, path, offset, index in zip(rts, cmps, *cols.values(), strict=True):
            out.setdefault((rt, cmp), {})[State(rank)] = (action, path, offset, index)
        return out


def _keep_pages() -> int:
    """:func:`release_mapped_pages`' stand-in where nothing is worth handing back."""
    return 0


def _group_of_rows(starts: np.ndarray) -> np.ndarray:
    """The group (listing row) of each record, from the groups' start rows `starts` (plus the end)."""
    return np.repeat(np.arange(len(starts) - 1, dtype=np.int64), np.diff(starts))


def _digits_as_int64(times: pa.ChunkedArray | pa.Array) -> pa.ChunkedArray | pa.Array | None:
    """`times` as int64s that sort as the strings do, when every one is digits of one length (instant times
    `yyyyMMddHHmmss[SSS]`), else ``None``. The grouping's sort of three million state records takes 0.4 s on
    them, 1.4 s on the strings."""
    if len(times) == 0 or times.null_count:
        return None
    lengths = pc.min_max(pc.utf8_length(times))
    shortest, longest = lengths["min"].as_py(), lengths["max"].as_py()
    # ASCII digits only: `utf8_is_digit` also accepts other scripts' digits, which the cast cannot read.
    if shortest != longest or not 0 < longest <= 18 or \
            not pc.all(pc.match_substring_regex(times, "^[0-9]+$")).as_py():
        return None
    return pc.cast(times, pa.int64())


def _v1_inflight_times(kept: pa.Table, starts: np.ndarray) -> pa.Array:
    """Per instant group of `kept` (boundaries `starts`), the `stateTransitionTime` of its INFLIGHT record
    (Hudi's archiver writes the inflight file's modification time there), null without one. Vectorised:
    a million archived instants cost a few numpy passes."""
    g = len(starts) - 1
    rank = kept["rank"].to_numpy()
    group_of_row = _group_of_rows(starts)
    rows = np.flatnonzero(rank == int(State.INFLIGHT))
    index = np.full(g, -1, dtype=np.int64)
    index[group_of_row[rows]] = rows
    take = pa.array(index, pa.int64(), mask=index < 0)
    completion = as_array(kept["completion"])
    return pc.take(completion, take)


def _v1_state_file_names(kept: pa.Table, requested_times: pa.Array) -> pa.Array:
    """`instant_file_name` of every kept state row (layout 1: its requested time, from `requested_times`, plus a
    suffix that depends only on action and state), computed per distinct (action, state) pair: the pair is a small
    integer of the action's dictionary index and the state's rank, no string per row but the name."""
    actions = as_array(kept["action"])
    if not pa.types.is_dictionary(actions.type):
        actions = actions.dictionary_encode()
    names = actions.dictionary.to_pylist()
    ranks = len(State)
    codes = pc.add(pc.multiply(actions.indices.cast(pa.int32()), ranks), kept["rank"].cast(pa.int32()))
    suffixes = [""] * (len(names) * ranks)
    for code in pc.unique(codes).to_pylist():
        suffixes[code] = ia.instant_file_name("", names[code // ranks], State(code % ranks), 1)
    suffix = pc.take(pa.array(suffixes, pa.string()), codes)
    joined = pc.binary_join_element_wise(requested_times, suffix, "")
    return as_array(joined)


def _v1_listing_empty() -> pa.Table:
    return ARCHIVED_LISTING_SCHEMA.empty_table()


def _listing_from_instants(instants: Sequence[Instant], with_record_index: bool = False) -> pa.Table:
    cols: dict[str, Any] = {
        "requested_time": [i.requested_time for i in instants],
        "action": [i.action for i in instants],
        "state": [i.state.name for i in instants],
        "pending_action": [i.pending_action for i in instants],
        "completed_action": [i.completed_action for i in instants],
        "completion_time": [i.completion_time for i in instants],
        "completion_time_source": [i.completion_time_source for i in instants],
        "source": [i.source for i in instants],
        "archive_file": pa.array(
            [(i.files[-1].path if i.files else None) if i.source == ARCHIVED else None for i in instants],
            pa.string(),
        ).dictionary_encode(),
        "inflight_time": [i.inflight_time for i in instants],
        "inflight_time_source": [i.inflight_time_source for i in instants],
    }
    schema = INSTANT_LISTING_SCHEMA
    if with_record_index:
        cols["record_index"] = pa.nulls(len(instants), pa.int64())
        schema = ARCHIVED_LISTING_SCHEMA
    return pa.table(cols, schema=schema)


_COMPLETES_AS = (("compaction", "commit"), ("logcompaction", "deltacommit"), ("clustering", "replacecommit"))


def _load_v2(storage: ReadOnlyStorage, props: TableProperties, time_range: TimeRange,
             executor: Executor | None, file_rows: dict[str, pa.Table] | None = None) -> ArchivedTimeline:
    history = props.archive_dir
    snap = v2.resolve_snapshot(storage, history)
    findings = list(snap.findings)
    paths = [v2.lsm_file_path(history, f.name) for f in v2.prune_files(snap.files, time_range)]
    fn = functools.partial(v2.list_lsm_files, since=time_range.since, until=time_range.until)
    if file_rows is None:
        rows = run_batches(executor, fn, storage.spec, paths, 1, ARCHIVE_LISTING_SCHEMA)
    else:
        missing = [p for p in paths if p not in file_rows]
        read = run_batches(executor, fn, storage.spec, missing, 1, ARCHIVE_LISTING_SCHEMA) if missing else None
        by_file = _split_by_file(read, missing) if read is not None else {}
        for gone in set(file_rows) - set(paths):
            del file_rows[gone]
        for path in missing:
            part = by_file.get(path, ARCHIVE_LISTING_SCHEMA.empty_table())
            if part["error"].null_count == part.num_rows:
                file_rows[path] = part
        # In snapshot order, as one batch per file gives them; a damaged file's rows (which name it) are read again.
        tables = [file_rows[p] if p in file_rows else by_file[p] for p in paths if p in file_rows or p in by_file]
        rows = pa.concat_tables(tables) if tables else ARCHIVE_LISTING_SCHEMA.empty_table()
    findings.extend(_error_findings(storage, rows))
    good = _good_rows(rows)
    n = good.num_rows
    action = good["action"]
    completed = action
    pending_names = pa.array([p for p, _ in _COMPLETES_AS], pa.string())
    if n and pc.any(pc.is_in(action, value_set=pending_names)).as_py():
        for pending, done in _COMPLETES_AS:  # rows hold completed actions; map defensively
            completed = pc.if_else(pc.equal(completed, pending), done, completed)
    listing = pa.table({
        "requested_time": good["requested_time"],
        "action": action,
        "state": good["state"],
        "pending_action": action,
        "completed_action": completed,
        "completion_time": good["completion_time"],
        "completion_time_source": pa.repeat(ARCHIVE_SOURCE, n).cast(pa.string()),
        "source": pa.repeat(ARCHIVED, n).cast(pa.string()),
        "archive_file": good["archive_file"],
        # A `HoodieLSMTimelineInstant` row keeps the requested and completion times only.
        "inflight_time": pa.nulls(n, pa.string()),
        "inflight_time_source": pa.nulls(n, pa.string()),
        "record_index": good["record_index"],
    }, schema=ARCHIVED_LISTING_SCHEMA)
    listing = _sorted(listing)
    listing, dups = _drop_adjacent_duplicates(listing)
    if dups:
        findings.append(Finding(
            Severity.WARNING, "duplicate_archived_instant", storage.uri_of(history),
            f"{len(dups)} archived instant(s) appear in more than one live LSM file (the first copy is used): "
            f"{', '.join(dups[:5])}" + (" …" if len(dups) > 5 else ""),
        ))
    return ArchivedTimeline(storage, props, listing, findings, time_range, paths,
                            snapshot_version=snap.version)


def _is_sorted(listing: pa.Table) -> bool:
    n = listing.num_rows
    if n < 2:
        return True
    rt = listing["requested_time"]
    ca = listing["completed_action"]
    prev_rt, next_rt = rt.slice(0, n - 1), rt.slice(1)
    lt = pc.less(prev_rt, next_rt)
    eq = pc.and_(pc.equal(prev_rt, next_rt), pc.less_equal(ca.slice(0, n - 1), ca.slice(1)))
    ok = pc.or_(lt, eq)
    return bool(pc.all(pc.fill_null(ok, False)).as_py())


def _sorted(listing: pa.Table) -> pa.Table:
    """Hudi's order (requested time, then comparable action); a no-op when already in order."""
    if _is_sorted(listing):
        return listing
    return listing.sort_by([("requested_time", "ascending"), ("completed_action", "ascending")])


def _drop_adjacent_duplicates(listing: pa.Table) -> tuple[pa.Table, list[str]]:
    n = listing.num_rows
    if n < 2:
        return listing, []
    rt = listing["requested_time"]
    ca = listing["completed_action"]
    same = pc.and_(pc.equal(rt.slice(0, n - 1), rt.slice(1)), pc.equal(ca.slice(0, n - 1), ca.slice(1)))
    same = pc.fill_null(same, False)
    if not pc.any(same).as_py():
        return listing, []
    drop = pa.concat_arrays([pa.array([False]), *same.chunks]) if isinstance(same, pa.ChunkedArray) \
        else pa.concat_arrays([pa.array([False]), same])
    dup_rows = listing.filter(drop).select(["requested_time", "completed_action"]).to_pylist()
    return listing.filter(pc.invert(drop)), [f"{r['requested_time']} {r['completed_action']}" for r in dup_rows]


def _instants_from_listing(listing: pa.Table, layout_version: int) -> list[Instant]:
    cols = listing.select(["requested_time", "action", "pending_action", "completed_action", "completion_time"]
                          ).to_pydict()
    cols["archive_file"] = listing["archive_file"].cast(pa.string()).to_pylist()  # faster than dictionary decoding
    completed = State.COMPLETED
    out = []
    # A million small objects: pause the cyclic GC, whose passes over the growing list would
    # otherwise make this quadratic (none of these objects forms a cycle).
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for rt, action, pending, done, ct, path in zip(*cols.values(), strict=True):
            name = f"{rt}_{ct}.{action}" if layout_version >= 2 and ct else f"{rt}.{action}"
            out.append(Instant(rt, action, completed, pending, done, ct, ARCHIVE_SOURCE, ARCHIVED,
                               [InstantFile(name, rt, action, completed, ct, 0, None, path or "")]))
    finally:
        if was_enabled:
            gc.enable()
    return out


# -- the unified timeline ----------------------------------------------------------------------


class UnifiedTimeline(BodyRecords, Timeline):
    """Active and archived instants in one timeline, in Hudi's order, each instant once.

    An instant in both (a crash between writing the archive and deleting the active files) keeps
    its active copy and is reported as ``instant_in_active_and_archived``. `since`/`until` bound the
    requested times of both parts.
    """

    def __init__(self, active: ActiveTimeline, archived: ArchivedTimeline) -> None:
        self.active = active
        self.archived = archived
        self.time_range = archived.time_range
        self._active = [i for i in active.instants if self.time_range.contains(i.requested_time)]
        self._own_findings: list[Finding] = []
        self._overlap = self._find_overlap()
        self._instants: list[Instant] | None = None

    def _find_overlap(self) -> set[tuple[str, str]]:
        keys = {i.key(): i for i in self._active}
        if not keys or self.archived.listing.num_rows == 0:
            return set()
        times = pa.array(sorted({k[0] for k in keys}), pa.string())
        listing = self.archived.listing
        hits = listing.filter(pc.is_in(listing["requested_time"], value_set=times))
        overlap: set[tuple[str, str]] = set()
        for row in hits.select(["requested_time", "completed_action", "completion_time", "archive_file"]).to_pylist():
            key = (row["requested_time"], row["completed_action"])
            inst = keys.get(key)
            if inst is None:
                continue
            overlap.add(key)
            self._own_findings.append(Finding(
                Severity.WARNING, "instant_in_active_and_archived",
                self.archived.storage.uri_of(row["archive_file"] or self.archived.archive_dir),
                f"{key[0]} {key[1]} is both in the active timeline ({inst.state.name}, completed "
                f"{inst.completion_time}) and in the archive (completed {row['completion_time']}); the active "
                "copy is used",
            ))
        return overlap

    @property
    def findings(self) -> list[Finding]:
        """Archive findings plus instants found in both timelines."""
        return [*self.archived.findings, *self._own_findings]

    @property
    def instants(self) -> list[Instant]:  # type: ignore[override]
        """Every instant, archived then active merged in Hudi's order (built on first use)."""
        if self._instants is None:
            archived = self.archived.instants
            if self._overlap:
                archived = [i for i in archived if i.key() not in self._overlap]
            if not archived or not self._active or archived[-1].sort_key() <= self._active[0].sort_key():
                merged = [*archived, *self._active]
            else:
                merged = sorted([*archived, *self._active], key=Instant.sort_key)
            self._instants = merged
        return self._instants

    def __len__(self) -> int:
        count: int = self.archived.listing.num_rows - len(self._overlap) + len(self._active)
        return count

    def __iter__(self) -> Iterator[Instant]:
        return iter(self.instants)

    def _archived_keep(self) -> pa.Array | None:
        """Mask of the archived rows this timeline keeps; ``None`` when it keeps them all."""
        if not self._overlap:
            return None
        archived = self.archived.listing
        times = pa.array(sorted({k[0] for k in self._overlap}), pa.string())
        candidates = pc.is_in(archived["requested_time"], value_set=times)
        return pa.array([not (c and (rt, ca) in self._overlap) for c, rt, ca in zip(
            candidates.to_pylist(), archived["requested_time"].to_pylist(),
            archived["completed_action"].to_pylist(), strict=True)])

    def archived_listing(self) -> pa.Table:
        """The archived rows this timeline keeps (instants also in the active timeline left out)."""
        keep = self._archived_keep()
        return self.archived.listing if keep is None else self.archived.listing.filter(keep)

    def archived_file_names(self) -> pa.ListArray:
        """The state-file names of each row of :meth:`archived_listing` (what the active timeline held).

        Layout 1 keeps every state's name; layout 2 names the completed file only (the LSM timeline
        keeps one row per instant)."""
        keep = self._archived_keep()
        names = self.archived.state_file_names()
        if names is not None:
            return names if keep is None else names.filter(keep)
        archived = self.archived_listing()
        n = archived.num_rows
        ct = archived["completion_time"]
        rt, action = archived["requested_time"], archived["action"]
        name = pc.if_else(pc.is_null(ct), pc.binary_join_element_wise(rt, action, "."),
                          pc.binary_join_element_wise(pc.binary_join_element_wise(rt, ct, "_"), action, "."))
        flat = as_array(name)
        return pa.ListArray.from_arrays(pa.array(range(n + 1), pa.int32()), flat)

    def archived_completed_locations(self) -> pa.Table:
        """:meth:`ArchivedTimeline.completed_locations` of the archived instants this timeline keeps (an
        instant also in the active timeline is read from there)."""
        table = self.archived.completed_locations()
        if not self._overlap or table.num_rows == 0:
            return table
        keep = [(rt, ca) not in self._overlap for rt, ca in zip(
            table["requested_time"].to_pylist(), table["completed_action"].to_pylist(), strict=True)]
        return table.filter(pa.array(keep, pa.bool_()))

    def listing_with_files(self, archived_only: bool = False) -> pa.Table:
        """:data:`INSTANT_LISTING_SCHEMA` rows plus `files` (state-file names), in Hudi's order, without
        building an object per archived instant (a million archived instants)."""
        if archived_only:  # every archived instant, also those still in the active timeline
            listing = self.archived.listing.select(INSTANT_LISTING_SCHEMA.names)
            names = self.archived.state_file_names()
            if names is None:
                saved, self._overlap = self._overlap, set()
                try:
                    names = self.archived_file_names()
                finally:
                    self._overlap = saved
            return listing.append_column("files", names)
        archived = self.archived_listing().select(INSTANT_LISTING_SCHEMA.names)
        archived = archived.append_column("files", self.archived_file_names())
        if not self._active:
            return archived
        active = _listing_from_instants(self._active)
        active = active.append_column("files", pa.array([[f.name for f in i.files] for i in self._active],
                                                        pa.list_(pa.string())))
        return _sorted(pa.concat_tables([archived, active]))

    def listing(self) -> pa.Table:
        """:data:`INSTANT_LISTING_SCHEMA` rows of every instant, in Hudi's order (no Instant objects)."""
        archived = self.archived_listing().select(INSTANT_LISTING_SCHEMA.names)
        active = _listing_from_instants(self._active)
        both = pa.concat_tables([archived, active]) if active.num_rows else archived
        return _sorted(both)

    def _part(self, instant: Instant) -> ActiveTimeline | ArchivedTimeline:
        return self.archived if instant.source == ARCHIVED else self.active

    def body(self, instant: Instant, state: State | None = None) -> DecodedBody | None:
        """The decoded body of one state, from whichever timeline holds the instant."""
        return self._part(instant).body(instant, state)

    def body_error(self, instant: Instant) -> list[Finding]:
        """Decode failures of the instant's files or archived states."""
        return self._part(instant).body_error(instant)

def load_unified_timeline(active: ActiveTimeline, since: str | None = None, until: str | None = None,
                          executor: Executor | None = None,
                          archived: ArchivedTimeline | None = None) -> UnifiedTimeline:
    """Active + archived instants of the table `active` belongs to, bounded by `since`/`until`."""
    if archived is None:
        archived = load_archived_timeline(active.storage, active.properties, since, until, executor)
    return UnifiedTimeline(active, archived)


def with_archived_rows(active_rows: pa.Table, unified: UnifiedTimeline) -> pa.Table:
    """`active_rows` (an instants table: one row per active instant, same column names as
    :data:`INSTANT_LISTING_SCHEMA` plus `files` and others) with the archived instants added as
    ``source="archived"`` rows, in Hudi's order. Columns the archive does not know (decoded body
    facts) are null; `files` holds the names the archived states had in the active timeline."""
    archived = unified.archived_listing()
    n = archived.num_rows
    files = unified.archived_file_names()
    cols = {}
    for fld in active_rows.schema:
        if fld.name == "files":
            cols[fld.name] = files.cast(fld.type)
        elif fld.name in archived.column_names:
            cols[fld.name] = archived[fld.name].cast(fld.type)
        elif pa.types.is_list(fld.type):
            cols[fld.name] = pa.ListArray.from_arrays(pa.array([0] * (n + 1), pa.int32()),
                                                      pa.array([], fld.type.value_type))
        else:
            cols[fld.name] = pa.nulls(n, fld.type)
    rows = pa.table(cols, schema=active_rows.schema)
    # The archive is older than the active timeline on any table but a damaged one: the two in order as they are,
    # a chunk each (sorting a million archived rows and taking every column in the new order was ~1.7 s on L, and
    # copying them into one chunk 0.9 s).
    return _sorted(pa.concat_tables([rows, active_rows]))
