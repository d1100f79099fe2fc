"""Block indexes: root (load-on-open), intermediate and leaf (multi-level data index), and meta.

Root index payload (HBase `BlockIndexReader.readRootIndex`, Hudi `HFileRootIndexBlock`), one entry
per child, as many as the trailer says (`data_index_count` / `meta_index_count`):

    i64 offset | i32 on-disk size with header | vlong key length | key

Anything after the last counted entry is ignored (HBase appends "mid-key" metadata to a multi-level
root). Non-root index payload (intermediate `IDXINTE2` and leaf `IDXLEAF2` blocks, HBase
`BlockIndexChunk.writeNonRoot`, Hudi `HFileLeafIndexBlock`):

    i32 entry count n | (n + 1) × i32 entry offsets relative to the entries | entries
    entry = i64 offset | i32 on-disk size | key (its length is the gap to the next entry offset)

A data index key is a key starting with its 2-byte row length: a full KeyValue key (HBase) or the
row-only short key (Hudi 1.1's native writer); only the row is kept (:attr:`IndexEntry.key`). HBase
writes, for every block but the first, a *fake first key*: the shortest key that sorts after the
previous block's last key and no later than the block's real first key (`getMidpoint`). A lookup
that falls between it and the real first key finds the block but no cell (Hudi:
`SEEK_TO_BEFORE_BLOCK_FIRST_KEY`). A meta index key is the meta block's name, raw.

The index is searched as Hudi's reader searches its `TreeMap`: the entry with the greatest key <=
the lookup key (`floorEntry`); keys compare as unsigned bytes.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from hudi_core.formats.hfile.cell import row_of
from hudi_core.formats.hfile.encoding import INT32, INT64, read_vlong, write_vlong
from hudi_core.formats.hfile.errors import HFileFormatError

_ENTRY_FIXED = 12  # offset (8) + size (4)


@dataclass(frozen=True)
class IndexEntry:
    """One index entry: the key (a data index's row, or a meta block name), the child block's
    offset and its on-disk size with header."""

    key: bytes
    offset: int
    size: int


def parse_root_index(payload: bytes, count: int, *, rows: bool, name: str | None = None,
                     offset: int | None = None) -> list[IndexEntry]:
    """The first `count` entries of a root index payload. `rows`: keys are data keys (keep the row);
    else meta block names (kept raw)."""
    entries: list[IndexEntry] = []
    pos = 0
    end = len(payload)
    base = offset or 0
    # Each entry takes at least 13 bytes: refuse a count its block cannot hold before looping.
    if count * (_ENTRY_FIXED + 1) > end:
        raise HFileFormatError(f"{count} root index entries cannot fit the {end}-byte index block", name, base)
    for i in range(count):
        if pos + _ENTRY_FIXED >= end:
            raise HFileFormatError(f"root index entry {i} of {count} runs past the index block", name, base + pos)
        child = INT64.unpack_from(payload, pos)[0]
        size = INT32.unpack_from(payload, pos + 8)[0]
        key_len, pos = read_vlong(payload, pos + _ENTRY_FIXED, end, "root index key length", name or "<hfile>", base)
        if key_len < 0 or pos + key_len > end:
            raise HFileFormatError(f"root index key {i} of {key_len} bytes runs past the index block",
                                   name, base + pos)
        key = payload[pos : pos + key_len]
        entries.append(IndexEntry(row_of(key, name, base + pos) if rows else bytes(key), child, size))
        pos += key_len
    return entries


def parse_nonroot_index(payload: bytes, *, name: str | None = None, offset: int | None = None) -> list[IndexEntry]:
    """Every entry of an intermediate or leaf index payload (keys are data keys: rows are kept)."""
    base = offset or 0
    end = len(payload)
    if end < 4:
        raise HFileFormatError("non-root index block too short for its entry count", name, base)
    count = INT32.unpack_from(payload, 0)[0]
    # The entry-offset table alone takes 4 (n + 1) bytes: refuse counts the block cannot hold.
    if count < 0 or 4 + 4 * (count + 1) > end:
        raise HFileFormatError(f"non-root index entry count {count} does not fit its {end}-byte block", name, base)
    table = 4
    entries_start = table + 4 * (count + 1)
    rel = [INT32.unpack_from(payload, table + 4 * i)[0] for i in range(count + 1)]
    entries: list[IndexEntry] = []
    for i in range(count):
        start = entries_start + rel[i]
        stop = entries_start + rel[i + 1]
        if not (entries_start <= start and start + _ENTRY_FIXED <= stop <= end):
            raise HFileFormatError(f"non-root index entry {i} [{start}, {stop}) is outside the block", name,
                                   base + table + 4 * i)
        child = INT64.unpack_from(payload, start)[0]
        size = INT32.unpack_from(payload, start + 8)[0]
        entries.append(IndexEntry(row_of(payload[start + _ENTRY_FIXED : stop], name, base + start), child, size))
    return entries


def encode_root_index(entries: list[tuple[bytes, int, int]]) -> bytes:
    """A root index payload from (key as stored, offset, on-disk size) triples."""
    return b"".join(INT64.pack(off) + INT32.pack(size) + write_vlong(len(key)) + key for key, off, size in entries)


def encode_nonroot_index(entries: list[tuple[bytes, int, int]]) -> bytes:
    """An intermediate/leaf index payload from (key as stored, offset, on-disk size) triples."""
    parts = [INT64.pack(off) + INT32.pack(size) + key for key, off, size in entries]
    offsets = [0]
    for part in parts:
        offsets.append(offsets[-1] + len(part))
    return INT32.pack(len(parts)) + b"".join(INT32.pack(o) for o in offsets) + b"".join(parts)


def floor_position(keys: list[bytes], key: bytes) -> int:
    """Index of the entry with the greatest key <= `key` (-1: before the first). With equal keys
    the last one wins, as a `TreeMap` keeps the last entry put under a key."""
    return bisect_right(keys, key) - 1
