"""How the dashboard words the engine's markers (`hudi_core.services.markers.Marker`): the markers
table, the overview's "at a glance" line, and the short labels drawn on the charts."""

from __future__ import annotations

from collections.abc import Sequence

from hudi_core.services.markers import Marker, MarkerKind

#: Short marker names drawn on the chart (the legend and hover carry the full names).
SHORT_LABELS = {MarkerKind.ECTR_RECORDED: "ECTR", MarkerKind.ECTR_RECOMPUTED: "ECTR next",
                MarkerKind.ECTNA_RECORDED: "ECTNA rec.", MarkerKind.ECTNA_PROPOSED: "ECTNA prop.",
                MarkerKind.ECTNA_HUDI: "ECTNA Hudi", MarkerKind.SAVEPOINT: "SP",
                MarkerKind.ARCHIVAL_BOUNDARY: "archival stops", MarkerKind.ARCHIVED_SPLIT: "archived | active"}

#: The kinds the "at a glance" line names, and how.
_GLANCE = ((MarkerKind.ECTR_RECORDED, "recorded ECTR"), (MarkerKind.ECTR_RECOMPUTED, "next clean's ECTR"),
           (MarkerKind.ECTNA_PROPOSED, "EarliestCommitToNotArchive (proposed)"),
           (MarkerKind.ECTNA_HUDI, "Hudi's EarliestCommitToNotArchive"), (MarkerKind.SAVEPOINT, "savepoint(s)"))


def marker_rows(markers: Sequence[Marker]) -> list[dict[str, str | None]]:
    """One row per marker for the markers table, key columns first (the marker, its instant, what it means)."""
    return [{"marker": m.label, "instant_time": m.instant, "detail": m.explanation, "source": m.source,
             "kind": m.kind.value} for m in markers]


def at_a_glance(markers: Sequence[Marker]) -> str:
    """The overview's one-line summary: where the next archival stops (and its guard), then the markers."""
    said = []
    boundary = next((m for m in markers if m.kind is MarkerKind.ARCHIVAL_BOUNDARY), None)
    if boundary is not None:
        said.append(f"next archival stops at `{boundary.instant}`" + (f" (guard {boundary.guard})"
                                                                       if boundary.guard else ""))
    for kind, label in _GLANCE:
        times = sorted({m.instant for m in markers if m.kind is kind})
        if times:
            said.append(f"{label} " + ", ".join(f"`{t}`" for t in times))
    return " · ".join(said)


def instants_by_label(markers: Sequence[Marker]) -> dict[str, str]:
    """Marker label → its instants (comma separated): the scenario page's before/after comparison."""
    out: dict[str, set[str]] = {}
    for m in markers:
        out.setdefault(m.label, set()).add(m.instant)
    return {label: ", ".join(sorted(times)) for label, times in out.items()}
