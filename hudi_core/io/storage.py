"""Read-only access to a table's files through fsspec.

Every byte the engine reads from a table comes through :class:`ReadOnlyStorage`. It offers list,
stat, read and ranged read, and nothing else: any write, delete or move raises
:class:`~hudi_core.errors.ReadOnlyViolation`. Paths are relative to the storage root (the table's
base path), use ``/`` and may not climb out of the root with ``..``.

A :class:`StorageSpec` (URI plus fsspec options) is a small picklable value, so executors can
re-open the same storage in another thread, process or Spark executor.

Local fast path (performance, issues 6 and 11): on fsspec's local file system, `list`, `stat`,
`exists`, `read` and `read_range` go straight to `os.scandir` / `os.stat` / `open` (read-only mode
``"rb"`` only) and give exactly what fsspec's `LocalFileSystem` would (same entries, sizes,
modification times, bytes and errors), minus its per-call overhead, which dominates when a table has a
million files. A plain local path does not even import fsspec (a tenth of `info`'s start-up): the
root is resolved as fsspec resolves it (:func:`local_root`) and fsspec comes in only for `open_read`.
"""

from __future__ import annotations

import builtins
import datetime as dt
import errno
import os
import posixpath
import stat as stat_mode
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from hudi_core.errors import Finding, ReadOnlyViolation, Severity, StorageError

_WRITE_METHODS = frozenset(
    {
        "write", "write_bytes", "write_text", "pipe", "pipe_file", "put", "put_file", "upload",
        "touch", "mkdir", "makedirs", "mkdirs", "rm", "rm_file", "rmdir", "delete", "remove",
        "unlink", "mv", "move", "rename", "cp", "copy", "cp_file", "copy_file", "setxattrs",
        "create", "append", "truncate", "chmod", "symlink",
    }
)


#: Size limits per kind of metadata file read whole (issue 16): a file larger than its limit is refused
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


@dataclass(frozen=True)
class FileInfo:
    """One directory entry. `path` is relative to the storage root; `mtime_ms` is epoch millis."""

    path: str
    size: int
    mtime_ms: int | None
    is_dir: bool
    #: The object store's ETag where its listing gives one (``None`` on local disk): a version key for caches.
    etag: str | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)


#: The modification times (epoch milliseconds) a reader can turn into a date in any zone: `datetime` holds
#: years 1 to 9999, and a day inside each end leaves room for a zone's offset. tmpfs keeps times far
#: beyond (``os.utime(path, (1.8e12, 1.8e12))`` is year 59009; ext4 clamps at 2446): such a time is
#: unknown (``None``) with a :data:`BAD_MTIME` finding naming the file, never a crash (issue 28).
MTIME_MS_MIN = -62_135_510_400_000  # 0001-01-02T00:00:00Z
MTIME_MS_MAX = 253_402_214_400_000  # 9999-12-31T00:00:00Z
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


def _etag(info: dict[str, Any]) -> str | None:
    """The ETag a listing entry carries (S3 `ETag`, obstore `e_tag`, GCS and Azure `etag`), or ``None``."""
    for key in ("ETag", "e_tag", "etag"):
        value = info.get(key)
        if value:
            return str(value)
    return None


def _mtime_ms(info: dict[str, Any]) -> int | None:
    """Modification time from the many shapes fsspec back-ends report it in."""
    for key in ("mtime", "LastModified", "last_modified", "updated", "modified", "created", "ctime"):
        value = info.get(key)
        if value is None:
            continue
        if isinstance(value, (int, float)):
            # Seconds for local files; some stores report milliseconds. Bounded (issue 16): a value in
            # (1e11, 1e14) is milliseconds (years 1973-5138); anything larger or negative is no time.
            if value < 0 or value >= 1e14:
                return None
            return int(value if value > 1e11 else value * 1000)
        if isinstance(value, dt.datetime):
            if value.tzinfo is None:
                value = value.replace(tzinfo=dt.UTC)
            return int(value.timestamp() * 1000)
        if isinstance(value, str):
            try:
                parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
            except ValueError:
                continue
            if parsed.tzinfo is None:
                parsed = parsed.replace(tzinfo=dt.UTC)
            return int(parsed.timestamp() * 1000)
    return None


def describe_error(exc: BaseException) -> str:
    """One readable line for a storage back-end's exception (botocore/s3fs and Azure errors included): what
    went wrong and, where the cause is a usual one, what to check."""
    name = type(exc).__name__
    text = str(exc) or name
    lowered = f"{name} {text}".lower()
    if "nocredentials" in lowered or "unable to locate credentials" in lowered:
        return ("no credentials found (set AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_PROFILE, or pass "
                "--storage-option key=... --storage-option secret=...)")
    text = " ".join(text.split())  # SDK messages (Azure's) spread status and code over several lines
    if (isinstance(exc, PermissionError) or "accessdenied" in lowered or "forbidden" in lowered
            or "authorizationfailure" in lowered or "failed to authenticate" in lowered):
        return f"access denied ({text})"
    if ("nosuchbucket" in lowered or "bucket does not exist" in lowered or "containernotfound" in lowered
            or "container does not exist" in lowered):
        return f"no such bucket or container ({text})"
    if ("could not connect" in lowered or "cannot connect to host" in lowered or "connection refused" in lowered
            or "endpointconnectionerror" in lowered):
        return f"cannot reach the storage endpoint ({text})"
    if ("slowdown" in lowered or "throttl" in lowered or "503" in lowered or "service unavailable" in lowered
            or getattr(exc, "errno", None) == errno.EBUSY):  # s3fs maps 503 to EBUSY
        return f"the store kept throttling requests after retries ({text})"
    return f"{name}: {text}" if name not in text else text


def _backend_errors() -> tuple[type[BaseException], ...]:
    """What a file-system back-end raises for a failed request: OSError/ValueError, plus botocore's own
    errors that s3fs lets through (`NoCredentialsError` is not an OSError). Evaluated when an error
    is being matched, so botocore is never imported for it."""
    errors: tuple[type[BaseException], ...] = (OSError, ValueError)
    botocore_exceptions = sys.modules.get("botocore.exceptions")
    if botocore_exceptions is not None:
        errors += (botocore_exceptions.BotoCoreError,)
    azure_exceptions = sys.modules.get("azure.core.exceptions")  # adlfs lets Azure SDK errors through
    if azure_exceptions is not None:
        errors += (azure_exceptions.AzureError,)
    return errors


def _is_unsatisfiable_range(exc: BaseException) -> bool:
    """An object store's answer to a range past the end of an object (HTTP 416 / InvalidRange)."""
    text = f"{exc} {exc.__cause__ or ''}"
    return "InvalidRange" in text or "not satisfiable" in text or "416" in text.split()


def _gcs_at_custom_endpoint(uri: str, options: dict[str, Any]) -> tuple[Any, str] | None:
    """gcsfs's plain JSON-API file system for a `gs://` URL whose endpoint is not Google's (an emulator, a
    private endpoint: `endpoint_url` or `STORAGE_EMULATOR_HOST`). gcsfs 2026.x registers by default a file
    system that first asks the storage-control gRPC API for the bucket's layout; such an endpoint has no
    gRPC API, and each lookup waits out a 60 s timeout before falling back to the JSON API."""
    scheme, sep, _rest = uri.partition("://")
    if not sep or scheme not in ("gs", "gcs") or "::" in uri:
        return None
    if not (options.get("endpoint_url") or os.environ.get("STORAGE_EMULATOR_HOST")):
        return None
    try:
        from gcsfs.core import GCSFileSystem
    except ImportError as exc:
        raise ImportError("gs:// needs gcsfs: pip install .[gcs]") from exc
    return GCSFileSystem(**options), GCSFileSystem._strip_protocol(uri)


def local_root(uri: str, storage_options: dict[str, Any] | None = None) -> str | None:
    """The root fsspec's `url_to_fs` gives a local path or ``file://`` URL (`LocalFileSystem`'s
    `_strip_protocol`: absolute, ``~`` expanded, trailing ``/`` dropped), computed without importing
    fsspec; None for anything fsspec should resolve itself (another protocol, a chained URL, options,
    a non-POSIX system)."""
    if storage_options or os.sep != "/" or "::" in uri:
        return None
    if "://" in uri:
        for prefix in ("file://", "local://"):
            if uri.startswith(prefix):
                uri = uri[len(prefix):]
                break
        else:
            return None
    if not uri:
        return None
    if uri.startswith("~"):
        path = os.path.expanduser(uri)
    elif uri.startswith("/"):
        path = uri
    else:
        rel = "" if uri == "." else uri[2:] if uri.startswith("./") else uri
        path = f"{os.getcwd()}/{rel}"
    return path.rstrip("/") or "/"


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


_KIND_OF_MODE = (
    (stat_mode.S_ISFIFO, "a FIFO"), (stat_mode.S_ISCHR, "a character device"),
    (stat_mode.S_ISBLK, "a block device"), (stat_mode.S_ISSOCK, "a socket"), (stat_mode.S_ISDIR, "a folder"),
)


def _not_regular(mode: int) -> str | None:
    """What a non-regular file is (``None`` for a regular file)."""
    if stat_mode.S_ISREG(mode):
        return None
    return next((label for test, label in _KIND_OF_MODE if test(mode)), "not a regular file")


def is_valid_name(name: str) -> bool:
    """Whether a listed name is valid UTF-8 (os.scandir gives undecodable bytes as surrogates)."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class ReadOnlyStorage:
    """List, stat and read files under one root; refuse everything that would change them.

    Hardened (issue 16): `read`, `read_range` and `open_read` open regular files only (a FIFO, device
    or socket is a :class:`StorageError` naming it, never a hang), `read` refuses files larger than the
    limit of their kind (:func:`read_limits`), listed names that are not UTF-8 are skipped and recorded
    in :attr:`findings`, and with `confine_to` every local path must resolve under those folders.
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
        self._options = dict(storage_options or {})
        self._fs_instance: Any = None
        self._protocol: str | None = None
        self._lister: Any = False  # False: not decided yet (see `_fast_lister`)
        root = local_root(uri, storage_options)
        if root is None:
            root = self._obstore_root(uri)
        if root is None:
            fs, root = self._open_fsspec(uri)
            self._fs_instance = fs
            from fsspec.implementations.local import LocalFileSystem

            # Plain local files: list/read without fsspec's per-call overhead (see the module doc).
            self._local = type(fs) is LocalFileSystem and root.startswith("/")
        else:
            self._local = self._protocol is None
        self._root = root.rstrip("/") or "/"
        if self._local:
            self._lister = None

    def _obstore_root(self, uri: str) -> str | None:
        """The root of an S3 URL that obstore serves (:mod:`hudi_core.io.s3_listing`), decided without
        s3fs: s3fs and botocore (0.5 s of imports) then load only if a request needs them. The root
        is what s3fs's `url_to_fs` gives (the URL without its scheme and trailing ``/``)."""
        scheme, sep, rest = uri.partition("://")
        if not sep or scheme not in ("s3", "s3a") or "::" in uri:
            return None
        from hudi_core.io.s3_listing import S3Lister

        root = rest.rstrip("/")
        lister = S3Lister.for_options(scheme, root, self._options)
        if lister is None:
            return None
        self._protocol, self._lister = scheme, lister
        return root

    def _open_fsspec(self, uri: str) -> tuple[Any, str]:
        try:
            gcs = _gcs_at_custom_endpoint(uri, self._options)
            if gcs is not None:
                return gcs
            from fsspec.core import url_to_fs

            fs, root = url_to_fs(uri, **self._options)
        except (ImportError, ValueError) as exc:
            raise StorageError(f"cannot open storage for {uri}: {exc}") from exc
        return fs, root

    @property
    def _fs(self) -> Any:
        """The fsspec file system, made on first use where the root was opened without it (local
        paths, S3 served by obstore): most commands never need it."""
        if self._fs_instance is None:
            if self._local:
                from fsspec.implementations.local import LocalFileSystem

                self._fs_instance = LocalFileSystem()
            else:
                self._fs_instance = self._open_fsspec(self._uri)[0]
        return self._fs_instance

    def _async_remote(self) -> bool:
        """Whether reads batch on this (remote) storage: obstore serves it, or fsspec's back-end is async."""
        return self._lister not in (None, False) or bool(getattr(self._fs, "async_impl", False))

    # -- identity -------------------------------------------------------------------------------
    @property
    def spec(self) -> StorageSpec:
        return self._spec

    @property
    def uri(self) -> str:
        return self._uri

    @property
    def protocol(self) -> str:
        if self._local:
            return "file"
        if self._protocol is not None:
            return self._protocol
        proto = self._fs.protocol
        return proto[0] if isinstance(proto, (tuple, list)) else str(proto)

    @property
    def is_local(self) -> bool:
        """Whether the root is on the local file system (served by the local fast path)."""
        return self._local

    def uri_of(self, path: str) -> str:
        """The full URI of a root-relative path, for messages and reports."""
        rel = normalize_relative(path)
        return f"{self._uri}/{rel}" if rel else self._uri

    def child(self, path: str) -> ReadOnlyStorage:
        """A storage rooted at a sub-folder (the metadata table, for instance)."""
        return ReadOnlyStorage(self.uri_of(path), dict(self._spec.options), confine_to=self._spec.confine_to or None,
                               read_limits=self._limits)

    def _abs(self, path: str) -> str:
        rel = normalize_relative(path)
        target = self._root if not rel else (
            self._root + rel if self._root.endswith("/") else f"{self._root}/{rel}")
        if self._spec.confine_to and self._local:
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

    def _record_not_regular(self, folder: str, name: str, kind: str) -> None:
        from hudi_core.errors import Finding, Severity

        where = self.uri_of(f"{folder}/{name}" if folder else name)
        self.findings.append(Finding(Severity.ERROR, "not_a_regular_file", where,
                                     f"{where} is {kind}, not a regular file: skipped, never read"))

    def _record_bad_name(self, folder: str, name: str) -> None:
        from hudi_core.errors import Finding, Severity

        shown = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        where = self.uri_of(folder) if folder else self._uri
        self.findings.append(Finding(Severity.WARNING, "undecodable_file_name", f"{where}/{shown}",
                                     f"file name {shown} in {where} is not valid UTF-8; skipped"))

    def _checked_mtime(self, rel: str, mtime_ms: int) -> int | None:
        """A local modification time, or ``None`` (recorded in :attr:`findings`) when it is no date."""
        if MTIME_MS_MIN <= mtime_ms <= MTIME_MS_MAX:
            return mtime_ms
        where = self.uri_of(rel)
        if where not in self.bad_mtimes:
            self.bad_mtimes[where] = mtime_ms
            self.findings.append(bad_mtime_finding(where, mtime_ms))
        return None

    def _rel(self, abs_path: str) -> str:
        abs_path = abs_path.rstrip("/")
        root = self._root.rstrip("/")
        if abs_path == root:
            return ""
        if root and abs_path.startswith(root + "/"):
            return abs_path[len(root) + 1 :]
        if not root and abs_path.startswith("/"):
            return abs_path[1:]
        # Some back-ends drop the protocol or a leading slash; fall back to a suffix match.
        stripped = self._fs._strip_protocol(abs_path).rstrip("/")
        root_stripped = self._fs._strip_protocol(root).rstrip("/")
        if stripped.startswith(root_stripped + "/"):
            relative: str = stripped[len(root_stripped) + 1 :]
            return relative
        raise StorageError(f"{abs_path} is outside the storage root {self._uri}")

    def _info(self, raw: dict[str, Any]) -> FileInfo:
        return FileInfo(
            path=self._rel(raw["name"]),
            size=int(raw.get("size") or 0),
            mtime_ms=_mtime_ms(raw),
            is_dir=raw.get("type") == "directory",
            etag=_etag(raw),
        )

    # -- reading --------------------------------------------------------------------------------
    def list(self, path: str = "") -> list[FileInfo]:
        """Direct children of a folder, sorted by name. A missing folder lists as empty."""
        target = self._abs(path)
        if self._local:
            return self._list_local(normalize_relative(path), path)
        entries = None
        lister = self._fast_lister()
        if lister is not None:
            try:
                entries = lister.ls(target)
            except Exception:  # any trouble: s3fs lists, and words the error, from now on
                self._lister = None
        try:
            if entries is None:
                entries = self._fs.ls(target, detail=True)
        except FileNotFoundError:
            return []
        except _backend_errors() as exc:
            raise StorageError(f"cannot list {self.uri_of(path)}: {self._why(exc)}") from exc
        infos = [self._info(e) for e in entries]
        return sorted((i for i in infos if i.path != normalize_relative(path)), key=lambda i: i.path)

    def _fast_lister(self) -> Any:
        """obstore's S3 listing where it answers as s3fs does (:mod:`hudi_core.io.s3_listing`), else None."""
        if self._lister is False:
            from hudi_core.io.s3_listing import S3Lister

            self._lister = S3Lister.for_options(self.protocol, self._root, self._options)
        return self._lister

    def _list_local(self, rel: str, path: str) -> builtins.list[FileInfo]:
        """`list` on a local folder: what `LocalFileSystem.ls(detail=True)` + `_info` give, entry for
        entry (type and mtime from `lstat`, size through a symlink), via one `os.scandir`."""
        prefix = f"{rel}/" if rel else ""
        return [FileInfo(prefix + name, size, mtime_ms, is_dir)
                for name, size, mtime_ms, is_dir in self.list_entries(path)]

    def list_entries(self, path: str = "") -> builtins.list[tuple[str, int, int | None, bool]]:
        """`(name, size, mtime_ms, is_dir)` of a folder's direct children, sorted by name: :meth:`list`
        without building a :class:`FileInfo` per entry (performance: partitions of 100k files)."""
        if not self._local:
            return [(i.name, i.size, i.mtime_ms, i.is_dir) for i in self.list(path)]
        target = self._abs(path)
        try:
            entries = os.scandir(target)
        except (FileNotFoundError, NotADirectoryError):
            return []  # fsspec: a missing path lists empty; a file lists as itself, which `list` drops
        except OSError as exc:
            raise StorageError(f"cannot list {self.uri_of(path)}: {self._why(exc)}") from exc
        out: list[tuple[str, int, int | None, bool]] = []
        with entries:
            for entry in entries:
                if not entry.name.isascii() and not is_valid_name(entry.name):
                    self._record_bad_name(normalize_relative(path), entry.name)
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                    size = st.st_size
                    kind = None
                    if stat_mode.S_ISLNK(st.st_mode):
                        try:
                            linked = entry.stat(follow_symlinks=True)
                            size = linked.st_size
                            kind = None if stat_mode.S_ISDIR(linked.st_mode) else _not_regular(linked.st_mode)
                        except OSError:
                            size = 0
                    elif not stat_mode.S_ISDIR(st.st_mode):
                        kind = _not_regular(st.st_mode)
                    if kind is not None:
                        # A FIFO, device or socket (or a link to one) is never a Hudi file (issue 16).
                        self._record_not_regular(normalize_relative(path), entry.name, kind)
                        continue
                except FileNotFoundError:
                    continue  # removed while listing, as fsspec skips it
                except OSError as exc:
                    raise StorageError(f"cannot list {self.uri_of(path)}: {self._why(exc)}") from exc
                # Local modification times are always seconds (no milliseconds heuristic).
                mtime_ms = int(st.st_mtime * 1000)
                known = mtime_ms if MTIME_MS_MIN <= mtime_ms <= MTIME_MS_MAX else self._checked_mtime(
                    posixpath.join(normalize_relative(path), entry.name), mtime_ms)
                out.append((entry.name, int(size or 0), known, stat_mode.S_ISDIR(st.st_mode)))
        out.sort()
        return out

    def list_entries_many(self, paths: Sequence[str]
                          ) -> builtins.list[builtins.list[tuple[str, int, int | None, bool]]]:
        """:meth:`list_entries` of several folders, in order (the first failure raises, as a loop
        would). Locally one after another; on an object store concurrently through a bounded pool, so
        a level of 100 partitions costs one wave of LIST round trips, not 200 one after another."""
        if self._local or len(paths) <= 1:
            return [self.list_entries(p) for p in paths]
        from concurrent.futures import ThreadPoolExecutor

        self._fast_lister()  # decided once, before the threads share it
        with ThreadPoolExecutor(max_workers=min(LIST_CONCURRENCY, len(paths))) as pool:
            return list(pool.map(self.list_entries, paths))

    def list_after(self, path: str, start_after: str, max_entries: int = 1000
                   ) -> tuple[builtins.list[FileInfo], bool] | None:
        """Direct children of a folder whose names sort after `start_after`, sorted by name, at most
        `max_entries`: `(entries, truncated)`. On S3 this is ONE ListObjectsV2 request (`StartAfter` with
        the ``/`` delimiter, one page), which is what lets a follower poll a folder of thousands of
        files for a change at the cost of one request (issue 27). Locally the folder is read and
        filtered. ``None`` where the store offers no such request through its client (GCS, Azure, other
        fsspec back-ends): the caller lists the whole folder instead."""
        if self._local:
            entries = [i for i in self.list(path) if i.name > start_after]
            return entries[:max_entries], len(entries) > max_entries
        if self.protocol not in ("s3", "s3a"):
            return None
        prefix = self._abs(path).strip("/")
        bucket, _, key_prefix = prefix.partition("/")
        key_prefix = f"{key_prefix}/" if key_prefix else ""
        try:
            # s3fs's botocore client: obstore has no delimiter listing that starts after a key.
            page = self._fs.call_s3("list_objects_v2", Bucket=bucket, Prefix=key_prefix, Delimiter="/",
                                    StartAfter=key_prefix + start_after, MaxKeys=max_entries)
        except FileNotFoundError:
            return [], False
        except _backend_errors() as exc:
            raise StorageError(f"cannot list {self.uri_of(path)}: {describe_error(exc)}") from exc
        rel = normalize_relative(path)
        base = f"{rel}/" if rel else ""
        infos = [FileInfo(base + p["Prefix"][len(key_prefix):].rstrip("/"), 0, None, True)
                 for p in page.get("CommonPrefixes") or []]
        for obj in page.get("Contents") or []:
            name = obj["Key"][len(key_prefix):]
            if not name or name.endswith("/"):
                continue  # the folder's own marker object, as `list` skips it
            infos.append(FileInfo(base + name, int(obj.get("Size") or 0), _mtime_ms(obj), False, _etag(obj)))
        return sorted(infos, key=lambda i: i.path), bool(page.get("IsTruncated"))

    def walk_files(self, path: str = "", skip_dirs: frozenset[str] = frozenset()) -> Iterator[FileInfo]:
        """Every file under a folder, depth first, skipping folders whose name is in `skip_dirs`."""
        for info in self.list(path):
            if info.is_dir:
                if info.name not in skip_dirs:
                    yield from self.walk_files(info.path, skip_dirs)
            else:
                yield info

    def stat(self, path: str) -> FileInfo:
        if self._local:
            return self._stat_local(path)
        raw = self._obstore_info(path)
        try:
            if raw is None:
                raw = self._fs.info(self._abs(path))
        except FileNotFoundError as exc:
            raise StorageError(f"{self.uri_of(path)} does not exist") from exc
        except _backend_errors() as exc:
            raise StorageError(f"cannot stat {self.uri_of(path)}: {self._why(exc)}") from exc
        return self._info(raw)

    def _obstore_info(self, path: str) -> dict[str, Any] | None:
        """An object's entry from obstore (listed before, else one HEAD); None where obstore does not
        serve this storage or has no entry (not found, a folder, trouble: s3fs then answers)."""
        found = self._obstore_head(path)
        return found if isinstance(found, dict) else None

    def _obstore_head(self, path: str) -> dict[str, Any] | bool | None:
        """obstore's answer for one path: its entry, ``False`` when S3 says there is no such object,
        None where obstore does not serve this storage or the request failed otherwise."""
        lister = self._fast_lister()
        if not lister:
            return None
        target = self._abs(path)
        raw: dict[str, Any] | None = lister.cached_info(target)
        if raw is not None:
            return raw
        try:
            head: dict[str, Any] | bool = lister.head(target)
            return head
        except Exception as exc:  # not found: an answer; anything else: s3fs decides and words it
            return False if isinstance(exc, FileNotFoundError) or type(exc).__name__ == "NotFoundError" else None

    def _obstore_exists(self, path: str, as_folder: bool) -> bool | None:
        """s3fs's `exists` (`as_folder` False) or `isdir` (True) answered by obstore: an object (a HEAD)
        exists and is no folder; else a prefix with objects under it is a folder. None where obstore
        does not serve this storage or a request failed for another reason than "not found"."""
        head = self._obstore_head(path)
        if isinstance(head, dict):
            return not as_folder
        if head is None:
            return None
        try:
            answer: bool | None = self._fast_lister().has_children(self._abs(path))
            return answer
        except Exception:  # trouble: s3fs decides and words it
            return None

    def _stat_local(self, path: str) -> FileInfo:
        """`stat` of a local path: `LocalFileSystem.info` (follows a symlink for type, size and mtime)."""
        target = self._abs(path)
        try:
            st = os.stat(target, follow_symlinks=False)
            if stat_mode.S_ISLNK(st.st_mode):
                st = os.stat(target, follow_symlinks=True)
        except FileNotFoundError as exc:
            raise StorageError(f"{self.uri_of(path)} does not exist") from exc
        except _backend_errors() as exc:
            raise StorageError(f"cannot stat {self.uri_of(path)}: {exc}") from exc
        rel = self._rel(target)
        return FileInfo(rel, int(st.st_size or 0), self._checked_mtime(rel, int(st.st_mtime * 1000)),
                        stat_mode.S_ISDIR(st.st_mode))

    def exists(self, path: str) -> bool:
        """Whether the path exists. On an object store, an error other than "not found" (access denied,
        throttling after retries, endpoint down) is a StorageError: never taken for "no such file"."""
        if self._local:
            return os.path.exists(self._abs(path))  # LocalFileSystem.exists
        known = self._obstore_exists(path, as_folder=False)
        if known is not None:
            return known
        try:
            return bool(self._fs.exists(self._abs(path)))
        except FileNotFoundError:
            return False
        except _backend_errors() as exc:
            if self._local:
                return False
            raise StorageError(f"cannot check {self.uri_of(path)}: {describe_error(exc)}") from exc

    def is_dir(self, path: str) -> bool:
        if self._local:
            return os.path.isdir(self._abs(path))  # LocalFileSystem.isdir (symlinks followed)
        known = self._obstore_exists(path, as_folder=True)
        if known is not None:
            return known
        try:
            return bool(self._fs.isdir(self._abs(path)))
        except _backend_errors() as exc:
            if self._local:
                return False
            raise StorageError(f"cannot check {self.uri_of(path)}: {describe_error(exc)}") from exc

    def _why(self, exc: BaseException) -> str:
        """The reason in an error message: the OS's words locally, a readable line for a store."""
        return str(exc) if self._local else describe_error(exc)

    def limit_of(self, path: str) -> int:
        """The size limit of a file read whole (:func:`read_kind`, :func:`read_limits`)."""
        limit: int = self._limits[read_kind(normalize_relative(path))]
        return limit

    def _open_local(self, path: str) -> int:
        """A read-only descriptor of a local regular file. `O_NONBLOCK` so a FIFO cannot block the open;
        the type is checked on the opened descriptor (no race with a swap between check and open)."""
        target = self._abs(path)
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            kind = _not_regular(os.fstat(fd).st_mode)
            if kind is not None:
                if kind == "a folder":
                    raise IsADirectoryError(target)
                raise StorageError(f"{self.uri_of(path)} is {kind}, not a regular file: not read")
            if hasattr(os, "set_blocking"):
                os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return fd

    def read(self, path: str, max_bytes: int | None = None) -> bytes:
        """The whole file, refused beyond `max_bytes` (default: the limit of its kind)."""
        limit = self.limit_of(path) if max_bytes is None else max_bytes
        try:
            if self._local:
                with os.fdopen(self._open_local(path), "rb") as fh:
                    data = fh.read(limit + 1)
            else:
                # One ranged GET (no HEAD first, as `fs.open` would do): at most one byte past the limit,
                # which is enough to tell an oversized file.
                data = self._remote_range(path, 0, limit + 1)
        except FileNotFoundError as exc:
            raise StorageError(f"{self.uri_of(path)} does not exist") from exc
        except IsADirectoryError as exc:
            raise StorageError(f"{self.uri_of(path)} is a folder, not a file") from exc
        except _backend_errors() as exc:
            raise StorageError(f"cannot read {self.uri_of(path)}: {self._why(exc)}") from exc
        if len(data) > limit:
            raise StorageError(f"{self.uri_of(path)} is larger than the {limit}-byte limit for "
                               f"{read_kind(normalize_relative(path))} files ({READ_LIMITS_ENV}): not read")
        return data

    def _remote_range(self, path: str, start: int, end: int) -> bytes:
        """Bytes [start, end) of an object in one ranged GET. A range that starts at or past the end
        of the object is "not satisfiable" (HTTP 416) on S3, GCS and Azure: there is nothing to read,
        and an empty object is read that way too."""
        fast = self._fast_ranges([(path, start, end)])
        if fast is not None and fast[0] is not None:
            return fast[0]  # else s3fs reads it, and words the error
        try:
            data: bytes = self._fs.cat_file(self._abs(path), start=start, end=end)
            return data
        except OSError as exc:
            if _is_unsatisfiable_range(exc):
                return b""
            raise

    def read_many(self, paths: Sequence[str]) -> dict[str, bytes | StorageError]:
        """Whole files, fetched together: each path maps to its bytes or to the :class:`StorageError`
        that reading it raised (one bad file never fails the rest).

        On an object store this is one concurrent wave of ranged GETs (obstore on S3 where it applies,
        else fsspec's async `cat_ranges`) instead of one round trip after another, so latency is paid
        once per wave, not once per file. Locally it is a loop over :meth:`read`.
        """
        if not paths:
            return {}
        if self._local or not self._async_remote():
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
        return {p: data if isinstance(data, StorageError) else self._checked(p, limit, data)
                for p, limit, data in zip(unique, limits, fetched, strict=True)}

    def _fast_ranges(self, ranges: builtins.list[tuple[str, int, int]]) -> builtins.list[bytes | None] | None:
        """Ranges read through obstore (:mod:`hudi_core.io.s3_listing`): bytes, or None for an item it
        could not read (the caller reads those through s3fs, which words the error); None when
        obstore does not serve this storage."""
        lister = self._fast_lister()
        if lister is None or not ranges:
            return None
        try:
            fetched = lister.get_ranges([(self._abs(p), start, end) for p, start, end in ranges])
        except Exception:  # any trouble with the batch: s3fs reads it
            return None
        if fetched is None:
            return None
        # A range at or past the end of an object (an empty object too) is S3's 416: nothing to read.
        return [value if isinstance(value, bytes) else b"" if _is_unsatisfiable_range(value) else None
                for value in fetched]

    def _checked(self, path: str, limit: int, data: bytes) -> bytes | StorageError:
        if len(data) > limit:
            return StorageError(f"{self.uri_of(path)} is larger than the {limit}-byte limit for "
                                f"{read_kind(normalize_relative(path))} files ({READ_LIMITS_ENV}): not read")
        return data

    def read_ranges(self, ranges: Sequence[tuple[str, int, int]]) -> builtins.list[bytes | StorageError]:
        """`(path, start, length)` ranges fetched together, in order: each its bytes (fewer at the end
        of the file) or the :class:`StorageError` reading it raised. One concurrent wave of ranged GETs
        on an object store (obstore on S3 where it applies, the rest and its failures through fsspec's
        `cat_ranges`); a loop over :meth:`read_range` locally."""
        if self._local or not self._async_remote():
            out: list[bytes | StorageError] = []
            for path, start, length in ranges:
                try:
                    out.append(self.read_range(path, start, length))
                except StorageError as exc:
                    out.append(exc)
            return out
        if not ranges:
            return []
        fast = self._fast_ranges([(p, start, start + n) for p, start, n in ranges])
        if fast is not None:
            rest = [r for r, data in zip(ranges, fast, strict=True) if data is None]
            slow = iter(self._read_ranges_s3fs(rest) if rest else [])
            return [data if data is not None else next(slow) for data in fast]
        return self._read_ranges_s3fs(ranges)

    def _read_ranges_s3fs(self, ranges: Sequence[tuple[str, int, int]]) -> builtins.list[bytes | StorageError]:
        try:
            fetched = self._fs.cat_ranges([self._abs(p) for p, _, _ in ranges], [s for _, s, _ in ranges],
                                          [s + n for _, s, n in ranges], on_error="return")
        except _backend_errors() as exc:
            raise StorageError(f"cannot read {len(ranges)} ranges under {self.uri}: {describe_error(exc)}") from exc
        result: list[bytes | StorageError] = []
        for (path, start, _), value in zip(ranges, fetched, strict=True):
            if isinstance(value, BaseException) and _is_unsatisfiable_range(value):
                value = b""
            if isinstance(value, (bytes, bytearray)):
                result.append(bytes(value))
            elif isinstance(value, FileNotFoundError):
                result.append(StorageError(f"{self.uri_of(path)} does not exist (deleted while reading?)"))
            else:
                where = f" at {start}" if start else ""
                result.append(StorageError(f"cannot read {self.uri_of(path)}{where}: {describe_error(value)}"))
        return result

    def read_range(self, path: str, start: int, length: int) -> bytes:
        """`length` bytes from `start` (fewer at the end of the file)."""
        if start < 0 or length < 0:
            raise StorageError(f"bad range {start}+{length} for {self.uri_of(path)}")
        if length == 0:
            return b""
        try:
            if self._local:
                with os.fdopen(self._open_local(path), "rb") as fh:  # fsspec's read_block, minus its layers
                    size = os.fstat(fh.fileno()).st_size
                    if start >= size:  # nothing to read, as an object store's unsatisfiable range (`_remote_range`)
                        return b""
                    length = min(length, size - start)
                    fh.seek(start)
                    return fh.read(length)
            # One ranged GET; `read_block` would open the file first (a HEAD for its size).
            return self._remote_range(path, start, start + length)
        except FileNotFoundError as exc:
            raise StorageError(f"{self.uri_of(path)} does not exist") from exc
        except _backend_errors() as exc:
            raise StorageError(f"cannot read {self.uri_of(path)} at {start}: {self._why(exc)}") from exc

    def open_read(self, path: str, block_size: int | None = None) -> Any:
        """A seekable binary reader (for pyarrow/parquet footers and ranged scans)."""
        kwargs = {"block_size": block_size} if block_size else {}
        try:
            if self._local:
                os.close(self._open_local(path))  # regular file and confinement checks
            return self._fs.open(self._abs(path), "rb", **kwargs)
        except FileNotFoundError as exc:
            raise StorageError(f"{self.uri_of(path)} does not exist") from exc
        except _backend_errors() as exc:
            raise StorageError(f"cannot open {self.uri_of(path)}: {self._why(exc)}") from exc

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

    Performance (issues 6, 11): on a local disk the batch functions are CPU-bound Python; under the GIL
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
