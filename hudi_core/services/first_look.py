"""The first look at a big table: what can be answered before any body or archive is decoded.

Opening a table lists `.hoodie` and reads `hoodie.properties`; from that listing alone come the facts, every
active instant with its states and times (names and modification times), the markers but one, and the next
archival's boundary (they read a few clean, savepoint and plan bodies). What needs decoding comes after:
every commit body (operation types, decode findings, replaced groups), the archived timeline (the archived |
active split, the counts, the chart's history) and the doctor's checks that list every data file.

:func:`timeline_weight` says, from the one listing, how much decoding that second part is: the dashboard shows
a table whose timeline is heavy in two steps (the first look at once, the rest filled in with progress), a light
one in one. :data:`QUICK_TRIAGE_CHECKS` are the doctor's cheap checks that need neither the archive nor the file
listing, run before the first look; the others of :data:`~hudi_core.services.doctor.TRIAGE_CHECKS` run with
the rest.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from hudi_core.errors import StorageError
from hudi_core.services.doctor import TRIAGE_CHECKS

if TYPE_CHECKING:
    from hudi_core.table import HudiTable

#: Timeline bytes (active instant files and archive files) from which a page shows the first look first. Decoding
#: runs at ~20-40 MB/s in one process (layout-1 JSON bodies, Avro archive blocks): 16 MiB is about half a second.
HEAVY_TIMELINE_BYTES = 16 * 1024 * 1024

#: Triage checks that read the archived timeline or list every data file: on a big table they take as long as
#: the rest of the first look together (`replaced_visible_again`: 11.7 s of 11.9 s on a 100k-file table).
SLOW_TRIAGE_CHECKS: tuple[str, ...] = ("replaced_visible_again",)

#: The doctor's triage checks that need neither the archive nor the file listing.
QUICK_TRIAGE_CHECKS: tuple[str, ...] = tuple(c for c in TRIAGE_CHECKS if c not in SLOW_TRIAGE_CHECKS)


@dataclass(frozen=True)
class TimelineWeight:
    """How much of a table's timeline is left to decode after opening it, from the listings alone."""

    #: Instants of the active timeline.
    active_instants: int
    #: Bytes of the active timeline's instant files (the commit bodies among them).
    active_bytes: int
    #: Files in the archive folder (layout 1: `.commits_.archive.*` log files; layout 2: LSM parquet files).
    archive_files: int
    #: Bytes of those files.
    archive_bytes: int

    @property
    def total_bytes(self) -> int:
        """Active and archived timeline bytes."""
        return self.active_bytes + self.archive_bytes

    @property
    def heavy(self) -> bool:
        """Whether decoding the rest takes long enough that a page should show the first look first."""
        return self.total_bytes >= HEAVY_TIMELINE_BYTES


def timeline_weight(table: HudiTable) -> TimelineWeight:
    """The weight of `table`'s timeline: the active timeline as listed when the table was opened, and one listing
    of the archive folder (an unreadable archive folder weighs nothing here: the archive reader reports it)."""
    tl = table.timeline
    active_bytes = sum(f.size for inst in tl for f in inst.files)
    try:
        archive = [i for i in table.storage.list(table.properties.archive_dir) if not i.is_dir]
    except (StorageError, OSError):
        archive = []
    return TimelineWeight(len(tl), active_bytes, len(archive), sum(i.size for i in archive))
