"""A derived index of layout-1 archive files, kept in the user's cache directory (never in the table).

Reading a layout-1 archive means decoding every `HoodieArchivedMetaEntry` record of every
`.commits_.archive.N` log file: years of archive are millions of records. Archive files are
immutable once written (Hudi appends new files; `mergeArchivePlan` replaces small ones with a new
file), so the listing rows of one file (:data:`~hudi_core.formats.timeline.archived_v1.ARCHIVE_LISTING_SCHEMA`:
instant time, action, state, completion time, block offset, record index, and any damage rows) can be
kept and reused while the file is unchanged.

An entry is keyed by the archive file's resolved absolute location
(:meth:`~hudi_core.io.storage.ReadOnlyStorage.location_of`: the same relative path used from two folders is two
files), size, modification time and version (the store's ETag; locally the modification and change times in
nanoseconds and the inode), plus whether the merge plan names it as an unfinished merge (that changes how its
damage is reported). Each entry carries a SHA-256 of its bytes (:mod:`~hudi_core.formats.timeline.index_files`):
an entry that rotted is rebuilt with a finding. A changed or
new archive file has a new key and is read again; the entry of its old version is removed. Entries
are Arrow IPC files written atomically (temporary file, then rename). An entry that cannot be read
back, or whose rows do not match the schema, is rebuilt from the archive file and reported as a
finding: the index can only ever save time, never change an answer.

Location: ``archive-index/`` in the inspector's cache folder (``$HUDI_INSPECTOR_CACHE``, else
``~/.cache/hudi-inspector``). ``HUDI_INSPECTOR_ARCHIVE_INDEX`` set to ``0`` turns the index off; set to
a folder path, it puts the index there.
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from hudi_core.errors import Finding, Severity
from hudi_core.formats.timeline.index_files import read_checked, write_checked
from hudi_core.formats.timeline.index_paths import CACHE_ENV, cache_folder, switch_enabled

__all__ = ["CACHE_ENV", "INDEX_FORMAT", "SWITCH_ENV", "ArchiveIndex", "IndexKey", "index_dir", "index_enabled"]
SWITCH_ENV = "HUDI_INSPECTOR_ARCHIVE_INDEX"
#: Bumped whenever the listing rows of a file would change for the same bytes (reader fixes).
INDEX_FORMAT = 2


#: An archive file with no version key that changed less than this long ago gets no entry (a rewrite within the
#: store's time resolution would look unchanged).
SETTLE_MS = 2_000


def _settled(mtime_ms: int | None) -> bool:
    import time

    return mtime_ms is not None and time.time_ns() // 1_000_000 - mtime_ms >= SETTLE_MS


def index_dir() -> Path:
    """Where index entries live (see the module doc)."""
    return cache_folder(SWITCH_ENV, "archive-index")


def index_enabled() -> bool:
    return switch_enabled(SWITCH_ENV)


@dataclass(frozen=True)
class IndexKey:
    """Identity of one version of one archive file."""

    uri: str
    size: int
    mtime_ms: int | None
    tolerated: bool
    #: The file's version key (:attr:`~hudi_core.io.backends.FileInfo.etag`), where the store gives one.
    version: str | None = None

    @property
    def file_stem(self) -> str:
        """`<hash of the URI>` — shared by every version of the file, so old versions can be removed."""
        return hashlib.sha256(self.uri.encode("utf-8", "surrogateescape")).hexdigest()[:32]

    @property
    def version_tag(self) -> str:
        raw = f"{INDEX_FORMAT}|{self.size}|{self.mtime_ms}|{int(self.tolerated)}|{self.version}"
        return hashlib.sha256(raw.encode()).hexdigest()[:16]

    @property
    def file_name(self) -> str:
        return f"{self.file_stem}-{self.version_tag}.arrow"


class ArchiveIndex:
    """Index entries for archive files; reads and writes only under :func:`index_dir`."""

    def __init__(self, schema: pa.Schema, directory: Path | None = None) -> None:
        self.schema = schema
        self.directory = directory or index_dir()
        self.findings: list[Finding] = []
        self.hits = 0
        self.misses = 0

    def get(self, key: IndexKey) -> pa.Table | None:
        """The rows recorded for `key`, or ``None`` (not indexed, or damaged: then a finding)."""
        path = self.directory / key.file_name
        if not path.is_file():
            self.misses += 1
            return None
        try:
            table = read_checked(path)
            if not table.schema.equals(self.schema):
                raise ValueError(f"schema {table.schema} is not the listing schema")
            self.hits += 1
            return table
        except (OSError, ValueError, pa.ArrowException) as exc:
            self.misses += 1
            self.findings.append(Finding(
                Severity.INFO, "archive_index_rebuilt", key.uri,
                f"the cached index of this archive file ({path}) could not be read ({exc}); "
                "the archive file was read again and the index rebuilt",
            ))
            with contextlib.suppress(OSError):
                path.unlink()
            return None

    def put(self, key: IndexKey, rows: pa.Table) -> pa.Table | None:
        """Record the rows of one archive file (best effort: a cache that cannot be written is skipped); the rows
        read back from the written entry, memory-mapped (their pages are the file's, which the process can hand
        back), or ``None`` when nothing was written."""
        try:
            if key.version is None and not _settled(key.mtime_ms):
                return None
            self.directory.mkdir(parents=True, exist_ok=True)
            for stale in self.directory.glob(f"{key.file_stem}-*.arrow"):
                if stale.name != key.file_name:
                    with contextlib.suppress(OSError):
                        stale.unlink()
            return write_checked(self.directory, self.directory / key.file_name,
                                 rows.cast(self.schema) if rows.schema != self.schema else rows)
        except (OSError, pa.ArrowException):
            return None
