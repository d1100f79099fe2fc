"""Decoding block content on demand (spec `03` §1.6-1.7).

* AVRO / CDC data blocks: `i32 version, i32 count, (i32 len, Avro datum)*`, decoded with fastavro
  using the header `SCHEMA` as writer schema (legacy V0 framing: zlib-compressed schema first).
* DELETE blocks, content version 3: an Avro `HoodieDeleteRecordList` datum, decoded here by hand
  so the `orderingVal` union follows Java's wrapper order (§1.7) exactly and stays re-encodable
  byte for byte. Versions 1 and 2 (Kryo) are opaque.
* PARQUET blocks: a whole parquet file, read with pyarrow (footer only for counts).
* HFILE blocks: opaque here; only the entry count is taken from the v3 fixed trailer
  (:mod:`hudi_core.formats.hfile.trailer`; :mod:`hudi_core.formats.hfile` reads the cells).

Counting (:func:`record_count`) reads only what it needs: 8 bytes for Avro, the parquet footer,
the 4 KiB HFile trailer; a delete payload is decoded whole (it is just keys).
"""

from __future__ import annotations

import decimal
import io
import json
import struct
import zlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import fastavro

from hudi_core.formats.avro.binary import AvroBinaryError, read_long, write_bytes, write_long
from hudi_core.formats.hfile import trailer as hfile_trailer
from hudi_core.formats.hfile.errors import HFileError, HFileUnsupportedError
from hudi_core.formats.logfile.errors import LogContentError, UnsupportedContentError
from hudi_core.formats.logfile.format import BlockType, pack_i32, unpack_i32
from hudi_core.formats.logfile.reader import LogBlock, LogFileReader
from hudi_core.lazy import LazyModule

# Only parquet blocks need Arrow: reading a metadata table's HFile and delete blocks does not pay its import.
pa: Any = LazyModule("pyarrow")
pq: Any = LazyModule("pyarrow.parquet")

HFILE_V3_TRAILER_SIZE = hfile_trailer.TRAILER_SIZE
DECIMAL_SCALE = 15  # DecimalWrapper: decimal(30, 15)

# `orderingVal` union branches of HoodieDeleteRecordList.avsc, in Java's order (§1.7).
ORDERING_KINDS = (
    "null",  # 0
    "boolean",  # 1 BooleanWrapper
    "int",  # 2 IntWrapper
    "long",  # 3 LongWrapper
    "float",  # 4 FloatWrapper
    "double",  # 5 DoubleWrapper
    "bytes",  # 6 BytesWrapper
    "string",  # 7 StringWrapper
    "date",  # 8 DateWrapper (int days)
    "decimal",  # 9 DecimalWrapper (bytes, decimal(30,15))
    "time_micros",  # 10 TimeMicrosWrapper (long)
    "timestamp_micros",  # 11 TimestampMicrosWrapper (long)
    "array",  # 12 ArrayWrapper (definition not verified: unsupported)
)


@dataclass(frozen=True)
class OrderingValue:
    """A delete record's ordering value: the union branch name and the wrapped value."""

    kind: str
    value: Any = None


@dataclass(frozen=True)
class DeleteRecord:
    """One entry of a version-3 delete block (`HoodieDeleteRecord`)."""

    record_key: str | None
    partition_path: str | None
    ordering: OrderingValue = OrderingValue("int", 0)


# -- Avro binary primitives (for the hand-written delete codec) -------------------------------
class _AvroIn:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def long(self) -> int:
        try:
            value, self.pos = read_long(self.data, self.pos)
        except AvroBinaryError as exc:
            raise LogContentError(str(exc)) from None
        return value

    def raw(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise LogContentError(f"Avro value of {n} bytes runs past the payload")
        out = self.data[self.pos : self.pos + n]
        self.pos += n
        return out

    def bytes_(self) -> bytes:
        return self.raw(self.long())

    def string(self) -> str:
        try:
            return self.bytes_().decode("utf-8")
        except UnicodeDecodeError as exc:
            raise LogContentError(f"Avro string is not UTF-8: {exc}") from exc


def _decimal_to_bytes(value: decimal.Decimal) -> bytes:
    unscaled = int(value.scaleb(DECIMAL_SCALE).to_integral_exact())
    length = max(1, (unscaled + (unscaled < 0)).bit_length() // 8 + 1)
    return unscaled.to_bytes(length, "big", signed=True)


def _read_ordering(inp: _AvroIn) -> OrderingValue:
    branch = inp.long()
    if branch < 0 or branch >= len(ORDERING_KINDS):
        raise LogContentError(f"orderingVal union index {branch} out of range")
    kind = ORDERING_KINDS[branch]
    if kind == "null":
        return OrderingValue(kind)
    if kind == "boolean":
        return OrderingValue(kind, inp.raw(1) != b"\x00")
    if kind in ("int", "long", "date", "time_micros", "timestamp_micros"):
        return OrderingValue(kind, inp.long())
    if kind == "float":
        return OrderingValue(kind, struct.unpack("<f", inp.raw(4))[0])
    if kind == "double":
        return OrderingValue(kind, struct.unpack("<d", inp.raw(8))[0])
    if kind == "bytes":
        return OrderingValue(kind, inp.bytes_())
    if kind == "string":
        return OrderingValue(kind, inp.string())
    if kind == "decimal":
        unscaled = int.from_bytes(inp.bytes_(), "big", signed=True)
        return OrderingValue(kind, decimal.Decimal(unscaled).scaleb(-DECIMAL_SCALE))
    raise UnsupportedContentError("ArrayWrapper ordering values are not supported")


def _write_ordering(value: OrderingValue) -> bytes:
    try:
        branch = ORDERING_KINDS.index(value.kind)
    except ValueError as exc:
        raise LogContentError(f"unknown ordering kind {value.kind!r}") from exc
    head = write_long(branch)
    kind, v = value.kind, value.value
    if kind == "null":
        return head
    if kind == "boolean":
        return head + (b"\x01" if v else b"\x00")
    if kind in ("int", "long", "date", "time_micros", "timestamp_micros"):
        return head + write_long(int(v))
    if kind == "float":
        return head + struct.pack("<f", v)
    if kind == "double":
        return head + struct.pack("<d", v)
    if kind == "bytes":
        return head + write_bytes(bytes(v))
    if kind == "string":
        return head + write_bytes(str(v).encode("utf-8"))
    if kind == "decimal":
        return head + write_bytes(_decimal_to_bytes(decimal.Decimal(v)))
    raise UnsupportedContentError("ArrayWrapper ordering values are not supported")


def _read_optional_string(inp: _AvroIn) -> str | None:
    branch = inp.long()
    if branch == 0:
        return None
    if branch == 1:
        return inp.string()
    raise LogContentError(f"[null,string] union index {branch} out of range")


def decode_delete_payload(payload: bytes) -> list[DeleteRecord]:
    """Decode a `HoodieDeleteRecordList` Avro datum (the payload of a version-3 delete block)."""
    inp = _AvroIn(payload)
    records: list[DeleteRecord] = []
    while True:
        count = inp.long()
        if count == 0:
            break
        if count < 0:
            count = -count
            inp.long()  # block byte size
        for _ in range(count):
            key = _read_optional_string(inp)
            partition = _read_optional_string(inp)
            records.append(DeleteRecord(key, partition, _read_ordering(inp)))
    if inp.pos != len(payload):
        raise LogContentError(f"{len(payload) - inp.pos} trailing bytes after the delete record list")
    return records


def encode_delete_payload(records: list[DeleteRecord]) -> bytes:
    """Encode delete records as Java's `GenericDatumWriter` does (one array block, then 0)."""
    out = bytearray()
    if records:
        out += write_long(len(records))
        for rec in records:
            for text in (rec.record_key, rec.partition_path):
                out += b"\x00" if text is None else b"\x02" + write_bytes(text.encode("utf-8"))
            out += _write_ordering(rec.ordering)
    out += b"\x00"
    return bytes(out)


def split_delete_content(content: bytes) -> tuple[int, bytes]:
    """`i32 contentVersion, i32 payloadLen, payload` → (version, payload)."""
    if len(content) < 8:
        raise LogContentError(f"delete block content of {len(content)} bytes is too short")
    version = unpack_i32(content, 0)
    length = unpack_i32(content, 4)
    if length < 0 or 8 + length != len(content):
        raise LogContentError(f"delete payload length {length} does not match content of {len(content)}")
    return version, content[8:]


def decode_delete_content(content: bytes) -> list[DeleteRecord]:
    """Delete records of a DELETE block's content; Kryo versions 1/2 are unsupported."""
    version, payload = split_delete_content(content)
    if version != 3:
        raise UnsupportedContentError(f"delete block content version {version} is Kryo-serialized")
    return decode_delete_payload(payload)


def encode_delete_content(records: list[DeleteRecord]) -> bytes:
    """Content of a version-3 DELETE block."""
    payload = encode_delete_payload(records)
    return pack_i32(3) + pack_i32(len(payload)) + payload


# -- Avro data blocks -------------------------------------------------------------------------
@lru_cache(maxsize=64)
def parsed_schema(schema_json: str) -> Any:
    """fastavro's parsed form of a writer schema (cached: blocks of a table share schemas)."""
    try:
        return fastavro.parse_schema(json.loads(schema_json))
    except (ValueError, TypeError, KeyError, fastavro.schema.SchemaParseException) as exc:
        raise LogContentError(f"header SCHEMA is not a usable Avro schema: {exc}") from exc


def split_avro_content(content: bytes, legacy: bool = False) -> tuple[int | None, str | None, list[bytes]]:
    """(content version, embedded schema for legacy V0 blocks, raw record datums)."""
    pos = 0
    version: int | None = None
    schema: str | None = None

    def i32() -> int:
        nonlocal pos
        if pos + 4 > len(content):
            raise LogContentError("Avro block content cut short")
        value = unpack_i32(content, pos)
        pos += 4
        return value

    if legacy:
        schema_len = i32()
        if schema_len < 0 or pos + schema_len > len(content):
            raise LogContentError("legacy Avro block schema runs past the content")
        try:
            schema = zlib.decompress(content[pos : pos + schema_len]).decode("utf-8")
        except (zlib.error, UnicodeDecodeError) as exc:
            raise LogContentError(f"legacy Avro block schema does not inflate: {exc}") from exc
        pos += schema_len
    else:
        version = i32()
    count = i32()
    if count < 0:
        raise LogContentError(f"negative record count {count}")
    datums = []
    for _ in range(count):
        length = i32()
        if length < 0 or pos + length > len(content):
            raise LogContentError("Avro record runs past the block content")
        datums.append(content[pos : pos + length])
        pos += length
    if pos != len(content):
        raise LogContentError(f"{len(content) - pos} trailing bytes after {count} Avro records")
    return version, schema, datums


def decode_avro_content(content: bytes, schema_json: str, legacy: bool = False) -> list[dict[str, Any]]:
    """Records of an AVRO/CDC data block; `schema_json` is the header SCHEMA."""
    _, embedded, datums = split_avro_content(content, legacy)
    schema = parsed_schema(embedded or schema_json)
    records: list[dict[str, Any]] = []
    for datum in datums:
        buf = io.BytesIO(datum)
        try:
            record = fastavro.schemaless_reader(buf, schema, None)
        except Exception as exc:  # fastavro raises many types on bad bytes
            raise LogContentError(f"Avro record does not decode: {exc!r}") from exc
        if buf.tell() != len(datum):
            raise LogContentError("Avro record has trailing bytes")
        if not isinstance(record, dict):
            raise LogContentError("Avro datum is not a record")
        records.append(record)
    return records


def encode_avro_content(records: list[dict[str, Any]], schema_json: str, version: int = 3) -> bytes:
    """Content of an AVRO data block (Java `HoodieAvroDataBlock.serializeRecords`)."""
    schema = parsed_schema(schema_json)
    parts = [pack_i32(version), pack_i32(len(records))]
    for record in records:
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, schema, record)
        datum = buf.getvalue()
        parts.append(pack_i32(len(datum)))
        parts.append(datum)
    return b"".join(parts)


# -- parquet and HFile ------------------------------------------------------------------------
class _ContentFile(io.RawIOBase):
    """A read-only seekable file over one block's content, through the reader's ranged reads."""

    def __init__(self, reader: LogFileReader, block: LogBlock) -> None:
        self.reader = reader
        self.block = block
        self.pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.pos, io.SEEK_END: self.block.content_length}[whence]
        self.pos = max(0, base + offset)
        return self.pos

    def readinto(self, buffer: Any) -> int:
        data = self.reader.content_range(self.block, self.pos, len(buffer))
        buffer[: len(data)] = data
        self.pos += len(data)
        return len(data)


def parquet_table(content: bytes) -> pa.Table:
    """The records of a PARQUET data block."""
    try:
        return pq.read_table(io.BytesIO(content))
    except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
        raise LogContentError(f"parquet block does not decode: {exc}") from exc


def parquet_num_rows(reader: LogFileReader, block: LogBlock) -> int:
    """Row count from the parquet footer, reading only the footer through ranged reads."""
    try:
        rows: int = pq.read_metadata(_ContentFile(reader, block)).num_rows
        return rows
    except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:  # a damaged footer may hold non-UTF-8 names
        raise LogContentError(f"parquet block footer does not decode: {exc}") from exc


def hfile_entry_count(trailer: bytes) -> int:
    """`entry_count` of an HFile v3 from its last bytes (at least the 4096-byte fixed trailer); the
    trailer rules live in :mod:`hudi_core.formats.hfile.trailer`, its errors become this package's."""
    try:
        return hfile_trailer.entry_count(trailer)
    except HFileUnsupportedError as exc:
        raise UnsupportedContentError(f"HFile: {exc.reason}") from exc
    except HFileError as exc:
        raise LogContentError(f"HFile: {exc.reason}") from exc


# -- one entry point per question -------------------------------------------------------------
def record_count(reader: LogFileReader, block: LogBlock) -> int | None:
    """Records in a block, reading as little content as possible; None where not countable
    (command and corrupt blocks, Kryo deletes, Lance)."""
    kind = block.block_type
    if block.corrupt or kind is None:
        return None
    if kind in (BlockType.AVRO_DATA_BLOCK, BlockType.CDC_DATA_BLOCK):
        if block.format_version == 0:
            head = reader.content_range(block, 0, 4)
            if len(head) < 4:
                raise LogContentError("legacy Avro block too short")
            skip = 4 + unpack_i32(head)
            raw = reader.content_range(block, skip, 4)
            if len(raw) < 4:
                raise LogContentError("legacy Avro block too short")
            return unpack_i32(raw)
        head = reader.content_range(block, 0, 8)
        if len(head) < 8:
            raise LogContentError("Avro block content shorter than its version and count")
        return unpack_i32(head, 4)
    if kind is BlockType.DELETE_BLOCK:
        version, payload = split_delete_content(reader.content(block))
        if version != 3:
            return None
        return len(decode_delete_payload(payload))
    if kind is BlockType.PARQUET_DATA_BLOCK:
        return parquet_num_rows(reader, block)
    if kind is BlockType.HFILE_DATA_BLOCK:
        start = block.content_length - HFILE_V3_TRAILER_SIZE
        return hfile_entry_count(reader.content_range(block, start, HFILE_V3_TRAILER_SIZE))
    return None


def content_version(reader: LogFileReader, block: LogBlock) -> int | None:
    """The `i32` content version that AVRO, CDC and DELETE block contents start with (Avro 2/3 are
    the same layout; DELETE 1/2 are Kryo, 3 is Avro); None for other types and legacy V0 blocks."""
    if block.corrupt or block.format_version == 0 or block.block_type not in (
            BlockType.AVRO_DATA_BLOCK, BlockType.CDC_DATA_BLOCK, BlockType.DELETE_BLOCK):
        return None
    head = reader.content_range(block, 0, 4)
    if len(head) < 4:
        raise LogContentError("block content shorter than its version", block.path, block.offset)
    return unpack_i32(head)


def decode_records(reader: LogFileReader, block: LogBlock) -> list[Any] | pa.Table:
    """All records of a block: dicts for Avro/CDC, :class:`DeleteRecord` for deletes, a pyarrow
    table for parquet. HFile, Lance, command and corrupt blocks raise UnsupportedContentError."""
    kind = block.block_type
    if kind in (BlockType.AVRO_DATA_BLOCK, BlockType.CDC_DATA_BLOCK) and not block.corrupt:
        legacy = block.format_version == 0
        if not legacy and block.schema is None:
            raise LogContentError("Avro block without a SCHEMA header", block.path, block.offset)
        return decode_avro_content(reader.content(block), block.schema or "", legacy)
    if kind is BlockType.DELETE_BLOCK:
        return decode_delete_content(reader.content(block))
    if kind is BlockType.PARQUET_DATA_BLOCK:
        return parquet_table(reader.content(block))
    raise UnsupportedContentError(f"{block.type_name} content is opaque here", block.path, block.offset)
