"""Layout-2 archived timeline: the LSM history under `.hoodie/timeline/history` (spec `04` §4.2).

Files: `_version_` (decimal snapshot version), `manifest_<V>` (JSON `{"files": [{"fileName",
"fileLen"}]}`) and `<min>_<max>_<level>.parquet` files of `HoodieLSMTimelineInstant` rows, one row per
completed action: `instantTime`, `completionTime`, `action` (the *completed* action, so a compaction
is `commit`), `metadata` (raw bytes of the completed file), `plan` (raw bytes of the plan), `version`.

Emulates Hudi 1.1.x `LSMTimeline` / `ArchivedTimelineLoaderV2`: read `_version_`, falling back to the
highest `manifest_N` when it is missing or unreadable; only the files of that manifest are live
(merged-away files that linger are ignored); with a time range, files are pruned by the min/max in
their names (`LSMTimeline.isFileInRange`). Listing projects `instantTime/completionTime/action` only;
`metadata`/`plan` bytes are read for one instant at a time, on demand, from its row group.

Deviations, all where Hudi would throw: a `_version_` naming a missing or garbage manifest falls
back to the next lower readable manifest; a manifest naming a missing file, or an unreadable parquet
file, is a finding and the rest loads.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_core.errors import DecodeError, Finding, Severity, StorageError
from hudi_core.formats.timeline import lsm_rules
from hudi_core.formats.timeline.archived_v1 import ARCHIVE_LISTING_SCHEMA, TimeRange
from hudi_core.io.storage import FileInfo, ReadOnlyStorage, StorageSpec

VERSION_FILE_NAME = lsm_rules.VERSION_FILE

LISTING_COLUMNS = ("instantTime", "completionTime", "action")
#: Rows per batch when streaming one row group to fetch one instant's bytes.
_BODY_BATCH_ROWS = 256


@dataclass(frozen=True)
class LsmFile:
    """One data file named by the manifest: name, declared length and the range in its name."""

    name: str
    declared_len: int | None
    min_instant: str | None
    max_instant: str | None
    level: int | None

    @classmethod
    def of(cls, name: str, declared_len: int | None) -> LsmFile:
        match = lsm_rules.DATA_FILE_PATTERN.fullmatch(name)
        if match is None:
            return cls(name, declared_len, None, None, None)
        return cls(name, declared_len, match.group(1), match.group(2), int(match.group(3)))


@dataclass
class LsmSnapshot:
    """The snapshot a reader uses: its version, its manifest's files, and what was noticed."""

    version: int | None
    files: list[LsmFile] = field(default_factory=list)
    orphans: list[str] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def _parse_manifest(data: bytes) -> list[LsmFile]:
    """A manifest's entries (:func:`hudi_core.formats.timeline.lsm_rules.parse_manifest`); raises ValueError."""
    return [LsmFile.of(name, length) for name, length in lsm_rules.parse_manifest(data)]


def _manifest_version(name: str) -> int | None:
    """The version of a manifest file name (`LSMTimeline.getManifestVersion`), ``None`` for other names and
    for a `manifest_*` name without a number (where Hudi's listing throws, the reader skips it)."""
    if not lsm_rules.is_manifest_name(name):
        return None
    try:
        return lsm_rules.manifest_version(name)
    except ValueError:
        return None


def resolve_snapshot(storage: ReadOnlyStorage, history_dir: str) -> LsmSnapshot:
    """Choose the live snapshot: `_version_`, else the highest manifest (`latestSnapshotVersion`)."""
    listing = storage.list(history_dir)
    by_name: dict[str, FileInfo] = {i.name: i for i in listing if not i.is_dir}
    manifests = sorted({v for n in by_name if (v := _manifest_version(n)) is not None}, reverse=True)
    snap = LsmSnapshot(version=None)
    version: int | None = None
    vpath = f"{history_dir}/{VERSION_FILE_NAME}"
    if VERSION_FILE_NAME in by_name:
        try:
            text = storage.read(vpath).decode("utf-8")
            version = lsm_rules.parse_version_file(text)  # Integer.parseInt: "6\n" fails, as in Hudi
        except (StorageError, UnicodeDecodeError, ValueError) as exc:
            snap.findings.append(Finding(
                Severity.WARNING, "lsm_version_unreadable", storage.uri_of(vpath),
                f"{VERSION_FILE_NAME} is unreadable ({exc}); using the highest manifest instead, as Hudi does",
            ))
    elif manifests:
        snap.findings.append(Finding(
            Severity.INFO, "lsm_version_missing", storage.uri_of(vpath),
            f"no {VERSION_FILE_NAME}; using the highest manifest (manifest_{manifests[0]}), as Hudi does",
        ))
    candidates = list(manifests)
    if version is not None:
        if version in manifests:
            candidates = [version] + [v for v in manifests if v < version]
        else:
            snap.findings.append(Finding(
                Severity.ERROR, "lsm_manifest_missing", storage.uri_of(f"{history_dir}/manifest_{version}"),
                f"{VERSION_FILE_NAME} names snapshot {version} but manifest_{version} does not exist; "
                "falling back to the highest manifest" + ("" if manifests else " (there is none)"),
            ))
    for v in candidates:
        mpath = f"{history_dir}/{lsm_rules.manifest_name(v)}"
        try:
            snap.files = _parse_manifest(storage.read(mpath))
            snap.version = v
            break
        except (StorageError, UnicodeDecodeError, ValueError, TypeError) as exc:
            snap.findings.append(Finding(
                Severity.ERROR, "lsm_manifest_unreadable", storage.uri_of(mpath),
                f"manifest_{v} is unreadable ({exc}); trying an older snapshot",
            ))
    live = {f.name for f in snap.files}
    snap.orphans = sorted(n for n in by_name if n.endswith(".parquet") and n not in live)
    if snap.orphans and snap.version is not None:
        snap.findings.append(Finding(
            Severity.INFO, "lsm_files_not_in_manifest", storage.uri_of(history_dir),
            f"{len(snap.orphans)} parquet file(s) not in manifest_{snap.version} are ignored (merged away, "
            f"awaiting cleaning, or never committed): {', '.join(snap.orphans[:5])}"
            + (" …" if len(snap.orphans) > 5 else ""),
        ))
    elif snap.orphans:
        snap.findings.append(Finding(
            Severity.WARNING, "lsm_no_manifest", storage.uri_of(history_dir),
            f"{len(snap.orphans)} parquet file(s) but no readable manifest: no snapshot is live, the history "
            "reads as empty",
        ))
    for f in snap.files:
        info = by_name.get(f.name)
        where = storage.uri_of(f"{history_dir}/{f.name}")
        if info is None:
            snap.findings.append(Finding(
                Severity.ERROR, "lsm_file_missing", where,
                f"manifest_{snap.version} names {f.name}, which does not exist; its instants are lost",
            ))
        elif f.declared_len is not None and info.size != f.declared_len:
            snap.findings.append(Finding(
                Severity.WARNING, "lsm_file_length_mismatch", where,
                f"{f.name} is {info.size} bytes, manifest_{snap.version} says {f.declared_len}",
            ))
        if f.min_instant is None:
            snap.findings.append(Finding(
                Severity.WARNING, "lsm_file_name_unexpected", where,
                f"{f.name} does not match <min>_<max>_<level>.parquet; read without range pruning",
            ))
    snap.files = [f for f in snap.files if f.name in by_name]
    return snap


def prune_files(files: list[LsmFile], time_range: TimeRange) -> list[LsmFile]:
    """Files whose name range meets the time range (files with odd names are always kept)."""
    if time_range.is_open:
        return list(files)
    return [f for f in files if f.min_instant is None or f.max_instant is None
            or time_range.overlaps(f.min_instant, f.max_instant)]


# -- listing (a pure batch function) -----------------------------------------------------------


def _as_string(col: pa.ChunkedArray) -> pa.ChunkedArray:
    if pa.types.is_string(col.type):
        return col
    return col.cast(pa.string())


def _error_table(path: str, code: str, message: str) -> pa.Table:
    row: dict[str, Any] = {f.name: [None] for f in ARCHIVE_LISTING_SCHEMA}
    row["archive_file"] = pa.DictionaryArray.from_arrays(pa.array([0], pa.int32()), pa.array([path]))
    row["error_code"] = [code]
    row["error"] = [message]
    return pa.table({f.name: (row[f.name] if f.name == "archive_file" else pa.array(row[f.name], f.type))
                     for f in ARCHIVE_LISTING_SCHEMA}, schema=ARCHIVE_LISTING_SCHEMA)


def read_lsm_file_rows(storage: ReadOnlyStorage, path: str, time_range: TimeRange | None = None) -> pa.Table:
    """:data:`ARCHIVE_LISTING_SCHEMA` rows of one LSM parquet file, reading three columns only."""
    uri = storage.uri_of(path)
    try:
        with storage.open_read(path) as handle:
            pf = pq.ParquetFile(handle)
            names = set(pf.schema_arrow.names)
            missing = [c for c in LISTING_COLUMNS if c not in names]
            if missing:
                return _error_table(path, "lsm_file_unreadable",
                                    f"{uri} is not a HoodieLSMTimelineInstant file (no {', '.join(missing)})")
            data = pf.read(columns=list(LISTING_COLUMNS), use_threads=False)
    except (StorageError, OSError, pa.ArrowException, UnicodeDecodeError, ValueError) as exc:  # damaged footers
        return _error_table(path, "lsm_file_unreadable", f"cannot read archived timeline file {uri}: {exc}")
    n = data.num_rows
    requested = _as_string(data.column("instantTime"))
    index = pa.array(np.arange(n, dtype=np.int64))
    table = pa.table({
        "requested_time": requested,
        "action": _as_string(data.column("action")),
        "state": pa.repeat("COMPLETED", n).cast(pa.string()),
        "completion_time": _as_string(data.column("completionTime")),
        "archive_file": pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([path])),
        "block_offset": pa.nulls(n, pa.int64()),
        "record_index": index,
        "error_code": pa.nulls(n, pa.string()),
        "error": pa.nulls(n, pa.string()),
    }, schema=ARCHIVE_LISTING_SCHEMA)
    bad = pc.or_(pc.is_null(table["requested_time"]), pc.is_null(table["action"]))
    if pc.any(bad).as_py():
        count = pc.sum(bad.cast(pa.int64())).as_py()
        table = table.filter(pc.invert(bad))
        err = _error_table(path, "lsm_row_invalid", f"{uri}: {count} row(s) without instantTime or action skipped")
        table = pa.concat_tables([table, err])
    if time_range is not None and not time_range.is_open:
        in_range = pc.is_valid(table["requested_time"])
        if time_range.since is not None:
            in_range = pc.and_(in_range, pc.greater_equal(table["requested_time"], time_range.since))
        if time_range.until is not None:
            in_range = pc.and_(in_range, pc.less_equal(table["requested_time"], time_range.until))
        table = table.filter(pc.or_(pc.is_valid(table["error"]), pc.fill_null(in_range, False)))
    return table


def list_lsm_files(spec: StorageSpec, paths: list[str], since: str | None = None,
                   until: str | None = None) -> pa.Table:
    """Pure batch function (executor-ready): :data:`ARCHIVE_LISTING_SCHEMA` rows of LSM files."""
    storage = spec.open()
    time_range = TimeRange(since, until)
    tables = [read_lsm_file_rows(storage, p, time_range) for p in paths]
    if not tables:
        return ARCHIVE_LISTING_SCHEMA.empty_table()
    return pa.concat_tables(tables)


# -- bodies on demand --------------------------------------------------------------------------


def read_lsm_row_bytes(storage: ReadOnlyStorage, path: str, record_index: int, requested_time: str
                       ) -> tuple[bytes | None, bytes | None]:
    """(`metadata`, `plan`) bytes of one row.

    Only the row group holding the row is read, streamed in small batches that stop at the row, so
    memory stays bounded even when a compacted LSM file holds a million instants in one row group.
    """
    uri = storage.uri_of(path)
    row: dict[str, Any] | None = None
    try:
        with storage.open_read(path) as handle:
            pf = pq.ParquetFile(handle, buffer_size=1 << 20)
            present = [c for c in ("instantTime", "metadata", "plan") if c in pf.schema_arrow.names]
            start = 0
            for rg in range(pf.metadata.num_row_groups):
                rows = pf.metadata.row_group(rg).num_rows
                if record_index < start + rows:
                    for batch in pf.iter_batches(batch_size=_BODY_BATCH_ROWS, row_groups=[rg], columns=present,
                                                 use_threads=False):
                        if record_index < start + batch.num_rows:
                            row = batch.slice(record_index - start, 1).to_pylist()[0]
                            break
                        start += batch.num_rows
                    break
                start += rows
            if row is None:
                raise DecodeError(f"{uri} has no row {record_index}")
    except (StorageError, OSError, pa.ArrowException, UnicodeDecodeError, ValueError) as exc:  # damaged footers
        raise DecodeError(f"cannot read archived timeline file {uri}: {exc}") from exc
    if row.get("instantTime") != requested_time:
        raise DecodeError(f"{uri} row {record_index} is {row.get('instantTime')}, not {requested_time}")
    return row.get("metadata"), row.get("plan")


def lsm_file_path(history_dir: str, name: str) -> str:
    """Root-relative path of one history file."""
    return posixpath.join(history_dir, name)
