"""Layout-1 archived timeline: `.commits_.archive.N_<token>` log files (spec `04` §4.1, `01` §1.8).

Each archive file is an ordinary Hudi log file of AVRO_DATA_BLOCKs whose header carries only the
`SCHEMA` of `HoodieArchivedMetaEntry` (every nested type inlined). Every datum is one instant
*state*: requested, inflight and completed each get a record (`MetadataConversionUtils
.createMetaWrapper`), keyed by `commitTime`, `actionType`, `actionState`; `stateTransitionTime` holds
the completion time in newer archives. Emulates Hudi 1.1.x `ArchivedTimelineLoaderV1`:

* files are read newest `N` first; with a time range, reading stops at the first file that
  contributes nothing once an earlier (newer) file did;
* listing decodes only `commitTime/actionType/actionState/stateTransitionTime` through an Avro
  reader-schema projection; payloads are decoded on demand (:func:`read_archived_payload`);
* damage (a truncated or corrupt block, a block whose records do not decode) becomes an error row
  naming the file and offset; every record before (and any valid block after) still loads. A damaged
  file named by `mergeArchivePlan` is an incomplete merge, which Hudi tolerates too.

This module also defines the Arrow listing schema and the time range shared with layout 2.
"""

from __future__ import annotations

import io
import json
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

import fastavro
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.engines.executor import results_in_shared_memory
from hudi_core.errors import DecodeError, StorageError, safe_text
from hudi_core.formats.logfile.content import split_avro_content
from hudi_core.formats.logfile.errors import LogFileError, LogReadError
from hudi_core.formats.logfile.format import BlockType
from hudi_core.formats.logfile.reader import LogBlock, LogFileReader
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.bodies import BodyFormat, DecodedBody, decode_body
from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.records import RECORD_BUILDERS
from hudi_core.io.storage import ReadOnlyStorage, StorageSpec

#: `ArchivedTimelineLoaderV1.ARCHIVE_FILE_PATTERN`.
ARCHIVE_FILE_PATTERN = re.compile(r"^\.commits_\.archive\.([0-9]+).*")
MERGE_ARCHIVE_PLAN_NAME = "mergeArchivePlan"

#: One row per archived record (layout 1: per instant *state*; layout 2: per instant), or one
#: error row (`error` set, instant columns null) per damaged file or block.
ARCHIVE_LISTING_SCHEMA = pa.schema(
    [
        pa.field("requested_time", pa.string()),
        pa.field("action", pa.string()),
        pa.field("state", pa.string()),
        pa.field("completion_time", pa.string()),
        pa.field("archive_file", pa.dictionary(pa.int32(), pa.string())),
        pa.field("block_offset", pa.int64()),
        pa.field("record_index", pa.int64()),
        pa.field("error_code", pa.string()),
        pa.field("error", pa.string()),
    ]
)

_STATE_NAMES = {s.name for s in State}


@dataclass(frozen=True)
class TimeRange:
    """A closed range of requested times, `since <= t <= until`; either end may be open (None).

    `since`/`until` compare as strings, as `InstantComparison.compareTimestamps` does.
    """

    since: str | None = None
    until: str | None = None

    @property
    def is_open(self) -> bool:
        """No bound at all."""
        return self.since is None and self.until is None

    def contains(self, instant_time: str) -> bool:
        """Whether one requested time is in range."""
        if self.since is not None and instant_time < self.since:
            return False
        return self.until is None or instant_time <= self.until

    def overlaps(self, min_instant: str, max_instant: str) -> bool:
        """Whether `[min_instant, max_instant]` meets the range (`TimeRangeFilter.hasOverlappingInRange`)."""
        if self.since is not None and max_instant < self.since:
            return False
        return self.until is None or min_instant <= self.until


def archive_file_version(name: str) -> int | None:
    """`N` of `.commits_.archive.N_<token>`, or ``None`` when the name is not an archive file."""
    match = ARCHIVE_FILE_PATTERN.match(name)
    if not match:
        return None
    try:
        return int(match.group(1))
    except ValueError:
        return None


def order_archive_files(names: Iterable[str]) -> list[str]:
    """Archive files newest first: by `N` descending (`ArchiveFileVersionComparator`), then name."""
    archives = [(archive_file_version(posixpath.basename(n)), n) for n in names]
    kept = [(v, n) for v, n in archives if v is not None]
    kept.sort(key=lambda vn: (vn[0], posixpath.basename(vn[1])), reverse=True)
    return [n for _, n in kept]


# -- Avro projection ---------------------------------------------------------------------------

_KEY_FIELDS = ("commitTime", "actionType", "actionState", "stateTransitionTime")


@lru_cache(maxsize=32)
def _schemas(schema_json: str) -> tuple[Any, Any]:
    """(parsed writer schema, parsed key-field projection) for a header `SCHEMA`."""
    try:
        writer = json.loads(schema_json)
        if not isinstance(writer, dict) or writer.get("type") != "record":
            raise DecodeError("the header SCHEMA is not an Avro record schema")
        name = str(writer.get("name", "HoodieArchivedMetaEntry"))
        namespace = writer.get("namespace")
        full = name if "." in name or not namespace else f"{namespace}.{name}"
        projection = {
            "type": "record",
            "name": full,
            "fields": [{"name": f, "type": ["null", "string"], "default": None} for f in _KEY_FIELDS],
        }
        return fastavro.parse_schema(writer), fastavro.parse_schema(projection)
    except (ValueError, TypeError, KeyError, fastavro.schema.SchemaParseException) as exc:
        raise DecodeError(f"header SCHEMA is not a usable Avro schema: {exc}") from exc


def _block_datums(reader: LogFileReader, block: LogBlock) -> tuple[str, list[bytes]]:
    """(writer schema JSON, raw datums) of one Avro data block (V0 framing embeds the schema)."""
    content = reader.content(block)
    legacy = block.format_version == 0
    _, embedded, datums = split_avro_content(content, legacy)
    schema = embedded or block.schema
    if not schema:
        raise DecodeError("Avro block without a SCHEMA header")
    return schema, datums


# -- listing (a pure batch function) -----------------------------------------------------------


def _text(value: Any) -> Any:
    """`safe_text` for the common case first: an ASCII string passes as is."""
    return value if value.__class__ is str and value.isascii() else safe_text(value)


class _Rows:
    """Column buffers for :data:`ARCHIVE_LISTING_SCHEMA` rows of one archive file."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.cols: dict[str, list[Any]] = {
            f.name: [] for f in ARCHIVE_LISTING_SCHEMA if f.name != "archive_file"
        }

    def record(self, requested: str, action: str, state: str, completion: str | None, offset: int,
               index: int) -> None:
        c = self.cols  # one call per archived state record (3M on a 1M-instant archive): appends, no loop
        c["requested_time"].append(_text(requested))
        c["action"].append(_text(action))
        c["state"].append(state)  # one of State's names (checked by the caller)
        c["completion_time"].append(_text(completion))
        c["block_offset"].append(offset)
        c["record_index"].append(index)
        c["error_code"].append(None)
        c["error"].append(None)

    def error(self, code: str, message: str, offset: int | None = None) -> None:
        for key in self.cols:
            self.cols[key].append(None)
        self.cols["block_offset"][-1] = offset
        self.cols["error_code"][-1] = code
        self.cols["error"][-1] = safe_text(message)

    def __len__(self) -> int:
        return len(self.cols["requested_time"])

    def table(self) -> pa.Table:
        n = len(self)
        arrays = dict(self.cols)
        file_col = pa.DictionaryArray.from_arrays(
            pa.array(np.zeros(n, dtype=np.int32)), pa.array([self.path], pa.string())
        )
        return pa.table(
            {f.name: (file_col if f.name == "archive_file" else pa.array(arrays[f.name], f.type))
             for f in ARCHIVE_LISTING_SCHEMA},
            schema=ARCHIVE_LISTING_SCHEMA,
        )


def _whole_file_reader(storage: ReadOnlyStorage, path: str) -> LogFileReader:
    """A reader over an archive file, read whole first: listing it reads every block's content anyway. On an
    object store a 3 MB archive file cost ~1,200 ranged 8 KiB GETs (110 s for the M table's archive at 20 ms a
    request); on local disk the scan's three ranged reads a block, each opening the file, were a quarter of
    the listing's time (L: 300 blocks a file)."""
    try:
        data = storage.read(path)
    except StorageError as exc:
        raise LogReadError(str(exc), path) from exc
    return LogFileReader(storage, path, file_size=len(data), head=data)


KeyFields = tuple[Any, Any, Any, Any]
"""A record's (commitTime, actionType, actionState, stateTransitionTime), each None where absent."""

#: The key fields as the column reader keeps them: the root record's fields (Avro name -> (sink, kind)).
_KEY_TOP = {f: (f, "string") for f in _KEY_FIELDS}
#: Records decoded column-wise together (consecutive blocks of one schema).
_KEY_BATCH = 20_000


@lru_cache(maxsize=32)
def _key_tree(schema_json: str) -> Any:
    """The column reader's tree for the key fields of `schema_json`'s records; raises what the record reader's
    schema check raises first, so that a schema it refuses is refused here too."""
    from hudi_core.formats.avro import vector as av

    _schemas(schema_json)
    return av.compile_schema(schema_json, (), {}, _KEY_TOP)


def _slow_key_fields(reader: LogFileReader, block: LogBlock, rows: _Rows, uri: str,
                     damage_code: str | None) -> list[KeyFields | None] | None:
    """The key fields of one block's records, each record read by fastavro; damage becomes `rows` errors (None
    for a block that does not decode, None in the list for a record that does not)."""
    try:
        schema_json, datums = _block_datums(reader, block)
        writer, projection = _schemas(schema_json)
    except (DecodeError, LogFileError, StorageError) as exc:
        rows.error(damage_code or "archive_block_undecodable",
                   f"{uri}: block at byte {block.offset} does not decode: {exc}", block.offset)
        return None
    out: list[KeyFields | None] = []
    for index, datum in enumerate(datums):
        try:
            rec = cast(dict[str, Any], fastavro.schemaless_reader(io.BytesIO(datum), writer, projection))
        except Exception as exc:  # fastavro raises many types on damaged datums
            rows.error(damage_code or "archive_record_undecodable",
                       f"{uri}: record {index} of the block at byte {block.offset} does not decode: "
                       f"{exc!r}", block.offset)
            out.append(None)
            continue
        out.append((rec.get("commitTime"), rec.get("actionType"), rec.get("actionState"),
                    rec.get("stateTransitionTime")))
    return out


def _vector_key_fields(storage: ReadOnlyStorage, path: str, reader: LogFileReader, blocks: list[LogBlock]
                       ) -> dict[int, list[pa.Array]]:
    """Block offset -> the key fields of its records as string columns (:data:`_KEY_FIELDS` order), for the blocks
    that read column-wise exactly (framing version 1+, a schema the column reader takes, every record ending where
    its length says, UTF-8 text); the other blocks are left out (the record-by-record reader reads them and names
    their damage)."""
    from hudi_core.formats.avro import vector as av

    good = [b for b in blocks if not b.corrupt and b.block_type is BlockType.AVRO_DATA_BLOCK and b.schema
            and b.format_version != 0]
    if not good:
        return {}
    data = reader.whole_file  # a remote file is fetched whole already
    if data is None:
        try:
            data = storage.read(path)
        except StorageError:
            return {}
        if len(data) != reader.file_size:
            return {}  # the file changed under the reader: record by record, as scanned
    buf = np.frombuffer(data or b"\0", dtype=np.uint8)
    framed = av.datum_ranges_many(buf, [b.content_offset for b in good], [b.content_length for b in good])
    out: dict[int, list[pa.Array]] = {}
    run: list[tuple[LogBlock, np.ndarray, np.ndarray]] = []

    def flush() -> None:
        if not run:
            return
        schema = str(run[0][0].schema)
        starts = np.concatenate([r[1] for r in run])
        ends = np.concatenate([r[2] for r in run])
        try:
            tree = _key_tree(schema)
            cap = av.decode(tree, buf, starts, ends, {f: av.STRING for f in _KEY_FIELDS}, n_paths=0)
            n = starts.size
            columns = []
            for field in _KEY_FIELDS:
                ids, s, lengths = cap.columns.get(field, (np.zeros(0, np.int64),) * 3)
                where = np.full(n, -1, dtype=np.int64)
                where[ids] = np.arange(ids.size)
                valid = where >= 0
                safe = np.maximum(where, 0)
                columns.append(av.gather_strings(buf, np.where(valid, s[safe] if s.size else 0, 0),
                                               np.where(valid, lengths[safe] if lengths.size else 0, 0),
                                               valid))
        except (av.VectorDecodeError, DecodeError):
            run.clear()
            return  # these blocks are read record by record
        at = 0
        for block, block_starts, _ in run:
            out[block.offset] = [column.slice(at, block_starts.size) for column in columns]
            at += block_starts.size
        run.clear()

    count = 0
    for block, ranges in zip(good, framed, strict=True):
        if ranges is None:
            continue
        if run and (block.schema != run[0][0].schema or count + ranges[0].size > _KEY_BATCH):
            flush()
            count = 0
        run.append((block, ranges[0], ranges[1]))
        count += ranges[0].size
    flush()
    return out


def _state_as_read(state: str | None) -> str | None:
    """A record's `actionState` as the listing reads it: absent or empty (very old archives) is COMPLETED; a value
    that is none of State's names is ``None`` (the record is skipped, with a finding)."""
    state = state or State.COMPLETED.name
    return state if state in _STATE_NAMES else None


def _clean_file_rows(path: str, blocks: list[LogBlock], fast: dict[int, list[pa.Array]]) -> pa.Table | None:
    """The rows of an archive file whose every block read column-wise and whose every record is valid, built as
    columns: the same rows as the record-by-record loop of :func:`read_archive_file_rows` (a row per record, in
    block and record order; no state = COMPLETED), with no Python tuple per record (with the file read once, one
    of L's files, 30k records, is listed in 48 ms instead of 91). ``None`` for any other file (a corrupt block, a
    block read record by record, an invalid record): the loop reads it and words its findings."""
    columns: list[list[pa.Array]] = [[] for _ in _KEY_FIELDS]
    offsets: list[np.ndarray] = []
    indexes: list[np.ndarray] = []
    for block in blocks:
        if block.corrupt:
            return None
        if block.block_type is not BlockType.AVRO_DATA_BLOCK:
            continue  # skipped by the loop too: Java's loader only reads HoodieAvroDataBlocks
        keys = fast.get(block.offset)
        if keys is None:
            return None
        for kept, column in zip(columns, keys, strict=True):
            kept.append(column)
        n = len(keys[0])
        offsets.append(np.full(n, block.offset, np.int64))
        indexes.append(np.arange(n, dtype=np.int64))
    n = sum(len(o) for o in offsets)
    if n == 0:
        return ARCHIVE_LISTING_SCHEMA.empty_table()
    commit_time, action, state, transition = (pa.concat_arrays(c) for c in columns)
    present = pc.and_(pc.greater(pc.utf8_length(commit_time), 0), pc.greater(pc.utf8_length(action), 0))
    if not pc.all(pc.fill_null(present, False)).as_py():
        return None  # a record without its time or action: the loop words it
    # Each distinct actionState read by the one rule (`_state_as_read`), then given to its records.
    state = pc.fill_null(state, "")
    distinct = pc.unique(state)
    read = [_state_as_read(s) for s in distinct.to_pylist()]
    if None in read:
        return None  # a record whose actionState is no state: the loop words it
    state = pc.take(pa.array(read, pa.string()), pc.index_in(state, value_set=distinct))
    no_text = pa.nulls(n, pa.string())
    return pa.table({
        "requested_time": commit_time, "action": action, "state": state, "completion_time": transition,
        "archive_file": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, np.int32)), pa.array([path])),
        "block_offset": pa.array(np.concatenate(offsets)), "record_index": pa.array(np.concatenate(indexes)),
        "error_code": no_text, "error": no_text,
    }, schema=ARCHIVE_LISTING_SCHEMA)


def read_archive_file_rows(storage: ReadOnlyStorage, path: str, time_range: TimeRange | None = None,
                           tolerated_damage: frozenset[str] = frozenset(), vectorized: bool = True) -> pa.Table:
    """List the state records of one layout-1 archive file (no payload decoded).

    `tolerated_damage` holds archive file names that `mergeArchivePlan` names as an unfinished
    merge target: their damage is reported with code ``archive_merge_incomplete`` (Hudi skips them).

    The key fields of a block's records are read column-wise, many blocks of one schema together
    (:func:`_vector_key_fields`: 5x faster than a fastavro call per record); a block that does not read
    that way exactly (legacy framing, damage, a schema the column reader does not take) is read record by record,
    which names the damage. `vectorized=False` reads every block record by record (the tests compare the two).
    """
    rows = _Rows(path)
    uri = storage.uri_of(path)
    name = posixpath.basename(path)
    damage_code = "archive_merge_incomplete" if name in tolerated_damage else None
    try:
        reader = _whole_file_reader(storage, path)
    except LogFileError as exc:
        rows.error("archive_file_unreadable", f"cannot read archive file {uri}: {exc}")
        return rows.table()
    scan = reader.scan()
    fast = _vector_key_fields(storage, path, reader, scan.blocks) if vectorized else {}
    if time_range is None and scan.error is None:
        clean = _clean_file_rows(path, scan.blocks, fast)
        if clean is not None:
            return clean
    for block in scan.blocks:
        if block.corrupt:
            rows.error(damage_code or "archive_block_corrupt",
                       f"{uri}: corrupt block at byte {block.offset} ({block.corrupt_reason}, "
                       f"{block.content_length} bytes skipped); the records before it are kept",
                       block.offset)
            continue
        if block.block_type is not BlockType.AVRO_DATA_BLOCK:
            continue  # Java's loader only reads HoodieAvroDataBlocks
        columns = fast.get(block.offset)
        if columns is not None:
            keys: list[KeyFields | None] = list(zip(*(c.to_pylist() for c in columns), strict=True))
        else:
            slow = _slow_key_fields(reader, block, rows, uri, damage_code)
            if slow is None:
                continue
            keys = slow
        for index, key in enumerate(keys):
            if key is None:
                continue  # an undecodable record, reported by the slow reader
            commit_time, action, state, transition = key
            if not commit_time or not action:
                rows.error("archive_record_invalid",
                           f"{uri}: record {index} of the block at byte {block.offset} has no "
                           "commitTime or actionType; skipped", block.offset)
                continue
            read_state = _state_as_read(state)
            if read_state is None:
                rows.error("archive_record_invalid",
                           f"{uri}: record {index} at byte {block.offset} has actionState {state!r}; "
                           "skipped", block.offset)
                continue
            if time_range is not None and not time_range.contains(commit_time):
                continue
            rows.record(commit_time, action, read_state, transition, block.offset, index)
    if scan.error is not None:
        rows.error(damage_code or "archive_file_damaged",
                   f"{uri}: reading stopped: {scan.error}; every record before the damage is kept")
    return rows.table()


@results_in_shared_memory
def list_archive_log_files(spec: StorageSpec, paths: list[str], since: str | None = None,
                           until: str | None = None, tolerated_damage: tuple[str, ...] = ()) -> pa.Table:
    """Pure batch function (executor-ready): :data:`ARCHIVE_LISTING_SCHEMA` rows of layout-1 files."""
    from hudi_core.formats.timeline.bulk import paused_gc

    storage = spec.open()
    time_range = TimeRange(since, until)
    with paused_gc():  # one small dict per archived state record
        tables = [read_archive_file_rows(storage, p, None if time_range.is_open else time_range,
                                         frozenset(tolerated_damage)) for p in paths]
    if not tables:
        return ARCHIVE_LISTING_SCHEMA.empty_table()
    return pa.concat_tables(tables)


def merge_plan_target(storage: ReadOnlyStorage, archive_dir: str) -> tuple[str | None, str | None]:
    """(`mergedArchiveFileName` of `mergeArchivePlan`, error message) — both None without a plan."""
    path = f"{archive_dir}/{MERGE_ARCHIVE_PLAN_NAME}"
    if not storage.exists(path):
        return None, None
    try:
        records = list(fastavro.reader(io.BytesIO(storage.read(path))))
    except (StorageError, ValueError, EOFError, fastavro.read.SchemaResolutionError) as exc:
        return None, f"cannot read {storage.uri_of(path)}: {exc}"
    except Exception as exc:  # fastavro raises many types on damaged containers
        return None, f"cannot read {storage.uri_of(path)}: {exc!r}"
    if not records or not isinstance(records[0], dict):
        return None, f"{storage.uri_of(path)} holds no HoodieMergeArchiveFilePlan"
    return records[0].get("mergedArchiveFileName") or None, None


# -- payload on demand -------------------------------------------------------------------------

#: `HoodieArchivedMetaEntry` payload field → Avro record type it holds.
PAYLOAD_RECORD_TYPES: dict[str, str] = {
    "hoodieCommitMetadata": "HoodieCommitMetadata",
    "hoodieCleanMetadata": "HoodieCleanMetadata",
    "hoodieCompactionMetadata": "HoodieCompactionMetadata",
    "hoodieRollbackMetadata": "HoodieRollbackMetadata",
    "hoodieSavePointMetadata": "HoodieSavepointMetadata",
    "hoodieCompactionPlan": "HoodieCompactionPlan",
    "hoodieCleanerPlan": "HoodieCleanerPlan",
    "hoodieReplaceCommitMetadata": "HoodieReplaceCommitMetadata",
    "hoodieRequestedReplaceMetadata": "HoodieRequestedReplaceMetadata",
    "HoodieInflightReplaceMetadata": "HoodieCommitMetadata",
    "hoodieIndexCommitMetadata": "HoodieIndexCommitMetadata",
}


def payload_field(action: str, state: State) -> str | None:
    """The field `MetadataConversionUtils.createMetaWrapper` fills for an action in a state."""
    if action == ia.CLEAN:
        return "hoodieCleanMetadata" if state is State.COMPLETED else "hoodieCleanerPlan"
    if action in (ia.COMMIT, ia.DELTA_COMMIT):
        return "hoodieCommitMetadata"
    if action in (ia.REPLACE_COMMIT, ia.CLUSTERING):
        if state is State.COMPLETED:
            return "hoodieReplaceCommitMetadata"
        if state is State.INFLIGHT:
            return "HoodieInflightReplaceMetadata"
        return "hoodieRequestedReplaceMetadata"
    if action == ia.ROLLBACK:
        return "hoodieRollbackMetadata"
    if action == ia.SAVEPOINT:
        return "hoodieSavePointMetadata"
    if action in (ia.COMPACTION, ia.LOG_COMPACTION):
        return "hoodieCompactionPlan"
    if action == ia.INDEXING:
        return "hoodieIndexCommitMetadata"
    return None


def payload_to_body(record: dict[str, Any], action: str, state: State) -> DecodedBody:
    """The decoded body of one archived state record, from the field its action/state selects.

    When that field is null but another payload field is set (0.x archives filled pending cleans
    and compactions differently), that one is used. A payload held as a string is the old
    commit-metadata-as-JSON form and is decoded like an active-timeline JSON body.
    """
    chosen = payload_field(action, state)
    value = record.get(chosen) if chosen else None
    if value is None:
        for fname in PAYLOAD_RECORD_TYPES:
            if record.get(fname) is not None:
                chosen, value = fname, record[fname]
                break
    if value is None or chosen is None:
        return DecodedBody(BodyFormat.EMPTY, None, None, 0)
    if isinstance(value, (str, bytes)):
        data = value.encode("utf-8") if isinstance(value, str) else value
        return decode_body(data, action, state)
    if not isinstance(value, dict):
        raise DecodeError(f"{chosen} holds a {type(value).__name__}, not a record")
    record_type = PAYLOAD_RECORD_TYPES[chosen]
    builder = RECORD_BUILDERS.get(record_type)
    if builder is None:
        return DecodedBody(BodyFormat.AVRO, record_type, _RawRecord(value), 0)
    try:
        return DecodedBody(BodyFormat.AVRO, record_type, builder(value), 0)
    except (TypeError, ValueError, AttributeError) as exc:
        raise DecodeError(f"{record_type} in {chosen} has an unexpected shape: {exc}") from exc


@dataclass(frozen=True)
class _RawRecord:
    """A record type without a typed view (the deprecated `HoodieCompactionMetadata`)."""

    raw: dict[str, Any]


def read_block_datums(storage: ReadOnlyStorage, path: str, block_offset: int) -> tuple[str, list[bytes]]:
    """(writer schema JSON, raw datums) of the Avro data block at `block_offset` of an archive file."""
    reader = LogFileReader(storage, path)
    return _block_datums(reader, _block_at(reader, block_offset))


def decode_full_datum(schema_json: str, datum: bytes) -> dict[str, Any]:
    """One whole `HoodieArchivedMetaEntry` datum, every payload field decoded."""
    writer, _ = _schemas(schema_json)
    try:
        rec = fastavro.schemaless_reader(io.BytesIO(datum), writer, None)
    except Exception as exc:  # fastavro raises many types on damaged datums
        raise DecodeError(f"archived record does not decode: {exc!r}") from exc
    if not isinstance(rec, dict):
        raise DecodeError("archived datum is not a record")
    return rec


def _block_at(reader: LogFileReader, offset: int) -> LogBlock:
    for block in reader.blocks():
        if block.offset == offset:
            if block.corrupt or block.block_type is not BlockType.AVRO_DATA_BLOCK:
                break
            return block
        if block.offset > offset:
            break
    raise DecodeError(f"{reader.path}: no Avro data block at byte {offset}")
