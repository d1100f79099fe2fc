"""The stores a table can live on, behind one protocol: how each lists and reads, and nothing else.

:class:`~hudi_core.io.storage.ReadOnlyStorage` is the one door every read goes through: it resolves and confines
paths, applies the read limits, records findings and words errors; a :class:`Backend` only lists and reads.
Three backends, chosen by :func:`open_backend`:

* :class:`LocalBackend`: a local path (or ``file://``): `os.scandir`, `os.stat` and file descriptors opened
  read-only, giving exactly what fsspec's `LocalFileSystem` would (same entries, sizes, modification times, bytes
  and errors) without its per-call overhead, which dominates on a million files. A plain local path does not even
  import fsspec (its root is resolved as fsspec resolves it, :func:`local_root`); fsspec comes in only for
  `open_read`.
* :class:`FsspecBackend`: any other fsspec URL (``s3://`` where obstore does not apply, ``gs://``, ``abfs://``,
  chained URLs): listings, HEADs and ranged GETs through the file system, batched through its async
  `cat_ranges` where the backend is async.
* :class:`ObstoreS3Backend`: S3 URLs that obstore (:mod:`hudi_core.io.s3_listing`) serves exactly as s3fs would:
  listings, stats of listed files and batches of ranges through obstore, single reads and anything obstore fails
  through s3fs, which words the error; a failed listing hands the rest to s3fs for good.

A backend reports what it skips while listing (names that are not UTF-8, FIFOs and devices) and checks
modification times through the :class:`Reporter` the storage gives it.
"""

from __future__ import annotations

import builtins
import datetime as dt
import errno
import os
import posixpath
import stat as stat_mode
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from hudi_core.errors import StorageError

#: `(name, size, mtime_ms, is_dir)` of one listed child: what bulk listings build instead of a
#: :class:`FileInfo` per entry (partitions of 100k files).
Entry = tuple[str, int, int | None, bool]

#: The modification times (epoch milliseconds) a reader can turn into a date in any zone: `datetime` holds
#: years 1 to 9999, and a day inside each end leaves room for a zone's offset. tmpfs keeps times far
#: beyond (``os.utime(path, (1.8e12, 1.8e12))`` is year 59009; ext4 clamps at 2446): such a time is
#: unknown (``None``) with a finding naming the file, never a crash.
MTIME_MS_MIN = -62_135_510_400_000  # 0001-01-02T00:00:00Z
MTIME_MS_MAX = 253_402_214_400_000  # 9999-12-31T00:00:00Z


@dataclass(frozen=True)
class FileInfo:
    """One directory entry. `path` is relative to the storage root; `mtime_ms` is epoch millis."""

    path: str
    size: int
    mtime_ms: int | None
    is_dir: bool
    #: A version key for caches: the object store's ETag where its listing gives one; on local disk the
    #: modification and change times at full resolution (nanoseconds) and the inode (:func:`local_version`), so
    #: a rewrite of the same size within the same millisecond, or with its time set back, is a new version.
    etag: str | None = field(default=None, compare=False)

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)


class Reporter(Protocol):
    """What a backend tells the storage that opened it (:class:`~hudi_core.io.storage.ReadOnlyStorage`)."""

    def uri_of(self, path: str) -> str:
        """The full URI of a root-relative path, for messages."""
        ...

    def record_bad_name(self, folder: str, name: str) -> None:
        """A listed name that is not UTF-8: skipped."""
        ...

    def record_not_regular(self, folder: str, name: str, kind: str) -> None:
        """A FIFO, device or socket listed: skipped, never read."""
        ...

    def checked_mtime(self, rel: str, mtime_ms: int) -> int | None:
        """A modification time, or ``None`` (recorded) when it is no date."""
        ...


class Backend(Protocol):
    """How one kind of store lists and reads. `target` is the absolute path in the backend's own form (the
    storage's root joined with a checked relative path); `rel` the same path relative to the root. Methods
    raise the backend's own errors (the storage words them) or a :class:`StorageError` already worded."""

    #: The root as the backend names it (``/abs/path`` locally, ``bucket/prefix`` on a store).
    root: str
    #: Whether the root is on the local file system (served without fsspec).
    is_local: bool

    @property
    def protocol(self) -> str: ...

    def why(self, exc: BaseException) -> str:
        """The reason in an error message: the OS's words locally, a readable line for a store."""
        ...

    def list(self, target: str, rel: str) -> builtins.list[FileInfo]: ...

    def list_entries(self, target: str, rel: str) -> builtins.list[Entry]: ...

    def stat(self, target: str, rel: str) -> FileInfo: ...

    def exists(self, target: str) -> bool: ...

    def is_dir(self, target: str) -> bool: ...

    def read_prefix(self, target: str, rel: str, length: int) -> bytes:
        """The first `length` bytes of a file (all of it when shorter), in one request on a store."""
        ...

    def read_range(self, target: str, rel: str, start: int, length: int) -> bytes: ...

    def batches_reads(self) -> bool:
        """Whether many reads go as one concurrent wave (a remote, async store) rather than one by one."""
        ...

    def read_ranges(self, ranges: Sequence[tuple[str, str, int, int]]) -> builtins.list[bytes | StorageError]:
        """`(target, rel, start, end)` ranges read together (only where :meth:`batches_reads`)."""
        ...

    def open_read(self, target: str, rel: str, block_size: int | None) -> Any: ...


# -- entries and errors as the stores give them ---------------------------------------------------------------


def local_version(st: os.stat_result) -> str:
    """A local file's version key (:attr:`FileInfo.etag`): `st_mtime_ns`, `st_ctime_ns` (changed by any write,
    and not settable by `utime`) and the inode (a file replaced by another)."""
    return f"local:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_ino}"


def etag_of(info: dict[str, Any]) -> str | None:
    """The ETag a listing entry carries (S3 `ETag`, obstore `e_tag`, GCS and Azure `etag`), or ``None``."""
    for key in ("ETag", "e_tag", "etag"):
        value = info.get(key)
        if value:
            return str(value)
    return None


def mtime_ms_of(info: dict[str, Any]) -> int | None:
    """Modification time from the many shapes fsspec back-ends report it in."""
    for key in ("mtime", "LastModified", "last_modified", "updated", "modified", "created", "ctime"):
        value = info.get(key)
        if value is None:
            continue
        if isinstance(value, (int, float)):
            # Seconds for local files; some stores report milliseconds. Bounded: a value in (1e11, 1e14) is
            # milliseconds (years 1973-5138); anything larger or negative is no time.
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


def backend_errors() -> tuple[type[BaseException], ...]:
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


def is_unsatisfiable_range(exc: BaseException) -> bool:
    """An object store's answer to a range past the end of an object (HTTP 416 / InvalidRange)."""
    text = f"{exc} {exc.__cause__ or ''}"
    return "InvalidRange" in text or "not satisfiable" in text or "416" in text.split()


_KIND_OF_MODE = (
    (stat_mode.S_ISFIFO, "a FIFO"), (stat_mode.S_ISCHR, "a character device"),
    (stat_mode.S_ISBLK, "a block device"), (stat_mode.S_ISSOCK, "a socket"), (stat_mode.S_ISDIR, "a folder"),
)


def not_regular(mode: int) -> str | None:
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


# -- opening --------------------------------------------------------------------------------------------------


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


def open_fsspec(uri: str, options: dict[str, Any]) -> tuple[Any, str]:
    """fsspec's file system and root for a URL (a custom-endpoint GCS URL without its gRPC detour)."""
    try:
        gcs = _gcs_at_custom_endpoint(uri, options)
        if gcs is not None:
            return gcs
        from fsspec.core import url_to_fs

        fs, root = url_to_fs(uri, **options)
    except (ImportError, ValueError) as exc:
        raise StorageError(f"cannot open storage for {uri}: {exc}") from exc
    return fs, root


def open_backend(uri: str, options: dict[str, Any], reporter: Reporter) -> Backend:
    """The backend serving `uri`: local disk, obstore on S3 where it answers as s3fs would, else fsspec."""
    root = local_root(uri, options)
    if root is not None:
        return LocalBackend(root, reporter)
    scheme, sep, rest = uri.partition("://")
    if sep and scheme in ("s3", "s3a") and "::" not in uri:
        # Decided without s3fs: s3fs and botocore (0.5 s of imports) load only if a request needs them. The root
        # is what s3fs's `url_to_fs` gives (the URL without its scheme and trailing ``/``).
        from hudi_core.io.s3_listing import S3Lister

        bucket_root = rest.rstrip("/")
        lister = S3Lister.for_options(scheme, bucket_root, options)
        if lister is not None:
            return ObstoreS3Backend(uri, options, reporter, scheme, bucket_root, lister)
    fs, root = open_fsspec(uri, options)
    from fsspec.implementations.local import LocalFileSystem

    if type(fs) is LocalFileSystem and root.startswith("/"):
        return LocalBackend(root.rstrip("/") or "/", reporter, fs)  # plain local files reached through fsspec
    return FsspecBackend(uri, options, reporter, fs, root)


# -- local disk -----------------------------------------------------------------------------------------------


class LocalBackend:
    """Local files without fsspec's per-call overhead (see the module doc)."""

    is_local = True

    def __init__(self, root: str, reporter: Reporter, fs: Any = None) -> None:
        self.root = root
        self._reporter = reporter
        self._fs_instance = fs

    @property
    def protocol(self) -> str:
        return "file"

    @property
    def fs(self) -> Any:
        """fsspec's local file system, made on first use (`open_read` only)."""
        if self._fs_instance is None:
            from fsspec.implementations.local import LocalFileSystem

            self._fs_instance = LocalFileSystem()
        return self._fs_instance

    def why(self, exc: BaseException) -> str:
        return str(exc)

    def batches_reads(self) -> bool:
        return False

    def list(self, target: str, rel: str) -> builtins.list[FileInfo]:
        """What `LocalFileSystem.ls(detail=True)` gives, entry for entry (type and mtime from `lstat`, size through
        a symlink), via one `os.scandir`."""
        prefix = f"{rel}/" if rel else ""
        versions: dict[str, str] = {}
        return [FileInfo(prefix + name, size, mtime_ms, is_dir, versions.get(name))
                for name, size, mtime_ms, is_dir in self.list_entries(target, rel, versions)]

    def list_entries(self, target: str, rel: str, versions: dict[str, str] | None = None) -> builtins.list[Entry]:
        reporter = self._reporter
        try:
            entries = os.scandir(target)
        except (FileNotFoundError, NotADirectoryError):
            return []  # fsspec: a missing path lists empty; a file lists as itself, which `list` drops
        except OSError as exc:
            raise StorageError(f"cannot list {reporter.uri_of(rel)}: {exc}") from exc
        out: list[Entry] = []
        add = out.append
        # Bound once: this loop runs once per file of the table (a million times on a big one).
        is_reg, is_dir, is_link = stat_mode.S_ISREG, stat_mode.S_ISDIR, stat_mode.S_ISLNK
        with entries:
            for entry in entries:
                name = entry.name
                if not name.isascii() and not is_valid_name(name):
                    reporter.record_bad_name(rel, name)
                    continue
                try:
                    st = entry.stat(follow_symlinks=False)
                    mode = st.st_mode
                    size = st.st_size
                    version_of = st
                    if not is_reg(mode) and not is_dir(mode):
                        kind = None
                        if is_link(mode):
                            try:
                                linked = version_of = entry.stat(follow_symlinks=True)
                                size = linked.st_size
                                kind = None if is_dir(linked.st_mode) else not_regular(linked.st_mode)
                            except OSError:
                                size = 0
                        else:
                            kind = not_regular(mode)
                        if kind is not None:
                            # A FIFO, device or socket (or a link to one) is never a Hudi file.
                            reporter.record_not_regular(rel, name, kind)
                            continue
                except FileNotFoundError:
                    continue  # removed while listing, as fsspec skips it
                except OSError as exc:
                    raise StorageError(f"cannot list {reporter.uri_of(rel)}: {exc}") from exc
                # Local modification times are always seconds (no milliseconds heuristic).
                mtime_ms = int(st.st_mtime * 1000)
                known = mtime_ms if MTIME_MS_MIN <= mtime_ms <= MTIME_MS_MAX else reporter.checked_mtime(
                    posixpath.join(rel, name), mtime_ms)
                add((name, size or 0, known, is_dir(mode)))
                if versions is not None:
                    versions[name] = local_version(version_of)
        out.sort()
        return out

    def stat(self, target: str, rel: str) -> FileInfo:
        """`LocalFileSystem.info` (follows a symlink for type, size and mtime)."""
        try:
            st = os.stat(target, follow_symlinks=False)
            if stat_mode.S_ISLNK(st.st_mode):
                st = os.stat(target, follow_symlinks=True)
        except FileNotFoundError as exc:
            raise StorageError(f"{self._reporter.uri_of(rel)} does not exist") from exc
        except backend_errors() as exc:
            raise StorageError(f"cannot stat {self._reporter.uri_of(rel)}: {exc}") from exc
        return FileInfo(rel, int(st.st_size or 0), self._reporter.checked_mtime(rel, int(st.st_mtime * 1000)),
                        stat_mode.S_ISDIR(st.st_mode), local_version(st))

    def exists(self, target: str) -> bool:
        return os.path.exists(target)  # LocalFileSystem.exists

    def is_dir(self, target: str) -> bool:
        return os.path.isdir(target)  # LocalFileSystem.isdir (symlinks followed)

    def _open(self, target: str, rel: str) -> int:
        """A read-only descriptor of a regular file, blocking (for Python's file objects)."""
        fd, _ = self._open_stat(target, rel, blocking=True)
        return fd

    def _open_stat(self, target: str, rel: str, blocking: bool) -> tuple[int, os.stat_result]:
        """A read-only descriptor of a regular file and its stat. `O_NONBLOCK` so a FIFO cannot block the open; the
        type is checked on the opened descriptor (no race with a swap between check and open)."""
        fd = os.open(target, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
        try:
            st = os.fstat(fd)
            kind = not_regular(st.st_mode)
            if kind is not None:
                if kind == "a folder":
                    raise IsADirectoryError(target)
                raise StorageError(f"{self._reporter.uri_of(rel)} is {kind}, not a regular file: not read")
            if blocking and hasattr(os, "set_blocking"):
                os.set_blocking(fd, True)
        except BaseException:
            os.close(fd)
            raise
        return fd, st

    def read_prefix(self, target: str, rel: str, length: int) -> bytes:
        fd, st = self._open_stat(target, rel, blocking=True)
        with os.fdopen(fd, "rb") as fh:
            # A buffer of the file's size, not of `length`: a read limit of hundreds of MB allocated and shrunk for
            # every 100 KB commit file made reading them 3x slower.
            size = st.st_size
            data = fh.read(min(length, size + 1))
            if len(data) <= size or len(data) >= length:
                return data
            return data + fh.read(length - len(data))  # it grew while read: on, up to `length`

    def read_range(self, target: str, rel: str, start: int, length: int) -> bytes:
        if not hasattr(os, "pread"):
            with os.fdopen(self._open(target, rel), "rb") as fh:  # fsspec's read_block, minus its layers
                size = os.fstat(fh.fileno()).st_size
                if start >= size:  # nothing to read, as an object store's unsatisfiable range
                    return b""
                fh.seek(start)
                return fh.read(min(length, size - start))
        # Positioned reads on the descriptor: no file object, one `fstat` (a log-header scan makes one call a log
        # file: 14 us each through a file object, 8.5 us so).
        fd, st = self._open_stat(target, rel, blocking=False)  # a regular file's reads never wait for O_NONBLOCK
        try:
            want = min(length, st.st_size - start)
            if want <= 0:  # nothing to read, as an object store's unsatisfiable range
                return b""
            parts: list[bytes] = []
            got = 0
            while got < want:  # one read but where a read stops short (2 GiB at most at once), or the file shrank
                part = os.pread(fd, want - got, start + got)
                if not part:
                    break
                parts.append(part)
                got += len(part)
            return parts[0] if len(parts) == 1 else b"".join(parts)
        finally:
            os.close(fd)

    def read_ranges(self, ranges: Sequence[tuple[str, str, int, int]]) -> builtins.list[bytes | StorageError]:
        raise NotImplementedError("local reads go one by one (batches_reads is False)")

    def open_read(self, target: str, rel: str, block_size: int | None) -> Any:
        os.close(self._open(target, rel))  # regular file check
        return self.fs.open(target, "rb", **({"block_size": block_size} if block_size else {}))


# -- any fsspec file system -----------------------------------------------------------------------------------


class FsspecBackend:
    """Any fsspec file system (see the module doc)."""

    is_local = False

    def __init__(self, uri: str, options: dict[str, Any], reporter: Reporter, fs: Any, root: str) -> None:
        self._uri = uri
        self._options = options
        self._reporter = reporter
        self._fs_instance = fs
        self.root = root.rstrip("/") or "/"

    @property
    def fs(self) -> Any:
        """The fsspec file system, made on first use where the root was opened without it."""
        if self._fs_instance is None:
            self._fs_instance = open_fsspec(self._uri, self._options)[0]
        return self._fs_instance

    @property
    def protocol(self) -> str:
        proto = self.fs.protocol
        return proto[0] if isinstance(proto, (tuple, list)) else str(proto)

    def why(self, exc: BaseException) -> str:
        return describe_error(exc)

    def batches_reads(self) -> bool:
        return bool(getattr(self.fs, "async_impl", False))

    def _rel(self, abs_path: str) -> str:
        abs_path = abs_path.rstrip("/")
        root = self.root.rstrip("/")
        if abs_path == root:
            return ""
        if root and abs_path.startswith(root + "/"):
            return abs_path[len(root) + 1 :]
        if not root and abs_path.startswith("/"):
            return abs_path[1:]
        # Some back-ends drop the protocol or a leading slash; fall back to a suffix match.
        stripped = self.fs._strip_protocol(abs_path).rstrip("/")
        root_stripped = self.fs._strip_protocol(root).rstrip("/")
        if stripped.startswith(root_stripped + "/"):
            relative: str = stripped[len(root_stripped) + 1 :]
            return relative
        raise StorageError(f"{abs_path} is outside the storage root {self._uri}")

    def info_of(self, raw: dict[str, Any]) -> FileInfo:
        return FileInfo(path=self._rel(raw["name"]), size=int(raw.get("size") or 0), mtime_ms=mtime_ms_of(raw),
                        is_dir=raw.get("type") == "directory", etag=etag_of(raw))

    def _ls(self, target: str) -> builtins.list[dict[str, Any]]:
        return list(self.fs.ls(target, detail=True))

    def list(self, target: str, rel: str) -> builtins.list[FileInfo]:
        try:
            entries = self._ls(target)
        except FileNotFoundError:
            return []
        except backend_errors() as exc:
            raise StorageError(f"cannot list {self._reporter.uri_of(rel)}: {describe_error(exc)}") from exc
        infos = [self.info_of(e) for e in entries]
        return sorted((i for i in infos if i.path != rel), key=lambda i: i.path)

    def list_entries(self, target: str, rel: str) -> builtins.list[Entry]:
        return [(i.name, i.size, i.mtime_ms, i.is_dir) for i in self.list(target, rel)]

    def _info(self, target: str) -> dict[str, Any]:
        return dict(self.fs.info(target))

    def stat(self, target: str, rel: str) -> FileInfo:
        try:
            raw = self._info(target)
        except FileNotFoundError as exc:
            raise StorageError(f"{self._reporter.uri_of(rel)} does not exist") from exc
        except backend_errors() as exc:
            raise StorageError(f"cannot stat {self._reporter.uri_of(rel)}: {describe_error(exc)}") from exc
        return self.info_of(raw)

    def exists(self, target: str) -> bool:
        try:
            return bool(self.fs.exists(target))
        except FileNotFoundError:
            return False

    def is_dir(self, target: str) -> bool:
        return bool(self.fs.isdir(target))

    def _get_range(self, target: str, start: int, end: int) -> bytes:
        """Bytes [start, end) in one ranged GET. A range that starts at or past the end of the object is "not
        satisfiable" (HTTP 416) on S3, GCS and Azure: there is nothing to read, and an empty object is read that
        way too."""
        try:
            return bytes(self.fs.cat_file(target, start=start, end=end))
        except OSError as exc:
            if is_unsatisfiable_range(exc):
                return b""
            raise

    def read_prefix(self, target: str, rel: str, length: int) -> bytes:
        # One ranged GET (no HEAD first, as `fs.open` would do).
        return self._get_range(target, 0, length)

    def read_range(self, target: str, rel: str, start: int, length: int) -> bytes:
        # One ranged GET; `read_block` would open the file first (a HEAD for its size).
        return self._get_range(target, start, start + length)

    def read_ranges(self, ranges: Sequence[tuple[str, str, int, int]]) -> builtins.list[bytes | StorageError]:
        """One concurrent wave through fsspec's async `cat_ranges`; each range its bytes or its worded error."""
        reporter = self._reporter
        try:
            fetched = self.fs.cat_ranges([t for t, _, _, _ in ranges], [s for _, _, s, _ in ranges],
                                         [e for _, _, _, e in ranges], on_error="return")
        except backend_errors() as exc:
            raise StorageError(f"cannot read {len(ranges)} ranges under {self._uri}: {describe_error(exc)}") from exc
        result: list[bytes | StorageError] = []
        for (_, rel, start, _), value in zip(ranges, fetched, strict=True):
            if isinstance(value, BaseException) and is_unsatisfiable_range(value):
                value = b""
            if isinstance(value, (bytes, bytearray)):
                result.append(bytes(value))
            elif isinstance(value, FileNotFoundError):
                result.append(StorageError(f"{reporter.uri_of(rel)} does not exist (deleted while reading?)"))
            else:
                where = f" at {start}" if start else ""
                result.append(StorageError(f"cannot read {reporter.uri_of(rel)}{where}: {describe_error(value)}"))
        return result

    def open_read(self, target: str, rel: str, block_size: int | None) -> Any:
        return self.fs.open(target, "rb", **({"block_size": block_size} if block_size else {}))


# -- S3 through obstore ---------------------------------------------------------------------------------------


class ObstoreS3Backend(FsspecBackend):
    """S3 served by obstore where it answers exactly as s3fs would; s3fs (made on first need) for the rest and
    for whatever obstore fails, so errors keep s3fs's words (:mod:`hudi_core.io.s3_listing`)."""

    def __init__(self, uri: str, options: dict[str, Any], reporter: Reporter, scheme: str, root: str,
                 lister: Any) -> None:
        super().__init__(uri, options, reporter, None, root)
        self._scheme = scheme
        #: The obstore client; ``None`` once a listing failed (s3fs lists, and words the error, from then on).
        self.lister: Any = lister

    @property
    def protocol(self) -> str:
        return self._scheme

    def batches_reads(self) -> bool:
        return True

    def _ls(self, target: str) -> builtins.list[dict[str, Any]]:
        if self.lister is not None:
            try:
                return list(self.lister.ls(target))
            except Exception:  # any trouble: s3fs lists, and words the error, from now on
                self.lister = None
        return super()._ls(target)

    def _head(self, target: str) -> dict[str, Any] | bool | None:
        """obstore's answer for one path: its entry (listed before, else one HEAD), ``False`` when S3 says there
        is no such object, None where the request failed otherwise (s3fs then decides and words it)."""
        if self.lister is None:
            return None
        raw = self.lister.cached_info(target)
        if raw is not None:
            return dict(raw)
        try:
            return dict(self.lister.head(target))
        except Exception as exc:  # not found: an answer; anything else: s3fs decides and words it
            return False if isinstance(exc, FileNotFoundError) or type(exc).__name__ == "NotFoundError" else None

    def _info(self, target: str) -> dict[str, Any]:
        found = self._head(target)
        return found if isinstance(found, dict) else super()._info(target)

    def _exists(self, target: str, as_folder: bool) -> bool | None:
        """s3fs's `exists` (`as_folder` False) or `isdir` (True) answered by obstore: an object (a HEAD) exists
        and is no folder; else a prefix with objects under it is a folder. None where a request failed for
        another reason than "not found"."""
        head = self._head(target)
        if isinstance(head, dict):
            return not as_folder
        if head is None or self.lister is None:
            return None
        try:
            return bool(self.lister.has_children(target))
        except Exception:  # trouble: s3fs decides and words it
            return None

    def exists(self, target: str) -> bool:
        known = self._exists(target, as_folder=False)
        return known if known is not None else super().exists(target)

    def is_dir(self, target: str) -> bool:
        known = self._exists(target, as_folder=True)
        return known if known is not None else super().is_dir(target)

    def _fast_ranges(self, ranges: builtins.list[tuple[str, int, int]]) -> builtins.list[bytes | None] | None:
        """Ranges read through obstore: bytes, or None for an item it could not read (s3fs reads those, and
        words the error); None when obstore cannot take the batch."""
        if self.lister is None or not ranges:
            return None
        try:
            fetched = self.lister.get_ranges(ranges)
        except Exception:  # any trouble with the batch: s3fs reads it
            return None
        if fetched is None:
            return None
        # A range at or past the end of an object (an empty object too) is S3's 416: nothing to read.
        return [value if isinstance(value, bytes) else b"" if is_unsatisfiable_range(value) else None
                for value in fetched]

    def _get_range(self, target: str, start: int, end: int) -> bytes:
        fast = self._fast_ranges([(target, start, end)])
        if fast is not None and fast[0] is not None:
            return fast[0]  # else s3fs reads it, and words the error
        return super()._get_range(target, start, end)

    def read_ranges(self, ranges: Sequence[tuple[str, str, int, int]]) -> builtins.list[bytes | StorageError]:
        fast = self._fast_ranges([(t, s, e) for t, _, s, e in ranges])
        if fast is None:
            return super().read_ranges(ranges)
        rest = [r for r, data in zip(ranges, fast, strict=True) if data is None]
        slow = iter(super().read_ranges(rest) if rest else [])
        return [data if data is not None else next(slow) for data in fast]
