"""Write stats of many commit-metadata bodies at once, as Arrow columns (the `write_stats` view).

One row per `HoodieWriteStat` of each body, in the body's order (partition entries as written, then the
stats of each), with the values :class:`~hudi_core.formats.timeline.records.WriteStat` gives: `partition` is the
stat's `partitionPath`, else its map key; `log_files` is empty when the stat has none.

Three ways to the same rows, fastest first:

* Avro containers (layout-2 bodies, active or archived) with the same header (writer schema, codec
  ``null``) are decoded together, column-wise (:mod:`hudi_core.formats.avro.vector`);
* JSON bodies (layout 1, Hudi 0.x) are parsed with orjson and read field by field, without objects;
* anything else, and any body or batch the first two refuse (damage, another codec, several records),
  goes through :func:`~hudi_core.formats.timeline.bodies.decode_body` as every other reader does, which also
  words the error of a body that does not decode.

The batch functions :func:`lsm_write_stats` (layout-2 LSM files) and :func:`archive_log_write_stats`
(layout-1 archive files) run on any executor, like the archived listing; each row carries where its body
is (file, block offset, record index) so the driver keeps exactly the instants its listing kept.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.errors import DecodeError, StorageError
from hudi_core.formats.avro import vector as av
from hudi_core.formats.avro.container import AVRO_MAGIC, binary_buffers, container_datums, container_header
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.bodies import (
    COMMIT_TYPES,
    BodyFormat,
    check_record_type,
    decode_body,
    expected_record_type,
    parse_json_object,
    sniff_format,
)
from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.records import (
    STAT_ROW_FIELDS,
    STAT_ROW_KEYS,
    CommitMetadata,
    _is_map,
    _list,
    stat_row,
)
from hudi_core.io.memory import as_array
from hudi_core.io.storage import StorageSpec

#: The write-stat columns (documented by the faces that show them).
STAT_FIELDS: tuple[tuple[str, pa.DataType], ...] = (
    ("partition", pa.string()),
    ("file_id", pa.string()),
    ("path", pa.string()),
    ("prev_commit", pa.string()),
    ("num_writes", pa.int64()),
    ("num_inserts", pa.int64()),
    ("num_update_writes", pa.int64()),
    ("num_deletes", pa.int64()),
    ("total_write_bytes", pa.int64()),
    ("file_size_in_bytes", pa.int64()),
    ("base_file", pa.string()),
    ("log_files", pa.list_(pa.string())),
    ("log_version", pa.int64()),
)
#: Rows of :func:`write_stats_of_bodies`: the body's index, the stat's position in its body, the stat.
BODY_STATS_SCHEMA = pa.schema([("body", pa.int64()), ("seq", pa.int64()), *STAT_FIELDS])
#: Rows of the batch functions: where the body is, its instant, and a stat, or an error row (`error` set).
LOCATED_STATS_SCHEMA = pa.schema([
    ("archive_file", pa.string()), ("block_offset", pa.int64()), ("record_index", pa.int64()),
    ("requested_time", pa.string()), ("action", pa.string()), ("error_code", pa.string()), ("error", pa.string()),
    ("seq", pa.int64()), *STAT_FIELDS,
])

#: Avro field of a `HoodieWriteStat` → (column, kind) (`partitionPath` is folded into `partition`).
_AVRO_FIELDS: dict[str, tuple[str, str]] = {
    "fileId": ("file_id", av.STRING),
    "path": ("path", av.STRING),
    "partitionPath": ("partition_path", av.STRING),
    "prevCommit": ("prev_commit", av.STRING),
    "numWrites": ("num_writes", av.LONG),
    "numInserts": ("num_inserts", av.LONG),
    "numUpdateWrites": ("num_update_writes", av.LONG),
    "numDeletes": ("num_deletes", av.LONG),
    "totalWriteBytes": ("total_write_bytes", av.LONG),
    "fileSizeInBytes": ("file_size_in_bytes", av.LONG),
    "baseFile": ("base_file", av.STRING),
    "logFiles": ("log_files", av.STRING_LIST),
    "logVersion": ("log_version", av.LONG),
}
_SINKS = {sink: kind for sink, kind in _AVRO_FIELDS.values()}
#: Completed actions whose bodies hold write stats, and the pending names a layout-2 row may carry for them.
WRITE_COMPLETED_ACTIONS = frozenset({ia.COMMIT, ia.DELTA_COMMIT, ia.REPLACE_COMMIT})
_WRITE_ROW_ACTIONS = WRITE_COMPLETED_ACTIONS | {ia.COMPACTION, ia.CLUSTERING, ia.LOG_COMPACTION}
#: Bodies decoded together (bounded memory: the M table's largest LSM file holds 250 MB of bodies).
BODY_BATCH = 4096
#: JSON bodies parsed before their stats go to Arrow (bounded memory: a parsed stat is a dict of ~30 keys).
_JSON_BATCH = 64
#: Distinct container headers decoded column-wise in one batch; bodies of other headers take the slow way.
_MAX_HEADERS = 8


class _Rows:
    """Column lists of write-stat rows built one by one (the JSON and slow ways)."""

    def __init__(self) -> None:
        self.cols: dict[str, list[Any]] = {name: [] for name in BODY_STATS_SCHEMA.names}

    def add(self, body: int, seq: int, partition: str | None, values: tuple[Any, ...]) -> None:
        cols = self.cols
        cols["body"].append(body)
        cols["seq"].append(seq)
        cols["partition"].append(partition)
        for (name, _), value in zip(STAT_FIELDS[1:], values, strict=True):
            cols[name].append(value)

    def table(self) -> pa.Table:
        return pa.table(self.cols, schema=BODY_STATS_SCHEMA)


def _add_commit_metadata(rows: _Rows, body: int, meta: CommitMetadata) -> None:
    seq = 0
    for partition, stats in meta.partition_to_write_stats.items():
        for s in stats:
            rows.add(body, seq, s.partition_path if s.partition_path is not None else partition,
                     (s.file_id, s.path, s.prev_commit, s.num_writes, s.num_inserts, s.num_update_writes,
                      s.num_deletes, s.total_write_bytes, s.file_size_in_bytes, s.base_file, list(s.log_files),
                      s.log_version))
            seq += 1


def json_commit_body(data: bytes, action: str) -> dict[str, Any] | None:
    """A JSON body parsed, when it is commit metadata the completed `action` takes, as `decode_body` would
    read it; None where `decode_body` must decide (errors, a record type the action does not take)."""
    try:
        values = parse_json_object(data)  # orjson where it reads as `json` does (huge integers: `json`)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError: `decode_body` words it
        return None
    if not isinstance(values, dict):
        return None
    expected = expected_record_type(action, State.COMPLETED)
    if expected not in COMMIT_TYPES and expected is not None:
        return None
    is_replace = expected == "HoodieReplaceCommitMetadata" or "partitionToReplaceFileIds" in values
    try:
        check_record_type("HoodieReplaceCommitMetadata" if is_replace else "HoodieCommitMetadata", action,
                          State.COMPLETED)
    except DecodeError:
        return None
    return values


def _json_stats(data: bytes, action: str) -> list[tuple[Any, Mapping[str, Any]]] | None:
    """(map key, stat dict) of each write stat of a JSON body, as `decode_body` would read them; None where
    `decode_body` must decide (errors, a record type the action does not take)."""
    values = json_commit_body(data, action)
    if values is None:
        return None
    stats = values.get("partitionToWriteStats")
    out: list[tuple[Any, Mapping[str, Any]]] = []
    if not _is_map(stats):
        return out
    for partition, items in stats.items():
        for d in _list(items):
            if _is_map(d):
                out.append((partition, d))
    return out


#: The Arrow type of each :data:`~hudi_core.formats.timeline.records.STAT_ROW_FIELDS` column (the active index's
#: stat columns and the `write_stats` view's).
STAT_ROW_TYPES: dict[str, pa.DataType] = {
    "file_id": pa.string(), "path": pa.string(), "partition_path": pa.string(), "prev_commit": pa.string(),
    "num_writes": pa.int64(), "num_inserts": pa.int64(), "num_update_writes": pa.int64(),
    "num_deletes": pa.int64(), "total_write_bytes": pa.int64(), "file_size_in_bytes": pa.int64(),
    "base_file": pa.string(), "log_files": pa.list_(pa.string()), "log_version": pa.int64(),
    "total_log_blocks": pa.int64(), "total_corrupt_log_block": pa.int64(), "total_rollback_blocks": pa.int64(),
    "log_offset": pa.int64(),
}
#: A JSON write stat's field dict as Arrow converts it: each :data:`STAT_ROW_TYPES` column under its field-dict key.
_JSON_STAT_TYPE = pa.struct([pa.field(key, STAT_ROW_TYPES[name])
                             for name, key in zip(STAT_ROW_FIELDS, STAT_ROW_KEYS, strict=True)])


def json_stat_columns(dicts: Sequence[Mapping[str, Any]]) -> dict[str, pa.Array] | None:
    """The :data:`STAT_ROW_TYPES` columns of JSON stat field dicts, converted by Arrow in one go (a tenth of
    `stat_row`'s time a stat), when that gives exactly what :func:`~hudi_core.formats.timeline.records.stat_row`
    reads; None otherwise, and the caller reads them with `stat_row`. Arrow takes what `stat_row` passes through
    (strings, integers, absent values) and truncates a float to an integer as `int` does; it refuses the other
    values `stat_row` converts (a number for a string, a text or a boolean for a count). Only `logFiles` needs a
    look: `stat_row` reads a value that is no list as no files and a null name as "None", where Arrow would split
    a string into letters and keep the null."""
    if any(v is not None and type(v) is not list for v in (d.get("logFiles") for d in dicts)):
        return None
    try:
        arr = pa.array(dicts, type=_JSON_STAT_TYPE)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return None
    columns = {name: arr.field(k) for k, name in enumerate(STAT_ROW_FIELDS)}
    files = columns["log_files"]
    if pc.list_flatten(files).null_count:
        return None
    if files.null_count:  # no `logFiles`: no files
        columns["log_files"] = pc.if_else(pc.is_null(files), pa.scalar([], files.type), files)
    return columns


def _json_table(parsed: list[tuple[int, list[tuple[Any, Mapping[str, Any]]]]]) -> pa.Table | None:
    """:data:`BODY_STATS_SCHEMA` rows of parsed JSON bodies, converted by Arrow in one go (:func:`json_stat_columns`);
    None where a value must be read by `stat_row` (then the bodies are read one by one)."""
    bodies: list[int] = []
    seqs: list[int] = []
    keys: list[str] = []
    dicts: list[Mapping[str, Any]] = []
    for body, stats in parsed:
        for seq, (partition, d) in enumerate(stats):
            bodies.append(body)
            seqs.append(seq)
            keys.append(str(partition))
            dicts.append(d)
    columns = json_stat_columns(dicts)
    if columns is None:
        return None
    cols: dict[str, Any] = {"body": pa.array(bodies, pa.int64()), "seq": pa.array(seqs, pa.int64()),
                            "partition": pc.coalesce(columns["partition_path"], pa.array(keys, pa.string()))}
    for name, _ in STAT_FIELDS[1:]:
        cols[name] = columns[name]
    return pa.table(cols, schema=BODY_STATS_SCHEMA)


def _add_json(rows: _Rows, body: int, stats: list[tuple[Any, Mapping[str, Any]]]) -> None:
    """The rows of one parsed JSON body, value by value (`stat_row`, as `WriteStat.from_dict` reads them)."""
    for seq, (partition, d) in enumerate(stats):
        row = dict(zip(STAT_ROW_FIELDS, stat_row(d), strict=True))
        pp = row["partition_path"]
        rows.add(body, seq, pp if pp is not None else str(partition), tuple(row[name] for name, _ in STAT_FIELDS[1:]))


def _add_slow(rows: _Rows, body: int, data: bytes, action: str) -> str | None:
    """The stats of one body through `decode_body`; the error message when it does not decode."""
    try:
        decoded = decode_body(data, action, State.COMPLETED)
    except DecodeError as exc:
        return str(exc)
    if isinstance(decoded.record, CommitMetadata):
        try:
            _add_commit_metadata(rows, body, decoded.record)
        except (TypeError, ValueError, AttributeError, RecursionError) as exc:
            return f"{decoded.record_type} has an unexpected shape: {type(exc).__name__}: {exc}"
    return None


# -- Avro containers, column-wise ----------------------------------------------------------------------


def commit_writer_schema(schema_json: bytes) -> tuple[Any, str]:
    """(parsed schema, record type) of a container's writer schema when it is commit metadata; raises
    VectorDecodeError otherwise."""
    try:
        parsed = orjson.loads(schema_json)
    except orjson.JSONDecodeError as exc:
        raise av.VectorDecodeError(f"schema is not JSON: {exc}") from exc
    name = parsed.get("name", "") if isinstance(parsed, dict) else ""
    record_type = str(name).rsplit(".", 1)[-1]
    if record_type not in COMMIT_TYPES:
        raise av.VectorDecodeError(f"not commit metadata: {record_type}")
    return parsed, record_type


@functools.lru_cache(maxsize=32)
def _container_tree(schema_json: bytes) -> tuple[Any, str]:
    """(node tree, record type) of a commit-metadata writer schema; raises VectorDecodeError."""
    parsed, record_type = commit_writer_schema(schema_json)
    return av.compile_schema(parsed, (("partitionToWriteStats",),), _AVRO_FIELDS), record_type


def _captured_table(buf: np.ndarray, cap: av.Captured, body_index: np.ndarray, tag: int = 0,
                    chosen: np.ndarray | None = None) -> pa.Table:
    """:data:`BODY_STATS_SCHEMA` rows of what a column-wise decode kept (entries of path `tag`, and only of
    datums where `chosen` is true when given). `body_index[d]` is datum d's body number."""
    entry = cap.row_entry
    keep = cap.entry_tag[entry] == tag
    datum = cap.entry_datum[entry]
    if chosen is not None:
        keep &= chosen[datum]
    rows = np.flatnonzero(keep)
    n_all = entry.size
    # Rows in reading order per datum: a datum's rows were numbered in the order they were read.
    order = rows[np.argsort(datum[rows], kind="stable")]
    cols: dict[str, pa.Array] = {}
    for sink, kind in _SINKS.items():
        parts = cap.columns[sink]
        if kind == av.LONG:
            cols[sink] = av.longs_of_ids(n_all, parts[0], parts[1])
        elif kind == av.STRING:
            cols[sink] = av.strings_of_ids(buf, n_all, *parts)
        else:
            cols[sink] = av.string_lists_of_ids(buf, n_all, *parts)
    key_start, key_len = cap.entry_key
    keys = av.gather_strings(buf, key_start[entry], key_len[entry], None)
    partition = pc.coalesce(cols.pop("partition_path"), keys)
    identity = order.size == n_all and bool((order == np.arange(n_all)).all())
    take = None if identity else pa.array(order, pa.int64())
    d = datum[order]
    first = np.zeros(d.size, dtype=bool)
    if d.size:
        first[0] = True
        first[1:] = d[1:] != d[:-1]
    starts = np.flatnonzero(first)
    seq = np.arange(d.size, dtype=np.int64) - np.repeat(starts, np.diff(np.append(starts, d.size)))
    out = {"body": pa.array(body_index[d], pa.int64()), "seq": pa.array(seq, pa.int64()),
           "partition": partition if take is None else partition.take(take)}
    for name, _ in STAT_FIELDS[1:]:
        out[name] = cols[name] if take is None else cols[name].take(take)
    return pa.table(out, schema=BODY_STATS_SCHEMA)


def container_groups(bodies: pa.Array, buf: np.ndarray, candidates: np.ndarray, actions: Sequence[str | None],
                     tree_of: Callable[[bytes], tuple[Any, str]]) -> Iterator[tuple[np.ndarray, int, Any]]:
    """The uncompressed Avro containers among `candidates` (body indexes into `bodies`, flattened into `buf`),
    grouped by identical header: per group its members (only those whose action the writer schema's record
    type fits, as a completed instant), the header size and the decoding tree `tree_of(schema JSON)` built
    (it returns the tree and the record type's name; av.VectorDecodeError skips the group). Bodies of no
    group take the slow way in the caller."""
    left = np.zeros(len(bodies), dtype=bool)
    left[candidates] = True
    for _ in range(_MAX_HEADERS):
        todo = np.flatnonzero(left)
        if not todo.size:
            break
        first = bodies[int(todo[0])].as_py()
        left[todo[0]] = False
        header = container_header(first)
        if header is None:
            continue
        size, meta = header
        same = np.asarray(pc.fill_null(pc.starts_with(bodies, pattern=first[:size - 16]), False).to_numpy(
            zero_copy_only=False), dtype=bool)
        members = np.union1d(np.flatnonzero(same & left), [todo[0]]).astype(np.int64)
        left[members] = False
        if meta.get("avro.codec", b"null") != b"null" or "avro.schema" not in meta:
            continue
        try:
            tree, record_type = tree_of(bytes(meta["avro.schema"]))
        except av.VectorDecodeError:
            continue
        ok_actions = set()
        for action in {actions[i] for i in members}:
            try:
                check_record_type(record_type, action, State.COMPLETED)
                ok_actions.add(action)
            except DecodeError:
                pass
        members = np.array([i for i in members if actions[i] in ok_actions], dtype=np.int64)
        if members.size:
            yield members, size, tree


#: Decodes one group of containers: (buf, starts, ends, members, header size, tree) -> (rows, members decoded).
GroupDecoder = Callable[[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, Any], tuple[pa.Table, np.ndarray]]


def containers_columnwise(bodies: pa.Array, candidates: np.ndarray, actions: Sequence[str | None],
                          tree_of: Callable[[bytes], tuple[Any, str]], decode_group: GroupDecoder
                          ) -> tuple[list[pa.Table], np.ndarray]:
    """Decode the Avro containers among `candidates` (body indexes) column-wise, group by group of identical
    headers (:func:`container_groups`, trees by `tree_of`), each group by `decode_group`. Returns the tables
    and the bodies decoded (the others take the slow way)."""
    done = np.zeros(len(bodies), dtype=bool)
    tables: list[pa.Table] = []
    if not candidates.size:
        return tables, done
    buf, starts, ends = binary_buffers(bodies)
    for members, size, tree in container_groups(bodies, buf, candidates, actions, tree_of):
        try:
            table, decoded = decode_group(buf, starts, ends, members, size, tree)
        except av.VectorDecodeError:
            continue
        tables.append(table)
        done[decoded] = True
    return tables, done


def _containers_columnwise(bodies: pa.Array, candidates: np.ndarray, actions: Sequence[str | None]
                           ) -> tuple[list[pa.Table], np.ndarray]:
    return containers_columnwise(bodies, candidates, actions, _container_tree, _decode_members)


def _decode_members(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, members: np.ndarray, header: int,
                    tree: Any) -> tuple[pa.Table, np.ndarray]:
    """One block of one record after the header and the same sync marker after it, else the slow way."""
    members, data, size = container_datums(buf, starts, ends, members, header)
    cap = av.decode(tree, buf, data, data + size, _SINKS)
    return _captured_table(buf, cap, members), members


#: Decodes the Avro containers among some bodies column-wise: (bodies, candidates, actions) -> (tables, done).
Columnwise = Callable[[pa.Array, np.ndarray, Sequence[str | None]], tuple[list[pa.Table], np.ndarray]]


def split_bodies(bodies: pa.Array | Sequence[bytes | None], actions: Sequence[str | None], wanted: np.ndarray | None,
                 columnwise: Columnwise) -> tuple[list[pa.Table], np.ndarray, Callable[[int], bytes]] | None:
    """Commit bodies (an Arrow binary array, or the caller's bytes objects, read without a copy), the chosen
    ones (`wanted`, else all) split in two: the Avro containers `columnwise` decodes (its tables, with the
    caller's body numbers), and the body numbers left for one-by-one decoding, with a reader of body i's
    bytes. None when there is no body."""
    raw: Sequence[bytes | None] | None = None
    arrow: Any = None
    if isinstance(bodies, (pa.Array, pa.ChunkedArray)):
        arrow = as_array(bodies)
        if not (pa.types.is_binary(arrow.type) or pa.types.is_large_binary(arrow.type)):
            arrow = arrow.cast(pa.binary())
        n = len(arrow)
    else:
        raw = bodies
        n = len(raw)
    if n == 0:
        return None
    chosen = np.ones(n, dtype=bool) if wanted is None else np.isin(np.arange(n), wanted)
    tables: list[pa.Table] = []
    if raw is not None:
        raw_bodies = raw
        # Only the Avro containers go to Arrow (JSON bodies are parsed from the caller's bytes).
        avro_at = np.array([i for i in np.flatnonzero(chosen) if (raw[int(i)] or b"")[:4] == AVRO_MAGIC],
                           dtype=np.int64)
        done = np.zeros(n, dtype=bool)
        if avro_at.size:
            sub = pa.array([raw[int(i)] for i in avro_at], pa.binary())
            sub_tables, sub_done = columnwise(sub, np.arange(avro_at.size), [actions[int(i)] for i in avro_at])
            for t in sub_tables:  # body numbers of the subset back to the caller's
                tables.append(t.set_column(0, "body", pa.array(avro_at[t["body"].to_numpy()], pa.int64())))
            done[avro_at[sub_done]] = True

        def data_of(i: int) -> bytes:
            return raw_bodies[i] or b""
    else:
        avro = np.asarray(pc.fill_null(pc.starts_with(arrow, pattern=AVRO_MAGIC), False).to_numpy(
            zero_copy_only=False), dtype=bool)
        tables, done = columnwise(arrow, np.flatnonzero(avro & chosen), actions)

        def data_of(i: int) -> bytes:
            data: bytes | None = arrow[i].as_py()
            return data or b""
    return tables, np.flatnonzero(chosen & ~done), data_of


def write_stats_of_bodies(bodies: pa.Array | Sequence[bytes | None], actions: Sequence[str | None],
                          wanted: np.ndarray | None = None) -> tuple[pa.Table, dict[int, str]]:
    """:data:`BODY_STATS_SCHEMA` rows of completed commit bodies (`actions[i]`: body i's action; only the
    bodies `wanted` lists, when given) and the error of each body that does not decode, as `decode_body`
    words it. Rows are in body order."""
    split = split_bodies(bodies, actions, wanted, _containers_columnwise)
    if split is None:
        return BODY_STATS_SCHEMA.empty_table(), {}
    tables, rest, data_of = split
    errors: dict[int, str] = {}
    rows = _Rows()
    parsed: list[tuple[int, list[tuple[Any, Mapping[str, Any]]]]] = []

    def flush() -> None:
        """Parsed JSON bodies to Arrow, a few at a time (their dicts are large: 100 stats a body on M)."""
        table = _json_table(parsed)
        if table is not None:
            tables.append(table)
        else:
            for body, stats in parsed:  # a value Arrow reads otherwise somewhere: each as `stat_row` reads it
                _add_json(rows, body, stats)
        parsed.clear()

    for i in rest:
        data = data_of(int(i))
        action = str(actions[i])
        if sniff_format(data) is BodyFormat.JSON:
            stats = _json_stats(data, action)
            if stats is not None:
                parsed.append((int(i), stats))
                if len(parsed) >= _JSON_BATCH:
                    flush()
                continue
        error = _add_slow(rows, int(i), data, action)
        if error is not None:
            errors[int(i)] = error
    if parsed:
        flush()
    if rows.cols["body"]:
        tables.append(rows.table())
    if not tables:
        return BODY_STATS_SCHEMA.empty_table(), errors
    table = pa.concat_tables(tables)
    if len(tables) > 1:
        table = table.sort_by([("body", "ascending"), ("seq", "ascending")])
    return table, errors


# -- batch functions over archive files ---------------------------------------------------------------


#: Decodes commit bodies: (bodies, actions, the bodies wanted) -> (body-indexed rows, errors by body).
BodiesDecoder = Callable[[pa.Array, Sequence[str | None], np.ndarray | None], tuple[pa.Table, dict[int, str]]]


@dataclass(frozen=True)
class LocatedRows:
    """The rows a batch function over archive files returns: where each body is (file, block offset, record
    index), its instant, an error or the `values` columns of the body-indexed rows decoded from it."""

    schema: pa.Schema
    values: tuple[str, ...]

    def located(self, rows: pa.Table, path: str, offsets: np.ndarray | None, indexes: np.ndarray,
                times: pa.Array, actions: pa.Array, subset_at: np.ndarray | None = None) -> pa.Table:
        """Rows of body-indexed `rows` (body i at `indexes[i]`, in the block at `offsets[i]`, of `times[i]`;
        with `subset_at`, `times` and `actions` hold only some bodies, body i's at `subset_at[i]`)."""
        body = rows["body"].to_numpy()
        n = rows.num_rows
        take = pa.array(body if subset_at is None else subset_at[body], pa.int64())
        cols = {
            "archive_file": pa.repeat(pa.scalar(path, pa.string()), n),
            "block_offset": pa.array(offsets[body], pa.int64()) if offsets is not None else pa.nulls(n, pa.int64()),
            "record_index": pa.array(indexes[body], pa.int64()),
            "requested_time": times.take(take),
            "action": actions.take(take),
            "error_code": pa.nulls(n, pa.string()),
            "error": pa.nulls(n, pa.string()),
        }
        for name in self.values:
            cols[name] = rows[name]
        return pa.table(cols, schema=self.schema)

    def errors(self, path: str, items: Sequence[tuple[int | None, int | None, str | None, str | None, str, str]]
               ) -> pa.Table:
        """Error rows: (block offset, record index, requested time, action, code, message)."""
        n = len(items)
        cols: dict[str, Any] = {f.name: pa.nulls(n, f.type) for f in self.schema}
        cols["archive_file"] = pa.array([path] * n, pa.string())
        for k, name in enumerate(("block_offset", "record_index", "requested_time", "action", "error_code",
                                  "error")):
            cols[name] = pa.array([it[k] for it in items], self.schema.field(name).type)
        return pa.table(cols, schema=self.schema)

    def concat(self, tables: list[pa.Table]) -> pa.Table:
        return pa.concat_tables(tables) if tables else self.schema.empty_table()


def lsm_rows(spec: StorageSpec, paths: list[str], layout: LocatedRows, decode: BodiesDecoder) -> pa.Table:
    """`layout`'s rows of every write instant's body in layout-2 LSM files, bodies decoded by `decode`
    (`record_index`: the row in its file, as the archived listing numbers it)."""
    import pyarrow.parquet as pq

    storage = spec.open()
    out: list[pa.Table] = []
    for path in paths:
        uri = storage.uri_of(path)
        row = 0
        try:
            with storage.open_read(path) as handle:
                pf = pq.ParquetFile(handle)
                if not {"instantTime", "action", "metadata"} <= set(pf.schema_arrow.names):
                    out.append(layout.errors(path, [(None, None, None, None, "lsm_file_unreadable",
                                                     f"{uri} is not a HoodieLSMTimelineInstant file")]))
                    continue
                # Small batches: the decoded pages of a large file reuse memory instead of faulting in 250 MB.
                for batch in pf.iter_batches(batch_size=BODY_BATCH, columns=["instantTime", "action", "metadata"],
                                             use_threads=False):
                    out.extend(_lsm_batch(path, batch, row, layout, decode))
                    row += batch.num_rows
        except (StorageError, OSError, pa.ArrowException, UnicodeDecodeError, ValueError) as exc:
            out.append(layout.errors(path, [(None, None, None, None, "lsm_file_unreadable",
                                             f"cannot read archived timeline file {uri}: {exc}")]))
    return layout.concat(out)


def _lsm_batch(path: str, batch: pa.RecordBatch, first_row: int, layout: LocatedRows, decode: BodiesDecoder
               ) -> list[pa.Table]:
    times = batch.column("instantTime").cast(pa.string())
    actions = batch.column("action").cast(pa.string())
    wanted = pc.fill_null(pc.is_in(actions, value_set=pa.array(sorted(_WRITE_ROW_ACTIONS))), False)
    where = np.flatnonzero(np.asarray(wanted.to_numpy(zero_copy_only=False), dtype=bool))
    if not where.size:
        return []
    indexes = np.arange(batch.num_rows, dtype=np.int64) + first_row
    action_list = actions.to_pylist()
    # Every row's body stays where the reader put it (no copy); only the write instants' are read.
    rows, errors = decode(batch.column("metadata"), action_list, where)
    tables = [layout.located(rows, path, None, indexes, times, actions)]
    if errors:
        time_list = times.to_pylist()
        tables.append(layout.errors(path, [(None, int(indexes[i]), time_list[i], action_list[i],
                                            "archived_body_decode_failed", message)
                                           for i, message in sorted(errors.items())]))
    return tables


_STATS = LocatedRows(LOCATED_STATS_SCHEMA, ("seq", *(f for f, _ in STAT_FIELDS)))


def lsm_write_stats(spec: StorageSpec, paths: list[str]) -> pa.Table:
    """Pure batch function: :data:`LOCATED_STATS_SCHEMA` rows of every write instant's body in layout-2
    LSM files (`record_index`: the row in its file, as the archived listing numbers it)."""
    return lsm_rows(spec, paths, _STATS, write_stats_of_bodies)


# Layout 1: `HoodieArchivedMetaEntry` records of the archive's Avro data blocks.
_ENTRY_PATHS = (("hoodieCommitMetadata", "partitionToWriteStats"),
                ("hoodieReplaceCommitMetadata", "partitionToWriteStats"))
_ENTRY_TOP = {"commitTime": ("commit_time", av.STRING), "actionType": ("action_type", av.STRING),
              "actionState": ("action_state", av.STRING)}
_ENTRY_SINKS = {**_SINKS, **{sink: kind for sink, kind in _ENTRY_TOP.values()}}


@functools.lru_cache(maxsize=8)
def _entry_tree(schema_json: str) -> Any:
    return av.compile_schema(schema_json, _ENTRY_PATHS, _AVRO_FIELDS, _ENTRY_TOP)


#: Archive records decoded together (several blocks of one schema: a block holds ~100 records).
ENTRY_BATCH = 20_000


def archive_log_write_stats(spec: StorageSpec, paths: list[str]) -> pa.Table:
    """Pure batch function: :data:`LOCATED_STATS_SCHEMA` rows of every completed commit, deltacommit and
    replacecommit record in layout-1 archive files (`block_offset` and `record_index` as the listing has
    them). Damaged blocks and records are left to the listing, which reports them.

    Each file is read whole, once; the records of its blocks are decoded column-wise where they lie in that
    buffer (consecutive blocks of one schema together), never sliced out one by one."""
    return _STATS.concat(archive_log_runs(spec, paths, _Run))


def archive_log_runs(spec: StorageSpec, paths: list[str], run_type: type[_Run]) -> list[pa.Table]:
    """The tables `run_type(...).decode(path, buf)` makes of the records of layout-1 archive files, run by run
    (consecutive blocks of one schema, at most :data:`ENTRY_BATCH` records; a block of the legacy framing
    alone). Each file is read whole, once; files that do not open are left to the listing."""
    from hudi_core.formats.logfile.errors import LogFileError
    from hudi_core.formats.logfile.format import BlockType
    from hudi_core.formats.logfile.reader import LogFileReader
    from hudi_core.formats.timeline.archived_v1 import _block_datums

    storage = spec.open()
    out: list[pa.Table] = []
    for path in paths:
        try:
            data = storage.read(path)
            reader = LogFileReader(storage, path, file_size=len(data), head=data)
            scan = reader.scan()
        except (LogFileError, StorageError):
            continue  # the listing reports the file
        buf = np.frombuffer(data or b"\0", dtype=np.uint8)
        blocks = [b for b in scan.blocks if not b.corrupt and b.block_type is BlockType.AVRO_DATA_BLOCK]
        # Every block's records framed at once (numpy across blocks: one step per record of the longest block).
        framed_all = av.datum_ranges_many(buf, [b.content_offset if b.schema and b.format_version != 0 else -1
                                             for b in blocks], [b.content_length for b in blocks])
        run = run_type()  # consecutive records of one schema
        for block, framed in zip(blocks, framed_all, strict=True):
            schema = block.schema
            if framed is None:  # legacy framing (schema inside the content) or damage: the block alone
                try:
                    schema_json, datums = _block_datums(reader, block)
                except (DecodeError, LogFileError, StorageError):
                    continue
                if not datums:
                    continue
                lone = run_type(schema_json)
                lone.add(block.offset, np.cumsum([0, *map(len, datums[:-1])], dtype=np.int64),
                         np.cumsum([len(d) for d in datums], dtype=np.int64))
                out.extend(lone.decode(path, np.frombuffer(b"".join(datums) or b"\0", dtype=np.uint8)))
                continue
            if run.count and (schema != run.schema or run.count + len(framed[0]) > ENTRY_BATCH):
                out.extend(run.decode(path, buf))
                run = run_type()
            run.schema = schema
            run.add(block.offset, *framed)
        if run.count:
            out.extend(run.decode(path, buf))
    return out


class _Run:
    """Records of consecutive blocks of one schema: where each starts and ends, and its block."""

    def __init__(self, schema: str | None = None) -> None:
        self.schema = schema
        self.blocks: list[tuple[int, int]] = []  # (block offset, records)
        self._starts: list[np.ndarray] = []
        self._ends: list[np.ndarray] = []
        self.count = 0

    def add(self, offset: int, starts: np.ndarray, ends: np.ndarray) -> None:
        self.blocks.append((offset, len(starts)))
        self._starts.append(np.asarray(starts, dtype=np.int64))
        self._ends.append(np.asarray(ends, dtype=np.int64))
        self.count += len(starts)

    @property
    def starts(self) -> np.ndarray:
        return np.concatenate(self._starts) if self._starts else np.zeros(0, dtype=np.int64)

    @property
    def ends(self) -> np.ndarray:
        return np.concatenate(self._ends) if self._ends else np.zeros(0, dtype=np.int64)

    def offsets(self) -> np.ndarray:
        """Each record's block offset."""
        return np.repeat(np.array([b[0] for b in self.blocks], dtype=np.int64),
                         np.array([b[1] for b in self.blocks], dtype=np.int64))

    def decode(self, path: str, buf: np.ndarray) -> list[pa.Table]:
        return _archive_records(path, str(self.schema), buf, self.offsets(), self.starts, self.ends)


def record_indexes(offsets: np.ndarray) -> np.ndarray:
    """Each record's index within its block, from the block offsets of records listed block by block."""
    n = offsets.size
    first = np.ones(n, dtype=bool)
    first[1:] = offsets[1:] != offsets[:-1]
    block_start = np.maximum.accumulate(np.where(first, np.arange(n), 0))
    indexes: np.ndarray = np.arange(n, dtype=np.int64) - block_start
    return indexes


def _archive_records(path: str, schema_json: str, buf: np.ndarray, offsets: np.ndarray, starts: np.ndarray,
                     ends: np.ndarray) -> list[pa.Table]:
    """The write stats of archive records (their block's offset, start and end in `buf`) of one schema, decoded
    together. `record_index` numbers a record within its block, as the listing does."""
    from hudi_core.formats.timeline.archived_v1 import decode_full_datum, payload_to_body

    n = starts.size
    if not n:
        return []
    indexes = record_indexes(offsets)

    def datum(i: int) -> bytes:
        """The slow ways' bytes of one record."""
        return bytes(buf[starts[i]:ends[i]])

    try:
        cap = av.decode(_entry_tree(schema_json), buf, starts, ends, _ENTRY_SINKS, n_paths=len(_ENTRY_PATHS))
        times = av.strings_of_ids(buf, n, *cap.columns["commit_time"])
        actions = av.strings_of_ids(buf, n, *cap.columns["action_type"])
        states = av.strings_of_ids(buf, n, *cap.columns["action_state"])
    except av.VectorDecodeError:
        return _archive_records_slow(path, schema_json, [(int(o), int(i), datum(k)) for k, (o, i) in
                                                         enumerate(zip(offsets, indexes, strict=True))])
    completed = pc.fill_null(pc.equal(pc.coalesce(states, pa.scalar(State.COMPLETED.name)), State.COMPLETED.name),
                             False)
    writes = pc.fill_null(pc.is_in(actions, value_set=pa.array(sorted(WRITE_COMPLETED_ACTIONS))), False)
    named = pc.fill_null(pc.greater(pc.utf8_length(times), 0), False)
    chosen = np.asarray(pc.and_(pc.and_(completed, writes), named).to_numpy(zero_copy_only=False), dtype=bool)
    if not chosen.any():
        return []
    # The payload field Hudi fills for the action (`payload_field`); a record where it is null reads as the
    # slow way reads it (another payload field may stand in).
    is_commit = np.asarray(pc.fill_null(pc.is_in(actions, value_set=pa.array([ia.COMMIT, ia.DELTA_COMMIT])),
                                        False).to_numpy(zero_copy_only=False), dtype=bool)
    tag = np.where(is_commit, 0, 1)
    idx = np.arange(n)
    fast = chosen & cap.reached[tag, idx]
    slow = np.flatnonzero(chosen & ~fast)
    try:
        parts = [_captured_table(buf, cap, idx, t, fast & (tag == t)) for t in range(len(_ENTRY_PATHS))]
        stats = pa.concat_tables(parts).sort_by([("body", "ascending"), ("seq", "ascending")])
    except av.VectorDecodeError:
        return _archive_records_slow(path, schema_json, [(int(o), int(i), datum(k)) for k, (o, i) in
                                                         enumerate(zip(offsets, indexes, strict=True))])
    tables = [_STATS.located(stats, path, offsets, indexes, times, actions)]
    if slow.size:
        time_list, action_list = times.to_pylist(), actions.to_pylist()
        rows = _Rows()
        errors = []
        for i in slow:
            try:
                body = payload_to_body(decode_full_datum(schema_json, datum(int(i))), action_list[i], State.COMPLETED)
                if isinstance(body.record, CommitMetadata):
                    _add_commit_metadata(rows, int(i), body.record)
            except DecodeError as exc:
                errors.append((int(offsets[i]), int(indexes[i]), time_list[i], action_list[i],
                               "archived_body_decode_failed", str(exc)))
        if rows.cols["body"]:
            tables.append(_STATS.located(rows.table(), path, offsets, indexes, times, actions))
        if errors:
            tables.append(_STATS.errors(path, errors))
    return tables


def _archive_records_slow(path: str, schema_json: str, records: list[tuple[int, int, bytes]]) -> list[pa.Table]:
    """Archive records (block offset, index in block, bytes) one by one (fastavro), for a run the column-wise
    way refuses."""
    import io

    import fastavro

    from hudi_core.formats.timeline.archived_v1 import _schemas, decode_full_datum, payload_to_body

    try:
        writer, projection = _schemas(schema_json)
    except DecodeError:
        return []
    rows = _Rows()
    errors = []
    n = len(records)
    times: list[str | None] = [None] * n
    actions: list[str | None] = [None] * n
    for i, (offset, index, datum) in enumerate(records):
        try:
            key = cast(dict[str, Any], fastavro.schemaless_reader(io.BytesIO(datum), writer, projection))
        except Exception:  # the listing reports a record that does not decode
            continue
        times[i], actions[i] = key.get("commitTime"), key.get("actionType")
        state = key.get("actionState") or State.COMPLETED.name
        if actions[i] not in WRITE_COMPLETED_ACTIONS or not times[i] or state != State.COMPLETED.name:
            continue
        try:
            body = payload_to_body(decode_full_datum(schema_json, datum), str(actions[i]), State.COMPLETED)
            if isinstance(body.record, CommitMetadata):
                _add_commit_metadata(rows, i, body.record)
        except DecodeError as exc:
            errors.append((offset, index, times[i], actions[i], "archived_body_decode_failed", str(exc)))
    tables = []
    if rows.cols["body"]:
        tables.append(_STATS.located(rows.table(), path, np.array([r[0] for r in records], dtype=np.int64),
                               np.array([r[1] for r in records], dtype=np.int64), pa.array(times, pa.string()),
                               pa.array(actions, pa.string())))
    if errors:
        tables.append(_STATS.errors(path, errors))
    return tables


__all__ = ["BODY_STATS_SCHEMA", "LOCATED_STATS_SCHEMA", "STAT_FIELDS", "WRITE_COMPLETED_ACTIONS",
           "archive_log_write_stats", "container_header", "lsm_write_stats", "write_stats_of_bodies"]
