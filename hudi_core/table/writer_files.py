"""What running writers leave beside the timeline, read-only: heartbeats, the storage lock, markers.

* Heartbeats: ``.hoodie/.heartbeat/<instant time>``, an empty file a writer re-creates every
  ``hoodie.client.heartbeat.interval_in_ms``; its modification time is the last heartbeat
  (`HoodieHeartbeatClient`, `HeartbeatUtils`). Hudi deletes it when the write commits or is rolled back.
* The storage-based lock (`StorageBasedLockProvider`, Hudi 1.1): ``.hoodie/.locks/table_lock.json``, JSON with
  ``owner``, ``validUntil`` (epoch ms) and ``expired`` (set on release, the file stays); audit files, when
  auditing is on, ``.hoodie/.locks/audit/<transaction start ms>_<owner>.jsonl`` (`StorageLockProviderAuditService`:
  one JSON line per START / RENEW / END with ``ownerId``, ``transactionStartTime``, ``timestamp``, ``state``,
  ``lockExpiration``, ``lockHeld``).
* Markers: ``.hoodie/.temp/<instant time>/``, one per data file a write creates, merges or appends to. Direct markers
  are empty files ``<partition>/<file>.marker.<IOType>``; timeline-server-based markers are lines of
  ``MARKERS<n>`` files, with ``MARKERS.type`` naming the type (`MarkerUtils`, `TimelineServerBasedWriteMarkers`).
  Hudi deletes the folder after the instant commits (`WriteMarkers.quietDeleteMarkerDir`).

Nothing here judges: :mod:`hudi_core.services.writers` applies Hudi's rules to what is read.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from hudi_core.errors import Finding, Severity, StorageError
from hudi_core.io.storage import FileInfo, ReadOnlyStorage

HEARTBEAT_DIR = ".hoodie/.heartbeat"
LOCKS_DIR = ".hoodie/.locks"
#: `StorageBasedLockProvider.DEFAULT_TABLE_LOCK_FILE_NAME`.
LOCK_FILE = f"{LOCKS_DIR}/table_lock.json"
AUDIT_DIR = f"{LOCKS_DIR}/audit"
TEMP_DIR = ".hoodie/.temp"
#: `MarkerUtils.MARKER_TYPE_FILENAME` and the prefix of the timeline server's marker files.
MARKERS_TYPE_FILE = "MARKERS.type"
MARKERS_FILE_PREFIX = "MARKERS"
DIRECT = "DIRECT"
TIMELINE_SERVER_BASED = "TIMELINE_SERVER_BASED"
#: `IOType` suffixes of a marker name.
_MARKER_NAME = re.compile(r"\.marker\.(CREATE|MERGE|APPEND)$")
_INSTANT = re.compile(r"^\d{14}(\d{3})?$")
#: Largest lock, audit or marker-list file read (they are a few KiB; a larger one is not Hudi's).
_MAX_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True)
class Heartbeat:
    """One heartbeat file: the instant it beats for and its modification time (the last heartbeat)."""

    instant: str
    path: str
    mtime_ms: int | None


@dataclass(frozen=True)
class LockFile:
    """The storage-based lock provider's lock file as read (`StorageLockData`)."""

    path: str
    owner: str | None
    valid_until_ms: int | None
    expired: bool | None
    mtime_ms: int | None
    #: Why the file could not be read as a lock (then the other fields are ``None``).
    error: str | None = None


@dataclass(frozen=True)
class AuditRecord:
    """One line of a lock audit file."""

    owner_id: str | None
    transaction_start_ms: int | None
    timestamp_ms: int | None
    state: str | None
    lock_expiration_ms: int | None
    lock_held: bool | None


@dataclass(frozen=True)
class AuditFile:
    """One lock audit file: one transaction of one owner."""

    path: str
    records: tuple[AuditRecord, ...]
    error: str | None = None


@dataclass(frozen=True)
class MarkerDir:
    """The markers of one instant."""

    instant: str
    path: str
    marker_type: str
    #: Where the type came from: the ``MARKERS.type`` file, or its absence (direct markers write none).
    type_source: str
    count: int
    #: Marker names (``<partition>/<file>.marker.<IOType>``), sorted.
    markers: tuple[str, ...]


@dataclass
class WriterFiles:
    """Everything writers left in ``.hoodie/`` besides the timeline."""

    heartbeats: dict[str, Heartbeat] = field(default_factory=dict)
    lock: LockFile | None = None
    audit: list[AuditFile] = field(default_factory=list)
    markers: dict[str, MarkerDir] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    def heartbeat_ms(self, instant: str) -> int:
        """`HoodieHeartbeatClient.getLastHeartbeatTime`: the file's modification time, 0 when it is missing."""
        beat = self.heartbeats.get(instant)
        return beat.mtime_ms or 0 if beat is not None else 0


def _int(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    return None


def _bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    return None


def parse_lock(data: bytes, path: str, mtime_ms: int | None) -> LockFile:
    """A lock file's bytes as a :class:`LockFile` (an unreadable one keeps the reason in `error`)."""
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return LockFile(path, None, None, None, mtime_ms, f"not JSON: {exc}")
    if not isinstance(obj, dict):
        return LockFile(path, None, None, None, mtime_ms, "not a JSON object")
    owner = obj.get("owner", obj.get("ownerId"))
    return LockFile(path, str(owner) if owner is not None else None, _int(obj.get("validUntil")),
                    _bool(obj.get("expired")), mtime_ms)


def parse_audit(data: bytes, path: str) -> AuditFile:
    """A JSONL audit file; lines that are not JSON objects make the file's `error`."""
    records: list[AuditRecord] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return AuditFile(path, (), f"not UTF-8: {exc}")
    bad = 0
    for line in text.splitlines():
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            bad += 1
            continue
        if not isinstance(obj, dict):
            bad += 1
            continue
        owner = obj.get("ownerId")
        state = obj.get("state")
        records.append(AuditRecord(str(owner) if owner is not None else None, _int(obj.get("transactionStartTime")),
                                   _int(obj.get("timestamp")), str(state) if state is not None else None,
                                   _int(obj.get("lockExpiration")), _bool(obj.get("lockHeld"))))
    return AuditFile(path, tuple(records), f"{bad} line(s) are not JSON objects" if bad else None)


def _read(storage: ReadOnlyStorage, info: FileInfo, findings: list[Finding]) -> bytes | None:
    if info.size > _MAX_BYTES:
        findings.append(Finding(Severity.WARNING, "writer_file_too_large", storage.uri_of(info.path),
                                f"{info.size} bytes: not read (Hudi writes a few KiB here)"))
        return None
    try:
        return storage.read(info.path)
    except StorageError as exc:
        findings.append(Finding(Severity.ERROR, "writer_file_unreadable", storage.uri_of(info.path), str(exc)))
        return None


def _list(storage: ReadOnlyStorage, path: str, findings: list[Finding]) -> list[FileInfo]:
    try:
        return storage.list(path)
    except StorageError as exc:
        findings.append(Finding(Severity.ERROR, "writer_files_unlisted", storage.uri_of(path), str(exc)))
        return []


def read_markers(storage: ReadOnlyStorage, instant: str, path: str, findings: list[Finding]) -> MarkerDir:
    """One instant's marker folder: its type and marker names, from one walk of the folder (a marker folder holds
    a file per data file written, in partition sub-folders)."""
    prefix = path.rstrip("/") + "/"
    try:
        files = list(storage.walk_files(path))
    except StorageError as exc:
        findings.append(Finding(Severity.ERROR, "writer_files_unlisted", storage.uri_of(path), str(exc)))
        files = []
    top = {info.path[len(prefix):]: info for info in files
           if info.path.startswith(prefix) and "/" not in info.path[len(prefix):]}
    type_info = top.get(MARKERS_TYPE_FILE)
    marker_type, source = DIRECT, f"no {MARKERS_TYPE_FILE} file (direct markers write none)"
    if type_info is not None:
        data = _read(storage, type_info, findings)
        text = data.decode("utf-8", "replace").strip() if data is not None else ""
        marker_type, source = (text or "UNKNOWN"), MARKERS_TYPE_FILE
    markers: list[str] = []
    for name, info in sorted(top.items()):
        if name != MARKERS_TYPE_FILE and name.startswith(MARKERS_FILE_PREFIX):  # a timeline server's marker list
            data = _read(storage, info, findings)
            if data is not None:
                markers.extend(line.strip() for line in data.decode("utf-8", "replace").splitlines()
                               if line.strip())
    for info in files:
        if _MARKER_NAME.search(info.path):
            markers.append(info.path[len(prefix):] if info.path.startswith(prefix) else info.path)
    return MarkerDir(instant, path, marker_type, source, len(markers), tuple(sorted(set(markers))))


def read_heartbeats(storage: ReadOnlyStorage, out: WriterFiles | None = None) -> WriterFiles:
    """The heartbeat files only (one listing): what the clean's rollbacks and a watch's poll need."""
    out = out if out is not None else WriterFiles()
    for info in _list(storage, HEARTBEAT_DIR, out.findings):
        name = posixpath.basename(info.path)
        if not info.is_dir and _INSTANT.match(name):
            out.heartbeats[name] = Heartbeat(name, info.path, info.mtime_ms)
    return out


def read_writer_files(storage: ReadOnlyStorage) -> WriterFiles:
    """Heartbeats, the lock file, lock audit files and marker folders of the table at `storage`'s root."""
    out = read_heartbeats(storage)
    for info in _list(storage, LOCKS_DIR, out.findings):
        if info.path == LOCK_FILE and not info.is_dir:
            data = _read(storage, info, out.findings)
            if data is not None:
                out.lock = parse_lock(data, info.path, info.mtime_ms)
        elif info.path == AUDIT_DIR and info.is_dir:
            for audit in _list(storage, AUDIT_DIR, out.findings):
                if not audit.is_dir and audit.path.endswith(".jsonl"):
                    data = _read(storage, audit, out.findings)
                    if data is not None:
                        out.audit.append(parse_audit(data, audit.path))
    for info in _list(storage, TEMP_DIR, out.findings):
        name = posixpath.basename(info.path)
        if info.is_dir and _INSTANT.match(name):
            out.markers[name] = read_markers(storage, name, info.path, out.findings)
    return out


__all__ = ["AUDIT_DIR", "DIRECT", "HEARTBEAT_DIR", "LOCKS_DIR", "LOCK_FILE", "MARKERS_TYPE_FILE", "TEMP_DIR",
           "TIMELINE_SERVER_BASED", "AuditFile", "AuditRecord", "Heartbeat", "LockFile", "MarkerDir", "WriterFiles",
           "parse_audit", "parse_lock", "read_heartbeats", "read_markers", "read_writer_files"]
