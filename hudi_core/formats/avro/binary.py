"""Avro binary primitives: zig-zag varints (int and long) and length-prefixed bytes and strings."""

from __future__ import annotations

_MASK64 = (1 << 64) - 1


class AvroBinaryError(ValueError):
    """A varint that is cut short or runs over 10 bytes."""


def read_long(data: bytes, pos: int) -> tuple[int, int]:
    """The zig-zag varint at `pos`: (value, position after it)."""
    shift = 0
    acc = 0
    while True:
        if pos >= len(data):
            raise AvroBinaryError("Avro varint cut short")
        b = data[pos]
        pos += 1
        acc |= (b & 0x7F) << shift
        if not b & 0x80:
            return (acc >> 1) ^ -(acc & 1), pos
        shift += 7
        if shift > 63:
            raise AvroBinaryError("Avro varint longer than 10 bytes")


def write_long(value: int) -> bytes:
    """`value` (an Avro int or long) as a zig-zag varint."""
    acc = ((value << 1) ^ (value >> 63)) & _MASK64
    out = bytearray()
    while acc >= 0x80:
        out.append((acc & 0x7F) | 0x80)
        acc >>= 7
    out.append(acc)
    return bytes(out)


def write_bytes(raw: bytes) -> bytes:
    """Avro `bytes` (or a UTF-8 `string`'s bytes): the length, then the bytes."""
    return write_long(len(raw)) + raw
