"""The operation and recorded schema of many commit-metadata bodies at once (schema history).

Every completed commit, deltacommit and replacecommit records the writer's Avro schema as
`extraMetadata["schema"]` (`HoodieCommitMetadata.SCHEMA_KEY`) and its `operationType`. Reading them from
every body of a large table one record at a time costs what decoding every write stat costs, so this
module reads only those two values, the way :mod:`hudi_core.formats.timeline.write_stats` reads write stats:

* Avro containers (layout-2 bodies, active or archived) with the same header are decoded together,
  column-wise (:mod:`hudi_core.formats.avro.vector`: the write stats are read past, the `extraMetadata`
  map's entries and the `operationType` kept as positions in the buffer);
* JSON bodies (layout 1) are parsed with orjson (the whole body: a damaged one is never half read);
* anything else, and any body or batch the first two refuse, goes through
  :func:`~hudi_core.formats.timeline.bodies.decode_body`, which also words the error of a body that does not decode.

The batch functions :func:`lsm_commit_schemas` (layout-2 LSM files) and :func:`archive_log_commit_schemas`
(layout-1 archive files) run on any executor; each row says where its body is (file, block offset, record
index), so the driver keeps exactly the instants its listing kept.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_core.errors import DecodeError
from hudi_core.formats.avro import vector as av
from hudi_core.formats.avro.container import container_datums
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline import write_stats as ws
from hudi_core.formats.timeline.bodies import (
    BodyFormat,
    decode_body,
    sniff_format,
)
from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.records import CommitMetadata
from hudi_core.io.storage import StorageSpec

#: The key of the writer schema in commit metadata's `extraMetadata` (`HoodieCommitMetadata.SCHEMA_KEY`).
SCHEMA_KEY = "schema"
#: Rows of :func:`commit_schemas_of_bodies`: the body's index, its `operationType` and its
#: `extraMetadata["schema"]` (null when the body records none).
BODY_SCHEMAS_SCHEMA = pa.schema([("body", pa.int64()), ("operation_type", pa.string()), ("schema", pa.string())])
#: Rows of the batch functions: where the body is, its instant, and its values or an error (`error` set).
LOCATED_SCHEMAS_SCHEMA = pa.schema([
    ("archive_file", pa.string()), ("block_offset", pa.int64()), ("record_index", pa.int64()),
    ("requested_time", pa.string()), ("action", pa.string()), ("error_code", pa.string()), ("error", pa.string()),
    ("operation_type", pa.string()), ("schema", pa.string()),
])

_VALUE, _OPERATION = "extra_value", "operation_type"
_BODY_SINKS = {_VALUE: av.STRING, _OPERATION: av.STRING}


def _empty() -> pa.Table:
    return BODY_SCHEMAS_SCHEMA.empty_table()


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


# -- one body's values, the JSON and slow ways -------------------------------------------------------------------


def _json_values(data: bytes, action: str) -> tuple[str | None, str | None] | None:
    """(operationType, schema) of a JSON body as `decode_body` would read them; None where `decode_body` must
    decide (errors, a record type the action does not take)."""
    values = ws.json_commit_body(data, action)
    if values is None:
        return None
    extra = values.get("extraMetadata")
    schema = extra.get(SCHEMA_KEY) if isinstance(extra, dict) else None
    return _str(values.get("operationType")), _str(schema)


def _slow_values(data: bytes, action: str) -> tuple[str | None, str | None] | str:
    """(operationType, schema) of one body through `decode_body`; the error message when it does not decode."""
    try:
        decoded = decode_body(data, action, State.COMPLETED)
    except DecodeError as exc:
        return str(exc)
    record = decoded.record
    if isinstance(record, CommitMetadata):
        try:
            return record.operation_type, record.extra_metadata.get(SCHEMA_KEY)
        except (TypeError, ValueError, AttributeError, RecursionError) as exc:
            return f"{decoded.record_type} has an unexpected shape: {type(exc).__name__}: {exc}"
    return None, None


# -- Avro containers, column-wise ------------------------------------------------------------------------------


@functools.lru_cache(maxsize=32)
def _container_tree(schema_json: bytes) -> tuple[Any, str]:
    """(node tree, record type) of a commit-metadata writer schema; raises VectorDecodeError."""
    parsed, record_type = ws.commit_writer_schema(schema_json)
    tree = av.compile_schema(parsed, (("extraMetadata",),), {}, {"operationType": (_OPERATION, av.STRING)},
                             map_values={0: (_VALUE, av.STRING)})
    return tree, record_type


def _captured_values(buf: np.ndarray, cap: av.Captured, n: int, tags: np.ndarray | None = None,
                     operation_sinks: Sequence[str] = (_OPERATION,)) -> tuple[pa.Array | None, pa.Array]:
    """(operationType, schema) of each of `n` datums from what a column-wise decode kept: the value of the
    last `schema` entry of the datum's `extraMetadata` map (of the map path `tags[d]` when given)."""
    operation: pa.Array | None = None
    for sink in operation_sinks:
        part = av.strings_of_ids(buf, n, *cap.columns[sink])
        operation = part if operation is None else pc.coalesce(operation, part)
    key_start, key_len = cap.entry_key
    schema_at = np.full(n, -1, dtype=np.int64)
    if key_start.size:
        keys = av.gather_strings(buf, key_start, key_len, None)
        hit = np.asarray(pc.fill_null(pc.equal(keys, SCHEMA_KEY), False).to_numpy(zero_copy_only=False), dtype=bool)
        if tags is not None:
            hit &= cap.entry_tag == tags[cap.entry_datum]
        entries = np.flatnonzero(hit)
        schema_at[cap.entry_datum[entries]] = entries  # in reading order: the last entry of a key wins
    value_ids, value_starts, value_lengths = cap.columns[_VALUE]
    value_of = np.full(max(int(cap.entry_datum.size), 1), -1, dtype=np.int64)
    value_of[value_ids] = np.arange(value_ids.size)
    has = schema_at >= 0
    at = np.where(has, value_of[np.maximum(schema_at, 0)], -1)
    valid = at >= 0
    datums = np.flatnonzero(valid)
    schema = av.strings_of_ids(buf, n, datums, value_starts[at[valid]], value_lengths[at[valid]])
    return operation, schema


def _decode_group(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, group: np.ndarray, size: int, tree: Any
                  ) -> tuple[pa.Table, np.ndarray]:
    members, data, length = container_datums(buf, starts, ends, group, size)
    cap = av.decode(tree, buf, data, data + length, _BODY_SINKS)
    operation, schema = _captured_values(buf, cap, members.size)
    assert operation is not None
    return pa.table({"body": pa.array(members, pa.int64()), "operation_type": operation, "schema": schema},
                    schema=BODY_SCHEMAS_SCHEMA), members


def _containers_columnwise(bodies: pa.Array, candidates: np.ndarray, actions: Sequence[str | None]
                           ) -> tuple[list[pa.Table], np.ndarray]:
    return ws.containers_columnwise(bodies, candidates, actions, _container_tree, _decode_group)


def commit_schemas_of_bodies(bodies: pa.Array | Sequence[bytes | None], actions: Sequence[str | None],
                             wanted: np.ndarray | None = None) -> tuple[pa.Table, dict[int, str]]:
    """:data:`BODY_SCHEMAS_SCHEMA` rows (one per body that decodes, in body order) of completed commit bodies
    (`actions[i]`: body i's action; only the bodies `wanted` lists, when given), and the error of each body
    that does not decode, as `decode_body` words it."""
    split = ws.split_bodies(bodies, actions, wanted, _containers_columnwise)
    if split is None:
        return _empty(), {}
    tables, rest, data_of = split
    errors: dict[int, str] = {}
    rows: dict[str, list[Any]] = {"body": [], "operation_type": [], "schema": []}
    for i in rest:
        data = data_of(int(i))
        action = str(actions[i])
        values: tuple[str | None, str | None] | str | None = None
        if sniff_format(data) is BodyFormat.JSON:
            values = _json_values(data, action)
        if values is None:
            values = _slow_values(data, action)
        if isinstance(values, str):
            errors[int(i)] = values
            continue
        rows["body"].append(int(i))
        rows["operation_type"].append(values[0])
        rows["schema"].append(values[1])
    if rows["body"]:
        tables.append(pa.table(rows, schema=BODY_SCHEMAS_SCHEMA))
    if not tables:
        return _empty(), errors
    table = pa.concat_tables(tables)
    if len(tables) > 1:
        table = table.sort_by("body")
    return table, errors


# -- batch functions over archive files ---------------------------------------------------------------------------


_SCHEMAS = ws.LocatedRows(LOCATED_SCHEMAS_SCHEMA, ("operation_type", "schema"))


def lsm_commit_schemas(spec: StorageSpec, paths: list[str]) -> pa.Table:
    """Pure batch function: :data:`LOCATED_SCHEMAS_SCHEMA` rows of every write instant's body in layout-2 LSM
    files (`record_index`: the row in its file, as the archived listing numbers it)."""
    return ws.lsm_rows(spec, paths, _SCHEMAS, commit_schemas_of_bodies)


# Layout 1: `HoodieArchivedMetaEntry` records of the archive's Avro data blocks.
_ENTRY_PATHS = (("hoodieCommitMetadata", "extraMetadata"), ("hoodieReplaceCommitMetadata", "extraMetadata"))
_ENTRY_LEAVES: dict[tuple[str, ...], tuple[str, str]] = {
    ("hoodieCommitMetadata", "operationType"): ("operation_0", av.STRING),
    ("hoodieReplaceCommitMetadata", "operationType"): ("operation_1", av.STRING)}
_ENTRY_SINKS = {**{sink: kind for sink, kind in ws._ENTRY_TOP.values()}, _VALUE: av.STRING,
                **{sink: kind for sink, kind in _ENTRY_LEAVES.values()}}


@functools.lru_cache(maxsize=8)
def _entry_tree(schema_json: str) -> Any:
    return av.compile_schema(schema_json, _ENTRY_PATHS, {}, ws._ENTRY_TOP,
                             map_values={0: (_VALUE, av.STRING), 1: (_VALUE, av.STRING)}, leaves=_ENTRY_LEAVES)


def archive_log_commit_schemas(spec: StorageSpec, paths: list[str]) -> pa.Table:
    """Pure batch function: :data:`LOCATED_SCHEMAS_SCHEMA` rows of every completed commit, deltacommit and
    replacecommit record in layout-1 archive files (`block_offset` and `record_index` as the listing has
    them). Damaged blocks and records are left to the listing, which reports them."""
    return _SCHEMAS.concat(ws.archive_log_runs(spec, paths, _SchemaRun))


class _SchemaRun(ws._Run):
    """Consecutive archive records of one schema, decoded for their operation and schema."""

    def decode(self, path: str, buf: np.ndarray) -> list[pa.Table]:
        return _archive_records(path, str(self.schema), buf, self.offsets(), self.starts, self.ends)


def _equals(buf: np.ndarray, parts: tuple[np.ndarray, ...], n: int, words: Sequence[str]
            ) -> tuple[np.ndarray, np.ndarray]:
    """(present, matches) per datum of a captured string column: whether the datum has the value, and whether
    it is one of `words`, compared as bytes where they lie (no string is built)."""
    ids, starts, lengths = parts
    present = np.zeros(n, dtype=bool)
    present[ids] = True
    hit = np.zeros(ids.size, dtype=bool)
    last = buf.size - 1
    for word in words:
        raw = np.frombuffer(word.encode("utf-8"), dtype=np.uint8)
        same = lengths == raw.size
        at = np.flatnonzero(same)
        if at.size and raw.size:
            window = buf[np.minimum(starts[at, None] + np.arange(raw.size), last)]
            same[at] = (window == raw).all(axis=1)
        hit |= same
    matches = np.zeros(n, dtype=bool)
    matches[ids[hit]] = True
    return present, matches


def _archive_records(path: str, schema_json: str, buf: np.ndarray, offsets: np.ndarray, starts: np.ndarray,
                     ends: np.ndarray) -> list[pa.Table]:
    """The operation and schema of archive records (their block's offset, start and end in `buf`) of one schema,
    decoded together. `record_index` numbers a record within its block, as the listing does."""
    n = starts.size
    if not n:
        return []
    indexes = ws.record_indexes(offsets)

    def records(which: Sequence[int] | None = None) -> list[tuple[int, int, bytes]]:
        """(block offset, index in block, bytes) of records, for the slow ways (all when `which` is None)."""
        ks = range(n) if which is None else which
        return [(int(offsets[k]), int(indexes[k]), bytes(buf[starts[k]:ends[k]])) for k in ks]

    try:
        cap = av.decode(_entry_tree(schema_json), buf, starts, ends, _ENTRY_SINKS, n_paths=len(_ENTRY_PATHS))
    except av.VectorDecodeError:
        return _archive_records_slow(path, schema_json, records())
    # Completed (or stateless) records of write actions with a commit time, compared where the bytes lie.
    state_set, completed = _equals(buf, cap.columns["action_state"], n, [State.COMPLETED.name])
    _, writes = _equals(buf, cap.columns["action_type"], n, sorted(ws.WRITE_COMPLETED_ACTIONS))
    time_ids, _, time_lengths = cap.columns["commit_time"]
    named = np.zeros(n, dtype=bool)
    named[time_ids[time_lengths > 0]] = True
    chosen = (completed | ~state_set) & writes & named
    if not chosen.any():
        return []
    _, is_commit = _equals(buf, cap.columns["action_type"], n, [ia.COMMIT, ia.DELTA_COMMIT])
    # The payload field Hudi fills for the action (`payload_field`); a record where it is null reads as the
    # slow way reads it (another payload field may stand in).
    tag = np.where(is_commit, 0, 1)
    idx = np.arange(n)
    fast = chosen & cap.reached[tag, idx]
    slow = np.flatnonzero(chosen & ~fast)
    keep = np.flatnonzero(chosen)
    try:
        times = _subset_strings(buf, cap.columns["commit_time"], n, keep)
        actions = _subset_strings(buf, cap.columns["action_type"], n, keep)
        op0 = _subset_strings(buf, cap.columns["operation_0"], n, keep)
        op1 = _subset_strings(buf, cap.columns["operation_1"], n, keep)
        operation = pc.if_else(pa.array(is_commit[keep]), op0, op1)
        _, schema = _captured_values(buf, cap, n, tag, ())
    except av.VectorDecodeError:
        return _archive_records_slow(path, schema_json, records())
    fast_at = np.flatnonzero(fast[keep])
    values = pa.table({"body": pa.array(keep[fast_at], pa.int64()), "operation_type": operation.take(fast_at),
                       "schema": schema.take(keep[fast_at])}, schema=BODY_SCHEMAS_SCHEMA)
    full_times = np.full(n, -1, dtype=np.int64)
    full_times[keep] = np.arange(keep.size)
    tables = [_SCHEMAS.located(values, path, offsets, indexes, times, actions, full_times)]
    if slow.size:
        at = full_times[slow]
        tables.extend(_slow_records(path, schema_json, records([int(i) for i in slow]),
                                    times.take(pa.array(at)).to_pylist(), actions.take(pa.array(at)).to_pylist()))
    return tables


def _subset_strings(buf: np.ndarray, parts: tuple[np.ndarray, ...], n: int, keep: np.ndarray
                    ) -> pa.Array:
    """A captured string column of `n` datums, for the datums `keep` only (null where a datum has none)."""
    ids, starts, lengths = parts
    where = np.full(n, -1, dtype=np.int64)
    where[ids] = np.arange(ids.size)
    at = where[keep]
    valid = at >= 0
    safe = np.maximum(at, 0)
    return av.gather_strings(buf, np.where(valid, starts[safe] if starts.size else 0, 0),
                              np.where(valid, lengths[safe] if lengths.size else 0, 0), valid)


def _slow_records(path: str, schema_json: str, records: list[tuple[int, int, bytes]], times: list[str | None],
                  actions: list[str | None]) -> list[pa.Table]:
    """Completed write records (block offset, index in block, bytes) decoded whole, one by one."""
    from hudi_core.formats.timeline.archived_v1 import decode_full_datum, payload_to_body

    rows: dict[str, list[Any]] = {"body": [], "operation_type": [], "schema": []}
    errors = []
    for k, (offset, index, datum) in enumerate(records):
        try:
            body = payload_to_body(decode_full_datum(schema_json, datum), str(actions[k]), State.COMPLETED)
        except DecodeError as exc:
            errors.append((offset, index, times[k], actions[k], "archived_body_decode_failed", str(exc)))
            continue
        record = body.record
        rows["body"].append(k)
        rows["operation_type"].append(record.operation_type if isinstance(record, CommitMetadata) else None)
        rows["schema"].append(record.extra_metadata.get(SCHEMA_KEY) if isinstance(record, CommitMetadata) else None)
    tables = []
    if rows["body"]:
        tables.append(_SCHEMAS.located(pa.table(rows, schema=BODY_SCHEMAS_SCHEMA), path,
                               np.array([r[0] for r in records], dtype=np.int64),
                               np.array([r[1] for r in records], dtype=np.int64), pa.array(times, pa.string()),
                               pa.array(actions, pa.string())))
    if errors:
        tables.append(_SCHEMAS.errors(path, errors))
    return tables


def _archive_records_slow(path: str, schema_json: str, records: list[tuple[int, int, bytes]]) -> list[pa.Table]:
    """Archive records one by one (fastavro), for a run the column-wise way refuses: the key fields first, then
    the completed write records whole."""
    import io

    import fastavro

    from hudi_core.formats.timeline.archived_v1 import _schemas

    try:
        writer, projection = _schemas(schema_json)
    except DecodeError:
        return []
    keep: list[tuple[int, int, bytes]] = []
    times: list[str | None] = []
    actions: list[str | None] = []
    for offset, index, datum in records:
        try:
            key = cast(dict[str, Any], fastavro.schemaless_reader(io.BytesIO(datum), writer, projection))
        except Exception:  # the listing reports a record that does not decode
            continue
        time_, action = key.get("commitTime"), key.get("actionType")
        state = key.get("actionState") or State.COMPLETED.name
        if action not in ws.WRITE_COMPLETED_ACTIONS or not time_ or state != State.COMPLETED.name:
            continue
        keep.append((offset, index, datum))
        times.append(time_)
        actions.append(action)
    return _slow_records(path, schema_json, keep, times, actions) if keep else []


__all__ = ["BODY_SCHEMAS_SCHEMA", "LOCATED_SCHEMAS_SCHEMA", "SCHEMA_KEY", "archive_log_commit_schemas",
           "commit_schemas_of_bodies", "lsm_commit_schemas"]
