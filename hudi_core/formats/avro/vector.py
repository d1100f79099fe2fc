"""Column-wise decoding of many Avro datums of one writer schema at once, with numpy.

Decoding commit metadata one record at a time costs fastavro about 19 µs a write stat (a dict of 33
fields each); the SQL view `write_stats` reads every write stat of the active and archived timelines
(200k on the M table). This decoder reads all the datums of a batch together: every step of the schema
(a union branch, a varint, a string) is one numpy operation over every datum at that step, and the
fields of interest are kept as positions in the buffer (strings) or values (longs), never as Python
objects.

It reads one pattern only, the one of commit metadata: the datums' records hold, at a `path` of fields
(unions followed through their non-null branches), a map whose values are arrays of records; each map
entry is kept with its key (the partition) and each array item with the wanted fields of its record
(strings, longs, lists of strings). Everything else is read past. Any datum that does not follow the
writer schema (a varint that does not end, a string past the end, bytes left over, a string that is not
UTF-8 …) makes :class:`VectorDecodeError`: the caller decodes that batch the ordinary way, which names
the damage. The answer is never a guess: a batch either decodes whole and exactly, or not at all.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

_ARANGE10 = np.arange(10, dtype=np.int64)
_SHIFTS = (7 * np.arange(10, dtype=np.uint64)).astype(np.uint64)
#: Most items an array or map block may declare when its items can be empty (a guard against damaged counts).
_MAX_EMPTY_ITEMS = 10_000

STRING, LONG, STRING_LIST, BOOLEAN = "string", "long", "string_list", "boolean"


class VectorDecodeError(Exception):
    """The batch does not decode this way (damage, or a schema this decoder does not read)."""


@dataclass
class Captured:
    """What one batch yielded. Ids: datums 0..n-1; map entries and array items numbered as read.

    `reached[t, d]`: the map at path `t` was read in datum `d` (``False`` when a union on the way was null).
    `entry_datum[e]`, `entry_tag[e]` (which path), `entry_key[e]` (start, length in the buffer): each map
    entry's datum, path and key. `row_entry[r]`: each array item's map entry. `columns[name]`: per kind,
    ``(ids, values)`` for longs, ``(ids, starts, lengths)`` for strings and lists of strings (a list's items
    in order, several per id); ids are rows, or datums for the root record's fields (`top`).
    """

    reached: np.ndarray
    entry_datum: np.ndarray
    entry_tag: np.ndarray
    entry_key: tuple[np.ndarray, np.ndarray]
    row_entry: np.ndarray
    columns: dict[str, tuple[np.ndarray, ...]]


# -- reading primitives over many positions at once --------------------------------------------------


def read_varints(buf: np.ndarray, pos: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Zig-zag varints (Avro int and long) at every position: (values, positions after them)."""
    if pos.size == 0:
        return pos.copy(), pos.copy()
    first = buf[pos]
    high = first >= 0x80
    if not high.any():
        v = first.astype(np.int64)
        return (v >> 1) ^ -(v & 1), pos + 1
    values = first.astype(np.int64)
    after = pos + 1
    where = np.flatnonzero(high)
    # Up to 10 bytes, clamped to the buffer: bytes past the end are never part of a valid varint (a varint
    # that runs on ends past its datum, which the callers' end checks catch).
    raw = buf[np.minimum(pos[where, None] + _ARANGE10, buf.size - 1)].astype(np.uint64)
    cont = (raw & 0x80) != 0
    length = np.argmin(cont, axis=1)  # index of the first byte without the continuation bit
    if cont[np.arange(where.size), length].any():
        raise VectorDecodeError("a varint runs over 10 bytes")
    keep = _ARANGE10[None, :] <= length[:, None]
    unsigned = np.where(keep, (raw & 0x7F) << _SHIFTS, 0).sum(axis=1, dtype=np.uint64)
    values[where] = unsigned.view(np.int64)
    after[where] = pos[where] + length + 1
    # zig-zag on the unsigned bits (an arithmetic shift would smear the top bit)
    u = values.view(np.uint64)
    return ((u >> np.uint64(1)) ^ (np.uint64(0) - (u & np.uint64(1)))).view(np.int64), after


# -- the compiled schema ------------------------------------------------------------------------------


class _State:
    """The buffer, the limit and the sinks of one decode."""

    def __init__(self, buf: np.ndarray, limit: int, kinds: dict[str, str]) -> None:
        self.buf = buf
        self.limit = limit
        self.entries_datum: list[np.ndarray] = []
        self.entries_tag: list[np.ndarray] = []
        self.entries_key_start: list[np.ndarray] = []
        self.entries_key_len: list[np.ndarray] = []
        self.rows_entry: list[np.ndarray] = []
        self.n_entries = 0
        self.n_rows = 0
        self.reached: list[tuple[int, np.ndarray]] = []
        self.sinks: dict[str, list[tuple[np.ndarray, ...]]] = {name: [] for name in kinds}

    def check(self, pos: np.ndarray) -> None:
        if pos.size and int(pos.max()) > self.limit:
            raise VectorDecodeError("a datum runs past the end of the data")


class _Node:
    #: Fewest bytes one value takes (guards block counts).
    min_size = 0

    def read(self, st: _State, pos: np.ndarray, ids: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


class _Null(_Node):
    def read(self, st: _State, pos: np.ndarray, ids: np.ndarray) -> np.ndarray:
        return pos


class _Fixed(_Node):
    def __init__(self, size: int) -> None:
        self.size = size
        self.min_size = size

    def read(self, st: _State, pos: np.ndarray, ids: np.ndarray) -> np.ndarray:
        return pos + self.size


class _Varint(_Node):
    """int, long, enum; with `sink`, the values are kept per id."""

    min_size = 1

    def __init__(self, sink: str | None = None) -> None:
        self.sink = sink

    def read(self, st: _State, pos: np.ndarray, ids: np.ndarray) -> np.ndarray:
        values, after = read_varints(st.buf, pos)
        if self.sink is not None:
            st.sinks[self.sink].append((ids, values))
        return after


class _Boolean(_Node):
    """A boolean kept per id as 0 or 1; any other byte is damage (never read as a guess)."""

    min_size = 1

    def __init__(self, sink: str) -> None:
        self.sink = sink

    def read(self, st: _State, pos: np.ndarray, ids: np.ndarray) -> np.ndarray:
        st.check(pos + 1)
        values = st.buf[pos].astype(np.int64) if pos.size else np.zeros(0, dtype=np.int64)
        if values.size and int(values.max()) > 1:
            raise VectorDecodeError("a boolean byte other than 0 or 1")
        st.sinks[self.sink].append((ids, values))
        return pos + 1


class _Bytes(_Node):
    """bytes, string; with `sink`, (start, length) kept per id."""

    min_size = 1

    def __init__(self, sink: str | None = None) -> None:
        self.sink = sink

    def read(self, st: _State, pos: np.ndarray, ids: np.ndarray) -> np.ndarray:
        length, start = read_varints(st.buf, pos)
        if length.size and int(length.min()) < 0:
            raise VectorDecodeError("a negative string length")
        after: np.ndarray = start + length
        st.check(after)
        if self.sink is not None:
            st.sinks[self.sink].append((ids, start, length))
        return after


class _Record(_Node):
    def __init__(self, fields: list[_Node]) -> None:
        self.fields = fields
        self.min_size = sum(f.min_size for f in fields)

    def read(self, st: _State, pos: np.ndarray, ids: np.ndarray) -> np.ndarray:
        for f in self.fields:
            pos = f.read(st, pos, ids)
        return pos


class _Union(_Node):
    min_size = 1

    def __init__(self, branches: list[_Node]) -> None:
        self.branches = branches

    def read(self, st: _State, pos: np.ndarray, ids: np.ndarray) -> np.ndarray:
        if pos.size == 0:
            return pos
        first = st.buf[pos]
        top = int(first.max())
        if top < 0x80 and not (first & 1).any():  # one byte, not negative: the branch is the byte halved
            branch, after = first >> 1, pos + 1
            lo, hi = int(first.min()) >> 1, top >> 1
        else:
            branch, after = read_varints(st.buf, pos)
            lo, hi = int(branch.min()), int(branch.max())
        if lo < 0 or hi >= len(self.branches):
            raise VectorDecodeError("a union branch out of range")
        if lo == hi:
            return self.branches[lo].read(st, after, ids)
        out = after.copy()
        for b in range(lo, hi + 1):
            sel = np.flatnonzero(branch == b)
            if sel.size:
                out[sel] = self.branches[b].read(st, after[sel], ids[sel])
        return out


def _blocks(st: _State, pos: np.ndarray, ids: np.ndarray, item_min: int, read_item: Any) -> np.ndarray:
    """Read the blocks of an array or map at every position; `read_item(pos, ids, cursors)` reads one item
    for the given cursors (indexes into `pos`) and returns their new positions."""
    pos = pos.copy()
    active = np.arange(pos.size)
    while active.size:
        count, after = read_varints(st.buf, pos[active])
        negative = count < 0
        if negative.any():  # a negative count is followed by the block's size in bytes
            count = np.abs(count)
            _, after_size = read_varints(st.buf, after[negative])
            after[negative] = after_size
        pos[active] = after
        st.check(after)
        more = count > 0
        active, count = active[more], count[more]
        if not active.size:
            break
        room = st.limit - pos[active]
        too_many = bool((count * item_min > room).any()) if item_min else int(count.max()) > _MAX_EMPTY_ITEMS
        if too_many:
            raise VectorDecodeError("a block declares more items than there are bytes")
        cur, left = active, count
        while cur.size:
            pos[cur] = read_item(pos[cur], ids[cur], cur)
            left = left - 1
            keep = left > 0
            cur, left = cur[keep], left[keep]
    return pos


class _Array(_Node):
    """An array; `rows`: each item is a new row (ids of the items' record), with its parent's id kept."""

    min_size = 1

    def __init__(self, items: _Node, rows: bool = False) -> None:
        self.items = items
        self.rows = rows

    def read(self, st: _State, pos: np.ndarray, ids: np.ndarray) -> np.ndarray:
        def item(p: np.ndarray, parent: np.ndarray, _cur: np.ndarray) -> np.ndarray:
            if self.rows:
                row_ids = np.arange(st.n_rows, st.n_rows + p.size, dtype=np.int64)
                st.n_rows += p.size
                st.rows_entry.append(parent)
                return self.items.read(st, p, row_ids)
            return self.items.read(st, p, parent)

        return _blocks(st, pos, ids, self.items.min_size, item)


class _Map(_Node):
    """A map; `tag` set: the map at path `tag` (each entry numbered, its key and datum kept)."""

    min_size = 1

    def __init__(self, values: _Node, tag: int | None = None) -> None:
        self.values = values
        self.tag = tag
        self.entries = tag is not None

    def read(self, st: _State, pos: np.ndarray, ids: np.ndarray) -> np.ndarray:
        if self.tag is not None:
            st.reached.append((self.tag, ids))

        def item(p: np.ndarray, parent: np.ndarray, _cur: np.ndarray) -> np.ndarray:
            length, start = read_varints(st.buf, p)
            if length.size and int(length.min()) < 0:
                raise VectorDecodeError("a negative map key length")
            after = start + length
            st.check(after)
            if not self.entries:
                return self.values.read(st, after, parent)
            entry_ids = np.arange(st.n_entries, st.n_entries + p.size, dtype=np.int64)
            st.n_entries += p.size
            st.entries_datum.append(parent)
            st.entries_tag.append(np.full(p.size, self.tag, dtype=np.int64))
            st.entries_key_start.append(start)
            st.entries_key_len.append(length)
            return self.values.read(st, after, entry_ids)

        return _blocks(st, pos, ids, 1, item)


_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


#: Paths still to follow from a node: (tag, remaining field names); a map reached with nothing remaining is
#: the map of that tag.
Rests = tuple[tuple[int, tuple[str, ...]], ...]


@dataclass
class _Compiler:
    """Builds the node tree of a writer schema for one capture pattern."""

    fields: dict[str, tuple[str, str]]  # Avro field name of the item record -> (sink name, kind)
    top: dict[str, tuple[str, str]]  # Avro field name of the root record -> (sink name, kind)
    #: tag of a map path -> (sink, kind) of its values, kept per entry (instead of arrays of rows)
    map_values: dict[int, tuple[str, str]] = field(default_factory=dict)
    #: tag of a leaf path -> (sink, kind) of the field it ends at, kept per datum
    leaves: dict[int, tuple[str, str]] = field(default_factory=dict)
    names: dict[str, Any] = field(default_factory=dict)
    depth: int = 0

    def _define(self, schema: dict[str, Any], namespace: str | None) -> str | None:
        name = schema.get("name")
        if not isinstance(name, str):
            return namespace
        ns = schema.get("namespace", namespace)
        full = name if "." in name or not ns else f"{ns}.{name}"
        self.names[full] = schema
        self.names.setdefault(name.rsplit(".", 1)[-1], schema)
        return full.rpartition(".")[0] or None

    def node(self, schema: Any, namespace: str | None, role: str, rests: Rests = (),
             capture: tuple[str, str] | None = None) -> _Node:
        """`role`: "root" (the datum's record), "path" (follow `rests` to the maps), "plain" (read past),
        "items" (the array of rows), "row" (the row record), "leaf" (a captured value: `capture` = (sink,
        kind))."""
        self.depth += 1
        if self.depth > 200:
            raise VectorDecodeError("schema nested too deeply")
        try:
            return self._node(schema, namespace, role, rests, capture)
        finally:
            self.depth -= 1

    def _node(self, schema: Any, namespace: str | None, role: str, rests: Rests,
              capture: tuple[str, str] | None) -> _Node:
        if isinstance(schema, list):
            return _Union([self.node(s, namespace, role, rests, capture) for s in schema])
        if isinstance(schema, str):
            if schema in _PRIMITIVES:
                return self._primitive(schema, role, capture)
            ref = self.names.get(schema) or (self.names.get(f"{namespace}.{schema}") if namespace else None)
            if ref is None:
                raise VectorDecodeError(f"unknown type {schema}")
            if ref.get("_in_progress"):
                raise VectorDecodeError("recursive schema")
            return self._node(ref, namespace, role, rests, capture)
        if not isinstance(schema, dict):
            raise VectorDecodeError("not an Avro schema")
        kind = schema.get("type")
        if kind in _PRIMITIVES:
            return self._primitive(kind, role, capture)
        if kind in ("record", "error"):
            if role == "leaf":
                raise VectorDecodeError("a record where a captured value was expected")
            ns = self._define(schema, namespace)
            schema["_in_progress"] = True
            try:
                return self._record(schema, ns, role, rests)
            finally:
                schema.pop("_in_progress", None)
        if kind == "enum":
            self._define(schema, namespace)
            if role == "leaf":
                raise VectorDecodeError("an enum where a captured value was expected")
            return _Varint()
        if kind == "fixed":
            self._define(schema, namespace)
            if role == "leaf":
                raise VectorDecodeError("a fixed where a captured value was expected")
            return _Fixed(int(schema["size"]))
        if kind == "array":
            if role == "leaf":
                sink, want = capture or ("", "")
                if want != STRING_LIST:
                    raise VectorDecodeError("an array where a single value was expected")
                return _Array(self.node(schema["items"], namespace, "leaf", (), (sink, STRING)))
            if role == "items":
                return _Array(self.node(schema["items"], namespace, "row"), rows=True)
            return _Array(self.node(schema["items"], namespace, "plain"))
        if kind == "map":
            if role == "leaf":
                raise VectorDecodeError("a map where a captured value was expected")
            done = [tag for tag, rest in rests if not rest] if role == "path" else []
            if done and done[0] in self.map_values:
                return _Map(self.node(schema["values"], namespace, "leaf", (), self.map_values[done[0]]), tag=done[0])
            if done:
                return _Map(self.node(schema["values"], namespace, "items"), tag=done[0])
            return _Map(self.node(schema["values"], namespace, "plain"))
        if isinstance(kind, (dict, list)) or (isinstance(kind, str) and kind not in _PRIMITIVES):
            return self._node(kind, namespace, role, rests, capture)  # {"type": {...}} or a named reference
        raise VectorDecodeError(f"unknown type {kind!r}")

    def _primitive(self, kind: str, role: str, capture: tuple[str, str] | None) -> _Node:
        if role == "leaf" and kind != "null":
            sink, want = capture or ("", "")
            if want == LONG and kind in ("int", "long"):
                return _Varint(sink)
            if want == STRING and kind == "string":
                return _Bytes(sink)
            if want == BOOLEAN and kind == "boolean":
                return _Boolean(sink)
            raise VectorDecodeError(f"a {kind} where a {want} was expected")
        if kind == "null":
            return _Null()
        if kind == "boolean":
            return _Fixed(1)
        if kind in ("int", "long"):
            return _Varint()
        if kind == "float":
            return _Fixed(4)
        if kind == "double":
            return _Fixed(8)
        return _Bytes()

    def _record(self, schema: dict[str, Any], ns: str | None, role: str, rests: Rests) -> _Node:
        nodes = []
        for f in schema.get("fields") or []:
            name, ftype = f.get("name"), f.get("type")
            below = tuple((tag, rest[1:]) for tag, rest in rests if rest and rest[0] == name) \
                if role in ("root", "path") else ()
            leaf = next((self.leaves[tag] for tag, rest in below if not rest and tag in self.leaves), None)
            if leaf is not None:
                nodes.append(self.node(ftype, ns, "leaf", (), leaf))
            elif below:
                nodes.append(self.node(ftype, ns, "path", below))
            elif role == "root" and name in self.top:
                nodes.append(self.node(ftype, ns, "leaf", (), self.top[name]))
            elif role == "row" and name in self.fields:
                nodes.append(self.node(ftype, ns, "leaf", (), self.fields[name]))
            else:
                nodes.append(self.node(ftype, ns, "plain"))
        return _Record(nodes)


def compile_schema(schema: str | dict[str, Any], paths: tuple[tuple[str, ...], ...],
                   fields: dict[str, tuple[str, str]], top: dict[str, tuple[str, str]] | None = None,
                   map_values: dict[int, tuple[str, str]] | None = None,
                   leaves: dict[tuple[str, ...], tuple[str, str]] | None = None) -> _Node:
    """The node tree reading `schema` (JSON text or parsed; its root a record) and keeping the maps at
    `paths` (field names from the root record; path `t` tags its entries `t`), the `fields` (Avro name ->
    (sink, kind)) of their array items' records, and the `top` fields of the root record.

    `map_values` (path tag -> (sink, kind)): the map at that path holds values to keep (a string per entry,
    ids are entry numbers) rather than arrays of rows. `leaves` (field path -> (sink, kind)): fields below
    the root, reached through records and unions only, kept per datum (a datum whose union on the way is
    null has no value)."""
    try:
        parsed = json.loads(schema) if isinstance(schema, str) else json.loads(json.dumps(schema))
    except (ValueError, TypeError) as exc:
        raise VectorDecodeError(f"schema is not JSON: {exc}") from exc
    leaves = leaves or {}
    if any(not p for p in paths) or any(not p for p in leaves):
        raise VectorDecodeError("an empty path")
    rests = tuple(enumerate(paths)) + tuple((len(paths) + k, p) for k, p in enumerate(leaves))
    leaf_tags = {len(paths) + k: capture for k, capture in enumerate(leaves.values())}
    return _Compiler(fields, top or {}, dict(map_values or {}), leaf_tags).node(parsed, None, "root", rests)


def decode(root: _Node, buf: np.ndarray, starts: np.ndarray, ends: np.ndarray,
           sinks: dict[str, str], n_paths: int = 1) -> Captured:
    """Read one datum at each of `starts` (each must end exactly at its `ends`) from `buf` (uint8). `sinks`
    names every sink the tree writes (name -> kind); `n_paths`: how many paths the tree was compiled for."""
    limit = int(buf.size)
    st = _State(buf, limit, sinks)
    n = starts.size
    ids = np.arange(n, dtype=np.int64)
    try:
        end = root.read(st, starts.astype(np.int64), ids)
    except IndexError as exc:  # a position past the padding
        raise VectorDecodeError("a datum runs past the end of the data") from exc
    if not np.array_equal(end, ends):
        raise VectorDecodeError("a datum does not end where its data ends")
    reached = np.zeros((n_paths, n), dtype=bool)
    for tag, r in st.reached:
        reached[tag, r] = True

    def cat(parts: list[np.ndarray]) -> np.ndarray:
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

    columns = {}
    for name, parts in st.sinks.items():
        width = 2 if sinks[name] in (LONG, BOOLEAN) else 3
        columns[name] = tuple(cat([p[i] for p in parts]) for i in range(width))
    return Captured(reached, cat(st.entries_datum), cat(st.entries_tag),
                    (cat(st.entries_key_start), cat(st.entries_key_len)), cat(st.rows_entry), columns)


# -- strings and record framing over a whole buffer (shared by the archive listing, write stats and schemas) --

_ARANGE12 = np.arange(12, dtype=np.int64)
#: Row k keeps the first k of 12 bytes (the zero padding of an inline view of length k).
_KEEP_FIRST = (_ARANGE12[None, :] < np.arange(13)[:, None]).astype(np.uint8)


def _windows(buf: np.ndarray, starts: np.ndarray, width: int) -> np.ndarray:
    """The `width` bytes of `buf` from each start, as rows (bytes past the end read as the last byte). Rows are
    copied out of a strided window view: no index of `width` positions per row (a third of the time)."""
    rows = np.empty((starts.size, width), dtype=np.uint8)
    limit = buf.size - width
    inside = (starts >= 0) & (starts <= limit)
    if limit >= 0 and inside.all():
        whole: np.ndarray = np.lib.stride_tricks.sliding_window_view(buf, width)[starts]
        return whole
    if limit >= 0:
        rows[inside] = np.lib.stride_tricks.sliding_window_view(buf, width)[starts[inside]]
    outside = ~inside
    rows[outside] = buf[np.minimum(starts[outside, None] + _ARANGE12[:width], buf.size - 1)]
    return rows


def gather_strings(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, valid: np.ndarray | None) -> pa.Array:
    """A string array of the byte ranges (start, length) of `buf`, null where `valid` is false.

    Built as Arrow binary views over `buf` (16 bytes per value, no per-byte index), then cast to strings
    (the cast copies the bytes and checks they are UTF-8)."""
    n = starts.size
    mask = None if valid is None or valid.all() else pa.array(valid).buffers()[1]
    if buf.size >= 2**31:  # views address their buffer with 32-bit offsets
        return gather_strings_by_index(buf, starts, lengths, mask)
    views = np.zeros((n, 16), dtype=np.uint8)
    views[:, 0:4] = lengths.astype("<i4").view(np.uint8).reshape(n, 4)
    short = lengths <= 12
    if buf.size:
        inline = _windows(buf, starts[short], 12)
        inline *= _KEEP_FIRST[np.clip(lengths[short], 0, 12)]  # bytes past a value's end are zero
        views[short, 4:16] = inline
        long_start = starts[~short]
        views[~short, 4:8] = _windows(buf, long_start, 4)
        views[~short, 12:16] = long_start.astype("<i4").view(np.uint8).reshape(-1, 4)
    arr = pa.Array.from_buffers(pa.binary_view(), n, [mask, pa.py_buffer(views), pa.py_buffer(buf)],
                                null_count=-1 if mask is not None else 0)
    try:
        return arr.cast(pa.string())
    except pa.ArrowInvalid as exc:
        raise VectorDecodeError(f"a string is not UTF-8: {exc}") from exc


def strings_of_ids(buf: np.ndarray, n: int, ids: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> pa.Array:
    """A string array of `n` rows: row `ids[i]` is `buf[starts[i]:+lengths[i]]`, other rows null."""
    full_start = np.zeros(n, dtype=np.int64)
    full_len = np.zeros(n, dtype=np.int64)
    valid = np.zeros(n, dtype=bool)
    full_start[ids], full_len[ids], valid[ids] = starts, lengths, True
    return gather_strings(buf, full_start, full_len, valid)


def longs_of_ids(n: int, ids: np.ndarray, values: np.ndarray) -> pa.Array:
    """An int64 array of `n` rows: row `ids[i]` is `values[i]`, other rows null."""
    full = np.zeros(n, dtype=np.int64)
    valid = np.zeros(n, dtype=bool)
    full[ids], valid[ids] = values, True
    return pa.array(full, pa.int64(), mask=~valid)


def string_lists_of_ids(buf: np.ndarray, n: int, ids: np.ndarray, starts: np.ndarray, lengths: np.ndarray
                        ) -> pa.Array:
    """A list<string> array of `n` rows (empty lists for rows without items), items in the order read."""
    order = np.argsort(ids, kind="stable")
    counts = np.bincount(ids, minlength=n) if ids.size else np.zeros(n, dtype=np.int64)
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    values = gather_strings(buf, starts[order], lengths[order], None)
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), values)


def gather_strings_by_index(buf: np.ndarray, starts: np.ndarray, lengths: np.ndarray, mask: Any) -> pa.Array:
    n = starts.size
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    total = int(offsets[-1])
    index = np.repeat(starts - offsets[:-1], lengths) + np.arange(total, dtype=np.int64)
    data = buf[index]
    arr = pa.Array.from_buffers(pa.large_binary(), n, [mask, pa.py_buffer(offsets), pa.py_buffer(data)],
                                null_count=-1 if mask is not None else 0)
    try:
        return arr.cast(pa.large_string()).cast(pa.string())
    except pa.ArrowInvalid as exc:
        raise VectorDecodeError(f"a string is not UTF-8: {exc}") from exc


def _int32_be(buf: np.ndarray, pos: np.ndarray) -> np.ndarray:
    """Big-endian int32 at every position (positions past the end read as garbage the callers refuse)."""
    last = buf.size - 1
    b = [buf[np.minimum(pos + k, last)].astype(np.int64) for k in range(4)]
    v = (b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]
    signed: np.ndarray = v - ((v >> 31) << 32)
    return signed


def datum_ranges_many(buf: np.ndarray, starts: Sequence[int], lengths: Sequence[int]
                      ) -> list[tuple[np.ndarray, np.ndarray] | None]:
    """For each Avro data block content (`starts[i]`, `lengths[i]` in `buf`; a start of -1 is skipped), the
    (starts, ends) of its records (framing version 1+: version, count, then length-prefixed records), or None
    where the framing does not add up. All blocks are read together, one numpy step per record index."""
    n = len(starts)
    out: list[tuple[np.ndarray, np.ndarray] | None] = [None] * n
    if not n:
        return out
    start = np.asarray(starts, dtype=np.int64)
    end = start + np.asarray(lengths, dtype=np.int64)
    ok = (start >= 0) & (end - start >= 8) & (end <= buf.size)
    count = np.where(ok, _int32_be(buf, np.where(ok, start + 4, 0)), 0)
    pos = start + 8
    ok &= (count >= 0) & (count * 4 <= end - pos)
    count = np.where(ok, count, 0)
    rec_starts = np.zeros((int(count.max()) if n else 0, n), dtype=np.int64)
    rec_ends = np.zeros_like(rec_starts)
    for k in range(rec_starts.shape[0]):
        live = np.flatnonzero(ok & (count > k))
        if not live.size:
            break
        p = pos[live]
        fits = p + 4 <= end[live]
        size = _int32_be(buf, np.where(fits, p, 0))
        good = fits & (size >= 0) & (p + 4 + size <= end[live])
        ok[live[~good]] = False
        rec_starts[k, live] = p + 4
        rec_ends[k, live] = p + 4 + np.maximum(size, 0)
        pos[live] = np.where(good, p + 4 + size, p)
    ok &= pos == end
    for i in np.flatnonzero(ok):
        c = int(count[i])
        out[int(i)] = (rec_starts[:c, i].copy(), rec_ends[:c, i].copy())
    return out


__all__ = [
    "LONG",
    "STRING",
    "STRING_LIST",
    "Captured",
    "VectorDecodeError",
    "compile_schema",
    "datum_ranges_many",
    "decode",
    "gather_strings",
    "read_varints",
]
