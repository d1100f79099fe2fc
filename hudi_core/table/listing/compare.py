"""Two listings of one table compared: the metadata table's against storage's, with Hudi's tolerances.

What `HoodieMetadataTableValidator` (hudi-utilities, 1.x) and `hudi-cli metadata validate-files` check,
file by file: a file one side lists and the other lacks, or whose sizes differ; a partition one side
has and the other lacks. Only Hudi's own files are compared (base files of the table's format and
log files; not partition metafiles, checksum files or strangers). Differences Hudi's validator tolerates
are kept, marked with the :class:`Tolerance` that applies:

* a file on storage that the metadata table lacks, written by an instant that is pending, or that is not
  on the timeline after its start (a failed write): readers hide it, Hudi rolls it back;
* a log file on storage that the metadata table lacks, of a completed delta commit whose write stats do
  not name it: a retried task's leftover (`areFileSliceCommittedLogFilesMatching`);
* a partition on storage that the metadata table lacks, created by an uncommitted write (its
  `.hoodie_partition_metadata` `commitTime` is not completed and later than the last completed instant);
* a file the metadata table lists that storage lacks, named by a pending clean's plan: the cleaner has
  deleted it and the metadata table learns of it when the clean completes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from hudi_core.errors import Finding, StorageError
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.active import ActiveTimeline
from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.records import CleanerPlan
from hudi_core.io.filenames import PARTITION_METAFILE_PREFIX, base_file_parts, parse_log_file_name
from hudi_core.io.storage import ReadOnlyStorage
from hudi_core.lazy import LazyModule
from hudi_core.table.listing import ListedFile, ListedFiles, ListingKind

pc: Any = LazyModule("pyarrow.compute")

if TYPE_CHECKING:
    from hudi_core.table.fsview import FileSystemView


class DifferenceKind(StrEnum):
    """What disagrees (`validate-metadata` JSON `kind`)."""

    MISSING_ON_STORAGE = "missing_on_storage"
    MISSING_IN_METADATA = "missing_in_metadata"
    SIZE_DIFFERS = "size_differs"
    PARTITION_MISSING_ON_STORAGE = "partition_missing_on_storage"
    PARTITION_MISSING_IN_METADATA = "partition_missing_in_metadata"


#: What Hudi does because of each kind of difference (the listing Hudi 1.x uses is the metadata table's).
HUDI_EFFECT: dict[DifferenceKind, str] = {
    DifferenceKind.MISSING_ON_STORAGE:
        "Hudi readers list it and fail (FileNotFoundException) when a query reads it; the cleaner plans to "
        "delete a file that is gone",
    DifferenceKind.MISSING_IN_METADATA:
        "Hudi 1.x readers never see it (its rows are missing from queries that list through the metadata table, "
        "and duplicated where another listing sees it too); the cleaner never deletes it",
    DifferenceKind.SIZE_DIFFERS:
        "readers and writers trust the metadata table's size (split planning, small-file handling)",
    DifferenceKind.PARTITION_MISSING_ON_STORAGE:
        "Hudi lists the partition and its files; reading them fails",
    DifferenceKind.PARTITION_MISSING_IN_METADATA:
        "Hudi never lists the partition: its files are invisible to readers and the cleaner",
}


#: The finding a view reports for each kind of difference: its code, and what the file or partition is.
DIFFERENCE_FINDINGS: dict[DifferenceKind, tuple[str, str]] = {
    DifferenceKind.MISSING_ON_STORAGE: ("metadata_lists_missing_file", "is listed by the metadata table but not on "
                                        "storage"),
    DifferenceKind.MISSING_IN_METADATA: ("file_not_in_metadata_table", "is on storage but the metadata table does "
                                         "not list it"),
    DifferenceKind.SIZE_DIFFERS: ("metadata_size_differs", "has another size in the metadata table"),
    DifferenceKind.PARTITION_MISSING_ON_STORAGE: ("metadata_lists_missing_partition", "is listed by the metadata "
                                                  "table but is no partition on storage"),
    DifferenceKind.PARTITION_MISSING_IN_METADATA: ("partition_not_in_metadata_table", "is a partition on storage "
                                                   "that the metadata table does not list"),
}


class Tolerance(StrEnum):
    """Why Hudi's validator lets a difference pass."""

    PENDING_INSTANT = "pending_instant"
    FAILED_INSTANT = "failed_instant"
    RETRIED_TASK_LOG = "retried_task_log"
    UNCOMMITTED_PARTITION = "uncommitted_partition"
    PENDING_CLEAN = "pending_clean"


@dataclass(frozen=True)
class ListingDifference:
    """One difference between the metadata table's listing and storage's.

    `instant` is the instant that wrote the file as its name says (a base file's instant, a log file's
    delta commit on v8+ or base instant on v6); `tolerated` the tolerance that applies (None: a real
    difference) and `tolerated_by` the instant behind it (the pending write, the pending clean).
    """

    kind: DifferenceKind
    partition: str
    file: str | None
    metadata_size: int | None = None
    storage_size: int | None = None
    instant: str | None = None
    tolerated: Tolerance | None = None
    tolerated_by: str | None = None


def is_hudi_file(name: str, base_extension: str) -> bool:
    """A base file of the table's format or a log file: what both listings should agree on."""
    if name.startswith(PARTITION_METAFILE_PREFIX) or (name.startswith(".") and name.endswith(".crc")):
        return False
    base = base_file_parts(name)
    if base is not None:
        return base[3].lower() == base_extension
    log = parse_log_file_name(name)
    return log is not None and log.extension == "log"


def writing_instant(name: str) -> str | None:
    """The instant a file name carries (base file: its instant; log file: its embedded instant)."""
    base = base_file_parts(name)
    if base is not None:
        return base[2]
    log = parse_log_file_name(name)
    return log.instant_time if log is not None else None


class _Timeline:
    """The timeline questions the tolerances ask, answered once each."""

    def __init__(self, timeline: ActiveTimeline) -> None:
        self.timeline = timeline
        self.completed = {i.requested_time for i in timeline.completed()}
        self.pending = {i.requested_time for i in timeline.pending()}
        first = timeline.first()
        self.first = first.requested_time if first else None
        last = timeline.completed().last()
        self.last_completed = last.requested_time if last else None
        self._written: dict[str, set[str] | None] = {}
        self._pending_clean: dict[tuple[str, str], str] | None = None

    def is_archived(self, t: str) -> bool:
        return self.first is not None and t < self.first

    def files_written(self, t: str) -> set[str] | None:
        """File names the completed instant `t`'s write stats name (None: unreadable or not a write)."""
        if t not in self._written:
            inst = self.timeline.get(t)
            meta = self.timeline.commit_metadata(inst) if inst is not None and inst.is_completed else None
            self._written[t] = None if meta is None else {
                (s.path or "").rsplit("/", 1)[-1] for s in meta.write_stats() if s.path}
        return self._written[t]

    def pending_clean_files(self) -> dict[tuple[str, str], str]:
        """`(partition, file name) -> clean instant` for every file a pending clean's plan deletes."""
        if self._pending_clean is None:
            out: dict[tuple[str, str], str] = {}
            for inst in self.timeline.pending().filter([ia.CLEAN]):
                plan = self.timeline.record(inst, State.REQUESTED)
                if isinstance(plan, CleanerPlan):
                    for partition, files in plan.file_paths_to_delete.items():
                        for f in files:
                            out[(partition, f.file_path.rsplit("/", 1)[-1])] = inst.requested_time
            self._pending_clean = out
        return self._pending_clean


@dataclass(frozen=True)
class ListingComparison:
    """Every difference between two listings (:func:`compare_listings`) and how many Hudi files each lists."""

    differences: list[ListingDifference]
    files_in_metadata: int
    files_on_storage: int


def compare_listings(metadata: Mapping[str, Sequence[ListedFile]], storage: Mapping[str, Sequence[ListedFile]],
                     timeline: ActiveTimeline, base_file_format: str, storage_root: ReadOnlyStorage | None = None,
                     table_version: int = 8) -> ListingComparison:
    """Every difference between the two listings, partition by partition, in name order, each with the
    tolerance Hudi's validator applies (module doc). `storage_root` reads a differing partition's
    `.hoodie_partition_metadata` to judge an uncommitted partition.

    Performance: names are compared as sets and sizes by lookup; only the names one side lacks, or whose sizes
    differ, are parsed (a million names parsed twice were most of the comparison)."""
    ext = "." + base_file_format.lower()
    tl = _Timeline(timeline)
    out: list[ListingDifference] = []
    in_mdt_total = on_fs_total = 0
    for partition in sorted(set(metadata) | set(storage)):
        in_mdt, on_fs = partition in metadata, partition in storage
        if in_mdt and not on_fs:
            out.append(ListingDifference(DifferenceKind.PARTITION_MISSING_ON_STORAGE, partition, None))
        elif on_fs and not in_mdt:
            creator = _partition_creator(storage_root, partition) if storage_root is not None else None
            tolerated = (Tolerance.UNCOMMITTED_PARTITION if creator is not None and creator not in tl.completed
                         and (tl.last_completed is None or creator > tl.last_completed) else None)
            out.append(ListingDifference(DifferenceKind.PARTITION_MISSING_IN_METADATA, partition, None,
                                         instant=creator, tolerated=tolerated,
                                         tolerated_by=creator if tolerated else None))
        mdt_files, fs_files = metadata.get(partition, ()), storage.get(partition, ())
        if _same_files(mdt_files, fs_files):
            # The usual case, told by comparing the two partitions' columns: no difference to look for.
            names = min(mdt_files, fs_files, key=len).names  # type: ignore[attr-defined]  # the names both list
            first = names[0].as_py() if len(names) else None
            shared = len(names) if first is None or is_hudi_file(first, ext) else sum(
                1 for n in names.to_pylist() if is_hudi_file(n, ext))
            in_mdt_total += shared
            on_fs_total += shared
            continue
        mdt_sizes = {f.name: f.size for f in mdt_files}
        fs_sizes = {f.name: f.size for f in fs_files}
        only_mdt = [n for n in mdt_sizes.keys() - fs_sizes.keys() if is_hudi_file(n, ext)]
        only_fs = [n for n in fs_sizes.keys() - mdt_sizes.keys() if is_hudi_file(n, ext)]
        common = mdt_sizes.keys() & fs_sizes.keys()
        resized = [n for n in common if mdt_sizes[n] != fs_sizes[n] and is_hudi_file(n, ext)]
        # Both sides list Hudi's own files; a name both list that is not one (never seen) is not counted. The
        # first name in order stands for all (as the comparison of columns above judges).
        shared = len(common) if not common or is_hudi_file(min(common), ext) else sum(
            1 for n in common if is_hudi_file(n, ext))
        in_mdt_total += shared + len(only_mdt)
        on_fs_total += shared + len(only_fs)
        rows: list[tuple[str, ListingDifference]] = []
        for name in only_mdt:
            clean = tl.pending_clean_files().get((partition, name))
            rows.append((name, ListingDifference(DifferenceKind.MISSING_ON_STORAGE, partition, name, mdt_sizes[name],
                                                 None, writing_instant(name),
                                                 Tolerance.PENDING_CLEAN if clean else None, clean)))
        for name in only_fs:
            instant = writing_instant(name)
            tolerance = _unlisted_tolerance(name, instant, tl, table_version)
            rows.append((name, ListingDifference(DifferenceKind.MISSING_IN_METADATA, partition, name, None,
                                                 fs_sizes[name], instant, tolerance, instant if tolerance else None)))
        for name in resized:
            rows.append((name, ListingDifference(DifferenceKind.SIZE_DIFFERS, partition, name, mdt_sizes[name],
                                                 fs_sizes[name], writing_instant(name))))
        out.extend(d for _, d in sorted(rows, key=lambda r: r[0]))
    return ListingComparison(out, in_mdt_total, on_fs_total)


def _same_files(a: Sequence[ListedFile], b: Sequence[ListedFile]) -> bool:
    """Whether two partitions held as columns list the same names with the same sizes (both sorted by name), but
    for partition metafiles on one side only (storage lists `.hoodie_partition_metadata`, the metadata table
    does not; no difference either way, as it is no Hudi data file)."""
    if not (isinstance(a, ListedFiles) and isinstance(b, ListedFiles)):
        return False
    if len(a) == len(b) and a.names.equals(b.names) and a.sizes.equals(b.sizes):
        return True
    for one, other in ((a, b), (b, a)):
        meta = pc.starts_with(other.names, PARTITION_METAFILE_PREFIX)
        hidden = pc.sum(meta).as_py() or 0
        if hidden and len(other) - hidden == len(one) and not pc.any(
                pc.starts_with(one.names, PARTITION_METAFILE_PREFIX)).as_py():
            keep = pc.invert(meta)
            return bool(one.names.equals(other.names.filter(keep)) and one.sizes.equals(other.sizes.filter(keep)))
    return False


def _unlisted_tolerance(name: str, instant: str | None, tl: _Timeline, table_version: int) -> Tolerance | None:
    """The tolerance for a file on storage that the metadata table does not list."""
    if instant is None or tl.is_archived(instant):
        return None
    if instant in tl.pending:
        return Tolerance.PENDING_INSTANT
    if instant not in tl.completed:
        # v6 log files carry their base instant, not the writing delta commit: no verdict from the name.
        if name.startswith(".") and table_version < 8:
            return None
        return Tolerance.FAILED_INSTANT
    if name.startswith(".") and table_version >= 8:
        written = tl.files_written(instant)
        if written is not None and name not in written:
            return Tolerance.RETRIED_TASK_LOG
    return None


def _partition_creator(storage: ReadOnlyStorage, partition: str) -> str | None:
    """The `commitTime` of a partition's `.hoodie_partition_metadata` (text properties), if readable."""
    try:
        names = [e[0] for e in storage.list_entries(partition) if str(e[0]).startswith(PARTITION_METAFILE_PREFIX)]
        if not names:
            return None
        text = storage.read(f"{partition}/{names[0]}" if partition else names[0]).decode("utf-8", "replace")
    except StorageError:
        return None
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() == "commitTime":
            return value.strip() or None
    return None


@dataclass
class ListingCheck:
    """What the table's verdict asks of its file listing: which listing Hudi uses, whether it was read whole, and
    (a metadata-table listing checked against storage) every difference with storage. Made from a built
    file-system view, or from the two listings alone (no file group built: what a command that needs no view
    pays for its verdict).

    `latest_files` tells, only when asked, which files of latest file slices a set of partitions holds (a file
    missing on storage is an error when a snapshot read opens it): it builds a view of those partitions only."""

    listing: ListingKind
    incomplete: bool
    differences: list[ListingDifference] | None
    findings: list[Finding] = field(default_factory=list)
    latest_files: Callable[[frozenset[str]], set[tuple[str, str]]] | None = field(default=None, repr=False)

    @classmethod
    def of_view(cls, view: FileSystemView) -> ListingCheck:
        """The check a built view made (its listing, its storage check's differences)."""
        return cls(view.listing, view.listing_incomplete, view.listing_differences,
                   latest_files=view.latest_file_keys)

    @property
    def storage_checked(self) -> bool:
        """Whether the listing was checked against storage (a storage listing is storage)."""
        return self.listing is ListingKind.STORAGE or self.differences is not None
