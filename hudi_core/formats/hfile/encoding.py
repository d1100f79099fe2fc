"""The small integer and message codecs an HFile uses, bounded: a read never runs past its buffer.

* protobuf base-128 varints and a minimal protobuf message reader/writer (the trailer's
  `TrailerProto` and the file info's `InfoProto` are the only messages; both are read field by
  field, unknown fields skipped, as protobuf does);
* Hadoop `WritableUtils` variable-length longs ("vlong"): the key length of a root index entry and
  the MVCC timestamp after each cell. Its first byte says how long it is: -112..127 is the value
  itself, -113..-120 a positive value in 1..8 following bytes, -121..-128 a negative one.

Any read that would leave the buffer raises :class:`HFileFormatError` naming the file and offset.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from hudi_core.formats.hfile.errors import HFileFormatError

UINT16 = struct.Struct(">H")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")

_UINT64_MASK = (1 << 64) - 1


def to_signed64(value: int) -> int:
    """A protobuf uint64 as the Java `long` it was written from (`-1` is stored as 2^64-1)."""
    value &= _UINT64_MASK
    return value - (1 << 64) if value >= 1 << 63 else value


def read_uvarint(buf: bytes, pos: int, limit: int, what: str, name: str, base: int = 0) -> tuple[int, int]:
    """A protobuf varint at `pos` (no further than `limit`) → (value, position after it)."""
    shift = 0
    value = 0
    start = pos
    while True:
        if pos >= limit:
            raise HFileFormatError(f"{what}: varint cut short", name, base + start)
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise HFileFormatError(f"{what}: varint longer than 10 bytes", name, base + start)


def write_uvarint(value: int) -> bytes:
    """Protobuf base-128 encoding of a non-negative int (a negative one as its 64-bit pattern)."""
    value &= _UINT64_MASK
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_vlong(buf: bytes, pos: int, limit: int, what: str, name: str, base: int = 0) -> tuple[int, int]:
    """A Hadoop `WritableUtils.readVLong` at `pos` → (value, position after it)."""
    if pos >= limit:
        raise HFileFormatError(f"{what}: vlong cut short", name, base + pos)
    first = buf[pos] - 256 if buf[pos] >= 128 else buf[pos]
    if first >= -112:
        return first, pos + 1
    negative = first < -120
    size = -(first + 120) if negative else -(first + 112)
    if pos + 1 + size > limit:
        raise HFileFormatError(f"{what}: vlong of {size} bytes cut short", name, base + pos)
    value = int.from_bytes(buf[pos + 1 : pos + 1 + size], "big")
    return (~value if negative else value), pos + 1 + size


def write_vlong(value: int) -> bytes:
    """Hadoop `WritableUtils.writeVLong` (what HBase and Hudi use for index key lengths)."""
    if -112 <= value <= 127:
        return bytes([value & 0xFF])
    length = -112
    if value < 0:
        value = ~value
        length = -120
    tmp = value
    while tmp:
        tmp >>= 8
        length -= 1
    size = -(length + 120) if length < -120 else -(length + 112)
    return bytes([length & 0xFF]) + value.to_bytes(size, "big")


@dataclass(frozen=True)
class ProtoField:
    """One field of a protobuf message as read: number, wire type, and the int or bytes value."""

    number: int
    wire: int
    value: int | bytes


def parse_proto(buf: bytes, start: int, end: int, what: str, name: str, base: int = 0) -> list[ProtoField]:
    """The fields of a protobuf message in `buf[start:end]`, in order; unknown fields are kept."""
    fields: list[ProtoField] = []
    pos = start
    while pos < end:
        tag, pos = read_uvarint(buf, pos, end, what, name, base)
        number, wire = tag >> 3, tag & 7
        if number == 0:
            raise HFileFormatError(f"{what}: protobuf field number 0", name, base + pos)
        if wire == 0:
            value, pos = read_uvarint(buf, pos, end, what, name, base)
            fields.append(ProtoField(number, wire, value))
        elif wire == 2:
            length, pos = read_uvarint(buf, pos, end, what, name, base)
            if pos + length > end:
                raise HFileFormatError(f"{what}: field {number} of {length} bytes runs past the message",
                                       name, base + pos)
            fields.append(ProtoField(number, wire, bytes(buf[pos : pos + length])))
            pos += length
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            if pos + size > end:
                raise HFileFormatError(f"{what}: fixed field {number} runs past the message", name, base + pos)
            fields.append(ProtoField(number, wire, int.from_bytes(buf[pos : pos + size], "little")))
            pos += size
        else:
            raise HFileFormatError(f"{what}: unsupported protobuf wire type {wire}", name, base + pos)
    return fields


def proto_uint(number: int, value: int) -> bytes:
    """A varint field (protobuf `uint32`/`uint64`; a negative Java long as its 64-bit pattern)."""
    return write_uvarint(number << 3) + write_uvarint(value)


def proto_bytes(number: int, value: bytes) -> bytes:
    """A length-delimited field (`bytes`, `string`, an embedded message)."""
    return write_uvarint((number << 3) | 2) + write_uvarint(len(value)) + value
