"""The cells of a data block: HBase `KeyValue`s, and the key layout Hudi compares by row only.

A cell on disk (Hudi `KeyValue`, HBase `KeyValue` serialisation):

    i32 key length | i32 value length | key | value | [i16 tags length, tags] | [MVCC vlong]

and the key:

    i16 row length | row | i8 family length (0) | family (empty) | qualifier (empty) |
    i64 timestamp | i8 type

Hudi stores the record key as the row, no family and no qualifier, timestamp `Long.MAX_VALUE`
(HBase's LATEST_TIMESTAMP) and type Put (4); only the row is ever compared (`Key.compareTo`
compares the row bytes, unsigned, lexicographically), so this package's keys are the rows.

Tags exist in v3 only when the file info has `hfile.MAX_TAGS_LEN` (HBase `HFileInfo`); neither
writer sets it for Hudi. The MVCC timestamp follows every cell when `KEY_VALUE_VERSION` is 1; both
writers set it, with `MAX_MEMSTORE_TS_KEY` 0, so it is the single byte 0 (Hudi's `HFileDataBlock`
assumes exactly that byte; this reader reads the vlong, which is the same for such files).
"""

from __future__ import annotations

from hudi_core.formats.hfile.encoding import INT32, INT64, UINT16, read_vlong
from hudi_core.formats.hfile.errors import HFileFormatError

KEY_TYPE_PUT = 4
LATEST_TIMESTAMP = (1 << 63) - 1
#: family length (1) + timestamp (8) + type (1) after the row in every Hudi key
KEY_SUFFIX = b"\x00" + INT64.pack(LATEST_TIMESTAMP) + bytes([KEY_TYPE_PUT])
MAX_ROW_LENGTH = 0x7FFF  # the row length is a Java short


def encode_key(row: bytes) -> bytes:
    """The full KeyValue key of a Hudi record key (row)."""
    return UINT16.pack(len(row)) + row + KEY_SUFFIX


def encode_row_key(row: bytes) -> bytes:
    """The short key Hudi 1.1's native writer puts in the root index and `hfile.LASTKEY`:
    the 2-byte row length and the row, nothing after (`HFileWriterImpl.addKeyLength`)."""
    return UINT16.pack(len(row)) + row


def row_of(key: bytes, name: str | None = None, offset: int | None = None) -> bytes:
    """The row of a key that starts with its 2-byte row length (a full KeyValue key, or the short
    form of Hudi's native writer: both are read the same way, as `Key.getContentLength` does)."""
    if len(key) < 2:
        raise HFileFormatError(f"key of {len(key)} bytes has no row length", name, offset)
    length = UINT16.unpack_from(key, 0)[0]
    if length > len(key) - 2:
        raise HFileFormatError(f"key row length {length} runs past its {len(key)}-byte key", name, offset)
    return bytes(key[2 : 2 + length])


def encode_cell(row: bytes, value: bytes, mvcc: bool = True) -> bytes:
    """One data-block cell as Hudi's `HFileDataBlock` writes it (MVCC byte 0 when `mvcc`)."""
    key = encode_key(row)
    return INT32.pack(len(key)) + INT32.pack(len(value)) + key + value + (b"\x00" if mvcc else b"")


def decode_cells(payload: bytes, *, mvcc: bool, tags: bool, name: str | None = None,
                 offset: int | None = None) -> tuple[list[bytes], list[bytes]]:
    """Rows and values of every cell of a data block's uncompressed payload, in order.

    Bounded: a length that runs past the payload is a :class:`HFileFormatError` at the cell's
    position in the uncompressed payload (given as `offset` + position)."""
    rows: list[bytes] = []
    values: list[bytes] = []
    pos = 0
    end = len(payload)
    base = offset or 0
    unpack_i32 = INT32.unpack_from
    while pos < end:
        if pos + 8 > end:
            raise HFileFormatError("cell lengths cut short at the end of the data block", name, base + pos)
        key_len = unpack_i32(payload, pos)[0]
        value_len = unpack_i32(payload, pos + 4)[0]
        key_start = pos + 8
        value_start = key_start + key_len
        cell_end = value_start + value_len
        if key_len < 2 or value_len < 0 or cell_end > end:
            raise HFileFormatError(
                f"cell with key length {key_len} and value length {value_len} runs past the data block",
                name, base + pos)
        row_len = UINT16.unpack_from(payload, key_start)[0]
        if row_len > key_len - 2:
            raise HFileFormatError(f"row length {row_len} runs past the {key_len}-byte key", name, base + pos)
        rows.append(payload[key_start + 2 : key_start + 2 + row_len])
        values.append(payload[value_start:cell_end])
        pos = cell_end
        if tags:
            if pos + 2 > end:
                raise HFileFormatError("tags length cut short", name, base + pos)
            pos += 2 + UINT16.unpack_from(payload, pos)[0]
            if pos > end:
                raise HFileFormatError("cell tags run past the data block", name, base + pos)
        if mvcc:
            _, pos = read_vlong(payload, pos, end, "cell MVCC timestamp", name or "<hfile>", base)
    return rows, values
