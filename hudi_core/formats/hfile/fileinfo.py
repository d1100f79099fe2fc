"""The file info block (`FILEINF2`): a key → bytes map, and the order Hudi writes it in.

Payload: ``PBUF`` magic, then a protobuf `InfoProto { repeated BytesBytesPair map_entry = 1; }`
preceded by its varint length (`writeDelimitedTo`); `BytesBytesPair { bytes first = 1; bytes
second = 2; }`. Keys are UTF-8 names.

Well-known keys (HBase `HFileInfo`, Hudi `HFileInfo` and `HoodieAvroHFileWriter`):

* ``hfile.LASTKEY``: the last key of the file; HBase stores the full KeyValue key, Hudi 1.1's native
  writer the row-only short key (2-byte length + row), and an empty value for an empty file;
* ``hfile.AVG_KEY_LEN`` / ``hfile.AVG_VALUE_LEN`` (i32), ``hfile.CREATE_TIME_TS`` (i64 ms),
  ``KEY_VALUE_VERSION`` (i32, 1: every cell ends with an MVCC vlong), ``MAX_MEMSTORE_TS_KEY`` (i64);
  ``hfile.MAX_TAGS_LEN`` (i32) when cells carry tags (never for Hudi);
* Hudi's own: ``schema`` (the Avro schema of the values), ``minRecordKey`` / ``maxRecordKey``,
  ``bloomFilterTypeCode`` (the bloom filter itself is the ``bloomFilter`` meta block).

Order: Hudi's native writer keeps the map in a `java.util.HashMap<String, byte[]>` and writes it in
that map's iteration order, which :func:`hudi_core.io.java.string_hashmap_order` reproduces. HBase
writes a `TreeMap` (sorted by key bytes).
"""

from __future__ import annotations

from collections.abc import Iterable

from hudi_core.formats.hfile.encoding import parse_proto, proto_bytes, read_uvarint, write_uvarint
from hudi_core.formats.hfile.errors import HFileFormatError

PBUF_MAGIC = b"PBUF"

LAST_KEY = "hfile.LASTKEY"
AVG_KEY_LEN = "hfile.AVG_KEY_LEN"
AVG_VALUE_LEN = "hfile.AVG_VALUE_LEN"
CREATE_TIME_TS = "hfile.CREATE_TIME_TS"
MAX_TAGS_LEN = "hfile.MAX_TAGS_LEN"
KEY_VALUE_VERSION = "KEY_VALUE_VERSION"
MAX_MEMSTORE_TS_KEY = "MAX_MEMSTORE_TS_KEY"
KEY_VALUE_VERSION_WITH_MVCC_TS = 1


def parse_file_info(payload: bytes, name: str | None = None, offset: int | None = None) -> list[tuple[bytes, bytes]]:
    """The (key, value) pairs of a file info payload, in file order, keys as raw bytes."""
    base = offset or 0
    what = "file info"
    if not payload.startswith(PBUF_MAGIC):
        raise HFileFormatError(f"file info does not start with {PBUF_MAGIC!r}", name, base)
    length, start = read_uvarint(payload, len(PBUF_MAGIC), len(payload), what, name or "<hfile>", base)
    end = start + length
    if end > len(payload):
        raise HFileFormatError(f"file info message of {length} bytes runs past its block", name, base + start)
    pairs: list[tuple[bytes, bytes]] = []
    for entry in parse_proto(payload, start, end, what, name or "<hfile>", base):
        if entry.number != 1:
            continue
        if not isinstance(entry.value, bytes):
            raise HFileFormatError("file info map entry is not a message", name, base)
        key = value = b""
        for part in parse_proto(entry.value, 0, len(entry.value), "file info entry", name or "<hfile>", base):
            if isinstance(part.value, bytes) and part.number == 1:
                key = part.value
            elif isinstance(part.value, bytes) and part.number == 2:
                value = part.value
        pairs.append((key, value))
    return pairs


def encode_file_info(pairs: Iterable[tuple[str, bytes]]) -> bytes:
    """A file info payload holding `pairs` in the given order."""
    message = b"".join(
        proto_bytes(1, proto_bytes(1, key.encode("utf-8")) + proto_bytes(2, value)) for key, value in pairs)
    return PBUF_MAGIC + write_uvarint(len(message)) + message


