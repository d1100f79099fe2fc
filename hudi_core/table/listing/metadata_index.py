"""A derived index of the metadata table's `files` partition as read whole, kept in the user's cache folder (never
in the table).

Reading the `files` partition of a table of a million files decodes its base HFile's records and merges the log
records onto them: seconds, in every process that lists the table (the view, the verdict's listing check, the
doctor, the dashboard). What that read produces depends only on the bytes of the slice's files and on which log
blocks count, so it can be kept:

* one Arrow IPC file per metadata table (``<hash of the files folder's resolved location>.v2.arrow``): every
  record's live files (``name``, ``size``) in one table, and in its schema's metadata the rest of the read as
  JSON (each record's span, type and tombstones, the log blocks and what the reader did with each: their layout is
  the reader's, :mod:`hudi_core.table.listing.metadata`) and the key it was made for;
* the key is a SHA-256 of what the read depends on: the slice's base and log files (name, size, modification
  time, and the version key storage gives: locally the times in nanoseconds and the inode), the metadata table's
  latest completed instant, the valid instants that decide which log blocks count
  (:func:`~hudi_core.table.listing.metadata.valid_instant_times`), and on table versions below 8 the metadata
  table's completed instants. Any change reads the partition again and replaces the file.

Only a whole read that raised no finding is kept (a damaged file is read, and reported, every time), and only
when no file of the slice changed in the last :data:`SETTLE_MS` without a version key. A file that cannot be read
back, fails its checksum or holds what no read keeps is rebuilt, with an info finding naming it: the index only ever
saves time, never changes an answer.

Location: ``listing-index/`` in the inspector's cache folder; ``HUDI_INSPECTOR_LISTING_INDEX=0`` turns it off, a
folder path moves it. Listings of fewer than :data:`~hudi_core.formats.timeline.index_paths.LISTING_MIN_FILES`
files are not kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hudi_core.errors import Finding, Severity, StorageError
from hudi_core.formats.timeline.index_files import peek_metadata, read_checked, write_checked
from hudi_core.formats.timeline.index_paths import (
    LISTING_SWITCH_ENV,
    cache_folder,
    listing_index_min_files,
    switch_enabled,
)
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.lazy import LazyModule

pa: Any = LazyModule("pyarrow")

#: Bumped whenever the kept read would change for the same bytes (reader fixes, new fields).
INDEX_FORMAT = 2
#: A slice file with no version key that changed less than this long ago keeps the read from being saved: a
#: rewrite within the store's time resolution would look unchanged.
SETTLE_MS = 2_000


def _schema() -> pa.Schema:
    return pa.schema([pa.field("name", pa.string()), pa.field("size", pa.int64())])


def index_dir() -> Path:
    """Where the listing index's files live (see the module doc)."""
    return cache_folder(LISTING_SWITCH_ENV, "listing-index")


class ListingIndex:
    """The kept read of one metadata table's `files` partition, for one key (see the module doc)."""

    def __init__(self, path: Path, location: str, key: str, settled: bool) -> None:
        self.path = path
        self.location = location
        self.key = key
        self.settled = settled

    @classmethod
    def of(cls, storage: ReadOnlyStorage, folder: str, files: Sequence[tuple[str, int, int | None]],
           depends_on: Any) -> ListingIndex | None:
        """The index entry for a read of `folder` of `storage` over `files` ((path, size, mtime_ms) of the
        slice's files, in read order) given `depends_on` (JSON-able: what else decides the read); None when the
        index is switched off."""
        if not switch_enabled(LISTING_SWITCH_ENV):
            return None
        location = storage.location_of(folder)
        now_ms = time.time_ns() // 1_000_000
        settled = True
        described = []
        for path, size, mtime_ms in files:
            version = None
            if storage.is_local:
                try:
                    version = storage.stat(path).etag
                except StorageError:
                    return None
            if version is None and (mtime_ms is None or now_ms - mtime_ms < SETTLE_MS):
                settled = False
            described.append([path, size, mtime_ms, version])
        digest = hashlib.sha256(json.dumps([INDEX_FORMAT, location, described, depends_on],
                                           sort_keys=True).encode("utf-8", "surrogateescape")).hexdigest()
        stem = hashlib.sha256(location.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        return cls(index_dir() / f"{stem}.v{INDEX_FORMAT}.arrow", location, digest, settled)

    def load(self, findings: list[Finding]) -> tuple[pa.Table, dict[str, Any]] | None:
        """The kept read for this key: its table of live files and the rest of the read (the JSON the reader
        saved); None when none is kept for it. A file that cannot be read back is removed, with a finding; the
        reader rejects (:meth:`reject`) content no read keeps."""
        if not self.path.is_file():
            return None
        try:
            # A file kept for another key (the table changed since) is replaced when saved: not worth checking.
            if peek_metadata(self.path).get(b"key") != self.key.encode():
                return None
        except (OSError, ValueError, pa.ArrowException):
            pass  # unreadable: checked below, and reported
        try:
            table = read_checked(self.path)
            meta = table.schema.metadata or {}
            same_kind = table.schema.remove_metadata().equals(_schema()) \
                and meta.get(b"format") == str(INDEX_FORMAT).encode() \
                and meta.get(b"location") == self.location.encode("utf-8", "surrogateescape")
            if not same_kind:
                raise ValueError("it was written for another index format or metadata table")
            if meta.get(b"key") != self.key.encode():
                return None  # the table changed since: read again, and replaced when saved
            payload = json.loads(meta[b"read"])
            if not isinstance(payload, dict):
                raise ValueError("it holds no read")
        except (OSError, ValueError, KeyError, pa.ArrowException) as exc:
            self.reject(findings, str(exc))
            return None
        return table.replace_schema_metadata(None), payload

    def reject(self, findings: list[Finding], why: str) -> None:
        """Report the kept file as unusable (`why`) and remove it: the partition is read again and kept anew."""
        findings.append(Finding(
            Severity.INFO, "listing_index_rebuilt", str(self.path),
            f"the cached read of this metadata table's files partition ({self.path}) could not be read "
            f"({why}); the partition is read again and the index rebuilt"))
        with contextlib.suppress(OSError):
            self.path.unlink()

    def save(self, table: pa.Table, payload: dict[str, Any]) -> pa.Table | None:
        """Keep a read: its table of live files (``name``, ``size``) and the rest as JSON (best effort: an index
        that cannot be written is skipped); the table read back from the written file, memory-mapped, or None when
        it was not kept."""
        if not self.settled or table.num_rows < listing_index_min_files():
            return None
        meta = {"format": str(INDEX_FORMAT), "location": self.location, "key": self.key,
                "read": json.dumps(payload)}
        try:
            written = write_checked(self.path.parent, self.path,
                                    table.select(["name", "size"]).cast(_schema()).replace_schema_metadata(meta))
        except (OSError, pa.ArrowException, TypeError, ValueError):
            return None
        stem = self.path.name.split(".v", 1)[0]
        for older in self.path.parent.glob(f"{stem}.v*.arrow"):  # this metadata table's files of other formats
            if older != self.path:
                with contextlib.suppress(OSError):
                    older.unlink()
        return written.replace_schema_metadata(None)


__all__ = ["INDEX_FORMAT", "ListingIndex", "index_dir"]
