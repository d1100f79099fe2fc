"""Constants and the small binary codecs of the inline Hudi log format (spec `03` §1.2-1.5).

Everything here is shared by the reader and the writer: the `#HUDI#` magic, the block-type and
header-key ordinals, the header/footer map encoding and the `BLOCK_IDENTIFIER` value grammar.
All integers on disk are big-endian two's complement (Java `DataOutputStream`).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum

from hudi_core.formats.logfile.errors import LogFormatError

MAGIC = b"#HUDI#"
MAGIC_LEN = len(MAGIC)
CURRENT_LOG_FORMAT_VERSION = 1
INT32_MAX = 2**31 - 1

_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


class BlockType(IntEnum):
    """`HoodieLogBlock.HoodieLogBlockType`: the ordinal stored after the format version."""

    COMMAND_BLOCK = 0
    DELETE_BLOCK = 1
    CORRUPT_BLOCK = 2
    AVRO_DATA_BLOCK = 3
    HFILE_DATA_BLOCK = 4
    PARQUET_DATA_BLOCK = 5
    CDC_DATA_BLOCK = 6
    LANCE_DATA_BLOCK = 7


class HeaderKey(IntEnum):
    """`HoodieLogBlock.HeaderMetadataType`: header map keys by ordinal (§1.5)."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


class CommandType(IntEnum):
    """`HoodieCommandBlock.HoodieCommandBlockTypeEnum`; the header stores the ordinal as a string."""

    ROLLBACK_BLOCK = 0


# A header/footer key: a known header name, or the raw ordinal when the enum does not know it.
MetaKey = str | int


def key_name(ordinal: int) -> MetaKey:
    """The header key name for an ordinal, or the ordinal itself when unknown."""
    try:
        return HeaderKey(ordinal).name
    except ValueError:
        return ordinal


def key_ordinal(key: MetaKey | HeaderKey) -> int:
    """The on-disk ordinal of a header key given by name, enum member or raw number."""
    if isinstance(key, HeaderKey):
        return int(key)
    if isinstance(key, int):
        return key
    try:
        return int(HeaderKey[key])
    except KeyError as exc:
        raise LogFormatError(f"unknown header key {key!r}") from exc


def pack_i32(value: int) -> bytes:
    """Big-endian signed 32-bit integer."""
    return _I32.pack(value)


def pack_i64(value: int) -> bytes:
    """Big-endian signed 64-bit integer."""
    return _I64.pack(value)


def unpack_i32(data: bytes | memoryview, offset: int = 0) -> int:
    """Read a big-endian signed 32-bit integer."""
    value: int = _I32.unpack_from(data, offset)[0]
    return value


def unpack_i64(data: bytes | memoryview, offset: int = 0) -> int:
    """Read a big-endian signed 64-bit integer."""
    value: int = _I64.unpack_from(data, offset)[0]
    return value


def encode_value(value: str | bytes) -> bytes:
    """Header values are UTF-8; `surrogateescape` restores any byte a reader could not decode."""
    if isinstance(value, bytes):
        return value
    return value.encode("utf-8", "surrogateescape")


def decode_value(raw: bytes) -> str:
    """Decode a header value; undecodable bytes survive as surrogates (re-encodable exactly)."""
    return raw.decode("utf-8", "surrogateescape")


def encode_metadata(entries: Iterable[tuple[MetaKey | HeaderKey, str | bytes]]) -> bytes:
    """`HoodieLogBlock.getLogMetadataBytes`: `i32 count` then `(i32 key, i32 len, bytes)` each.

    Entries are written in the order given (Java writes `HashMap` order, which is not stable).
    """
    items = list(entries)
    parts = [pack_i32(len(items))]
    for key, value in items:
        raw = encode_value(value)
        parts.append(pack_i32(key_ordinal(key)))
        parts.append(pack_i32(len(raw)))
        parts.append(raw)
    return b"".join(parts)


def as_entries(
    header: Mapping[MetaKey | HeaderKey, str | bytes] | Iterable[tuple[MetaKey | HeaderKey, str | bytes]],
) -> list[tuple[MetaKey | HeaderKey, str | bytes]]:
    """Accept a mapping or a sequence of pairs and return the pairs in order."""
    if isinstance(header, Mapping):
        return list(header.items())
    return list(header)


@dataclass(frozen=True)
class BlockIdentifier:
    """A `BLOCK_IDENTIFIER` header value `"<attempt>,<seq>"` (HUDI-6758, 0.14.x writers only)."""

    attempt: int
    seq: int

    def __str__(self) -> str:
        return f"{self.attempt},{self.seq}"


def parse_block_identifier(value: str | None) -> BlockIdentifier | None:
    """Split `"attempt,seq"`; ``None`` when absent, empty or not two integers.

    Java (0.14) does `Long.parseLong(parts[0])`, `Integer.parseInt(parts[1])` and would throw on a
    malformed value; an inspector reports such a block as carrying no usable identifier instead.
    """
    if not value:
        return None
    parts = value.split(",")
    if len(parts) < 2:
        return None
    try:
        attempt = int(parts[0].strip())
        seq = int(parts[1].strip())
    except ValueError:
        return None
    if not (-(2**63) <= attempt < 2**63 and -(2**31) <= seq < 2**31):
        return None
    return BlockIdentifier(attempt, seq)
