"""The markers that decide what a clean may delete and what an archival may take (HUDI-7779).

* the earliest commit to retain (ECTR) as the latest completed clean recorded it, and as the next
  clean would compute it with the given config;
* EarliestCommitToNotArchive in two definitions side by side: as the seed proposes it (Option C:
  the first savepoint before ECTR, else ECTR) and as Hudi computes its replacecommit guard's lower
  bound (`ClusteringUtils.getEarliestInstantToRetainForClustering`, spec `02` §3);
* any `EARLIEST_COMMIT_TO_NOT_ARCHIVE` key in clean extra metadata (only an unmerged revision of
  PR #11440 wrote it; released Hudi never does, so it is reported, never relied on);
* savepoints (and the ones the latest clean recorded but that are gone now);
* replaced file groups and whether their files are still on storage.

Every marker that sits at an instant is also a typed :class:`Marker` (kind, instant, source,
explanation): :meth:`Markers.items` for these, :func:`archival_boundary_marker` for the next
archival's boundary (with its binding guard) and :func:`archived_split_marker` for where the
archived part of the timeline ends. The dashboard draws these; the CLI prints `Markers.to_dict()`.
"""

from __future__ import annotations

import datetime as dt
import enum
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from hudi_core.formats.timeline import instant as ia
from hudi_core.formats.timeline.instant import State
from hudi_core.formats.timeline.records import CleanerPlan, CleanMetadata, SavepointMetadata
from hudi_core.services import timelines as tls
from hudi_core.services.archive import ArchivePlan, GuardName, plan_archive
from hudi_core.services.clean import next_clean_ectr, proposed_ectna
from hudi_core.services.config import ServiceConfig

if TYPE_CHECKING:
    from hudi_core.table import HudiTable

_INSTANT_TIME = re.compile(r"\A\d{14}(\d{3})?\Z")

#: Extra-metadata keys an intermediate HUDI-7779 revision may have written (matched case-insensitively).
ECTNA_KEYS = ("earliest_commit_to_not_archive", "earliestcommittonotarchive")


class MarkerKind(enum.Enum):
    """What a marker marks. The value is the stable key (dashboard URLs, tables); `label` names it."""

    ECTR_RECORDED = "ectr_recorded"
    ECTR_RECOMPUTED = "ectr_recomputed"
    ECTNA_RECORDED = "ectna_recorded"
    ECTNA_PROPOSED = "ectna_proposed"
    ECTNA_HUDI = "ectna_hudi"
    SAVEPOINT = "savepoint"
    ARCHIVAL_BOUNDARY = "archival_boundary"
    ARCHIVED_SPLIT = "active_start"

    @property
    def label(self) -> str:
        """The marker's human name."""
        return _KIND_LABELS[self]


_KIND_LABELS = {
    MarkerKind.ECTR_RECORDED: "ECTR (recorded)",
    MarkerKind.ECTR_RECOMPUTED: "ECTR (recomputed)",
    MarkerKind.ECTNA_RECORDED: "EarliestCommitToNotArchive (recorded)",
    MarkerKind.ECTNA_PROPOSED: "EarliestCommitToNotArchive (proposed)",
    MarkerKind.ECTNA_HUDI: "EarliestCommitToNotArchive (Hudi)",
    MarkerKind.SAVEPOINT: "Savepoint",
    MarkerKind.ARCHIVAL_BOUNDARY: "Archival boundary (next archival)",
    MarkerKind.ARCHIVED_SPLIT: "Archived | active",
}


@dataclass(frozen=True)
class Marker:
    """One marker at an instant (a requested time, as Hudi records these values; spec `01` §1.9).

    `source` says where the value comes from (a clean, the recomputation, a dry run, the timeline),
    `explanation` why it sits there. `guard` is set on the archival boundary only: what stops the
    archival there (:class:`~hudi_core.services.archive.GuardName`: A3, the first savepoint, keep.min …),
    as :attr:`hudi_core.services.archive.ArchivePlan.boundary_guard`.
    """

    kind: MarkerKind
    instant: str
    source: str
    explanation: str = ""
    guard: GuardName | None = None

    @property
    def label(self) -> str:
        return self.kind.label

    def to_dict(self) -> dict[str, str | None]:
        return {"kind": self.kind.value, "label": self.label, "instant": self.instant, "source": self.source,
                "explanation": self.explanation, "guard": self.guard.value if self.guard else None}


_KIND_ORDER = {k: n for n, k in enumerate(MarkerKind)}


def ordered_markers(markers: Iterable[Marker]) -> list[Marker]:
    """`markers` by instant then kind, one per (kind, instant) (the first given wins)."""
    seen: dict[tuple[MarkerKind, str], Marker] = {}
    for m in markers:
        seen.setdefault((m.kind, m.instant), m)
    return sorted(seen.values(), key=lambda m: (m.instant, _KIND_ORDER[m.kind]))


@dataclass(frozen=True)
class ExtraMetadataMarker:
    """An EarliestCommitToNotArchive-like key found in a clean's plan or metadata."""

    clean_time: str
    source: str
    key: str
    value: str

    def to_dict(self) -> dict[str, str]:
        return {"clean_time": self.clean_time, "source": self.source, "key": self.key, "value": self.value}


@dataclass(frozen=True)
class SavepointState:
    """A savepoint of the active timeline, as the markers report it."""

    savepoint_time: str
    #: The instant's state name (``COMPLETED``, ``INFLIGHT``, …).
    state: str
    #: Files its metadata pins (0 while it is not completed).
    pinned_files: int
    #: Whether the latest completed clean recorded it in ``savepointed_timestamps``.
    recorded_by_latest_clean: bool

    def to_dict(self) -> dict[str, Any]:
        return {"savepoint_time": self.savepoint_time, "state": self.state, "pinned_files": self.pinned_files,
                "recorded_by_latest_clean": self.recorded_by_latest_clean}


@dataclass(frozen=True)
class ReplacedGroupState:
    """A file group a completed replacecommit replaced, as the markers report it."""

    partition: str
    file_id: str
    replaced_by: str
    operation_type: str | None
    #: Whether any of the group's files is still on storage (the cleaner has not removed it yet).
    files_exist: bool
    file_names: tuple[str, ...]
    #: Whether the replace is older than the ECTR the latest clean recorded (the cleaner may delete it).
    replaced_before_recorded_ectr: bool

    def to_dict(self) -> dict[str, Any]:
        return {"partition": self.partition, "file_id": self.file_id, "replaced_by": self.replaced_by,
                "operation_type": self.operation_type, "files_exist": self.files_exist,
                "file_names": list(self.file_names),
                "replaced_before_recorded_ectr": self.replaced_before_recorded_ectr}


@dataclass
class Markers:
    """ECTR, EarliestCommitToNotArchive (proposed and Hudi's), savepoints and replaced groups."""

    latest_clean: str | None
    ectr_recorded: str | None
    ectr_next: str | None
    ectr_next_detail: str
    recorded_savepoints: list[str]
    savepoints: list[SavepointState]
    deleted_savepoints: list[str]
    ectna_proposed: str | None
    ectna_proposed_next: str | None
    ectna_hudi_lower_bound: str | None
    ectna_hudi_guard_instant: str | None
    ectna_hudi_detail: str
    extra_metadata: list[ExtraMetadataMarker] = field(default_factory=list)
    replaced_groups: list[ReplacedGroupState] = field(default_factory=list)
    #: The values above that sit at an instant, as typed markers (see :meth:`items`).
    marker_items: list[Marker] = field(default_factory=list)

    def items(self) -> list[Marker]:
        """Recorded and recomputed ECTR, EarliestCommitToNotArchive (proposed, Hudi's, recorded in
        extra metadata) and completed savepoints, ordered by instant."""
        return ordered_markers(self.marker_items)

    def to_dict(self) -> dict[str, Any]:
        """The `markers` JSON."""
        return {
            "latest_completed_clean": self.latest_clean,
            "earliest_commit_to_retain": {"recorded": self.ectr_recorded, "next_clean": self.ectr_next,
                                          "next_clean_detail": self.ectr_next_detail},
            "earliest_commit_to_not_archive": {
                "proposed": self.ectna_proposed,
                "proposed_next_clean": self.ectna_proposed_next,
                "hudi": self.ectna_hudi_lower_bound,
                "hudi_guard_instant": self.ectna_hudi_guard_instant,
                "hudi_detail": self.ectna_hudi_detail,
            },
            "extra_metadata_earliest_commit_to_not_archive": [m.to_dict() for m in self.extra_metadata],
            "savepointed_timestamps_recorded": list(self.recorded_savepoints),
            "savepoints": [sp.to_dict() for sp in self.savepoints],
            "savepoints_deleted_since_latest_clean": list(self.deleted_savepoints),
            "replaced_file_groups": [g.to_dict() for g in self.replaced_groups],
        }


def _ectna_keys(extra: Mapping[str, str]) -> list[tuple[str, str]]:
    return [(k, v) for k, v in extra.items() if k.lower() in ECTNA_KEYS]


def compute_markers(table: HudiTable, conf: Mapping[str, Any] | ServiceConfig | None = None, *,
                    now: dt.datetime | None = None) -> Markers:
    """Compute every marker of `table` (`conf` as for :func:`hudi_core.services.clean.plan_clean`)."""
    config = conf if isinstance(conf, ServiceConfig) else ServiceConfig.from_conf(conf)
    if table.is_metadata_table:
        config = config.for_metadata_table()[0]
    timeline = table.timeline
    clean = tls.latest_completed_clean(timeline)
    meta = tls.clean_metadata(timeline, clean) if clean else None
    plan = tls.clean_plan(timeline, clean) if clean else None
    ectr_recorded = meta.earliest_commit_to_retain if meta else None
    if ectr_recorded is None and plan is not None and plan.earliest_instant_to_retain:
        ectr_recorded = plan.earliest_instant_to_retain.timestamp or None
    recorded_sps = meta.savepointed_timestamps if meta else (plan.savepointed_timestamps if plan else [])

    nxt = tls.EctrResult(*next_clean_ectr(timeline, config, now or dt.datetime.now(dt.UTC),
                                          table.properties.timezone,
                                          ((meta.earliest_commit_to_retain or "") if meta else "").strip()))
    current_sps = tls.savepoint_times(timeline)
    guard = tls.clustering_guard(timeline, config.cleaner_policy, savepoint_guard=True)

    extra: list[ExtraMetadataMarker] = []
    for inst in timeline:
        if inst.action != ia.CLEAN:
            continue
        for state, label in ((State.REQUESTED, "cleaner_plan"), (State.COMPLETED, "clean_metadata")):
            rec = timeline.record(inst, state)
            if isinstance(rec, (CleanerPlan, CleanMetadata)):
                extra.extend(ExtraMetadataMarker(inst.requested_time, label, k, v)
                             for k, v in _ectna_keys(rec.extra_metadata))

    savepoints: list[SavepointState] = []
    for inst in timeline.filter([ia.SAVEPOINT]):
        rec = timeline.record(inst, State.COMPLETED) if inst.is_completed else None
        pinned = sum(len(v) for v in rec.partition_files.values()) if isinstance(rec, SavepointMetadata) else 0
        savepoints.append(SavepointState(inst.requested_time, inst.state.name, pinned,
                                         inst.requested_time in recorded_sps))

    items = _marker_items(clean.requested_time if clean else None, meta, plan, ectr_recorded, nxt, guard, extra,
                          savepoints, proposed_ectna(ectr_recorded, list(recorded_sps)),
                          proposed_ectna(nxt.timestamp, current_sps), config.hudi_release)
    view = table.replaced_groups_view()  # only the partitions replacecommits name are listed
    replaced = [
        ReplacedGroupState(r.partition, r.file_id, r.replace_instant, r.operation_type, r.files_exist,
                           tuple(r.file_names), bool(ectr_recorded and r.replace_instant < ectr_recorded))
        for r in view.replaced_file_groups()
    ]
    return Markers(
        latest_clean=clean.requested_time if clean else None,
        ectr_recorded=ectr_recorded,
        ectr_next=nxt.timestamp,
        ectr_next_detail=nxt.detail,
        recorded_savepoints=list(recorded_sps),
        savepoints=savepoints,
        deleted_savepoints=[s for s in recorded_sps if s not in current_sps],
        ectna_proposed=proposed_ectna(ectr_recorded, list(recorded_sps)),
        ectna_proposed_next=proposed_ectna(nxt.timestamp, current_sps),
        ectna_hudi_lower_bound=guard.lower_bound,
        ectna_hudi_guard_instant=guard.instant.requested_time if guard.instant else None,
        ectna_hudi_detail=guard.detail,
        extra_metadata=extra,
        replaced_groups=replaced,
        marker_items=items,
    )


def _marker_items(latest_clean: str | None, meta: CleanMetadata | None, plan: CleanerPlan | None,
                  ectr_recorded: str | None,
                  nxt: tls.EctrResult, guard: tls.ClusteringGuard, extra: list[ExtraMetadataMarker],
                  savepoints: list[SavepointState], proposed: str | None, proposed_next: str | None,
                  hudi_release: str) -> list[Marker]:
    out: list[Marker] = []
    if ectr_recorded:
        where = "metadata" if meta is not None and meta.earliest_commit_to_retain else "plan"
        policy = f"policy {plan.policy}; " if plan is not None and plan.policy else ""
        out.append(Marker(MarkerKind.ECTR_RECORDED, ectr_recorded, f"latest completed clean {latest_clean} ({where})",
                          f"{policy}the archiver keeps this commit and later"))
    if nxt.timestamp:
        out.append(Marker(MarkerKind.ECTR_RECOMPUTED, nxt.timestamp, "recomputed for the next clean", nxt.detail))
    if proposed:
        out.append(Marker(MarkerKind.ECTNA_PROPOSED, proposed, "proposal (HUDI-7779), latest clean",
                          "the first savepoint the latest clean tracked before its ECTR, else that ECTR"))
    if proposed_next and proposed_next != proposed:
        out.append(Marker(MarkerKind.ECTNA_PROPOSED, proposed_next, "proposal (HUDI-7779), next clean",
                          "the first current savepoint before the next clean's ECTR, else that ECTR"))
    if guard.lower_bound:
        instant = guard.instant.requested_time if guard.instant else None
        out.append(Marker(MarkerKind.ECTNA_HUDI, guard.lower_bound, f"Hudi {hudi_release}.x lower bound of guard A3",
                          guard.detail + (f" (guard instant {instant})" if instant else "")))
    for e in extra:
        if _INSTANT_TIME.match(e.value):
            out.append(Marker(MarkerKind.ECTNA_RECORDED, e.value, f"clean {e.clean_time} {e.source}", e.key))
    for sp in savepoints:
        if sp.state == State.COMPLETED.name:
            tracked = "tracked by the latest clean" if sp.recorded_by_latest_clean else "not tracked by a clean"
            out.append(Marker(MarkerKind.SAVEPOINT, sp.savepoint_time, "savepoint",
                              f"{sp.pinned_files} pinned files; {tracked}"))
    return out


def archival_boundary_marker(plan: ArchivePlan) -> Marker | None:
    """Where the planned archival stops (instants before it would be archived), with its binding guard."""
    if not plan.boundary_instant:
        return None
    return Marker(MarkerKind.ARCHIVAL_BOUNDARY, plan.boundary_instant, "archive dry run",
                  f"binding guard {plan.boundary_guard or '-'}: earlier instants would be archived",
                  guard=plan.boundary_guard)


def archived_split_marker(table: HudiTable) -> Marker | None:
    """Where the archived part of the timeline ends: the first active instant, when archived instants exist."""
    if table.unified_timeline().archived_listing().num_rows == 0:
        return None
    first = next(iter(table.timeline), None)
    if first is None:
        return None
    return Marker(MarkerKind.ARCHIVED_SPLIT, first.requested_time, "unified timeline",
                  "instants before it are archived")


def markers_after_archival(table: HudiTable, markers: Iterable[Marker], plan: ArchivePlan) -> list[Marker]:
    """`markers` as they would read once the plan's instants left the active timeline: the archived |
    active split moves to the first instant that stays (the other markers keep their instants)."""
    gone = {i.key() for i in plan.to_archive}
    if not gone:
        return ordered_markers(markers)
    kept = [m for m in markers if m.kind is not MarkerKind.ARCHIVED_SPLIT]
    first = next((i for i in table.timeline if i.key() not in gone), None)
    if first is not None:
        kept.append(Marker(MarkerKind.ARCHIVED_SPLIT, first.requested_time, "after the planned archival",
                           "instants before it would be archived"))
    return ordered_markers(kept)


def timeline_markers(table: HudiTable, conf: Mapping[str, Any] | ServiceConfig | None = None, *,
                     now: dt.datetime | None = None, plan: ArchivePlan | None = None,
                     markers: Markers | None = None, with_split: bool = True) -> list[Marker]:
    """Every marker of the timeline chart: :meth:`Markers.items` (`markers` when the caller computed them
    already), the archived | active split and the next archival's boundary (`plan`, else
    :func:`~hudi_core.services.archive.plan_archive` with `conf`). Without `with_split` the split is left out:
    it is the one marker that needs the archive read (the dashboard's first look at a big table)."""
    config = conf if isinstance(conf, ServiceConfig) else ServiceConfig.from_conf(conf)
    found = (markers if markers is not None else compute_markers(table, config, now=now)).items()
    split = archived_split_marker(table) if with_split else None
    if plan is None:
        plan = plan_archive(table, config, check_safety=False, with_lsm=False)
    boundary = archival_boundary_marker(plan)
    return ordered_markers([*found, *([split] if split else []), *([boundary] if boundary else [])])
