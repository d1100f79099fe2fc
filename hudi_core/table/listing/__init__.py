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

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, overload

from hudi_core.errors import Finding
from hudi_core.lazy import LazyModule

pa: Any = LazyModule("pyarrow")


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


class ListedFiles(Sequence[ListedFile]):
    """One partition's files as Arrow columns (``name``, ``size``, ``mtime_ms``), sorted by name.

    A listing of a million files held as one :class:`ListedFile` each is about 200 MiB of objects; as columns
    it is the names' bytes and two integers a file. Indexing and iteration still give :class:`ListedFile`
    objects, made as they are asked for (a partition at a time), so code that walks one partition is unchanged;
    code that walks the whole table reads the columns (:attr:`names`, :attr:`sizes`).
    """

    __slots__ = ("table",)

    def __init__(self, table: Any) -> None:
        #: Arrow table with the columns name (string), size (int64), mtime_ms (int64, null when unknown).
        self.table = table

    @classmethod
    def of(cls, files: Sequence[ListedFile]) -> ListedFiles:
        """Columns of `files` (already in name order)."""
        if isinstance(files, ListedFiles):
            return files
        return cls(pa.table({"name": pa.array([f.name for f in files], pa.string()),
                             "size": pa.array([f.size for f in files], pa.int64()),
                             "mtime_ms": pa.array([f.mtime_ms for f in files], pa.int64())}))

    @property
    def names(self) -> Any:
        """The names (Arrow string ChunkedArray)."""
        return self.table.column("name")

    @property
    def sizes(self) -> Any:
        """The sizes in bytes (Arrow int64 ChunkedArray)."""
        return self.table.column("size")

    def name_list(self) -> list[str]:
        return self.names.to_pylist()

    def __len__(self) -> int:
        return self.table.num_rows

    @overload
    def __getitem__(self, index: int) -> ListedFile: ...

    @overload
    def __getitem__(self, index: slice) -> ListedFiles: ...

    def __getitem__(self, index: int | slice) -> ListedFile | ListedFiles:
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return ListedFiles.of(list(self)[index])
            return ListedFiles(self.table.slice(start, max(0, stop - start)))
        n = len(self)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("ListedFiles index out of range")
        row = self.table.slice(index, 1).to_pylist()[0]
        return ListedFile(row["name"], row["size"], row["mtime_ms"])

    def __iter__(self) -> Iterator[ListedFile]:
        names, sizes, mtimes = (self.table.column(c).to_pylist() for c in ("name", "size", "mtime_ms"))
        return map(ListedFile, names, sizes, mtimes)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, ListedFiles):
            return self.table.equals(other.table)
        if isinstance(other, Sequence):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ListedFiles({len(self)} files)"


@dataclass
class Listing:
    """A table's partitions and their files, as one listing source sees them.

    `partitions` maps a root-relative partition path (``""`` for a non-partitioned table) to its
    files sorted by name (a :class:`ListedFiles` from storage and the metadata table).
    `findings` are what the source ran into (an unreadable metadata-table
    file, a partition the config names but storage lacks, ...); `incomplete` is set when a file
    the listing depends on could not be read, so the listing may miss files. `reason` says why this
    source was chosen (shown beside `kind` in every answer).
    """

    kind: ListingKind
    partitions: Mapping[str, Sequence[ListedFile]]
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


