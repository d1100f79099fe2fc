"""Checked index files: an Arrow IPC file followed by a SHA-256 of its bytes, so a cached index that rotted on
disk (a flipped bit, a truncated write, another program's file of the same name) is never served as truth.

Layout: the IPC file's bytes, then :data:`TRAILER_MAGIC` and the 32-byte digest of those bytes. Written to a
temporary file and renamed over the old one, so two processes saving at once leave one of the two whole files.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from pathlib import Path
from typing import BinaryIO

import pyarrow as pa
import pyarrow.ipc as ipc

from hudi_core.io.memory import map_read_only

TRAILER_MAGIC = b"HUDIIDX1"
_TRAILER = len(TRAILER_MAGIC) + 32
_HASH_CHUNK = 8 << 20


class IndexFileDamaged(ValueError):
    """An index file whose bytes do not match its checksum (or that has none)."""


def read_checked(path: Path) -> pa.Table:
    """The table of a checked index file; :class:`IndexFileDamaged` when its checksum does not match, OSError or
    an Arrow error when it cannot be read.

    The checksum is taken by reading the file and the table is memory-mapped from the same open file: hashing
    through the mapping would make every page of it (~300 MiB for a million write stats) resident in this process,
    where the table's readers touch only the columns they use."""
    with open(path, "rb") as file:
        size = os.fstat(file.fileno()).st_size
        if size < _TRAILER:
            raise IndexFileDamaged("it has no checksum trailer")
        file.seek(size - _TRAILER)
        trailer = file.read(_TRAILER)
        if trailer[:len(TRAILER_MAGIC)] != TRAILER_MAGIC:
            raise IndexFileDamaged("it has no checksum trailer")
        file.seek(0)
        if _digest_of(file, size - _TRAILER) != trailer[len(TRAILER_MAGIC):]:
            raise IndexFileDamaged("its checksum does not match its bytes")
        mapped = map_read_only(file.fileno())
    # The buffer holds the mapping: it lives as long as the table's arrays do.
    body = pa.py_buffer(mapped).slice(0, size - _TRAILER)
    return ipc.open_file(pa.BufferReader(body)).read_all()


def peek_metadata(path: Path) -> dict[bytes, bytes]:
    """The schema metadata of a checked index file, read from its footer alone (its pages only, the digest not
    checked): enough to tell whether the file is worth checking, never an answer (OSError or an Arrow error when it
    cannot be read)."""
    with pa.memory_map(str(path)) as source:
        data = source.read_buffer()
    if data.size < _TRAILER:
        raise IndexFileDamaged("it has no checksum trailer")
    metadata = ipc.open_file(pa.BufferReader(data.slice(0, data.size - _TRAILER))).schema.metadata
    return dict(metadata or {})


def _digest_of(file: BinaryIO, length: int) -> bytes:
    """SHA-256 of the next `length` bytes of `file`, read in chunks (fewer bytes: the digest of what there is)."""
    digest = hashlib.sha256()
    while length > 0 and (chunk := file.read(min(_HASH_CHUNK, length))):
        digest.update(chunk)
        length -= len(chunk)
    return digest.digest()


def write_checked(directory: Path, path: Path, table: pa.Table) -> pa.Table:
    """Write `table` to `path` atomically with its checksum (OSError or an Arrow error when it cannot); returns
    the table read back from the written file, memory-mapped (its pages are the file's, not the heap's).

    Streamed to the file and hashed reading it back in chunks: an index of a million write stats is ~300 MiB,
    which an in-memory copy would add to the peak of the command saving it."""
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".arrow")
    os.close(fd)
    try:
        with pa.OSFile(tmp, "wb") as sink, ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
        with open(tmp, "rb") as written:
            digest = _digest_of(written, os.fstat(written.fileno()).st_size)
        with open(tmp, "ab") as out:
            out.write(TRAILER_MAGIC + digest)
        # Mapped before the rename: this file's bytes even if another process replaces `path` right after.
        with open(tmp, "rb") as source:
            data = pa.py_buffer(map_read_only(source.fileno()))
        written = ipc.open_file(pa.BufferReader(data.slice(0, data.size - _TRAILER))).read_all()
        os.replace(tmp, path)
        return written
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


__all__ = ["TRAILER_MAGIC", "IndexFileDamaged", "peek_metadata", "read_checked", "write_checked"]
