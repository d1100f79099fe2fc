"""Avro object containers: the header (magic, metadata map, sync marker), the datums of a container that
holds one block, and writing one (null codec)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from hudi_core.formats.avro.binary import read_long, write_bytes, write_long
from hudi_core.lazy import LazyModule

# A container's header is read and one is written without numpy or Arrow (every body sniff passes here);
# only the column-wise helpers over binary arrays load them.
if TYPE_CHECKING:
    import numpy as np
else:
    np = LazyModule("numpy")
pa: Any = LazyModule("pyarrow")

AVRO_MAGIC = b"Obj\x01"


def container_header(data: bytes) -> tuple[int, dict[str, bytes]] | None:
    """(length of the header up to and including its sync marker, metadata) of an Avro container, or None."""
    if data[:4] != AVRO_MAGIC:
        return None
    try:
        pos = 4
        meta: dict[str, bytes] = {}
        while True:
            count, pos = read_long(data, pos)
            if count == 0:
                break
            if count < 0:
                count = -count
                _, pos = read_long(data, pos)
            for _ in range(count):
                klen, pos = read_long(data, pos)
                if klen < 0 or pos + klen > len(data):
                    return None
                key = data[pos:pos + klen]
                pos += klen
                vlen, pos = read_long(data, pos)
                if vlen < 0 or pos + vlen > len(data):
                    return None
                meta[key.decode("utf-8")] = data[pos:pos + vlen]
                pos += vlen
    except (ValueError, UnicodeDecodeError):
        return None
    if pos + 16 > len(data):
        return None
    return pos + 16, meta


def container_datums(buf: np.ndarray, starts: np.ndarray, ends: np.ndarray, members: np.ndarray, header: int
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(members, datum starts, datum sizes) of the containers `members` (body i at `starts[i]:ends[i]` of `buf`,
    `header` bytes of header each) that hold one block of one record followed by the header's sync marker; the
    others are left out (the caller reads them the slow way)."""
    from hudi_core.formats.avro.vector import VectorDecodeError, read_varints

    s, e = starts[members], ends[members]
    try:
        count, p1 = read_varints(buf, s + header)
        size, data = read_varints(buf, p1)
    except IndexError as exc:
        raise VectorDecodeError("a container ends inside its header") from exc
    ok = (count == 1) & (size >= 0) & (data + size + 16 == e)
    sync_at = np.where(ok, data + size, s)
    last = buf.size - 1
    sync = buf[np.minimum((s + header - 16)[:, None] + np.arange(16), last)]
    after = buf[np.minimum(sync_at[:, None] + np.arange(16), last)]
    ok &= (sync == after).all(axis=1)
    return members[ok], data[ok], size[ok]


def binary_buffers(bodies: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(the data buffer, starts, ends) of a binary array, without a copy (null bodies are empty)."""
    kind = np.int64 if pa.types.is_large_binary(bodies.type) else np.int32
    n = len(bodies)
    offsets = np.frombuffer(bodies.buffers()[1], dtype=kind)[bodies.offset:bodies.offset + n + 1].astype(np.int64)
    data = bodies.buffers()[2]
    buf = np.frombuffer(data, dtype=np.uint8) if data is not None and data.size else np.zeros(1, dtype=np.uint8)
    starts, ends = offsets[:-1], offsets[1:]
    if bodies.null_count:
        valid = np.asarray(bodies.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
        ends = np.where(valid, ends, starts)
    return buf, starts, ends


def container_of(datums: Sequence[bytes], schema_json: str, sync: bytes | None = None) -> bytes:
    """An Avro object-container file of already-encoded `datums` in one block, null codec.

    The header carries only ``avro.schema`` (as Java's `DataFileWriter` writes for the null codec).
    Java picks a random sync marker; we derive it from the content so output is reproducible.
    """
    data = b"".join(datums)
    schema_bytes = schema_json.encode("utf-8")
    if sync is None:
        sync = hashlib.md5(schema_bytes + data, usedforsecurity=False).digest()
    header = AVRO_MAGIC + write_long(1) + write_bytes(b"avro.schema") + write_bytes(schema_bytes) + write_long(0) + sync
    if not datums:
        return header
    return header + write_long(len(datums)) + write_long(len(data)) + data + sync
