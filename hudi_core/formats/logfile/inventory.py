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
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from hudi_core.errors import safe_text
from hudi_core.formats.logfile.content import content_version, record_count
from hudi_core.formats.logfile.errors import LogFileError
from hudi_core.formats.logfile.format import HeaderKey
from hudi_core.formats.logfile.reader import DEFAULT_WINDOW, LogFileReader, LogFileScan, RangeStorage
from hudi_core.io.filenames import parse_log_file_name
from hudi_core.io.storage import StorageSpec

if TYPE_CHECKING:
    pass

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
    """
    storage = storage_spec.open() if isinstance(storage_spec, StorageSpec) else storage_spec
    columns: dict[str, list[Any]] = {name: [] for name in INVENTORY_SCHEMA.names}
    heads = _first_windows(storage, paths)
    for path in paths:
        size = file_sizes.get(path) if file_sizes else None
        # Columns are filled row by row: no row dict outlives its block (O(blocks) memory).
        def add(row: dict[str, Any]) -> None:
            for name, values in columns.items():
                values.append(safe_text(row.get(name)))  # header bytes that are not UTF-8 stay printable

        _scan_rows(storage, path, size, decode_counts, False, add, heads.get(path))
    return pa.table(columns, schema=INVENTORY_SCHEMA)


def _first_windows(storage: Any, paths: list[str]) -> dict[str, bytes]:
    """On an object store, the first window of every file of the batch in one concurrent wave of
    ranged GETs (a small log file is whole in it): latency once per batch, not once per file.
    Locally nothing: a read there costs microseconds. Files that fail are left to the reader, which
    reports them as it would anyway."""
    if getattr(storage, "is_local", True) or not hasattr(storage, "read_ranges"):
        return {}
    fetched = storage.read_ranges([(p, 0, DEFAULT_WINDOW) for p in paths])
    return {p: data for p, data in zip(paths, fetched, strict=True) if isinstance(data, bytes)}
