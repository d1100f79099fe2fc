"""`validate-metadata`: the metadata table's `files` partition checked against storage.

What Hudi's `HoodieMetadataTableValidator` (hudi-utilities) and `hudi-cli metadata validate-files` do, as
one read-only answer: every partition and file where the metadata table's listing (read as Hudi 1.1 reads
it, :mod:`hudi_core.table.listing.metadata`) and storage disagree, with the tolerances of Hudi's validator
(:mod:`hudi_core.table.listing.compare`), and for each difference the instant that wrote or deleted the file
(its name, commit metadata, clean and rollback metadata) and what Hudi does because of it. Also the
data-table instants the metadata table has not applied (it is behind).

Outcome: ``consistent`` (exit 0), ``differences`` (exit 2), ``incomplete`` (exit 1: a file the answer
needs could not be read, so it may miss differences).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from hudi_core.errors import Finding, HudiInspectError, Severity
from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.records import CleanMetadata
from hudi_core.table.facts import rollback_metadatas
from hudi_core.table.listing.compare import (
    HUDI_EFFECT,
    DifferenceKind,
    ListingDifference,
    Tolerance,
    compare_listings,
)
from hudi_core.table.listing.metadata import unapplied_data_instants

if TYPE_CHECKING:
    from hudi_core.table import HudiTable


class ValidationStatus(StrEnum):
    CONSISTENT = "consistent"
    DIFFERENCES = "differences"
    INCOMPLETE = "incomplete"


#: Exit code of each outcome (`validate-metadata`, and the doctor's check).
STATUS_EXIT = {ValidationStatus.CONSISTENT: 0, ValidationStatus.DIFFERENCES: 2, ValidationStatus.INCOMPLETE: 1}

#: What a tolerance means, for people.
TOLERANCE_TEXT = {
    Tolerance.PENDING_INSTANT: "written by a pending instant: readers hide it until it completes",
    Tolerance.FAILED_INSTANT: "written by an instant that is not on the timeline (a failed write): readers hide it, "
                              "Hudi rolls it back",
    Tolerance.RETRIED_TASK_LOG: "a log file its delta commit's write stats do not name: a retried task's leftover",
    Tolerance.UNCOMMITTED_PARTITION: "a partition created by an uncommitted write",
    Tolerance.PENDING_CLEAN: "named by a pending clean's plan: the metadata table learns of the delete when the "
                             "clean completes",
}


@dataclass(frozen=True)
class MetadataDifference:
    """One difference, with where the file came from and what Hudi does because of it.

    `written_by` is the instant that wrote the file (its name's instant; on v6 a log file's base instant);
    `deleted_by` the clean or rollback whose metadata names it as deleted; `in_latest_slice` whether it is
    in a latest file slice of the view a Hudi 1.x reader builds (from the metadata table's listing).
    """

    kind: DifferenceKind
    partition: str
    file: str | None
    metadata_size: int | None
    storage_size: int | None
    written_by: str | None
    deleted_by: str | None
    in_latest_slice: bool | None
    hudi_effect: str
    tolerated: Tolerance | None = None
    tolerated_by: str | None = None

    @property
    def instant(self) -> str | None:
        """The instant most to blame: the delete's when one is recorded, else the write's."""
        return self.deleted_by or self.written_by

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind.value, "partition": self.partition, "file": self.file, "instant": self.instant,
            "written_by": self.written_by, "deleted_by": self.deleted_by, "metadata_size": self.metadata_size,
            "storage_size": self.storage_size, "in_latest_slice": self.in_latest_slice, "hudi_effect": self.hudi_effect,
        }
        if self.tolerated is not None:
            out["tolerated"] = self.tolerated.value
            out["tolerated_by"] = self.tolerated_by
            out["why_tolerated"] = TOLERANCE_TEXT[self.tolerated]
        return out


@dataclass
class MetadataValidation:
    """The answer of `validate-metadata` (see the module doc)."""

    table: str
    metadata_table: str
    base_file: str | None
    log_files: list[str]
    latest_metadata_instant: str | None
    partitions_in_metadata: int
    partitions_on_storage: int
    files_in_metadata: int
    files_on_storage: int
    differences: list[MetadataDifference]
    tolerated: list[MetadataDifference]
    unapplied_instants: list[str]
    findings: list[Finding] = field(default_factory=list)
    incomplete: bool = False

    @property
    def status(self) -> ValidationStatus:
        if self.incomplete:
            return ValidationStatus.INCOMPLETE
        return ValidationStatus.DIFFERENCES if self.differences else ValidationStatus.CONSISTENT

    @property
    def exit_code(self) -> int:
        return STATUS_EXIT[self.status]

    def counts(self) -> dict[str, int]:
        """Untolerated differences per kind (every kind present, zero included)."""
        return {k.value: sum(1 for d in self.differences if d.kind is k) for k in DifferenceKind}

    def to_dict(self) -> dict[str, Any]:
        return {
            "table": self.table,
            "metadata_table": self.metadata_table,
            "status": self.status.value,
            "exit_code": self.exit_code,
            "metadata_slice": {"base_file": self.base_file, "log_files": self.log_files,
                               "latest_instant": self.latest_metadata_instant},
            "partitions": {"metadata": self.partitions_in_metadata, "storage": self.partitions_on_storage},
            "files": {"metadata": self.files_in_metadata, "storage": self.files_on_storage},
            "counts": self.counts(),
            "differences": [d.to_dict() for d in self.differences],
            "tolerated": [d.to_dict() for d in self.tolerated],
            "unapplied_instants": list(self.unapplied_instants),
            "findings": [f.to_dict() for f in self.findings],
            "incomplete": self.incomplete,
        }


def validate_metadata(table: HudiTable) -> MetadataValidation:
    """Compare the metadata table's `files` partition with storage (module doc). Raises when the table has
    no metadata table."""
    source = table.metadata_listing()
    mdt = table.metadata_table()
    if source is None or mdt is None:
        raise HudiInspectError(f"{table.uri} has no metadata table (.hoodie/metadata) to validate")
    read = source.read()
    findings = list(read.findings)
    if not table.metadata_files_enabled():
        findings.append(Finding(Severity.WARNING, "metadata_files_not_enabled", table.storage.uri_of(".hoodie"),
                                "hoodie.table.metadata.partitions does not name files: Hudi does not read this "
                                "metadata table's listing (validated anyway)"))
    on_mdt = {p: read.listed_files_of(p) for p in read.partitions}  # columns: compared as columns
    on_storage = table.storage_listing()
    findings.extend(on_storage.findings)
    compared = compare_listings(on_mdt, on_storage.partitions, table.timeline, table.properties.base_file_format,
                                table.storage, table.properties.version)
    raw = compared.differences
    deleted_by = _deleting_instants(table) if raw else {}
    latest = _latest_slice_files(table, on_mdt) if any(
        d.kind is DifferenceKind.MISSING_ON_STORAGE for d in raw) else set()
    differences: list[MetadataDifference] = []
    tolerated: list[MetadataDifference] = []
    for d in raw:
        full = _explain(d, deleted_by, latest)
        (tolerated if d.tolerated is not None else differences).append(full)
    return MetadataValidation(
        table=table.uri, metadata_table=mdt.uri, base_file=read.base_file, log_files=list(read.log_files),
        latest_metadata_instant=read.latest_instant,
        partitions_in_metadata=len(on_mdt), partitions_on_storage=len(on_storage.partitions),
        files_in_metadata=compared.files_in_metadata, files_on_storage=compared.files_on_storage,
        differences=differences, tolerated=tolerated,
        unapplied_instants=unapplied_data_instants(table.timeline, mdt.timeline),
        findings=findings, incomplete=read.incomplete or on_storage.incomplete
        or any(f.severity is Severity.ERROR for f in findings),
    )


def _explain(d: ListingDifference, deleted_by: dict[tuple[str, str], str],
             latest: set[tuple[str, str]]) -> MetadataDifference:
    deleter = deleted_by.get((d.partition, d.file)) if d.file else None
    in_latest: bool | None = None
    effect = HUDI_EFFECT[d.kind]
    if d.kind is DifferenceKind.MISSING_ON_STORAGE and d.file:
        in_latest = (d.partition, d.file) in latest
        if not in_latest:
            effect = ("it is in no latest file slice: snapshot queries do not open it, but time travel and "
                      "incremental queries to its instant fail, and the cleaner plans to delete a file that is gone")
    return MetadataDifference(d.kind, d.partition, d.file, d.metadata_size, d.storage_size, d.instant, deleter,
                              in_latest, effect, d.tolerated, d.tolerated_by)


def _deleting_instants(table: HudiTable) -> dict[tuple[str, str], str]:
    """`(partition, file name) -> instant` of every completed clean and rollback that recorded deleting it."""
    out: dict[tuple[str, str], str] = {}
    tl = table.timeline
    for inst in tl.completed().filter([ia.CLEAN, ia.ROLLBACK, ia.RESTORE]):
        record = tl.record(inst, State.COMPLETED)
        if isinstance(record, CleanMetadata):
            for partition, pm in record.partition_metadata.items():
                for path in [*pm.success_delete_files, *pm.delete_path_patterns]:
                    out.setdefault((partition, path.rsplit("/", 1)[-1]), inst.requested_time)
            continue
        for meta in rollback_metadatas(record):
            for partition, rpm in meta.partition_metadata.items():
                for path in rpm.success_delete_files:
                    out.setdefault((partition, path.rsplit("/", 1)[-1]), inst.requested_time)
    return out


def _latest_slice_files(table: HudiTable, listing: dict[str, Any]) -> set[tuple[str, str]]:
    """`(partition, file name)` of every file in a latest slice of the view built from `listing`."""
    from hudi_core.table.fsview import FileSystemView
    from hudi_core.table.listing import Listing, ListingKind

    view = FileSystemView.from_listing(Listing(ListingKind.METADATA, listing), table.timeline,
                                       table.properties.version, table.properties.base_file_format,
                                       storage=table.storage)
    return view.latest_file_keys()


