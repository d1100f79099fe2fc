"""Where a table's file list comes from: storage, or the metadata table's `files` partition.

Hudi 1.x readers, cleaner and archiver list a table through its metadata table when
`hoodie.properties` says the `files` partition is available (`HoodieTableConfig
.isMetadataPartitionAvailable(FILES)`, i.e. `files` in `hoodie.table.metadata.partitions`), and list
storage otherwise (`FileSystemBackedTableMetadata`). Both are a :class:`ListingSource` here: each
answers a :class:`Listing` (partition -> files), and the file-system view is built from either the
same way, so every answer can say which listing it used.

Part of the table layer: imports the formats, engines and bytes layers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from hudi_core.errors import Finding


class ListingKind(StrEnum):
    """Which listing a view was built from (JSON `listing`)."""

    STORAGE = "storage"
    METADATA = "metadata"


@dataclass(frozen=True, slots=True)  # slots: one per file, a million at scale
class ListedFile:
    """One file of a partition (name, size in bytes, modification time when storage gave one).

    From the metadata table a file has no modification time (`HoodieMetadataFileInfo` holds the
    size and a deletion flag only).
    """

    name: str
    size: int
    mtime_ms: int | None = None


@dataclass
class Listing:
    """A table's partitions and their files, as one listing source sees them.

    `partitions` maps a root-relative partition path (``""`` for a non-partitioned table) to its
    files sorted by name. `findings` are what the source ran into (an unreadable metadata-table
    file, a partition the config names but storage lacks, ...); `incomplete` is set when a file
    the listing depends on could not be read, so the listing may miss files. `reason` says why this
    source was chosen (shown beside `kind` in every answer).
    """

    kind: ListingKind
    partitions: dict[str, list[ListedFile]]
    findings: list[Finding] = field(default_factory=list)
    incomplete: bool = False
    reason: str = ""


class ListingSource(Protocol):
    """Something that lists a table: storage (:class:`hudi_core.table.listing.storage.StorageListing`) or
    the metadata table (:class:`hudi_core.table.listing.metadata.MetadataTableListing`)."""

    kind: ListingKind

    def list(self, wanted: frozenset[str] | None = None) -> Listing:
        """Every partition with its files, or only the partitions in `wanted` (the same answer for
        them as the whole listing gives, without listing the rest)."""
        ...


