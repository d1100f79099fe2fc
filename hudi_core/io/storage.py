"""Read-only access to a table's files: the one door every read goes through.

Every byte the engine reads from a table comes through :class:`ReadOnlyStorage`. It offers list,
stat, read and ranged read, and nothing else: any write, delete or move raises
:class:`~hudi_core.errors.ReadOnlyViolation`. Paths are relative to the storage root (the table's
base path), use ``/`` and may not climb out of the root with ``..``.

What is the same on every store lives here: paths resolved and confined (``confine_to``), the size limit of
each kind of file read whole, findings about what a listing skipped, and errors worded with the file's URI.
How each store lists and reads is its backend's (:mod:`hudi_core.io.backends`: local disk without fsspec's
per-call overhead, obstore on S3, any fsspec file system).

A :class:`StorageSpec` (URI plus fsspec options) is a small picklable value, so executors can
re-open the same storage in another thread, process or Spark executor.
"""

from __future__ import annotations

import builtins
import os
import posixpath
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from hudi_core.errors import Finding, ReadOnlyViolation, Severity, StorageError
from hudi_core.io.backends import (
    MTIME_MS_MAX,
    MTIME_MS_MIN,
    Backend,
    Entry,
    FileInfo,
    backend_errors,
    describe_error,
    etag_of,
    local_root,
    open_backend,
)
from hudi_core.io.backends import mtime_ms_of as _mtime_ms

__all__ = ["BAD_MTIME", "MTIME_MS_MAX", "MTIME_MS_MIN", "FileInfo", "ReadOnlyStorage", "StorageSpec",
           "bad_mtime_finding", "describe_error", "inline_if_local", "local_root", "normalize_relative",
           "read_kind", "read_limits"]

_WRITE_METHODS = frozenset(
    {
        "write", "write_bytes", "write_text", "pipe", "pipe_file", "put", "put_file", "upload",
        "touch", "mkdir", "makedirs", "mkdirs", "rm", "rm_file", "rmdir", "delete", "remove",
        "unlink", "mv", "move", "rename", "cp", "copy", "cp_file", "copy_file", "setxattrs",
        "create", "append", "truncate", "chmod", "symlink",
    }
)


#: Size limits per kind of metadata file read whole: a file larger than its limit is refused
#: with a :class:`StorageError` naming it, never read until memory runs out. Override with
#: ``HUDI_INSPECTOR_READ_LIMITS="properties=1048576,instant=..."`` (bytes) or `ReadOnlyStorage(read_limits=…)`.
DEFAULT_READ_LIMITS: dict[str, int] = {
    "properties": 1 << 20,           # hoodie.properties (+ .backup): a few KB in practice
    "archive_manifest": 64 << 20,    # layout-2 LSM manifest / version files
    "instant": 1 << 30,              # instant bodies: commit metadata of a huge commit is tens of MB
    "archive_log": 2 << 30,          # layout-1 archived log files
    "other": 1 << 30,
}
READ_LIMITS_ENV = "HUDI_INSPECTOR_READ_LIMITS"

#: Folders listed at once on an object store (:meth:`ReadOnlyStorage.list_entries_many`).
LIST_CONCURRENCY = 32


def read_kind(path: str) -> str:
    """The kind of metadata file a root-relative path is, for its size limit."""
    name = posixpath.basename(path)
    if name.startswith("hoodie.properties"):
        return "properties"
    if "/archived" in f"/{path}" or "/history" in f"/{path}":
        if name.startswith(("manifest_", "_version_")) or name == "LATEST_SNAPSHOT_VERSION":
            return "archive_manifest"
        return "archive_log"
    if path.startswith(".hoodie/"):
        return "instant"
    return "other"


def read_limits(overrides: dict[str, int] | None = None) -> dict[str, int]:
    """The limits in force: defaults, then ``HUDI_INSPECTOR_READ_LIMITS``, then `overrides`."""
    limits = dict(DEFAULT_READ_LIMITS)
    for pair in os.environ.get(READ_LIMITS_ENV, "").split(","):
        key, sep, value = pair.strip().partition("=")
        if sep and key in limits and value.strip().isascii() and value.strip().isdigit():
            limits[key] = int(value)
    limits.update(overrides or {})
    return limits


@dataclass(frozen=True)
class StorageSpec:
    """Where a storage root is and how to reach it: enough to re-open it anywhere.

    `confine_to` (local roots only): resolved folders every opened path must stay under, symlinks
    followed (the dashboard sets it from `HUDI_INSPECTOR_ROOTS`).
    """

    uri: str
    options: tuple[tuple[str, Any], ...] = ()
    confine_to: tuple[str, ...] = ()

    @classmethod
    def of(cls, uri: str, storage_options: dict[str, Any] | None = None,
           confine_to: tuple[str, ...] = ()) -> StorageSpec:
        return cls(uri, tuple(sorted((storage_options or {}).items())), tuple(confine_to))

    def open(self) -> ReadOnlyStorage:
        return ReadOnlyStorage(self.uri, dict(self.options), confine_to=self.confine_to or None)


BAD_MTIME = "bad_modification_time"


def bad_mtime_finding(where: str, mtime_ms: int | None) -> Finding:
    """The finding for a file whose modification time is no date (`mtime_ms` as storage gave it, if known)."""
    when = ""
    if mtime_ms is not None:
        year = 1970 + int(mtime_ms // 31_556_952_000)  # mean Gregorian years since the epoch
        when = f" ({mtime_ms // 1000} s after 1970-01-01, about year {year})"
    return Finding(Severity.WARNING, BAD_MTIME, where,
                   f"the modification time of {where}{when} lies outside years 1 to 9999, where no date can "
                   "be: taken as unknown; "
                   "the file is still listed, and where its modification time is the completion time (layout 1) "
                   "that completion time is unknown")


def normalize_relative(path: str) -> str:
    """Clean a root-relative path; refuse absolute paths and `..` escapes."""
    if path in ("", "."):
        return ""
    if path.startswith("/") or "://" in path:
        raise StorageError(f"expected a path relative to the table root, got {path!r}")
    clean = posixpath.normpath(path)
    if clean == ".":
        return ""
    if clean == ".." or clean.startswith("../"):
        raise StorageError(f"path {path!r} leaves the table root")
    return clean


class ReadOnlyStorage:
    """List, stat and read files under one root; refuse everything that would change them.

    Hardened: `read`, `read_range` and `open_read` open regular files only (a FIFO, device or socket is a
    :class:`StorageError` naming it, never a hang), `read` refuses files larger than the limit of their kind
    (:func:`read_limits`), listed names that are not UTF-8 are skipped and recorded in :attr:`findings`, and with
    `confine_to` every local path must resolve under those folders. The store itself is reached through a
    :class:`~hudi_core.io.backends.Backend`.
    """

    def __init__(self, uri: str, storage_options: dict[str, Any] | None = None,
                 confine_to: tuple[str, ...] | list[str] | None = None,
                 read_limits: dict[str, int] | None = None) -> None:
        self._spec = StorageSpec.of(uri, storage_options, tuple(confine_to or ()))
        self._limits = globals()["read_limits"](read_limits)
        self.findings: list[Any] = []  # Finding objects: names skipped while listing, times that are no date
        #: uri -> the modification time (epoch ms) of each file whose time is no date (:data:`BAD_MTIME`)
        self.bad_mtimes: dict[str, int] = {}
        self._uri = uri.rstrip("/")
        self._backend: Backend = open_backend(uri, dict(storage_options or {}), self)
        self._root = self._backend.root

    # -- identity -------------------------------------------------------------------------------
    @property
    def spec(self) -> StorageSpec:
        return self._spec

    @property
    def uri(self) -> str:
        return self._uri

    @property
    def backend(self) -> Backend:
        """How this store is listed and read (:mod:`hudi_core.io.backends`)."""
        return self._backend

    @property
    def protocol(self) -> str:
        return self._backend.protocol

    @property
    def is_local(self) -> bool:
        """Whether the root is on the local file system (served by the local backend)."""
        return self._backend.is_local

    def uri_of(self, path: str) -> str:
        """The full URI of a root-relative path, for messages and reports."""
        rel = normalize_relative(path)
        return f"{self._uri}/{rel}" if rel else self._uri

    def location_of(self, path: str) -> str:
        """The resolved absolute location of a root-relative path, for cache keys: locally ``file://`` and the
        real path (relative roots, ``..`` and symlinks resolved, so the same relative path used from two folders
        names two locations and two spellings of one folder name one); elsewhere the URI with its scheme in
        lower case and repeated slashes collapsed."""
        uri = self.uri_of(path)
        if self.is_local:
            target = self._abs(path)
            return "file://" + os.path.realpath(os.path.abspath(target.removeprefix("file://")))
        scheme, sep, rest = uri.partition("://")
        if not sep:
            return uri
        while "//" in rest:
            rest = rest.replace("//", "/")
        return f"{scheme.lower()}://{rest.rstrip('/')}"

    def child(self, path: str) -> ReadOnlyStorage:
        """A storage rooted at a sub-folder (the metadata table, for instance)."""
        return ReadOnlyStorage(self.uri_of(path), dict(self._spec.options), confine_to=self._spec.confine_to or None,
                               read_limits=self._limits)

    # -- the rules every store shares: paths, confinement, findings, limits ---------------------
    def _abs(self, path: str) -> str:
        rel = normalize_relative(path)
        target = self._root if not rel else (
            self._root + rel if self._root.endswith("/") else f"{self._root}/{rel}")
        if self._spec.confine_to and self.is_local:
            self._check_confined(target, path)
        return target

    def _check_confined(self, target: str, path: str) -> None:
        """Refuse a local path whose real path (symlinks followed) leaves every allowed root."""
        real = os.path.realpath(target)
        for root in self._spec.confine_to:
            if real == root or real.startswith(root.rstrip("/") + "/"):
                return
        raise StorageError(f"{self.uri_of(path)} resolves to {real}, outside the allowed roots "
                           f"({', '.join(self._spec.confine_to)}): refused")

    def record_not_regular(self, folder: str, name: str, kind: str) -> None:
        where = self.uri_of(f"{folder}/{name}" if folder else name)
        self.findings.append(Finding(Severity.ERROR, "not_a_regular_file", where,
                                     f"{where} is {kind}, not a regular file: skipped, never read"))

    def record_bad_name(self, folder: str, name: str) -> None:
        shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        where = self.uri_of(folder) if folder else self._uri
        self.findings.append(Finding(Severity.WARNING, "undecodable_file_name", f"{where}/{shown}",
                                     f"file name {shown} in {where} is not valid UTF-8; skipped"))

    def checked_mtime(self, rel: str, mtime_ms: int) -> int | None:
        """A modification time, or ``None`` (recorded in :attr:`findings`) when it is no date."""
        if MTIME_MS_MIN <= mtime_ms <= MTIME_MS_MAX:
            return mtime_ms
        where = self.uri_of(rel)
        if where not in self.bad_mtimes:
            self.bad_mtimes[where] = mtime_ms
            self.findings.append(bad_mtime_finding(where, mtime_ms))
        return None

    def limit_of(self, path: str) -> int:
        """The size limit of a file read whole (:func:`read_kind`, :func:`read_limits`)."""
        limit: int = self._limits[read_kind(normalize_relative(path))]
        return limit

    def _over_limit(self, path: str, limit: int) -> StorageError:
        return StorageError(f"{self.uri_of(path)} is larger than the {limit}-byte limit for "
                            f"{read_kind(normalize_relative(path))} files ({READ_LIMITS_ENV}): not read")

    # -- listing --------------------------------------------------------------------------------
    def list(self, path: str = "") -> builtins.list[FileInfo]:
        """Direct children of a folder, sorted by name. A missing folder lists as empty."""
        return self._backend.list(self._abs(path), normalize_relative(path))

    def list_entries(self, path: str = "") -> builtins.list[Entry]:
        """`(name, size, mtime_ms, is_dir)` of a folder's direct children, sorted by name: :meth:`list`
        without building a :class:`FileInfo` per entry (performance: partitions of 100k files)."""
        return self._backend.list_entries(self._abs(path), normalize_relative(path))

    def list_entries_many(self, paths: Sequence[str]) -> builtins.list[builtins.list[Entry]]:
        """:meth:`list_entries` of several folders, in order (the first failure raises, as a loop
        would). Locally one after another; on an object store concurrently through a bounded pool, so
        a level of 100 partitions costs one wave of LIST round trips, not 200 one after another."""
        if self.is_local or len(paths) <= 1:
            return [self.list_entries(p) for p in paths]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=min(LIST_CONCURRENCY, len(paths))) as pool:
            return list(pool.map(self.list_entries, paths))

    def list_after(self, path: str, start_after: str,
                   max_entries: int = 1000) -> tuple[builtins.list[FileInfo], bool] | None:
        """Direct children of a folder whose names sort after `start_after`, sorted by name, at most
        `max_entries`: `(entries, truncated)`. On S3 this is ONE ListObjectsV2 request (`StartAfter` with
        the ``/`` delimiter, one page), which is what lets a follower poll a folder of thousands of
        files for a change at the cost of one request. Locally the folder is read and filtered.
        ``None`` where the store offers no such request through its client (GCS, Azure, other fsspec
        back-ends): the caller lists the whole folder instead."""
        if self.is_local:
            entries = [i for i in self.list(path) if i.name > start_after]
            return entries[:max_entries], len(entries) > max_entries
        if self.protocol not in ("s3", "s3a"):
            return None
        prefix = self._abs(path).strip("/")
        bucket, _, key_prefix = prefix.partition("/")
        key_prefix = f"{key_prefix}/" if key_prefix else ""
        try:
            # s3fs's botocore client: obstore has no delimiter listing that starts after a key.
            page = self._backend.fs.call_s3(  # type: ignore[attr-defined]
                "list_objects_v2", Bucket=bucket, Prefix=key_prefix, Delimiter="/",
                StartAfter=key_prefix + start_after, MaxKeys=max_entries)
        except FileNotFoundError:
            return [], False
        except backend_errors() as exc:
            raise StorageError(f"cannot list {self.uri_of(path)}: {describe_error(exc)}") from exc
        rel = normalize_relative(path)
        base = f"{rel}/" if rel else ""
        infos = [FileInfo(base + p["Prefix"][len(key_prefix):].rstrip("/"), 0, None, True)
                 for p in page.get("CommonPrefixes") or []]
        for obj in page.get("Contents") or []:
            name = obj["Key"][len(key_prefix):]
            if not name or name.endswith("/"):
                continue  # the folder's own marker object, as `list` skips it
            infos.append(FileInfo(base + name, int(obj.get("Size") or 0), _mtime_ms(obj), False, etag_of(obj)))
        return sorted(infos, key=lambda i: i.path), bool(page.get("IsTruncated"))

    def walk_files(self, path: str = "", skip_dirs: frozenset[str] = frozenset()) -> Iterator[FileInfo]:
        """Every file under a folder, depth first, skipping folders whose name is in `skip_dirs`."""
        for info in self.list(path):
            if info.is_dir:
                if info.name not in skip_dirs:
                    yield from self.walk_files(info.path, skip_dirs)
            else:
                yield info

    # -- one path -------------------------------------------------------------------------------
    def stat(self, path: str) -> FileInfo:
        return self._backend.stat(self._abs(path), normalize_relative(path))

    def exists(self, path: str) -> bool:
        """Whether the path exists. On an object store, an error other than "not found" (access denied,
        throttling after retries, endpoint down) is a StorageError: never taken for "no such file"."""
        try:
            return self._backend.exists(self._abs(path))
        except backend_errors() as exc:
            raise StorageError(f"cannot check {self.uri_of(path)}: {describe_error(exc)}") from exc

    def is_dir(self, path: str) -> bool:
        try:
            return self._backend.is_dir(self._abs(path))
        except backend_errors() as exc:
            raise StorageError(f"cannot check {self.uri_of(path)}: {describe_error(exc)}") from exc

    # -- reading --------------------------------------------------------------------------------
    def read(self, path: str, max_bytes: int | None = None) -> bytes:
        """The whole file, refused beyond `max_bytes` (default: the limit of its kind)."""
        limit = self.limit_of(path) if max_bytes is None else max_bytes
        try:
            # At most one byte past the limit, which is enough to tell an oversized file.
            data = self._backend.read_prefix(self._abs(path), normalize_relative(path), limit + 1)
        except FileNotFoundError as exc:
            raise StorageError(f"{self.uri_of(path)} does not exist") from exc
        except IsADirectoryError as exc:
            raise StorageError(f"{self.uri_of(path)} is a folder, not a file") from exc
        except backend_errors() as exc:
            raise StorageError(f"cannot read {self.uri_of(path)}: {self._backend.why(exc)}") from exc
        if len(data) > limit:
            raise self._over_limit(path, limit)
        return data

    def read_many(self, paths: Sequence[str]) -> dict[str, bytes | StorageError]:
        """Whole files, fetched together: each path maps to its bytes or to the :class:`StorageError`
        that reading it raised (one bad file never fails the rest).

        On an object store this is one concurrent wave of ranged GETs (obstore on S3 where it applies,
        else fsspec's async `cat_ranges`) instead of one round trip after another, so latency is paid
        once per wave, not once per file. Locally it is a loop over :meth:`read`.
        """
        if not paths:
            return {}
        if not self._backend.batches_reads():
            out: dict[str, bytes | StorageError] = {}
            for path in paths:
                try:
                    out[path] = self.read(path)
                except StorageError as exc:
                    out[path] = exc
            return out
        unique = list(dict.fromkeys(paths))
        limits = [self.limit_of(p) for p in unique]
        # Ranged GETs (0 .. limit+1): one request per file, and an oversized file costs one byte past its
        # limit. (An unranged s3fs `cat` costs a HEAD first: it sizes the object for a chunked download.)
        fetched = self.read_ranges([(p, 0, limit + 1) for p, limit in zip(unique, limits, strict=True)])
        return {p: data if isinstance(data, StorageError) else
                (self._over_limit(p, limit) if len(data) > limit else data)
                for p, limit, data in zip(unique, limits, fetched, strict=True)}

    def read_ranges(self, ranges: Sequence[tuple[str, int, int]]) -> builtins.list[bytes | StorageError]:
        """`(path, start, length)` ranges fetched together, in order: each its bytes (fewer at the end
        of the file) or the :class:`StorageError` reading it raised. One concurrent wave of ranged GETs
        on an object store (obstore on S3 where it applies, the rest and its failures through fsspec's
        `cat_ranges`); a loop over :meth:`read_range` locally."""
        if not self._backend.batches_reads():
            out: list[bytes | StorageError] = []
            for path, start, length in ranges:
                try:
                    out.append(self.read_range(path, start, length))
                except StorageError as exc:
                    out.append(exc)
            return out
        if not ranges:
            return []
        return self._backend.read_ranges([(self._abs(p), normalize_relative(p), start, start + n)
                                          for p, start, n in ranges])

    def read_range(self, path: str, start: int, length: int) -> bytes:
        """`length` bytes from `start` (fewer at the end of the file)."""
        if start < 0 or length < 0:
            raise StorageError(f"bad range {start}+{length} for {self.uri_of(path)}")
        if length == 0:
            return b""
        try:
            return self._backend.read_range(self._abs(path), normalize_relative(path), start, length)
        except FileNotFoundError as exc:
            raise StorageError(f"{self.uri_of(path)} does not exist") from exc
        except backend_errors() as exc:
            raise StorageError(f"cannot read {self.uri_of(path)} at {start}: {self._backend.why(exc)}") from exc

    def open_read(self, path: str, block_size: int | None = None) -> Any:
        """A seekable binary reader (for pyarrow/parquet footers and ranged scans)."""
        try:
            return self._backend.open_read(self._abs(path), normalize_relative(path), block_size)
        except FileNotFoundError as exc:
            raise StorageError(f"{self.uri_of(path)} does not exist") from exc
        except backend_errors() as exc:
            raise StorageError(f"cannot open {self.uri_of(path)}: {self._backend.why(exc)}") from exc

    def open(self, path: str, mode: str = "rb") -> Any:
        if mode != "rb":
            raise ReadOnlyViolation(f"refused to open {self.uri_of(path)} in mode {mode!r}: storage is read-only")
        return self.open_read(path)

    # -- everything else is refused -------------------------------------------------------------
    def __getattr__(self, name: str) -> Any:
        if name in _WRITE_METHODS:
            def refuse(*_args: Any, **_kwargs: Any) -> None:
                raise ReadOnlyViolation(f"refused {name}(): the inspector never changes a table it reads")

            return refuse
        raise AttributeError(name)


def inline_if_local(executor: Any, storage: ReadOnlyStorage, items: int | None = None) -> Any:
    """The executor to give a bulk stage over `storage`: ``None`` (run inline, in order) instead of the
    local thread pool when the files are local, and instead of Spark for a stage of `items` below the
    Spark executor's `min_items` (it would run on the driver anyway).

    Performance: on a local disk the batch functions are CPU-bound Python; under the GIL
    a thread pool makes them 2-2.5x slower (threads convoy on every released read), so one thread is
    fastest, and a caller running inline may skip the Arrow transport a batch needs between processes.
    Remote storage keeps the pool (there it hides I/O latency), a large stage keeps Spark. The result
    is the same either way: the same work over the same items, in order.
    """
    if not storage.is_local:
        return executor
    name = getattr(executor, "name", None)
    if name == "local":
        return None
    if name == "spark" and items is not None and items < getattr(executor, "min_items", 0):
        return None
    return executor
