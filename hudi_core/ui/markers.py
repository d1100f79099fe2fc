"""Timeline markers: ECTR, EarliestCommitToNotArchive, savepoints and the archival boundary.

A :class:`Marker` is a vertical line on the timeline chart at an instant time (a requested time,
as Hudi records these values; spec `01` §1.9). Markers come from three places:

* recorded facts (`table.inspect.cleans()`, `table.inspect.savepoints()`): the ECTR the latest
  completed clean recorded (what Hudi 1.1's archiver reads, `CleanerUtils`), an
  ``EARLIEST_COMMIT_TO_NOT_ARCHIVE`` the clean wrote (HUDI-7779), completed savepoints;
* the timeline itself: the archival boundary, where the archived part ends and the active starts;
* the engine's recomputation (`services.markers.compute_markers`), when the build has it: the
  recomputed ECTR and the proposed / Hudi EarliestCommitToNotArchive.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

_INSTANT = re.compile(r"^\d{14}(\d{3})?$")

#: kind → human label (also the legend of the chart).
KIND_LABELS = {
    "ectr_recorded": "ECTR (recorded)",
    "ectr_recomputed": "ECTR (recomputed)",
    "ectna_recorded": "EarliestCommitToNotArchive (recorded)",
    "ectna_proposed": "EarliestCommitToNotArchive (proposed)",
    "ectna_hudi": "EarliestCommitToNotArchive (Hudi)",
    "savepoint": "Savepoint",
    "archival_boundary": "Archival boundary (next archival)",
    "active_start": "Archived | active",
    "other": "Marker",
}


@dataclass(frozen=True)
class Marker:
    """One vertical marker: `kind` (a :data:`KIND_LABELS` key), instant `time`, where it came from."""

    kind: str
    time: str
    source: str
    detail: str = ""

    @property
    def label(self) -> str:
        """Human name of the marker kind."""
        return KIND_LABELS.get(self.kind, self.kind)

    def to_dict(self) -> dict[str, str]:
        """One row of the markers table."""
        return {"marker": self.label, "kind": self.kind, "instant_time": self.time, "source": self.source,
                "detail": self.detail}


def is_instant_time(value: Any) -> bool:
    """A 14- or 17-digit instant time string."""
    return isinstance(value, str) and bool(_INSTANT.match(value))


def recorded_markers(cleans: pa.Table, savepoints: pa.Table) -> list[Marker]:
    """Markers recorded in the table: latest completed clean's ECTR / ECTNA, completed savepoints."""
    out: list[Marker] = []
    completed = [c for c in cleans.to_pylist() if c["state"] == "COMPLETED"]
    if completed:
        last = completed[-1]
        if last.get("earliest_commit_to_retain"):
            out.append(Marker("ectr_recorded", last["earliest_commit_to_retain"], f"clean {last['clean_time']}",
                              f"policy {last.get('policy') or '?'}; the archiver keeps this commit and later"))
        if last.get("earliest_commit_to_not_archive"):
            out.append(Marker("ectna_recorded", last["earliest_commit_to_not_archive"],
                              f"clean {last['clean_time']} extraMetadata", "HUDI-7779 guard value"))
    for sp in savepoints.to_pylist():
        if sp["state"] == "COMPLETED":
            out.append(Marker("savepoint", sp["savepoint_time"], "savepoint",
                              f"{len(sp.get('pinned_files') or [])} pinned files"))
    return out


def boundary_marker(instants: pa.Table) -> Marker | None:
    """Where the archived part ends: the first active instant, when archived instants are present."""
    sources = instants.column("source").to_pylist()
    times = instants.column("requested_time").to_pylist()
    active = [t for t, s in zip(times, sources, strict=True) if s == "active"]
    if not active or len(active) == len(times):
        return None
    return Marker("active_start", min(active), "unified timeline", "instants before it are archived")


def _kind_for_key(key: str) -> str:
    k = key.lower()
    if "not_archive" in k or "ectna" in k or "notarchive" in k:
        if "hudi" in k:
            return "ectna_hudi"
        return "ectna_recorded" if "record" in k or "extra" in k else "ectna_proposed"
    if "ectr" in k or "earliest_commit_to_retain" in k:
        return "ectr_recorded" if "record" in k else "ectr_recomputed"
    if "boundary" in k:
        return "archival_boundary"
    return "other"


def markers_from_engine(result: Mapping[str, Any]) -> list[Marker]:
    """Markers from `compute_markers(table).to_dict()` (`hudi_core.services.markers.Markers`).

    Recorded ECTR (latest completed clean), the ECTR the next clean would compute, the proposed
    EarliestCommitToNotArchive (now and at the next clean), Hudi's lower bound, values a writer left
    in clean extraMetadata, and completed savepoints. Any other instant-time value is kept as a
    generic marker named by its key.
    """
    out: list[Marker] = []
    latest = result.get("latest_completed_clean")
    ectr = result.get("earliest_commit_to_retain") or {}
    if isinstance(ectr, Mapping):
        if is_instant_time(ectr.get("recorded")):
            out.append(Marker("ectr_recorded", ectr["recorded"], f"latest completed clean {latest}",
                              "the archiver keeps this commit and later"))
        if is_instant_time(ectr.get("next_clean")):
            out.append(Marker("ectr_recomputed", ectr["next_clean"], "recomputed for the next clean",
                              str(ectr.get("next_clean_detail") or "")))
    ectna = result.get("earliest_commit_to_not_archive") or {}
    if isinstance(ectna, Mapping):
        if is_instant_time(ectna.get("proposed")):
            out.append(Marker("ectna_proposed", ectna["proposed"], "proposal (HUDI-7779), latest clean",
                              "min(ECTR, earliest savepoint tracked by the clean)"))
        if is_instant_time(ectna.get("proposed_next_clean")):
            out.append(Marker("ectna_proposed", ectna["proposed_next_clean"], "proposal (HUDI-7779), next clean"))
        if is_instant_time(ectna.get("hudi")):
            guard = ectna.get("hudi_guard_instant")
            out.append(Marker("ectna_hudi", ectna["hudi"], "Hudi 1.1.x lower bound",
                              str(ectna.get("hudi_detail") or "") + (f" (guard instant {guard})" if guard else "")))
    for extra in result.get("extra_metadata_earliest_commit_to_not_archive") or []:
        if isinstance(extra, Mapping) and is_instant_time(extra.get("value")):
            out.append(Marker("ectna_recorded", extra["value"], f"clean {extra.get('clean_time')} "
                              f"{extra.get('source')}", str(extra.get("key") or "")))
    for sp in result.get("savepoints") or []:
        if isinstance(sp, Mapping) and sp.get("state") == "COMPLETED" and is_instant_time(sp.get("savepoint_time")):
            tracked = "tracked by the latest clean" if sp.get("recorded_by_latest_clean") else "not tracked by a clean"
            out.append(Marker("savepoint", sp["savepoint_time"], "savepoint",
                              f"{sp.get('pinned_files', 0)} pinned files; {tracked}"))
    known = {"latest_completed_clean", "earliest_commit_to_retain", "earliest_commit_to_not_archive",
             "extra_metadata_earliest_commit_to_not_archive", "savepoints", "savepointed_timestamps_recorded",
             "savepoints_deleted_since_latest_clean", "replaced_file_groups"}
    for key, value in result.items():
        if key not in known and is_instant_time(value):
            out.append(Marker(_kind_for_key(key), value, f"recomputed: {key}"))
    return out


def boundary_from_plan(plan: Mapping[str, Any]) -> Marker | None:
    """The archival boundary of an archive dry-run (`plan_archive(...).to_dict()`)."""
    boundary = plan.get("boundary") or {}
    if isinstance(boundary, Mapping) and is_instant_time(boundary.get("instant")):
        return Marker("archival_boundary", boundary["instant"], "archive dry-run",
                      f"binding guard {boundary.get('guard') or '-'}; earlier instants would be archived")
    return None


def dedupe(markers: Iterable[Marker]) -> list[Marker]:
    """Drop repeated (kind, time) pairs, keeping the first; sorted by time then kind."""
    seen: set[tuple[str, str]] = set()
    out = []
    for m in markers:
        if (m.kind, m.time) not in seen:
            seen.add((m.kind, m.time))
            out.append(m)
    return sorted(out, key=lambda m: (m.time, m.kind))
