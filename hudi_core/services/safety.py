"""Archival safety check: which replaced file groups an archival would bring back (HUDI-7779).

Hudi hides a replaced file group only while the replacecommit that replaced it is in the active
timeline (`AbstractTableFileSystemView.resetFileGroupsReplaced`, spec `01` §6.5). After a
simulated archival the view is rebuilt from the same listing over the remaining timeline; slices
before the new timeline start count as committed, as Hudi treats archived instants. A group that
is visible again while the group(s) written by its replacing instant are visible too holds the
same records twice: duplicate data for every reader.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.instant import Instant
from hudi_core.formats.timeline.records import CommitMetadata
from hudi_core.table.fsview import FileSystemView

if TYPE_CHECKING:
    from hudi_core.table import HudiTable


class PlannedArchival(Protocol):
    """What the check needs of an archive plan (:class:`hudi_core.services.archive.ArchivePlan`):
    the instants it would archive. A protocol, so this module does not import the archiver."""

    @property
    def to_archive(self) -> Sequence[Instant]: ...


@dataclass(frozen=True)
class ExposedGroup:
    """A replaced file group visible again after archival, next to its visible replacement.

    `replaced_by` is the requested time of the archived replacecommit; `replacement_file_ids` the
    groups that instant wrote that are still visible; `files` the exposed group's latest files.
    """

    partition: str
    file_id: str
    replaced_by: str
    replacement_file_ids: tuple[str, ...]
    files: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"partition": self.partition, "file_id": self.file_id, "replaced_by": self.replaced_by,
                "replacement_file_ids": list(self.replacement_file_ids), "files": list(self.files)}


def view_after_archival(table: HudiTable, plan: PlannedArchival, view: FileSystemView | None = None) -> FileSystemView:
    """The file-system view Hudi would build once the plan's instants left the active timeline."""
    before = view if view is not None else table.fs_view()
    remaining = table.timeline.without(plan.to_archive)
    return FileSystemView.from_listing(
        before.partition_files, remaining, table.properties.version, table.properties.base_file_format,
        storage=table.storage,
    )


def check_archival_safety(table: HudiTable, plan: PlannedArchival,
                          view: FileSystemView | None = None) -> list[ExposedGroup]:
    """Replaced file groups that the plan's archival would expose alongside their replacement."""
    archived = {i.requested_time for i in plan.to_archive if i.completed_action == ia.REPLACE_COMMIT}
    if not archived:
        return []  # nothing replaced leaves the timeline: no view needed (no listing of the table)
    before = view if view is not None else table.fs_view()
    after = view_after_archival(table, plan, before)
    visible_after = {(s.partition, s.file_id): s for s in after.latest_slices()}
    out: list[ExposedGroup] = []
    for fg_id, entry in sorted(before.replaced.items()):
        if fg_id not in visible_after:
            continue  # still hidden (another active replace) or no committed files left
        if entry.replace_instant not in archived and fg_id in after.replaced:
            continue
        inst = table.timeline.get(entry.replace_instant, ia.REPLACE_COMMIT)
        meta = table.timeline.commit_metadata(inst) if inst else None
        written = sorted({(p, s.file_id) for p, stats in meta.partition_to_write_stats.items()
                          for s in stats if s.file_id}) if isinstance(meta, CommitMetadata) else []
        replacement = tuple(fid for (p, fid) in written if (p, fid) in visible_after)
        if not replacement:
            continue
        out.append(ExposedGroup(fg_id[0], fg_id[1], entry.replace_instant, replacement,
                                tuple(visible_after[fg_id].file_names)))
    return out
