"""Block inventory of many log files as one Arrow table (one row per block).

:func:`scan_log_files` is a pure function over a batch of paths: it opens the storage from a
picklable :class:`~hudi_core.io.storage.StorageSpec`, scans each file header-only and returns a
``pyarrow.Table``. Run it per batch in a thread pool, a process pool or a Spark `mapPartitions`
and concatenate the results (`pa.concat_tables`).

Columns (:data:`INVENTORY_SCHEMA`):

========================  ======================================================================
path                      root-relative path of the log file
partition                 folder of the file relative to the storage root ("" at the root)
file_id                   file-group id from the file name (null when the name does not parse)
log_version               log file version from the name
write_token               `<taskPartitionId>-<stageId>-<taskAttemptId>` from the name
task_attempt              third number of the write token (Spark task attempt id)
block_index               position of the block in its file (0-based); null on an error row
block_offset              offset of the block's `#HUDI#` (on an error row: where the scan stopped)
block_size                declared block size S (corrupt: bytes from after the magic to the next magic)
block_type                AVRO_DATA_BLOCK, DELETE_BLOCK, COMMAND_BLOCK, ..., CORRUPT_BLOCK,
                          UNKNOWN_<n>; null on an error row
format_version            log format version of the block (1 today); null for corrupt blocks
content_length            content bytes (corrupt: the damaged span)
instant_time              header INSTANT_TIME
target_instant            header TARGET_INSTANT_TIME (rollback command blocks)
command_type              header COMMAND_BLOCK_TYPE as int (0 = ROLLBACK_BLOCK)
block_identifier          header BLOCK_IDENTIFIER raw value (`"attempt,seq"`, 0.14.x writers)
attempt                   attempt part of BLOCK_IDENTIFIER
seq                       sequence part of BLOCK_IDENTIFIER
content_version           i32 version at the start of AVRO/CDC/DELETE content, when `decode_counts`
record_count              records in the block when `decode_counts` (else null; null for command,
                          corrupt and Kryo delete blocks)
corrupt                   the reader synthesised a CORRUPT_BLOCK (or the scan stopped: error row)
corrupt_reason            truncated-size, size-out-of-range, past-eof, size-mismatch,
                          no-magic-after, inconsistent-layout: ...
error                     message of a hard error that stopped the file's scan (error row) or of a
                          failed record count (on the block's row)
========================  ======================================================================
"""

from __future__ import annotations

import posixpath
import struct
from collections.abc import Callable, Mapping
from typing import Any

import pyarrow as pa

from hudi_core.errors import StorageError, safe_text
from hudi_core.formats.logfile.content import content_version, record_count
from hudi_core.formats.logfile.errors import LogFileError
from hudi_core.formats.logfile.format import (
    INT32_MAX,
    MAGIC,
    MAGIC_LEN,
    BlockType,
    HeaderKey,
    decode_value,
    parse_block_identifier,
    unpack_i32,
    unpack_i64,
)
from hudi_core.formats.logfile.reader import DEFAULT_WINDOW, LogFileReader, LogFileScan, RangeStorage
from hudi_core.io.filenames import parse_log_file_name
from hudi_core.io.storage import StorageSpec

INVENTORY_SCHEMA = pa.schema(
    [
        ("path", pa.string()),
        ("partition", pa.string()),
        ("file_id", pa.string()),
        ("log_version", pa.int32()),
        ("write_token", pa.string()),
        ("task_attempt", pa.int64()),
        ("block_index", pa.int32()),
        ("block_offset", pa.int64()),
        ("block_size", pa.int64()),
        ("block_type", pa.string()),
        ("format_version", pa.int32()),
        ("content_length", pa.int64()),
        ("instant_time", pa.string()),
        ("target_instant", pa.string()),
        ("command_type", pa.int32()),
        ("block_identifier", pa.string()),
        ("attempt", pa.int64()),
        ("seq", pa.int32()),
        ("content_version", pa.int32()),
        ("record_count", pa.int64()),
        ("corrupt", pa.bool_()),
        ("corrupt_reason", pa.string()),
        ("error", pa.string()),
    ]
)


def _file_columns(path: str) -> dict[str, Any]:
    parsed = parse_log_file_name(posixpath.basename(path))
    return {
        "path": path,
        "partition": posixpath.dirname(path),
        "file_id": parsed.file_id if parsed else None,
        "log_version": parsed.version if parsed else None,
        "write_token": parsed.write_token if parsed else None,
        "task_attempt": parsed.task_attempt if parsed else None,
    }


def _scan_rows(storage: RangeStorage, path: str, size: int | None, decode_counts: bool, keep_blocks: bool,
               emit: Callable[[dict[str, Any]], None], head: bytes | None = None) -> LogFileScan:
    """Scan one log file into inventory rows, handing each to `emit` as it is made (no list of rows held)."""
    base = _file_columns(path)
    rows = _Emitter(emit)
    try:
        reader = LogFileReader(storage, path, file_size=size, head=head)
    except LogFileError as exc:
        emit(_error_row(base, exc, None))
        return LogFileScan(path, size or 0, [], exc)
    scan = LogFileScan(path, reader.file_size)
    try:
        for block in reader.blocks():
            if keep_blocks:
                scan.blocks.append(block)
            row = dict(base)
            if block.corrupt and not block.header_entries:
                # Corrupt frame: no header to look into (fast path: runs of corrupt blocks).
                row.update(block_index=block.index, block_offset=block.offset, block_size=block.size,
                           block_type=block.type_name, format_version=block.format_version,
                           content_length=block.content_length, corrupt=True, corrupt_reason=block.corrupt_reason)
                rows.append(row)
                continue
            ident = block.block_identifier
            row.update(
                block_index=block.index,
                block_offset=block.offset,
                block_size=block.size,
                block_type=block.type_name,
                format_version=block.format_version,
                content_length=block.content_length,
                instant_time=block.instant_time,
                target_instant=block.target_instant_time,
                command_type=block.command_type,
                block_identifier=block.header.get(HeaderKey.BLOCK_IDENTIFIER.name),
                attempt=ident.attempt if ident else None,
                seq=ident.seq if ident else None,
                record_count=None,
                corrupt=block.corrupt,
                corrupt_reason=block.corrupt_reason,
                error=None,
            )
            if decode_counts:
                try:
                    row["content_version"] = content_version(reader, block)
                    row["record_count"] = record_count(reader, block)
                except LogFileError as exc:
                    row["error"] = str(exc)
            rows.append(row)
    except LogFileError as exc:
        scan.error = exc
        rows.append(_error_row(base, exc, exc.offset))
    scan.bytes_requested = reader.bytes_requested
    return scan


class _Emitter:
    """`rows.append` that hands the row on instead of keeping it."""

    __slots__ = ("append",)

    def __init__(self, emit: Callable[[dict[str, Any]], None]) -> None:
        self.append = emit


def _error_row(base: dict[str, Any], exc: LogFileError, offset: int | None) -> dict[str, Any]:
    row = dict(base)
    row.update(block_offset=offset, corrupt=True, error=str(exc))
    return row


def scan_log_files(
    storage_spec: StorageSpec | RangeStorage,
    paths: list[str],
    decode_counts: bool = False,
    file_sizes: Mapping[str, int] | None = None,
) -> pa.Table:
    """Scan a batch of log files (root-relative paths) into the inventory table described above.

    `storage_spec` is normally a :class:`StorageSpec` (opened here, so the call is self-contained);
    an already open storage with `read_range`/`stat` is accepted too. `file_sizes` spares one
    `stat` per file when the caller listed the folder already. Unreadable files never raise: they
    yield an error row.

    A file read whole in its first window (a local one shorter than the window: its size is then known without a
    `stat`) whose every block is a well-formed version-1 frame is parsed straight from those bytes
    (:func:`_whole_file_blocks`); every other file (a corrupt or odd block, a larger file, record counts) is walked
    by :class:`LogFileReader`. Both give the same rows.
    """
    storage = storage_spec.open() if isinstance(storage_spec, StorageSpec) else storage_spec
    names = INVENTORY_SCHEMA.names
    rows: list[tuple[Any, ...]] = []
    heads = _first_windows(storage, paths)
    local = getattr(storage, "is_local", True)

    def add(row: dict[str, Any]) -> None:
        rows.append(tuple(safe_text(row.get(name)) for name in names))  # header bytes not UTF-8 stay printable

    for path in paths:
        size = file_sizes.get(path) if file_sizes else None
        head = heads.get(path)
        if local and head is None:
            try:
                head = storage.read_range(path, 0, DEFAULT_WINDOW)
            except StorageError:
                head = None  # the reader reports it as it would anyway
            if head is not None and size is None and len(head) < DEFAULT_WINDOW:
                size = len(head)  # a local read stops short only at the end of the file
        if not decode_counts and head is not None and size is not None and size <= len(head):
            blocks = _whole_file_blocks(head[:size] if size < len(head) else head)
            if blocks is not None:
                base = tuple(safe_text(v) for v in _file_columns(path).values())
                rows.extend(base + block for block in blocks)
                continue
        # Rows are made one by one: no row dict outlives its block (O(blocks) memory).
        _scan_rows(storage, path, size, decode_counts, False, add, head)
    columns = list(zip(*rows, strict=True)) if rows else [()] * len(names)
    return pa.table(dict(zip(names, columns, strict=True)), schema=INVENTORY_SCHEMA)


_HEAD = struct.Struct(">ii")  # log format version, block type
_TYPE_NAMES = {int(t): t.name for t in BlockType if t is not BlockType.CORRUPT_BLOCK}
_INSTANT, _TARGET, _COMMAND, _IDENTIFIER = (int(k) for k in (
    HeaderKey.INSTANT_TIME, HeaderKey.TARGET_INSTANT_TIME, HeaderKey.COMMAND_BLOCK_TYPE, HeaderKey.BLOCK_IDENTIFIER))


def _whole_file_blocks(data: bytes) -> list[tuple[Any, ...]] | None:
    """The block columns of the inventory (`block_index` to `error`) of a log file held whole in `data`, read
    straight from its bytes; ``None`` unless every block is a well-formed version-1 frame, the rules of
    :class:`LogFileReader` all passing: the magic at each block start, a size within ``0..2^31-1`` whose trailing
    length is there and says ``size + 6``, the next magic or the end of the file after the frame, and the version,
    type (not CORRUPT_BLOCK), header, content length, footer and trailing length filling the frame exactly. A file
    ends where fewer than six bytes are left, as the reader ends it. Anything else (a corrupt block, a legacy or
    newer frame, a layout that does not add up) is the reader's to walk."""
    end = len(data)
    out: list[tuple[Any, ...]] = []
    pos = index = 0
    while pos + MAGIC_LEN <= end:
        if data[pos:pos + MAGIC_LEN] != MAGIC:
            return None
        after_size = pos + MAGIC_LEN + 8
        if after_size > end:
            return None
        size = unpack_i64(data, pos + MAGIC_LEN)
        frame_end = after_size + size
        if size < 0 or size > INT32_MAX or frame_end - 8 < 0 or frame_end > end:
            return None
        if unpack_i64(data, frame_end - 8) - MAGIC_LEN != size:
            return None
        following = data[frame_end:frame_end + MAGIC_LEN]
        if len(following) == MAGIC_LEN and following != MAGIC:
            return None
        if after_size + 8 > frame_end:
            return None
        version, type_ordinal = _HEAD.unpack_from(data, after_size)
        type_name = _TYPE_NAMES.get(type_ordinal) if version == 1 else None
        if type_name is None:
            if version != 1 or type_ordinal == BlockType.CORRUPT_BLOCK:
                return None
            type_name = f"UNKNOWN_{type_ordinal}"
        header = _metadata(data, after_size + 8, frame_end)
        if header is None:
            return None
        values, cur = header
        if cur + 8 > frame_end:
            return None
        content_length = unpack_i64(data, cur)
        cur += 8 + content_length
        if content_length < 0 or content_length > INT32_MAX or cur > frame_end:
            return None
        footer = _metadata(data, cur, frame_end)
        if footer is None or footer[1] + 8 != frame_end:
            return None
        instant, target, command, identifier = (
            None if raw is None else decode_value(raw)
            for raw in (values.get(_INSTANT), values.get(_TARGET), values.get(_COMMAND), values.get(_IDENTIFIER)))
        try:
            command_type = int(command) if command is not None else None
        except ValueError:
            command_type = None
        ident = parse_block_identifier(identifier)
        out.append((index, pos, size, type_name, 1, content_length, safe_text(instant), safe_text(target),
                    command_type, safe_text(identifier), ident.attempt if ident else None,
                    ident.seq if ident else None, None, None, False, None, None))
        index += 1
        pos = frame_end
    return out


def _metadata(data: bytes, pos: int, limit: int) -> tuple[dict[int, bytes], int] | None:
    """A header or footer map at `pos` as raw values by key ordinal (a repeated key: the last wins, as the reader's
    map) and where it ends; ``None`` where the reader finds it inconsistent."""
    if pos + 4 > limit:
        return None
    count = unpack_i32(data, pos)
    pos += 4
    if count < 0 or count * 8 > limit - pos:
        return None
    values: dict[int, bytes] = {}
    for _ in range(count):
        if pos + 8 > limit:
            return None
        key, length = _HEAD.unpack_from(data, pos)
        pos += 8
        if length < 0 or pos + length > limit:
            return None
        values[key] = data[pos:pos + length]
        pos += length
    return values, pos


def _first_windows(storage: Any, paths: list[str]) -> dict[str, bytes]:
    """On an object store, the first window of every file of the batch in one concurrent wave of
    ranged GETs (a small log file is whole in it): latency once per batch, not once per file.
    Locally nothing: a read there costs microseconds. Files that fail are left to the reader, which
    reports them as it would anyway."""
    if getattr(storage, "is_local", True) or not hasattr(storage, "read_ranges"):
        return {}
    fetched = storage.read_ranges([(p, 0, DEFAULT_WINDOW) for p in paths])
    return {p: data for p, data in zip(paths, fetched, strict=True) if isinstance(data, bytes)}
